//! # herd-mpi — herd beyond one node, over MPI
//!
//! herd on Open MPI through rsmpi (copy-pack-overlap-blue-horizon.txt, cnc-dense-linear-algebra.txt):
//! * [`Mpi`]: the **communicator thread** that owns MPI in each process; compute participants
//!   hand it sends, receives, all-to-alls and closures and go on ([`comm`]).
//! * [`scalapack`]: ScaLAPACK's `pdpotrf` on the shared SPD matrix ([`spd`]) as the anchor of
//!   the distributed Cholesky, and [`model`]: its scale model (DAG replay on P simulated nodes).
//! * [`DistGraph`]: herd-flow across ranks — tags routed by `compute_on`, items forwarded to
//!   their consumers, distributed termination detection and errors ([`flow`]); the
//!   distributed tiled Cholesky on it, 2-D block-cyclic ([`potrf::factor`]).
//! * [`copy`]: topology-aware parallel copy and strided pack/unpack, against `memcpy`,
//!   STREAM copy and `MPI_Type_vector` + `MPI_Pack`; strided blocks exchanged with a peer
//!   as messages, as a pipeline of chunks, or through an MPI-3 shared-memory window of the
//!   pair when it shares the node.
//! * [`fft::Fft2d`]: the distributed 2-D FFT, bulk-synchronous and with its all-to-all
//!   overlapped with the FFTs in chunks, beside FFTW-MPI's own ([`fft`]).
//!
//! MPI programs run under `mpirun`; `herd mpi …` are the command-line experiments. Tests
//! launch themselves under `mpirun -np 1, 2, 4` ([`testing`]).

#![warn(missing_docs)]

pub mod comm;
pub mod copy;
pub mod error;
pub mod fft;
pub mod flow;
pub mod grid;
pub mod measure;
pub mod model;
pub mod node;
pub mod potrf;
pub mod scalapack;
pub mod spd;
#[doc(hidden)]
pub mod testing;

pub use comm::{CommPlace, CommStats, Mpi, Options, Pending};
pub use copy::{pack, parallel_copy, unpack, Vector};
pub use error::{MpiError, Result};
pub use fft::Fft2d;
pub use flow::{DistError, DistGraph, DistStats};
pub use grid::ProcessGrid;
pub use node::NodeShare;

mod sync;

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
