//! The eigenvalues-only `sygv` (`values.rs`) against the eigenvalues of
//! the with-vectors path (`sygv_with`, itself checked with LAPACK's
//! `dsgt01` measures in `tests.rs`), with LAPACK's eigenvalue-agreement
//! measure (`ddrvst`'s test between `jobz = 'N'` and `'V'`, scaled by the
//! order as the backward-error bound of either path is):
//! `max |w₁ − w₂| / (n · ulp · max |w|)` below 30, `max |w|` being `‖C‖₂`
//! of the standard problem both paths share. Also: the triangles each path
//! must not touch, the same errors, both reductions inside the values
//! path, and the tridiagonal eigenvalue solver alone against divide and
//! conquer.

use super::evd::{self, eigen_by, eigenvalues_by, Reduction};
use super::test_support::{check_malformed_arguments, pool, spd, sym, wilkinson, with_spectrum};
use super::*;
use crate::random_matrix;

/// LAPACK's threshold for its test ratios.
const THRESHOLD: f64 = 30.0;

/// `max |x − y| / (n · ulp · max(|x|, |y|))` over two spectra of `n`
/// (LAPACK's `ddrvst` measure between two eigenvalue computations, times
/// `n`); `0` for two zero spectra.
fn agreement(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len());
    let scale = x.iter().chain(y).fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = x.iter().zip(y).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let n = x.len().max(1) as f64;
    diff / (n * f64::EPSILON * scale).max(f64::MIN_POSITIVE)
}

/// Runs `sygv_with` and `sygv_values_with` on `(a, b)` (the triangles
/// opposite `uplo` poisoned with NaN in both) on `threads` participants and
/// checks: the values ascending and agreeing with the vectors path's, the
/// opposite triangles of `a` and `b` untouched, `b`'s factor the vectors
/// path's. Returns the agreement ratio.
fn agree(uplo: Uplo, a: &Mat<f64>, b: &Mat<f64>, threads: usize, nb: usize, what: &str) -> f64 {
    let n = a.nrows();
    let outside = |i: usize, j: usize| match uplo {
        Uplo::Lower => i < j,
        Uplo::Upper => i > j,
    };
    let poison = |m: &Mat<f64>| Mat::from_fn(n, n, |i, j| if outside(i, j) { f64::NAN } else { m[(i, j)] });
    let pool = pool(threads);
    let (mut z, mut l1, mut w1) = (poison(a), poison(b), vec![f64::NAN; n]);
    pool.install(|| sygv_with(uplo, z.as_mut(), l1.as_mut(), &mut w1, nb)).expect("a definite pencil");
    let (mut c, mut l2, mut w2) = (poison(a), poison(b), vec![f64::NAN; n]);
    pool.install(|| sygv_values_with(uplo, c.as_mut(), l2.as_mut(), &mut w2, nb)).expect("a definite pencil");
    assert!(w2.windows(2).all(|p| p[0] <= p[1]), "{what}: eigenvalues not ascending");
    let tol = b.norm_max() * n as f64 * f64::EPSILON;
    for j in 0..n {
        for i in 0..n {
            if outside(i, j) {
                assert!(
                    c[(i, j)].is_nan() && l2[(i, j)].is_nan(),
                    "{what}: written at ({i}, {j}) outside {uplo:?}"
                );
            } else {
                assert!((l1[(i, j)] - l2[(i, j)]).abs() <= tol, "{what}: the factors differ at ({i}, {j})");
            }
        }
    }
    let ratio = agreement(&w1, &w2);
    assert!(ratio < THRESHOLD, "{what}: eigenvalues-only against with-vectors ratio {ratio}");
    ratio
}

#[test]
fn lapack_sizes_both_triangles() {
    for n in [0, 1, 2, 7, 64, 65, 200, 513] {
        for uplo in [Uplo::Lower, Uplo::Upper] {
            let (a, b) = (sym(n, 600 + n as u64), spd(n, 700 + n as u64));
            agree(uplo, &a, &b, 2, 64, &format!("n {n} {uplo:?}"));
        }
    }
}

#[test]
fn order_1000_and_default_entry() {
    let n = 1000;
    let (a, b) = (sym(n, 11), spd(n, 12));
    agree(Uplo::Lower, &a, &b, 2, default_tile(n), "n 1000 lower");
    agree(Uplo::Upper, &a, &b, 2, 100, "n 1000 upper, nb 100");
    // sygv_values is sygv_values_with(Lower, .., default_tile(n)).
    let (mut c1, mut l1, mut w1) = (a.clone(), b.clone(), vec![0.0; n]);
    let (mut c2, mut l2, mut w2) = (a.clone(), b.clone(), vec![0.0; n]);
    let p = pool(2);
    p.install(|| sygv_values(c1.as_mut(), l1.as_mut(), &mut w1)).expect("definite");
    p.install(|| sygv_values_with(Uplo::Lower, c2.as_mut(), l2.as_mut(), &mut w2, default_tile(n)))
        .expect("definite");
    assert!(agreement(&w1, &w2) < THRESHOLD);
}

#[test]
fn pools_of_1_2_4() {
    for threads in [1, 2, 4] {
        let (a, b) = (sym(300, threads as u64), spd(300, 10 + threads as u64));
        agree(Uplo::Lower, &a, &b, threads, 64, &format!("n 300 on {threads}"));
        agree(Uplo::Upper, &a, &b, threads, 33, &format!("n 300 upper nb 33 on {threads}"));
    }
}

/// Graded pencils: `A = D·S·D` with `D = diag(10^(−6·i/n))` (twelve orders
/// of magnitude across `A`), and a graded `B` too; the measure is relative
/// to the largest eigenvalue, as LAPACK's.
#[test]
fn graded() {
    let n = 200;
    let d: Vec<f64> = (0..n).map(|i| 10f64.powf(-6.0 * i as f64 / n as f64)).collect();
    let s = sym(n, 21);
    let a = Mat::from_fn(n, n, |i, j| d[i] * s[(i, j)] * d[j]);
    agree(Uplo::Lower, &a, &spd(n, 22), 2, 64, "graded A");
    agree(Uplo::Upper, &a, &spd(n, 22), 2, 64, "graded A, upper");
    let g: Vec<f64> = (0..n).map(|i| 10f64.powf(-2.0 * i as f64 / n as f64)).collect();
    let b0 = spd(n, 23);
    let b = Mat::from_fn(n, n, |i, j| g[i] * b0[(i, j)] * g[j]);
    agree(Uplo::Lower, &a, &b, 2, 64, "graded A and B");
}

/// The spectra of `tests.rs`'s stress test: clusters, repeated values, a
/// zero matrix, Wilkinson's pairs.
#[test]
fn clustered_repeated_and_wilkinson() {
    let n = 300;
    let id = Mat::<f64>::identity(n, n);
    let clusters: Vec<f64> = (0..n).map(|i| (i / 30) as f64 + 1e-13 * i as f64).collect();
    agree(Uplo::Lower, &with_spectrum(&clusters, 1), &id, 2, 64, "10 clusters of 30 within 3e-12");
    let two: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { -1.0 } else { 1.0 }).collect();
    agree(Uplo::Lower, &with_spectrum(&two, 2), &spd(n, 3), 4, 64, "±1, random B");
    agree(Uplo::Lower, &Mat::zeros(n, n), &spd(n, 4), 2, 64, "A = 0");
    agree(Uplo::Upper, &id, &id, 2, 64, "A = B = I");
    for m in [10, 100] {
        let k = 2 * m + 1;
        let ratio = agree(Uplo::Lower, &wilkinson(m), &Mat::identity(k, k), 2, 16, &format!("W+ {k}"));
        assert!(ratio < THRESHOLD);
        agree(Uplo::Upper, &wilkinson(m), &spd(k, 5), 2, 16, &format!("W+ {k}, random B, upper"));
    }
}

/// Both reductions inside the values path, whatever the crossover: the
/// eigenvalues of the standard problem `C` (random, graded, clustered,
/// Wilkinson's) against `eigen_by`'s with the one-stage reduction.
#[test]
fn one_and_two_stage_reductions() {
    let graded = |n: usize| {
        let s = sym(n, 900);
        Mat::from_fn(n, n, |i, j| 10f64.powf(-6.0 * (i + j) as f64 / n as f64) * s[(i, j)])
    };
    let clusters =
        |n: usize| with_spectrum(&(0..n).map(|i| (i / 30) as f64 + 1e-13 * i as f64).collect::<Vec<_>>(), 3);
    let cases = [1, 2, 3, 65, 129, 400].map(|n| sym(n, 800 + n as u64));
    for c in cases.into_iter().chain([graded(300), clusters(300), wilkinson(100)]) {
        let n = c.nrows();
        let (mut z, mut cv, mut want) = (Mat::<f64>::zeros(n, n), c.clone(), vec![0.0; n]);
        pool(2).install(|| eigen_by(Reduction::OneStage, cv.as_mut(), &mut want, z.as_mut()));
        for how in [Reduction::OneStage, Reduction::TwoStage(two_stage::BAND), Reduction::TwoStage(16)] {
            let (mut cw, mut w) = (c.clone(), vec![0.0; n]);
            pool(2).install(|| eigenvalues_by(how, cw.as_mut(), &mut w));
            let ratio = agreement(&want, &w);
            assert!(ratio < THRESHOLD, "n {n} {how:?}: ratio {ratio}");
        }
    }
}

#[test]
fn same_errors_as_the_vectors_path() {
    let n = 65;
    let a = sym(n, 3);
    let mut w = vec![0.0; n];
    // B not positive definite: the same column, b unchanged.
    for (col, uplo) in [(37, Uplo::Lower), (0, Uplo::Lower), (11, Uplo::Upper)] {
        let mut b = crate::random_spd(n, 4);
        b[(col, col)] = if col == 0 { 0.0 } else { -1.0 };
        let (mut c, mut l) = (a.clone(), b.clone());
        let vectors = sygv_with(uplo, c.as_mut(), l.as_mut(), &mut w, 16);
        let (mut c, mut l) = (a.clone(), b.clone());
        let values = pool(2).install(|| sygv_values_with(uplo, c.as_mut(), l.as_mut(), &mut w, 16));
        assert_eq!(values, Err(LaError::NotPositiveDefinite { column: col }));
        assert_eq!(values, vectors);
        assert!(l == b, "b must be unchanged");
    }
    // NaN and infinities: the first in A's triangle, then B's; coordinates of the triangle.
    let b = spd(n, 6);
    let cases: [(Uplo, (usize, usize), bool); 4] = [
        (Uplo::Lower, (9, 4), true),
        (Uplo::Lower, (7, 7), false),
        (Uplo::Upper, (3, 9), true),
        (Uplo::Upper, (2, 30), false),
    ];
    for (uplo, (i, j), in_a) in cases {
        let (mut c, mut l) = (a.clone(), b.clone());
        if in_a {
            c[(i, j)] = f64::NAN;
            c[(i + 1, j + 1)] = f64::INFINITY; // later in the triangle's scan order
        } else {
            l[(i, j)] = f64::NEG_INFINITY;
        }
        let (mut c2, mut l2) = (c.clone(), l.clone());
        let values = sygv_values_with(uplo, c.as_mut(), l.as_mut(), &mut w, 8);
        assert_eq!(values, Err(LaError::NonFinite { row: i, col: j }), "{uplo:?} ({i}, {j})");
        assert_eq!(values, sygv_with(uplo, c2.as_mut(), l2.as_mut(), &mut w, 8));
    }
    // A NaN in the triangle not read is ignored.
    let (mut c, mut l) = (a.clone(), b.clone());
    c[(2, 11)] = f64::NAN;
    l[(3, 19)] = f64::NAN;
    sygv_values(c.as_mut(), l.as_mut(), &mut w).expect("upper triangles are not read");
    assert!(w.iter().all(|x| x.is_finite()));
}

#[test]
fn malformed_arguments_are_named() {
    check_malformed_arguments(sygv_values, sygv_values_with);
}

/// A tridiagonal matrix as its diagonal and off-diagonal.
type Tridiagonal = (Vec<f64>, Vec<f64>);

/// The tridiagonal eigenvalue solver alone (`tridiag_values.rs`) against
/// divide and conquer's eigenvalues (`divide/`, checked with `dstt21`'s
/// measures in its own tests): random, Wilkinson, graded, split and zero
/// matrices.
#[test]
fn tridiagonal_values_against_divide_and_conquer() {
    let n = 1500;
    let r = random_matrix(n, 2, 77);
    let random = ((0..n).map(|i| r[(i, 0)]).collect(), (0..n - 1).map(|i| r[(i, 1)]).collect());
    let w = wilkinson(100);
    let wilk = ((0..201).map(|i| w[(i, i)]).collect(), vec![1.0; 200]);
    // Graded both ways: 10^(-i/10) down the diagonal, and the reverse.
    let g: Vec<f64> = (0..300).map(|i| 10f64.powf(-(i as f64) / 10.0)).collect();
    let down = (g.clone(), g[1..].iter().map(|x| 0.5 * x).collect::<Vec<f64>>());
    let up = (g.iter().rev().copied().collect(), down.1.iter().rev().copied().collect());
    // Blocks split by zeros, and the zero matrix.
    let split = (
        (0..50).map(|i| (i % 7) as f64).collect(),
        (0..49).map(|i| if i % 10 == 9 { 0.0 } else { 1.0 }).collect(),
    );
    let zero = (vec![0.0; 40], vec![0.0; 39]);
    let cases: [(&str, Tridiagonal); 6] = [
        ("random", random),
        ("W+ 201", wilk),
        ("graded down", down),
        ("graded up", up),
        ("split", split),
        ("zero", zero),
    ];
    for (what, (d, e)) in cases {
        let m = d.len();
        let (mut want, mut v) = (vec![0.0; m], Mat::<f64>::zeros(m, m));
        pool(2).install(|| divide::eigen(&d, &e, &mut want, v.as_mut()));
        want.sort_by(f64::total_cmp);
        let mut got = vec![f64::NAN; m];
        tridiag_values::eigenvalues(&d, &e, &mut got);
        assert!(got.windows(2).all(|p| p[0] <= p[1]), "{what}: not ascending");
        let ratio = agreement(&want, &got);
        assert!(ratio < THRESHOLD, "{what}: ratio {ratio}");
    }
    let mut w = [0.0; 1];
    tridiag_values::eigenvalues(&[-3.5], &[], &mut w);
    assert_eq!(w, [-3.5]);
    tridiag_values::eigenvalues(&[], &[], &mut []);
}

/// The values path's phases after the reduction to standard form, timed
/// (wall clock, 2 participants): each tridiagonal reduction, then the
/// tridiagonal eigenvalues. Ignored; run with
/// `VALUES_N=2000,4000 cargo test --release -p herd-la --lib values_phase_times -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement harness: run with --ignored --nocapture"]
fn values_phase_times() {
    let ns: Vec<usize> = std::env::var("VALUES_N")
        .unwrap_or_else(|_| "2000".into())
        .split(',')
        .map(|x| x.trim().parse().expect("an order"))
        .collect();
    let pool = pool(2);
    for n in ns {
        let c = sym(n, 5);
        for round in 0..3 {
            for how in [Reduction::OneStage, Reduction::TwoStage(two_stage::BAND)] {
                let (mut cw, mut d, mut e, mut w) = (c.clone(), vec![0.0; n], vec![0.0; n - 1], vec![0.0; n]);
                let t0 = std::time::Instant::now();
                pool.install(|| drop(evd::reduce(cw.as_mut(), how, &mut d, &mut e)));
                let t1 = std::time::Instant::now();
                tridiag_values::eigenvalues(&d, &e, &mut w);
                let t2 = std::time::Instant::now();
                println!(
                    "n {n} round {round} {how:?}: reduce {:.3} s, tridiagonal eigenvalues {:.3} s",
                    (t1 - t0).as_secs_f64(),
                    (t2 - t1).as_secs_f64()
                );
            }
        }
    }
}

/// The tridiagonal eigenvalue phase alone, before and after `sterf`:
/// faer's QR iteration (`tridiag_values::faer_qr`, the solver before) and
/// `tridiag_values::eigenvalues` (`sterf`) on the same tridiagonal — the
/// values path's reduction of `sym(n, 5)`, as in [`values_phase_times`] —
/// in alternation (faer first in rounds 0 and 2, `sterf` first in round
/// 1), the two spectra checked to agree. Ignored; run with
/// `VALUES_N=2000,4000 cargo test --release -p herd-la --lib sterf_against_faer_qr_times -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement harness: run with --ignored --nocapture"]
fn sterf_against_faer_qr_times() {
    let ns: Vec<usize> = std::env::var("VALUES_N")
        .unwrap_or_else(|_| "2000".into())
        .split(',')
        .map(|x| x.trim().parse().expect("an order"))
        .collect();
    for n in ns {
        let (mut c, mut d, mut e) = (sym(n, 5), vec![0.0; n], vec![0.0; n - 1]);
        pool(2).install(|| drop(evd::reduce(c.as_mut(), Reduction::for_order(n, false), &mut d, &mut e)));
        for round in 0..3 {
            let (mut w_qr, mut w_sterf) = (vec![0.0; n], vec![0.0; n]);
            let mut time_qr = || {
                let t = std::time::Instant::now();
                assert!(tridiag_values::faer_qr(&d, &e, &mut w_qr));
                t.elapsed().as_secs_f64()
            };
            let (qr, sterf) = if round % 2 == 0 {
                let qr = time_qr();
                let t = std::time::Instant::now();
                tridiag_values::eigenvalues(&d, &e, &mut w_sterf);
                (qr, t.elapsed().as_secs_f64())
            } else {
                let t = std::time::Instant::now();
                tridiag_values::eigenvalues(&d, &e, &mut w_sterf);
                let sterf = t.elapsed().as_secs_f64();
                (time_qr(), sterf)
            };
            let ratio = agreement(&w_qr, &w_sterf);
            assert!(ratio < THRESHOLD, "n {n}: ratio {ratio}");
            println!(
                "n {n} round {round}: faer QR {qr:.4} s, sterf {sterf:.4} s (agreement ratio {ratio:.3})"
            );
        }
    }
}
