//! Deflation of a merge (LAPACK's `dlaed2`): from the two halves' eigenpairs
//! and the tear `β`, the rank-one problem `diag(d) + ρ·z·zᵀ` left after
//! removing every eigenpair it does not change.
//!
//! On entry `q = diag(Q₁, Q₂)` (`n × n`, the halves' eigenvectors, `Q₁` of
//! order `n₁`) and `d` holds their eigenvalues, each half in its columns'
//! order, with `order1`/`order2` listing each half's columns ascending. The
//! torn matrix is `T = diag(Q₁, Q₂)·(diag(d) + ρ·z·zᵀ)·diag(Q₁, Q₂)ᵀ` with
//! `z = (last row of Q₁, sign(β)·first row of Q₂)/√2` and `ρ = 2|β|`
//! (`‖z‖ = 1`). With `tol = 8ε·max(maxᵢ|dᵢ|, maxᵢ|zᵢ|)` (LAPACK's):
//!
//! * a pair with `ρ·|zᵢ| ≤ tol` is an eigenpair of `T` already;
//! * of two eigenvalues `dᵢ ≤ dⱼ` (neighbours in ascending order among the
//!   kept) with a Givens rotation `(c, s)` that zeros `zᵢ` against `zⱼ`,
//!   when `|(dⱼ − dᵢ)·c·s| ≤ tol`, the rotated column `i` is an eigenvector
//!   (the rotation is applied to the columns of `q`, mixing a column of
//!   `Q₁` with one of `Q₂` into a dense one) and `j` stays in the problem
//!   with `zⱼ ← √(zᵢ² + zⱼ²)`.
//!
//! The `k` kept pairs form the secular equation (their `d` ascending: the
//! poles, strictly separated by more than `tol`); their columns of `q` are
//! copied out in three groups — nonzero only in the top `n₁` rows, dense,
//! nonzero only in the bottom rows — so that the eigenvector update is two
//! products over the nonzero rows only ([`Secular::top`],
//! [`Secular::bottom`]). The deflated pairs move to the columns `k..n` of
//! `q` and `d`.

use faer::{Mat, MatMut};

use super::super::copy;
use super::{merge_ascending, EPS};

/// The rank-one problem left by deflation, and the kept columns of `q`.
pub(super) struct Secular {
    /// The poles `d` of the kept pairs, ascending.
    pub poles: Vec<f64>,
    /// Their components of `z` (`‖z‖ = 1` over kept and deflated).
    pub weights: Vec<f64>,
    /// `ρ > 0`.
    pub rho: f64,
    /// Row `g` of the grouped eigenvector matrix is secular index
    /// `group[g]`: first the columns nonzero only in the top rows, then the
    /// dense ones, then those nonzero only in the bottom rows.
    pub group: Vec<usize>,
    /// How many columns of each of the three groups.
    pub counts: [usize; 3],
    /// The top `n₁` rows of the kept columns of the first two groups.
    pub top: Mat<f64>,
    /// The bottom `n − n₁` rows of the kept columns of the last two groups.
    pub bottom: Mat<f64>,
}

/// What a merge has left to do.
pub(super) enum Deflation {
    /// Every pair deflated: `q` and `d` are `T`'s eigenpairs; the columns
    /// ascending.
    Complete(Vec<usize>),
    /// The secular problem of the first `k = poles.len()` columns; the
    /// deflated pairs are in the columns `k..n` of `q` and `d`.
    Partial(Secular),
}

/// Column kinds (LAPACK's `COLTYP` 1–4).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Top,
    Dense,
    Bottom,
    Deflated,
}

/// Deflates the merge of the halves `[0, n1)` and `[n1, n)` torn at `beta`
/// (see the module documentation); `order1`, `order2` list each half's
/// columns ascending (`order2` relative to `n1`).
pub(super) fn deflate(
    d: &mut [f64],
    mut q: MatMut<'_, f64>,
    n1: usize,
    beta: f64,
    order1: &[usize],
    order2: &[usize],
) -> Deflation {
    let n = d.len();
    let n2 = n - n1;
    let sign = if beta < 0.0 { -1.0 } else { 1.0 };
    let mut z: Vec<f64> = (0..n)
        .map(|c| if c < n1 { q[(n1 - 1, c)] } else { sign * q[(n1, c)] } * std::f64::consts::FRAC_1_SQRT_2)
        .collect();
    let rho = 2.0 * beta.abs();
    let shifted: Vec<usize> = order2.iter().map(|&c| c + n1).collect();
    let sorted = merge_ascending(d, order1, &shifted);
    let dmax = d.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let zmax = z.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let tol = 8.0 * EPS * dmax.max(zmax);
    if rho * zmax <= tol {
        return Deflation::Complete(sorted);
    }
    let mut kind: Vec<Kind> = (0..n).map(|c| if c < n1 { Kind::Top } else { Kind::Bottom }).collect();
    let mut kept: Vec<usize> = Vec::with_capacity(n);
    let mut gone: Vec<usize> = Vec::new();
    // The last kept candidate, not yet compared with its successor.
    let mut pending: Option<usize> = None;
    for &j in &sorted {
        if rho * z[j].abs() <= tol {
            kind[j] = Kind::Deflated;
            gone.push(j);
            continue;
        }
        let Some(p) = pending else {
            pending = Some(j);
            continue;
        };
        let tau = z[p].hypot(z[j]);
        let (c, s) = (z[j] / tau, -z[p] / tau);
        if ((d[j] - d[p]) * c * s).abs() <= tol {
            // Rotate p's component of z into j: p becomes an eigenvector.
            z[j] = tau;
            z[p] = 0.0;
            if kind[j] != kind[p] {
                kind[j] = Kind::Dense;
            }
            kind[p] = Kind::Deflated;
            let (mut x, mut y) = q.as_mut().two_cols_mut(p, j);
            for r in 0..n {
                let (a, b) = (x[r], y[r]);
                x[r] = c * a + s * b;
                y[r] = c * b - s * a;
            }
            let (dp, dj) = (d[p], d[j]);
            d[p] = dp * c * c + dj * s * s;
            d[j] = dp * s * s + dj * c * c;
            gone.push(p);
        } else {
            kept.push(p);
        }
        pending = Some(j);
    }
    kept.push(pending.expect("ρ·max|z| > tol keeps a pair"));
    let k = kept.len();
    // Group the kept columns by kind.
    let mut group = Vec::with_capacity(k);
    let mut counts = [0; 3];
    for (g, wanted) in [Kind::Top, Kind::Dense, Kind::Bottom].into_iter().enumerate() {
        for (i, &c) in kept.iter().enumerate() {
            if kind[c] == wanted {
                group.push(i);
                counts[g] += 1;
            }
        }
    }
    let mut top = Mat::zeros(n1, counts[0] + counts[1]);
    let mut bottom = Mat::zeros(n2, counts[1] + counts[2]);
    {
        let (qr, kept, group) = (q.as_ref(), &kept, &group);
        copy::for_each_col_block(
            top.as_mut(),
            copy::width(counts[0] + counts[1]),
            &|mut block: MatMut<'_, f64>, col0| {
                for g in 0..block.ncols() {
                    block.as_mut().col_mut(g).copy_from(qr.col(kept[group[col0 + g]]).subrows(0, n1));
                }
            },
        );
        let skip = counts[0];
        copy::for_each_col_block(
            bottom.as_mut(),
            copy::width(counts[1] + counts[2]),
            &|mut block: MatMut<'_, f64>, col0| {
                for g in 0..block.ncols() {
                    block.as_mut().col_mut(g).copy_from(qr.col(kept[group[skip + col0 + g]]).subrows(n1, n2));
                }
            },
        );
    }
    let poles = kept.iter().map(|&c| d[c]).collect();
    let weights = kept.iter().map(|&c| z[c]).collect();
    // Deflated pairs into the columns k..n: those below k take the places
    // of kept columns at or above k (copied out above).
    let mut free: Vec<usize> = kept.iter().copied().filter(|&c| c >= k).collect();
    for &c in &gone {
        if c < k {
            let t = free.pop().expect("as many kept columns at or above k as deflated below");
            let (src, mut dst) = q.as_mut().two_cols_mut(c, t);
            dst.copy_from(src);
            d[t] = d[c];
        }
    }
    Deflation::Partial(Secular { poles, weights, rho, group, counts, top, bottom })
}
