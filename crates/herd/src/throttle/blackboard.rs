//! The blackboard: a per-user shared file in which the `herd monitor`
//! daemon publishes per-socket contention meters for every herd process of
//! the same user (the RCRdaemon blackboard of
//! maestro-qthreads-scheduling.txt §4.3).
//!
//! # Where it lives
//! A blackboard is named by a string ([`default_name`], [`path`]): an
//! absolute file path, or a POSIX shared-memory name `/NAME` — the file
//! `/dev/shm/NAME` ([`SHM_DIR`]; glibc's `shm_open` opens the same file).
//! The default is, in this order:
//!
//! 1. `$XDG_RUNTIME_DIR/herd-blackboard` when `XDG_RUNTIME_DIR` names a
//!    *private* directory: absolute, not a symbolic link, a directory, owned
//!    by the calling user, mode `0700` (no group or other bits). Only that
//!    user (and root) can create files there, so nobody else can put
//!    anything at the name.
//! 2. Otherwise `/herd-blackboard-<uid>`, i.e. `/dev/shm/herd-blackboard-<uid>`
//!    ([`shm_name`]). `/dev/shm` is world-writable (sticky), so another
//!    local user can create something at that name first ("squat" it). That
//!    is made harmless rather than impossible: a private per-process name
//!    would not be shared with the daemon, so a squatted name is simply
//!    *unavailable* — readers warn once (naming what is there and who owns
//!    it) and run without a blackboard, and `herd monitor` refuses to start
//!    and says what to do (set `XDG_RUNTIME_DIR` to a private directory, or
//!    have the owner or an administrator remove the file).
//!
//! The daemon and the pools must agree on the location: both apply the rule
//! above to their own environment (`herd monitor` prints the path it uses).
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
//! | 24 | u32 | `n_sockets` (1 ..= [`MAX_SOCKETS`]) |
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
//! The writer creates the file with `O_CREAT | O_EXCL` and mode `0600`.
//! Every open — reader or writer — is `O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC`
//! (so a FIFO cannot block it and a symbolic link is not followed), and is
//! preceded by an `lstat` so that nothing but a regular file of the calling
//! user is opened at all. Before trusting a segment a reader checks, in this
//! order, on the `lstat` and again on the open descriptor (`fstat`): it is a
//! regular file, it belongs to the calling user (owner = `getuid()`), its
//! mode has no group or other bits; then, before mapping it, that its size
//! holds a header and no more than [`MAX_SOCKETS`] meters; then the magic,
//! the version, the header size, that 1 ≤ `n_sockets` ≤ [`MAX_SOCKETS`] and
//! that the size equals `total_size` = header + `n_sockets` meters. Any
//! failure is a [`Problem`] — one that names, for a foreign or non-regular
//! file, its type and its owner (uid and user name) — the segment is ignored,
//! never trusted, and [`open_or_warn`] prints one warning naming the problem
//! (once per segment and problem; [`warnings`] lists them). A segment whose
//! header is still all zeros is being initialised and is skipped silently,
//! as is a missing one. No check blocks: the only system calls are `lstat`,
//! non-blocking `open`, `fstat`, `mmap` and, for user names, a read of
//! `/etc/passwd` (never NSS, which may ask the network).
//!
//! The meters a reader returns are always in range, whatever the segment
//! holds ([`Meter`]). Another process of the *same* user could still shrink
//! the segment under a mapping (a `SIGBUS` on read): same-user processes are
//! trusted not to be hostile, as everywhere else in a user's session.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
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
/// The largest `suggested_active` a reader returns.
pub const MAX_SUGGESTED_ACTIVE: u32 = 1 << 16;
/// Where a shared-memory name `/NAME` lives.
pub const SHM_DIR: &str = "/dev/shm";
/// The blackboard's file name in `$XDG_RUNTIME_DIR`.
pub const RUNTIME_FILE: &str = "herd-blackboard";

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

fn getuid() -> u32 {
    // SAFETY: getuid cannot fail and has no preconditions.
    unsafe { libc::getuid() }
}

/// The shared-memory fallback name of the calling user:
/// `/herd-blackboard-<uid>` (the file `/dev/shm/herd-blackboard-<uid>`).
pub fn shm_name() -> String {
    format!("/herd-blackboard-{}", getuid())
}

/// The blackboard name in runtime directory `dir` (`dir/herd-blackboard`),
/// or why `dir` is not a private directory of the calling user (module
/// documentation: absolute, not a symbolic link, a directory, owned by the
/// user, no group or other permission bits, owner `rwx`).
pub fn runtime_dir_name(dir: &Path) -> Result<String, String> {
    if !dir.is_absolute() {
        return Err("it is not an absolute path".into());
    }
    // Drop trailing slashes: `lstat("dir/")` would follow a symbolic link.
    let dir: PathBuf = dir.components().collect();
    let st = lstat(&dir).map_err(|e| format!("lstat: {e}"))?;
    let kind = FileKind::of(st.st_mode);
    if kind != FileKind::Directory {
        return Err(format!("it is {}, not a directory", Occupant::of(&st)));
    }
    if st.st_uid != getuid() {
        return Err(format!("it is {}, not owned by this user (uid {})", Occupant::of(&st), getuid()));
    }
    let mode = st.st_mode & 0o7777;
    if mode & 0o077 != 0 || mode & 0o700 != 0o700 {
        return Err(format!("its mode is {mode:04o} (expected 0700)"));
    }
    dir.join(RUNTIME_FILE).into_os_string().into_string().map_err(|_| "it is not valid UTF-8".to_string())
}

/// The default blackboard and, when `XDG_RUNTIME_DIR` is set but not used,
/// why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The name ([`path`] turns it into a file).
    pub name: String,
    /// Why `$XDG_RUNTIME_DIR` was not used although it is set.
    pub note: Option<String>,
}

/// The default blackboard of the calling user (module documentation):
/// `$XDG_RUNTIME_DIR/herd-blackboard` if that directory is private, else
/// [`shm_name`].
pub fn default_location() -> Location {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        None => Location { name: shm_name(), note: None },
        Some(dir) => match runtime_dir_name(Path::new(&dir)) {
            Ok(name) => Location { name, note: None },
            Err(why) => Location {
                name: shm_name(),
                note: Some(format!("XDG_RUNTIME_DIR={} is not used: {why}", Path::new(&dir).display())),
            },
        },
    }
}

/// The name of [`default_location`].
pub fn default_name() -> String {
    default_location().name
}

/// The file of blackboard `name`: `/dev/shm/NAME` for a shared-memory name
/// `/NAME` (one leading slash, no other), else the absolute path `name`.
pub fn path(name: &str) -> Result<PathBuf, Problem> {
    let invalid = |why: &'static str| Problem::InvalidName { name: name.to_string(), why };
    if name.contains('\0') {
        return Err(invalid("it holds a NUL"));
    }
    let Some(rest) = name.strip_prefix('/') else {
        return Err(invalid("expected an absolute path or a shared-memory name \"/name\""));
    };
    if rest.is_empty() || rest.ends_with('/') {
        return Err(invalid("it names a directory"));
    }
    let file = rest.rsplit('/').next().unwrap_or(rest);
    if file == "." || file == ".." {
        return Err(invalid("it names a directory"));
    }
    if rest.contains('/') {
        Ok(PathBuf::from(name))
    } else {
        Ok(Path::new(SHM_DIR).join(rest))
    }
}

/// `name` as a path for messages (the name itself if it is invalid).
pub fn display_path(name: &str) -> String {
    path(name).map_or_else(|_| name.to_string(), |p| p.display().to_string())
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

/// One socket's meters. Those a [`Reader`] returns are always in range,
/// whatever the segment holds: rates finite and ≥ 0 (anything else reads
/// as 0), `utilisation` in 0..=1 (NaN reads as 0), `suggested_active` in
/// 1..=[`MAX_SUGGESTED_ACTIVE`].
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

impl Meter {
    /// The meter with every field brought into range (see [`Meter`]).
    pub fn sanitized(self) -> Meter {
        let rate = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
        Meter {
            llc_miss_rate: rate(self.llc_miss_rate),
            cycles_rate: rate(self.cycles_rate),
            utilisation: if self.utilisation.is_nan() { 0.0 } else { self.utilisation.clamp(0.0, 1.0) },
            suggested_active: self.suggested_active.clamp(1, MAX_SUGGESTED_ACTIVE),
            source: self.source,
        }
    }
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
    /// least a second; an interval counts as at most an hour): its daemon is
    /// probably gone.
    pub fn is_stale(&self) -> bool {
        let interval = self.interval_ns.min(3_600_000_000_000);
        self.age() > Duration::from_nanos(interval * 3).max(Duration::from_secs(1))
    }
}

/// The type of a file, as `lstat` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file: the only kind a blackboard may be.
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link.
    Symlink,
    /// A FIFO (named pipe): opening one for reading without `O_NONBLOCK`
    /// blocks until a writer appears.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Anything else.
    Unknown,
}

impl FileKind {
    fn of(mode: libc::mode_t) -> FileKind {
        match mode & libc::S_IFMT {
            libc::S_IFREG => FileKind::Regular,
            libc::S_IFDIR => FileKind::Directory,
            libc::S_IFLNK => FileKind::Symlink,
            libc::S_IFIFO => FileKind::Fifo,
            libc::S_IFSOCK => FileKind::Socket,
            libc::S_IFCHR => FileKind::CharDevice,
            libc::S_IFBLK => FileKind::BlockDevice,
            _ => FileKind::Unknown,
        }
    }

    /// With its article: "a regular file", "a FIFO (named pipe)", ...
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Symlink => "a symbolic link",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Unknown => "a file of unknown type",
        }
    }
}

/// What is at a blackboard's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occupant {
    /// Its type.
    pub kind: FileKind,
    /// Its owner.
    pub uid: u32,
    /// The owner's user name, where `/etc/passwd` has it.
    pub user: Option<String>,
    /// Its permission bits.
    pub mode: u32,
}

impl Occupant {
    fn of(st: &libc::stat) -> Occupant {
        Occupant {
            kind: FileKind::of(st.st_mode),
            uid: st.st_uid,
            user: user_name(st.st_uid),
            mode: st.st_mode & 0o7777,
        }
    }

    /// True when it belongs to the calling user.
    pub fn is_ours(&self) -> bool {
        self.uid == getuid()
    }

    /// "uid 65534 (nobody)", or "uid 65534" without a name.
    pub fn owner(&self) -> String {
        match &self.user {
            Some(u) => format!("uid {} ({u})", self.uid),
            None => format!("uid {}", self.uid),
        }
    }
}

impl std::fmt::Display for Occupant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} owned by {}, mode {:04o}", self.kind.describe(), self.owner(), self.mode)
    }
}

/// The name of user `uid` from `/etc/passwd` (a local file: never NSS,
/// which may block on the network).
fn user_name(uid: u32) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open("/etc/passwd").ok()?.take(1 << 20).read_to_string(&mut text).ok()?;
    text.lines().find_map(|line| {
        let mut f = line.split(':');
        let name = f.next()?;
        let id: u32 = f.nth(1)?.parse().ok()?;
        (id == uid && !name.is_empty()).then(|| name.to_string())
    })
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
    /// The name is neither an absolute path nor a shared-memory name.
    #[error("invalid blackboard name {name:?}: {why}")]
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Something other than a regular file is at the path (a FIFO, a
    /// symbolic link, ...): never opened.
    #[error("it is {found}, not a regular file")]
    NotRegular {
        /// What is there.
        found: Occupant,
    },
    /// The file belongs to another user.
    #[error("it is {found}, not owned by this user (uid {me})")]
    WrongOwner {
        /// What is there.
        found: Occupant,
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
    /// No sockets, or more than [`MAX_SOCKETS`].
    #[error("{found} sockets (1 to {MAX_SOCKETS} accepted)")]
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

    /// The warning printed for segment `name` (its path).
    pub fn warning(&self, name: &str) -> String {
        format!("herd: warning: ignoring the blackboard {}: {self}", display_path(name))
    }

    /// What is at the path, when the problem is about that (a foreign or
    /// non-regular file).
    pub fn occupant(&self) -> Option<&Occupant> {
        match self {
            Problem::NotRegular { found } | Problem::WrongOwner { found, .. } => Some(found),
            _ => None,
        }
    }

    fn os(call: &'static str) -> Problem {
        Problem::Os { call, error: std::io::Error::last_os_error().to_string() }
    }
}

fn now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

fn c_path(p: &Path) -> Result<CString, Problem> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| Problem::InvalidName { name: p.display().to_string(), why: "it holds a NUL" })
}

/// `lstat` of `path` (never follows a final symbolic link, never opens).
fn lstat(path: &Path) -> std::io::Result<libc::stat> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `st` is plain data that lstat fills in on success.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated string, `st` a valid out-pointer.
    if unsafe { libc::lstat(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// What is at blackboard `name`'s path (`lstat`: opens nothing), `None`
/// when nothing is.
pub fn inspect(name: &str) -> Result<Option<Occupant>, Problem> {
    match lstat(&path(name)?) {
        Ok(st) => Ok(Some(Occupant::of(&st))),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(Problem::Os { call: "lstat", error: e.to_string() }),
    }
}

/// An owned file descriptor, closed on drop.
struct Fd(libc::c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this descriptor and close it once.
        unsafe { libc::close(self.0) };
    }
}

impl Fd {
    fn stat(&self) -> Result<libc::stat, Problem> {
        // SAFETY: `st` is plain data filled in by fstat on success.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: the descriptor is open and `st` is a valid out-pointer.
        if unsafe { libc::fstat(self.0, &mut st) } != 0 {
            return Err(Problem::os("fstat"));
        }
        Ok(st)
    }
}

/// `open(path, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, mode)`: a FIFO
/// cannot block it, a final symbolic link is not followed.
fn open_io(path: &Path, flags: libc::c_int, mode: libc::mode_t) -> Result<std::io::Result<Fd>, Problem> {
    let c = c_path(path)?;
    let flags = flags | libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `c` is a valid NUL-terminated string; the mode is passed as
    // the variadic argument open expects with O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags, libc::c_uint::from(mode)) };
    Ok(if fd < 0 { Err(std::io::Error::last_os_error()) } else { Ok(Fd(fd)) })
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
    /// Maps `len` bytes of `fd`; `len` has passed [`check_size`].
    fn map(fd: &Fd, len: usize, writable: bool) -> Result<Mapping, Problem> {
        debug_assert!((HEADER_SIZE..=total_size(MAX_SOCKETS)).contains(&len));
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
        // (check_size before mapping); Header is all atomics, valid for any
        // bits.
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

/// Type, owner and mode of a file (the first trust rules), on an `lstat`
/// before opening and on the descriptor's `fstat` after.
fn check_stat(st: &libc::stat) -> Result<(), Problem> {
    if FileKind::of(st.st_mode) != FileKind::Regular {
        return Err(Problem::NotRegular { found: Occupant::of(st) });
    }
    let me = getuid();
    if st.st_uid != me {
        return Err(Problem::WrongOwner { found: Occupant::of(st), me });
    }
    let mode = st.st_mode & 0o7777;
    if mode & 0o077 != 0 {
        return Err(Problem::InsecureMode { mode });
    }
    Ok(())
}

/// The size of a checked file, before it is mapped: a header and at most
/// [`MAX_SOCKETS`] meters.
fn check_size(st: &libc::stat) -> Result<usize, Problem> {
    let size = usize::try_from(st.st_size).unwrap_or(usize::MAX);
    if size == 0 {
        return Err(Problem::NotReady);
    }
    if size < HEADER_SIZE {
        return Err(Problem::WrongSize {
            detail: format!("{size} bytes, smaller than the {HEADER_SIZE}-byte header"),
        });
    }
    if size > total_size(MAX_SOCKETS) {
        return Err(Problem::WrongSize {
            detail: format!("{} bytes, more than {MAX_SOCKETS} sockets need", st.st_size),
        });
    }
    Ok(size)
}

/// Opens the existing blackboard at `path` (`access`: `O_RDONLY` or
/// `O_RDWR`): `lstat` and [`check_stat`] first (nothing else is opened),
/// then a non-blocking, no-follow open, `fstat` and the same checks, then
/// [`check_size`]. Returns the descriptor and the size.
fn open_existing(path: &Path, access: libc::c_int) -> Result<(Fd, usize), Problem> {
    match lstat(path) {
        Ok(st) => check_stat(&st)?,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Err(Problem::Missing),
        Err(e) => return Err(Problem::Os { call: "lstat", error: e.to_string() }),
    }
    let fd = open_io(path, access, 0)?.map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => Problem::Missing,
        _ => Problem::Os { call: "open", error: e.to_string() },
    })?;
    let st = fd.stat()?;
    check_stat(&st)?;
    let size = check_size(&st)?;
    Ok((fd, size))
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
    if n == 0 || n > MAX_SOCKETS {
        return Err(Problem::TooManySockets { found: n });
    }
    let total = h.total_size.load(Ordering::Relaxed);
    if total != size as u64 || size != total_size(n) {
        return Err(Problem::WrongSize {
            detail: format!(
                "the segment has {size} bytes, its header says total_size {total}, and {n} socket(s) need {}",
                total_size(n)
            ),
        });
    }
    Ok(n)
}

/// Removes blackboard `name` — only a file of the calling user: another
/// user's is a [`Problem::WrongOwner`] and stays (this user could not
/// remove it from `/dev/shm` anyway, and root should not by accident).
pub fn unlink(name: &str) -> Result<(), Problem> {
    let path = path(name)?;
    match lstat(&path) {
        Ok(st) if st.st_uid != getuid() => {
            return Err(Problem::WrongOwner { found: Occupant::of(&st), me: getuid() })
        }
        Ok(_) => {}
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Err(Problem::Missing),
        Err(e) => return Err(Problem::Os { call: "lstat", error: e.to_string() }),
    }
    let c = c_path(&path)?;
    // SAFETY: `c` is a valid NUL-terminated string.
    if unsafe { libc::unlink(c.as_ptr()) } != 0 {
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) {
            return Err(Problem::Missing);
        }
        return Err(Problem::os("unlink"));
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
    /// Creates blackboard `name` for `n_sockets` sockets (`O_CREAT | O_EXCL`,
    /// mode 0600), or reuses an existing one that passes every trust rule
    /// and has the same socket count (a restarted daemon). An existing file
    /// that fails a rule is an error, naming what is there
    /// ([`Problem::occupant`]); nothing at the path is ever opened unless it
    /// is a regular file of this user.
    pub fn create(name: &str, n_sockets: u32, interval: Duration) -> Result<Writer, Problem> {
        if n_sockets == 0 || n_sockets > MAX_SOCKETS {
            return Err(Problem::TooManySockets { found: n_sockets });
        }
        let path = path(name)?;
        let size = total_size(n_sockets);
        let w = match open_io(&path, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, 0o600)? {
            Ok(fd) => {
                let created = || -> Result<Mapping, Problem> {
                    check_stat(&fd.stat()?)?;
                    // The umask cannot add bits, but make the mode exact anyway.
                    // SAFETY: `fd` is open.
                    if unsafe { libc::fchmod(fd.0, 0o600) } != 0 {
                        return Err(Problem::os("fchmod"));
                    }
                    // SAFETY: `fd` is open; the size is small and positive.
                    if unsafe { libc::ftruncate(fd.0, size as libc::off_t) } != 0 {
                        return Err(Problem::os("ftruncate"));
                    }
                    Mapping::map(&fd, size, true)
                };
                let map = match created() {
                    Ok(map) => map,
                    Err(e) => {
                        let _ = unlink(name);
                        return Err(e);
                    }
                };
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
                let (fd, have) = open_existing(&path, libc::O_RDWR)?;
                let map = Mapping::map(&fd, have, true)?;
                let n = check_header(map.header(), have)?;
                if n != n_sockets {
                    return Err(Problem::WrongSize {
                        detail: format!("it holds {n} socket(s), this machine has {n_sockets}"),
                    });
                }
                Writer { map, name: name.to_string(), n_sockets }
            }
            Err(e) => return Err(Problem::Os { call: "open", error: e.to_string() }),
        };
        w.map.header().interval_ns.store(interval.as_nanos() as u64, Ordering::Relaxed);
        Ok(w)
    }

    /// The blackboard's name.
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
            match h.seq.compare_exchange_weak(s, s.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed) {
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
        h.seq.store(s.wrapping_add(2), Ordering::Release);
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
    /// Opens blackboard `name` read-only and checks every trust rule (module
    /// documentation). Never blocks.
    pub fn open(name: &str) -> Result<Reader, Problem> {
        let (fd, size) = open_existing(&path(name)?, libc::O_RDONLY)?;
        let map = Mapping::map(&fd, size, false)?;
        let n_sockets = check_header(map.header(), size)?;
        Ok(Reader { map, name: name.to_string(), n_sockets })
    }

    /// The blackboard's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of sockets (1..=[`MAX_SOCKETS`]).
    pub fn n_sockets(&self) -> usize {
        self.n_sockets as usize
    }

    /// A consistent snapshot with one in-range meter ([`Meter`]) per socket,
    /// or `None` if the writer kept the seqlock busy for every attempt.
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
                .collect::<Vec<_>>();
            let snap = Snapshot {
                writer_pid: h.writer_pid.load(Ordering::Relaxed),
                timestamp_ns: h.timestamp_ns.load(Ordering::Relaxed),
                interval_ns: h.interval_ns.load(Ordering::Relaxed),
                meters,
            };
            fence(Ordering::Acquire);
            if h.seq.load(Ordering::Relaxed) == s1 {
                return Some(Snapshot {
                    meters: snap.meters.into_iter().map(Meter::sanitized).collect(),
                    ..snap
                });
            }
        }
        None
    }
}

static WARNED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Opens `name` as a [`Reader`]; on a trust problem prints its warning on
/// stderr (once per name and problem) and returns `None`, as it does,
/// silently, for a missing or initialising segment. Never blocks.
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

/// The warnings [`open_or_warn`] has printed in this process, oldest first.
pub fn warnings() -> Vec<String> {
    WARNED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

    fn temp_name(tag: &str) -> String {
        format!("/herd-test-bb-{}-{tag}", std::process::id())
    }

    /// A fresh private directory under the temporary directory.
    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("herd-test-bb-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        d
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
    fn raw_segment(name: &str, bytes: &[u8], mode: u32) {
        let p = path(name).unwrap();
        let _ = std::fs::remove_file(&p);
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&p).unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
        f.set_permissions(std::fs::Permissions::from_mode(mode)).unwrap();
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
    fn a_file_path_in_a_private_directory_works_too() {
        let dir = temp_dir("file");
        let name = runtime_dir_name(&dir).unwrap();
        assert_eq!(name, dir.join(RUNTIME_FILE).to_str().unwrap());
        let w = Writer::create(&name, 1, Duration::from_millis(50)).unwrap();
        w.publish(&[meter(0.5, 2)]);
        assert_eq!(Reader::open(&name).unwrap().read().unwrap().meters, vec![meter(0.5, 2)]);
        unlink(&name).unwrap();
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn mode_is_0600() {
        let name = temp_name("mode");
        let _ = unlink(&name);
        let _w = Writer::create(&name, 1, Duration::ZERO).unwrap();
        let st = lstat(&path(&name).unwrap()).unwrap();
        assert_eq!(st.st_mode & 0o777, 0o600);
        assert_eq!(inspect(&name).unwrap().unwrap().kind, FileKind::Regular);
        unlink(&name).unwrap();
        assert_eq!(inspect(&name).unwrap(), None);
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
        let p = path(&name).unwrap().display().to_string();
        let check = |bytes: Vec<u8>, mode: u32, want: &dyn Fn(&Problem) -> bool, words: &str| {
            raw_segment(&name, &bytes, mode);
            let e = Reader::open(&name).unwrap_err();
            assert!(want(&e), "unexpected problem {e:?}");
            assert!(e.is_warning());
            let w = e.warning(&name);
            assert!(w.contains(&p) && w.contains(words), "{w}");
            assert!(open_or_warn(&name).is_none());
            assert!(warnings().contains(&w));
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
        check(vec![1; 10], 0o600, &|p| matches!(p, Problem::WrongSize { .. }), "smaller than");
        check(valid_bytes(2), 0o640, &|p| *p == Problem::InsecureMode { mode: 0o640 }, "group or others");
        check(valid_bytes(2), 0o604, &|p| *p == Problem::InsecureMode { mode: 0o604 }, "group or others");
        let mut b = valid_bytes(0);
        b[24..28].copy_from_slice(&(MAX_SOCKETS + 1).to_ne_bytes());
        check(b, 0o600, &|p| matches!(p, Problem::TooManySockets { .. }), "sockets");
        check(valid_bytes(0), 0o600, &|p| *p == Problem::TooManySockets { found: 0 }, "0 sockets");
        // Larger than any blackboard: refused before mapping.
        let mut b = valid_bytes(MAX_SOCKETS);
        b.extend_from_slice(&[0; METER_SIZE]);
        check(b, 0o600, &|p| matches!(p, Problem::WrongSize { .. }), "more than");

        // All zeros: being initialised, skipped without a warning; so is an
        // empty file.
        raw_segment(&name, &[0; HEADER_SIZE], 0o600);
        let e = Reader::open(&name).unwrap_err();
        assert_eq!(e, Problem::NotReady);
        assert!(!e.is_warning());
        raw_segment(&name, &[], 0o600);
        assert_eq!(Reader::open(&name).unwrap_err(), Problem::NotReady);
        unlink(&name).unwrap();
    }

    #[test]
    fn out_of_range_meters_read_in_range() {
        let name = temp_name("range");
        let mut b = valid_bytes(3);
        let put = |b: &mut Vec<u8>, s: usize, llc: f64, util: f64, n: u32| {
            let o = HEADER_SIZE + s * METER_SIZE;
            b[o..o + 8].copy_from_slice(&llc.to_bits().to_ne_bytes());
            b[o + 8..o + 16].copy_from_slice(&f64::INFINITY.to_bits().to_ne_bytes());
            b[o + 16..o + 24].copy_from_slice(&util.to_bits().to_ne_bytes());
            b[o + 24..o + 28].copy_from_slice(&n.to_ne_bytes());
            b[o + 28..o + 32].copy_from_slice(&99u32.to_ne_bytes());
        };
        put(&mut b, 0, f64::NAN, f64::NAN, 0);
        put(&mut b, 1, -5.0, 7.5, u32::MAX);
        put(&mut b, 2, 3.0, -0.5, 4);
        raw_segment(&name, &b, 0o600);
        let m = Reader::open(&name).unwrap().read().unwrap().meters;
        assert_eq!(
            (m[0].llc_miss_rate, m[0].cycles_rate, m[0].utilisation, m[0].suggested_active),
            (0.0, 0.0, 0.0, 1)
        );
        assert_eq!(
            (m[1].llc_miss_rate, m[1].utilisation, m[1].suggested_active),
            (0.0, 1.0, MAX_SUGGESTED_ACTIVE)
        );
        assert_eq!((m[2].llc_miss_rate, m[2].utilisation, m[2].suggested_active), (3.0, 0.0, 4));
        assert!(m.iter().all(|m| m.source.is_none()));
        unlink(&name).unwrap();
    }

    #[test]
    fn names_and_paths() {
        assert_eq!(path("/herd-blackboard-7").unwrap(), Path::new("/dev/shm/herd-blackboard-7"));
        assert_eq!(path("/run/user/7/herd-blackboard").unwrap(), Path::new("/run/user/7/herd-blackboard"));
        assert_eq!(display_path("/x"), "/dev/shm/x");
        for bad in ["noslash", "/", "/a/", "/..", "/a/..", "/a\0b", ""] {
            let e = Reader::open(bad).unwrap_err();
            assert!(matches!(e, Problem::InvalidName { .. }), "{bad:?}: {e}");
            assert!(e.to_string().contains("invalid blackboard name"), "{e}");
        }
        assert_eq!(shm_name(), format!("/herd-blackboard-{}", getuid()));
        let loc = default_location();
        assert!(loc.name == shm_name() || loc.name.ends_with("/herd-blackboard"), "{loc:?}");
    }

    #[test]
    fn only_a_private_runtime_directory_is_used() {
        let dir = temp_dir("xdg");
        let want = dir.join(RUNTIME_FILE).display().to_string();
        assert_eq!(runtime_dir_name(&dir).unwrap(), want);
        let mut slash = dir.clone().into_os_string();
        slash.push("/");
        assert_eq!(runtime_dir_name(Path::new(&slash)).unwrap(), want);
        assert!(runtime_dir_name(Path::new("relative")).unwrap_err().contains("absolute"));
        // A symbolic link to it, even with a trailing slash.
        let link = std::env::temp_dir().join(format!("herd-test-bb-{}-xdg-link", std::process::id()));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(runtime_dir_name(&link).unwrap_err().contains("symbolic link"));
        let mut link_slash = link.clone().into_os_string();
        link_slash.push("/");
        assert!(runtime_dir_name(Path::new(&link_slash)).unwrap_err().contains("symbolic link"));
        std::fs::remove_file(&link).unwrap();
        // A regular file.
        let file = dir.join("f");
        std::fs::write(&file, b"").unwrap();
        assert!(runtime_dir_name(&file).unwrap_err().contains("not a directory"));
        std::fs::remove_file(&file).unwrap();
        // Open to group or others.
        for mode in [0o755, 0o770, 0o701, 0o500] {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
            assert!(runtime_dir_name(&dir).unwrap_err().contains("expected 0700"), "{mode:o}");
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        // Another user's (only root can give it away).
        if getuid() == 0 {
            let c = c_path(&dir).unwrap();
            // SAFETY: a valid path; chown has no memory preconditions.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
            let e = runtime_dir_name(&dir).unwrap_err();
            assert!(e.contains("uid 65534") && e.contains("not owned by this user"), "{e}");
        } else {
            eprintln!("note: not root: the test of a runtime directory of another uid is skipped");
        }
        std::fs::remove_dir(&dir).unwrap();
        assert!(runtime_dir_name(&dir).unwrap_err().contains("lstat"));
    }
}
