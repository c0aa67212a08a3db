//! Sequential tile kernels of the right-looking tiled Cholesky factorization (lower).
//!
//! | kernel  | operation                                   |
//! |---------|---------------------------------------------|
//! | POTRF   | `A_kk ← L_kk` with `L_kk L_kkᵀ = A_kk`      |
//! | TRSM    | `A_ik ← A_ik · L_kk⁻ᵀ`                      |
//! | SYRK    | `A_ii ← A_ii − A_ik A_ikᵀ` (lower triangle) |
//! | GEMM    | `A_ij ← A_ij − A_ik A_jkᵀ`                  |
//!
//! Three backends: [`Backend::Herd`] (the default: faer's POTRF and TRSM with herd's own GEMM
//! and SYRK kernels, [`herd_gemm`] and [`herd_syrk`]), [`Backend::Faer`] (always available, `Par::Seq`, i.e.
//! single-threaded) and,
//! with the `openblas` cargo feature, `Backend::OpenBlas` (the system `libopenblas`, e.g.
//! Debian `libopenblas-serial-dev`). Each kernel must stay on its core: the library the dynamic
//! loader picks at run time may be a threaded build even when the serial one was linked
//! (Debian's alternatives point `libopenblas.so.0` at `libopenblas0-pthread` once that is
//! installed), so on first use the backend asks OpenBLAS whether it is threaded and, if so,
//! sets its thread count to 1 (process-wide).
//!
//! The view-level faer kernels ([`faer_potrf`], [`faer_trsm`], [`faer_syrk`], [`faer_gemm`])
//! accept any strides; the [`Backend`] methods operate on [`Tile`]s and check shapes, returning
//! [`LaError::ShapeMismatch`] instead of panicking.
//!
//! POTRF only reads and writes the lower triangle of its tile (the strict upper triangle is left
//! as it was, like LAPACK's `dpotrf` with `UPLO = 'L'`); SYRK only updates the lower triangle.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch, LltError};
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::reborrow::ReborrowMut;
use faer::{Accum, MatMut, MatRef, Par};

use crate::{LaError, Tile};

/// In-place Cholesky of the lower triangle of `a` (single-threaded).
///
/// # Errors
/// `Err(j)` with the 0-based local column whose pivot is not positive (or not finite).
///
/// faer's in-place LLᵀ uses the strict upper triangle as workspace; it is saved and restored
/// here (`O(n²)` copies against `O(n³)` work) so that, as with LAPACK, only the lower triangle
/// changes.
pub fn faer_potrf(a: MatMut<'_, f64>) -> Result<(), usize> {
    faer_potrf_par(a, Par::Seq)
}

/// [`faer_potrf`] with faer's own parallelism `par` (e.g. `Par::rayon(2)`):
/// faer's parallel Cholesky of a whole matrix, the peer `herd la potrf`
/// compares with.
///
/// # Errors
/// As [`faer_potrf`].
pub fn faer_potrf_par(mut a: MatMut<'_, f64>, par: Par) -> Result<(), usize> {
    let n = a.nrows();
    let mut upper = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for j in 1..n {
        for i in 0..j {
            upper.push(a[(i, j)]);
        }
    }
    let mut mem = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par, Default::default()));
    let stack = MemStack::new(&mut mem);
    let res = match cholesky_in_place(a.rb_mut(), Default::default(), par, stack, Default::default()) {
        Ok(_) => Ok(()),
        Err(LltError::NonPositivePivot { index }) => Err(index),
    };
    let mut saved = upper.into_iter();
    for j in 1..n {
        for i in 0..j {
            if let Some(v) = saved.next() {
                a[(i, j)] = v;
            }
        }
    }
    res
}

/// `a ← a · l⁻ᵀ` with `l` lower triangular (its strict upper triangle is not read).
pub fn faer_trsm(l: MatRef<'_, f64>, a: MatMut<'_, f64>) {
    // X Lᵀ = B  ⇔  L Xᵀ = Bᵀ: solve in place on the transposed view of `a`.
    solve_lower_triangular_in_place(l, a.transpose_mut(), Par::Seq);
}

/// `c ← c − a aᵀ`, lower triangle of `c` only.
pub fn faer_syrk(a: MatRef<'_, f64>, c: MatMut<'_, f64>) {
    triangular::matmul(
        c,
        BlockStructure::TriangularLower,
        Accum::Add,
        a,
        BlockStructure::Rectangular,
        a.transpose(),
        BlockStructure::Rectangular,
        -1.0,
        Par::Seq,
    );
}

/// `c ← c − a bᵀ`.
pub fn faer_gemm(a: MatRef<'_, f64>, b: MatRef<'_, f64>, c: MatMut<'_, f64>) {
    matmul(c, Accum::Add, a, b.transpose(), -1.0, Par::Seq);
}

/// Tiles with a side (rows, columns or depth) below this go to faer's kernels in
/// [`Backend::Herd`]. One core of the 2-vCPU AVX-512 Xeon, `kernels_bench`, two runs, GFLOP/s
/// of herd's packed `C −= A·Bᵀ` against faer's: 256: 78.2, 77.3 against 80.5, 79.9; 288: 77.8,
/// 79.1 against 82.5, 78.2; 320: 79.3, 80.0 against 79.3, 77.9; 336: 82.3, 83.7 against 75.1,
/// 78.4; 384: 78.2, 80.9 against 67.6, 68.6. At 256 herd's distributed Cholesky (2 ranks × 1
/// thread, n = 8000) ran 3–6 % slower with herd's GEMM and SYRK than with faer's.
pub const HERD_TILE_MIN_SIDE: usize = 320;

/// `c ← c − a bᵀ` on the calling thread: herd's packed product with its AVX-512 micro-kernel
/// (as [`gemm`](crate::gemm) multiplies a block) where the CPU has AVX-512F and no side of the
/// product is below [`HERD_TILE_MIN_SIDE`], faer's sequential product ([`faer_gemm`])
/// elsewhere. Any strides.
pub fn herd_gemm(a: MatRef<'_, f64>, b: MatRef<'_, f64>, c: MatMut<'_, f64>) {
    if c.nrows().min(c.ncols()).min(a.ncols()) < HERD_TILE_MIN_SIDE {
        faer_gemm(a, b, c);
    } else {
        crate::gemm::sub_product(c, a, b.transpose());
    }
}

/// `c ← c − a aᵀ` on the lower triangle of `c` (with the diagonal; the strict upper triangle is
/// neither read nor written) on the calling thread: herd's packed product restricted to the
/// micro-tiles on and below the diagonal where [`herd_gemm`] would use it (AVX-512F, no side
/// below [`HERD_TILE_MIN_SIDE`]), [`faer_syrk`] elsewhere. Any strides.
pub fn herd_syrk(a: MatRef<'_, f64>, c: MatMut<'_, f64>) {
    let mut c = c;
    if c.nrows().min(a.ncols()) < HERD_TILE_MIN_SIDE || !crate::gemm::sub_syrk_lower_packed(c.rb_mut(), a) {
        faer_syrk(a, c);
    }
}

/// Which library implements the tile kernels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Backend {
    /// faer's POTRF and TRSM, and herd's own GEMM and SYRK kernels ([`herd_gemm`],
    /// [`herd_syrk`]), which carry most of a tiled factorization's work.
    #[default]
    Herd,
    /// faer, single-threaded (`Par::Seq`).
    Faer,
    /// The system OpenBLAS library (`dpotrf_`, `dtrsm_`, `dsyrk_`, `dgemm_`).
    #[cfg(feature = "openblas")]
    OpenBlas,
}

fn mismatch(what: &str) -> LaError {
    LaError::ShapeMismatch(what.to_string())
}

impl Backend {
    /// POTRF on a square tile.
    ///
    /// # Errors
    /// [`LaError::NotSquare`]; [`LaError::NotPositiveDefinite`] with the **local** column.
    pub fn potrf(self, a: &mut Tile) -> Result<(), LaError> {
        if a.rows() != a.cols() {
            return Err(LaError::NotSquare { rows: a.rows(), cols: a.cols() });
        }
        let res = match self {
            Backend::Herd | Backend::Faer => faer_potrf(a.as_faer_mut()),
            #[cfg(feature = "openblas")]
            Backend::OpenBlas => openblas::potrf(a)?,
        };
        res.map_err(|column| LaError::NotPositiveDefinite { column })
    }

    /// TRSM: `a ← a · l⁻ᵀ`, `l` a square lower-triangular tile with `l.rows() == a.cols()`.
    ///
    /// # Errors
    /// [`LaError::ShapeMismatch`] when the shapes do not agree.
    pub fn trsm(self, l: &Tile, a: &mut Tile) -> Result<(), LaError> {
        if l.rows() != l.cols() || l.rows() != a.cols() {
            return Err(mismatch("trsm: l must be square with a.cols() rows"));
        }
        match self {
            Backend::Herd | Backend::Faer => faer_trsm(l.as_faer(), a.as_faer_mut()),
            #[cfg(feature = "openblas")]
            Backend::OpenBlas => openblas::trsm(l, a)?,
        }
        Ok(())
    }

    /// SYRK: `c ← c − a aᵀ` on the lower triangle of the square tile `c` (`c.rows() == a.rows()`).
    ///
    /// # Errors
    /// [`LaError::ShapeMismatch`] when the shapes do not agree.
    pub fn syrk(self, a: &Tile, c: &mut Tile) -> Result<(), LaError> {
        if c.rows() != c.cols() || c.rows() != a.rows() {
            return Err(mismatch("syrk: c must be square with a.rows() rows"));
        }
        match self {
            Backend::Herd => herd_syrk(a.as_faer(), c.as_faer_mut()),
            Backend::Faer => faer_syrk(a.as_faer(), c.as_faer_mut()),
            #[cfg(feature = "openblas")]
            Backend::OpenBlas => openblas::syrk(a, c)?,
        }
        Ok(())
    }

    /// GEMM: `c ← c − a bᵀ` (`c` is `a.rows() × b.rows()`, `a.cols() == b.cols()`).
    ///
    /// # Errors
    /// [`LaError::ShapeMismatch`] when the shapes do not agree.
    pub fn gemm(self, a: &Tile, b: &Tile, c: &mut Tile) -> Result<(), LaError> {
        if a.cols() != b.cols() || c.rows() != a.rows() || c.cols() != b.rows() {
            return Err(mismatch("gemm: c must be a.rows() x b.rows() and a.cols() == b.cols()"));
        }
        match self {
            Backend::Herd => herd_gemm(a.as_faer(), b.as_faer(), c.as_faer_mut()),
            Backend::Faer => faer_gemm(a.as_faer(), b.as_faer(), c.as_faer_mut()),
            #[cfg(feature = "openblas")]
            Backend::OpenBlas => openblas::gemm(a, b, c)?,
        }
        Ok(())
    }
}

#[cfg(feature = "openblas")]
mod openblas {
    //! Direct bindings to the LP64 BLAS/LAPACK symbols exported by OpenBLAS. OpenBLAS implements
    //! these (including `dpotrf_`) in C, so no hidden Fortran string-length arguments are passed.
    use std::ffi::{c_char, c_int};

    use super::mismatch;
    use crate::{LaError, Tile};

    #[link(name = "openblas")]
    extern "C" {
        fn openblas_get_parallel() -> c_int;
        fn openblas_set_num_threads(n: c_int);
        #[cfg(test)]
        fn openblas_get_num_threads() -> c_int;
        fn dpotrf_(uplo: *const c_char, n: *const c_int, a: *mut f64, lda: *const c_int, info: *mut c_int);
        fn dtrsm_(
            side: *const c_char,
            uplo: *const c_char,
            transa: *const c_char,
            diag: *const c_char,
            m: *const c_int,
            n: *const c_int,
            alpha: *const f64,
            a: *const f64,
            lda: *const c_int,
            b: *mut f64,
            ldb: *const c_int,
        );
        fn dsyrk_(
            uplo: *const c_char,
            trans: *const c_char,
            n: *const c_int,
            k: *const c_int,
            alpha: *const f64,
            a: *const f64,
            lda: *const c_int,
            beta: *const f64,
            c: *mut f64,
            ldc: *const c_int,
        );
        fn dgemm_(
            transa: *const c_char,
            transb: *const c_char,
            m: *const c_int,
            n: *const c_int,
            k: *const c_int,
            alpha: *const f64,
            a: *const f64,
            lda: *const c_int,
            b: *const f64,
            ldb: *const c_int,
            beta: *const f64,
            c: *mut f64,
            ldc: *const c_int,
        );
    }

    /// Keeps OpenBLAS on the calling core (see the module documentation); once per process.
    fn single_threaded() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: OpenBLAS's own C functions, without arguments or with a positive count.
        ONCE.call_once(|| unsafe {
            if openblas_get_parallel() != 0 {
                openblas_set_num_threads(1);
            }
        });
    }

    fn int(x: usize) -> Result<c_int, LaError> {
        c_int::try_from(x).map_err(|_| mismatch("dimension does not fit a 32-bit BLAS integer"))
    }

    /// BLAS requires `ld >= max(1, rows)` even for empty matrices.
    fn ld(t: &Tile) -> Result<c_int, LaError> {
        int(t.rows().max(1))
    }

    const L: c_char = b'L' as c_char;
    const R: c_char = b'R' as c_char;
    const N: c_char = b'N' as c_char;
    const T: c_char = b'T' as c_char;

    pub(super) fn potrf(a: &mut Tile) -> Result<Result<(), usize>, LaError> {
        single_threaded();
        let (n, lda) = (int(a.cols())?, ld(a)?);
        if n == 0 {
            return Ok(Ok(()));
        }
        let mut info: c_int = 0;
        // SAFETY: `a` is an n x n column-major buffer of exactly n*n elements with leading
        // dimension lda = n (checked square by the caller); all scalar arguments point to live
        // locals; dpotrf_ reads/writes only the lower triangle within that buffer.
        unsafe { dpotrf_(&L, &n, a.data_mut().as_mut_ptr(), &lda, &mut info) };
        Ok(if info > 0 { Err(info as usize - 1) } else { Ok(()) })
    }

    pub(super) fn trsm(l: &Tile, a: &mut Tile) -> Result<(), LaError> {
        single_threaded();
        let (m, n, ldl, lda) = (int(a.rows())?, int(a.cols())?, ld(l)?, ld(a)?);
        if m == 0 || n == 0 {
            return Ok(());
        }
        let one = 1.0f64;
        // SAFETY: `a` is m x n with ld m and `l` is n x n with ld n (shapes checked by the caller),
        // both contiguous column-major buffers of exactly that size; `l` is only read, `a` is
        // written; scalars point to live locals.
        unsafe {
            dtrsm_(&R, &L, &T, &N, &m, &n, &one, l.data().as_ptr(), &ldl, a.data_mut().as_mut_ptr(), &lda)
        };
        Ok(())
    }

    pub(super) fn syrk(a: &Tile, c: &mut Tile) -> Result<(), LaError> {
        single_threaded();
        let (n, k, lda, ldc) = (int(c.rows())?, int(a.cols())?, ld(a)?, ld(c)?);
        if n == 0 {
            return Ok(());
        }
        let (alpha, beta) = (-1.0f64, 1.0f64);
        // SAFETY: `c` is n x n with ld n and `a` is n x k with ld n (shapes checked by the caller),
        // contiguous column-major buffers of exactly that size; `a` is read-only, distinct from
        // `c` (a `&` and a `&mut` cannot alias); scalars point to live locals.
        unsafe {
            dsyrk_(&L, &N, &n, &k, &alpha, a.data().as_ptr(), &lda, &beta, c.data_mut().as_mut_ptr(), &ldc)
        };
        Ok(())
    }

    pub(super) fn gemm(a: &Tile, b: &Tile, c: &mut Tile) -> Result<(), LaError> {
        single_threaded();
        let (m, n, k) = (int(c.rows())?, int(c.cols())?, int(a.cols())?);
        let (lda, ldb, ldc) = (ld(a)?, ld(b)?, ld(c)?);
        if m == 0 || n == 0 {
            return Ok(());
        }
        let (alpha, beta) = (-1.0f64, 1.0f64);
        // SAFETY: `a` is m x k (ld m), `b` is n x k (ld n), `c` is m x n (ld m), shapes checked by
        // the caller; contiguous column-major buffers of exactly that size; `a` and `b` are
        // read-only and cannot alias the exclusively borrowed `c`; scalars point to live locals.
        unsafe {
            dgemm_(
                &N,
                &T,
                &m,
                &n,
                &k,
                &alpha,
                a.data().as_ptr(),
                &lda,
                b.data().as_ptr(),
                &ldb,
                &beta,
                c.data_mut().as_mut_ptr(),
                &ldc,
            )
        };
        Ok(())
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Holds whichever OpenBLAS build the loader picked (CI installs both Debian's serial
        /// and pthread builds; the alternatives then pick the pthread one).
        #[test]
        fn kernels_keep_openblas_on_one_thread() {
            let (a, b) = (Tile::zeros(8, 8), Tile::zeros(8, 8));
            let mut c = Tile::zeros(8, 8);
            gemm(&a, &b, &mut c).unwrap();
            // SAFETY: OpenBLAS's own C functions, without arguments.
            let (parallel, threads) = unsafe { (openblas_get_parallel(), openblas_get_num_threads()) };
            assert_eq!(threads, 1, "OpenBLAS build {parallel} (0 serial, 1 pthreads, 2 OpenMP)");
        }
    }
}
