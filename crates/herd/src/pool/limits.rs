//! What a pool's threads need, checked against the limits of the process
//! and of the system before the first thread is started.
//!
//! `std::thread::Builder::spawn` reports most refusals as an error, but not
//! all of them: every Rust thread maps an alternative signal stack and its
//! guard page when it starts, and if *that* fails — typically because the
//! process is at `vm.max_map_count` — std aborts the whole process ("failed
//! to set up alternative stack guard page"). So the map count, and every
//! other limit that can be read, is checked up front, and a request that
//! would exceed one is an [`Error::Limit`] naming it. A refusal that still
//! happens midway is handled by the builder: it stops and joins the threads
//! already started and returns [`Error::WorkerSpawn`].
//!
//! A limit that cannot be read (no such file, not Linux) is not checked.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Memory mappings one thread adds: its stack and guard page, std's
/// alternative signal stack and its guard page (measured: 4.0 per thread).
pub(crate) const MAPS_PER_THREAD: u64 = 4;
/// Mappings left free for the process's own later use (every large
/// allocation is a mapping of its own).
pub(crate) const MAPS_HEADROOM: u64 = 1024;
/// Memory one idle thread keeps resident: its kernel stack (16 KiB), its
/// task, the touched top of its stack (thread descriptor, TLS). Measured
/// 16–22 KiB per parked thread; rounded up.
pub(crate) const RESIDENT_PER_THREAD: u64 = 32 << 10;
/// Process ids below this are not handed out again once ids have wrapped
/// (the kernel's `RESERVED_PIDS`).
pub(crate) const RESERVED_PIDS: u64 = 300;
/// std's stack for a new thread when neither the builder nor
/// `RUST_MIN_STACK` says otherwise.
const STD_DEFAULT_STACK: u64 = 2 << 20;

/// A request: `threads` new threads, each with a stack of `stack` bytes, for
/// a pool of `participants`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    pub(crate) participants: usize,
    pub(crate) threads: u64,
    pub(crate) stack: u64,
}

impl Request {
    /// `threads` threads for a pool of `participants`, with stacks of
    /// `stack` bytes (std's default when `None`).
    pub(crate) fn new(participants: usize, threads: usize, stack: Option<usize>) -> Request {
        let stack = stack.map_or_else(std_default_stack, |s| s as u64);
        Request { participants, threads: threads as u64, stack }
    }

    fn what(&self) -> String {
        format!("cannot start {} thread(s) for a pool of {} participant(s)", self.threads, self.participants)
    }
}

/// std's default stack size: `RUST_MIN_STACK` if set, else 2 MiB.
fn std_default_stack() -> u64 {
    std::env::var("RUST_MIN_STACK").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(STD_DEFAULT_STACK)
}

/// The figures the checks compare with; `None` where unknown or unlimited.
#[derive(Clone, Debug, Default)]
pub(crate) struct Readings {
    /// The page size.
    pub(crate) page: u64,
    /// std's alternative signal stack of one thread, guard page included.
    pub(crate) altstack: u64,
    /// Threads (tasks) in the whole system (`/proc/loadavg`).
    pub(crate) tasks: Option<u64>,
    /// `/proc/sys/kernel/threads-max`.
    pub(crate) threads_max: Option<u64>,
    /// `/proc/sys/kernel/pid_max`.
    pub(crate) pid_max: Option<u64>,
    /// RLIMIT_NPROC's soft limit and this process's threads; `None` when
    /// unlimited or not enforced (root, CAP_SYS_ADMIN, CAP_SYS_RESOURCE).
    pub(crate) nproc: Option<(u64, u64)>,
    /// The tightest `pids.max` of this process's cgroup and its ancestors:
    /// the folder, its `pids.max` and its `pids.current`.
    pub(crate) cgroup_pids: Option<(PathBuf, u64, u64)>,
    /// Mappings of this process and `vm.max_map_count`.
    pub(crate) maps: Option<(u64, u64)>,
    /// RLIMIT_AS and the address space in use (`VmSize`), in bytes.
    pub(crate) address_space: Option<(u64, u64)>,
    /// Under `vm.overcommit_memory = 2`: `CommitLimit` and `Committed_AS`, in bytes.
    pub(crate) commit: Option<(u64, u64)>,
    /// `MemAvailable`, in bytes.
    pub(crate) mem_available: Option<u64>,
}

/// Checks `req` against the limits as they are now.
pub(crate) fn check(req: &Request) -> Result<()> {
    if req.threads == 0 {
        return Ok(());
    }
    Readings::read().check(req)
}

/// What an error of `std::thread::Builder::spawn` usually means.
pub(crate) fn spawn_hint(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EAGAIN) => "EAGAIN: a limit on threads was reached — RLIMIT_NPROC (ulimit -u), \
                               kernel.threads-max, kernel.pid_max or a cgroup's pids.max"
            .into(),
        Some(libc::ENOMEM) => "ENOMEM: no memory or address space for its stack — RLIMIT_AS (ulimit -v), \
                               vm.max_map_count, the commit limit or memory"
            .into(),
        Some(code) => format!("OS error {code}"),
        None => "not an OS error".into(),
    }
}

/// `b` bytes for a human.
pub fn bytes(b: impl Into<u128>) -> String {
    const UNITS: [&str; 7] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"];
    let b: u128 = b.into();
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// The system's page size in bytes (`sysconf(_SC_PAGESIZE)`; 4096 if it
/// cannot be read).
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// `MemAvailable` of `/proc/meminfo`, in bytes; `None` where unknown.
pub fn mem_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    field(&meminfo, "MemAvailable:").map(|kib| kib.saturating_mul(1024))
}

/// Fails with [`Error::Limit`] when `need` bytes (for `what`) exceed
/// `MemAvailable`, naming both; passes where `MemAvailable` is unknown. For
/// callers that size a computation up front (`herd la`, `herd pmo`).
pub fn check_memory(what: &str, need: u128) -> Result<()> {
    match mem_available() {
        Some(avail) if need > u128::from(avail) => Err(Error::Limit {
            limit: "MemAvailable".into(),
            message: format!(
                "{what} needs about {} ({need} bytes) of memory, but MemAvailable is {} ({avail} bytes, \
                 /proc/meminfo)",
                bytes(need),
                bytes(avail)
            ),
        }),
        _ => Ok(()),
    }
}

impl Readings {
    /// Reads every figure that can be read.
    pub(crate) fn read() -> Readings {
        let page = page_size() as u64;
        // SAFETY: getauxval has no preconditions (0 for an absent entry).
        let min_sigstack = unsafe { libc::getauxval(libc::AT_MINSIGSTKSZ) };
        let altstack = (libc::SIGSTKSZ as u64).max(min_sigstack) + page;
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let tasks = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|s| s.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok());
        let nproc = rlimit(libc::RLIMIT_NPROC)
            .filter(|_| !nproc_exempt(&status))
            .map(|lim| (lim, field(&status, "Threads:").unwrap_or(1)));
        let maps = std::fs::read("/proc/self/maps")
            .ok()
            .map(|m| m.iter().filter(|&&b| b == b'\n').count() as u64)
            .zip(read_u64("/proc/sys/vm/max_map_count"));
        let address_space =
            rlimit(libc::RLIMIT_AS).map(|lim| (lim, field(&status, "VmSize:").unwrap_or(0) * 1024));
        let commit = (read_u64("/proc/sys/vm/overcommit_memory") == Some(2))
            .then(|| {
                Some((field(&meminfo, "CommitLimit:")? * 1024, field(&meminfo, "Committed_AS:")? * 1024))
            })
            .flatten();
        Readings {
            page,
            altstack,
            tasks,
            threads_max: read_u64("/proc/sys/kernel/threads-max"),
            pid_max: read_u64("/proc/sys/kernel/pid_max"),
            nproc,
            cgroup_pids: cgroup_pids(),
            maps,
            address_space,
            commit,
            mem_available: field(&meminfo, "MemAvailable:").map(|kib| kib.saturating_mul(1024)),
        }
    }

    /// Checks `req` against these figures: an error naming the tightest
    /// limit when the request exceeds it.
    pub(crate) fn check(&self, req: &Request) -> Result<()> {
        let n = req.threads;
        if n == 0 {
            return Ok(());
        }
        match self.limits(req).into_iter().min_by_key(|l| l.2) {
            Some((name, detail, free)) if n > free => Err(Error::Limit {
                limit: name.to_string(),
                message: format!("{}: {detail}; at most {free} more thread(s) could start now", req.what()),
            }),
            _ => Ok(()),
        }
    }

    /// Every known limit on `req`: its name, what it allows and uses, and
    /// how many more threads it lets start.
    fn limits(&self, req: &Request) -> Vec<(&'static str, String, u64)> {
        let n = req.threads;
        let mut all = Vec::new();
        if let (Some(tasks), Some(max)) = (self.tasks, self.threads_max) {
            let detail = format!(
                "the system allows {max} threads in all (kernel.threads-max, \
                 /proc/sys/kernel/threads-max) and {tasks} exist"
            );
            all.push(("kernel.threads-max", detail, max.saturating_sub(tasks)));
        }
        if let (Some(tasks), Some(pid_max)) = (self.tasks, self.pid_max) {
            let detail = format!(
                "every thread needs a process id: kernel.pid_max is {pid_max} \
                 (/proc/sys/kernel/pid_max; the first {RESERVED_PIDS} are reserved) and {tasks} are in use"
            );
            all.push(("kernel.pid_max", detail, pid_max.saturating_sub(RESERVED_PIDS).saturating_sub(tasks)));
        }
        if let Some((max, own)) = self.nproc {
            let detail = format!(
                "RLIMIT_NPROC (ulimit -u) allows this user {max} processes and threads \
                 and this process alone has {own}"
            );
            all.push(("RLIMIT_NPROC", detail, max.saturating_sub(own)));
        }
        if let Some((dir, max, current)) = &self.cgroup_pids {
            let detail =
                format!("the cgroup {} allows {max} tasks (pids.max) and has {current}", dir.display());
            all.push(("pids.max", detail, max.saturating_sub(*current)));
        }
        if let Some((count, max)) = self.maps {
            let detail = format!(
                "each thread adds {MAPS_PER_THREAD} memory mappings (its stack and guard page, std's \
                 signal stack and guard page), {} in all; the process has {count} of \
                 vm.max_map_count = {max} (/proc/sys/vm/max_map_count) and keeps {MAPS_HEADROOM} free",
                n.saturating_mul(MAPS_PER_THREAD)
            );
            let free = max.saturating_sub(count).saturating_sub(MAPS_HEADROOM) / MAPS_PER_THREAD;
            all.push(("vm.max_map_count", detail, free));
        }
        let page = self.page.max(1);
        let stack = req.stack.div_ceil(page) * page;
        if let Some((max, used)) = self.address_space {
            let each = stack + page + self.altstack;
            let detail = format!(
                "their stacks need {} of address space ({} each), the process uses {} \
                 and RLIMIT_AS (ulimit -v) is {}",
                bytes(n.saturating_mul(each)),
                bytes(each),
                bytes(used),
                bytes(max)
            );
            all.push(("RLIMIT_AS", detail, max.saturating_sub(used) / each));
        }
        if let Some((max, committed)) = self.commit {
            let each = stack + self.altstack;
            let detail = format!(
                "under vm.overcommit_memory = 2 their stacks commit {} ({} each) and \
                 Committed_AS is {} of CommitLimit {} (/proc/meminfo)",
                bytes(n.saturating_mul(each)),
                bytes(each),
                bytes(committed),
                bytes(max)
            );
            all.push(("CommitLimit", detail, max.saturating_sub(committed) / each));
        }
        if let Some(avail) = self.mem_available {
            let detail = format!(
                "each thread keeps about {} resident (kernel stack, top of its stack), {} in all, \
                 and MemAvailable is {} (/proc/meminfo)",
                bytes(RESIDENT_PER_THREAD),
                bytes(n.saturating_mul(RESIDENT_PER_THREAD)),
                bytes(avail)
            );
            all.push(("MemAvailable", detail, avail / RESIDENT_PER_THREAD));
        }
        all
    }
}

/// A soft resource limit, `None` when unlimited or unreadable.
fn rlimit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `r` is a valid out-pointer for the duration of the call.
    let ok = unsafe { libc::getrlimit(resource, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// The kernel does not enforce RLIMIT_NPROC for root nor for a process with
/// CAP_SYS_ADMIN or CAP_SYS_RESOURCE.
fn nproc_exempt(status: &str) -> bool {
    // SAFETY: getuid has no preconditions and cannot fail.
    if unsafe { libc::getuid() } == 0 {
        return true;
    }
    const CAP_SYS_ADMIN: u32 = 21;
    const CAP_SYS_RESOURCE: u32 = 24;
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN | 1 << CAP_SYS_RESOURCE) != 0)
}

/// The number after `name` on its line of a `/proc` file (`Threads:  5`,
/// `MemAvailable:  123 kB`).
fn field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix(name))?.split_whitespace().next()?.parse().ok()
}

fn read_u64(path: impl AsRef<Path>) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The tightest `pids.max` (headroom `max − current`) of this process's
/// cgroup and its ancestors, cgroup v2 or v1's `pids` controller.
fn cgroup_pids() -> Option<(PathBuf, u64, u64)> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut best: Option<(PathBuf, u64, u64)> = None;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let root = match controllers {
            "" if Path::new("/sys/fs/cgroup/cgroup.controllers").exists() => PathBuf::from("/sys/fs/cgroup"),
            "" => PathBuf::from("/sys/fs/cgroup/unified"),
            c if c.split(',').any(|c| c == "pids") => PathBuf::from("/sys/fs/cgroup/pids"),
            _ => continue,
        };
        let mut dir = root.join(path.trim_start_matches('/'));
        loop {
            let max = read_u64(dir.join("pids.max"));
            let current = read_u64(dir.join("pids.current"));
            if let (Some(max), Some(current)) = (max, current) {
                let headroom = max.saturating_sub(current);
                if best.as_ref().is_none_or(|(_, m, c)| m.saturating_sub(*c) > headroom) {
                    best = Some((dir.clone(), max, current));
                }
            }
            if dir == root || !dir.pop() {
                break;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A roomy machine: nothing near any limit.
    fn roomy() -> Readings {
        Readings {
            page: 4096,
            altstack: 12288,
            tasks: Some(100),
            threads_max: Some(200_000),
            pid_max: Some(4_194_304),
            nproc: Some((100_000, 3)),
            cgroup_pids: Some((PathBuf::from("/sys/fs/cgroup/x"), 50_000, 10)),
            maps: Some((100, 65_530)),
            address_space: Some((1 << 40, 1 << 30)),
            commit: Some((64 << 30, 1 << 30)),
            mem_available: Some(16 << 30),
        }
    }

    fn req(threads: u64) -> Request {
        Request { participants: threads as usize + 1, threads, stack: 2 << 20 }
    }

    fn limit_of(r: &Readings, threads: u64) -> Option<String> {
        match r.check(&req(threads)) {
            Ok(()) => None,
            Err(Error::Limit { limit, message }) => {
                assert!(message.contains("at most") && message.contains(&limit), "{message}");
                Some(limit)
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }

    #[test]
    fn within_every_limit_is_accepted() {
        assert_eq!(limit_of(&roomy(), 1000), None);
        assert_eq!(limit_of(&Readings::default(), 1 << 40), None, "unknown limits are not checked");
    }

    #[test]
    fn each_limit_is_named() {
        type Case = (&'static str, fn(&mut Readings));
        let cases: [Case; 9] = [
            ("kernel.threads-max", |r| r.threads_max = Some(1099)),
            ("kernel.pid_max", |r| r.pid_max = Some(1300)),
            ("RLIMIT_NPROC", |r| r.nproc = Some((1002, 3))),
            ("pids.max", |r| r.cgroup_pids = Some((PathBuf::from("/c"), 1005, 10))),
            ("vm.max_map_count", |r| r.maps = Some((100, 5000))),
            ("RLIMIT_AS", |r| r.address_space = Some((2 << 30, 1 << 30))),
            ("CommitLimit", |r| r.commit = Some((2 << 30, 1 << 30))),
            ("MemAvailable", |r| r.mem_available = Some(16 << 20)),
            ("vm.max_map_count", |r| r.maps = Some((65_530 - 1024 - 3999, 65_530))),
        ];
        for (name, set) in cases {
            let mut r = roomy();
            set(&mut r);
            assert_eq!(limit_of(&r, 1000).as_deref(), Some(name));
        }
    }

    #[test]
    fn the_tightest_limit_is_named() {
        let mut r = roomy();
        r.threads_max = Some(1099);
        r.pid_max = Some(1500);
        assert_eq!(limit_of(&r, 1000).as_deref(), Some("kernel.threads-max"));
        r.pid_max = Some(1250);
        assert_eq!(limit_of(&r, 1000).as_deref(), Some("kernel.pid_max"));
    }

    #[test]
    fn map_count_headroom_is_counted() {
        // 100 mappings + 4 per thread + 1024 kept free must fit in 65530.
        let most = (65_530 - 100 - MAPS_HEADROOM) / MAPS_PER_THREAD;
        assert_eq!(limit_of(&roomy(), most), None);
        assert_eq!(limit_of(&roomy(), most + 1).as_deref(), Some("vm.max_map_count"));
    }

    #[test]
    fn the_message_says_how_many_could_start() {
        let mut r = roomy();
        r.pid_max = Some(32_768);
        r.maps = None;
        r.commit = None;
        let Err(Error::Limit { message, .. }) = r.check(&req(99_998)) else { panic!("accepted") };
        assert!(message.contains("99998 thread(s)") && message.contains("32768"), "{message}");
        assert!(message.contains(&format!("at most {} more", 32_768 - RESERVED_PIDS - 100)), "{message}");
    }

    #[test]
    fn readings_of_this_machine() {
        let r = Readings::read();
        assert!(r.page >= 4096 && r.altstack > r.page);
        if cfg!(target_os = "linux") {
            assert!(r.tasks.is_some_and(|t| t >= 1), "{r:?}");
            assert!(r.maps.is_some_and(|(count, max)| count > 0 && max > count), "{r:?}");
            assert!(r.mem_available.is_some(), "{r:?}");
        }
    }

    #[test]
    fn sizes_for_humans() {
        assert_eq!(bytes(512u64), "512 B");
        assert_eq!(bytes(32u64 << 10), "32.0 KiB");
        assert_eq!(bytes(3u64 << 30), "3.0 GiB");
    }
}
