//! `sygv` for the eigenvalues only (LAPACK's `dsygv`/`dsygvd` with
//! `jobz = 'N'`): Cholesky of `B`, the reduction to standard form, the
//! tridiagonal reduction and `T`'s eigenvalues — no eigenvector, no
//! back-transformation, no final triangular solve. The work is the
//! reductions' `n³/3 + n³ + 4n³/3 = 8n³/3` flops plus `O(n²)`, against
//! `17n³/3` and the divide and conquer's products with vectors
//! ([`sygv_flops`](crate::sygv_flops)); and since nothing is back-transformed, the
//! two-stage reduction (`two_stage/`, matrix products instead of
//! memory-bound matrix–vector products) is taken from a much lower order
//! than with vectors (`two_stage::two_stage_from`).

use faer::MatMut;

use super::{default_tile, solve, Job};
use crate::{LaError, Uplo};

/// The eigenvalues of `A·x = λ·B·x` for symmetric `A` and symmetric
/// positive definite `B` (both `n × n`, only their lower triangles read),
/// ascending in `w`, on the current herd pool: [`sygv`](super::sygv())
/// without the eigenvectors. `a` is destroyed (its lower triangle
/// overwritten; the strict upper triangle is not touched); the lower
/// triangle of `b` is overwritten by its Cholesky factor `L` as in `sygv`.
///
/// ```
/// use herd_la::{random_matrix, random_spd, sygv, sygv_values};
/// let n = 40;
/// let r = random_matrix(n, n, 1);
/// let a = &r + r.transpose();
/// let b = random_spd(n, 2);
/// let (mut a1, mut b1, mut w1) = (a.clone(), b.clone(), vec![0.0; n]);
/// sygv_values(a1.as_mut(), b1.as_mut(), &mut w1).unwrap();
/// let (mut a2, mut b2, mut w2) = (a.clone(), b.clone(), vec![0.0; n]);
/// sygv(a2.as_mut(), b2.as_mut(), &mut w2).unwrap();
/// let scale = w2.iter().fold(0.0f64, |m, x| m.max(x.abs()));
/// assert!(w1.iter().zip(&w2).all(|(x, y)| (x - y).abs() < 1e-12 * scale));
/// ```
///
/// # Errors
/// As [`sygv`](super::sygv()), checked in the same order.
pub fn sygv_values(a: MatMut<'_, f64>, b: MatMut<'_, f64>, w: &mut [f64]) -> Result<(), LaError> {
    let n = a.nrows();
    sygv_values_with(Uplo::Lower, a, b, w, default_tile(n))
}

/// [`sygv_values`] reading the `uplo` triangles of `A` and `B`, with
/// `nb × nb` tiles in the Cholesky graph of `B` (any `nb ≥ 1`): as
/// [`sygv_with`](super::sygv_with) without the eigenvectors. `a`'s `uplo`
/// triangle is destroyed, the other one not touched; `b` as in
/// `sygv_with`.
///
/// # Errors
/// As [`sygv_with`](super::sygv_with), checked in the same order.
pub fn sygv_values_with(
    uplo: Uplo,
    a: MatMut<'_, f64>,
    b: MatMut<'_, f64>,
    w: &mut [f64],
    nb: usize,
) -> Result<(), LaError> {
    solve(Job::Values, uplo, a, b, w, nb)
}
