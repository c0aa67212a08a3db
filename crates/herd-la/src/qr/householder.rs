//! Sequential Householder kernels on column-major views, in LAPACK's
//! conventions: [`larfg`] (`dlarfg`), [`geqr2`] (`dgeqr2`, the unblocked
//! panel) and [`panel`], the recursive panel factorization that turns most of
//! a panel's work into matrix products (`dgeqrt3`'s splitting, with the
//! reflectors applied in compact-WY form, [`Block`]).
//!
//! Every view here has unit row stride (checked by the public entry points,
//! which copy other layouts), so columns are slices.

use faer::linalg::matmul::matmul;
use faer::reborrow::IntoConst;
use faer::{Accum, Mat, MatMut, Par};

use super::block::Block;
use super::leaf::{geqr2_par, worth_pieces};
use super::norm::nrm2;
use super::split::{apply_left_par, join_par};
use crate::Op;

/// Columns at or below which [`panel`] stops splitting and runs [`geqr2`]:
/// a leaf of 4000 × 16 `f64` (512 KiB) stays in a Zen 4 core's L2.
pub(crate) const PANEL_LEAF: usize = 16;

/// Column `j` of the column-major `a` as a slice.
pub(crate) fn col_mut(a: MatMut<'_, f64>, j: usize) -> &mut [f64] {
    a.col_mut(j)
        .try_as_col_major_mut()
        .expect("qr views have unit row stride (checked on entry)")
        .as_slice_mut()
}

/// LAPACK's `dlarfg` on `x = (alpha, x₁…)`: finds `H = I − tau·v·vᵀ`,
/// `v = (1, v₁…)`, with `H·x = (beta, 0…)`; stores `beta` in `x[0]` and
/// `v₁…` in `x[1..]`, returns `tau`.
///
/// `beta = −sign(alpha)·‖x‖`, `tau = (beta − alpha)/beta`; `tau = 0`
/// (`H = I`, `x` untouched) when `x₁… = 0` or `x` has one entry. As LAPACK,
/// a `beta` below the safe minimum is computed on a rescaled `x` (at most 20
/// times by `1/safmin`). NaN and infinities propagate; nothing panics.
pub(crate) fn larfg(x: &mut [f64]) -> f64 {
    let Some((alpha, tail)) = x.split_first_mut() else { return 0.0 };
    if tail.is_empty() {
        return 0.0;
    }
    let mut xnorm = nrm2(tail);
    if xnorm == 0.0 {
        return 0.0;
    }
    let mut a = *alpha;
    let mut beta = -a.hypot(xnorm).copysign(a);
    // LAPACK's DLAMCH('S') / DLAMCH('E') (eps = 2⁻⁵³ there).
    let safmin = f64::MIN_POSITIVE / (f64::EPSILON * 0.5);
    let mut knt = 0;
    if beta.abs() < safmin {
        let rsafmn = 1.0 / safmin;
        loop {
            knt += 1;
            tail.iter_mut().for_each(|v| *v *= rsafmn);
            beta *= rsafmn;
            a *= rsafmn;
            if beta.abs() >= safmin || knt >= 20 {
                break;
            }
        }
        xnorm = nrm2(tail);
        beta = -a.hypot(xnorm).copysign(a);
    }
    let tau = (beta - a) / beta;
    let scale = 1.0 / (a - beta);
    tail.iter_mut().for_each(|v| *v *= scale);
    for _ in 0..knt {
        beta *= safmin;
    }
    *alpha = beta;
    tau
}

/// LAPACK's `dgeqr2`: the unblocked QR of the column-major `r × w` view `a`
/// (`min(r, w)` reflectors, `tau[..min(r, w)]` written), one reflector
/// generated per column and applied to the columns on its right as `dlarf`
/// does (`v(i)` set to 1 for the products, then `beta` restored;
/// `w = Cᵀ·v`, `C −= tau·v·wᵀ`; skipped when `tau = 0`). The two products are
/// faer's (`Par::Seq`), whose kernels use the CPU's widest vectors.
pub(crate) fn geqr2(mut a: MatMut<'_, f64>, tau: &mut [f64]) {
    let (r, w) = (a.nrows(), a.ncols());
    for (i, tau_i) in tau.iter_mut().enumerate().take(r.min(w)) {
        let (mut left, right) = a.as_mut().split_at_col_mut(i + 1);
        let t = larfg(&mut col_mut(left.as_mut(), i)[i..]);
        *tau_i = t;
        if t == 0.0 || right.ncols() == 0 {
            continue;
        }
        let beta = left[(i, i)];
        left[(i, i)] = 1.0;
        let v = left.as_ref().submatrix(i, i, r - i, 1);
        let c = right.subrows_mut(i, r - i);
        let mut wt = Mat::zeros(1, c.ncols());
        matmul(wt.as_mut(), Accum::Replace, v.transpose(), c.as_ref(), 1.0, Par::Seq);
        matmul(c, Accum::Add, v, wt.as_ref(), -t, Par::Seq);
        left[(i, i)] = beta;
    }
}

/// The QR of the column-major `r × w` panel `a` with `w ≤ r` (`tau[..w]`
/// written) and its block reflector, recursively as `dgeqrt3`: the left
/// half factored, its block applied to the right half (`Qᵀ·C` with matrix
/// products), the right half's lower part factored, and the two halves'
/// `T` joined ([`join_par`]; `V` stays where the panel holds it);
/// [`geqr2`] and `dlarft` at [`PANEL_LEAF`] columns or fewer. The block
/// products are spread over the pool ([`apply_left_par`]); the same
/// reflectors as [`geqr2`] up to rounding.
pub(crate) fn panel<'a>(mut a: MatMut<'a, f64>, tau: &mut [f64]) -> Block<'a> {
    let (r, w) = (a.nrows(), a.ncols());
    if w <= PANEL_LEAF || w > r {
        let k = r.min(w);
        if worth_pieces(r, w) {
            geqr2_par(a.as_mut(), &mut tau[..k]);
        } else {
            geqr2(a.as_mut(), &mut tau[..k]);
        }
        return Block::from_panel(a.into_const(), &tau[..k]);
    }
    let w1 = w / 2;
    let t = {
        let (left, mut right) = a.as_mut().split_at_col_mut(w1);
        let (tau_l, tau_r) = tau.split_at_mut(w1);
        let first = panel(left, tau_l);
        apply_left_par(&first, Op::Trans, right.as_mut());
        let second = panel(right.split_at_row_mut(w1).1, tau_r);
        join_par(&first, &second)
    };
    // `V` is the panel's columns, read in place.
    Block::with_t(a.into_const(), t)
}
