//! `dpotrf_`: Cholesky factorization.

use crate::ffi::{self, dim, guard, lead, mat_mut, uplo, Int, Routine, Uplo};
use faer::MatMut;
use herd_flow::Discipline;
use herd_la::kernels::{faer_potrf, HERD_TILE_MIN_SIDE};
use herd_la::{potrf_flow_in_place, LaError};
use std::ffi::c_char;

/// Orders up to this are factored by one sequential kernel in place: a graph
/// of tiles costs more than it gains below it.
const POTRF_SEQUENTIAL_MAX: usize = 128;

/// LAPACK `DPOTRF`: the Cholesky factor of a symmetric positive definite
/// matrix, `A = L·Lᵀ` (`UPLO = 'L'`) or `A = Uᵀ·U` (`'U'`), in place, as a
/// herd-flow graph of tiles of the caller's matrix
/// (`herd_la::potrf_flow_in_place`, no copy) on herd's pool. Only the
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

/// The first row of `a`'s lower triangle holding a NaN or an infinity: the
/// pivot of that column is the first such a value reaches (`L(r, c)` for
/// `c < r` feeds only rows and pivots from `r` on). A column-wise scan (the
/// triangle's columns are contiguous), for the rare factorization that meets
/// one.
pub(crate) fn first_bad_row(a: faer::MatRef<'_, f64>) -> Option<usize> {
    (0..a.ncols()).filter_map(|j| (j..a.nrows()).find(|&i| !a[(i, j)].is_finite())).min()
}

/// The lower factorization; `Err(j)`: the pivot of column `j` (0-based) is
/// not positive or not finite.
fn potrf_lower(a: MatMut<'_, f64>) -> Result<(), usize> {
    let n = a.nrows();
    // faer's kernel stops at the first pivot that is not positive or not
    // finite, which is LAPACK's answer for NaN and infinities too.
    if n <= POTRF_SEQUENTIAL_MAX {
        return faer_potrf(a);
    }
    // The dataflow graph on tile views of the caller's matrix: no copy. A
    // NaN or an infinity makes the first pivot it reaches fail, as in LAPACK.
    match potrf_flow_in_place(a, tile_size(n, herd::current_num_threads()), Discipline::DependencyCounted) {
        Ok(_) => Ok(()),
        Err(LaError::NotPositiveDefinite { column }) => Err(column),
        Err(e) => ffi::checked_twice(e),
    }
}

/// The tile side for an order-`n` factorization on the current pool: 320
/// — wide enough for herd's packed GEMM and SYRK kernels
/// ([`HERD_TILE_MIN_SIDE`]) — where the matrix has enough such tiles to keep
/// the participants busy, else 256 (`herd la potrf`'s best with faer's
/// kernels at n = 2000–8000 on 2 and 16 cores), smaller ones below.
///
/// "Enough": the graph of `nt × nt` tiles does about `nt³/6` GEMM-sized
/// tile operations on a critical path of about `3·nt` (POTRF, TRSM, SYRK
/// per panel), so about `nt²/18` can run at once on average; 320 is taken
/// when that is at least two per participant (`nt ≥ 6·√P`: n ≥ 2,716 on 2
/// participants, 7,680 on 16).
fn tile_size(n: usize, participants: usize) -> usize {
    let wide = HERD_TILE_MIN_SIDE;
    // (n / wide)² ≥ 36·P, in integers.
    if n.saturating_mul(n) >= 36 * participants.max(1) * wide * wide {
        return wide;
    }
    match n {
        0..=767 => 64,
        768..=2047 => 128,
        _ => 256,
    }
}

#[cfg(test)]
mod tests {
    use super::tile_size;

    /// Tiles of 320 (herd's packed kernels) only with at least two tile
    /// operations runnable per participant on average; 256 and smaller
    /// otherwise, as before.
    #[test]
    fn wide_tiles_only_with_enough_of_them() {
        assert_eq!(tile_size(4000, 2), 320);
        assert_eq!(tile_size(2720, 2), 320);
        assert_eq!(tile_size(2700, 2), 256);
        assert_eq!(tile_size(4000, 16), 256);
        assert_eq!(tile_size(7680, 16), 320);
        assert_eq!(tile_size(7679, 16), 256);
        assert_eq!(tile_size(20000, 128), 256);
        assert_eq!(tile_size(1000, 1), 128);
        assert_eq!(tile_size(500, 0), 64);
    }
}
