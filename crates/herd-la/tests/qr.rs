//! herd's QR against LAPACK's own (`dgeqrf_`, `dorgqr_`, `dormqr_` of the
//! system OpenBLAS, linked with the `openblas` feature:
//! `cargo test --release -p herd-la --features openblas --test qr`): the same
//! `R`, vectors and `tau` to rounding, and each side's output accepted by
//! the other's `orgqr`/`ormqr` — LAPACK's representation, exactly.
#![cfg(feature = "openblas")]

use faer::Mat;
use herd_la::{geqrf, orgqr, ormqr, random_matrix, Op, Qr, Side};
use std::os::raw::c_char;

#[link(name = "openblas")]
extern "C" {
    fn dgeqrf_(
        m: *const i32,
        n: *const i32,
        a: *mut f64,
        lda: *const i32,
        tau: *mut f64,
        work: *mut f64,
        lwork: *const i32,
        info: *mut i32,
    );
    fn dorgqr_(
        m: *const i32,
        n: *const i32,
        k: *const i32,
        a: *mut f64,
        lda: *const i32,
        tau: *const f64,
        work: *mut f64,
        lwork: *const i32,
        info: *mut i32,
    );
    #[allow(clippy::too_many_arguments)]
    fn dormqr_(
        side: *const c_char,
        trans: *const c_char,
        m: *const i32,
        n: *const i32,
        k: *const i32,
        a: *const f64,
        lda: *const i32,
        tau: *const f64,
        c: *mut f64,
        ldc: *const i32,
        work: *mut f64,
        lwork: *const i32,
        info: *mut i32,
        side_len: usize,
        trans_len: usize,
    );
}

/// A LAPACK dimension.
fn dim(x: usize) -> i32 {
    i32::try_from(x).expect("test sizes fit")
}

/// The workspace LAPACK asks for (a generous fixed size: tests are small).
fn work(m: usize, n: usize) -> Vec<f64> {
    vec![0.0; 64 * (m + n + 1)]
}

fn lapack_geqrf(a: &Mat<f64>) -> (Mat<f64>, Vec<f64>) {
    let (m, n) = (a.nrows(), a.ncols());
    let mut qr = a.clone();
    let mut tau = vec![0.0; m.min(n)];
    let mut w = work(m, n);
    let mut info = 0;
    // SAFETY: `qr` is an m×n faer matrix, column-major with leading dimension
    // col_stride ≥ m; tau has min(m, n) entries and `w` w.len().
    unsafe {
        dgeqrf_(
            &dim(m),
            &dim(n),
            qr.as_ptr_mut(),
            &dim(qr.col_stride() as usize),
            tau.as_mut_ptr(),
            w.as_mut_ptr(),
            &dim(w.len()),
            &mut info,
        );
    }
    assert_eq!(info, 0);
    (qr, tau)
}

fn lapack_orgqr(qr: &Mat<f64>, tau: &[f64]) -> Mat<f64> {
    let (m, n) = (qr.nrows(), qr.ncols());
    let mut q = qr.clone();
    let mut w = work(m, n);
    let mut info = 0;
    // SAFETY: as in lapack_geqrf; k = tau.len() ≤ n ≤ m.
    unsafe {
        dorgqr_(
            &dim(m),
            &dim(n),
            &dim(tau.len()),
            q.as_ptr_mut(),
            &dim(q.col_stride() as usize),
            tau.as_ptr(),
            w.as_mut_ptr(),
            &dim(w.len()),
            &mut info,
        );
    }
    assert_eq!(info, 0);
    q
}

fn lapack_ormqr(side: Side, op: Op, qr: &Mat<f64>, tau: &[f64], c: &Mat<f64>) -> Mat<f64> {
    let mut out = c.clone();
    let s = if side == Side::Left { b"L" } else { b"R" };
    let t = if op == Op::Trans { b"T" } else { b"N" };
    let mut w = work(c.nrows(), c.ncols());
    let mut info = 0;
    // SAFETY: `qr` holds tau.len() reflectors of order C's rows (left) or
    // columns (right), `out` is column-major with its leading dimension; the
    // hidden Fortran lengths of the two one-character strings are 1.
    unsafe {
        dormqr_(
            s.as_ptr().cast(),
            t.as_ptr().cast(),
            &dim(out.nrows()),
            &dim(out.ncols()),
            &dim(tau.len()),
            qr.as_ptr(),
            &dim(qr.col_stride() as usize),
            tau.as_ptr(),
            out.as_ptr_mut(),
            &dim(out.col_stride() as usize),
            w.as_mut_ptr(),
            &dim(w.len()),
            &mut info,
            1,
            1,
        );
    }
    assert_eq!(info, 0);
    out
}

fn rel(x: &Mat<f64>, y: &Mat<f64>) -> f64 {
    (x - y).norm_l2() / y.norm_l2().max(f64::MIN_POSITIVE)
}

#[test]
fn the_same_factorization_as_lapack() {
    for (m, n, nb) in
        [(1, 1, 4), (7, 7, 3), (65, 64, 16), (64, 65, 16), (300, 200, 64), (200, 300, 48), (513, 513, 128)]
    {
        let a = random_matrix(m, n, (m + 3 * n) as u64);
        let (qr_l, tau_l) = lapack_geqrf(&a);
        let mut qr = a.clone();
        let mut tau = vec![0.0; m.min(n)];
        Qr::new().block_size(nb).geqrf(qr.as_mut(), &mut tau).expect("geqrf");
        let tol = 1e3 * f64::EPSILON * m.max(n) as f64;
        assert!(rel(&qr, &qr_l) < tol, "{m}x{n}: factored matrices differ by {}", rel(&qr, &qr_l));
        for (i, (t, tl)) in tau.iter().zip(&tau_l).enumerate() {
            assert!((t - tl).abs() < tol, "{m}x{n}: tau[{i}] {t} vs LAPACK {tl}");
        }
    }
}

#[test]
fn each_accepts_the_others_reflectors() {
    for (m, n) in [(90, 60), (150, 150), (60, 90)] {
        let a = random_matrix(m, n, 5);
        let (qr_l, tau_l) = lapack_geqrf(&a);
        let mut qr = a.clone();
        let mut tau = vec![0.0; m.min(n)];
        geqrf(qr.as_mut(), &mut tau).expect("geqrf");
        let tol = 1e3 * f64::EPSILON * m.max(n) as f64;
        if n <= m {
            // LAPACK's orgqr of herd's reflectors = herd's orgqr of LAPACK's.
            let q_from_herd = lapack_orgqr(&qr, &tau);
            let mut q_from_lapack = qr_l.clone();
            orgqr(q_from_lapack.as_mut(), &tau_l).expect("orgqr");
            assert!(rel(&q_from_herd, &q_from_lapack) < tol, "{m}x{n} orgqr");
        }
        for side in [Side::Left, Side::Right] {
            for op in [Op::NoTrans, Op::Trans] {
                let c = match side {
                    Side::Left => random_matrix(m, 40, 6),
                    Side::Right => random_matrix(40, m, 6),
                };
                let want = lapack_ormqr(side, op, &qr, &tau, &c);
                let mut got = c.clone();
                ormqr(side, op, qr_l.as_ref(), &tau_l, got.as_mut()).expect("ormqr");
                assert!(rel(&got, &want) < tol, "{m}x{n} {side:?} {op:?}");
            }
        }
    }
}
