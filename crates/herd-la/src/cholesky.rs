//! Sequential tiled Cholesky factorization (lower) and its residual check.
//!
//! [`potrf_seq_tiled`] is the right-looking tiled algorithm executed in program order on one
//! thread. It is the reference against which the dataflow (herd-flow) version is checked: both
//! apply the same kernels to the same tiles, only the order of independent kernels differs.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};

use crate::probe::{frobenius, Factor, Part};
use crate::{Backend, LaError, TiledMatrix};

/// Factors `a = L Lᵀ` in place with the faer tile kernels; see [`potrf_seq_tiled_with`].
///
/// # Errors
/// See [`potrf_seq_tiled_with`].
pub fn potrf_seq_tiled(a: &mut TiledMatrix) -> Result<(), LaError> {
    potrf_seq_tiled_with(a, Backend::Faer)
}

/// Factors the symmetric positive definite matrix `a` (lower triangle referenced) as `L Lᵀ`
/// in place, sequentially, with the tile kernels of `backend`.
///
/// On success the lower triangle (tiles `(i, j)`, `i ≥ j`, lower part of diagonal tiles) holds
/// `L`; the strict upper triangle is not referenced and keeps its input values, as in LAPACK's
/// `dpotrf` with `UPLO = 'L'`.
///
/// For `k = 0 .. nt`: POTRF(`A_kk`); TRSM(`A_kk`, `A_ik`) for `i > k`; SYRK(`A_ik`, `A_ii`) and
/// GEMM(`A_ik`, `A_jk`, `A_ij`) for `k < j < i`.
///
/// # Errors
/// * [`LaError::NotSquare`] if the matrix is not square;
/// * [`LaError::NonFinite`] with the first NaN/infinite element of the lower triangle (checked
///   before anything is modified);
/// * [`LaError::NotPositiveDefinite`] with the global column whose pivot failed; columns before
///   it hold the corresponding part of `L`.
///
/// A `0 × 0` matrix is factored trivially (`Ok`).
pub fn potrf_seq_tiled_with(a: &mut TiledMatrix, backend: Backend) -> Result<(), LaError> {
    check_potrf_input(a)?;
    let nt = a.nt();
    for k in 0..nt {
        potrf_diagonal_tile(backend, a, k)?;
        {
            let lkk = a.tile(k, k);
            for i in k + 1..nt {
                backend.trsm(&lkk, &mut a.tile_mut(i, k))?;
            }
        }
        for i in k + 1..nt {
            let aik = a.tile(i, k);
            backend.syrk(&aik, &mut a.tile_mut(i, i))?;
            for j in k + 1..i {
                backend.gemm(&aik, &a.tile(j, k), &mut a.tile_mut(i, j))?;
            }
        }
    }
    Ok(())
}

/// The checks LAPACK's `dpotrf` makes before touching anything: a square
/// matrix with a finite lower triangle.
pub(crate) fn check_potrf_input(a: &TiledMatrix) -> Result<(), LaError> {
    if a.nrows() != a.ncols() {
        return Err(LaError::NotSquare { rows: a.nrows(), cols: a.ncols() });
    }
    if let Some((row, col)) = a.first_non_finite_lower() {
        return Err(LaError::NonFinite { row, col });
    }
    Ok(())
}

/// Factors diagonal tile (k, k); a failed pivot is reported with its global
/// column, as LAPACK does.
pub(crate) fn potrf_diagonal_tile(backend: Backend, a: &TiledMatrix, k: usize) -> Result<(), LaError> {
    backend.potrf(&mut a.tile_mut(k, k)).map_err(|e| match e {
        LaError::NotPositiveDefinite { column } => {
            LaError::NotPositiveDefinite { column: k * a.nb() + column }
        }
        other => other,
    })
}

/// Scaled residual `‖A − L Lᵀ‖_F / (‖A‖_F · n · ε)` of a Cholesky factor.
///
/// `a` is the full symmetric original matrix; only the lower triangle (with diagonal) of `l` is
/// used, its strict upper triangle is ignored. A backward-stable factorization gives values of
/// order 1; values below 10 are the usual acceptance threshold. Returns `0.0` for `n = 0` and
/// for `A = 0 = L`.
///
/// Costs `O(n³)` (it forms `L Lᵀ`, single-threaded): for tests. Large factors are checked in
/// `O(n²)` by [`probe_residual`](crate::probe_residual) (`A·x` against `L·(Lᵀ·x)`).
///
/// # Errors
/// [`LaError::NotSquare`] or [`LaError::ShapeMismatch`] when `a` and `l` are not square of the
/// same order.
pub fn residual(a: MatRef<'_, f64>, l: MatRef<'_, f64>) -> Result<f64, LaError> {
    if a.nrows() != a.ncols() {
        return Err(LaError::NotSquare { rows: a.nrows(), cols: a.ncols() });
    }
    if l.nrows() != a.nrows() || l.ncols() != a.ncols() {
        return Err(LaError::ShapeMismatch(format!(
            "residual: A is {} x {} but L is {} x {}",
            a.nrows(),
            a.ncols(),
            l.nrows(),
            l.ncols()
        )));
    }
    let n = a.nrows();
    if n == 0 {
        return Ok(0.0);
    }
    let lower = Mat::from_fn(n, n, |i, j| if i >= j { l[(i, j)] } else { 0.0 });
    let mut r = a.to_owned();
    matmul(r.as_mut(), Accum::Add, lower.as_ref(), lower.transpose(), -1.0, Par::Seq);
    let num = frobenius(r.as_ref(), Part::Full);
    let den = frobenius(a, Part::Full) * n as f64 * f64::EPSILON;
    if num == 0.0 {
        return Ok(0.0);
    }
    Ok(num / den)
}

/// The `O(n²)` check of a Cholesky factor: `A·x` against `L·(Lᵀ·x)` for a random `x`
/// ([`probe_residual`](crate::probe_residual) with `seed`), scaled by
/// `max(‖A‖_F, ‖L‖_F²)·‖x‖₂·n·ε`. Only the lower triangle (with diagonal) of `l` is read.
/// Values of order 1 or below for a backward-stable factorization; `0.0` for `n = 0`.
///
/// # Errors
/// [`LaError::ShapeMismatch`] when `a` and `l` are not square of the same order.
pub fn residual_probe(a: MatRef<'_, f64>, l: MatRef<'_, f64>, seed: u64) -> Result<f64, LaError> {
    crate::probe_residual(&[Factor::full(a)], &[Factor::lower(l), Factor::upper(l.transpose())], seed)
}
