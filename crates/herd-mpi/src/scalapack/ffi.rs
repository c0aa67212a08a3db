//! The C and Fortran entry points of BLACS and ScaLAPACK in Debian's
//! `libscalapack-openmpi.so` (which carries BLACS too), and OpenBLAS's thread control looked
//! up at run time. Every BLACS and ScaLAPACK call calls MPI: call them only on the
//! communicator thread (inside `Mpi::run`).

use std::ffi::{c_char, c_int};

#[link(name = "scalapack-openmpi")]
extern "C" {
    /// `Cblacs_pinfo(&mypnum, &nprocs)`.
    pub fn Cblacs_pinfo(mypnum: *mut c_int, nprocs: *mut c_int);
    /// `Cblacs_get(icontxt, what, &val)`; `(-1, 0)` gives the system default context
    /// (`MPI_COMM_WORLD`).
    pub fn Cblacs_get(icontxt: c_int, what: c_int, val: *mut c_int);
    /// `Cblacs_gridinit(&ctx, order, nprow, npcol)`: `order` `"Row"` numbers ranks row-major.
    pub fn Cblacs_gridinit(ctx: *mut c_int, order: *const c_char, nprow: c_int, npcol: c_int);
    /// `Cblacs_gridinfo(ctx, &nprow, &npcol, &myrow, &mycol)`; `myrow == -1` outside the grid.
    pub fn Cblacs_gridinfo(
        ctx: c_int,
        nprow: *mut c_int,
        npcol: *mut c_int,
        myrow: *mut c_int,
        mycol: *mut c_int,
    );
    /// `Cblacs_gridexit(ctx)`: frees the grid (not MPI).
    pub fn Cblacs_gridexit(ctx: c_int);
    /// ScaLAPACK's `NUMROC(N, NB, IPROC, ISRCPROC, NPROCS)`.
    pub fn numroc_(
        n: *const c_int,
        nb: *const c_int,
        iproc: *const c_int,
        isrc: *const c_int,
        nprocs: *const c_int,
    ) -> c_int;
    /// ScaLAPACK's `DESCINIT(DESC, M, N, MB, NB, IRSRC, ICSRC, ICTXT, LLD, INFO)`.
    pub fn descinit_(
        desc: *mut c_int,
        m: *const c_int,
        n: *const c_int,
        mb: *const c_int,
        nb: *const c_int,
        irsrc: *const c_int,
        icsrc: *const c_int,
        ictxt: *const c_int,
        lld: *const c_int,
        info: *mut c_int,
    );
    /// ScaLAPACK's `PDPOTRF(UPLO, N, A, IA, JA, DESCA, INFO)`; gfortran adds the hidden length
    /// of `UPLO` last.
    pub fn pdpotrf_(
        uplo: *const c_char,
        n: *const c_int,
        a: *mut f64,
        ia: *const c_int,
        ja: *const c_int,
        desca: *const c_int,
        info: *mut c_int,
        uplo_len: usize,
    );
}

/// `openblas_set_num_threads` of the OpenBLAS that ScaLAPACK's BLAS resolves to
/// (`libblas.so.3` → Debian's `libopenblas0-pthread`), if that BLAS is OpenBLAS.
type SetThreads = unsafe extern "C" fn(c_int);
/// `openblas_get_num_threads` / `openblas_get_corename`.
type GetThreads = unsafe extern "C" fn() -> c_int;
type CoreName = unsafe extern "C" fn() -> *const c_char;

fn lookup(name: &std::ffi::CStr) -> *mut libc::c_void {
    // SAFETY: dlsym on the global namespace with a NUL-terminated name; the libraries it
    // searches (linked at start-up) are never unloaded.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// Sets OpenBLAS's thread count (process-wide) and returns the count it then reports, or
/// `None` when the BLAS in the process is not OpenBLAS.
pub fn set_blas_threads(threads: usize) -> Option<usize> {
    let set = lookup(c"openblas_set_num_threads");
    let get = lookup(c"openblas_get_num_threads");
    if set.is_null() || get.is_null() {
        return None;
    }
    // SAFETY: the symbols are OpenBLAS's `void openblas_set_num_threads(int)` and
    // `int openblas_get_num_threads(void)`; the count is positive.
    unsafe {
        let set: SetThreads = std::mem::transmute(set);
        let get: GetThreads = std::mem::transmute(get);
        set(threads.clamp(1, c_int::MAX as usize) as c_int);
        Some(get().max(0) as usize)
    }
}

/// OpenBLAS's kernel family (`openblas_get_corename`, e.g. "SkylakeX"), for reports.
pub fn blas_corename() -> Option<String> {
    let f = lookup(c"openblas_get_corename");
    if f.is_null() {
        return None;
    }
    // SAFETY: `char *openblas_get_corename(void)` returns a static NUL-terminated string.
    unsafe {
        let f: CoreName = std::mem::transmute(f);
        let p = f();
        (!p.is_null()).then(|| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}
