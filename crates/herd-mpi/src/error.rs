//! herd-mpi's errors.

use thiserror::Error;

/// What can go wrong in herd-mpi.
#[derive(Debug, Error)]
pub enum MpiError {
    /// `MPI_Init_thread` was already called in this process (by herd-mpi or by someone else).
    #[error("MPI is already initialized in this process; herd-mpi's communicator thread must be the one that initializes it")]
    AlreadyInitialized,
    /// The MPI library gives less thread support than herd-mpi needs.
    #[error("the MPI library provides thread level {provided:?}, herd-mpi needs at least {needed:?}")]
    ThreadLevel {
        /// What the library provides.
        provided: mpi::Threading,
        /// What herd-mpi asked for.
        needed: mpi::Threading,
    },
    /// An MPI call returned an error code.
    #[error("{call} failed on rank {rank} with MPI error code {code}")]
    Call {
        /// The MPI function.
        call: &'static str,
        /// The calling rank.
        rank: usize,
        /// The error code it returned.
        code: i32,
    },
    /// An argument is outside what the operation accepts.
    #[error("{0}")]
    Invalid(String),
    /// The communicator thread has stopped (it panicked or the runtime was shut down).
    #[error("herd-mpi's communicator thread on rank {rank} has stopped: {why}")]
    Stopped {
        /// The rank whose thread stopped.
        rank: usize,
        /// Why.
        why: String,
    },
    /// Another rank reported a failure (distributed operations stop on every rank with it).
    #[error("rank {rank} failed: {message}")]
    Remote {
        /// The rank that failed.
        rank: usize,
        /// Its error.
        message: String,
    },
    /// A wait went past its deadline.
    #[error("rank {rank}: {what} did not complete within {seconds} s")]
    Timeout {
        /// The waiting rank.
        rank: usize,
        /// What was awaited.
        what: String,
        /// The deadline.
        seconds: f64,
    },
    /// herd itself failed (topology, pool).
    #[error(transparent)]
    Herd(#[from] herd::Error),
}

/// herd-mpi's result type.
pub type Result<T> = std::result::Result<T, MpiError>;

/// Checks an MPI return code.
#[allow(dead_code)] // for the FFI wrappers of copy, fft and potrf
pub(crate) fn check(call: &'static str, rank: usize, code: i32) -> Result<()> {
    if code == mpi::ffi::MPI_SUCCESS as i32 {
        Ok(())
    } else {
        Err(MpiError::Call { call, rank, code })
    }
}
