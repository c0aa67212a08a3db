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

/// The loaded library.
pub struct OpenBlas {
    dpotrf: Dpotrf,
    dgemm: Dgemm,
    set_threads: SetThreads,
    /// `dsygv_`, when the library has it.
    dsygv: Option<Dsygv>,
    /// The file loaded.
    pub path: String,
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

impl OpenBlas {
    /// Loads it, or says why not. Call before any other thread starts: on a
    /// CPU with the AVX-512 subsets of OpenBLAS's SkylakeX kernels, it sets
    /// `OPENBLAS_CORETYPE=SkylakeX` unless the user chose a core type
    /// (Debian's 0.3.21 takes AMD Zen 4 for a Haswell and would skip its
    /// AVX-512 kernels); elsewhere it leaves the choice to OpenBLAS.
    pub fn load() -> Result<OpenBlas, String> {
        if std::env::var_os("OPENBLAS_CORETYPE").is_none() && has_avx512_skylakex() {
            std::env::set_var("OPENBLAS_CORETYPE", "SkylakeX");
        }
        let mut last = String::new();
        for path in ["/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "libopenblas.so.0"] {
            let c = std::ffi::CString::new(path).expect("no NUL in a constant");
            // SAFETY: dlopen with a valid C string; the handle is never closed,
            // so symbols taken from it stay valid for the process.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
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
            // SAFETY: the type is the C signature of gfortran's LAPACK dsygv_.
            let dsygv = unsafe { symbol::<Dsygv>(h, c"dsygv_") };
            if let (Some(dpotrf), Some(dgemm), Some(set_threads)) = syms {
                return Ok(OpenBlas { dpotrf, dgemm, set_threads, dsygv, path: path.to_string() });
            }
            last = format!("{path} has no dpotrf_/dgemm_/openblas_set_num_threads");
        }
        Err(format!("{last} (install libopenblas0-pthread)"))
    }

    /// The core type OpenBLAS was told to use, for reports.
    pub fn coretype() -> Option<String> {
        std::env::var("OPENBLAS_CORETYPE").ok()
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

    /// `dsygv(itype 1, jobz 'V', uplo 'L')` of copies of `a` and `b` on
    /// `threads` threads (the workspace queried first, outside the timing):
    /// the eigenvectors, the eigenvalues and seconds.
    pub fn sygv(&self, a: &Mat<f64>, b: &Mat<f64>, threads: usize) -> CliResult<(Mat<f64>, Vec<f64>, f64)> {
        let dsygv = self.dsygv.ok_or_else(|| CliError::Verify(format!("{} has no dsygv_", self.path)))?;
        let (mut z, mut l) = (a.clone(), b.clone());
        let nn = z.nrows();
        if z.ncols() != nn || l.nrows() != nn || l.ncols() != nn {
            return Err(CliError::Usage("OpenBLAS dsygv: A and B must be square of one order".into()));
        }
        let n = lp64(nn)?;
        let lda = leading(nn, z.col_stride())?;
        let ldb = leading(nn, l.col_stride())?;
        let mut w = vec![0.0; nn];
        let (itype, mut info, mut query) = (1i32, 0i32, 0.0f64);
        // SAFETY: z and l are n×n column-major (faer's Mat: unit row stride)
        // with leading dimensions lda and ldb, w has n entries; lwork = -1
        // only writes the optimal workspace size into `query`.
        unsafe {
            (self.set_threads)(threads.max(1) as i32);
            dsygv(
                &itype,
                b"V".as_ptr(),
                b"L".as_ptr(),
                &n,
                z.as_ptr_mut(),
                &lda,
                l.as_ptr_mut(),
                &ldb,
                w.as_mut_ptr(),
                &mut query,
                &-1,
                &mut info,
                1,
                1,
            );
        }
        if info != 0 {
            return Err(CliError::Verify(format!("OpenBLAS dsygv workspace query: info = {info}")));
        }
        let lwork = lp64((query as usize).max(3 * nn).max(1))?;
        let mut work = vec![0.0; lwork as usize];
        // SAFETY: as above, with `work` of `lwork` entries.
        let secs = unsafe {
            let start = Instant::now();
            dsygv(
                &itype,
                b"V".as_ptr(),
                b"L".as_ptr(),
                &n,
                z.as_ptr_mut(),
                &lda,
                l.as_ptr_mut(),
                &ldb,
                w.as_mut_ptr(),
                work.as_mut_ptr(),
                &lwork,
                &mut info,
                1,
                1,
            );
            start.elapsed().as_secs_f64()
        };
        if info != 0 {
            return Err(CliError::Verify(format!("OpenBLAS dsygv: info = {info}")));
        }
        Ok((z, w, secs))
    }
}
