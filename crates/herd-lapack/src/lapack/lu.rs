//! `dgetrf_`, `dgetrs_`, `dgesv_`: LU with partial pivoting and the solves
//! with its factors (herd-la's `getrf`, `getrs`), LAPACK's 1-based `IPIV`.

use crate::ffi::{self, dim, guard, lead, mat_mut, mat_ref, trans, BadArg, Int, Routine};
use faer::MatMut;
use herd_la::{getrf, getrs, LaError, Op};

/// Factors `a` in place; LAPACK's `INFO` (0, or `j + 1` for the first exactly
/// zero pivot `U(j, j)`) and the 0-based pivots, which are also written,
/// 1-based, to `ipiv`.
///
/// # Safety
/// `ipiv` points to `min(m, n)` writable `Int`s (unless that is 0).
pub(crate) unsafe fn getrf_into(
    a: MatMut<'_, f64>,
    ipiv: *mut Int,
    ipiv_arg: Int,
) -> Result<(Int, Vec<usize>), BadArg> {
    let k = a.nrows().min(a.ncols());
    if k > 0 && ipiv.is_null() {
        return Err(BadArg(ipiv_arg));
    }
    let mut piv = vec![0usize; k];
    let info = getrf(a, &mut piv).unwrap_or_else(|e| ffi::checked_twice(e));
    for (i, p) in piv.iter().enumerate() {
        // SAFETY: `k` writable entries by the caller's contract; pivots are
        // below min(m, n) ≤ i32::MAX (the dimensions came in as Ints).
        unsafe { ipiv.add(i).write_unaligned(*p as Int + 1) };
    }
    Ok((info.map_or(0, |j| j as Int + 1), piv))
}

/// LAPACK's 1-based pivots made 0-based; an entry outside `i + 1 ..= n`
/// (which `DGETRF` never produces) is argument `arg`'s error.
///
/// # Safety
/// `ipiv` points to `n` readable `Int`s (unless `n` is 0).
pub(crate) unsafe fn pivots(ipiv: *const Int, n: usize, arg: Int) -> Result<Vec<usize>, BadArg> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if ipiv.is_null() {
        return Err(BadArg(arg));
    }
    (0..n)
        .map(|i| {
            // SAFETY: `n` readable entries by the caller's contract.
            let p = unsafe { ipiv.add(i).read_unaligned() };
            usize::try_from(p).ok().filter(|&p| p > i && p <= n).map(|p| p - 1).ok_or(BadArg(arg))
        })
        .collect()
}

/// Solves with checked factors: herd-la's errors cannot occur for arguments
/// checked here, except an `ipiv` it finds inconsistent.
pub(crate) fn solve(
    op: Op,
    lu: faer::MatRef<'_, f64>,
    piv: &[usize],
    b: MatMut<'_, f64>,
    ipiv_arg: Int,
) -> Result<(), BadArg> {
    match getrs(op, lu, piv, b) {
        Ok(()) => Ok(()),
        Err(LaError::InvalidArgument { argument: "ipiv", .. }) => Err(BadArg(ipiv_arg)),
        Err(e) => ffi::checked_twice(e),
    }
}

/// LAPACK `DGETRF`: `A = P·L·U` in place (`L` unit lower, `U` upper), any
/// `M × N`, on herd; `IPIV(i)`: row `i` was interchanged with row `IPIV(i)`.
///
/// `INFO`: 0; `−i` for a bad argument (`M` 1, `N` 2, `LDA` 4); `i > 0` when
/// `U(i, i)` is exactly zero (the factorization is completed).
///
/// # Safety
/// LAPACK's contract: `a` is `LDA × N`, `ipiv` holds `min(M, N)`.
#[no_mangle]
pub unsafe extern "C" fn dgetrf_(
    m: *const Int,
    n: *const Int,
    a: *mut f64,
    lda: *const Int,
    ipiv: *mut Int,
    info: *mut Int,
) {
    let result = guard("DGETRF", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let (m, n) = (dim(m, 1)?, dim(n, 2)?);
            let lda = lead(lda, m, 4)?;
            ffi::count(Routine::Getrf);
            Ok(getrf_into(mat_mut(a, m, n, lda), ipiv, 5)?.0)
        }
    });
    // SAFETY: the caller's contract.
    unsafe { ffi::set_info(info, result) };
}

/// LAPACK `DGETRS`: solves `op(A)·X = B` (`TRANS` `'N'`, `'T'`, `'C'`) with
/// `DGETRF`'s factors and pivots, on herd.
///
/// `INFO = −i`: `TRANS` 1, `N` 2, `NRHS` 3, `LDA` 5, `IPIV` 6 (an entry
/// `DGETRF` could not have produced), `LDB` 8.
///
/// # Safety
/// LAPACK's contract: `a` is `LDA × N`, `ipiv` holds `N`, `b` is `LDB × NRHS`.
#[no_mangle]
pub unsafe extern "C" fn dgetrs_(
    trans_: *const std::ffi::c_char,
    n: *const Int,
    nrhs: *const Int,
    a: *const f64,
    lda: *const Int,
    ipiv: *const Int,
    b: *mut f64,
    ldb: *const Int,
    info: *mut Int,
) {
    let result = guard("DGETRS", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let op = trans(trans_, 1)?;
            let (n, nrhs) = (dim(n, 2)?, dim(nrhs, 3)?);
            let lda = lead(lda, n, 5)?;
            let ldb = lead(ldb, n, 8)?;
            let piv = pivots(ipiv, n, 6)?;
            ffi::count(Routine::Getrs);
            if n == 0 || nrhs == 0 {
                return Ok(0);
            }
            solve(op, mat_ref(a, n, n, lda), &piv, mat_mut(b, n, nrhs, ldb), 6)?;
        }
        Ok(0)
    });
    // SAFETY: the caller's contract.
    unsafe { ffi::set_info(info, result) };
}

/// LAPACK `DGESV`: solves `A·X = B` by `DGETRF` and `DGETRS` on herd; `A` is
/// left factored, `IPIV` holds the pivots.
///
/// `INFO`: 0; `−i` for a bad argument (`N` 1, `NRHS` 2, `LDA` 4, `LDB` 7);
/// `i > 0` when `U(i, i)` is exactly zero: `A` is factored, `B` not solved.
///
/// # Safety
/// LAPACK's contract: `a` is `LDA × N`, `ipiv` holds `N`, `b` is `LDB × NRHS`.
#[no_mangle]
pub unsafe extern "C" fn dgesv_(
    n: *const Int,
    nrhs: *const Int,
    a: *mut f64,
    lda: *const Int,
    ipiv: *mut Int,
    b: *mut f64,
    ldb: *const Int,
    info: *mut Int,
) {
    let result = guard("DGESV ", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let (n, nrhs) = (dim(n, 1)?, dim(nrhs, 2)?);
            let lda = lead(lda, n, 4)?;
            let ldb = lead(ldb, n, 7)?;
            ffi::count(Routine::Gesv);
            let mut lu = mat_mut(a, n, n, lda);
            let (info, piv) = getrf_into(lu.as_mut(), ipiv, 5)?;
            if info != 0 || nrhs == 0 || n == 0 {
                return Ok(info);
            }
            solve(Op::NoTrans, lu.as_ref(), &piv, mat_mut(b, n, nrhs, ldb), 5)?;
            Ok(0)
        }
    });
    // SAFETY: the caller's contract.
    unsafe { ffi::set_info(info, result) };
}
