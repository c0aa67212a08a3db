//! `dpotrf_`: Cholesky factorization.

use crate::ffi::{self, dim, guard, lead, mat_mut, uplo, Int, Routine, Uplo};
use faer::MatMut;
use herd_flow::Discipline;
use herd_la::{kernels::faer_potrf, potrf_flow, Backend, LaError, TiledMatrix};
use std::ffi::c_char;
use std::sync::Arc;

/// Orders up to this are factored by one sequential kernel in place: a graph
/// of tiles costs more than it gains below it.
const POTRF_SEQUENTIAL_MAX: usize = 128;

/// LAPACK `DPOTRF`: the Cholesky factor of a symmetric positive definite
/// matrix, `A = L·Lᵀ` (`UPLO = 'L'`) or `A = Uᵀ·U` (`'U'`), in place, as a
/// herd-flow graph of tiles (`herd_la::potrf_flow`) on herd's pool. Only the
/// `UPLO` triangle is read and written.
///
/// `INFO`: 0; `−i` for a bad argument i (`UPLO` 1, `N` 2, `LDA` 4, also
/// reported to `xerbla_`); `i > 0` when the leading minor of order `i` is not
/// positive definite (the factorization stops there; the columns before it
/// hold their part of the factor). A NaN or infinite entry in the triangle at
/// row `r` (column `r` for `'U'`) makes the pivot of column `r` NaN; it is
/// reported as LAPACK reports that pivot, `INFO = r + 1`, unless an earlier
/// pivot fails first (where LAPACK would go on with an infinite pivot, herd
/// reports it).
///
/// # Safety
/// LAPACK's contract: `a` points to an `LDA × N` column-major matrix, all
/// other pointers to readable scalars, `info` to a writable one.
#[no_mangle]
pub unsafe extern "C" fn dpotrf_(
    uplo_: *const c_char,
    n: *const Int,
    a: *mut f64,
    lda: *const Int,
    info: *mut Int,
) {
    let result = guard("DPOTRF", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let ul = uplo(uplo_, 1)?;
            let n = dim(n, 2)?;
            let lda = lead(lda, n, 4)?;
            ffi::count(Routine::Potrf);
            Ok(potrf(ul, mat_mut(a, n, n, lda)))
        }
    });
    // SAFETY: the caller's contract.
    unsafe { ffi::set_info(info, result) };
}

/// Factors the `uplo` triangle of `a` in place; LAPACK's `INFO` (0, or the
/// 1-based order of the first leading minor that is not positive definite).
pub(crate) fn potrf(uplo: Uplo, a: MatMut<'_, f64>) -> Int {
    // The upper triangle of A is the lower triangle of Aᵀ, and Uᵀ·U = A is
    // L·Lᵀ = A with L = Uᵀ: one lower factorization serves both.
    let lower = match uplo {
        Uplo::Lower => a,
        Uplo::Upper => a.transpose_mut(),
    };
    match potrf_lower(lower) {
        Ok(()) => 0,
        Err(column) => Int::try_from(column + 1).unwrap_or(Int::MAX),
    }
}

/// The lower factorization; `Err(j)`: the pivot of column `j` (0-based) is
/// not positive or not finite.
fn potrf_lower(mut a: MatMut<'_, f64>) -> Result<(), usize> {
    let n = a.nrows();
    // The first row holding a non-finite value of the triangle: the pivot of
    // that column is the first the value reaches.
    let bad_row = (0..n).find(|&i| (0..=i).any(|j| !a[(i, j)].is_finite()));
    if let Some(r) = bad_row {
        potrf_lower(a.as_mut().submatrix_mut(0, 0, r, r))?;
        return Err(r);
    }
    if n <= POTRF_SEQUENTIAL_MAX {
        return faer_potrf(a);
    }
    // The tiles are a copy: where memory is short, the in-place sequential
    // kernel still gives the caller the factor.
    let bytes = (n as u128) * (n as u128) * 8;
    if herd::limits::check_memory("dpotrf's tiled copy", bytes).is_err() {
        return faer_potrf(a);
    }
    let nb = tile_size(n);
    let tiled = Arc::new(TiledMatrix::from_faer(a.as_ref(), nb).unwrap_or_else(|e| ffi::checked_twice(e)));
    let result = potrf_flow(&tiled, Backend::Faer, Discipline::DependencyCounted, false);
    // Written back whether or not a pivot failed: LAPACK leaves the factored
    // columns in place.
    for j in 0..tiled.nt() {
        for i in j..tiled.mt() {
            let t = tiled.tile(i, j);
            a.as_mut().submatrix_mut(i * nb, j * nb, t.rows(), t.cols()).copy_from(t.as_faer());
        }
    }
    match result {
        Ok(_) => Ok(()),
        Err(LaError::NotPositiveDefinite { column }) => Err(column),
        Err(e) => ffi::checked_twice(e),
    }
}

/// Tiles of 256 (herd la potrf's measured best at n = 2000–8000) where the
/// matrix has enough of them to keep many participants busy, smaller ones
/// below.
fn tile_size(n: usize) -> usize {
    match n {
        0..=767 => 64,
        768..=2047 => 128,
        _ => 256,
    }
}
