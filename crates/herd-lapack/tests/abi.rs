//! The entry points called as C and Fortran call them: results against faer
//! and herd-la's checks, LAPACK's `INFO` codes for bad arguments, both
//! layouts of the C interfaces.

use faer::Mat;
use herd_la::{random_matrix, random_spd, residual};
use herd_lapack::blas::dgemm_;
use herd_lapack::cblas::{self, cblas_dgemm};
use herd_lapack::lapack::dpotrf_;
use herd_lapack::lapacke::{self, LAPACKE_dpotrf, LAPACKE_dpotrf_work};
use std::ffi::c_char;

/// A matrix stored column-major with leading dimension `ld ≥ rows`, padding
/// filled with a sentinel that must survive every call.
struct Padded {
    rows: usize,
    cols: usize,
    ld: usize,
    data: Vec<f64>,
}

const SENTINEL: f64 = -7.25e300;

impl Padded {
    fn new(m: &Mat<f64>, ld: usize) -> Padded {
        let (rows, cols) = (m.nrows(), m.ncols());
        let mut data = vec![SENTINEL; ld * cols.max(1)];
        for j in 0..cols {
            for i in 0..rows {
                data[i + j * ld] = m[(i, j)];
            }
        }
        Padded { rows, cols, ld, data }
    }
    fn mat(&self) -> Mat<f64> {
        Mat::from_fn(self.rows, self.cols, |i, j| self.data[i + j * self.ld])
    }
    fn padding_intact(&self) -> bool {
        (0..self.cols).all(|j| (self.rows..self.ld).all(|i| self.data[i + j * self.ld] == SENTINEL))
    }
    fn ld(&self) -> i32 {
        self.ld as i32
    }
}

fn ch(c: u8) -> c_char {
    c as c_char
}

fn max_abs_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    let mut d = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            d = d.max((a[(i, j)] - b[(i, j)]).abs());
        }
    }
    d
}

/// `α·op(A)·op(B) + β·C` by the definition.
fn gemm_ref(ta: bool, tb: bool, alpha: f64, a: &Mat<f64>, b: &Mat<f64>, beta: f64, c: &Mat<f64>) -> Mat<f64> {
    let opa = |i: usize, l: usize| if ta { a[(l, i)] } else { a[(i, l)] };
    let opb = |l: usize, j: usize| if tb { b[(j, l)] } else { b[(l, j)] };
    let k = if ta { a.nrows() } else { a.ncols() };
    Mat::from_fn(c.nrows(), c.ncols(), |i, j| {
        let s: f64 = (0..k).map(|l| opa(i, l) * opb(l, j)).sum();
        alpha * s + if beta == 0.0 { 0.0 } else { beta * c[(i, j)] }
    })
}

#[test]
fn dgemm_matches_the_definition_for_every_transpose_and_odd_leading_dimensions() {
    for &(m, n, k) in &[(1, 1, 1), (7, 5, 3), (65, 64, 66), (200, 130, 90), (3, 0, 4), (0, 3, 4), (4, 3, 0)] {
        for (ta, tb) in [(b'N', b'N'), (b'T', b'N'), (b'n', b't'), (b'C', b'T')] {
            let (ta_t, tb_t) = (!ta.eq_ignore_ascii_case(&b'N'), !tb.eq_ignore_ascii_case(&b'N'));
            let a = if ta_t { random_matrix(k, m, 1) } else { random_matrix(m, k, 1) };
            let b = if tb_t { random_matrix(n, k, 2) } else { random_matrix(k, n, 2) };
            let c0 = random_matrix(m, n, 3);
            let (pa, pb) = (Padded::new(&a, a.nrows() + 3), Padded::new(&b, b.nrows() + 1));
            let mut pc = Padded::new(&c0, m + 2);
            let (alpha, beta) = (0.75, -1.5);
            let (mi, ni, ki) = (m as i32, n as i32, k as i32);
            // SAFETY: every buffer holds its shape at its leading dimension.
            unsafe {
                dgemm_(
                    &ch(ta),
                    &ch(tb),
                    &mi,
                    &ni,
                    &ki,
                    &alpha,
                    pa.data.as_ptr(),
                    &pa.ld(),
                    pb.data.as_ptr(),
                    &pb.ld(),
                    &beta,
                    pc.data.as_mut_ptr(),
                    &pc.ld(),
                )
            };
            let want = gemm_ref(ta_t, tb_t, alpha, &a, &b, beta, &c0);
            let tol = 1e-13 * (k.max(1) as f64);
            assert!(max_abs_diff(&pc.mat(), &want) <= tol, "dgemm {m}x{n}x{k} {}{}", ta as char, tb as char);
            assert!(pc.padding_intact());
        }
    }
}

#[test]
fn dgemm_beta_zero_ignores_nan_in_c_and_bad_arguments_leave_c_untouched() {
    let (a, b) = (Padded::new(&random_matrix(4, 3, 1), 4), Padded::new(&random_matrix(3, 5, 2), 3));
    let mut c = vec![f64::NAN; 20];
    let (m, n, k, ld_a, ld_b, ld_c) = (4, 5, 3, 4, 3, 4);
    // SAFETY: the buffers hold the shapes given.
    unsafe {
        dgemm_(
            &ch(b'N'),
            &ch(b'N'),
            &m,
            &n,
            &k,
            &1.0,
            a.data.as_ptr(),
            &ld_a,
            b.data.as_ptr(),
            &ld_b,
            &0.0,
            c.as_mut_ptr(),
            &ld_c,
        )
    };
    assert!(c.iter().all(|x| x.is_finite()));
    // A bad TRANSA, a negative K, an LDC below M: C is not written.
    let mut c2 = vec![3.0; 20];
    for (ta, kk, ldc) in [(b'X', 3, 4), (b'N', -1, 4), (b'N', 3, 3)] {
        // SAFETY: as above; the call returns before reading anything.
        unsafe {
            dgemm_(
                &ch(ta),
                &ch(b'N'),
                &m,
                &n,
                &kk,
                &1.0,
                a.data.as_ptr(),
                &ld_a,
                b.data.as_ptr(),
                &ld_b,
                &0.0,
                c2.as_mut_ptr(),
                &ldc,
            )
        };
        assert!(c2.iter().all(|&x| x == 3.0));
    }
}

#[test]
fn cblas_dgemm_row_major_is_the_row_major_product() {
    let (m, n, k) = (37, 23, 19);
    // Row-major A (m×k, lda = k + 2), B (k×n, ldb = n), C (m×n, ldc = n + 1).
    let (lda, ldb, ldc) = (k + 2, n, n + 1);
    let a: Vec<f64> = (0..m * lda).map(|x| ((x * 7) % 13) as f64 - 6.0).collect();
    let b: Vec<f64> = (0..k * ldb).map(|x| ((x * 5) % 11) as f64 - 5.0).collect();
    let mut c = vec![1.0; m * ldc];
    // SAFETY: the row-major buffers hold their shapes.
    unsafe {
        cblas_dgemm(
            cblas::ROW_MAJOR,
            111,
            111,
            m as i32,
            n as i32,
            k as i32,
            2.0,
            a.as_ptr(),
            lda as i32,
            b.as_ptr(),
            ldb as i32,
            0.5,
            c.as_mut_ptr(),
            ldc as i32,
        )
    };
    for i in 0..m {
        for j in 0..n {
            let s: f64 = (0..k).map(|l| a[i * lda + l] * b[l * ldb + j]).sum();
            assert_eq!(c[i * ldc + j], 2.0 * s + 0.5, "({i}, {j})");
        }
        assert_eq!(c[i * ldc + n], 1.0, "padding of row {i}");
    }
}

/// `dpotrf_` on `a` (padded to `ld`) with `uplo`; the INFO and the result.
fn dpotrf(uplo: u8, a: &Mat<f64>, ld: usize) -> (i32, Padded) {
    let mut p = Padded::new(a, ld);
    let n = a.nrows() as i32;
    let mut info = 12345;
    // SAFETY: `p` holds n columns of `ld` values.
    unsafe { dpotrf_(&ch(uplo), &n, p.data.as_mut_ptr(), &p.ld(), &mut info) };
    (info, p)
}

#[test]
fn dpotrf_factors_both_triangles_in_place_and_leaves_the_other_alone() {
    for &n in &[0usize, 1, 2, 7, 64, 65, 129, 513, 1000] {
        let a = random_spd(n, n as u64 + 1);
        for uplo in [b'L', b'U', b'l', b'u'] {
            let (info, p) = dpotrf(uplo, &a, n + 3);
            assert_eq!(info, 0, "n = {n}, uplo {}", uplo as char);
            assert!(p.padding_intact());
            let f = p.mat();
            let lower = uplo.eq_ignore_ascii_case(&b'L');
            // The other triangle keeps the input.
            for j in 0..n {
                for i in 0..n {
                    if (lower && i < j) || (!lower && i > j) {
                        assert_eq!(f[(i, j)], a[(i, j)], "n = {n}: ({i}, {j}) changed");
                    }
                }
            }
            let l = if lower { f.clone() } else { f.transpose().to_owned() };
            let r = residual(a.as_ref(), l.as_ref()).unwrap();
            assert!(r < 30.0, "n = {n}, uplo {}: residual {r}", uplo as char);
        }
    }
}

#[test]
fn dpotrf_reports_the_first_failing_minor_and_bad_arguments() {
    // Leading minor of order 3 not positive definite (tiled path and kernel path).
    for &n in &[10usize, 300] {
        let mut a = random_spd(n, 5);
        a[(2, 2)] = -1.0;
        let (info, _) = dpotrf(b'L', &a, n);
        assert_eq!(info, 3, "n = {n}");
        // A NaN at (r, c), r > c: column r's pivot is the first it reaches.
        let mut b = random_spd(n, 6);
        b[(7, 4)] = f64::NAN;
        b[(4, 7)] = f64::NAN;
        assert_eq!(dpotrf(b'L', &b, n).0, 8, "n = {n}");
        assert_eq!(dpotrf(b'U', &b, n).0, 8, "n = {n}");
    }
    let a = random_spd(4, 1);
    let mut p = Padded::new(&a, 4);
    let mut info = 0;
    // SAFETY: `p` holds the 4×4 matrix; the bad arguments are caught first.
    unsafe {
        dpotrf_(&ch(b'X'), &4, p.data.as_mut_ptr(), &4, &mut info);
        assert_eq!(info, -1);
        dpotrf_(&ch(b'L'), &-1, p.data.as_mut_ptr(), &4, &mut info);
        assert_eq!(info, -2);
        dpotrf_(&ch(b'L'), &4, p.data.as_mut_ptr(), &3, &mut info);
        assert_eq!(info, -4);
        dpotrf_(&ch(b'L'), &4, p.data.as_mut_ptr(), std::ptr::null(), &mut info);
        assert_eq!(info, -4);
    }
    assert_eq!(p.mat(), a, "a bad argument leaves A alone");
}

#[test]
fn lapacke_dpotrf_both_layouts_nan_check_and_argument_numbers() {
    let n = 150;
    let a = random_spd(n, 9);
    // Column-major through LAPACKE equals dpotrf_.
    let (_, want) = dpotrf(b'L', &a, n);
    let mut col = Padded::new(&a, n);
    // SAFETY: `col` holds n columns of n.
    let info =
        unsafe { LAPACKE_dpotrf(lapacke::COL_MAJOR, ch(b'L'), n as i32, col.data.as_mut_ptr(), n as i32) };
    assert_eq!(info, 0);
    assert_eq!(col.mat(), want.mat());
    // Row-major 'L' of A is column-major 'U' of Aᵀ = A: the same numbers
    // land transposed.
    let mut row: Vec<f64> = (0..n * n).map(|x| a[(x / n, x % n)]).collect();
    // SAFETY: `row` holds n rows of n.
    let info = unsafe { LAPACKE_dpotrf(lapacke::ROW_MAJOR, ch(b'L'), n as i32, row.as_mut_ptr(), n as i32) };
    assert_eq!(info, 0);
    let l = Mat::from_fn(n, n, |i, j| if i >= j { row[i * n + j] } else { 0.0 });
    assert!(residual(a.as_ref(), l.as_ref()).unwrap() < 30.0);
    // NaN in the referenced triangle: −4 without touching A; in the other
    // triangle: ignored by the check.
    let mut bad = Padded::new(&a, n);
    bad.data[5] = f64::NAN; // (5, 0): lower triangle
    let before = bad.data.clone();
    // SAFETY: as above.
    let info =
        unsafe { LAPACKE_dpotrf(lapacke::COL_MAJOR, ch(b'L'), n as i32, bad.data.as_mut_ptr(), n as i32) };
    assert_eq!(info, -4);
    assert!(before.iter().zip(&bad.data).all(|(x, y)| x.to_bits() == y.to_bits()));
    // SAFETY: as above.
    let info =
        unsafe { LAPACKE_dpotrf(lapacke::COL_MAJOR, ch(b'U'), n as i32, bad.data.as_mut_ptr(), n as i32) };
    assert_eq!(info, 0);
    // Argument numbers count matrix_layout as the first.
    // SAFETY: the bad arguments are caught before `a` is read.
    unsafe {
        assert_eq!(LAPACKE_dpotrf_work(7, ch(b'L'), 4, col.data.as_mut_ptr(), 4), -1);
        assert_eq!(LAPACKE_dpotrf_work(lapacke::COL_MAJOR, ch(b'Q'), 4, col.data.as_mut_ptr(), 4), -2);
        assert_eq!(LAPACKE_dpotrf_work(lapacke::COL_MAJOR, ch(b'L'), -4, col.data.as_mut_ptr(), 4), -3);
        assert_eq!(LAPACKE_dpotrf_work(lapacke::ROW_MAJOR, ch(b'L'), 4, col.data.as_mut_ptr(), 3), -5);
    }
}

#[test]
fn calls_are_counted_per_thread() {
    let name = c"dpotrf";
    // SAFETY: NUL-terminated names.
    let before = unsafe { herd_lapack::ffi::herd_lapack_calls(name.as_ptr()) };
    dpotrf(b'L', &random_spd(3, 1), 3);
    // SAFETY: as above.
    unsafe {
        assert_eq!(herd_lapack::ffi::herd_lapack_calls(name.as_ptr()), before + 1);
        assert_eq!(herd_lapack::ffi::herd_lapack_calls(c"dsomething".as_ptr()), -1);
    }
}

#[test]
fn dgeqrf_dorgqr_dormqr_through_fortran_names() {
    use herd_lapack::lapack::{dgeqrf_, dorgqr_, dormqr_};
    let (m, n) = (150usize, 90usize);
    let a = random_matrix(m, n, 11);
    let mut p = Padded::new(&a, m + 5);
    let mut tau = vec![0.0; n];
    let (mi, ni, mut info) = (m as i32, n as i32, 0);
    let mut work = [0.0; 1];
    // SAFETY: the buffers hold the shapes given.
    unsafe {
        // Workspace query: nothing computed, WORK(1) set.
        dgeqrf_(&mi, &ni, p.data.as_mut_ptr(), &p.ld(), tau.as_mut_ptr(), work.as_mut_ptr(), &-1, &mut info);
        assert_eq!((info, work[0]), (0, n as f64));
        assert_eq!(p.mat(), a);
        // LWORK below N is argument 7.
        dgeqrf_(&mi, &ni, p.data.as_mut_ptr(), &p.ld(), tau.as_mut_ptr(), work.as_mut_ptr(), &1, &mut info);
        assert_eq!(info, -7);
        dgeqrf_(
            &mi,
            &ni,
            p.data.as_mut_ptr(),
            &(mi - 1),
            tau.as_mut_ptr(),
            work.as_mut_ptr(),
            &ni,
            &mut info,
        );
        assert_eq!(info, -4);
        dgeqrf_(&mi, &ni, p.data.as_mut_ptr(), &p.ld(), tau.as_mut_ptr(), work.as_mut_ptr(), &ni, &mut info);
        assert_eq!(info, 0);
    }
    assert!(p.padding_intact());
    // Q explicitly (dorgqr_), then Q·R = A; and dormqr_ applies Qᵀ to A, giving R.
    let qr = p.mat();
    let mut q = Padded::new(&qr, m + 5);
    let r = Mat::from_fn(n, n, |i, j| if i <= j { qr[(i, j)] } else { 0.0 });
    // SAFETY: as above.
    unsafe {
        dorgqr_(
            &mi,
            &(mi + 1),
            &ni,
            q.data.as_mut_ptr(),
            &q.ld(),
            tau.as_ptr(),
            work.as_mut_ptr(),
            &ni,
            &mut info,
        );
        assert_eq!(info, -2, "N > M");
        dorgqr_(&mi, &ni, &ni, q.data.as_mut_ptr(), &q.ld(), tau.as_ptr(), work.as_mut_ptr(), &ni, &mut info);
        assert_eq!(info, 0);
    }
    let qm = q.mat();
    let back = &qm * &r;
    assert!(max_abs_diff(&back, &a) < 1e-12 * m as f64);
    let mut c = Padded::new(&a, m);
    // SAFETY: as above.
    unsafe {
        dormqr_(
            &ch(b'L'),
            &ch(b'C'),
            &mi,
            &ni,
            &ni,
            p.data.as_ptr(),
            &p.ld(),
            tau.as_ptr(),
            c.data.as_mut_ptr(),
            &c.ld(),
            work.as_mut_ptr(),
            &ni,
            &mut info,
        );
        assert_eq!(info, -2, "TRANS = 'C' is not a real option of DORMQR");
        dormqr_(
            &ch(b'L'),
            &ch(b'T'),
            &mi,
            &ni,
            &ni,
            p.data.as_ptr(),
            &p.ld(),
            tau.as_ptr(),
            c.data.as_mut_ptr(),
            &c.ld(),
            work.as_mut_ptr(),
            &ni,
            &mut info,
        );
        assert_eq!(info, 0);
    }
    let qta = c.mat();
    for j in 0..n {
        for i in 0..m {
            let want = if i < n { r[(i, j)] } else { 0.0 };
            assert!((qta[(i, j)] - want).abs() < 1e-12 * m as f64, "Qᵀ·A ({i}, {j})");
        }
    }
}

#[test]
fn lapacke_dgeqrf_row_major_equals_column_major_and_checks_nan() {
    use herd_lapack::lapacke::LAPACKE_dgeqrf;
    let (m, n) = (70usize, 40usize);
    let a = random_matrix(m, n, 3);
    let mut col = Padded::new(&a, m);
    let mut row: Vec<f64> =
        (0..m * (n + 2)).map(|x| if x % (n + 2) < n { a[(x / (n + 2), x % (n + 2))] } else { 0.5 }).collect();
    let (mut t1, mut t2) = (vec![0.0; n], vec![0.0; n]);
    // SAFETY: the buffers hold the shapes given.
    unsafe {
        assert_eq!(
            LAPACKE_dgeqrf(
                lapacke::COL_MAJOR,
                m as i32,
                n as i32,
                col.data.as_mut_ptr(),
                m as i32,
                t1.as_mut_ptr()
            ),
            0
        );
        assert_eq!(
            LAPACKE_dgeqrf(
                lapacke::ROW_MAJOR,
                m as i32,
                n as i32,
                row.as_mut_ptr(),
                n as i32 - 1,
                t2.as_mut_ptr()
            ),
            -5
        );
        assert_eq!(
            LAPACKE_dgeqrf(
                lapacke::ROW_MAJOR,
                m as i32,
                n as i32,
                row.as_mut_ptr(),
                n as i32 + 2,
                t2.as_mut_ptr()
            ),
            0
        );
    }
    let c = col.mat();
    for i in 0..m {
        for j in 0..n {
            assert!((c[(i, j)] - row[i * (n + 2) + j]).abs() < 1e-12, "({i}, {j})");
        }
        assert_eq!(row[i * (n + 2) + n], 0.5, "row padding");
    }
    assert!(t1.iter().zip(&t2).all(|(x, y)| (x - y).abs() < 1e-12));
    let mut bad = Padded::new(&a, m);
    bad.data[17] = f64::NAN;
    // SAFETY: as above.
    let info = unsafe {
        LAPACKE_dgeqrf(
            lapacke::COL_MAJOR,
            m as i32,
            n as i32,
            bad.data.as_mut_ptr(),
            m as i32,
            t1.as_mut_ptr(),
        )
    };
    assert_eq!(info, -4);
}

/// `dgetrs_('N')` with the factors `lu` and pivots `ipiv` on `b` (n × 2): INFO.
fn dgetrs(lu: &Padded, ipiv: &[i32], b: &mut Padded) -> i32 {
    let (n, mut info) = (lu.rows as i32, 0);
    // SAFETY: the buffers hold the shapes given.
    unsafe {
        herd_lapack::lapack::dgetrs_(
            &ch(b'N'),
            &n,
            &2,
            lu.data.as_ptr(),
            &lu.ld(),
            ipiv.as_ptr(),
            b.data.as_mut_ptr(),
            &b.ld(),
            &mut info,
        )
    };
    info
}

/// `dgesv_` on `a` (n × n) and `b` (n × 2) with `LDB = ldb`: INFO.
fn dgesv(a: &mut Padded, ipiv: &mut [i32], b: &mut Padded, ldb: i32) -> i32 {
    let (n, mut info) = (a.rows as i32, 0);
    // SAFETY: the buffers hold the shapes given.
    unsafe {
        herd_lapack::lapack::dgesv_(
            &n,
            &2,
            a.data.as_mut_ptr(),
            &a.ld(),
            ipiv.as_mut_ptr(),
            b.data.as_mut_ptr(),
            &ldb,
            &mut info,
        )
    };
    info
}

#[test]
fn dgetrf_dgetrs_dgesv_with_one_based_pivots() {
    use herd_lapack::lapack::dgetrf_;
    let n = 300usize;
    let a = random_matrix(n, n, 21);
    let x_true = random_matrix(n, 2, 22);
    let b = &a * &x_true;
    let ni = n as i32;
    let (mut lu, mut ipiv, mut info) = (Padded::new(&a, n + 1), vec![0i32; n], 0);
    // SAFETY: the buffers hold the shapes given.
    unsafe { dgetrf_(&ni, &ni, lu.data.as_mut_ptr(), &lu.ld(), ipiv.as_mut_ptr(), &mut info) };
    assert_eq!(info, 0);
    assert!(ipiv.iter().enumerate().all(|(i, &p)| p as usize > i && p as usize <= n), "1-based, ≥ i + 1");
    let mut x = Padded::new(&b, n);
    assert_eq!(dgetrs(&lu, &ipiv, &mut x), 0);
    assert!(max_abs_diff(&x.mat(), &x_true) < 1e-9);
    // A pivot DGETRF could not have produced is argument 6; B untouched.
    let mut bad = ipiv.clone();
    bad[3] = 1;
    let mut y = Padded::new(&b, n);
    assert_eq!(dgetrs(&lu, &bad, &mut y), -6);
    assert_eq!(y.mat(), b);
    // DGESV = DGETRF + DGETRS.
    let (mut a2, mut b2, mut p2) = (Padded::new(&a, n), Padded::new(&b, n), vec![0i32; n]);
    assert_eq!(dgesv(&mut a2, &mut p2, &mut b2, ni), 0);
    assert_eq!(p2, ipiv);
    assert!(max_abs_diff(&b2.mat(), &x_true) < 1e-9);
    // Singular (a zero column 4): INFO = 5, B not solved.
    let mut s = a.clone();
    for i in 0..n {
        s[(i, 4)] = 0.0;
    }
    let (mut s2, mut b3) = (Padded::new(&s, n), Padded::new(&b, n));
    assert_eq!(dgesv(&mut s2, &mut p2, &mut b3, ni), 5);
    assert_eq!(b3.mat(), b);
    // A bad LDB is argument 7, caught first.
    assert_eq!(dgesv(&mut s2, &mut p2, &mut b3, ni - 1), -7);
}

#[test]
fn lapacke_dgesv_row_major() {
    use herd_lapack::lapacke::LAPACKE_dgesv;
    let n = 40usize;
    let a = random_matrix(n, n, 5);
    let mut row: Vec<f64> = (0..n * n).map(|x| a[(x / n, x % n)]).collect();
    // B = A·(1, 2, ..., n)ᵀ, one right-hand side, row-major (ldb = 1).
    let mut b: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a[(i, j)] * (j + 1) as f64).sum()).collect();
    let mut ipiv = vec![0i32; n];
    // SAFETY: the buffers hold the shapes given.
    let info = unsafe {
        LAPACKE_dgesv(
            lapacke::ROW_MAJOR,
            n as i32,
            1,
            row.as_mut_ptr(),
            n as i32,
            ipiv.as_mut_ptr(),
            b.as_mut_ptr(),
            1,
        )
    };
    assert_eq!(info, 0);
    assert!(b.iter().enumerate().all(|(i, x)| (x - (i + 1) as f64).abs() < 1e-9));
}

/// `dsygv_(itype, jobz, uplo)` on `a`, `b` with `LWORK = lwork`: INFO and
/// `WORK(1)`.
fn dsygv(
    itype: i32,
    jobz: u8,
    uplo: u8,
    a: &mut Padded,
    b: &mut Padded,
    w: &mut [f64],
    lwork: i32,
) -> (i32, f64) {
    let (n, mut info, mut work) = (a.rows as i32, 0, vec![0.0; lwork.max(1) as usize]);
    // SAFETY: the buffers hold the shapes given; `work` holds max(1, lwork).
    unsafe {
        herd_lapack::lapack::dsygv_(
            &itype,
            &ch(jobz),
            &ch(uplo),
            &n,
            a.data.as_mut_ptr(),
            &a.ld(),
            b.data.as_mut_ptr(),
            &b.ld(),
            w.as_mut_ptr(),
            work.as_mut_ptr(),
            &lwork,
            &mut info,
        )
    };
    (info, work[0])
}

/// `dsygvd_(1, 'V', 'L')` on `a`, `b` with `LWORK`, `LIWORK`: INFO, `WORK(1)`
/// and `IWORK(1)`.
fn dsygvd(a: &mut Padded, b: &mut Padded, w: &mut [f64], lwork: i32, liwork: i32) -> (i32, f64, i32) {
    dsygvd_job(b'V', b'L', a, b, w, lwork, liwork)
}

/// `dsygvd_(1, jobz, uplo)` on `a`, `b` with `LWORK`, `LIWORK`: INFO,
/// `WORK(1)` and `IWORK(1)`.
fn dsygvd_job(
    jobz: u8,
    uplo: u8,
    a: &mut Padded,
    b: &mut Padded,
    w: &mut [f64],
    lwork: i32,
    liwork: i32,
) -> (i32, f64, i32) {
    let n = a.rows as i32;
    let (mut info, mut work, mut iwork) =
        (0, vec![0.0; lwork.max(1) as usize], vec![0i32; liwork.max(1) as usize]);
    // SAFETY: as in `dsygv`.
    unsafe {
        herd_lapack::lapack::dsygvd_(
            &1,
            &ch(jobz),
            &ch(uplo),
            &n,
            a.data.as_mut_ptr(),
            &a.ld(),
            b.data.as_mut_ptr(),
            &b.ld(),
            w.as_mut_ptr(),
            work.as_mut_ptr(),
            &lwork,
            iwork.as_mut_ptr(),
            &liwork,
            &mut info,
        )
    };
    (info, work[0], iwork[0])
}

/// A random symmetric `A` and a symmetric positive definite `B` of order `n`.
fn pencil(n: usize, seed: u64) -> (Mat<f64>, Mat<f64>) {
    let r = random_matrix(n, n, seed);
    (Mat::from_fn(n, n, |i, j| r[(i, j)] + r[(j, i)]), random_spd(n, seed + 1))
}

#[test]
fn dsygv_and_dsygvd_results_queries_and_info() {
    let n = 90usize;
    let (a, b) = pencil(n, 31);
    let mut w = vec![0.0; n];
    let (mut za, mut lb) = (Padded::new(&a, n), Padded::new(&b, n));
    // Workspace queries, and bad arguments.
    assert_eq!(dsygv(1, b'V', b'L', &mut za, &mut lb, &mut w, -1), (0, (3 * n - 1) as f64));
    let big = (1 + 6 * n + 2 * n * n) as f64;
    assert_eq!(dsygvd(&mut za, &mut lb, &mut w, -1, -1), (0, big, (3 + 5 * n) as i32));
    assert_eq!(dsygvd(&mut za, &mut lb, &mut w, 10, 500).0, -11);
    assert_eq!(dsygv(4, b'V', b'L', &mut za, &mut lb, &mut w, -1).0, -1);
    assert_eq!(dsygv(1, b'X', b'L', &mut za, &mut lb, &mut w, -1).0, -2);
    assert_eq!(za.mat(), a, "queries and bad arguments leave A alone");
    for (uplo, lw) in [(b'L', 3 * n - 1), (b'U', 3 * n + 10)] {
        let (mut za, mut lb) = (Padded::new(&a, n + 1), Padded::new(&b, n + 2));
        assert_eq!(dsygv(1, b'V', uplo, &mut za, &mut lb, &mut w, lw as i32).0, 0);
        let z = za.mat();
        let lambda = Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
        let res = (&a * &z - &b * &z * &lambda).norm_max();
        assert!(res < 1e-9, "uplo {}: ‖A·Z − B·Z·Λ‖ = {res}", uplo as char);
        assert!(w.windows(2).all(|p| p[0] <= p[1]));
        assert!(za.padding_intact() && lb.padding_intact());
    }
    // B not positive definite at its leading minor of order 4: INFO = N + 4.
    let mut bad = b.clone();
    bad[(3, 3)] = -5.0;
    let (mut za, mut lb) = (Padded::new(&a, n), Padded::new(&bad, n));
    assert_eq!(dsygv(1, b'N', b'L', &mut za, &mut lb, &mut w, 3 * n as i32).0, n as i32 + 4);
}

/// `max |x − y| / (n · ulp · max |x|)`: LAPACK's eigenvalue agreement
/// (`ddrvst`) scaled by the order.
fn eigenvalue_ratio(x: &[f64], y: &[f64]) -> f64 {
    let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = x.iter().zip(y).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    diff / (x.len() as f64 * f64::EPSILON * scale)
}

/// `JOBZ = 'N'` through `dsygv_`, `dsygvd_` (with `dsygvd`'s minimal
/// workspace for it) and `LAPACKE_dsygv`: the eigenvalues of `'V'`, the
/// same factor of `B`, the padding intact, `dsygvd`'s query answering
/// `2N + 1` and 1.
#[test]
fn dsygv_dsygvd_lapacke_eigenvalues_only() {
    use herd_lapack::lapacke::LAPACKE_dsygv;
    let n = 150usize;
    let (a, b) = pencil(n, 41);
    let (mut za, mut lb, mut w) = (Padded::new(&a, n), Padded::new(&b, n), vec![0.0; n]);
    assert_eq!(dsygvd_job(b'N', b'L', &mut za, &mut lb, &mut w, -1, 1), (0, (2 * n + 1) as f64, 1));
    assert_eq!(dsygvd_job(b'N', b'L', &mut za, &mut lb, &mut w, 2 * n as i32, 1).0, -11);
    for uplo in [b'L', b'U'] {
        let (mut za, mut lb, mut want) = (Padded::new(&a, n + 3), Padded::new(&b, n + 1), vec![0.0; n]);
        assert_eq!(dsygv(1, b'V', uplo, &mut za, &mut lb, &mut want, 3 * n as i32).0, 0);
        let factor = lb.mat();
        let (mut xa, mut xb, mut w) = (Padded::new(&a, n + 2), Padded::new(&b, n + 4), vec![0.0; n]);
        assert_eq!(dsygv(1, b'N', uplo, &mut xa, &mut xb, &mut w, 3 * n as i32).0, 0);
        let ratio = eigenvalue_ratio(&want, &w);
        assert!(ratio < 30.0, "dsygv 'N' {}: ratio {ratio}", uplo as char);
        assert!(max_abs_diff(&xb.mat(), &factor) < 1e-12 && xa.padding_intact() && xb.padding_intact());
        let (mut xa, mut xb, mut w) = (Padded::new(&a, n), Padded::new(&b, n), vec![0.0; n]);
        let lw = 2 * n as i32 + 1;
        assert_eq!(dsygvd_job(b'N', uplo, &mut xa, &mut xb, &mut w, lw, 1).0, 0);
        let ratio = eigenvalue_ratio(&want, &w);
        assert!(ratio < 30.0, "dsygvd 'N' {}: ratio {ratio}", uplo as char);
        // LAPACKE, row-major: the same symmetric matrices, the other triangle read.
        let mut ra: Vec<f64> = (0..n * n).map(|x| a[(x / n, x % n)]).collect();
        let mut rb: Vec<f64> = (0..n * n).map(|x| b[(x / n, x % n)]).collect();
        // SAFETY: the row-major buffers hold n × n; `w` holds n.
        let info = unsafe {
            LAPACKE_dsygv(
                lapacke::ROW_MAJOR,
                1,
                ch(b'N'),
                ch(uplo),
                n as i32,
                ra.as_mut_ptr(),
                n as i32,
                rb.as_mut_ptr(),
                n as i32,
                w.as_mut_ptr(),
            )
        };
        assert_eq!(info, 0);
        let ratio = eigenvalue_ratio(&want, &w);
        assert!(ratio < 30.0, "LAPACKE_dsygv 'N' {}: ratio {ratio}", uplo as char);
    }
    // A NaN in A: INFO = 1 with either JOBZ (LAPACK's eigensolver would not converge).
    let mut nan = a.clone();
    nan[(20, 3)] = f64::NAN;
    for jobz in [b'V', b'N'] {
        let (mut xa, mut xb) = (Padded::new(&nan, n), Padded::new(&b, n));
        assert_eq!(dsygv(1, jobz, b'L', &mut xa, &mut xb, &mut w, 3 * n as i32).0, 1);
    }
}

#[test]
fn cblas_dtrsm_and_dsyrk_row_major() {
    use herd_lapack::cblas::{cblas_dsyrk, cblas_dtrsm};
    let (m, n) = (30usize, 7usize);
    // Row-major lower-triangular T (m × m), B (m × n): T·X = B.
    let t: Vec<f64> = (0..m * m)
        .map(|x| {
            let (i, j) = (x / m, x % m);
            if i == j {
                10.0 + i as f64
            } else if j < i {
                ((i * 3 + j) % 5) as f64 - 2.0
            } else {
                f64::NAN
            }
        })
        .collect();
    let b: Vec<f64> = (0..m * n).map(|x| (x % 11) as f64 - 5.0).collect();
    let mut x = b.clone();
    // SAFETY: the row-major buffers hold their shapes (T's upper triangle is never read).
    unsafe {
        cblas_dtrsm(
            cblas::ROW_MAJOR,
            141,
            122,
            111,
            131,
            m as i32,
            n as i32,
            1.0,
            t.as_ptr(),
            m as i32,
            x.as_mut_ptr(),
            n as i32,
        )
    };
    for i in 0..m {
        for j in 0..n {
            let s: f64 = (0..=i).map(|l| t[i * m + l] * x[l * n + j]).sum();
            assert!((s - b[i * n + j]).abs() < 1e-10, "({i}, {j})");
        }
    }
    // C = A·Aᵀ (row-major A m × n), lower triangle of row-major C.
    let a: Vec<f64> = (0..m * n).map(|x| ((x * 7) % 13) as f64 - 6.0).collect();
    let mut c = vec![0.0; m * m];
    // SAFETY: as above.
    unsafe {
        cblas_dsyrk(
            cblas::ROW_MAJOR,
            122,
            111,
            m as i32,
            n as i32,
            1.0,
            a.as_ptr(),
            n as i32,
            0.0,
            c.as_mut_ptr(),
            m as i32,
        )
    };
    for i in 0..m {
        for j in 0..m {
            let want: f64 = (0..n).map(|l| a[i * n + l] * a[j * n + l]).sum();
            if j <= i {
                assert_eq!(c[i * m + j], want, "lower ({i}, {j})");
            } else {
                assert_eq!(c[i * m + j], 0.0, "upper ({i}, {j}) written");
            }
        }
    }
}

/// LAPACK is called from many threads at once by threaded programs: each
/// call must still be right (herd hands the work of callers that are not
/// the pool's master to its workers).
#[test]
fn concurrent_callers_on_several_threads() {
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                for round in 0..3 {
                    let n = 200 + 37 * t + round;
                    let a = random_spd(n, (t * 10 + round) as u64);
                    let (info, p) = dpotrf(b'L', &a, n);
                    assert_eq!(info, 0);
                    let l = p.mat();
                    assert!(residual(a.as_ref(), l.as_ref()).unwrap() < 30.0, "thread {t}, round {round}");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a caller thread failed");
    }
}
