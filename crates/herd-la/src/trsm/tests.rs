//! `trsm` for every side, triangle, transpose and diagonal, checked by
//! LAPACK's `dtrt03`-style ratio `‖op(T)·X − α·B‖_F / (‖op(T)‖_F·‖X‖_F·k·ε)`
//! (or `X·op(T)` for the right side) against the explicit triangle `T`.

use super::*;
use crate::probe::{frobenius, Part};
use crate::random_matrix;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat};

/// LAPACK's testing threshold.
const THRESHOLD: f64 = 30.0;

fn pool(threads: usize) -> herd::Pool {
    herd::Pool::builder().num_threads(threads).build().expect("a test pool")
}

/// A `k × k` matrix whose `uplo` triangle is a well-conditioned triangle
/// (diagonal `k + 1 + u`), the other triangle NaN, and the diagonal NaN for
/// a unit triangle: any read of what must not be read shows in the result.
fn poisoned(k: usize, uplo: Uplo, diag: Diag, seed: u64) -> Mat<f64> {
    let r = random_matrix(k, k, seed);
    Mat::from_fn(k, k, |i, j| {
        let inside = match uplo {
            Uplo::Lower => i >= j,
            Uplo::Upper => i <= j,
        };
        if !inside || (i == j && diag == Diag::Unit) {
            f64::NAN
        } else if i == j {
            k as f64 + 1.0 + r[(i, j)].abs()
        } else {
            r[(i, j)]
        }
    })
}

/// The explicit triangle `T` that `a` stands for.
fn explicit(a: &Mat<f64>, uplo: Uplo, diag: Diag) -> Mat<f64> {
    let k = a.nrows();
    Mat::from_fn(k, k, |i, j| {
        let inside = match uplo {
            Uplo::Lower => i >= j,
            Uplo::Upper => i <= j,
        };
        if i == j && diag == Diag::Unit {
            1.0
        } else if inside {
            a[(i, j)]
        } else {
            0.0
        }
    })
}

#[allow(clippy::too_many_arguments)]
fn check(threads: usize, side: Side, uplo: Uplo, trans: Op, diag: Diag, (m, n): (usize, usize), alpha: f64) {
    let k = if side == Side::Left { m } else { n };
    let a = poisoned(k, uplo, diag, 10 + k as u64);
    let b = random_matrix(m, n, 20 + m as u64 + n as u64);
    let mut x = b.clone();
    pool(threads)
        .install(|| trsm(side, uplo, trans, diag, alpha, a.as_ref(), x.as_mut()))
        .expect("valid arguments");
    let t = explicit(&a, uplo, diag);
    let op_t = if trans == Op::Trans { t.transpose().to_owned() } else { t.clone() };
    let mut r = Mat::from_fn(m, n, |i, j| -alpha * b[(i, j)]);
    match side {
        Side::Left => matmul(r.as_mut(), Accum::Add, op_t.as_ref(), x.as_ref(), 1.0, Par::Seq),
        Side::Right => matmul(r.as_mut(), Accum::Add, x.as_ref(), op_t.as_ref(), 1.0, Par::Seq),
    }
    let scale = frobenius(op_t.as_ref(), Part::Full)
        * frobenius(x.as_ref(), Part::Full)
        * k.max(1) as f64
        * f64::EPSILON;
    let err = frobenius(r.as_ref(), Part::Full);
    let ratio = if scale == 0.0 { err } else { err / scale };
    assert!(
        ratio < THRESHOLD,
        "{side:?} {uplo:?} {trans:?} {diag:?} {m}x{n} alpha {alpha} on {threads}: ratio {ratio}"
    );
}

const SIDES: [Side; 2] = [Side::Left, Side::Right];
const UPLOS: [Uplo; 2] = [Uplo::Lower, Uplo::Upper];
const OPS: [Op; 2] = [Op::NoTrans, Op::Trans];
const DIAGS: [Diag; 2] = [Diag::NonUnit, Diag::Unit];

#[test]
fn every_combination_and_odd_sizes() {
    for (m, n) in [(0, 3), (3, 0), (1, 1), (2, 7), (7, 2), (64, 65), (65, 64), (130, 257)] {
        for side in SIDES {
            for uplo in UPLOS {
                for trans in OPS {
                    for diag in DIAGS {
                        check(2, side, uplo, trans, diag, (m, n), 1.0);
                    }
                }
            }
        }
    }
}

#[test]
fn large_solves_on_pools_of_1_2_4() {
    for threads in [1, 2, 4] {
        for side in SIDES {
            for trans in OPS {
                check(threads, side, Uplo::Lower, trans, Diag::NonUnit, (513, 300), 1.0);
                check(threads, side, Uplo::Upper, trans, Diag::Unit, (300, 513), -0.5);
            }
        }
    }
}

#[test]
fn alpha_scales_and_zero_clears_without_reading() {
    check(2, Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, (65, 200), 2.5);
    check(2, Side::Right, Uplo::Upper, Op::Trans, Diag::Unit, (200, 65), -3.0);
    let a = Mat::from_fn(40, 40, |_, _| f64::NAN);
    let mut b = Mat::from_fn(40, 300, |_, _| f64::NAN);
    pool(2)
        .install(|| trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, 0.0, a.as_ref(), b.as_mut()))
        .expect("valid arguments");
    assert!(b.col_iter().all(|c| c.iter().all(|&x| x == 0.0)));
}

#[test]
fn bad_shapes_name_a() {
    let a = Mat::<f64>::zeros(4, 5);
    let mut b = Mat::<f64>::zeros(4, 4);
    let e = trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, 1.0, a.as_ref(), b.as_mut());
    assert!(matches!(e, Err(LaError::InvalidArgument { argument: "a", .. })), "{e:?}");
    let a = Mat::<f64>::zeros(3, 3);
    let mut b = Mat::<f64>::zeros(4, 3);
    let e = trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, 1.0, a.as_ref(), b.as_mut());
    assert!(matches!(e, Err(LaError::InvalidArgument { argument: "a", .. })), "{e:?}");
    // The same B fits a right-side solve with the 3 × 3 A.
    trsm(Side::Right, Uplo::Lower, Op::NoTrans, Diag::Unit, 1.0, a.as_ref(), b.as_mut()).expect("fits");
    let mut b = Mat::<f64>::zeros(3, 4);
    let e = trsm(Side::Right, Uplo::Upper, Op::Trans, Diag::Unit, 1.0, a.as_ref(), b.as_mut());
    assert!(matches!(e, Err(LaError::InvalidArgument { argument: "a", .. })), "{e:?}");
}

#[test]
fn block_widths() {
    assert_eq!(blocks::width(10, 10, 4), 10, "small solves stay whole");
    assert_eq!(blocks::width(1000, 1000, 1), 1000);
    assert_eq!(blocks::width(1000, 1000, 2), 504);
    assert_eq!(blocks::width(1000, 1000, 128), 32, "never narrower than MIN_BLOCK");
    assert_eq!(blocks::width(1000, 20, 4), 20);
}

/// Few right-hand sides: blocked substitution (`substitution.rs`).
#[test]
fn narrow_right_hand_sides_by_blocked_substitution() {
    assert!(substitution::worthwhile(1000, 7, blocks::width(1000, 7, 4), 4));
    assert!(!substitution::worthwhile(1000, 7, blocks::width(1000, 7, 1), 1));
    for threads in [2, 4] {
        for side in SIDES {
            for uplo in UPLOS {
                for trans in OPS {
                    for diag in DIAGS {
                        let shape = if side == Side::Left { (700, 5) } else { (5, 700) };
                        check(threads, side, uplo, trans, diag, shape, -1.5);
                    }
                }
            }
        }
        check(threads, Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, (1000, 1), 1.0);
        check(threads, Side::Left, Uplo::Upper, Op::Trans, Diag::NonUnit, (513, 60), 1.0);
        check(threads, Side::Right, Uplo::Upper, Op::NoTrans, Diag::NonUnit, (60, 513), 1.0);
    }
}
