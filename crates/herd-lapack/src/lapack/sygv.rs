//! `dsygv_`, `dsygvd_`: the generalized symmetric-definite eigenproblem
//! (herd-la's `sygv_with`, and `sygv_values_with` for `JOBZ = 'N'`). herd
//! implements `ITYPE = 1` (`A·x = λ·B·x`);
//! `ITYPE = 2, 3` are handed to the system LAPACK (`ffi::system_symbol`).

use crate::ffi::{self, dim, flag, guard, lead, mat_mut, read, uplo, BadArg, Int, Routine};
use faer::MatMut;
use herd_la::sygv::{default_tile, sygv_values_with, sygv_with};
use herd_la::{LaError, Uplo};
use std::ffi::c_char;

/// `dsygv_`'s signature (gfortran's hidden lengths of `JOBZ` and `UPLO` last).
type Dsygv = unsafe extern "C" fn(
    *const Int,
    *const c_char,
    *const c_char,
    *const Int,
    *mut f64,
    *const Int,
    *mut f64,
    *const Int,
    *mut f64,
    *mut f64,
    *const Int,
    *mut Int,
    usize,
    usize,
);

/// `dsygvd_`'s signature.
type Dsygvd = unsafe extern "C" fn(
    *const Int,
    *const c_char,
    *const c_char,
    *const Int,
    *mut f64,
    *const Int,
    *mut f64,
    *const Int,
    *mut f64,
    *mut f64,
    *const Int,
    *mut Int,
    *const Int,
    *mut Int,
    usize,
    usize,
);

/// Solves `A·x = λ·B·x` on the `uplo` triangles: eigenvalues ascending in
/// `w`, with `vectors` the eigenvectors (`Zᵀ·B·Z = I`) in `a` (without,
/// `a` is destroyed and no eigenvector is computed: herd-la's
/// `sygv_values_with`), `B`'s Cholesky factor in `b`.
/// LAPACK's `INFO`: 0; `n + i` when the leading minor of order `i` of `B` is
/// not positive definite (a NaN or infinity in `B` at row `r` of the
/// triangle: `i = r + 1`, the pivot it reaches first); `1` for a NaN or
/// infinity in `A` (LAPACK's eigensolver would not converge).
pub(crate) fn sygv_info(
    ul: Uplo,
    vectors: bool,
    a: MatMut<'_, f64>,
    b: MatMut<'_, f64>,
    w: &mut [f64],
) -> Int {
    let n = a.nrows();
    let lower_b = if ul == Uplo::Lower { b.as_ref() } else { b.as_ref().transpose() };
    if let Some(r) = crate::lapack::first_bad_row(lower_b) {
        // B's factorization stops at row r at the latest; an earlier
        // failing minor is found by factoring the finite leading block.
        let lead = faer::Mat::from_fn(r, r, |i, j| lower_b[(i, j)]);
        let mut lead = lead;
        let first = crate::lapack::potrf(Uplo::Lower, lead.as_mut());
        let i = if first > 0 { first } else { r as Int + 1 };
        return n as Int + i;
    }
    let solve = if vectors { sygv_with } else { sygv_values_with };
    match solve(ul, a, b, w, default_tile(n)) {
        Ok(()) => 0,
        Err(LaError::NotPositiveDefinite { column }) => (n + column + 1) as Int,
        Err(LaError::NonFinite { .. }) => 1,
        Err(e) => ffi::checked_twice(e),
    }
}

/// The arguments `dsygv_` and `dsygvd_` share, checked in LAPACK's order:
/// `(itype, jobz is 'V', uplo, n, lda, ldb)`.
///
/// # Safety
/// The caller's LAPACK contract for these pointers.
unsafe fn common(
    itype: *const Int,
    jobz: *const c_char,
    uplo_: *const c_char,
    n: *const Int,
    lda: *const Int,
    ldb: *const Int,
) -> Result<(Int, bool, Uplo, usize, usize, usize), BadArg> {
    // SAFETY: forwarded.
    unsafe {
        let itype = read(itype).filter(|t| (1..=3).contains(t)).ok_or(BadArg(1))?;
        let vectors = match flag(jobz) {
            Some(b'V') => true,
            Some(b'N') => false,
            _ => return Err(BadArg(2)),
        };
        let ul = uplo(uplo_, 3)?;
        let n = dim(n, 4)?;
        Ok((itype, vectors, ul, n, lead(lda, n, 6)?, lead(ldb, n, 8)?))
    }
}

/// Reports `ITYPE = 2, 3` when no system LAPACK can be found to hand them
/// to: an argument error of `ITYPE`, with a note saying why.
fn itype_unsupported(name: &str, itype: Int) -> Result<Int, BadArg> {
    eprintln!(
        "herd-lapack: {name} with ITYPE = {itype} needs the system LAPACK (liblapack.so.3; herd implements \
         ITYPE = 1), and none could be loaded"
    );
    Err(BadArg(1))
}

/// LAPACK `DSYGV`: all eigenvalues (and with `JOBZ = 'V'` the eigenvectors,
/// `Zᵀ·B·Z = I`) of `A·x = λ·B·x`, `B` positive definite, on herd.
/// `ITYPE = 2, 3` are handed to the system LAPACK loaded after this library.
/// With `JOBZ = 'N'` no eigenvector is computed (herd-la's eigenvalues-only
/// path) and `A` is destroyed, as in LAPACK.
///
/// `INFO`: 0; `−i` for a bad argument (`ITYPE` 1, `JOBZ` 2, `UPLO` 3, `N` 4,
/// `LDA` 6, `LDB` 8, `LWORK < max(1, 3N − 1)` 11; `LWORK = −1` is a
/// workspace query); `N + i` when `B`'s leading minor of order `i` is not
/// positive definite.
///
/// # Safety
/// LAPACK's contract: `a`, `b` are `LDA × N`, `LDB × N`; `w` holds `N`.
#[no_mangle]
pub unsafe extern "C" fn dsygv_(
    itype: *const Int,
    jobz: *const c_char,
    uplo_: *const c_char,
    n: *const Int,
    a: *mut f64,
    lda: *const Int,
    b: *mut f64,
    ldb: *const Int,
    w: *mut f64,
    work: *mut f64,
    lwork: *const Int,
    info: *mut Int,
) {
    let result = guard("DSYGV ", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let (it, vectors, ul, nn, lda_, ldb_) = common(itype, jobz, uplo_, n, lda, ldb)?;
            if it != 1 {
                return match ffi::system_symbol::<Dsygv>(c"dsygv_", c"liblapack.so.3", dsygv_ as *const _) {
                    Some(f) => {
                        let mut i = 0;
                        f(itype, jobz, uplo_, n, a, lda, b, ldb, w, work, lwork, &mut i, 1, 1);
                        Ok(i)
                    }
                    None => itype_unsupported("DSYGV", it),
                };
            }
            if ffi::workspace(work, lwork, (3 * nn).saturating_sub(1), 11)? {
                return Ok(0);
            }
            ffi::count(Routine::Sygv);
            solve(ul, vectors, nn, (a, lda_), (b, ldb_), w)
        }
    });
    // SAFETY: the caller's contract.
    unsafe { ffi::set_info(info, result) };
}

/// LAPACK `DSYGVD` (the divide-and-conquer driver): the same problem and
/// results as [`dsygv_`], computed by the same herd solver (whose
/// tridiagonal eigensolver is divide and conquer, LAPACK's `dstedc`
/// method, as `dsygvd` promises; with `JOBZ = 'N'` QR iteration on the
/// eigenvalues only, as `dstedc` itself does then through `dsterf`); its workspace
/// arguments are checked as LAPACK checks them (`LWORK` 11: `1 + 6N + 2N²`
/// with vectors, `2N + 1` without, 1 for `N ≤ 1`; `LIWORK` 13: `3 + 5N`,
/// or 1), and a query (`LWORK` or `LIWORK` `= −1`) returns those minima.
///
/// # Safety
/// LAPACK's contract, as [`dsygv_`], with `iwork` holding one `Int` at least.
#[no_mangle]
pub unsafe extern "C" fn dsygvd_(
    itype: *const Int,
    jobz: *const c_char,
    uplo_: *const c_char,
    n: *const Int,
    a: *mut f64,
    lda: *const Int,
    b: *mut f64,
    ldb: *const Int,
    w: *mut f64,
    work: *mut f64,
    lwork: *const Int,
    iwork: *mut Int,
    liwork: *const Int,
    info: *mut Int,
) {
    let result = guard("DSYGVD", || {
        // SAFETY: forwarded from the caller's contract for each argument.
        unsafe {
            let (it, vectors, ul, nn, lda_, ldb_) = common(itype, jobz, uplo_, n, lda, ldb)?;
            if it != 1 {
                return match ffi::system_symbol::<Dsygvd>(c"dsygvd_", c"liblapack.so.3", dsygvd_ as *const _)
                {
                    Some(f) => {
                        let mut i = 0;
                        f(itype, jobz, uplo_, n, a, lda, b, ldb, w, work, lwork, iwork, liwork, &mut i, 1, 1);
                        Ok(i)
                    }
                    None => itype_unsupported("DSYGVD", it),
                };
            }
            let (lwmin, liwmin) = match (nn <= 1, vectors) {
                (true, _) => (1, 1),
                (false, true) => (1 + 6 * nn + 2 * nn * nn, 3 + 5 * nn),
                (false, false) => (2 * nn + 1, 1),
            };
            let query = read(lwork) == Some(-1) || read(liwork) == Some(-1);
            if !work.is_null() {
                work.write_unaligned(lwmin as f64);
            }
            if !iwork.is_null() {
                iwork.write_unaligned(Int::try_from(liwmin).unwrap_or(Int::MAX));
            }
            if !query {
                if read(lwork).and_then(|l| usize::try_from(l).ok()).is_none_or(|l| l < lwmin) {
                    return Err(BadArg(11));
                }
                if read(liwork).and_then(|l| usize::try_from(l).ok()).is_none_or(|l| l < liwmin) {
                    return Err(BadArg(13));
                }
            } else {
                return Ok(0);
            }
            ffi::count(Routine::Sygv);
            solve(ul, vectors, nn, (a, lda_), (b, ldb_), w)
        }
    });
    // SAFETY: the caller's contract.
    unsafe { ffi::set_info(info, result) };
}

/// The checked call of both drivers.
///
/// # Safety
/// `a`, `b` hold `n` columns at their leading dimensions; `w` `n` values.
unsafe fn solve(
    ul: Uplo,
    vectors: bool,
    n: usize,
    (a, lda): (*mut f64, usize),
    (b, ldb): (*mut f64, usize),
    w: *mut f64,
) -> Result<Int, BadArg> {
    if n == 0 {
        return Ok(0);
    }
    if w.is_null() {
        return Err(BadArg(9));
    }
    // SAFETY: the caller's contract.
    unsafe {
        let w = std::slice::from_raw_parts_mut(w, n);
        Ok(sygv_info(ul, vectors, mat_mut(a, n, n, lda), mat_mut(b, n, n, ldb), w))
    }
}
