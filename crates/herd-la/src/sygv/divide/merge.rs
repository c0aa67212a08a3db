//! One merge of the divide and conquer (LAPACK's `dlaed1` and `dlaed3`):
//! the eigenpairs of `T` from those of its two halves torn at `β`.
//!
//! 1. [`deflate`](super::deflate::deflate) leaves the rank-one problem
//!    `diag(d) + ρ·z·zᵀ` of order `k` (poles `d`, weights `z`);
//! 2. its eigenvalues `λⱼ` are the roots of the secular equation
//!    ([`secular`](super::secular)), one task per block of roots on the herd
//!    pool; root `j` also yields the accurate differences `dᵢ − λⱼ` (column
//!    `j` of a `k × k` matrix `Δ`);
//! 3. the eigenvectors: `(zᵢ/(dᵢ − λⱼ))ᵢ` normalized is the eigenvector of
//!    `λⱼ` only for the *exact* roots. Gu and Eisenstat's remedy (as
//!    `dlaed3`): the computed `λⱼ` are the exact eigenvalues of
//!    `diag(d) + ρ·ẑ·ẑᵀ` for the weights of Löwner's formula
//!    `ẑᵢ² = ∏ⱼ (λⱼ − dᵢ) / (ρ·∏_{j≠i} (dⱼ − dᵢ))` (`ρ` is folded in by the
//!    normalization), computed from `Δ` by products alone (no cancellation),
//!    signs from `z`; the vectors `(ẑᵢ/(dᵢ − λⱼ))ᵢ` are then orthogonal to
//!    working accuracy without extra precision — rows of `ẑ` in blocks on
//!    the pool, then the columns of `U` in blocks;
//! 4. `Q ← diag(Q₁, Q₂)·U` for the kept columns as two GEMMs by herd's
//!    [`gemm`] (side by side, `herd::join`) over the nonzero rows only (`Q₁`'s rows times the rows of
//!    `U` of the top and dense groups, `Q₂`'s times those of the dense and
//!    bottom groups).
//!
//! The secular eigenpairs land in the columns `0..k` of `q` (ascending),
//! the deflated ones stay in `k..n`; the merge returns the columns in
//! ascending order of their eigenvalues (LAPACK's `INDXQ`), so no column
//! is moved to sort them.

use faer::{Mat, MatMut, MatRef};

use super::super::copy;
use super::deflate::{deflate, Deflation, Secular};
use super::{merge_ascending, secular};
use crate::{gemm, Op};

/// Rows of `ẑ` below which the Löwner products are not split between
/// participants.
const ROW_GRAIN: usize = 256;

/// Merges the halves `[0, n1)` and `[n1, n)` of `T` torn at `beta` (the
/// eigenpairs of each half in `d` and the diagonal blocks of `q`, the
/// off-diagonal blocks zero; `order1`, `order2` each half's columns
/// ascending): on return `d` and `q` hold `T`'s eigenpairs; returns the
/// columns in ascending order of `d`.
pub(super) fn merge(
    d: &mut [f64],
    mut q: MatMut<'_, f64>,
    n1: usize,
    beta: f64,
    order1: &[usize],
    order2: &[usize],
) -> Vec<usize> {
    let n = d.len();
    let problem = match deflate(d, q.as_mut(), n1, beta, order1, order2) {
        Deflation::Complete(order) => return order,
        Deflation::Partial(problem) => problem,
    };
    let k = problem.poles.len();
    let (lambda, u) = eigenvectors(&problem);
    let [c1, c2, c3] = problem.counts;
    let (mut upper, mut lower) = q.subcols_mut(0, k).split_at_row_mut(n1);
    let u = u.as_ref();
    herd::join(
        || product(problem.top.as_ref(), u.subrows(0, c1 + c2), upper.as_mut()),
        || product(problem.bottom.as_ref(), u.subrows(c1, c2 + c3), lower.as_mut()),
    );
    d[..k].copy_from_slice(&lambda);
    // Ascending: the secular roots (ascending) merged with the deflated
    // eigenvalues sorted.
    let roots: Vec<usize> = (0..k).collect();
    let mut fixed: Vec<usize> = (k..n).collect();
    fixed.sort_by(|&a, &b| d[a].total_cmp(&d[b]));
    merge_ascending(d, &roots, &fixed)
}

/// `c ← a·b` by herd's GEMM (`c ← 0` for an empty inner dimension).
fn product(a: MatRef<'_, f64>, b: MatRef<'_, f64>, mut c: MatMut<'_, f64>) {
    if a.ncols() == 0 {
        c.fill(0.0);
        return;
    }
    gemm(Op::NoTrans, Op::NoTrans, 1.0, a, b, 0.0, c).expect("shapes agree by construction");
}

/// The eigenvalues (ascending) and eigenvectors of the secular problem,
/// the vectors' rows in the grouped order of [`Secular::group`].
fn eigenvectors(p: &Secular) -> (Vec<f64>, Mat<f64>) {
    let k = p.poles.len();
    let mut lambda = vec![0.0; k];
    // Column j: the differences dᵢ − λⱼ (k ≥ 3), or the eigenvector itself
    // (k ≤ 2, in closed form).
    let mut u = Mat::<f64>::zeros(k, k);
    match k {
        1 => {
            lambda[0] = p.poles[0] + p.rho * p.weights[0] * p.weights[0];
            u[(0, 0)] = 1.0;
        }
        2 => {
            let (d, z) = ([p.poles[0], p.poles[1]], [p.weights[0], p.weights[1]]);
            for j in 0..2 {
                let (l, v) = secular::pair(j, d, z, p.rho);
                lambda[j] = l;
                u[(0, j)] = v[0];
                u[(1, j)] = v[1];
            }
        }
        _ => roots(p, u.as_mut(), &mut lambda, 0, copy::width(k)),
    }
    let zhat = if k >= 3 { Some(lowner(p, u.as_ref())) } else { None };
    let zhat = zhat.as_deref();
    copy::for_each_col_block(u.as_mut(), copy::width(k), &|mut block: MatMut<'_, f64>, _| {
        let mut s = vec![0.0; k];
        for j in 0..block.ncols() {
            let mut col = block.as_mut().col_mut(j);
            match zhat {
                Some(zhat) => {
                    for i in 0..k {
                        s[i] = zhat[i] / col[i];
                    }
                    let norm = s.iter().map(|x| x * x).sum::<f64>().sqrt();
                    s.iter_mut().for_each(|x| *x /= norm);
                }
                None => (0..k).for_each(|i| s[i] = col[i]),
            }
            for (g, &i) in p.group.iter().enumerate() {
                col[g] = s[i];
            }
        }
    });
    (lambda, u)
}

/// The roots `col0..` of the secular equation into `lambda` and the
/// differences `dᵢ − λⱼ` into the columns of `delta`, blocks of `width`
/// roots spread with `herd::join`.
fn roots(p: &Secular, delta: MatMut<'_, f64>, lambda: &mut [f64], col0: usize, width: usize) {
    let m = lambda.len();
    if m > width {
        let half = m / 2;
        let (dl, dr) = delta.split_at_col_mut(half);
        let (ll, lr) = lambda.split_at_mut(half);
        herd::join(|| roots(p, dl, ll, col0, width), || roots(p, dr, lr, col0 + half, width));
        return;
    }
    let mut delta = delta;
    for (j, l) in lambda.iter_mut().enumerate() {
        let col = delta.as_mut().col_mut(j).try_as_col_major_mut().expect("a fresh matrix").as_slice_mut();
        *l = secular::root(col0 + j, &p.poles, &p.weights, p.rho, col);
    }
}

/// Löwner's weights `ẑ` of the computed roots from the differences `delta`
/// (`dlaed3`): `ẑᵢ² = −Δᵢᵢ·∏_{j≠i} Δᵢⱼ/(dᵢ − dⱼ)`, signs of `z`; rows in
/// blocks on the herd pool.
fn lowner(p: &Secular, delta: MatRef<'_, f64>) -> Vec<f64> {
    let k = p.poles.len();
    let mut zhat = vec![0.0; k];
    lowner_rows(p, delta, &mut zhat, 0);
    zhat
}

/// [`lowner`] for the rows `row0 .. row0 + out.len()`.
fn lowner_rows(p: &Secular, delta: MatRef<'_, f64>, out: &mut [f64], row0: usize) {
    let rows = out.len();
    if rows > ROW_GRAIN && herd::current_num_threads() > 1 {
        let half = rows / 2;
        let (l, r) = out.split_at_mut(half);
        herd::join(|| lowner_rows(p, delta, l, row0), || lowner_rows(p, delta, r, row0 + half));
        return;
    }
    let d = &p.poles[row0..row0 + rows];
    for (i, w) in out.iter_mut().enumerate() {
        *w = delta[(row0 + i, row0 + i)];
    }
    for j in 0..p.poles.len() {
        let col = &delta.col(j).try_as_col_major().expect("a fresh matrix").as_slice()[row0..row0 + rows];
        let dj = p.poles[j];
        // All rows of the block but j's own.
        let skip = j.wrapping_sub(row0);
        for (i, w) in out.iter_mut().enumerate() {
            if i != skip {
                *w *= col[i] / (d[i] - dj);
            }
        }
    }
    for (i, w) in out.iter_mut().enumerate() {
        *w = (-*w).sqrt().copysign(p.weights[row0 + i]);
    }
}
