//! OpenBLAS's threaded BLAS/LAPACK as a contender of `herd la`: loaded at run
//! time (Debian's `libopenblas0-pthread`) so that herd does not link it.

use crate::error::CliError;
use crate::CliResult;
use faer::{Mat, MatMut, MatRef};
use std::time::Instant;

/// LAPACK's `dpotrf_`.
type Dpotrf = unsafe extern "C" fn(*const u8, *const i32, *mut f64, *const i32, *mut i32);
/// BLAS's `dgemm_` (OpenBLAS implements it in C: no hidden string lengths).
type Dgemm = unsafe extern "C" fn(
    *const u8,
    *const u8,
    *const i32,
    *const i32,
    *const i32,
    *const f64,
    *const f64,
    *const i32,
    *const f64,
    *const i32,
    *const f64,
    *mut f64,
    *const i32,
);
/// LAPACK's `dgeqrf_` (`m, n, a, lda, tau, work, lwork, info`).
type Dgeqrf = unsafe extern "C" fn(
    *const i32,
    *const i32,
    *mut f64,
    *const i32,
    *mut f64,
    *mut f64,
    *const i32,
    *mut i32,
);
/// LAPACK's `dgetrf_`.
type Dgetrf = unsafe extern "C" fn(*const i32, *const i32, *mut f64, *const i32, *mut i32, *mut i32);
/// LAPACK's `dsygv_` (gfortran-compiled: the two hidden string lengths last).
type Dsygv = unsafe extern "C" fn(
    *const i32,
    *const u8,
    *const u8,
    *const i32,
    *mut f64,
    *const i32,
    *mut f64,
    *const i32,
    *mut f64,
    *mut f64,
    *const i32,
    *mut i32,
    usize,
    usize,
);
/// `openblas_set_num_threads`.
type SetThreads = unsafe extern "C" fn(i32);
/// `openblas_get_corename`: the kernels OpenBLAS chose.
type CoreName = unsafe extern "C" fn() -> *const libc::c_char;

/// The loaded library.
pub struct OpenBlas {
    dpotrf: Dpotrf,
    dgemm: Dgemm,
    set_threads: SetThreads,
    /// The file loaded.
    pub path: String,
    /// The kernels it runs (`openblas_get_corename`), for reports.
    pub core: Option<String>,
}

/// OpenBLAS's SkylakeX kernels need these (AVX-512 F, CD, BW, DQ, VL).
fn has_avx512_skylakex() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512cd")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `sym` from the live handle `h`, as the function pointer type `F`.
///
/// # Safety
/// `F` must be the function pointer type of the C function `sym` names.
unsafe fn symbol<F: Copy>(h: *mut libc::c_void, sym: &std::ffi::CStr) -> Option<F> {
    // SAFETY: `h` is a live handle and `sym` NUL-terminated.
    let p = unsafe { libc::dlsym(h, sym.as_ptr()) };
    // SAFETY: a non-null symbol address of a function whose type the caller
    // vouches for; function pointers and data pointers have one size here.
    (!p.is_null()).then(|| unsafe { std::mem::transmute_copy::<*mut libc::c_void, F>(&p) })
}

/// An `i32` dimension for LAPACK (OpenBLAS's LP64 interface).
fn lp64(x: usize) -> CliResult<i32> {
    i32::try_from(x).map_err(|_| CliError::Usage(format!("dimension {x} exceeds OpenBLAS's 32-bit integers")))
}

/// A column-major view's leading dimension (unit row stride), at least 1.
fn leading(rows: usize, col_stride: isize) -> CliResult<i32> {
    lp64(usize::try_from(col_stride).unwrap_or(0).max(rows).max(1))
}

/// The kernels the OpenBLAS behind handle `h` runs, when it says.
///
/// # Safety
/// `h` must be a live handle of a library whose `openblas_get_corename`, if
/// any, has OpenBLAS's signature.
unsafe fn core_name(h: *mut libc::c_void) -> Option<String> {
    // SAFETY: as the caller vouches.
    let f = unsafe { symbol::<CoreName>(h, c"openblas_get_corename") }?;
    // SAFETY: OpenBLAS returns a static NUL-terminated string (or null).
    let p = unsafe { f() };
    // SAFETY: non-null, NUL-terminated, static.
    (!p.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// On a CPU with the AVX-512 subsets of OpenBLAS's SkylakeX kernels, and
/// unless the user chose a core type, makes OpenBLAS use them: Debian's
/// 0.3.21 takes AMD Zen 4 for a Haswell and a Sapphire Rapids (family 6
/// model 207) for a Prescott, whose generic kernels ran `dgemm` at 105
/// GFLOP/s on 16 cores where SkylakeX's reach 608 (BENCHMARKS.md, session
/// 36). OpenBLAS reads `OPENBLAS_CORETYPE` once, when it is loaded; this
/// binary links the system LAPACK, so OpenBLAS is usually loaded before
/// `main`, and setting the variable then changes nothing. So when the
/// loaded OpenBLAS chose other kernels, the variable is set and the program
/// executes itself again (before any thread or output exists); the second
/// run finds the variable set and goes on. If that exec fails, the run goes
/// on with the kernels OpenBLAS chose, and the report names them.
fn choose_skylakex() {
    if std::env::var_os("OPENBLAS_CORETYPE").is_some() || !has_avx512_skylakex() {
        return;
    }
    std::env::set_var("OPENBLAS_CORETYPE", "SkylakeX");
    let c = std::ffi::CString::new("libopenblas.so.0").expect("no NUL in a constant");
    // SAFETY: dlopen with a valid C string; RTLD_NOLOAD only finds a library
    // the process has, and the handle is never closed.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_NOLOAD) };
    if h.is_null() {
        return; // Loaded later, it reads the variable set above.
    }
    // SAFETY: a live handle of libopenblas.so.0.
    let core = unsafe { core_name(h) }.unwrap_or_default().to_ascii_lowercase();
    if ["skylakex", "cooperlake", "sapphirerapids"].contains(&core.as_str()) {
        return;
    }
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_default();
    if let Ok(exe) = std::env::current_exe() {
        let err = std::process::Command::new(exe).arg0(arg0).args(args).exec();
        eprintln!("herd la: OpenBLAS keeps its {core} kernels (re-executing with OPENBLAS_CORETYPE=SkylakeX failed: {err})");
    }
}

impl OpenBlas {
    /// Loads it, or says why not. Call before any other thread starts or
    /// anything is printed: it may execute the program again to give
    /// OpenBLAS its AVX-512 kernels (`choose_skylakex`).
    pub fn load() -> Result<OpenBlas, String> {
        choose_skylakex();
        let mut last = String::new();
        // An OpenBLAS the process already has (this binary links the system
        // LAPACK, which may be OpenBLAS) comes first: a second copy from
        // another path runs beside it with its own thread pool and state,
        // and with two versions (a device whose system OpenBLAS was 0.3.26
        // while LD_LIBRARY_PATH gave 0.3.21) its dgemm crashed in a packing
        // routine of the other copy.
        let tries = [
            ("libopenblas.so.0", libc::RTLD_NOLOAD),
            ("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", 0),
            ("libopenblas.so.0", 0),
        ];
        for (path, extra) in tries {
            let c = std::ffi::CString::new(path).expect("no NUL in a constant");
            // SAFETY: dlopen with a valid C string; the handle is never closed,
            // so symbols taken from it stay valid for the process.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL | extra) };
            if h.is_null() && extra != 0 {
                continue;
            }
            if h.is_null() {
                last = format!("cannot load {path}");
                continue;
            }
            // SAFETY: the types are the C signatures of LAPACK's dpotrf_,
            // BLAS's dgemm_ and OpenBLAS's openblas_set_num_threads.
            let syms = unsafe {
                (
                    symbol::<Dpotrf>(h, c"dpotrf_"),
                    symbol::<Dgemm>(h, c"dgemm_"),
                    symbol::<SetThreads>(h, c"openblas_set_num_threads"),
                )
            };
            if let (Some(dpotrf), Some(dgemm), Some(set_threads)) = syms {
                // SAFETY: a live handle; the symbol is OpenBLAS's
                // `char *openblas_get_corename(void)`, which returns a static
                // NUL-terminated string.
                let core = unsafe { core_name(h) };
                return Ok(OpenBlas { dpotrf, dgemm, set_threads, path: path.to_string(), core });
            }
            last = format!("{path} has no dpotrf_/dgemm_/openblas_set_num_threads");
        }
        Err(format!("{last} (install libopenblas0-pthread)"))
    }

    /// `dpotrf('L')` of a copy of `a` on `threads` threads: the factor
    /// (lower triangle; the strict upper one keeps `a`'s) and seconds.
    pub fn potrf(&self, a: &Mat<f64>, threads: usize) -> CliResult<(Mat<f64>, f64)> {
        let mut l = a.clone();
        let n = lp64(l.nrows())?;
        let lda = leading(l.nrows(), l.col_stride())?;
        let mut info = 0i32;
        // SAFETY: `l` is n×n column-major (unit row stride) with leading
        // dimension `lda`, as dpotrf reads and writes it; the thread count is
        // positive.
        let secs = unsafe {
            (self.set_threads)(threads.max(1) as i32);
            let start = Instant::now();
            (self.dpotrf)(b"L".as_ptr(), &n, l.as_ptr_mut(), &lda, &mut info);
            start.elapsed().as_secs_f64()
        };
        if info != 0 {
            return Err(CliError::Verify(format!("OpenBLAS dpotrf: info = {info}")));
        }
        Ok((l, secs))
    }

    /// `c ← α·a·op(b) + β·c` (`op(b) = bᵀ` when `b_trans`) on `threads`
    /// threads: seconds.
    pub fn gemm(
        &self,
        alpha: f64,
        a: MatRef<'_, f64>,
        (b, b_trans): (MatRef<'_, f64>, bool),
        beta: f64,
        c: MatMut<'_, f64>,
        threads: usize,
    ) -> CliResult<f64> {
        let col_major = a.row_stride() == 1 && b.row_stride() == 1 && c.row_stride() == 1;
        let k = a.ncols();
        let b_shape = if b_trans { (c.ncols(), k) } else { (k, c.ncols()) };
        if !col_major || a.nrows() != c.nrows() || (b.nrows(), b.ncols()) != b_shape {
            return Err(CliError::Usage("OpenBLAS dgemm: operands must be column-major and conform".into()));
        }
        let (m, n, kk) = (lp64(c.nrows())?, lp64(c.ncols())?, lp64(k)?);
        let lda = leading(a.nrows(), a.col_stride())?;
        let ldb = leading(b.nrows(), b.col_stride())?;
        let ldc = leading(c.nrows(), c.col_stride())?;
        let tb = if b_trans { b"T" } else { b"N" };
        // SAFETY: a (m×k), b (k×n or n×k) and c (m×n) are column-major with
        // unit row stride and the leading dimensions given, checked above to
        // conform; c is exclusively borrowed; the thread count is positive.
        let secs = unsafe {
            (self.set_threads)(threads.max(1) as i32);
            let start = Instant::now();
            (self.dgemm)(
                b"N".as_ptr(),
                tb.as_ptr(),
                &m,
                &n,
                &kk,
                &alpha,
                a.as_ptr(),
                &lda,
                b.as_ptr(),
                &ldb,
                &beta,
                c.as_ptr_mut(),
                &ldc,
            );
            start.elapsed().as_secs_f64()
        };
        Ok(secs)
    }

    /// `dgeqrf` of a copy of `a` on `threads` threads (workspace size queried
    /// first with `lwork = −1`, outside the timing): the factored matrix,
    /// `tau` and the seconds of the factorization.
    pub fn geqrf(&self, a: &Mat<f64>, threads: usize) -> CliResult<(Mat<f64>, Vec<f64>, f64)> {
        // SAFETY: `Dgeqrf` is the C signature of LAPACK's dgeqrf_.
        let dgeqrf = unsafe { self.lookup::<Dgeqrf>(c"dgeqrf_") }?;
        let mut qr = a.clone();
        let (m, n) = (lp64(qr.nrows())?, lp64(qr.ncols())?);
        let lda = leading(qr.nrows(), qr.col_stride())?;
        let mut tau = vec![0.0; qr.nrows().min(qr.ncols())];
        let (mut info, mut query, minus_one) = (0i32, 0.0f64, -1i32);
        // SAFETY: a workspace query (lwork = −1) writes only `query` and
        // `info`; the dimensions are those of `qr` (column-major, unit row
        // stride, leading dimension `lda`).
        unsafe {
            (self.set_threads)(threads.max(1) as i32);
            dgeqrf(&m, &n, qr.as_ptr_mut(), &lda, tau.as_mut_ptr(), &mut query, &minus_one, &mut info);
        }
        if info != 0 {
            return Err(CliError::Verify(format!("OpenBLAS dgeqrf workspace query: info = {info}")));
        }
        let lwork = lp64((query as usize).max(1))?;
        let mut work = vec![0.0; lwork as usize];
        // SAFETY: `qr` is m×n column-major with leading dimension `lda`,
        // `tau` has min(m, n) entries and `work` `lwork`, as dgeqrf reads
        // and writes them.
        let secs = unsafe {
            let start = Instant::now();
            dgeqrf(&m, &n, qr.as_ptr_mut(), &lda, tau.as_mut_ptr(), work.as_mut_ptr(), &lwork, &mut info);
            start.elapsed().as_secs_f64()
        };
        if info != 0 {
            return Err(CliError::Verify(format!("OpenBLAS dgeqrf: info = {info}")));
        }
        Ok((qr, tau, secs))
    }

    /// A symbol of the library already loaded, looked up when first needed
    /// (so that routines added later need no field of their own).
    ///
    /// # Safety
    /// `F` must be the function pointer type of the C function `sym` names.
    unsafe fn lookup<F: Copy>(&self, sym: &std::ffi::CStr) -> CliResult<F> {
        let missing = || CliError::Usage(format!("{} has no {}", self.path, sym.to_string_lossy()));
        let c = std::ffi::CString::new(self.path.as_str()).map_err(|_| missing())?;
        // SAFETY: RTLD_NOLOAD returns the handle of the library `load`
        // loaded (and never closed) without loading anything.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if h.is_null() {
            return Err(missing());
        }
        // SAFETY: a live handle; the caller vouches for `F`.
        let f = unsafe { symbol::<F>(h, sym) };
        // SAFETY: drops only the reference this dlopen took; `load`'s
        // reference keeps the library, and so `f`, loaded.
        unsafe { libc::dlclose(h) };
        f.ok_or_else(missing)
    }

    /// `dgetrf` of a copy of `a` (any shape) on `threads` threads: the
    /// factors, the pivots made 0-based, LAPACK's `info` and seconds.
    pub fn getrf(&self, a: &Mat<f64>, threads: usize) -> CliResult<(Mat<f64>, Vec<usize>, i32, f64)> {
        // SAFETY: `Dgetrf` is the C signature of LAPACK's dgetrf_.
        let dgetrf = unsafe { self.lookup::<Dgetrf>(c"dgetrf_") }?;
        let mut lu = a.clone();
        let (m, n) = (lp64(lu.nrows())?, lp64(lu.ncols())?);
        let lda = leading(lu.nrows(), lu.col_stride())?;
        let mut ipiv = vec![0i32; lu.nrows().min(lu.ncols())];
        let mut info = 0i32;
        // SAFETY: `lu` is m×n column-major (unit row stride) with leading
        // dimension `lda`, and `ipiv` holds min(m, n) entries, as dgetrf
        // reads and writes them; the thread count is positive.
        let secs = unsafe {
            (self.set_threads)(threads.max(1) as i32);
            let start = Instant::now();
            dgetrf(&m, &n, lu.as_ptr_mut(), &lda, ipiv.as_mut_ptr(), &mut info);
            start.elapsed().as_secs_f64()
        };
        if info < 0 {
            return Err(CliError::Verify(format!("OpenBLAS dgetrf: info = {info}")));
        }
        let ipiv = ipiv.iter().map(|&p| usize::try_from(p - 1).unwrap_or(usize::MAX)).collect();
        Ok((lu, ipiv, info, secs))
    }

    /// `dsygv(itype 1, jobz 'V', uplo 'L')` of copies of `a` and `b` on
    /// `threads` threads (the workspace queried first, outside the timing):
    /// the eigenvectors, the eigenvalues and seconds.
    pub fn sygv(&self, a: &Mat<f64>, b: &Mat<f64>, threads: usize) -> CliResult<(Mat<f64>, Vec<f64>, f64)> {
        // SAFETY: `Dsygv` is the C signature of gfortran's LAPACK dsygv_.
        let dsygv = unsafe { self.lookup::<Dsygv>(c"dsygv_") }?;
        let (mut z, mut l) = (a.clone(), b.clone());
        let nn = z.nrows();
        if z.ncols() != nn || l.nrows() != nn || l.ncols() != nn {
            return Err(CliError::Usage("OpenBLAS dsygv: A and B must be square of one order".into()));
        }
        let n = lp64(nn)?;
        let lda = leading(nn, z.col_stride())?;
        let ldb = leading(nn, l.col_stride())?;
        let mut w = vec![0.0; nn];
        let (z_ptr, l_ptr, w_ptr) = (z.as_ptr_mut(), l.as_ptr_mut(), w.as_mut_ptr());
        // One call of dsygv (itype 1, jobz 'V', uplo 'L') with the workspace
        // `work` of `lwork` entries (`lwork = -1`: the size query); its info.
        let call = |work: *mut f64, lwork: i32| -> i32 {
            let mut info = 0;
            // SAFETY: z and l are n×n column-major (faer's Mat: unit row
            // stride) with leading dimensions lda and ldb, w has n entries,
            // `work` holds `lwork` entries (one for the query).
            unsafe {
                dsygv(
                    &1,
                    b"V".as_ptr(),
                    b"L".as_ptr(),
                    &n,
                    z_ptr,
                    &lda,
                    l_ptr,
                    &ldb,
                    w_ptr,
                    work,
                    &lwork,
                    &mut info,
                    1,
                    1,
                )
            };
            info
        };
        let mut query = 0.0f64;
        // SAFETY: a positive thread count.
        unsafe { (self.set_threads)(threads.max(1) as i32) };
        let info = call(&mut query, -1);
        if info != 0 {
            return Err(CliError::Verify(format!("OpenBLAS dsygv workspace query: info = {info}")));
        }
        let lwork = lp64((query as usize).max(3 * nn).max(1))?;
        let mut work = vec![0.0; lwork as usize];
        let start = Instant::now();
        let info = call(work.as_mut_ptr(), lwork);
        let secs = start.elapsed().as_secs_f64();
        if info != 0 {
            return Err(CliError::Verify(format!("OpenBLAS dsygv: info = {info}")));
        }
        Ok((z, w, secs))
    }
}
