//! The `O(m·n)` check of an LU factorization by a random-vector probe, as HPL
//! checks its solution: `A·x` against `P·(L·(U·x))`.

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Col, MatRef, Par};

use super::kernels::laswp_back;
use crate::error::invalid;
use crate::probe::{frobenius, Part};
use crate::rng::SplitMix64;
use crate::LaError;

/// The scaled residual of the factors `lu`, `ipiv` of `a` (as [`getrf`](super::getrf)
/// returns them) applied to a random vector `x` (entries uniform in
/// `[-1, 1)`, SplitMix64 seeded with `seed`):
///
/// ```text
/// ‖A·x − P·L·U·x‖₂ / (‖A‖_F · ‖x‖₂ · max(m, n) · ε)
/// ```
///
/// the probe form of LAPACK's `dget01` ratio `‖L·U − A‖ / (n·‖A‖·ε)`
/// (LAPACK's testing accepts values below 30). `O(m·n)` work, sequential:
/// three matrix–vector products and a norm. `0.0` when the two vectors agree
/// exactly (also for empty shapes); NaN when an entry is NaN.
///
/// # Errors
/// [`LaError::InvalidArgument`] naming `lu` when its shape is not `a`'s, and
/// `ipiv` when its length is not `min(m, n)` or an entry `ipiv[i]` is outside
/// `i..m`.
pub fn getrf_probe(
    a: MatRef<'_, f64>,
    lu: MatRef<'_, f64>,
    ipiv: &[usize],
    seed: u64,
) -> Result<f64, LaError> {
    let (m, n) = (a.nrows(), a.ncols());
    let mn = m.min(n);
    if (lu.nrows(), lu.ncols()) != (m, n) {
        return Err(invalid("lu", format!("{} x {} but a is {m} x {n}", lu.nrows(), lu.ncols())));
    }
    if ipiv.len() != mn {
        return Err(invalid("ipiv", format!("length {} but min(m, n) = {mn}", ipiv.len())));
    }
    if let Some((i, &p)) = ipiv.iter().enumerate().find(|&(i, &p)| p < i || p >= m) {
        return Err(invalid("ipiv", format!("ipiv[{i}] = {p} is outside {i}..{m}")));
    }
    let mut rng = SplitMix64::new(seed);
    let x = Col::from_fn(n, |_| rng.next_signed());
    // A·x.
    let mut ax = Col::<f64>::zeros(m);
    matmul(ax.as_mat_mut(), Accum::Replace, a, x.as_mat(), 1.0, Par::Seq);
    // U·x: U is the upper trapezoid of the first mn rows.
    let mut ux = Col::<f64>::zeros(mn);
    let (u1, u2) = lu.subrows(0, mn).split_at_col(mn);
    let (x1, x2) = x.as_mat().split_at_row(mn);
    tri(ux.as_mat_mut(), Accum::Replace, u1, BlockStructure::TriangularUpper, x1);
    matmul(ux.as_mat_mut(), Accum::Add, u2, x2, 1.0, Par::Seq);
    // L·(U·x): L is the unit lower trapezoid of the first mn columns.
    let mut lux = Col::<f64>::zeros(m);
    let (l1, l2) = lu.subcols(0, mn).split_at_row(mn);
    {
        let (top, bottom) = lux.as_mat_mut().split_at_row_mut(mn);
        tri(top, Accum::Replace, l1, BlockStructure::UnitTriangularLower, ux.as_mat());
        matmul(bottom, Accum::Replace, l2, ux.as_mat(), 1.0, Par::Seq);
    }
    // P·(L·U·x): the interchanges in reverse.
    laswp_back(lux.as_mat_mut(), ipiv, 0);
    let num = (&ax - &lux).norm_l2();
    if num == 0.0 {
        return Ok(0.0);
    }
    let den = frobenius(a, Part::Full) * x.norm_l2() * m.max(n) as f64 * f64::EPSILON;
    Ok(num / den)
}

/// `dst (accum) t·x` for the square triangular `t` of `structure`.
fn tri(
    dst: faer::MatMut<'_, f64>,
    accum: Accum,
    t: MatRef<'_, f64>,
    structure: BlockStructure,
    x: MatRef<'_, f64>,
) {
    triangular::matmul(
        dst,
        BlockStructure::Rectangular,
        accum,
        t,
        structure,
        x,
        BlockStructure::Rectangular,
        1.0,
        Par::Seq,
    );
}
