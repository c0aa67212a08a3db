//! `syrk` for both triangles and transposes against a reference product,
//! with LAPACK's `dsyt03`-style ratio
//! `‖C − C_ref‖_F ≤ c·k·ε·(|α|·‖A‖_F² + |β|·‖C₀‖_F)` on the triangle, and
//! the other triangle checked untouched.

use super::*;
use crate::probe::{frobenius, Part};
use crate::random_matrix;
use faer::linalg::matmul::matmul;
use faer::Mat;

const THRESHOLD: f64 = 30.0;

fn pool(threads: usize) -> herd::Pool {
    herd::Pool::builder().num_threads(threads).build().expect("a test pool")
}

fn inside(uplo: Uplo, i: usize, j: usize) -> bool {
    match uplo {
        Uplo::Lower => i >= j,
        Uplo::Upper => i <= j,
    }
}

fn check(threads: usize, uplo: Uplo, trans: Op, (n, k): (usize, usize), alpha: f64, beta: f64) {
    let a = match trans {
        Op::NoTrans => random_matrix(n, k, 1 + n as u64),
        Op::Trans => random_matrix(k, n, 1 + n as u64),
    };
    let c0 = random_matrix(n, n, 7 + k as u64);
    let g = if trans == Op::NoTrans { a.clone() } else { a.transpose().to_owned() };
    let mut ggt = Mat::zeros(n, n);
    matmul(ggt.as_mut(), Accum::Replace, g.as_ref(), g.transpose(), 1.0, Par::Seq);
    let mut c = c0.clone();
    pool(threads)
        .install(|| syrk(uplo, trans, alpha, a.as_ref(), beta, c.as_mut()))
        .expect("valid arguments");
    let mut diff = Mat::zeros(n, n);
    for j in 0..n {
        for i in 0..n {
            if inside(uplo, i, j) {
                diff[(i, j)] = c[(i, j)] - (alpha * ggt[(i, j)] + beta * c0[(i, j)]);
            } else {
                assert_eq!(c[(i, j)].to_bits(), c0[(i, j)].to_bits(), "({i}, {j}) outside {uplo:?} written");
            }
        }
    }
    let ga = frobenius(a.as_ref(), Part::Full);
    let scale = k.max(1) as f64
        * f64::EPSILON
        * (alpha.abs() * ga * ga + beta.abs() * frobenius(c0.as_ref(), Part::Full));
    let err = frobenius(diff.as_ref(), Part::Full);
    let ratio = if scale == 0.0 { err } else { err / scale };
    assert!(
        ratio < THRESHOLD,
        "{uplo:?} {trans:?} n {n} k {k} α {alpha} β {beta} on {threads}: ratio {ratio}"
    );
}

#[test]
fn every_triangle_and_transpose_odd_sizes() {
    for (n, k) in [(0, 3), (1, 1), (2, 7), (7, 2), (64, 65), (65, 64), (300, 17), (513, 130)] {
        for uplo in [Uplo::Lower, Uplo::Upper] {
            for trans in [Op::NoTrans, Op::Trans] {
                check(2, uplo, trans, (n, k), 1.0, 1.0);
                check(2, uplo, trans, (n, k), -0.5, 2.0);
            }
        }
    }
}

#[test]
fn pools_of_1_2_4() {
    for threads in [1, 2, 4] {
        check(threads, Uplo::Lower, Op::NoTrans, (700, 200), 1.5, -1.0);
        check(threads, Uplo::Upper, Op::Trans, (700, 200), -1.0, 0.5);
    }
}

#[test]
fn special_alpha_beta() {
    for uplo in [Uplo::Lower, Uplo::Upper] {
        check(2, uplo, Op::NoTrans, (300, 50), 0.0, 3.0);
        check(2, uplo, Op::Trans, (300, 0), 2.0, -1.0);
        // β = 0 does not read C: NaNs in its triangle vanish.
        let a = random_matrix(300, 40, 3);
        let mut c = Mat::from_fn(300, 300, |_, _| f64::NAN);
        pool(2).install(|| syrk(uplo, Op::NoTrans, 1.0, a.as_ref(), 0.0, c.as_mut())).expect("valid");
        for j in 0..300 {
            for i in 0..300 {
                assert_eq!(c[(i, j)].is_nan(), !inside(uplo, i, j), "({i}, {j})");
            }
        }
    }
}

#[test]
fn bad_shapes_name_the_argument() {
    let a = Mat::<f64>::zeros(4, 3);
    let mut c = Mat::<f64>::zeros(3, 3);
    let e = syrk(Uplo::Lower, Op::NoTrans, 1.0, a.as_ref(), 1.0, c.as_mut());
    assert!(matches!(e, Err(LaError::InvalidArgument { argument: "a", .. })), "{e:?}");
    syrk(Uplo::Lower, Op::Trans, 1.0, a.as_ref(), 1.0, c.as_mut()).expect("Aᵀ·A is 3 × 3");
    let mut c = Mat::<f64>::zeros(4, 5);
    let e = syrk(Uplo::Upper, Op::NoTrans, 1.0, a.as_ref(), 1.0, c.as_mut());
    assert!(matches!(e, Err(LaError::InvalidArgument { argument: "c", .. })), "{e:?}");
}

#[test]
fn leaves() {
    assert_eq!(leaf(50, 50, 4), 50, "small updates stay whole");
    assert_eq!(leaf(4000, 4000, 1), 4000);
    assert_eq!(leaf(4000, 4000, 2), 1000);
    assert_eq!(leaf(4000, 4000, 128), 64);
}

/// `syr2k` against `α·(G·Hᵀ + H·Gᵀ) + β·C₀`, ratio scaled by
/// `2·|α|·‖A‖_F·‖B‖_F + |β|·‖C₀‖_F`, the other triangle untouched.
fn check2(threads: usize, uplo: Uplo, trans: Op, (n, k): (usize, usize), alpha: f64, beta: f64) {
    let (a, b) = match trans {
        Op::NoTrans => (random_matrix(n, k, 3 + n as u64), random_matrix(n, k, 4 + k as u64)),
        Op::Trans => (random_matrix(k, n, 3 + n as u64), random_matrix(k, n, 4 + k as u64)),
    };
    let c0 = random_matrix(n, n, 5);
    let (g, h) = match trans {
        Op::NoTrans => (a.clone(), b.clone()),
        Op::Trans => (a.transpose().to_owned(), b.transpose().to_owned()),
    };
    let mut sum = Mat::zeros(n, n);
    matmul(sum.as_mut(), Accum::Replace, g.as_ref(), h.transpose(), 1.0, Par::Seq);
    matmul(sum.as_mut(), Accum::Add, h.as_ref(), g.transpose(), 1.0, Par::Seq);
    let mut c = c0.clone();
    pool(threads)
        .install(|| syr2k(uplo, trans, alpha, a.as_ref(), b.as_ref(), beta, c.as_mut()))
        .expect("valid arguments");
    let mut diff = Mat::zeros(n, n);
    for j in 0..n {
        for i in 0..n {
            if inside(uplo, i, j) {
                diff[(i, j)] = c[(i, j)] - (alpha * sum[(i, j)] + beta * c0[(i, j)]);
            } else {
                assert_eq!(c[(i, j)].to_bits(), c0[(i, j)].to_bits(), "({i}, {j}) outside {uplo:?} written");
            }
        }
    }
    let scale = k.max(1) as f64
        * f64::EPSILON
        * (2.0 * alpha.abs() * frobenius(a.as_ref(), Part::Full) * frobenius(b.as_ref(), Part::Full)
            + beta.abs() * frobenius(c0.as_ref(), Part::Full));
    let err = frobenius(diff.as_ref(), Part::Full);
    let ratio = if scale == 0.0 { err } else { err / scale };
    assert!(ratio < THRESHOLD, "syr2k {uplo:?} {trans:?} n {n} k {k} on {threads}: ratio {ratio}");
}

#[test]
fn syr2k_every_triangle_and_transpose() {
    for (n, k) in [(0, 3), (1, 1), (7, 2), (65, 64), (513, 40)] {
        for uplo in [Uplo::Lower, Uplo::Upper] {
            for trans in [Op::NoTrans, Op::Trans] {
                check2(2, uplo, trans, (n, k), -0.5, 1.0);
            }
        }
    }
    for threads in [1, 4] {
        check2(threads, Uplo::Lower, Op::NoTrans, (600, 100), 1.0, 0.0);
        check2(threads, Uplo::Upper, Op::Trans, (600, 100), 0.0, 2.0);
    }
    let (a, b) = (Mat::<f64>::zeros(4, 3), Mat::<f64>::zeros(4, 2));
    let mut c = Mat::<f64>::zeros(4, 4);
    let e = syr2k(Uplo::Lower, Op::NoTrans, 1.0, a.as_ref(), b.as_ref(), 1.0, c.as_mut());
    assert!(matches!(e, Err(LaError::InvalidArgument { argument: "b", .. })), "{e:?}");
}
