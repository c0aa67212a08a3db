//! CBLAS entry points (`cblas.h`: arguments by value, a layout argument).
//! A row-major matrix is the column-major transpose, so a row-major call is
//! the column-major call on the transposed problem.

use crate::blas::{dgemm_, dsyrk_, dtrsm_};
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

/// A CBLAS enum value as BLAS's character, `'?'` (rejected by the BLAS
/// entry point) for anything else.
fn enum_char(v: Int, table: &[(Int, u8)]) -> c_char {
    table.iter().find(|(k, _)| *k == v).map_or(b'?', |(_, c)| *c) as c_char
}

/// `CblasUpper`/`CblasLower` (flipped for a row-major call, whose stored
/// triangle is the other one of the column-major view).
fn uplo_char(u: Int, flip: bool) -> c_char {
    let table = if flip { [(121, b'L'), (122, b'U')] } else { [(121, b'U'), (122, b'L')] };
    enum_char(u, &table)
}

/// `cblas_dtrsm`: `B ← α·op(A)⁻¹·B` or `α·B·op(A)⁻¹` on herd. Row-major calls
/// solve the transposed problem column-major (the other side, the other
/// triangle, `M` and `N` exchanged).
///
/// # Safety
/// `cblas.h`'s contract: `a` and `b` valid for their shapes.
#[no_mangle]
pub unsafe extern "C" fn cblas_dtrsm(
    layout: Int,
    side: Int,
    uplo: Int,
    transa: Int,
    diag: Int,
    m: Int,
    n: Int,
    alpha: f64,
    a: *const f64,
    lda: Int,
    b: *mut f64,
    ldb: Int,
) {
    let row = match layout {
        COL_MAJOR => false,
        ROW_MAJOR => true,
        _ => return xerbla("cblas_dtrsm", BadArg(1)),
    };
    let sides = if row { [(141, b'R'), (142, b'L')] } else { [(141, b'L'), (142, b'R')] };
    let (s, u, t, d) = (
        enum_char(side, &sides),
        uplo_char(uplo, row),
        trans_char(transa),
        enum_char(diag, &[(131, b'N'), (132, b'U')]),
    );
    let (m, n) = if row { (n, m) } else { (m, n) };
    // SAFETY: the caller's pointers forwarded; the scalars are locals.
    unsafe { dtrsm_(&s, &u, &t, &d, &m, &n, &alpha, a, &lda, b, &ldb) }
}

/// `cblas_dsyrk`: `C ← α·A·Aᵀ + β·C` or `α·Aᵀ·A + β·C` on herd, only `uplo`'s
/// triangle written. Row-major calls are the column-major call with the
/// other triangle and the other transpose.
///
/// # Safety
/// `cblas.h`'s contract: `a` and `c` valid for their shapes.
#[no_mangle]
pub unsafe extern "C" fn cblas_dsyrk(
    layout: Int,
    uplo: Int,
    trans: Int,
    n: Int,
    k: Int,
    alpha: f64,
    a: *const f64,
    lda: Int,
    beta: f64,
    c: *mut f64,
    ldc: Int,
) {
    let row = match layout {
        COL_MAJOR => false,
        ROW_MAJOR => true,
        _ => return xerbla("cblas_dsyrk", BadArg(1)),
    };
    let t = match (trans_char(trans) as u8, row) {
        (b'N', true) => b'T' as c_char,
        (b'T', true) => b'N' as c_char,
        (c, _) => c as c_char,
    };
    let u = uplo_char(uplo, row);
    // SAFETY: the caller's pointers forwarded; the scalars are locals.
    unsafe { dsyrk_(&u, &t, &n, &k, &alpha, a, &lda, &beta, c, &ldc) }
}
