//! The one error type of the library.

use std::fmt;

/// Everything that can go wrong when configuring or building a pool.
///
/// Every variant carries enough context to act on: which setting, which value,
/// and what would have been accepted.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An environment variable (or the equivalent builder setting) holds a value
    /// herd does not accept.
    #[error("invalid value {value:?} for {name}: expected {expected}")]
    InvalidSetting {
        /// The variable or builder setting, e.g. `HERD_NUM_THREADS`.
        name: String,
        /// The value as given.
        value: String,
        /// The accepted forms, spelled out for a human.
        expected: String,
    },
    /// The hardware topology could not be read or the synthetic description is wrong.
    #[error("topology: {0}")]
    Topology(String),
    /// The requested placement cannot be realised on this machine (e.g. a place
    /// names a PU the process may not use).
    #[error("placement: {0}")]
    Placement(String),
    /// Binding a thread to its PU failed.
    #[error("binding thread to PU {pu}: {reason}")]
    Bind {
        /// OS index of the PU.
        pu: u32,
        /// What the OS said.
        reason: String,
    },
    /// Spawning an OS thread failed.
    #[error("spawning worker thread: {0}")]
    Spawn(#[from] std::io::Error),
    /// Starting a pool's threads would exceed a limit of the process or of
    /// the system (RLIMIT_NPROC, `kernel.threads-max`, `kernel.pid_max`, a
    /// cgroup's `pids.max`, `vm.max_map_count`, RLIMIT_AS, the commit limit,
    /// available memory). Found before any thread was started.
    #[error("{message}")]
    Limit {
        /// The limit, as the system names it (e.g. `vm.max_map_count`).
        limit: String,
        /// What was asked, what the limit allows and what is in use.
        message: String,
    },
    /// The OS refused one of a pool's worker threads part-way through
    /// [`PoolBuilder::build`](crate::PoolBuilder::build); the workers already
    /// started were stopped and joined, nothing of the pool is left.
    #[error(
        "cannot start worker thread {} of {total}: {source} ({hint}); the {started} already started were stopped and joined",
        started + 1
    )]
    WorkerSpawn {
        /// Threads started (and since stopped) before the failure.
        started: usize,
        /// Threads the pool needed.
        total: usize,
        /// What `std::thread::Builder::spawn` said.
        source: std::io::Error,
        /// The limits that error usually means.
        hint: String,
    },
}

impl Error {
    /// Shorthand for [`Error::InvalidSetting`].
    pub fn invalid(name: &str, value: &str, expected: impl fmt::Display) -> Error {
        Error::InvalidSetting {
            name: name.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }
}

/// `Result` with herd's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
