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
