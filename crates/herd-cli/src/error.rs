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
            CliError::Write { .. }
            | CliError::Json(_)
            | CliError::Plot { .. }
            | CliError::Verify(_)
            | CliError::Failed(_) => status::FAILURE,
        }
    }
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
