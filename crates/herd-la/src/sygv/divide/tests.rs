//! The divide-and-conquer tridiagonal eigensolver checked with LAPACK's
//! `dstt21` measures — `‖T·V − V·Λ‖₁ / (n·‖T‖₁·ε)` and `‖Vᵀ·V − I‖₁ / (n·ε)`,
//! both below 30 — and its eigenvalues against faer's self-adjoint EVD of
//! the dense `T`, on random, structured and deflation-heavy matrices.

use faer::{Mat, MatRef, Side};

use super::eigen;
use crate::rng::SplitMix64;
use crate::sygv::test_support::{mul, pool, tridiagonal_matrix};

const THRESHOLD: f64 = 30.0;

/// `max_j Σ_i |a_ij|`.
fn one_norm(a: MatRef<'_, f64>) -> f64 {
    (0..a.ncols()).map(|j| (0..a.nrows()).map(|i| a[(i, j)].abs()).sum::<f64>()).fold(0.0, f64::max)
}

/// Solves `(d, e)` on `threads` participants and checks the residual, the
/// orthogonality, the order within unreduced blocks and the eigenvalues
/// against faer; returns the two ratios.
fn check_on(d: &[f64], e: &[f64], threads: usize, what: &str) -> (f64, f64) {
    let n = d.len();
    let (mut w, mut v) = (vec![0.0; n], Mat::<f64>::zeros(n, n));
    pool(threads).install(|| eigen(d, e, &mut w, v.as_mut()));
    if n == 0 {
        return (0.0, 0.0);
    }
    let t = tridiagonal_matrix(d, e);
    let lambda = Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
    let r = mul(t.as_ref(), v.as_ref()) - mul(v.as_ref(), lambda.as_ref());
    let norm = one_norm(t.as_ref()).max(f64::MIN_POSITIVE);
    let eps = f64::EPSILON;
    let residual = one_norm(r.as_ref()) / (n as f64 * norm * eps);
    let g = mul(v.transpose(), v.as_ref()) - Mat::<f64>::identity(n, n);
    let orthogonality = one_norm(g.as_ref()) / (n as f64 * eps);
    assert!(residual < THRESHOLD, "{what}: residual ratio {residual}");
    assert!(orthogonality < THRESHOLD, "{what}: orthogonality ratio {orthogonality}");
    // Ascending within each unreduced block.
    for i in 1..n {
        let split = e[i - 1].abs() <= super::EPS * d[i - 1].abs().sqrt() * d[i].abs().sqrt();
        assert!(split || w[i - 1] <= w[i], "{what}: w[{}] = {} > w[{i}] = {}", i - 1, w[i - 1], w[i]);
    }
    let mut ours = w.clone();
    ours.sort_by(f64::total_cmp);
    let mut reference = t.self_adjoint_eigenvalues(Side::Lower).expect("faer converges");
    reference.sort_by(f64::total_cmp);
    for (i, (a, b)) in ours.iter().zip(&reference).enumerate() {
        assert!(
            (a - b).abs() <= THRESHOLD * n as f64 * eps * norm,
            "{what}: eigenvalue {i}: {a} vs faer's {b}"
        );
    }
    eprintln!("{what}: residual {residual:.3} orthogonality {orthogonality:.3}");
    (residual, orthogonality)
}

/// [`check_on`] on two participants.
fn check(d: &[f64], e: &[f64], what: &str) -> (f64, f64) {
    check_on(d, e, 2, what)
}

/// A random tridiagonal matrix, entries in `(-1, 1)`.
fn random(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = SplitMix64::new(seed);
    let d = (0..n).map(|_| rng.next_signed()).collect();
    let e = (0..n.saturating_sub(1)).map(|_| rng.next_signed()).collect();
    (d, e)
}

/// Wilkinson's `W(2m+1)+`: `d = |m − i|`, `e = 1`; its large eigenvalues
/// come in pairs equal to many digits.
fn wilkinson(m: usize) -> (Vec<f64>, Vec<f64>) {
    let n = 2 * m + 1;
    ((0..n).map(|i| (m as f64 - i as f64).abs()).collect(), vec![1.0; n - 1])
}

#[test]
fn random_sizes_around_the_leaf() {
    for n in [0, 1, 2, 3, 31, 32, 33, 100, 500, 1000] {
        let (d, e) = random(n, 1000 + n as u64);
        check(&d, &e, &format!("random n {n}"));
    }
}

#[test]
fn pools_of_1_2_4() {
    let (d, e) = random(300, 7);
    for threads in [1, 2, 4] {
        check_on(&d, &e, threads, &format!("random n 300 on {threads}"));
    }
}

#[test]
fn wilkinson_matrices() {
    for m in [10, 50, 100, 250] {
        let (d, e) = wilkinson(m);
        check(&d, &e, &format!("W{}+", 2 * m + 1));
    }
}

#[test]
fn glued_wilkinson_matrices_deflate_heavily() {
    // 20 copies of W21+ glued by small off-diagonal entries: clusters of
    // 20 eigenvalues each, most of them deflated at every merge.
    for glue in [1e-14, 1e-10, 1e-6] {
        let (w, _) = wilkinson(10);
        let copies = 20;
        let d: Vec<f64> = (0..copies).flat_map(|_| w.iter().copied()).collect();
        let e: Vec<f64> = (0..d.len() - 1).map(|i| if (i + 1) % w.len() == 0 { glue } else { 1.0 }).collect();
        check(&d, &e, &format!("glued W21+, glue {glue:e}"));
    }
}

#[test]
fn diagonal_matrix() {
    let mut rng = SplitMix64::new(3);
    let d: Vec<f64> = (0..200).map(|_| rng.next_signed()).collect();
    let e = vec![0.0; 199];
    check(&d, &e, "diagonal");
}

#[test]
fn splits_in_the_middle() {
    let (d, mut e) = random(400, 5);
    // A 1 × 1 block, a 2 × 2 block and large blocks on either side.
    for i in [60, 61, 100, 102, 250] {
        e[i] = 0.0;
    }
    check(&d, &e, "zero off-diagonals");
    // Negligible rather than zero: the split test, not only e = 0.
    let (d, mut e) = random(300, 6);
    e[150] = 1e-300;
    check(&d, &e, "negligible off-diagonal");
}

#[test]
fn all_eigenvalues_equal() {
    // The identity plus off-diagonals below the split threshold (1 × 1
    // blocks), and plus tiny ones above it (one block whose eigenvalues
    // agree to 14 digits: nearly everything deflates by rotation).
    for (n, tiny) in [(300, 1e-17), (300, 1e-14), (1000, 1e-13)] {
        let d = vec![1.0; n];
        let e = vec![tiny; n - 1];
        check(&d, &e, &format!("identity plus {tiny:e}, n {n}"));
    }
    // Exactly equal: a scaled identity with no coupling at all.
    check(&[2.5; 40], &[0.0; 39], "2.5·I");
}

#[test]
fn graded_matrices() {
    // d_i = 10^-i, e_i = 10^-(i+½): unreduced, 100 orders of magnitude.
    let n = 100i32;
    let d: Vec<f64> = (0..n).map(|i| 10f64.powi(-i)).collect();
    let e: Vec<f64> = (0..n - 1).map(|i| 10f64.powf(-f64::from(i) - 0.5)).collect();
    check(&d, &e, "graded 10^-i");
    // A milder grading at a size with several merge levels.
    let (mut d, mut e) = random(500, 8);
    for i in 0..500 {
        d[i] *= 10f64.powf(-(i as f64) / 25.0);
        if i < 499 {
            e[i] *= 10f64.powf(-(i as f64 + 0.5) / 25.0);
        }
    }
    check(&d, &e, "graded 10^-(i/25)");
}

#[test]
fn tiny_and_huge_scales() {
    // The solver scales each block to max |T| = 1 and back.
    for scale in [1e-200, 1e200] {
        let (mut d, mut e) = random(120, 9);
        d.iter_mut().for_each(|x| *x *= scale);
        e.iter_mut().for_each(|x| *x *= scale);
        check(&d, &e, &format!("random scaled by {scale:e}"));
    }
}

#[test]
fn a_reduced_dense_matrix() {
    // A tridiagonal matrix as sygv meets it: the reduction of a random
    // symmetric matrix.
    let n = 600;
    let r = crate::random_matrix(n, n, 21);
    let mut a = Mat::from_fn(n, n, |i, j| r[(i, j)] + r[(j, i)]);
    let (mut d, mut e, mut tau) = (vec![0.0; n], vec![0.0; n - 1], vec![0.0; n - 1]);
    pool(2).install(|| super::super::tridiag::reduce(a.as_mut(), &mut d, &mut e, &mut tau));
    check(&d, &e, "reduced random symmetric");
}

/// Times the tridiagonal solve alone on the tridiagonal reduction of a
/// random symmetric matrix, on two participants, and checks the result:
/// `cargo test --release -p herd-la --lib -- --ignored tridiagonal_timing --nocapture`.
#[test]
#[ignore = "timing, run by hand"]
fn tridiagonal_timing() {
    let pool = pool(2);
    for n in [1000, 2000, 4000] {
        let r = crate::random_matrix(n, n, 3);
        let mut a = Mat::from_fn(n, n, |i, j| r[(i, j)] + r[(j, i)]);
        let (mut d, mut e, mut tau) = (vec![0.0; n], vec![0.0; n - 1], vec![0.0; n - 1]);
        pool.install(|| super::super::tridiag::reduce(a.as_mut(), &mut d, &mut e, &mut tau));
        let mut times = Vec::new();
        let (mut w, mut v) = (vec![0.0; n], Mat::<f64>::zeros(n, n));
        for _ in 0..3 {
            let start = std::time::Instant::now();
            pool.install(|| eigen(&d, &e, &mut w, v.as_mut()));
            times.push(start.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        println!("n {n}: divide and conquer {times:.3?} s");
        let t = tridiagonal_matrix(&d, &e);
        let lambda = Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
        let r = mul(t.as_ref(), v.as_ref()) - mul(v.as_ref(), lambda.as_ref());
        let residual = one_norm(r.as_ref()) / (n as f64 * one_norm(t.as_ref()) * f64::EPSILON);
        assert!(residual < THRESHOLD, "n {n}: residual ratio {residual}");
    }
}
