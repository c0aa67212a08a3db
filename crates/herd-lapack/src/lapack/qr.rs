//! `dgeqrf_`, `dorgqr_`, `dormqr_`: Householder QR in LAPACK's representation
//! (herd-la's `geqrf`, `orgqr`, `ormqr`), arguments checked in LAPACK's order.

use crate::ffi::{self, dim, flag, guard, lead, mat_mut, mat_ref, workspace, BadArg, Int, Routine};
use herd_la::{geqrf, orgqr, ormqr, Op, Side};
use std::ffi::c_char;

/// `TAU`'s `k` entries as a slice (none read when `k = 0`).
///
/// # Safety
/// `tau` points to `k` `f64`s when `k > 0`.
unsafe fn tau_slice<'a>(tau: *const f64, k: usize) -> &'a [f64] {
    if k == 0 || tau.is_null() {
        return &[];
    }
    // SAFETY: `k` readable values by the caller's contract.
    unsafe { std::slice::from_raw_parts(tau, k) }
}

/// LAPACK `DGEQRF`: `A = Q·R` (`R` on and above the diagonal, the Householder
/// vectors below, `TAU(min(M, N))`), on herd.
///
/// `INFO = −i` for a bad argument (`M` 1, `N` 2, `LDA` 4, `LWORK < max(1, N)` 7);
/// `LWORK = −1` is a workspace query (`WORK(1) = N`: herd needs no workspace).
///
/// # Safety
/// LAPACK's contract: `a` is `LDA × N`, `tau` holds `min(M, N)`, `work` one
/// `f64` at least.
#[no_mangle]
pub unsafe extern "C" fn dgeqrf_(
    m: *const Int,
    n: *const Int,
    a: *mut f64,
    lda: *const Int,
    tau: *mut f64,
    work: *mut f64,
    lwork: *const Int,
    info: *mut Int,
) {
    let result = guard("DGEQRF", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let (m, n) = (dim(m, 1)?, dim(n, 2)?);
            let lda = lead(lda, m, 4)?;
            if workspace(work, lwork, n, 7)? {
                return Ok(0);
            }
            ffi::count(Routine::Geqrf);
            let k = m.min(n);
            if tau.is_null() && k > 0 {
                return Err(BadArg(5));
            }
            let tau = if k == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(tau, k) };
            geqrf(mat_mut(a, m, n, lda), tau).unwrap_or_else(|e| ffi::checked_twice(e));
        }
        Ok(0)
    });
    // SAFETY: the caller's contract.
    unsafe { ffi::set_info(info, result) };
}

/// LAPACK `DORGQR`: overwrites the `M × N` matrix holding `K` reflectors (as
/// `DGEQRF` leaves them) with the first `N` columns of `Q`, on herd.
///
/// `INFO = −i`: `M` 1, `N` (`< 0` or `> M`) 2, `K` (`< 0` or `> N`) 3, `LDA` 5,
/// `LWORK < max(1, N)` 8; `LWORK = −1` is a workspace query.
///
/// # Safety
/// LAPACK's contract: `a` is `LDA × N`, `tau` holds `K`.
#[no_mangle]
pub unsafe extern "C" fn dorgqr_(
    m: *const Int,
    n: *const Int,
    k: *const Int,
    a: *mut f64,
    lda: *const Int,
    tau: *const f64,
    work: *mut f64,
    lwork: *const Int,
    info: *mut Int,
) {
    let result = guard("DORGQR", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let m = dim(m, 1)?;
            let n = dim(n, 2).ok().filter(|&n| n <= m).ok_or(BadArg(2))?;
            let k = dim(k, 3).ok().filter(|&k| k <= n).ok_or(BadArg(3))?;
            let lda = lead(lda, m, 5)?;
            if workspace(work, lwork, n, 8)? {
                return Ok(0);
            }
            ffi::count(Routine::Orgqr);
            orgqr(mat_mut(a, m, n, lda), tau_slice(tau, k)).unwrap_or_else(|e| ffi::checked_twice(e));
        }
        Ok(0)
    });
    // SAFETY: the caller's contract.
    unsafe { ffi::set_info(info, result) };
}

/// LAPACK `DORMQR`: `C ← op(Q)·C` (`SIDE = 'L'`) or `C·op(Q)` (`'R'`),
/// `op` = `'N'` or `'T'`, with `Q` from `DGEQRF`'s `K` reflectors, on herd.
///
/// `INFO = −i`: `SIDE` 1, `TRANS` 2, `M` 3, `N` 4, `K` (`< 0` or more than the
/// order of `Q`) 5, `LDA` 7, `LDC` 10, `LWORK < max(1, N or M)` 12;
/// `LWORK = −1` is a workspace query.
///
/// # Safety
/// LAPACK's contract: `a` is `LDA × K`, `tau` holds `K`, `c` is `LDC × N`.
#[no_mangle]
pub unsafe extern "C" fn dormqr_(
    side: *const c_char,
    trans: *const c_char,
    m: *const Int,
    n: *const Int,
    k: *const Int,
    a: *const f64,
    lda: *const Int,
    tau: *const f64,
    c: *mut f64,
    ldc: *const Int,
    work: *mut f64,
    lwork: *const Int,
    info: *mut Int,
) {
    let result = guard("DORMQR", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let side = match flag(side) {
                Some(b'L') => Side::Left,
                Some(b'R') => Side::Right,
                _ => return Err(BadArg(1)),
            };
            let trans = match flag(trans) {
                Some(b'N') => Op::NoTrans,
                Some(b'T') => Op::Trans,
                _ => return Err(BadArg(2)),
            };
            let (m, n) = (dim(m, 3)?, dim(n, 4)?);
            // Q is nq × nq; the other dimension of C is nw.
            let (nq, nw) = if side == Side::Left { (m, n) } else { (n, m) };
            let k = dim(k, 5).ok().filter(|&k| k <= nq).ok_or(BadArg(5))?;
            let lda = lead(lda, nq, 7)?;
            let ldc = lead(ldc, m, 10)?;
            if workspace(work, lwork, nw, 12)? {
                return Ok(0);
            }
            ffi::count(Routine::Ormqr);
            if m == 0 || n == 0 || k == 0 {
                return Ok(0);
            }
            ormqr(side, trans, mat_ref(a, nq, k, lda), tau_slice(tau, k), mat_mut(c, m, n, ldc))
                .unwrap_or_else(|e| ffi::checked_twice(e));
        }
        Ok(0)
    });
    // SAFETY: the caller's contract.
    unsafe { ffi::set_info(info, result) };
}
