//! What every entry point shares: reading Fortran/C arguments, LAPACK's
//! argument errors (`INFO = −i` and `xerbla_`), matrix views over the
//! caller's memory, the herd pool the routines run on, and panic containment.

use faer::{MatMut, MatRef};
use herd_la::Op;
pub use herd_la::Uplo;
use std::cell::Cell;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

/// LAPACK's integer (LP64: 32 bits), as the system's `liblapack.so.3` and
/// OpenBLAS's default interface use.
pub type Int = i32;

/// A rejected argument: its 1-based position in the routine's Fortran
/// signature (LAPACK's `INFO = −i`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadArg(pub Int);

/// Reads the scalar behind a Fortran argument pointer; `None` for a null
/// pointer (a C caller's mistake, reported as that argument's error).
///
/// # Safety
/// `p` is null or points to a readable `T`.
pub unsafe fn read<T: Copy>(p: *const T) -> Option<T> {
    // SAFETY: non-null, and readable by the caller's contract.
    (!p.is_null()).then(|| unsafe { p.read_unaligned() })
}

/// Reads a character flag (`'N'`, `'t'`, ...), upper-cased.
///
/// # Safety
/// As [`read`].
pub unsafe fn flag(p: *const c_char) -> Option<u8> {
    // SAFETY: forwarded.
    unsafe { read(p) }.map(|c| (c as u8).to_ascii_uppercase())
}

/// A dimension (`M`, `N`, `K`): non-negative.
///
/// # Safety
/// As [`read`].
pub unsafe fn dim(p: *const Int, arg: Int) -> Result<usize, BadArg> {
    // SAFETY: forwarded.
    unsafe { read(p) }.and_then(|v| usize::try_from(v).ok()).ok_or(BadArg(arg))
}

/// A leading dimension: at least `max(1, rows)`.
///
/// # Safety
/// As [`read`].
pub unsafe fn lead(p: *const Int, rows: usize, arg: Int) -> Result<usize, BadArg> {
    // SAFETY: forwarded.
    let ld = unsafe { dim(p, arg) }?;
    if ld < rows.max(1) {
        return Err(BadArg(arg));
    }
    Ok(ld)
}

/// `TRANS` (`'N'`, `'T'`, or `'C'`, which is `'T'` for real matrices).
///
/// # Safety
/// As [`read`].
pub unsafe fn trans(p: *const c_char, arg: Int) -> Result<Op, BadArg> {
    // SAFETY: forwarded.
    match unsafe { flag(p) } {
        Some(b'N') => Ok(Op::NoTrans),
        Some(b'T' | b'C') => Ok(Op::Trans),
        _ => Err(BadArg(arg)),
    }
}

/// `UPLO` (`'L'` or `'U'`).
///
/// # Safety
/// As [`read`].
pub unsafe fn uplo(p: *const c_char, arg: Int) -> Result<Uplo, BadArg> {
    // SAFETY: forwarded.
    match unsafe { flag(p) } {
        Some(b'L') => Ok(Uplo::Lower),
        Some(b'U') => Ok(Uplo::Upper),
        _ => Err(BadArg(arg)),
    }
}

/// LAPACK's workspace argument pair `WORK, LWORK`: `LWORK = −1` asks for the
/// optimal size, written to `WORK(1)` (with nothing else done: `Ok(true)`);
/// otherwise `LWORK` must be at least `minimum` (argument `arg`). herd needs
/// no workspace from the caller, so the optimal size is the minimum; it is
/// written to `WORK(1)` on every call, as LAPACK does.
///
/// # Safety
/// `lwork` readable; `work` null or writable for one `f64`.
pub unsafe fn workspace(work: *mut f64, lwork: *const Int, minimum: usize, arg: Int) -> Result<bool, BadArg> {
    // SAFETY: the caller's contract.
    let lwork = unsafe { read(lwork) }.ok_or(BadArg(arg))?;
    let query = lwork == -1;
    if !query && usize::try_from(lwork).map_or(true, |l| l < minimum.max(1)) {
        return Err(BadArg(arg));
    }
    if !work.is_null() {
        // SAFETY: writable by the caller's contract.
        unsafe { work.write_unaligned(minimum.max(1) as f64) };
    }
    Ok(query)
}

/// Writes `INFO` (ignored when the caller passed no pointer).
///
/// # Safety
/// `info` null or writable.
pub unsafe fn set_info(info: *mut Int, value: Int) {
    if !info.is_null() {
        // SAFETY: writable by the caller's contract.
        unsafe { info.write_unaligned(value) };
    }
}

/// A column-major `rows × cols` view of the caller's matrix with leading
/// dimension `ld`. A view with no element never reads `ptr` (which may then
/// be null).
///
/// # Safety
/// Unless `rows` or `cols` is 0: `ptr` is non-null and points to
/// `ld·(cols−1) + rows` `f64`s, with `ld ≥ rows`, that no one else reads or writes while the
/// view lives (LAPACK's contract for an output matrix).
pub unsafe fn mat_mut<'a>(ptr: *mut f64, rows: usize, cols: usize, ld: usize) -> MatMut<'a, f64> {
    if rows == 0 || cols == 0 || ptr.is_null() {
        return MatMut::from_column_major_slice_mut(&mut [], rows, cols);
    }
    // SAFETY: by the caller's contract the `rows × cols` elements at column
    // stride `ld` are in bounds and exclusively ours; strides fit in isize
    // because the allocation does.
    unsafe { MatMut::from_raw_parts_mut(ptr, rows, cols, 1, ld as isize) }
}

/// A read-only column-major view; see [`mat_mut`].
///
/// # Safety
/// Unless `rows` or `cols` is 0: `ptr` is non-null and points to
/// `ld·(cols−1) + rows` readable `f64`s, with `ld ≥ rows`, that no one writes while the view
/// lives.
pub unsafe fn mat_ref<'a>(ptr: *const f64, rows: usize, cols: usize, ld: usize) -> MatRef<'a, f64> {
    if rows == 0 || cols == 0 || ptr.is_null() {
        return MatRef::from_column_major_slice(&[], rows, cols);
    }
    // SAFETY: as in `mat_mut`, read-only.
    unsafe { MatRef::from_raw_parts(ptr, rows, cols, 1, ld as isize) }
}

/// `xerbla_(SRNAME, INFO)` with gfortran's hidden length of `SRNAME`.
type Xerbla = unsafe extern "C" fn(*const c_char, *const Int, usize);

/// The function pointer behind `name` in `handle`'s scope, if any.
///
/// # Safety
/// `name`'s symbol, where found, has [`Xerbla`]'s signature.
unsafe fn lookup(handle: *mut c_void, name: &std::ffi::CStr) -> Option<Xerbla> {
    // SAFETY: dlsym with a pseudo-handle and a NUL-terminated name has no
    // other precondition.
    let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
    // SAFETY: the signature is the caller's promise.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, Xerbla>(p) })
}

/// The system library's definition of `name`, for what herd does not
/// compute itself: the next definition in the global scope (a library
/// loaded after this one, e.g. the system LAPACK this one is preloaded in
/// front of), else the one in `library` (`liblapack.so.3`, ...) — already
/// loaded by a module of its own (as Python extensions load it, outside the
/// global scope), or loaded now. Never this library's own `own`.
///
/// # Safety
/// `F` is the C signature of `name`.
pub unsafe fn system_symbol<F: Copy>(
    name: &std::ffi::CStr,
    library: &std::ffi::CStr,
    own: *const c_void,
) -> Option<F> {
    // SAFETY: dlsym/dlopen with NUL-terminated names; handles from dlopen
    // are kept (never closed), so the symbol stays valid.
    let p = unsafe {
        let p = libc::dlsym(libc::RTLD_NEXT, name.as_ptr());
        if !p.is_null() && p.cast_const() != own {
            p
        } else {
            let h = libc::dlopen(library.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if h.is_null() {
                std::ptr::null_mut()
            } else {
                libc::dlsym(h, name.as_ptr())
            }
        }
    };
    // SAFETY: the signature is the caller's promise.
    (!p.is_null() && p.cast_const() != own).then(|| unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
}

/// Reports a rejected argument as LAPACK does: through `xerbla_` as the
/// process resolves it — a program's own (it is exported because this
/// library defines the name too), else this library's [`xerbla_`], which
/// hands it to the system library's or prints the reference message. `name`
/// is the routine's name in capitals, padded to 6 as LAPACK passes it.
pub fn xerbla(name: &str, BadArg(arg): BadArg) {
    static FIRST: std::sync::OnceLock<Option<Xerbla>> = std::sync::OnceLock::new();
    // SAFETY: every `xerbla_` has LAPACK's signature.
    let f = *FIRST.get_or_init(|| unsafe { lookup(libc::RTLD_DEFAULT, c"xerbla_") });
    match f {
        // SAFETY: `name` outlives the call and its length is passed, as
        // Fortran passes CHARACTER arguments (no NUL needed).
        Some(f) => unsafe { f(name.as_ptr().cast(), &arg, name.len()) },
        None => print_xerbla(name.as_bytes(), arg),
    }
}

/// The reference `xerbla`'s message (without its STOP: a library does not end
/// the caller's program).
fn print_xerbla(name: &[u8], arg: Int) {
    let name = String::from_utf8_lossy(name);
    eprintln!(" ** On entry to {} parameter number {arg:2} had an illegal value", name.trim_end());
}

/// LAPACK's error handler, defined here so that a program's own `xerbla_`
/// is exported to (and called by) this library as by any LAPACK. Hands the
/// report to the next `xerbla_` in the process (the system LAPACK's, when
/// this library is preloaded in front of it), or prints the reference
/// message and returns.
///
/// # Safety
/// `srname` points to `len` readable bytes (or is null), `info` to an int.
#[no_mangle]
pub unsafe extern "C" fn xerbla_(srname: *const c_char, info: *const Int, len: usize) {
    static NEXT: std::sync::OnceLock<Option<Xerbla>> = std::sync::OnceLock::new();
    // SAFETY: every `xerbla_` has LAPACK's signature; RTLD_NEXT starts after
    // this library, so this function is never its own successor.
    match *NEXT.get_or_init(|| unsafe { lookup(libc::RTLD_NEXT, c"xerbla_") }) {
        // SAFETY: the caller's pointers, forwarded.
        Some(next) => unsafe { next(srname, info, len) },
        None => {
            let name = if srname.is_null() {
                &[][..]
            } else {
                // SAFETY: `len` readable bytes by the caller's contract; a
                // C caller passing no length passes garbage, bounded here.
                unsafe { std::slice::from_raw_parts(srname.cast::<u8>(), len.min(32)) }
            };
            // SAFETY: readable by the caller's contract.
            print_xerbla(name, unsafe { read(info) }.unwrap_or(0));
        }
    }
}

/// The routines counted by [`count`], in the order of [`herd_lapack_calls`]'s
/// names.
#[derive(Clone, Copy)]
pub enum Routine {
    /// `dgemm_`, `cblas_dgemm`.
    Gemm,
    /// `dpotrf_`, `LAPACKE_dpotrf`.
    Potrf,
    /// `dgeqrf_`, `LAPACKE_dgeqrf`.
    Geqrf,
    /// `dorgqr_`, `LAPACKE_dorgqr`.
    Orgqr,
    /// `dormqr_`, `LAPACKE_dormqr`.
    Ormqr,
    /// `dgetrf_`, `LAPACKE_dgetrf`.
    Getrf,
    /// `dgetrs_`, `LAPACKE_dgetrs`.
    Getrs,
    /// `dgesv_`, `LAPACKE_dgesv`.
    Gesv,
    /// `dsygv_`, `dsygvd_`, `LAPACKE_dsygv`.
    Sygv,
    /// `dtrsm_`, `cblas_dtrsm`.
    Trsm,
    /// `dsyrk_`, `cblas_dsyrk`.
    Syrk,
}

const ROUTINES: [&str; 11] =
    ["dgemm", "dpotrf", "dgeqrf", "dorgqr", "dormqr", "dgetrf", "dgetrs", "dgesv", "dsygv", "dtrsm", "dsyrk"];

thread_local! {
    /// Calls made by this thread, per routine: per thread so that callers on
    /// many threads never write one shared line.
    static CALLS: [Cell<u64>; ROUTINES.len()] = const { [const { Cell::new(0) }; ROUTINES.len()] };
}

/// Counts a call of `r` by this thread.
pub fn count(r: Routine) {
    CALLS.with(|c| c[r as usize].set(c[r as usize].get() + 1));
}

/// How many times the calling thread has called the routine `name`
/// (`"dgemm"`, `"dpotrf"`, ... without the trailing underscore) through this
/// library, −1 for a name it does not implement: lets a test see that a
/// program's calls really reached herd.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn herd_lapack_calls(name: *const c_char) -> i64 {
    if name.is_null() {
        return -1;
    }
    // SAFETY: NUL-terminated by the caller's contract.
    let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
    match ROUTINES.iter().position(|r| *r == name) {
        Some(i) => CALLS.with(|c| c[i].get()).try_into().unwrap_or(i64::MAX),
        None => -1,
    }
}

/// Makes sure herd's global pool exists before a routine uses it: built from
/// the `HERD_*` environment; when that holds an invalid value, the error
/// (naming the variable, the value and the accepted forms) is printed once
/// and the routines run on a pool of one thread, so the caller's results are
/// still computed.
pub fn ensure_pool() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        // Linked into herd's OpenMP runtime, the global pool is its root
        // pool (provided when the library was loaded): nothing to build.
        if herd::global_is_set() {
            return;
        }
        if let Err(e) = herd::PoolBuilder::from_env().and_then(|b| b.build_global()) {
            eprintln!("herd-lapack: {e}; running every routine on one thread");
            if let Err(e) = herd::Pool::builder().num_threads(1).build_global() {
                eprintln!("herd-lapack: the one-thread pool failed too: {e}");
            }
        }
    });
}

/// Runs an entry point's body (after [`ensure_pool`]): argument errors go to [`xerbla`] and come back
/// as `−i`; a panic (a bug in herd, never the caller's input) is reported on
/// stderr with the routine's name and comes back as `i32::MIN`, instead of
/// unwinding into C or Fortran (which would abort the process).
pub fn guard(name: &str, body: impl FnOnce() -> Result<Int, BadArg>) -> Int {
    ensure_pool();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(info)) => info,
        Ok(Err(bad)) => {
            xerbla(name, bad);
            -bad.0
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            eprintln!("herd-lapack: internal error in {name}: {what}");
            Int::MIN
        }
    }
}

/// An error herd-la returned for arguments this library had already checked:
/// a bug, reported by [`guard`] as an internal error.
pub fn checked_twice(e: herd_la::LaError) -> ! {
    panic!("herd-la rejected arguments herd-lapack had checked: {e}")
}
