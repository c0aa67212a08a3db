//! Helpers the `sygv` tests share (its own, the divide-and-conquer
//! solver's and the two-stage reduction's): a pool, a product, random and
//! tridiagonal matrices, positive definite ones and ones with a given spectrum.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};

use crate::random_matrix;

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
