//! # herd-la — dense linear algebra for herd
//!
//! Whole-matrix routines on the participants of the current herd pool, and the tiled Cholesky
//! factorization of *Concurrent Collections for dense linear algebra* on herd-flow:
//!
//! * [`gemm`](gemm()) / [`Gemm`]: `C ← α·op(A)·op(B) + β·C` (BLAS's `dgemm`, transposes
//!   [`Op`]) for faer views: `C` cut into blocks ([`Blocking`]), one sequential faer matmul per
//!   block, the blocks spread with `herd::join` (module [`mod@gemm`]); the ATLAS paper's rank-K
//!   update is `gemm(Op::NoTrans, Op::Trans, -1.0, a, b, 1.0, c)`.
//! * [`geqrf`] / [`orgqr`] / [`ormqr`] ([`Qr`] for the block size): Householder QR in
//!   LAPACK's representation, blocked with a one-panel look-ahead on `herd::join`
//!   (module [`mod@qr`]); [`Side`] says which side `op(Q)` multiplies.
//! * [`getrf`] / [`Getrf`]: LU with partial pivoting (LAPACK's `dgetrf`, same `ipiv` up to
//!   0-based indexing) as a blocked right-looking factorization with look-ahead, column-tile
//!   tasks on a `herd::scope` ([`LuSchedule`]); [`getrs`] solves with its factors (module [`lu`]).
//! * [`trsm`](trsm()) (`B ← α·op(A)⁻¹·B` or `α·B·op(A)⁻¹`, BLAS's `dtrsm`, [`Side`],
//!   [`Uplo`], [`Diag`]) and [`syrk`](syrk()) (`C ← α·A·Aᵀ + β·C`, BLAS's `dsyrk`): whole-matrix
//!   BLAS-3 on herd like `gemm`, one sequential faer kernel per block.
//! * [`sygv`](sygv()): the generalized symmetric-definite eigenproblem `A·x = λ·B·x` (LAPACK's
//!   `dsygv`, itype 1, jobz 'V', uplo 'L' or 'U'): Cholesky on herd-flow, the reduction to
//!   standard form as LAPACK's blocked `dsygst` on herd's `trsm`/`syr2k`/`gemm`, the blocked
//!   tridiagonal reduction (`dsytrd`/`dlatrd`) on herd, then divide and conquer on the tridiagonal
//!   matrix (LAPACK's `dstedc`) and the Householder back-transformation (`ormqr`) on herd, and the
//!   final triangular solve with `trsm`. [`sygv_values`] (jobz 'N'): the eigenvalues only — the
//!   same reductions (two-stage tridiagonal from a crossover order) and QR iteration on `T`, no
//!   eigenvector and no back-transformation.
//! * [`potrf_flow`]: tiled Cholesky as a herd-flow graph; [`potrf_seq_tiled`] the same tiles in
//!   program order (the reference); [`potrf_flow_in_place`] the same graph on tile views of the
//!   caller's own (strided) matrix, with no copy (what `dpotrf_` runs).
//! * [`TiledMatrix`]: an `m × n` `f64` matrix stored as `nb × nb` tiles, each tile a contiguous
//!   column-major buffer (edge tiles are smaller when the dimension is not a multiple of `nb`).
//!   Each tile sits behind its own [`std::sync::RwLock`], so tasks sharing the matrix through an
//!   `Arc` can update *different* tiles concurrently without any `unsafe`.
//! * [`kernels`]: the four sequential tile kernels of the right-looking algorithm — POTRF, TRSM,
//!   SYRK, GEMM — implemented with faer (single-threaded, `Par::Seq`), and, with the `openblas`
//!   cargo feature, with the system OpenBLAS library.
//! * Checks: [`probe_residual`] (module [`probe`]) compares two products applied to a random
//!   vector in `O(n²)`, as HPL checks its solution — [`residual_probe`] for a Cholesky factor;
//!   [`residual`] is the exact `O(n³)` check for tests. [`random_matrix`] and [`random_spd`]
//!   make deterministic test matrices.
//!
//! Errors follow LAPACK's conventions ([`LaError`]); nothing panics on bad input.
//!
//! ```
//! use herd_la::{gemm, potrf_seq_tiled, random_matrix, random_spd, residual, residual_probe};
//! use herd_la::{probe_residual, Factor, Op, TiledMatrix};
//!
//! let a = random_spd(50, 7);
//! let mut t = TiledMatrix::from_faer(a.as_ref(), 16).unwrap();
//! potrf_seq_tiled(&mut t).unwrap();
//! let l = t.to_faer();
//! assert!(residual(a.as_ref(), l.as_ref()).unwrap() < 10.0);
//! assert!(residual_probe(a.as_ref(), l.as_ref(), 1).unwrap() < 10.0);
//!
//! let (x, y) = (random_matrix(300, 200, 1), random_matrix(200, 100, 2));
//! let mut c = faer::Mat::<f64>::zeros(300, 100);
//! gemm(Op::NoTrans, Op::NoTrans, 1.0, x.as_ref(), y.as_ref(), 0.0, c.as_mut()).unwrap();
//! let r = probe_residual(&[Factor::full(c.as_ref())], &[Factor::full(x.as_ref()), Factor::full(y.as_ref())], 3);
//! assert!(r.unwrap() < 10.0);
//! ```
#![warn(missing_docs)]

mod blas_enums;
pub mod cholesky;
mod error;
pub mod gemm;
pub mod kernels;
pub mod lu;
pub mod probe;
pub mod qr;
mod rng;
mod side;
mod spread;
pub mod sygv;
pub mod syrk;
pub mod tiled;
pub mod trsm;

mod flow;
mod in_place;
pub use blas_enums::{Diag, Uplo};
pub use cholesky::{potrf_seq_tiled, potrf_seq_tiled_with, residual, residual_probe};
pub use error::LaError;
pub use flow::{potrf_flow, priority as potrf_priority, FlowReport};
pub use gemm::{gemm, gemm_kernel, Blocking, Gemm, Op};
pub use in_place::potrf_flow_in_place;
pub use kernels::Backend;
pub use lu::{getrf, getrf_probe, getrs, Getrf, LuSchedule};
pub use probe::{probe_residual, Factor};
pub use qr::{geqrf, orgqr, ormqr, qr_residual_probe, Qr, DEFAULT_QR_BLOCK};
pub use rng::{random_matrix, random_spd};
pub use side::Side;
pub use sygv::{sygv, sygv_values, sygv_values_with, sygv_with};
pub use syrk::{syr2k, syrk};
pub use tiled::{Tile, TileMut, TileRef, TiledMatrix};
pub use trsm::trsm;

/// Floating-point operation count of a Cholesky factorization of order `n`, the conventional
/// `n³ / 3` (lower-order terms ignored), used to report GFLOP/s.
pub fn potrf_flops(n: usize) -> f64 {
    let n = n as f64;
    n * n * n / 3.0
}

/// Floating-point operation count of an LU factorization of an `m × n`
/// matrix, LAPACK's (`dopla`'s `DGETRF`) count of multiplications plus
/// additions: `m·n² − n³/3 − n²/2 + 5n/6` for `m ≥ n` (the roles of `m` and
/// `n` swapped otherwise); `2n³/3` to leading order for a square matrix. Used
/// to report GFLOP/s.
pub fn getrf_flops(m: usize, n: usize) -> f64 {
    let (m, n) = (m.max(n) as f64, m.min(n) as f64);
    let mults = 0.5 * m * n * n - n * n * n / 6.0 + 0.5 * m * n - n * n / 2.0 + 2.0 * n / 3.0;
    let adds = 0.5 * m * n * n - n * n * n / 6.0 - 0.5 * m * n + n / 6.0;
    mults + adds
}

/// Floating-point operation count of `C ← α·op(A)·op(B) + β·C` with `C`
/// `m × n` and inner dimension `k`: `2·m·n·k` (one multiply and one add per
/// term), used to report GFLOP/s.
pub fn gemm_flops(m: usize, n: usize, k: usize) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64
}

/// Floating-point operation count of a QR factorization (`geqrf`) of an
/// `m × n` matrix, LAPACK's: `2n²(m − n/3)` for `m ≥ n`, `2m²(n − m/3)`
/// otherwise (lower-order terms ignored), used to report GFLOP/s.
pub fn geqrf_flops(m: usize, n: usize) -> f64 {
    let (m, n) = (m as f64, n as f64);
    if m >= n {
        2.0 * n * n * (m - n / 3.0)
    } else {
        2.0 * m * m * (n - m / 3.0)
    }
}

/// Floating-point operation count of [`sygv()`] of order `n` (all eigenvalues
/// and eigenvectors of `A·x = λ·B·x`), the conventional count of LAPACK's
/// `dsygv` steps with the leading terms only: Cholesky of `B` `n³/3`,
/// reduction to standard form `n³` (`dsygst`), tridiagonal reduction `4n³/3`,
/// back-transformation of the eigenvectors by the Householder reflectors
/// `2n³`, and the final triangular solve `n³` — `17n³/3` in all. The
/// tridiagonal eigensolver (data-dependent, at most `O(n³)`) is not counted.
pub fn sygv_flops(n: usize) -> f64 {
    let n = n as f64;
    17.0 * n * n * n / 3.0
}
