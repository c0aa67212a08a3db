//! The CLI's error type: every failure ends as `herd: <message>` on stderr,
//! and the exit status says which kind of failure it was ([`status`]: the
//! one place the statuses are decided).

use std::path::PathBuf;

/// `herd`'s exit statuses.
pub mod status {
    /// The command ran and failed: a file could not be written, a result
    /// did not verify, a chart could not be drawn, the machine's topology
    /// could not be read.
    pub const FAILURE: u8 = 1;
    /// Bad input: a usage error found by clap (unknown option, value out of
    /// range), an invalid option value or `HERD_*` variable, an unreadable
    /// or malformed input file. clap exits with 2 by itself.
    pub const USAGE: u8 = 2;
    /// The request exceeds what this machine or process can give: threads
    /// (RLIMIT_NPROC, kernel.threads-max, kernel.pid_max, a cgroup's
    /// pids.max, vm.max_map_count) or memory (MemAvailable, RLIMIT_AS,
    /// CommitLimit); the message names the limit and both numbers.
    pub const LIMIT: u8 = 3;
}

/// The exit statuses, for `herd --help` (and the README's "Exit codes and
/// bad input").
pub const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  success
  1  the command ran and failed (writing a file, verification, drawing, reading the topology or
     /proc, herd's OpenMP library not built, a blackboard name held by another user)
  2  bad input: usage errors (clap's), option values out of range, invalid HERD_* variables,
     malformed input files; every numeric option is checked before any work starts
  3  the request exceeds a limit of this machine or process: threads (RLIMIT_NPROC,
     kernel.threads-max, kernel.pid_max, pids.max, vm.max_map_count) or memory (MemAvailable,
     RLIMIT_AS, CommitLimit); the message names the limit and both numbers
`herd run` execs the program, whose status is its own; 126/127 when it cannot be run.";

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The runtime refused the configuration (an invalid `HERD_*` value, ...).
    #[error("{0}")]
    Herd(#[from] herd::Error),
    /// A command-line value that clap could not check by itself.
    #[error("{0}")]
    Usage(String),
    /// Writing an output file failed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// JSON encoding failed.
    #[error("cannot encode JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Drawing a chart failed.
    #[error("cannot draw {}: {message}", path.display())]
    Plot {
        /// The chart file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A parallel result differs from the serial one.
    #[error("verification failed: {0}")]
    Verify(String),
    /// The request needs more than the machine has (memory, threads).
    #[error("{0}")]
    Limit(String),
    /// The command could not do its work for a reason that is not the
    /// input's: a system file unreadable, herd's library not built, a
    /// shared-memory name held by someone else.
    #[error("{0}")]
    Failed(String),
}

impl CliError {
    /// Process exit status; see [`status`].
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Herd(e) => match e {
                herd::Error::InvalidSetting { .. } | herd::Error::Placement(_) => status::USAGE,
                herd::Error::Limit { .. } | herd::Error::WorkerSpawn { .. } | herd::Error::Spawn(_) => {
                    status::LIMIT
                }
                herd::Error::Topology(_) | herd::Error::Bind { .. } => status::FAILURE,
            },
            CliError::Usage(_) => status::USAGE,
            CliError::Limit(_) => status::LIMIT,
            CliError::Write { .. }
            | CliError::Json(_)
            | CliError::Plot { .. }
            | CliError::Verify(_)
            | CliError::Failed(_) => status::FAILURE,
        }
    }
}

/// `MemAvailable` of `/proc/meminfo`, in bytes; `None` where unknown.
pub fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib.saturating_mul(1024))
}

/// Fails with [`CliError::Limit`] when `need` bytes (what: `what`) exceed
/// `MemAvailable`, naming both; passes where `MemAvailable` is unknown.
pub fn check_memory(what: &str, need: u128) -> Result<(), CliError> {
    match mem_available() {
        Some(avail) if need > u128::from(avail) => Err(CliError::Limit(format!(
            "{what} needs about {} ({need} bytes) of memory, but MemAvailable is {} ({avail} bytes, \
             /proc/meminfo)",
            bytes(need),
            bytes(u128::from(avail))
        ))),
        _ => Ok(()),
    }
}

/// `b` bytes for a human.
pub fn bytes(b: u128) -> String {
    const UNITS: [&str; 7] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"];
    if b < 1024 {
        return format!("{b} bytes");
    }
    let mut v = b as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// A clap parser of a `usize` option within `range`.
pub fn usize_in(range: impl std::ops::RangeBounds<u64>) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(range)
}

/// Writes `contents` to `path` (creating missing parent folders), naming the
/// file in the error.
pub fn write_file(path: &std::path::Path, contents: impl AsRef<[u8]>) -> Result<(), CliError> {
    create_parent(path)?;
    std::fs::write(path, contents).map_err(|source| CliError::Write { path: path.to_path_buf(), source })
}

/// Creates the folder that will hold `path`, if missing.
pub fn create_parent(path: &std::path::Path) -> Result<(), CliError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir)
            .map_err(|source| CliError::Write { path: path.to_path_buf(), source }),
        _ => Ok(()),
    }
}
