//! Residual checks in `O(n²)` by a random-vector probe, as HPL checks its
//! solution: instead of forming a product of matrices (`O(n³)`), apply both
//! sides of the identity to be checked to one random vector `x` and compare
//! the two vectors.
//!
//! [`probe_residual`] compares `P₁·P₂·…·x` with `Q₁·Q₂·…·x` (each side a
//! chain of [`Factor`]s applied right to left by matrix–vector products) and
//! scales the difference like LAPACK's test ratios:
//!
//! ```text
//! ‖P·x − Q·x‖₂ / (max(∏‖Pᵢ‖_F, ∏‖Qⱼ‖_F) · ‖x‖₂ · d · ε)
//! ```
//!
//! where `d` is the longest sum in any of the products (the largest column
//! count of a factor). A backward-stable computation gives values of order 1
//! or below; LAPACK's testing accepts ratios below a threshold of 10–30.
//! Checked this way:
//!
//! * a Cholesky factor: `A·x` against `L·(Lᵀ·x)` — `[Factor::full(a)]`
//!   against `[Factor::lower(l), Factor::upper(l.transpose())]`;
//! * a matrix product: `C·x` against `A·(B·x)` — `[Factor::full(c)]` against
//!   `[Factor::full(a), Factor::full(b)]`.
//!
//! An error confined to a few entries changes `P·x` unless `x` happens to be
//! orthogonal to it, which a random `x` is with probability zero.

use faer::linalg::matmul::triangular::{matmul, BlockStructure};
use faer::{Accum, Col, MatRef, Par};

use crate::rng::SplitMix64;
use crate::LaError;

/// The part of a matrix view that a [`Factor`] stands for; the rest is taken
/// as zero and never read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Every entry.
    Full,
    /// The lower triangle with the diagonal (square views only).
    Lower,
    /// The upper triangle with the diagonal (square views only).
    Upper,
}

impl Part {
    /// The same entries seen through the transposed view.
    fn transposed(self) -> Part {
        match self {
            Part::Full => Part::Full,
            Part::Lower => Part::Upper,
            Part::Upper => Part::Lower,
        }
    }

    /// The rows of column `j` (of a view with `m` rows) in this part.
    fn rows(self, j: usize, m: usize) -> std::ops::Range<usize> {
        match self {
            Part::Full => 0..m,
            Part::Lower => j.min(m)..m,
            Part::Upper => 0..(j + 1).min(m),
        }
    }

    fn structure(self) -> BlockStructure {
        match self {
            Part::Full => BlockStructure::Rectangular,
            Part::Lower => BlockStructure::TriangularLower,
            Part::Upper => BlockStructure::TriangularUpper,
        }
    }
}

/// One matrix of a product checked by [`probe_residual`]: a view (any
/// strides; transpose with `.transpose()`) and the part of it that counts.
#[derive(Clone, Copy, Debug)]
pub struct Factor<'a> {
    mat: MatRef<'a, f64>,
    part: Part,
}

impl<'a> Factor<'a> {
    /// All of `mat`.
    pub fn full(mat: MatRef<'a, f64>) -> Factor<'a> {
        Factor { mat, part: Part::Full }
    }

    /// The lower triangle of the square `mat` (its strict upper triangle is not read).
    pub fn lower(mat: MatRef<'a, f64>) -> Factor<'a> {
        Factor { mat, part: Part::Lower }
    }

    /// The upper triangle of the square `mat` (its strict lower triangle is not read).
    pub fn upper(mat: MatRef<'a, f64>) -> Factor<'a> {
        Factor { mat, part: Part::Upper }
    }

    /// `part(mat) · x`.
    fn apply(&self, x: &Col<f64>) -> Col<f64> {
        let mut y = Col::zeros(self.mat.nrows());
        matmul(
            y.as_mat_mut(),
            BlockStructure::Rectangular,
            Accum::Replace,
            self.mat,
            self.part.structure(),
            x.as_mat(),
            BlockStructure::Rectangular,
            1.0,
            Par::Seq,
        );
        y
    }

    /// The Frobenius norm of the part; see [`frobenius`].
    fn norm(&self) -> f64 {
        frobenius(self.mat, self.part)
    }
}

/// The Frobenius norm `sqrt(Σ a_ij²)` of `part` of `a`, computed with the
/// largest magnitude factored out (as LAPACK's `dlassq`), so that it neither
/// overflows nor underflows for representable results. Walks the storage in
/// memory order whichever way the view is transposed. NaN if an entry is
/// NaN, infinite if one is infinite.
pub(crate) fn frobenius(a: MatRef<'_, f64>, part: Part) -> f64 {
    let (a, part) = if a.row_stride().unsigned_abs() > a.col_stride().unsigned_abs() {
        (a.transpose(), part.transposed())
    } else {
        (a, part)
    };
    let m = a.nrows();
    let entries = || {
        (0..a.ncols()).flat_map(move |j| {
            let rows = part.rows(j, m);
            a.col(j).subrows(rows.start, rows.len()).iter().copied()
        })
    };
    let max = entries().fold(0.0f64, |acc, v| if v.is_nan() { v } else { acc.max(v.abs()) });
    if max == 0.0 || !max.is_finite() {
        return max;
    }
    max * entries().map(|v| (v / max) * (v / max)).sum::<f64>().sqrt()
}

/// `part(f₁)·part(f₂)·…·x`, applied right to left.
fn apply_chain(chain: &[Factor<'_>], x: &Col<f64>) -> Col<f64> {
    let mut y = x.clone();
    for f in chain.iter().rev() {
        y = f.apply(&y);
    }
    y
}

/// Checks that `chain` is a well-formed product: not empty, triangular parts
/// square, each factor's columns the next one's rows. Returns its shape.
fn chain_shape(side: &str, chain: &[Factor<'_>]) -> Result<(usize, usize), LaError> {
    let (first, last) = match (chain.first(), chain.last()) {
        (Some(f), Some(l)) => (f, l),
        _ => return Err(LaError::ShapeMismatch(format!("probe: the {side} product has no factor"))),
    };
    for (i, f) in chain.iter().enumerate() {
        if f.part != Part::Full && f.mat.nrows() != f.mat.ncols() {
            return Err(LaError::ShapeMismatch(format!(
                "probe: {side} factor {i} is triangular but {} x {}",
                f.mat.nrows(),
                f.mat.ncols()
            )));
        }
    }
    for (i, w) in chain.windows(2).enumerate() {
        if w[0].mat.ncols() != w[1].mat.nrows() {
            return Err(LaError::ShapeMismatch(format!(
                "probe: {side} factor {i} has {} columns but factor {} has {} rows",
                w[0].mat.ncols(),
                i + 1,
                w[1].mat.nrows()
            )));
        }
    }
    Ok((first.mat.nrows(), last.mat.ncols()))
}

/// The scaled difference between the products `lhs` and `rhs` applied to a
/// random vector `x` (entries uniform in `[-1, 1)`, SplitMix64 seeded with
/// `seed`); see the module documentation for the formula. `O(Σ entries)`
/// work: matrix–vector products and norms only, single-threaded.
///
/// Returns `0.0` when the two vectors agree exactly (also for empty
/// shapes), and NaN (or infinity) when an entry of a factor is NaN (or
/// infinite). The test is normwise: an error confined to one entry is seen
/// once it exceeds about `d·ε·‖P‖·‖Q‖`, the rounding a correct computation
/// may make.
///
/// # Errors
/// [`LaError::ShapeMismatch`] when a side is empty, a triangular factor is
/// not square, a chain's inner dimensions do not agree, or the two products
/// have different shapes.
pub fn probe_residual(lhs: &[Factor<'_>], rhs: &[Factor<'_>], seed: u64) -> Result<f64, LaError> {
    let left = chain_shape("left", lhs)?;
    let right = chain_shape("right", rhs)?;
    if left != right {
        return Err(LaError::ShapeMismatch(format!(
            "probe: the left product is {} x {} but the right one {} x {}",
            left.0, left.1, right.0, right.1
        )));
    }
    let mut rng = SplitMix64::new(seed);
    let x = Col::from_fn(left.1, |_| rng.next_signed());
    let diff = apply_chain(lhs, &x) - apply_chain(rhs, &x);
    let num = diff.norm_l2();
    if num == 0.0 {
        return Ok(0.0);
    }
    let product = |chain: &[Factor<'_>]| chain.iter().map(Factor::norm).product::<f64>();
    let d = lhs.iter().chain(rhs).map(|f| f.mat.ncols()).max().unwrap_or(1).max(1);
    let den = product(lhs).max(product(rhs)) * x.norm_l2() * d as f64 * f64::EPSILON;
    Ok(num / den)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{random_matrix, random_spd};
    use faer::linalg::matmul::matmul as full_matmul;
    use faer::Mat;

    fn product(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
        let mut c = Mat::zeros(a.nrows(), b.ncols());
        full_matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, Par::Seq);
        c
    }

    fn gemm_probe(c: &Mat<f64>, a: &Mat<f64>, b: &Mat<f64>) -> f64 {
        probe_residual(&[Factor::full(c.as_ref())], &[Factor::full(a.as_ref()), Factor::full(b.as_ref())], 7)
            .expect("shapes agree")
    }

    #[test]
    fn a_correct_product_passes_a_wrong_one_fails() {
        for (m, n, k) in [(1, 1, 1), (7, 3, 65), (64, 64, 64), (300, 200, 100)] {
            let (a, b) = (random_matrix(m, k, 1), random_matrix(k, n, 2));
            let mut c = product(&a, &b);
            assert!(gemm_probe(&c, &a, &b) < 1.0, "{m}x{n}x{k}");
            // One entry off by a relative 1e-6 is far above rounding.
            c[(m / 2, n / 2)] += 1e-6 * (1.0 + c[(m / 2, n / 2)].abs());
            assert!(gemm_probe(&c, &a, &b) > 100.0, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn cholesky_factor() {
        let a = random_spd(200, 3);
        let mut l = a.clone();
        crate::kernels::faer_potrf(l.as_mut()).expect("SPD");
        // The strict upper triangle of `l` still holds A's: not read.
        let check = |l: &Mat<f64>| crate::residual_probe(a.as_ref(), l.as_ref(), 1).expect("shapes agree");
        assert!(check(&l) < 1.0);
        l[(150, 20)] += 1e-6;
        assert!(check(&l) > 10.0);
    }

    #[test]
    fn empty_zero_and_nan() {
        let e = Mat::<f64>::zeros(0, 0);
        assert_eq!(gemm_probe(&e, &e, &e), 0.0);
        let z = Mat::<f64>::zeros(5, 5);
        assert_eq!(gemm_probe(&z, &z, &z), 0.0);
        let mut c = z.clone();
        c[(1, 1)] = 1.0;
        assert!(gemm_probe(&c, &z, &z) > 1e10);
        c[(1, 1)] = f64::NAN;
        assert!(gemm_probe(&c, &z, &z).is_nan());
    }

    #[test]
    fn shape_errors() {
        let (a, b) = (Mat::<f64>::zeros(3, 4), Mat::<f64>::zeros(5, 2));
        let (fa, fb) = (Factor::full(a.as_ref()), Factor::full(b.as_ref()));
        let err = |l: &[Factor<'_>], r: &[Factor<'_>]| {
            matches!(probe_residual(l, r, 0), Err(LaError::ShapeMismatch(_)))
        };
        assert!(err(&[], &[fa]));
        assert!(err(&[fa], &[fa, fb]));
        assert!(err(&[fa], &[fb]));
        assert!(err(&[Factor::lower(a.as_ref())], &[fa]));
    }

    #[test]
    fn frobenius_of_parts_and_transposes() {
        let a = random_matrix(9, 9, 4);
        let sum = |f: &dyn Fn(usize, usize) -> bool| {
            let mut s = 0.0;
            for j in 0..9 {
                for i in 0..9 {
                    if f(i, j) {
                        s += a[(i, j)] * a[(i, j)];
                    }
                }
            }
            s.sqrt()
        };
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-14 * y;
        assert!(close(frobenius(a.as_ref(), Part::Full), sum(&|_, _| true)));
        assert!(close(frobenius(a.as_ref(), Part::Lower), sum(&|i, j| i >= j)));
        assert!(close(frobenius(a.as_ref(), Part::Upper), sum(&|i, j| i <= j)));
        assert!(close(frobenius(a.as_ref().transpose(), Part::Upper), sum(&|i, j| i >= j)));
        // No overflow where the squares would.
        let big = Mat::from_fn(3, 3, |_, _| 1e200);
        assert!(close(frobenius(big.as_ref(), Part::Full), 3e200));
    }
}
