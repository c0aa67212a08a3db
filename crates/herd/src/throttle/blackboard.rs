//! The blackboard: a per-user POSIX shared-memory segment in which the
//! `herd monitor` daemon publishes per-socket contention meters for every
//! herd process of the same user (the RCRdaemon blackboard of
//! maestro-qthreads-scheduling.txt §4.3).
//!
//! # Layout (version 1, native byte order, every field naturally aligned)
//!
//! Header, [`HEADER_SIZE`] = 64 bytes:
//!
//! | offset | type | field |
//! |---:|---|---|
//! | 0 | u64 | `magic`: the bytes `"HERDBB01"` ([`MAGIC`]) |
//! | 8 | u32 | `version` ([`VERSION`]) |
//! | 12 | u32 | `header_size` (64) |
//! | 16 | u64 | `total_size`: header + `n_sockets` × meter |
//! | 24 | u32 | `n_sockets` (≤ [`MAX_SOCKETS`]) |
//! | 28 | u32 | `writer_pid` |
//! | 32 | u64 | `seq`: the seqlock (odd while a publish is in progress) |
//! | 40 | u64 | `timestamp_ns`: `CLOCK_REALTIME` of the last publish |
//! | 48 | u64 | `interval_ns`: the writer's sampling interval |
//! | 56 | u64 | reserved (0) |
//!
//! Then one meter per socket, [`METER_SIZE`] = 32 bytes each:
//!
//! | offset | type | field |
//! |---:|---|---|
//! | 0 | f64 | `llc_miss_rate`: LLC misses per second (0 without hardware counters) |
//! | 8 | f64 | `cycles_rate`: cycles per second (0 without hardware counters) |
//! | 16 | f64 | `utilisation`: busy fraction of the socket's PUs, all processes, 0..=1 |
//! | 24 | u32 | `suggested_active`: PUs of the socket that were idle (at least 1) |
//! | 28 | u32 | `source`: 1 software (`/proc/stat`), 2 hardware counters |
//!
//! `magic`, `version`, `header_size`, `total_size` and `n_sockets` are written
//! once, when the segment is created; everything else under the seqlock. All
//! fields are accessed as atomics (the two sides are different processes).
//!
//! # Seqlock
//! The writer makes `seq` odd with a compare-exchange (so that two writers
//! never interleave), fences, stores the fields, and stores `seq + 2`
//! (`Release`). A reader loads `seq` (`Acquire`; odd: retry), loads the fields,
//! fences (`Acquire`) and re-loads `seq`; the snapshot is consistent only if
//! both loads agree. A reader gives up after a bounded number of attempts.
//!
//! # Trust rules
//! The segment is named `/herd-blackboard-<uid>` ([`default_name`]) and
//! created with `O_CREAT | O_EXCL` and mode `0600`. Before trusting a segment
//! a reader checks, in this order: the object belongs to the calling user
//! (`fstat` owner = `getuid()`), its mode has no group or other bits, its
//! size holds a header, the magic, the version, the header size, that
//! `n_sockets` ≤ [`MAX_SOCKETS`] and that the size equals `total_size` =
//! header + `n_sockets` meters. Any failure is a [`Problem`]: the segment is
//! ignored — never trusted — and [`open_or_warn`] prints one warning naming
//! the problem (once per segment name and problem). A segment whose header is
//! still all zeros is being initialised and is skipped silently, as is a
//! missing one. Another process of the *same* user could still shrink the
//! segment under a mapping (a `SIGBUS` on read): same-user processes are
//! trusted not to be hostile, as everywhere else in a user's session.

use std::ffi::CString;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The first eight bytes of a blackboard: `"HERDBB01"`.
pub const MAGIC: u64 = u64::from_ne_bytes(*b"HERDBB01");
/// The layout version described in the module documentation.
pub const VERSION: u32 = 1;
/// Size of the header in bytes.
pub const HEADER_SIZE: usize = 64;
/// Size of one socket's meter in bytes.
pub const METER_SIZE: usize = 32;
/// The most sockets a reader accepts.
pub const MAX_SOCKETS: u32 = 4096;

#[repr(C)]
struct Header {
    magic: AtomicU64,
    version: AtomicU32,
    header_size: AtomicU32,
    total_size: AtomicU64,
    n_sockets: AtomicU32,
    writer_pid: AtomicU32,
    seq: AtomicU64,
    timestamp_ns: AtomicU64,
    interval_ns: AtomicU64,
    reserved: AtomicU64,
}

#[repr(C)]
struct RawMeter {
    llc_miss_rate: AtomicU64,
    cycles_rate: AtomicU64,
    utilisation: AtomicU64,
    suggested_active: AtomicU32,
    source: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<Header>() == HEADER_SIZE);
const _: () = assert!(std::mem::size_of::<RawMeter>() == METER_SIZE);

/// The blackboard of the calling user: `/herd-blackboard-<uid>`.
pub fn default_name() -> String {
    // SAFETY: getuid cannot fail and has no preconditions.
    format!("/herd-blackboard-{}", unsafe { libc::getuid() })
}

/// Where a meter's figures come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MeterSource {
    /// Busy time from `/proc/stat` (no cache figures).
    Software,
    /// Hardware counters (cycles and LLC misses) plus `/proc/stat`.
    Hardware,
}

impl MeterSource {
    fn code(self) -> u32 {
        match self {
            MeterSource::Software => 1,
            MeterSource::Hardware => 2,
        }
    }

    fn from_code(c: u32) -> Option<MeterSource> {
        match c {
            1 => Some(MeterSource::Software),
            2 => Some(MeterSource::Hardware),
            _ => None,
        }
    }
}

/// One socket's meters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Meter {
    /// LLC misses per second (0 without hardware counters).
    pub llc_miss_rate: f64,
    /// Cycles per second (0 without hardware counters).
    pub cycles_rate: f64,
    /// Busy fraction of the socket's PUs over the last interval, every
    /// process included (0..=1).
    pub utilisation: f64,
    /// PUs of the socket that were idle (at least 1): how many more active
    /// threads it could take without oversubscribing.
    pub suggested_active: u32,
    /// Where the figures come from (`None`: an unknown code).
    pub source: Option<MeterSource>,
}

/// A consistent copy of a blackboard.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Snapshot {
    /// Process id of the last writer.
    pub writer_pid: u32,
    /// `CLOCK_REALTIME` of the last publish, in nanoseconds since the epoch.
    pub timestamp_ns: u64,
    /// The writer's sampling interval in nanoseconds.
    pub interval_ns: u64,
    /// One meter per socket.
    pub meters: Vec<Meter>,
}

impl Snapshot {
    /// Time since the last publish (zero if the clock went backwards).
    pub fn age(&self) -> Duration {
        Duration::from_nanos(now_ns().saturating_sub(self.timestamp_ns))
    }

    /// True when the writer has not published for three intervals (and at
    /// least a second): its daemon is probably gone.
    pub fn is_stale(&self) -> bool {
        self.age() > Duration::from_nanos(self.interval_ns.saturating_mul(3)).max(Duration::from_secs(1))
    }
}

/// Why a blackboard segment is not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// No segment of that name (no daemon runs): not a warning.
    #[error("it does not exist")]
    Missing,
    /// The header is still all zeros: a writer is initialising it. Not a
    /// warning.
    #[error("it is being initialised")]
    NotReady,
    /// The segment belongs to another user.
    #[error("it belongs to uid {owner}, not to this user (uid {me})")]
    WrongOwner {
        /// Its owner.
        owner: u32,
        /// The calling user.
        me: u32,
    },
    /// Group or other users may access it.
    #[error("its mode {mode:04o} gives access to group or others (expected 0600)")]
    InsecureMode {
        /// Its permission bits.
        mode: u32,
    },
    /// The magic number is wrong.
    #[error("wrong magic {found:#018x} (expected \"HERDBB01\")")]
    WrongMagic {
        /// What the first eight bytes hold.
        found: u64,
    },
    /// An unsupported layout version.
    #[error("unsupported version {found} (expected {VERSION})")]
    WrongVersion {
        /// The version found.
        found: u32,
    },
    /// The segment's size does not match its header.
    #[error("wrong size: {detail}")]
    WrongSize {
        /// What does not match.
        detail: String,
    },
    /// More sockets than [`MAX_SOCKETS`].
    #[error("{found} sockets (at most {MAX_SOCKETS} accepted)")]
    TooManySockets {
        /// The count found.
        found: u32,
    },
    /// A system call failed.
    #[error("{call} failed: {error}")]
    Os {
        /// The call.
        call: &'static str,
        /// The OS's message.
        error: String,
    },
}

impl Problem {
    /// True for problems worth a warning (not for a missing or initialising
    /// segment).
    pub fn is_warning(&self) -> bool {
        !matches!(self, Problem::Missing | Problem::NotReady)
    }

    /// The warning printed for segment `name`.
    pub fn warning(&self, name: &str) -> String {
        format!("herd: warning: ignoring the blackboard {name}: {self}")
    }

    fn os(call: &'static str) -> Problem {
        Problem::Os { call, error: std::io::Error::last_os_error().to_string() }
    }
}

fn c_name(name: &str) -> Result<CString, Problem> {
    if !name.starts_with('/') || name.len() < 2 || name[1..].contains('/') {
        return Err(Problem::Os {
            call: "shm_open",
            error: format!("invalid segment name {name:?}: expected \"/name\" without further slashes"),
        });
    }
    CString::new(name).map_err(|_| Problem::Os { call: "shm_open", error: format!("{name:?} holds a NUL") })
}

fn now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// An owned file descriptor, closed on drop.
struct Fd(libc::c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this descriptor and close it once.
        unsafe { libc::close(self.0) };
    }
}

/// A shared mapping of a whole segment, unmapped on drop.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is only accessed through atomics.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    fn map(fd: &Fd, len: usize, writable: bool) -> Result<Mapping, Problem> {
        let prot = if writable { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ };
        // SAFETY: a fresh shared mapping of `len` bytes of a descriptor we
        // hold; the result is checked against MAP_FAILED.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd.0, 0) };
        if ptr == libc::MAP_FAILED {
            return Err(Problem::os("mmap"));
        }
        Ok(Mapping { ptr: ptr.cast(), len })
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping is page-aligned and at least HEADER_SIZE long
        // (checked before mapping); Header is all atomics, valid for any bits.
        unsafe { &*(self.ptr as *const Header) }
    }

    fn meter(&self, i: usize) -> &RawMeter {
        let off = HEADER_SIZE + i * METER_SIZE;
        assert!(off + METER_SIZE <= self.len, "meter {i} beyond the mapping");
        // SAFETY: in bounds (checked above), 8-byte aligned (64 + 32·i from a
        // page boundary); RawMeter is all atomics, valid for any bits.
        unsafe { &*(self.ptr.add(off) as *const RawMeter) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the region `map` created; no reference into
        // it outlives `self`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

fn total_size(n_sockets: u32) -> usize {
    HEADER_SIZE + n_sockets as usize * METER_SIZE
}

/// Checks ownership, mode and size of an open segment (the first trust
/// rules); returns its size.
fn check_file(fd: &Fd) -> Result<usize, Problem> {
    // SAFETY: `st` is plain data filled in by fstat on success.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open and `st` is a valid out-pointer.
    if unsafe { libc::fstat(fd.0, &mut st) } != 0 {
        return Err(Problem::os("fstat"));
    }
    // SAFETY: getuid cannot fail.
    let me = unsafe { libc::getuid() };
    if st.st_uid != me {
        return Err(Problem::WrongOwner { owner: st.st_uid, me });
    }
    let mode = st.st_mode & 0o7777;
    if mode & 0o077 != 0 {
        return Err(Problem::InsecureMode { mode });
    }
    let size = st.st_size as usize;
    if size < HEADER_SIZE {
        if size == 0 {
            return Err(Problem::NotReady);
        }
        return Err(Problem::WrongSize {
            detail: format!("{size} bytes, smaller than the {HEADER_SIZE}-byte header"),
        });
    }
    Ok(size)
}

/// Checks the header of a mapped segment of `size` bytes (the remaining
/// trust rules); returns the socket count.
fn check_header(h: &Header, size: usize) -> Result<u32, Problem> {
    let magic = h.magic.load(Ordering::Acquire);
    if magic == 0 && h.version.load(Ordering::Relaxed) == 0 {
        return Err(Problem::NotReady);
    }
    if magic != MAGIC {
        return Err(Problem::WrongMagic { found: magic });
    }
    let version = h.version.load(Ordering::Relaxed);
    if version != VERSION {
        return Err(Problem::WrongVersion { found: version });
    }
    let hs = h.header_size.load(Ordering::Relaxed);
    if hs as usize != HEADER_SIZE {
        return Err(Problem::WrongSize { detail: format!("header_size {hs} (expected {HEADER_SIZE})") });
    }
    let n = h.n_sockets.load(Ordering::Relaxed);
    if n > MAX_SOCKETS {
        return Err(Problem::TooManySockets { found: n });
    }
    let total = h.total_size.load(Ordering::Relaxed);
    if total != size as u64 || total as usize != total_size(n) {
        return Err(Problem::WrongSize {
            detail: format!(
                "the segment has {size} bytes, its header says total_size {total}, and {n} socket(s) need {}",
                total_size(n)
            ),
        });
    }
    Ok(n)
}

/// Opens `name` (`O_NOFOLLOW | O_CLOEXEC` plus `flags`); the OS error as is.
fn shm_open_io(name: &str, flags: libc::c_int, mode: libc::mode_t) -> Result<std::io::Result<Fd>, Problem> {
    let c = c_name(name)?;
    // SAFETY: `c` is a valid NUL-terminated string.
    let fd = unsafe { libc::shm_open(c.as_ptr(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC, mode) };
    Ok(if fd < 0 { Err(std::io::Error::last_os_error()) } else { Ok(Fd(fd)) })
}

/// [`shm_open_io`] with the error as a [`Problem`].
fn shm_open(name: &str, flags: libc::c_int, mode: libc::mode_t) -> Result<Fd, Problem> {
    shm_open_io(name, flags, mode)?.map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => Problem::Missing,
        _ => Problem::Os { call: "shm_open", error: e.to_string() },
    })
}

/// Removes segment `name`.
pub fn unlink(name: &str) -> Result<(), Problem> {
    let c = c_name(name)?;
    // SAFETY: `c` is a valid NUL-terminated string.
    if unsafe { libc::shm_unlink(c.as_ptr()) } != 0 {
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) {
            return Err(Problem::Missing);
        }
        return Err(Problem::os("shm_unlink"));
    }
    Ok(())
}

/// The publishing side (`herd monitor`).
pub struct Writer {
    map: Mapping,
    name: String,
    n_sockets: u32,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").field("name", &self.name).field("n_sockets", &self.n_sockets).finish()
    }
}

impl Writer {
    /// Creates segment `name` for `n_sockets` sockets (`O_CREAT | O_EXCL`,
    /// mode 0600), or reuses an existing one that passes every trust rule
    /// and has the same socket count (a restarted daemon). An existing
    /// segment that fails a rule is an error: remove it first.
    pub fn create(name: &str, n_sockets: u32, interval: Duration) -> Result<Writer, Problem> {
        if n_sockets == 0 || n_sockets > MAX_SOCKETS {
            return Err(Problem::TooManySockets { found: n_sockets });
        }
        let size = total_size(n_sockets);
        let w = match shm_open_io(name, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, 0o600)? {
            Ok(fd) => {
                // The umask cannot add bits, but make the mode exact anyway.
                // SAFETY: `fd` is open.
                if unsafe { libc::fchmod(fd.0, 0o600) } != 0 {
                    return Err(Problem::os("fchmod"));
                }
                // SAFETY: `fd` is open; the size is small and positive.
                if unsafe { libc::ftruncate(fd.0, size as libc::off_t) } != 0 {
                    let e = Problem::os("ftruncate");
                    let _ = unlink(name);
                    return Err(e);
                }
                let map = Mapping::map(&fd, size, true)?;
                let h = map.header();
                h.version.store(VERSION, Ordering::Relaxed);
                h.header_size.store(HEADER_SIZE as u32, Ordering::Relaxed);
                h.total_size.store(size as u64, Ordering::Relaxed);
                h.n_sockets.store(n_sockets, Ordering::Relaxed);
                // The magic last: a reader that sees it sees the rest.
                h.magic.store(MAGIC, Ordering::Release);
                Writer { map, name: name.to_string(), n_sockets }
            }
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                let fd = shm_open(name, libc::O_RDWR, 0)?;
                let have = check_file(&fd)?;
                let map = Mapping::map(&fd, have, true)?;
                let n = check_header(map.header(), have)?;
                if n != n_sockets {
                    return Err(Problem::WrongSize {
                        detail: format!("it holds {n} socket(s), this machine has {n_sockets}"),
                    });
                }
                Writer { map, name: name.to_string(), n_sockets }
            }
            Err(e) => return Err(Problem::Os { call: "shm_open", error: e.to_string() }),
        };
        w.map.header().interval_ns.store(interval.as_nanos() as u64, Ordering::Relaxed);
        Ok(w)
    }

    /// The segment's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Publishes one meter per socket under the seqlock.
    ///
    /// # Panics
    /// If `meters` does not hold exactly one meter per socket.
    pub fn publish(&self, meters: &[Meter]) {
        assert_eq!(meters.len(), self.n_sockets as usize, "one meter per socket");
        let h = self.map.header();
        let mut s = h.seq.load(Ordering::Relaxed);
        loop {
            if s & 1 == 1 {
                std::thread::yield_now();
                s = h.seq.load(Ordering::Relaxed);
                continue;
            }
            match h.seq.compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        fence(Ordering::Release);
        h.writer_pid.store(std::process::id(), Ordering::Relaxed);
        h.timestamp_ns.store(now_ns(), Ordering::Relaxed);
        for (i, m) in meters.iter().enumerate() {
            let r = self.map.meter(i);
            r.llc_miss_rate.store(m.llc_miss_rate.to_bits(), Ordering::Relaxed);
            r.cycles_rate.store(m.cycles_rate.to_bits(), Ordering::Relaxed);
            r.utilisation.store(m.utilisation.to_bits(), Ordering::Relaxed);
            r.suggested_active.store(m.suggested_active, Ordering::Relaxed);
            r.source.store(m.source.map_or(0, MeterSource::code), Ordering::Relaxed);
        }
        h.seq.store(s + 2, Ordering::Release);
    }
}

/// The reading side: a validated, read-only mapping.
pub struct Reader {
    map: Mapping,
    name: String,
    n_sockets: u32,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader").field("name", &self.name).field("n_sockets", &self.n_sockets).finish()
    }
}

impl Reader {
    /// Opens segment `name` read-only and checks every trust rule (module
    /// documentation).
    pub fn open(name: &str) -> Result<Reader, Problem> {
        let fd = shm_open(name, libc::O_RDONLY, 0)?;
        let size = check_file(&fd)?;
        let map = Mapping::map(&fd, size, false)?;
        let n_sockets = check_header(map.header(), size)?;
        Ok(Reader { map, name: name.to_string(), n_sockets })
    }

    /// The segment's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of sockets.
    pub fn n_sockets(&self) -> usize {
        self.n_sockets as usize
    }

    /// A consistent snapshot, or `None` if the writer kept the seqlock busy
    /// for every attempt.
    pub fn read(&self) -> Option<Snapshot> {
        let h = self.map.header();
        for attempt in 0..1000 {
            let s1 = h.seq.load(Ordering::Acquire);
            if s1 & 1 == 1 {
                if attempt > 10 {
                    std::thread::yield_now();
                }
                continue;
            }
            let f = |a: &AtomicU64| f64::from_bits(a.load(Ordering::Relaxed));
            let meters = (0..self.n_sockets as usize)
                .map(|i| {
                    let r = self.map.meter(i);
                    Meter {
                        llc_miss_rate: f(&r.llc_miss_rate),
                        cycles_rate: f(&r.cycles_rate),
                        utilisation: f(&r.utilisation),
                        suggested_active: r.suggested_active.load(Ordering::Relaxed),
                        source: MeterSource::from_code(r.source.load(Ordering::Relaxed)),
                    }
                })
                .collect();
            let snap = Snapshot {
                writer_pid: h.writer_pid.load(Ordering::Relaxed),
                timestamp_ns: h.timestamp_ns.load(Ordering::Relaxed),
                interval_ns: h.interval_ns.load(Ordering::Relaxed),
                meters,
            };
            fence(Ordering::Acquire);
            if h.seq.load(Ordering::Relaxed) == s1 {
                return Some(snap);
            }
        }
        None
    }
}

static WARNED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Opens `name` as a [`Reader`]; on a trust problem prints its warning on
/// stderr (once per name and problem) and returns `None`, as it does,
/// silently, for a missing or initialising segment.
pub fn open_or_warn(name: &str) -> Option<Reader> {
    match Reader::open(name) {
        Ok(r) => Some(r),
        Err(p) => {
            if p.is_warning() {
                let w = p.warning(name);
                let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
                if !warned.contains(&w) {
                    eprintln!("{w}");
                    warned.push(w);
                }
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_name(tag: &str) -> String {
        format!("/herd-test-bb-{}-{tag}", std::process::id())
    }

    fn meter(u: f64, n: u32) -> Meter {
        Meter {
            llc_miss_rate: 1e6 * u,
            cycles_rate: 2e9,
            utilisation: u,
            suggested_active: n,
            source: Some(MeterSource::Software),
        }
    }

    /// Writes a raw segment: `bytes` with `mode`.
    fn raw_segment(name: &str, bytes: &[u8], mode: libc::mode_t) {
        let _ = unlink(name);
        let fd = shm_open(name, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, 0o600).unwrap();
        // SAFETY: `fd` is open; `bytes` is valid for its length.
        unsafe {
            assert_eq!(libc::ftruncate(fd.0, bytes.len() as libc::off_t), 0);
            assert_eq!(libc::pwrite(fd.0, bytes.as_ptr().cast(), bytes.len(), 0), bytes.len() as isize);
            assert_eq!(libc::fchmod(fd.0, mode), 0);
        }
    }

    /// A valid header for `n` sockets followed by zeroed meters.
    fn valid_bytes(n: u32) -> Vec<u8> {
        let mut b = vec![0u8; total_size(n)];
        b[0..8].copy_from_slice(&MAGIC.to_ne_bytes());
        b[8..12].copy_from_slice(&VERSION.to_ne_bytes());
        b[12..16].copy_from_slice(&(HEADER_SIZE as u32).to_ne_bytes());
        b[16..24].copy_from_slice(&(total_size(n) as u64).to_ne_bytes());
        b[24..28].copy_from_slice(&n.to_ne_bytes());
        b
    }

    #[test]
    fn round_trip() {
        let name = temp_name("rt");
        let _ = unlink(&name);
        let w = Writer::create(&name, 2, Duration::from_millis(100)).unwrap();
        let r = Reader::open(&name).unwrap();
        assert_eq!(r.n_sockets(), 2);
        let m = [meter(0.25, 6), meter(1.0, 1)];
        w.publish(&m);
        let s = r.read().unwrap();
        assert_eq!(s.meters, m.to_vec());
        assert_eq!(s.writer_pid, std::process::id());
        assert_eq!(s.interval_ns, 100_000_000);
        assert!(!s.is_stale());
        // A second writer (a restarted daemon) reuses a valid segment.
        let w2 = Writer::create(&name, 2, Duration::from_millis(100)).unwrap();
        w2.publish(&[meter(0.5, 3), meter(0.5, 3)]);
        assert_eq!(r.read().unwrap().meters[0].suggested_active, 3);
        // ...but not one with another socket count.
        assert!(matches!(Writer::create(&name, 3, Duration::ZERO), Err(Problem::WrongSize { .. })));
        unlink(&name).unwrap();
        assert_eq!(Reader::open(&name).unwrap_err(), Problem::Missing);
        assert!(open_or_warn(&name).is_none());
    }

    #[test]
    fn mode_is_0600() {
        let name = temp_name("mode");
        let _ = unlink(&name);
        let _w = Writer::create(&name, 1, Duration::ZERO).unwrap();
        let fd = shm_open(&name, libc::O_RDONLY, 0).unwrap();
        // SAFETY: plain data out-parameter of fstat on an open descriptor.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        assert_eq!(unsafe { libc::fstat(fd.0, &mut st) }, 0);
        assert_eq!(st.st_mode & 0o777, 0o600);
        unlink(&name).unwrap();
    }

    #[test]
    fn consistent_snapshots_under_concurrent_publishing() {
        let name = temp_name("seq");
        let _ = unlink(&name);
        let w = Writer::create(&name, 4, Duration::ZERO).unwrap();
        let r = Reader::open(&name).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut k = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    k += 1;
                    w.publish(&[meter(0.5, k); 4]);
                }
            });
            for _ in 0..20_000 {
                if let Some(snap) = r.read() {
                    let first = snap.meters[0].suggested_active;
                    assert!(snap.meters.iter().all(|m| m.suggested_active == first), "torn snapshot");
                }
            }
            stop.store(true, Ordering::Relaxed);
        });
        unlink(&name).unwrap();
    }

    #[test]
    fn untrusted_segments_are_rejected_with_their_warning() {
        let name = temp_name("bad");
        let check = |bytes: Vec<u8>, mode: libc::mode_t, want: &dyn Fn(&Problem) -> bool, words: &str| {
            raw_segment(&name, &bytes, mode);
            let p = Reader::open(&name).unwrap_err();
            assert!(want(&p), "unexpected problem {p:?}");
            assert!(p.is_warning());
            let w = p.warning(&name);
            assert!(w.contains(&name) && w.contains(words), "{w}");
            assert!(open_or_warn(&name).is_none());
        };
        // Sanity: the valid bytes are accepted.
        raw_segment(&name, &valid_bytes(2), 0o600);
        assert_eq!(Reader::open(&name).unwrap().n_sockets(), 2);

        let mut b = valid_bytes(2);
        b[0] = b'X';
        check(b, 0o600, &|p| matches!(p, Problem::WrongMagic { .. }), "wrong magic");
        let mut b = valid_bytes(2);
        b[8..12].copy_from_slice(&7u32.to_ne_bytes());
        check(b, 0o600, &|p| *p == Problem::WrongVersion { found: 7 }, "version 7");
        let mut b = valid_bytes(2);
        b.extend_from_slice(&[0; 8]);
        check(b, 0o600, &|p| matches!(p, Problem::WrongSize { .. }), "wrong size");
        let b = valid_bytes(2)[..HEADER_SIZE + 8].to_vec();
        check(b, 0o600, &|p| matches!(p, Problem::WrongSize { .. }), "wrong size");
        check(valid_bytes(2), 0o640, &|p| *p == Problem::InsecureMode { mode: 0o640 }, "group or others");
        check(valid_bytes(2), 0o604, &|p| *p == Problem::InsecureMode { mode: 0o604 }, "group or others");
        let mut b = valid_bytes(0);
        b[24..28].copy_from_slice(&(MAX_SOCKETS + 1).to_ne_bytes());
        check(b, 0o600, &|p| matches!(p, Problem::TooManySockets { .. }), "sockets");

        // All zeros: being initialised, skipped without a warning.
        raw_segment(&name, &[0; HEADER_SIZE], 0o600);
        let p = Reader::open(&name).unwrap_err();
        assert_eq!(p, Problem::NotReady);
        assert!(!p.is_warning());
        unlink(&name).unwrap();
    }

    #[test]
    fn invalid_names_are_refused() {
        for bad in ["noslash", "/", "/a/b"] {
            let e = Reader::open(bad).unwrap_err();
            assert!(e.to_string().contains("invalid segment name"), "{e}");
        }
    }
}
