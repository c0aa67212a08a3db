//! Helpers the `sygv` tests share (its own, the divide-and-conquer
//! solver's and the two-stage reduction's): a pool, a product, random and
//! tridiagonal matrices, positive definite ones and ones with a given spectrum,
//! and the malformed-argument checks of both entry pairs.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};

use crate::{random_matrix, LaError, Uplo};

/// A pool of `threads` participants.
pub(super) fn pool(threads: usize) -> herd::Pool {
    herd::Pool::builder().num_threads(threads).build().expect("a test pool")
}

/// `x·y`, sequential.
pub(super) fn mul(x: MatRef<'_, f64>, y: MatRef<'_, f64>) -> Mat<f64> {
    let mut out = Mat::zeros(x.nrows(), y.ncols());
    matmul(out.as_mut(), Accum::Replace, x, y, 1.0, Par::Seq);
    out
}

/// A random symmetric positive definite `B = R·Rᵀ/n + I/2`, far from
/// diagonal (condition number of a few tens).
pub(super) fn spd(n: usize, seed: u64) -> Mat<f64> {
    let r = random_matrix(n, n, seed);
    let mut b = Mat::from_fn(n, n, |i, j| if i == j { 0.5 } else { 0.0 });
    if n > 0 {
        matmul(b.as_mut(), Accum::Add, r.as_ref(), r.transpose(), 1.0 / n as f64, Par::Seq);
    }
    b
}

/// `Q·diag(λ)·Qᵀ` with a random orthogonal `Q` (faer's QR of a random matrix).
pub(super) fn with_spectrum(lambda: &[f64], seed: u64) -> Mat<f64> {
    let n = lambda.len();
    let q = random_matrix(n, n, seed).qr().compute_Q();
    let ql = Mat::from_fn(n, n, |i, j| q[(i, j)] * lambda[j]);
    let a = mul(ql.as_ref(), q.transpose());
    Mat::from_fn(n, n, |i, j| 0.5 * (a[(i, j)] + a[(j, i)]))
}

/// A random symmetric matrix (entries in `(-2, 2)`).
pub(super) fn sym(n: usize, seed: u64) -> Mat<f64> {
    let r = random_matrix(n, n, seed);
    Mat::from_fn(n, n, |i, j| r[(i, j)] + r[(j, i)])
}

/// The symmetric tridiagonal matrix with diagonal `d` and off-diagonal `e`.
pub(super) fn tridiagonal_matrix(d: &[f64], e: &[f64]) -> Mat<f64> {
    let n = d.len();
    Mat::from_fn(n, n, |i, j| match i.abs_diff(j) {
        0 => d[i],
        1 => e[i.min(j)],
        _ => 0.0,
    })
}

/// Wilkinson's `W⁺` of order `2m + 1`: tridiagonal, `dᵢ = |m − i|`,
/// `eᵢ = 1`; its eigenvalues come in pairs equal to many digits.
pub(super) fn wilkinson(m: usize) -> Mat<f64> {
    let d: Vec<f64> = (0..=2 * m).map(|i| (m as f64 - i as f64).abs()).collect();
    tridiagonal_matrix(&d, &vec![1.0; 2 * m])
}

/// `sygv`'s and `sygv_values`'s signatures.
type Solve = fn(MatMut<'_, f64>, MatMut<'_, f64>, &mut [f64]) -> Result<(), LaError>;
/// `sygv_with`'s and `sygv_values_with`'s signatures.
type SolveWith = fn(Uplo, MatMut<'_, f64>, MatMut<'_, f64>, &mut [f64], usize) -> Result<(), LaError>;

/// Every malformed argument of `solve` / `solve_with` (`sygv` and
/// `sygv_with`, or the eigenvalues-only pair) named in the error, a zero
/// tile size refused, and the identity pencil solved (eigenvalues 1).
pub(super) fn check_malformed_arguments(solve: Solve, solve_with: SolveWith) {
    let named = |r: Result<(), LaError>, name: &str| match r {
        Err(LaError::InvalidArgument { argument, .. }) => assert_eq!(argument, name),
        other => panic!("expected an error naming {name}, got {other:?}"),
    };
    let mut w = vec![0.0; 4];
    let (mut a, mut b) = (Mat::<f64>::zeros(4, 5), Mat::<f64>::identity(4, 4));
    named(solve(a.as_mut(), b.as_mut(), &mut w), "a");
    let (mut a, mut b) = (Mat::<f64>::identity(4, 4), Mat::<f64>::identity(4, 3));
    named(solve(a.as_mut(), b.as_mut(), &mut w), "b");
    let mut b = Mat::<f64>::identity(5, 5);
    named(solve(a.as_mut(), b.as_mut(), &mut w), "b");
    let mut b = Mat::<f64>::identity(4, 4);
    named(solve(a.as_mut(), b.as_mut(), &mut w[..3]), "w");
    assert_eq!(
        solve_with(Uplo::Upper, a.as_mut(), b.as_mut(), &mut w, 0),
        Err(LaError::InvalidTileSize { nb: 0 })
    );
    // The identity pencil: eigenvalues 1.
    solve(a.as_mut(), b.as_mut(), &mut w).expect("I·x = λ·I·x");
    assert!(w.iter().all(|&x| (x - 1.0).abs() < 1e-15));
}
