//! Tests of `geqrf`, `orgqr` and `ormqr` with LAPACK's measures (TESTING/LIN
//! `dqrt01`, `dqrt02`, `dqrt03`): `‖A − Q·R‖_F/(‖A‖_F·m·ε)`,
//! `‖I − QᵀQ‖_F/(m·ε)`, and `op(Q)·C` by `ormqr` against the product with
//! the explicit `Q`, all below 30; `R` and `tau` against an unblocked
//! reference QR written here with `dgeqr2`'s conventions.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};

use super::{geqrf, orgqr, ormqr, qr_residual_probe, Qr};
use crate::{random_matrix, LaError, Op, Side};

/// LAPACK's threshold for the scaled test ratios.
const THRESH: f64 = 30.0;
const EPS: f64 = f64::EPSILON;

fn pool(threads: usize) -> herd::Pool {
    herd::Pool::builder().num_threads(threads).build().expect("a test pool")
}

fn fro(a: MatRef<'_, f64>) -> f64 {
    a.norm_l2()
}

fn product(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    let mut c = Mat::zeros(a.nrows(), b.ncols());
    matmul(c.as_mut(), Accum::Replace, a, b, 1.0, Par::Seq);
    c
}

/// The textbook unblocked Householder QR, LAPACK `dgeqr2`/`dlarfg`
/// conventions, no scaling tricks: `(factored a, tau)`.
fn reference_qr(a: &Mat<f64>) -> (Mat<f64>, Vec<f64>) {
    let (m, n) = (a.nrows(), a.ncols());
    let mut a = a.clone();
    let k = m.min(n);
    let mut tau = vec![0.0; k];
    for i in 0..k {
        let alpha = a[(i, i)];
        let xnorm = (i + 1..m).map(|r| a[(r, i)] * a[(r, i)]).sum::<f64>().sqrt();
        if xnorm == 0.0 {
            continue;
        }
        let beta = -(alpha * alpha + xnorm * xnorm).sqrt().copysign(alpha);
        tau[i] = (beta - alpha) / beta;
        for r in i + 1..m {
            a[(r, i)] /= alpha - beta;
        }
        a[(i, i)] = beta;
        for j in i + 1..n {
            let mut dot = a[(i, j)];
            for r in i + 1..m {
                dot += a[(r, i)] * a[(r, j)];
            }
            a[(i, j)] -= tau[i] * dot;
            for r in i + 1..m {
                a[(r, j)] -= tau[i] * dot * a[(r, i)];
            }
        }
    }
    (a, tau)
}

/// The `m × m` orthogonal `Q` of a factorization (`orgqr` on the vectors).
fn explicit_q(qr: &Mat<f64>, tau: &[f64], nb: usize) -> Mat<f64> {
    let m = qr.nrows();
    let mut q = Mat::from_fn(m, m, |i, j| if j < qr.ncols() { qr[(i, j)] } else { 0.0 });
    Qr::new().block_size(nb).orgqr(q.as_mut(), tau).expect("orgqr");
    q
}

/// `R`: the upper trapezoid of `qr` (`m × n`).
fn upper(qr: &Mat<f64>) -> Mat<f64> {
    Mat::from_fn(qr.nrows(), qr.ncols(), |i, j| if i <= j { qr[(i, j)] } else { 0.0 })
}

/// geqrf of a random `m × n` with block size `nb`; the dqrt01/dqrt02 ratios
/// and the probe; returns `(factored, tau)`.
fn check_factorization(m: usize, n: usize, nb: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let a = random_matrix(m, n, seed);
    let mut qr = a.clone();
    let mut tau = vec![f64::NAN; m.min(n)];
    Qr::new().block_size(nb).geqrf(qr.as_mut(), &mut tau).expect("geqrf");
    let q = explicit_q(&qr, &tau, nb);
    let qr_prod = product(q.as_ref(), upper(&qr).as_ref());
    let scale = |x: f64| if m == 0 || n == 0 { 0.0 } else { x };
    let r1 = scale(fro((&a - &qr_prod).as_ref()) / (fro(a.as_ref()) * m as f64 * EPS));
    let qtq = product(q.as_ref().transpose(), q.as_ref());
    let r2 = scale(fro((Mat::<f64>::identity(m, m) - qtq).as_ref()) / (m.max(1) as f64 * EPS));
    let r3 = qr_residual_probe(a.as_ref(), qr.as_ref(), &tau, 5).expect("probe");
    assert!(
        r1 < THRESH && r2 < THRESH && r3 < THRESH,
        "{m}x{n} nb {nb}: ‖A−QR‖ {r1}, ‖I−QᵀQ‖ {r2}, probe {r3}"
    );
    (qr, tau)
}

const ORDERS: [usize; 8] = [0, 1, 2, 7, 64, 65, 513, 1000];

#[test]
fn square_orders_with_blocks_that_do_and_do_not_divide() {
    let p = pool(2);
    for n in ORDERS {
        // 8 divides 64 and 1000, 40 divides 1000, 57 divides 513, 64 divides
        // 64; the others leave a narrower last panel.
        for nb in [1, 8, 32, 40, 57, 64, 128] {
            if n >= 513 && nb < 32 {
                continue;
            }
            p.install(|| check_factorization(n, n, nb, n as u64 + 1));
        }
    }
}

#[test]
fn rectangular_tall_and_wide() {
    let p = pool(2);
    for (m, n) in
        [(1, 7), (7, 1), (7, 2), (65, 64), (64, 65), (130, 7), (7, 130), (513, 200), (200, 513), (1000, 65)]
    {
        for nb in [16, 32, 48] {
            p.install(|| check_factorization(m, n, nb, (m * 31 + n) as u64));
        }
    }
}

#[test]
fn pools_of_one_two_and_four() {
    for threads in [1, 2, 4] {
        let p = pool(threads);
        for (m, n, nb) in [(300, 300, 64), (513, 65, 32), (65, 513, 32), (400, 250, 100)] {
            let (qr, tau) = p.install(|| check_factorization(m, n, nb, 9));
            // The same factorization whatever the number of participants, up
            // to rounding (faer's kernels may sum a block of different width
            // in another order).
            let (qr1, tau1) = pool(1).install(|| check_factorization(m, n, nb, 9));
            let tol = 1e3 * EPS * m.max(n) as f64;
            let dtau = tau.iter().zip(&tau1).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
            let dqr = fro((&qr - &qr1).as_ref()) / fro(qr1.as_ref());
            assert!(dtau <= tol && dqr <= tol, "{threads} threads, {m}x{n}: tau {dtau}, factors {dqr}");
        }
    }
}

#[test]
fn matches_the_unblocked_reference() {
    let p = pool(2);
    for (m, n) in [(1, 1), (2, 2), (7, 7), (7, 3), (3, 7), (64, 64), (65, 65), (80, 65), (65, 80)] {
        let a = random_matrix(m, n, 77);
        let (r_ref, tau_ref) = reference_qr(&a);
        for nb in [1, 3, 16, 32, 64, 200] {
            let mut qr = a.clone();
            let mut tau = vec![0.0; m.min(n)];
            p.install(|| Qr::new().block_size(nb).geqrf(qr.as_mut(), &mut tau)).expect("geqrf");
            let tol = 1e3 * EPS * (m.max(n) as f64);
            for (i, (t, tr)) in tau.iter().zip(&tau_ref).enumerate() {
                assert!((t - tr).abs() <= tol, "{m}x{n} nb {nb}: tau[{i}] {t} vs {tr}");
            }
            let diff = fro((&qr - &r_ref).as_ref()) / fro(a.as_ref());
            assert!(diff <= tol, "{m}x{n} nb {nb}: factored matrix differs by {diff}");
        }
    }
}

#[test]
fn ormqr_every_side_and_transpose_against_the_explicit_q() {
    let p = pool(2);
    for (m, n, nb) in [(1, 1, 4), (7, 7, 3), (65, 40, 16), (130, 130, 32), (200, 150, 64), (40, 65, 16)] {
        let a = random_matrix(m, n, 3);
        let mut qr = a.clone();
        let mut tau = vec![0.0; m.min(n)];
        p.install(|| Qr::new().block_size(nb).geqrf(qr.as_mut(), &mut tau)).expect("geqrf");
        let q = explicit_q(&qr, &tau, nb);
        // On 2 participants nc = 3 takes the unblocked path, 50 the reflector
        // blocks one by one over row pieces, 150 column pieces.
        for nc in [3, 50, 150] {
            for side in [Side::Left, Side::Right] {
                for op in [Op::NoTrans, Op::Trans] {
                    let c = match side {
                        Side::Left => random_matrix(m, nc, 4),
                        Side::Right => random_matrix(nc, m, 4),
                    };
                    let qop = match op {
                        Op::NoTrans => q.as_ref(),
                        Op::Trans => q.as_ref().transpose(),
                    };
                    let want = match side {
                        Side::Left => product(qop, c.as_ref()),
                        Side::Right => product(c.as_ref(), qop),
                    };
                    let mut got = c.clone();
                    p.install(|| Qr::new().block_size(nb).ormqr(side, op, qr.as_ref(), &tau, got.as_mut()))
                        .expect("ormqr");
                    let r = fro((&got - &want).as_ref()) / (fro(c.as_ref()) * m as f64 * EPS);
                    assert!(r < THRESH, "{m}x{n} nb {nb} nc {nc} {side:?} {op:?}: {r}");
                }
            }
        }
    }
}

#[test]
fn orgqr_with_fewer_reflectors_than_columns() {
    // Q's first n columns from k < n reflectors: the columns beyond k are
    // H_0···H_{k−1}·e_j.
    let (m, n, k) = (90, 60, 37);
    let a = random_matrix(m, k, 8);
    let mut qr = a.clone();
    let mut tau = vec![0.0; k];
    geqrf(qr.as_mut(), &mut tau).expect("geqrf");
    let full = explicit_q(&qr, &tau, 16);
    let mut q = Mat::from_fn(m, n, |i, j| if j < k { qr[(i, j)] } else { 0.5 });
    Qr::new().block_size(16).orgqr(q.as_mut(), &tau).expect("orgqr");
    let r = fro((&q - full.as_ref().subcols(0, n)).as_ref()) / (m as f64 * EPS);
    assert!(r < THRESH, "{r}");
}

#[test]
fn zero_columns_and_triangular_input_give_tau_zero() {
    // An upper triangular matrix is its own R: every column below the
    // diagonal is zero, so every tau is 0 and nothing changes.
    let a = Mat::from_fn(20, 15, |i, j| if i <= j { (i + 2 * j + 1) as f64 } else { 0.0 });
    let mut qr = a.clone();
    let mut tau = vec![1.0; 15];
    Qr::new().block_size(4).geqrf(qr.as_mut(), &mut tau).expect("geqrf");
    assert!(tau.iter().all(|&t| t == 0.0), "{tau:?}");
    assert_eq!(qr, a);
    // A zero column: tau = 0 there, the factorization still exact.
    let mut a = random_matrix(30, 10, 2);
    a.col_mut(3).fill(0.0);
    a.col_mut(0).fill(0.0);
    let mut qr = a.clone();
    let mut tau = vec![1.0; 10];
    geqrf(qr.as_mut(), &mut tau).expect("geqrf");
    assert_eq!(tau[0], 0.0);
    assert!(qr_residual_probe(a.as_ref(), qr.as_ref(), &tau, 1).expect("probe") < THRESH);
}

#[test]
fn tiny_values_are_rescaled_as_dlarfg_does() {
    let a = Mat::from_fn(40, 12, |i, j| 1e-300 * ((i * 7 + j * 3) % 11) as f64 - 4e-300);
    let (qr, tau) = check_factorization_of(&a, 8);
    assert!(tau.iter().all(|t| t.is_finite()));
    assert!(qr_residual_probe(a.as_ref(), qr.as_ref(), &tau, 2).expect("probe") < THRESH);
}

#[test]
fn huge_values_do_not_overflow_the_norm() {
    // Squares of 1e200 overflow: the norm falls back to the scaled sum.
    let small = random_matrix(40, 12, 17);
    let a = Mat::from_fn(40, 12, |i, j| small[(i, j)] * 1e200);
    let (qr, tau) = check_factorization_of(&a, 8);
    assert!(tau.iter().all(|t| t.is_finite()) && qr.col_iter().all(|c| c.iter().all(|x| x.is_finite())));
    assert!(qr_residual_probe(a.as_ref(), qr.as_ref(), &tau, 2).expect("probe") < THRESH);
    // Against the same matrix at ordinary scale.
    let (want, want_tau) = check_factorization_of(&small, 8);
    for (t, w) in tau.iter().zip(&want_tau) {
        assert!((t - w).abs() < 1e-12, "{t} {w}");
    }
    assert!((qr[(0, 0)] * 1e-200 - want[(0, 0)]).abs() < 1e-12 * want[(0, 0)].abs());
}

fn check_factorization_of(a: &Mat<f64>, nb: usize) -> (Mat<f64>, Vec<f64>) {
    let mut qr = a.clone();
    let mut tau = vec![0.0; a.nrows().min(a.ncols())];
    Qr::new().block_size(nb).geqrf(qr.as_mut(), &mut tau).expect("geqrf");
    (qr, tau)
}

#[test]
fn nan_and_infinity_are_computed_with() {
    for bad in [f64::NAN, f64::INFINITY] {
        let mut a = random_matrix(150, 120, 6);
        a[(70, 50)] = bad;
        let (qr, tau) = pool(2).install(|| check_factorization_of(&a, 32));
        // Columns before the bad one are untouched by it.
        assert!(tau[..50].iter().all(|t| t.is_finite()));
        assert!(qr.col(119).iter().any(|x| x.is_nan()) || tau.iter().any(|t| !t.is_finite()));
        let mut c = random_matrix(150, 20, 1);
        ormqr(Side::Left, Op::Trans, qr.as_ref(), &tau, c.as_mut()).expect("ormqr");
        let mut q = qr.clone();
        orgqr(q.as_mut(), &tau).expect("orgqr");
    }
}

#[test]
fn strided_views_give_the_column_major_result() {
    let a = random_matrix(90, 70, 12);
    let (qr, tau) = check_factorization_of(&a, 16);
    // The same matrix stored transposed (row-major view).
    let mut at = a.transpose().to_owned();
    let mut tau2 = vec![0.0; 70];
    Qr::new().block_size(16).geqrf(at.as_mut().transpose_mut(), &mut tau2).expect("geqrf");
    assert_eq!(tau, tau2);
    assert_eq!(qr, at.transpose().to_owned());
    let c = random_matrix(90, 20, 1);
    let mut want = c.clone();
    ormqr(Side::Left, Op::Trans, qr.as_ref(), &tau, want.as_mut()).expect("ormqr");
    let mut ct = c.transpose().to_owned();
    ormqr(Side::Left, Op::Trans, at.as_ref().transpose(), &tau, ct.as_mut().transpose_mut()).expect("ormqr");
    assert_eq!(want, ct.transpose().to_owned());
}

#[test]
fn argument_errors_name_the_argument() {
    let named = |r: Result<(), LaError>, arg: &str| matches!(r, Err(LaError::InvalidArgument { argument, .. }) if argument == arg);
    let mut a = random_matrix(10, 6, 1);
    let mut tau = vec![0.0; 5];
    assert!(named(geqrf(a.as_mut(), &mut tau), "tau"));
    let mut tau = vec![0.0; 6];
    assert_eq!(Qr::new().block_size(0).geqrf(a.as_mut(), &mut tau), Err(LaError::InvalidTileSize { nb: 0 }));
    geqrf(a.as_mut(), &mut tau).expect("geqrf");
    // orgqr: n > m, k > n.
    let mut wide = random_matrix(5, 6, 1);
    assert!(named(orgqr(wide.as_mut(), &tau[..5]), "a"));
    let mut narrow = a.as_ref().subcols(0, 4).to_owned();
    assert!(named(orgqr(narrow.as_mut(), &tau), "tau"));
    // ormqr: C not fitting a on the side, too many reflectors.
    let mut c = random_matrix(9, 3, 1);
    assert!(named(ormqr(Side::Left, Op::NoTrans, a.as_ref(), &tau, c.as_mut()), "a"));
    let mut c = random_matrix(3, 10, 1);
    assert!(named(ormqr(Side::Left, Op::NoTrans, a.as_ref(), &tau, c.as_mut()), "a"));
    ormqr(Side::Right, Op::NoTrans, a.as_ref(), &tau, c.as_mut()).expect("fits on the right");
    let seven = vec![0.0; 7];
    let mut c = random_matrix(10, 3, 1);
    assert!(named(ormqr(Side::Left, Op::Trans, a.as_ref(), &seven, c.as_mut()), "tau"));
    assert!(named(qr_residual_probe(a.as_ref(), a.as_ref(), &seven, 1).map(|_| ()), "tau"));
    assert!(named(qr_residual_probe(a.as_ref(), c.as_ref(), &tau, 1).map(|_| ()), "qr"));
    // Nothing was written by the failed calls.
    let before = c.clone();
    let _ = ormqr(Side::Left, Op::Trans, a.as_ref(), &seven, c.as_mut());
    assert_eq!(c, before);
}

#[test]
fn empty_shapes() {
    for (m, n) in [(0, 0), (0, 5), (5, 0)] {
        let mut a = Mat::<f64>::zeros(m, n);
        let mut tau: Vec<f64> = Vec::new();
        geqrf(a.as_mut(), &mut tau).expect("geqrf");
        let mut c = Mat::<f64>::zeros(m, 3);
        ormqr(Side::Left, Op::NoTrans, a.as_ref(), &tau, c.as_mut()).expect("ormqr");
        assert_eq!(qr_residual_probe(a.as_ref(), a.as_ref(), &tau, 1), Ok(0.0));
    }
    let mut q = Mat::<f64>::zeros(4, 0);
    orgqr(q.as_mut(), &[]).expect("orgqr");
    // No reflectors: Q = I.
    let mut q = Mat::<f64>::from_fn(4, 3, |_, _| 9.0);
    orgqr(q.as_mut(), &[]).expect("orgqr");
    assert_eq!(q, Mat::<f64>::identity(4, 3));
}

#[test]
fn the_probe_sees_a_wrong_factor() {
    let a = random_matrix(200, 150, 3);
    let (mut qr, tau) = check_factorization_of(&a, 32);
    assert!(qr_residual_probe(a.as_ref(), qr.as_ref(), &tau, 1).expect("probe") < 1.0);
    qr[(100, 120)] *= 1.0 + 1e-6;
    assert!(qr_residual_probe(a.as_ref(), qr.as_ref(), &tau, 1).expect("probe") > 100.0);
}

#[test]
fn block_applied_by_row_and_column_pieces_matches_the_sequential_product() {
    use super::block::Block;
    use super::split::apply_left_par;
    // Large enough that the pieces are worth their joins (MIN_PIECE_FLOPS).
    let (r, w) = (4000, 128);
    let mut panel = random_matrix(r, w, 21);
    let mut tau = vec![0.0; w];
    super::householder::geqr2(panel.as_mut(), &mut tau);
    let blk = Block::from_panel(panel.as_ref(), &tau);
    for threads in [2, 3, 4] {
        // 20 columns: one column piece of several row pieces; 70: a few
        // column pieces, each cut into row pieces; 300: column pieces only.
        for nc in [20, 70, 300] {
            for op in [Op::NoTrans, Op::Trans] {
                let c = random_matrix(r, nc, 22);
                let mut want = c.clone();
                blk.apply_left(op, want.as_mut());
                let mut got = c.clone();
                pool(threads).install(|| apply_left_par(&blk, op, got.as_mut()));
                let d = fro((&got - &want).as_ref()) / (fro(c.as_ref()) * r as f64 * EPS);
                assert!(d < 1.0, "{threads} threads, {nc} columns, {op:?}: {d}");
            }
        }
    }
}

#[test]
fn panel_on_several_participants_matches_one() {
    use super::householder::panel;
    // Tall enough that the joins' couplings and the applies are cut into
    // row pieces (MIN_ROWS, MIN_PIECE_FLOPS).
    let (r, w) = (4000, 128);
    let a = random_matrix(r, w, 31);
    let factor = |threads: usize| {
        let mut f = a.clone();
        let mut tau = vec![0.0; w];
        let t = pool(threads).install(|| panel(f.as_mut(), &mut tau).t().to_owned());
        (f, tau, t)
    };
    let (f1, tau1, t1) = factor(1);
    for threads in [2, 4] {
        let (f, tau, t) = factor(threads);
        let d = fro((&f - &f1).as_ref()) / (fro(a.as_ref()) * r as f64 * EPS);
        let dt = fro((&t - &t1).as_ref()) / (fro(t1.as_ref()) * r as f64 * EPS);
        let dtau = tau.iter().zip(&tau1).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
        assert!(d < 1.0 && dt < 1.0 && dtau < 1e-12, "{threads} threads: {d} {dt} {dtau}");
    }
    // And the factorization is a QR of `a`.
    let probe = qr_residual_probe(a.as_ref(), f1.as_ref(), &tau1, 5).expect("probe");
    assert!(probe < THRESH, "probe {probe}");
}
