//! LAPACKE entry points (`lapacke.h`: arguments by value, a layout argument,
//! `INFO` returned). A row-major matrix is the column-major transpose, so
//! for a symmetric routine `'L'` row-major is `'U'` column-major on the same
//! memory, with no copy.

use crate::ffi::{self, guard, mat_mut, BadArg, Int, Routine, Uplo};
use crate::lapack::potrf;
use std::ffi::c_char;

/// `LAPACK_ROW_MAJOR`.
pub const ROW_MAJOR: Int = 101;
/// `LAPACK_COL_MAJOR`.
pub const COL_MAJOR: Int = 102;

/// LAPACKE's NaN check of input matrices, on unless `LAPACKE_NANCHECK=0`
/// (as the reference LAPACKE reads it, once).
fn nancheck() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("LAPACKE_NANCHECK").map_or(true, |v| v.trim() != "0"))
}

/// The layout: `Ok(true)` for row-major.
fn row_major(layout: Int) -> Result<bool, BadArg> {
    match layout {
        ROW_MAJOR => Ok(true),
        COL_MAJOR => Ok(false),
        _ => Err(BadArg(1)),
    }
}

/// `UPLO` as a `char` by value.
fn uplo(c: c_char, arg: Int) -> Result<Uplo, BadArg> {
    match (c as u8).to_ascii_uppercase() {
        b'L' => Ok(Uplo::Lower),
        b'U' => Ok(Uplo::Upper),
        _ => Err(BadArg(arg)),
    }
}

/// `LAPACKE_dpotrf`: as [`LAPACKE_dpotrf_work`], after LAPACKE's NaN check of
/// the `uplo` triangle (−4, the position of `a`, when it holds a NaN).
///
/// # Safety
/// `lapacke.h`'s contract: `a` points to an `n × n` matrix with leading
/// dimension `lda` in `matrix_layout`.
#[no_mangle]
pub unsafe extern "C" fn LAPACKE_dpotrf(
    matrix_layout: Int,
    uplo_: c_char,
    n: Int,
    a: *mut f64,
    lda: Int,
) -> Int {
    if let (true, Ok(_), Ok(ul), Ok(n), Ok(lda)) =
        (nancheck(), row_major(matrix_layout), uplo(uplo_, 2), usize::try_from(n), usize::try_from(lda))
    {
        if lda >= n.max(1) && !a.is_null() {
            let lower_in_memory = (ul == Uplo::Lower) != (matrix_layout == ROW_MAJOR);
            // SAFETY: `a` holds n columns of `lda ≥ n` (caller's contract),
            // read only here.
            let m = unsafe { ffi::mat_ref(a, n, n, lda) };
            let has_nan = (0..n).any(|j| {
                let (lo, hi) = if lower_in_memory { (j, n) } else { (0, j + 1) };
                (lo..hi).any(|i| m[(i, j)].is_nan())
            });
            if has_nan {
                return -4;
            }
        }
    }
    // SAFETY: forwarded.
    unsafe { LAPACKE_dpotrf_work(matrix_layout, uplo_, n, a, lda) }
}

/// `LAPACKE_dpotrf_work`: `dpotrf_` in either layout; LAPACKE's numbering of
/// arguments (`matrix_layout` 1, `uplo` 2, `n` 3, `a` 4, `lda` 5) in the
/// returned `−i`.
///
/// # Safety
/// As [`LAPACKE_dpotrf`].
#[no_mangle]
pub unsafe extern "C" fn LAPACKE_dpotrf_work(
    matrix_layout: Int,
    uplo_: c_char,
    n: Int,
    a: *mut f64,
    lda: Int,
) -> Int {
    guard("LAPACKE_dpotrf_work", || {
        let row = row_major(matrix_layout)?;
        let ul = uplo(uplo_, 2)?;
        let n = usize::try_from(n).map_err(|_| BadArg(3))?;
        let lda = usize::try_from(lda).ok().filter(|&l| l >= n.max(1)).ok_or(BadArg(5))?;
        ffi::count(Routine::Potrf);
        let ul = match (row, ul) {
            (false, u) => u,
            (true, Uplo::Lower) => Uplo::Upper,
            (true, Uplo::Upper) => Uplo::Lower,
        };
        // SAFETY: the caller's contract for `a` with the checked `n`, `lda`.
        Ok(potrf(ul, unsafe { mat_mut(a, n, n, lda) }))
    })
}
