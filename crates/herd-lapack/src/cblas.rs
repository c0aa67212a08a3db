//! CBLAS entry points (`cblas.h`: arguments by value, a layout argument).
//! A row-major matrix is the column-major transpose, so a row-major call is
//! the column-major call on the transposed problem.

use crate::blas::dgemm_;
use crate::ffi::{xerbla, BadArg, Int};
use std::ffi::c_char;

/// `CBLAS_LAYOUT`: `CblasRowMajor`.
pub const ROW_MAJOR: Int = 101;
/// `CBLAS_LAYOUT`: `CblasColMajor`.
pub const COL_MAJOR: Int = 102;

/// A `CBLAS_TRANSPOSE` (`CblasNoTrans` 111, `CblasTrans` 112,
/// `CblasConjTrans` 113) as BLAS's character.
fn trans_char(t: Int) -> c_char {
    match t {
        111 => b'N' as c_char,
        112 | 113 => b'T' as c_char,
        _ => b'?' as c_char,
    }
}

/// `cblas_dgemm`: `C ← α·op(A)·op(B) + β·C` on herd. Row-major calls compute
/// `Cᵀ ← α·op(B)ᵀ·op(A)ᵀ + β·Cᵀ` column-major. A bad layout is reported as
/// argument 1; other bad arguments by `dgemm_`'s checks, with BLAS's
/// positions (of the transposed problem for a row-major call).
///
/// # Safety
/// `cblas.h`'s contract: every pointer valid for the shapes its dimensions
/// give; `c` not overlapping `a` or `b`.
#[no_mangle]
pub unsafe extern "C" fn cblas_dgemm(
    layout: Int,
    transa: Int,
    transb: Int,
    m: Int,
    n: Int,
    k: Int,
    alpha: f64,
    a: *const f64,
    lda: Int,
    b: *const f64,
    ldb: Int,
    beta: f64,
    c: *mut f64,
    ldc: Int,
) {
    let (ta, tb) = (trans_char(transa), trans_char(transb));
    // SAFETY: every pointer is forwarded with the caller's contract; the
    // scalars are locals.
    unsafe {
        match layout {
            COL_MAJOR => dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc),
            ROW_MAJOR => dgemm_(&tb, &ta, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc),
            _ => xerbla("cblas_dgemm", BadArg(1)),
        }
    }
}
