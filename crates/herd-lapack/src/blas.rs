//! BLAS entry points (Fortran calling convention: every argument by
//! reference; hidden CHARACTER lengths, if passed, are not read).

use crate::ffi::{self, dim, flag, guard, lead, mat_mut, mat_ref, read, trans, uplo, BadArg, Int, Routine};
use herd_la::{gemm, syrk, trsm, Diag, Op, Side};
use std::ffi::c_char;

/// BLAS `DGEMM`: `C ← α·op(A)·op(B) + β·C` on herd (`herd_la::gemm`).
/// Arguments are checked as the reference BLAS checks them (`xerbla_` with
/// the position of the first bad one; nothing is touched then).
///
/// # Safety
/// LAPACK's contract: every pointer valid for the shapes its dimensions give;
/// `c` not overlapping `a` or `b`.
#[no_mangle]
pub unsafe extern "C" fn dgemm_(
    transa: *const c_char,
    transb: *const c_char,
    m: *const Int,
    n: *const Int,
    k: *const Int,
    alpha: *const f64,
    a: *const f64,
    lda: *const Int,
    b: *const f64,
    ldb: *const Int,
    beta: *const f64,
    c: *mut f64,
    ldc: *const Int,
) {
    guard("DGEMM ", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let (ta, tb) = (trans(transa, 1)?, trans(transb, 2)?);
            let (m, n, k) = (dim(m, 3)?, dim(n, 4)?, dim(k, 5)?);
            let alpha = read(alpha).ok_or(BadArg(6))?;
            let (ar, ac) = if ta == Op::NoTrans { (m, k) } else { (k, m) };
            let (br, bc) = if tb == Op::NoTrans { (k, n) } else { (n, k) };
            let lda = lead(lda, ar, 8)?;
            let ldb = lead(ldb, br, 10)?;
            let beta = read(beta).ok_or(BadArg(11))?;
            let ldc = lead(ldc, m, 13)?;
            ffi::count(Routine::Gemm);
            if m == 0 || n == 0 || ((alpha == 0.0 || k == 0) && beta == 1.0) {
                return Ok(0);
            }
            let (a, b) = (mat_ref(a, ar, ac, lda), mat_ref(b, br, bc, ldb));
            gemm(ta, tb, alpha, a, b, beta, mat_mut(c, m, n, ldc)).unwrap_or_else(|e| ffi::checked_twice(e));
        }
        Ok(0)
    });
}

/// BLAS `DTRSM`: `B ← α·op(A)⁻¹·B` (`SIDE = 'L'`) or `α·B·op(A)⁻¹` (`'R'`),
/// `A` triangular (`UPLO`, `DIAG`), on herd (`herd_la::trsm`). Arguments
/// checked as the reference BLAS (`SIDE` 1, `UPLO` 2, `TRANSA` 3, `DIAG` 4,
/// `M` 5, `N` 6, `LDA` 9, `LDB` 11).
///
/// # Safety
/// BLAS's contract: `a` is `LDA × K` (`K = M` left, `N` right), `b` is
/// `LDB × N`, not overlapping.
#[no_mangle]
pub unsafe extern "C" fn dtrsm_(
    side: *const c_char,
    uplo_: *const c_char,
    transa: *const c_char,
    diag: *const c_char,
    m: *const Int,
    n: *const Int,
    alpha: *const f64,
    a: *const f64,
    lda: *const Int,
    b: *mut f64,
    ldb: *const Int,
) {
    guard("DTRSM ", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let side = match flag(side) {
                Some(b'L') => Side::Left,
                Some(b'R') => Side::Right,
                _ => return Err(BadArg(1)),
            };
            let ul = uplo(uplo_, 2)?;
            let op = trans(transa, 3)?;
            let diag = match flag(diag) {
                Some(b'U') => Diag::Unit,
                Some(b'N') => Diag::NonUnit,
                _ => return Err(BadArg(4)),
            };
            let (m, n) = (dim(m, 5)?, dim(n, 6)?);
            let alpha = read(alpha).ok_or(BadArg(7))?;
            let k = if side == Side::Left { m } else { n };
            let lda = lead(lda, k, 9)?;
            let ldb = lead(ldb, m, 11)?;
            ffi::count(Routine::Trsm);
            if m == 0 || n == 0 {
                return Ok(0);
            }
            trsm(side, ul, op, diag, alpha, mat_ref(a, k, k, lda), mat_mut(b, m, n, ldb))
                .unwrap_or_else(|e| ffi::checked_twice(e));
        }
        Ok(0)
    });
}

/// BLAS `DSYRK`: `C ← α·A·Aᵀ + β·C` (`TRANS = 'N'`) or `α·Aᵀ·A + β·C`
/// (`'T'`, `'C'`), only `C`'s `UPLO` triangle written, on herd
/// (`herd_la::syrk`). Arguments checked as the reference BLAS (`UPLO` 1,
/// `TRANS` 2, `N` 3, `K` 4, `LDA` 7, `LDC` 10).
///
/// # Safety
/// BLAS's contract: `a` is `LDA × K` (`N`) or `LDA × N` (`T`), `c` is
/// `LDC × N`, not overlapping.
#[no_mangle]
pub unsafe extern "C" fn dsyrk_(
    uplo_: *const c_char,
    trans_: *const c_char,
    n: *const Int,
    k: *const Int,
    alpha: *const f64,
    a: *const f64,
    lda: *const Int,
    beta: *const f64,
    c: *mut f64,
    ldc: *const Int,
) {
    guard("DSYRK ", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let ul = uplo(uplo_, 1)?;
            let op = trans(trans_, 2)?;
            let (n, k) = (dim(n, 3)?, dim(k, 4)?);
            let alpha = read(alpha).ok_or(BadArg(5))?;
            let (ar, ac) = if op == Op::NoTrans { (n, k) } else { (k, n) };
            let lda = lead(lda, ar, 7)?;
            let beta = read(beta).ok_or(BadArg(8))?;
            let ldc = lead(ldc, n, 10)?;
            ffi::count(Routine::Syrk);
            if n == 0 || ((alpha == 0.0 || k == 0) && beta == 1.0) {
                return Ok(0);
            }
            syrk(ul, op, alpha, mat_ref(a, ar, ac, lda), beta, mat_mut(c, n, n, ldc))
                .unwrap_or_else(|e| ffi::checked_twice(e));
        }
        Ok(0)
    });
}
