//! BLAS entry points (Fortran calling convention: every argument by
//! reference; hidden CHARACTER lengths, if passed, are not read).

use crate::ffi::{self, dim, guard, lead, mat_mut, mat_ref, read, trans, BadArg, Int, Routine};
use herd_la::{gemm, Op};
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
