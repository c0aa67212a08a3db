//! LAPACKE entry points (`lapacke.h`: arguments by value, a layout argument,
//! `INFO` returned, arguments numbered with `matrix_layout` first). A
//! row-major matrix is the column-major transpose: herd-la's routines take
//! it as a strided view (for a symmetric routine `'L'` row-major is `'U'`
//! column-major on the same memory), so no layout needs a copy here.

use crate::ffi::{self, guard, mat_mut, BadArg, Int, Routine, Uplo};
use crate::lapack::{getrf_into, pivots, potrf, solve, sygv_info};
use faer::{MatMut, MatRef};
use herd_la::{geqrf, orgqr, ormqr, Op, Side};
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
    // SAFETY: forwarded.
    unsafe { potrf_layout("LAPACKE_dpotrf", matrix_layout, uplo_, n, a, lda, nancheck()) }
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
    // SAFETY: forwarded.
    unsafe { potrf_layout("LAPACKE_dpotrf_work", matrix_layout, uplo_, n, a, lda, false) }
}

/// Both LAPACKE Cholesky entry points, the NaN check when `check_nan`.
///
/// # Safety
/// As [`LAPACKE_dpotrf`].
unsafe fn potrf_layout(
    name: &str,
    layout: Int,
    uplo_: c_char,
    n: Int,
    a: *mut f64,
    lda: Int,
    check_nan: bool,
) -> Int {
    guard(name, || {
        let row = row_major(layout)?;
        let ul = uplo(uplo_, 2)?;
        let n = size(n, 3)?;
        // SAFETY: the caller's contract, with the checked `n`, `lda`.
        let a = unsafe { matrix(row, a, (n, n), lda, 5)? };
        if check_nan && has_nan_in(a.as_ref(), ul) {
            return Ok(-4);
        }
        ffi::count(Routine::Potrf);
        Ok(potrf(ul, a))
    })
}

/// Whether the `uplo` triangle (with the diagonal) of a square view holds a
/// NaN (LAPACKE's `nancheck` of a symmetric matrix).
fn has_nan_in(m: MatRef<'_, f64>, ul: Uplo) -> bool {
    let n = m.nrows();
    (0..n).any(|j| {
        let rows = if ul == Uplo::Lower { j..n } else { 0..j + 1 };
        rows.into_iter().any(|i| m[(i, j)].is_nan())
    })
}

/// The `rows × cols` matrix at `a` in the layout (leading dimension `ld`,
/// at least `rows` column-major or `cols` row-major, else argument `ld_arg`).
///
/// # Safety
/// `a` holds the matrix in that layout (see [`ffi::mat_mut`]).
unsafe fn matrix<'a>(
    row: bool,
    a: *mut f64,
    (rows, cols): (usize, usize),
    ld: Int,
    ld_arg: Int,
) -> Result<MatMut<'a, f64>, BadArg> {
    let need = if row { cols } else { rows };
    let ld = usize::try_from(ld).ok().filter(|&l| l >= need.max(1)).ok_or(BadArg(ld_arg))?;
    // SAFETY: the caller's contract, with the checked leading dimension.
    Ok(unsafe {
        if row {
            mat_mut(a, cols, rows, ld).transpose_mut()
        } else {
            mat_mut(a, rows, cols, ld)
        }
    })
}

/// A dimension passed by value: non-negative.
fn size(v: Int, arg: Int) -> Result<usize, BadArg> {
    usize::try_from(v).map_err(|_| BadArg(arg))
}

/// Whether a view holds a NaN (LAPACKE's `nancheck` of a general matrix).
fn has_nan(m: MatRef<'_, f64>) -> bool {
    (0..m.ncols()).any(|j| (0..m.nrows()).any(|i| m[(i, j)].is_nan()))
}

/// `k` values at `p` (none read when `k = 0`).
///
/// # Safety
/// `p` holds `k` values when `k > 0`.
unsafe fn slice_mut<'a>(p: *mut f64, k: usize, arg: Int) -> Result<&'a mut [f64], BadArg> {
    if k == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(BadArg(arg));
    }
    // SAFETY: `k` values by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, k) })
}

/// `LAPACKE_dgeqrf`: `A = Q·R` in either layout (`dgeqrf_`'s output in the
/// layout); −4 when `A` holds a NaN (LAPACKE's check), −5 for a bad `lda`.
///
/// # Safety
/// `lapacke.h`'s contract: `a` holds the `m × n` matrix, `tau` `min(m, n)`.
#[no_mangle]
pub unsafe extern "C" fn LAPACKE_dgeqrf(
    layout: Int,
    m: Int,
    n: Int,
    a: *mut f64,
    lda: Int,
    tau: *mut f64,
) -> Int {
    guard("LAPACKE_dgeqrf", || {
        let row = row_major(layout)?;
        let (m, n) = (size(m, 2)?, size(n, 3)?);
        // SAFETY: the caller's contract.
        let a = unsafe { matrix(row, a, (m, n), lda, 5)? };
        if nancheck() && has_nan(a.as_ref()) {
            return Ok(-4);
        }
        // SAFETY: `tau` holds min(m, n) values by the caller's contract.
        let tau = unsafe { slice_mut(tau, m.min(n), 6)? };
        ffi::count(Routine::Geqrf);
        Ok(geqrf(a, tau).map_or_else(transpose_failed, |_| 0))
    })
}

/// LAPACKE's answer when a row-major matrix's column-major working copy
/// cannot be allocated (`LAPACK_TRANSPOSE_MEMORY_ERROR`); any other error
/// was ruled out by the arguments' checks.
fn transpose_failed(e: herd_la::LaError) -> Int {
    match e {
        herd_la::LaError::OutOfMemory(what) => {
            eprintln!("herd-lapack: {what}");
            LAPACK_TRANSPOSE_MEMORY_ERROR
        }
        e => ffi::checked_twice(e),
    }
}

/// `lapacke.h`'s `LAPACK_TRANSPOSE_MEMORY_ERROR`.
const LAPACK_TRANSPOSE_MEMORY_ERROR: Int = -1011;

/// `LAPACKE_dorgqr`: the first `n` columns of `Q` from `k` reflectors, in
/// either layout; −5 (`a`) or −7 (`tau`) for a NaN, −6 for a bad `lda`.
///
/// # Safety
/// `lapacke.h`'s contract: `a` holds the `m × n` matrix, `tau` `k` values.
#[no_mangle]
pub unsafe extern "C" fn LAPACKE_dorgqr(
    layout: Int,
    m: Int,
    n: Int,
    k: Int,
    a: *mut f64,
    lda: Int,
    tau: *const f64,
) -> Int {
    guard("LAPACKE_dorgqr", || {
        let row = row_major(layout)?;
        let m = size(m, 2)?;
        let n = size(n, 3).ok().filter(|&n| n <= m).ok_or(BadArg(3))?;
        let k = size(k, 4).ok().filter(|&k| k <= n).ok_or(BadArg(4))?;
        // SAFETY: the caller's contract.
        let a = unsafe { matrix(row, a, (m, n), lda, 6)? };
        // SAFETY: as above; read only.
        let tau = unsafe { slice_mut(tau.cast_mut(), k, 7)? };
        if nancheck() && has_nan(a.as_ref()) {
            return Ok(-5);
        }
        if nancheck() && tau.iter().any(|t| t.is_nan()) {
            return Ok(-7);
        }
        ffi::count(Routine::Orgqr);
        Ok(orgqr(a, tau).map_or_else(transpose_failed, |_| 0))
    })
}

/// `LAPACKE_dormqr`: `C ← op(Q)·C` or `C·op(Q)` in either layout; −7 (`a`),
/// −9 (`tau`) or −10 (`c`) for a NaN, −8/−11 for a bad `lda`/`ldc`.
///
/// # Safety
/// `lapacke.h`'s contract: `a` holds the reflectors (`m × k` or `n × k`),
/// `tau` `k` values, `c` the `m × n` matrix.
#[no_mangle]
pub unsafe extern "C" fn LAPACKE_dormqr(
    layout: Int,
    side: c_char,
    trans: c_char,
    m: Int,
    n: Int,
    k: Int,
    a: *const f64,
    lda: Int,
    tau: *const f64,
    c: *mut f64,
    ldc: Int,
) -> Int {
    guard("LAPACKE_dormqr", || {
        let row = row_major(layout)?;
        let side = match (side as u8).to_ascii_uppercase() {
            b'L' => Side::Left,
            b'R' => Side::Right,
            _ => return Err(BadArg(2)),
        };
        let trans = match (trans as u8).to_ascii_uppercase() {
            b'N' => Op::NoTrans,
            b'T' => Op::Trans,
            _ => return Err(BadArg(3)),
        };
        let (m, n) = (size(m, 4)?, size(n, 5)?);
        let nq = if side == Side::Left { m } else { n };
        let k = size(k, 6).ok().filter(|&k| k <= nq).ok_or(BadArg(6))?;
        // SAFETY: the caller's contract; `a` and `tau` are only read.
        let (a, tau, c) = unsafe {
            (
                matrix(row, a.cast_mut(), (nq, k), lda, 8)?,
                slice_mut(tau.cast_mut(), k, 9)?,
                matrix(row, c, (m, n), ldc, 11)?,
            )
        };
        if nancheck() {
            if has_nan(a.as_ref()) {
                return Ok(-7);
            }
            if tau.iter().any(|t| t.is_nan()) {
                return Ok(-9);
            }
            if has_nan(c.as_ref()) {
                return Ok(-10);
            }
        }
        ffi::count(Routine::Ormqr);
        if m == 0 || n == 0 || k == 0 {
            return Ok(0);
        }
        Ok(ormqr(side, trans, a.as_ref(), tau, c).map_or_else(transpose_failed, |_| 0))
    })
}

/// `LAPACKE_dgetrf`: `A = P·L·U` in either layout (`ipiv` 1-based, as
/// `dgetrf_`); −4 when `A` holds a NaN, −5 for a bad `lda`; `i > 0` for an
/// exactly zero `U(i, i)`.
///
/// # Safety
/// `lapacke.h`'s contract: `a` holds the `m × n` matrix, `ipiv` `min(m, n)`.
#[no_mangle]
pub unsafe extern "C" fn LAPACKE_dgetrf(
    layout: Int,
    m: Int,
    n: Int,
    a: *mut f64,
    lda: Int,
    ipiv: *mut Int,
) -> Int {
    guard("LAPACKE_dgetrf", || {
        let row = row_major(layout)?;
        let (m, n) = (size(m, 2)?, size(n, 3)?);
        // SAFETY: the caller's contract.
        let a = unsafe { matrix(row, a, (m, n), lda, 5)? };
        if nancheck() && has_nan(a.as_ref()) {
            return Ok(-4);
        }
        ffi::count(Routine::Getrf);
        // SAFETY: `ipiv` holds min(m, n) by the caller's contract.
        Ok(unsafe { getrf_into(a, ipiv, 6) }?.0)
    })
}

/// `LAPACKE_dgetrs`: solves `op(A)·X = B` with `dgetrf`'s factors in either
/// layout; −5 (`a`) or −8 (`b`) for a NaN, −6/−9 for a bad `lda`/`ldb`, −7
/// for pivots `dgetrf` could not have produced.
///
/// # Safety
/// `lapacke.h`'s contract: `a` holds the `n × n` factors, `ipiv` `n`
/// pivots, `b` the `n × nrhs` right-hand sides.
#[no_mangle]
pub unsafe extern "C" fn LAPACKE_dgetrs(
    layout: Int,
    trans: c_char,
    n: Int,
    nrhs: Int,
    a: *const f64,
    lda: Int,
    ipiv: *const Int,
    b: *mut f64,
    ldb: Int,
) -> Int {
    guard("LAPACKE_dgetrs", || {
        let row = row_major(layout)?;
        let op = match (trans as u8).to_ascii_uppercase() {
            b'N' => Op::NoTrans,
            b'T' | b'C' => Op::Trans,
            _ => return Err(BadArg(2)),
        };
        let (n, nrhs) = (size(n, 3)?, size(nrhs, 4)?);
        // SAFETY: the caller's contract; `a` is only read.
        let (a, b) =
            unsafe { (matrix(row, a.cast_mut(), (n, n), lda, 6)?, matrix(row, b, (n, nrhs), ldb, 9)?) };
        if nancheck() && has_nan(a.as_ref()) {
            return Ok(-5);
        }
        if nancheck() && has_nan(b.as_ref()) {
            return Ok(-8);
        }
        // SAFETY: `ipiv` holds n by the caller's contract.
        let piv = unsafe { pivots(ipiv, n, 7)? };
        ffi::count(Routine::Getrs);
        solve(op, a.as_ref(), &piv, b, 7)?;
        Ok(0)
    })
}

/// `LAPACKE_dgesv`: solves `A·X = B` (`dgetrf` then `dgetrs`) in either
/// layout; −4 (`a`) or −7 (`b`) for a NaN, −5/−8 for a bad `lda`/`ldb`;
/// `i > 0` for an exactly zero `U(i, i)` (`B` then not solved).
///
/// # Safety
/// `lapacke.h`'s contract: `a` holds the `n × n` matrix, `ipiv` `n`, `b` the
/// `n × nrhs` right-hand sides.
#[no_mangle]
pub unsafe extern "C" fn LAPACKE_dgesv(
    layout: Int,
    n: Int,
    nrhs: Int,
    a: *mut f64,
    lda: Int,
    ipiv: *mut Int,
    b: *mut f64,
    ldb: Int,
) -> Int {
    guard("LAPACKE_dgesv", || {
        let row = row_major(layout)?;
        let (n, nrhs) = (size(n, 2)?, size(nrhs, 3)?);
        // SAFETY: the caller's contract.
        let (mut a, b) = unsafe { (matrix(row, a, (n, n), lda, 5)?, matrix(row, b, (n, nrhs), ldb, 8)?) };
        if nancheck() && has_nan(a.as_ref()) {
            return Ok(-4);
        }
        if nancheck() && has_nan(b.as_ref()) {
            return Ok(-7);
        }
        ffi::count(Routine::Gesv);
        // SAFETY: `ipiv` holds n by the caller's contract.
        let (info, piv) = unsafe { getrf_into(a.as_mut(), ipiv, 6)? };
        if info != 0 || n == 0 || nrhs == 0 {
            return Ok(info);
        }
        solve(Op::NoTrans, a.as_ref(), &piv, b, 6)?;
        Ok(0)
    })
}

/// `LAPACKE_dsygv` with `itype = 1` (`A·x = λ·B·x`), in either layout: the
/// eigenvalues in `w`, with `jobz = 'V'` the eigenvectors in `a` (columns of
/// the matrix in the layout; with `'N'` none is computed and `a` is
/// destroyed), `B`'s factor in `b`; −6 (`a`) or −8 (`b`) for
/// a NaN in the `uplo` triangle, −7/−9 for a bad `lda`/`ldb`; `n + i` when
/// `B`'s leading minor of order `i` is not positive definite. `itype = 2, 3`
/// go to the system's `LAPACKE_dsygv` (`liblapacke.so.3`; `−2` without one,
/// with a note on stderr).
///
/// # Safety
/// `lapacke.h`'s contract: `a`, `b` hold `n × n` matrices in the layout,
/// `w` `n` values.
#[no_mangle]
pub unsafe extern "C" fn LAPACKE_dsygv(
    layout: Int,
    itype: Int,
    jobz: c_char,
    uplo_: c_char,
    n: Int,
    a: *mut f64,
    lda: Int,
    b: *mut f64,
    ldb: Int,
    w: *mut f64,
) -> Int {
    type Next =
        unsafe extern "C" fn(Int, Int, c_char, c_char, Int, *mut f64, Int, *mut f64, Int, *mut f64) -> Int;
    guard("LAPACKE_dsygv", || {
        let row = row_major(layout)?;
        if !(1..=3).contains(&itype) {
            return Err(BadArg(2));
        }
        let vectors = match (jobz as u8).to_ascii_uppercase() {
            b'V' => true,
            b'N' => false,
            _ => return Err(BadArg(3)),
        };
        let ul = uplo(uplo_, 4)?;
        let nn = size(n, 5)?;
        if itype != 1 {
            // SAFETY: LAPACKE_dsygv has lapacke.h's signature (`Next`).
            let next = unsafe {
                ffi::system_symbol::<Next>(c"LAPACKE_dsygv", c"liblapacke.so.3", LAPACKE_dsygv as *const _)
            };
            let Some(next) = next else {
                eprintln!("herd-lapack: LAPACKE_dsygv with itype = {itype} needs the system LAPACKE (liblapacke.so.3)");
                return Err(BadArg(2));
            };
            // SAFETY: the caller's arguments, forwarded unchanged.
            return Ok(unsafe { next(layout, itype, jobz, uplo_, n, a, lda, b, ldb, w) });
        }
        // SAFETY: the caller's contract.
        let (a, b) = unsafe { (matrix(row, a, (nn, nn), lda, 7)?, matrix(row, b, (nn, nn), ldb, 9)?) };
        if nancheck() && has_nan_in(a.as_ref(), ul) {
            return Ok(-6);
        }
        if nancheck() && has_nan_in(b.as_ref(), ul) {
            return Ok(-8);
        }
        // SAFETY: `w` holds n values by the caller's contract.
        let w = unsafe { slice_mut(w, nn, 10)? };
        ffi::count(Routine::Sygv);
        if nn == 0 {
            return Ok(0);
        }
        Ok(sygv_info(ul, vectors, a, b, w))
    })
}
