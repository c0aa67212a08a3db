//! Helpers the `sygv` tests share (its own, the divide-and-conquer
//! solver's and the two-stage reduction's): a pool, a product, random and
//! tridiagonal matrices.

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
