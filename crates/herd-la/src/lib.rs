//! # herd-la — tiled dense linear algebra for herd
//!
//! Foundations of the tiled Cholesky factorization described in
//! *Concurrent Collections for dense linear algebra* (issue 5, item 5):
//!
//! * [`TiledMatrix`]: an `m × n` `f64` matrix stored as `nb × nb` tiles, each tile a contiguous
//!   column-major buffer (edge tiles are smaller when the dimension is not a multiple of `nb`).
//!   Each tile sits behind its own [`std::sync::RwLock`], so tasks sharing the matrix through an
//!   `Arc` can update *different* tiles concurrently without any `unsafe`.
//! * [`kernels`]: the four sequential tile kernels of the right-looking algorithm — POTRF, TRSM,
//!   SYRK, GEMM — implemented with faer (single-threaded, `Par::Seq`), and, with the `openblas`
//!   cargo feature, with the system OpenBLAS library.
//! * [`cholesky`]: the sequential tiled Cholesky factorization [`potrf_seq_tiled`] (the reference
//!   that a dataflow version is checked against), the scaled residual [`residual`] and the
//!   deterministic SPD generator [`random_spd`].
//!
//! Errors follow LAPACK's conventions ([`LaError`]); nothing panics on bad input.
//!
//! ```
//! use herd_la::{potrf_seq_tiled, random_spd, residual, TiledMatrix};
//!
//! let a = random_spd(50, 7);
//! let mut t = TiledMatrix::from_faer(a.as_ref(), 16).unwrap();
//! potrf_seq_tiled(&mut t).unwrap();
//! let l = t.to_faer();
//! assert!(residual(a.as_ref(), l.as_ref()).unwrap() < 10.0);
//! ```
#![warn(missing_docs)]

pub mod cholesky;
mod error;
pub mod gemm;
pub mod kernels;
pub mod probe;
mod rng;
pub mod tiled;

mod flow;
pub use cholesky::{potrf_seq_tiled, potrf_seq_tiled_with, residual, residual_probe};
pub use error::LaError;
pub use flow::{potrf_flow, FlowReport};
pub use gemm::{gemm, gemm_with, Blocking, Op};
pub use kernels::Backend;
pub use probe::{probe_residual, Factor};
pub use rng::{random_matrix, random_spd};
pub use tiled::{Tile, TileMut, TileRef, TiledMatrix};

/// Floating-point operation count of a Cholesky factorization of order `n`, the conventional
/// `n³ / 3` (lower-order terms ignored), used to report GFLOP/s.
pub fn potrf_flops(n: usize) -> f64 {
    let n = n as f64;
    n * n * n / 3.0
}

/// Floating-point operation count of `C ← α·op(A)·op(B) + β·C` with `C`
/// `m × n` and inner dimension `k`: `2·m·n·k` (one multiply and one add per
/// term), used to report GFLOP/s.
pub fn gemm_flops(m: usize, n: usize, k: usize) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64
}
