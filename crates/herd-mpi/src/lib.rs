//! # herd-mpi — herd beyond one node, over MPI
//!
//! herd on Open MPI through rsmpi (copy-pack-overlap-blue-horizon.txt, cnc-dense-linear-algebra.txt):
//! * [`Mpi`]: the **communicator thread** that owns MPI in each process; compute participants
//!   hand it sends, receives, all-to-alls and closures and go on ([`comm`]).
//! * [`fft::Fft2d`]: the distributed 2-D FFT, bulk-synchronous and with its all-to-all
//!   overlapped with the FFTs in chunks, beside FFTW-MPI's own ([`fft`]).
//!
//! MPI programs run under `mpirun`; `herd mpi …` are the command-line experiments. Tests
//! launch themselves under `mpirun -np 1, 2, 4` ([`testing`]).

#![warn(missing_docs)]

pub mod comm;
pub mod error;
pub mod fft;
pub mod grid;
#[doc(hidden)]
pub mod testing;

pub use comm::{CommPlace, CommStats, Mpi, Options, Pending};
pub use error::{MpiError, Result};
pub use fft::Fft2d;
pub use grid::ProcessGrid;

/// The message of a panic payload.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".into()
    }
}
