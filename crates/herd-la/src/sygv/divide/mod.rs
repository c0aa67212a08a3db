//! Eigenvalues and eigenvectors of a symmetric tridiagonal matrix `T`
//! (diagonal `d`, off-diagonal `e`) by Cuppen's **divide and conquer**, as
//! LAPACK's `dstedc` (compz = 'I') computes them, on the herd pool.
//!
//! * **Split** (`dstedc`): `T` falls apart where `|eᵢ| ≤ ε·√|dᵢ|·√|dᵢ₊₁|`
//!   (ε = 2⁻⁵³, LAPACK's `dlamch('E')`) into unreduced blocks, solved one
//!   after the other, each scaled to `max |T| = 1` first (the secular
//!   solver's safeguards assume it) and scaled back after.
//! * **Divide** (`dlaed0`): a block of order `m > LEAF` is torn in the
//!   middle, `n₁ = ⌊m/2⌋`: with `β = e_{n₁−1}`,
//!   `T = diag(T₁, T₂) + |β|·v·vᵀ`, `v = e_{n₁−1} + sign(β)·e_{n₁}`, where
//!   `T₁`, `T₂` are the two halves with `|β|` taken off the two diagonal
//!   entries next to the tear. The halves are solved **in parallel**
//!   (`herd::join`), recursively; blocks of order `≤ LEAF` by QR iteration
//!   (faer's self-adjoint EVD, sequential, on the small dense block).
//! * **Conquer** (`dlaed1`–`dlaed3`, [`merge`]): `T` is then
//!   `diag(Q₁, Q₂)·(D + ρ·z·zᵀ)·diag(Q₁, Q₂)ᵀ`; [`deflate`] removes the
//!   eigenpairs the rank-one term does not change (small `zᵢ`, and close
//!   eigenvalues after a Givens rotation, LAPACK's tolerances), the
//!   remaining eigenvalues are the roots of the secular equation
//!   ([`secular`], `dlaed4`–`dlaed6`, in parallel over roots), the
//!   eigenvectors come from Gu and Eisenstat's recomputed `z` (Löwner's
//!   formula) and are multiplied into `diag(Q₁, Q₂)` by herd's GEMM.
//!
//! Invariants between the steps: the eigenvector block handed to a node
//! is zero outside its diagonal block on entry; a node returns its
//! eigenpairs with the columns in any order plus the list of its columns
//! in ascending order of eigenvalue (LAPACK's `INDXQ`), so that no merge
//! moves columns only to sort them; each block is put in ascending order
//! once, at the end.
//!
//! The work is `O(n³)` at most (`≈ (4/3)·n³` flops of GEMM without
//! deflation, much less with it), all of it in the merges' products, the
//! roots (`O(k²)` per merge) and the Löwner products (`O(k²)`), every part
//! of them parallel.

mod deflate;
mod merge;
mod secular;
#[cfg(test)]
mod tests;

use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self_adjoint_evd, self_adjoint_evd_scratch, ComputeEigenvectors};
use faer::{Mat, MatMut, Par};

use super::copy;

/// LAPACK's `dlamch('E')`: the relative rounding error `2⁻⁵³`.
const EPS: f64 = f64::EPSILON / 2.0;

/// Blocks of at most this order are solved directly (LAPACK's `SMLSIZ` is
/// 25; the leaves here have 17 to 32 rows).
const LEAF: usize = 32;

/// The eigenvalues of the tridiagonal `(d, e)` into `w` and its
/// orthonormal eigenvectors into the columns of `v` (`n × n`,
/// overwritten), column `j` belonging to `w[j]`. The eigenvalues are
/// ascending within each unreduced block of `T` (in `T`'s order of the
/// blocks): all ascending unless `T` splits.
pub(super) fn eigen(d: &[f64], e: &[f64], w: &mut [f64], mut v: MatMut<'_, f64>) {
    v.fill(0.0);
    for (p, q) in split(d, e) {
        let m = q - p;
        let mut block = v.as_mut().submatrix_mut(p, p, m, m);
        if m == 1 {
            w[p] = d[p];
            block[(0, 0)] = 1.0;
            continue;
        }
        let scale = d[p..q].iter().chain(&e[p..q - 1]).fold(0.0f64, |a, x| a.max(x.abs()));
        let mut ds: Vec<f64> = d[p..q].iter().map(|x| x / scale).collect();
        let es: Vec<f64> = e[p..q - 1].iter().map(|x| x / scale).collect();
        let order = solve(&mut ds, &es, block.as_mut());
        for (k, &c) in order.iter().enumerate() {
            w[p + k] = ds[c] * scale;
        }
        if order.iter().enumerate().any(|(k, &c)| k != c) {
            let unsorted = block.to_owned();
            let (unsorted, order) = (unsorted.as_ref(), &order);
            copy::for_each_col_block(block, copy::width(m), &|mut cols: MatMut<'_, f64>, col0| {
                for c in 0..cols.ncols() {
                    cols.as_mut().col_mut(c).copy_from(unsorted.col(order[col0 + c]));
                }
            });
        }
    }
}

/// The unreduced diagonal blocks `[p, q)` of `T` (`dstedc`'s test).
fn split(d: &[f64], e: &[f64]) -> Vec<(usize, usize)> {
    let n = d.len();
    let mut blocks = Vec::new();
    let mut p = 0;
    for i in 0..n.saturating_sub(1) {
        if e[i].abs() <= EPS * d[i].abs().sqrt() * d[i + 1].abs().sqrt() {
            blocks.push((p, i + 1));
            p = i + 1;
        }
    }
    if n > 0 {
        blocks.push((p, n));
    }
    blocks
}

/// The eigenpairs of the unreduced `(d, e)` (order `m ≥ 1`) into `d` and
/// the columns of `q` (`m × m`, zero on entry); returns the columns in
/// ascending order of their eigenvalues.
fn solve(d: &mut [f64], e: &[f64], mut q: MatMut<'_, f64>) -> Vec<usize> {
    let m = d.len();
    if m == 1 {
        q[(0, 0)] = 1.0;
        return vec![0];
    }
    if m <= LEAF {
        if leaf(d, e, q.as_mut()) {
            let mut order: Vec<usize> = (0..m).collect();
            order.sort_by(|&a, &b| d[a].total_cmp(&d[b]));
            return order;
        }
        // QR iteration gave up (faer allows it 32·m² sweeps): divide
        // further instead, down to 1 × 1 blocks if need be.
        q.fill(0.0);
    }
    let n1 = m / 2;
    let beta = e[n1 - 1];
    d[n1 - 1] -= beta.abs();
    d[n1] -= beta.abs();
    let (q1, _, _, q2) = q.as_mut().split_at_mut(n1, n1);
    let (d1, d2) = d.split_at_mut(n1);
    let (order1, order2) = herd::join(|| solve(d1, &e[..n1 - 1], q1), || solve(d2, &e[n1..], q2));
    merge::merge(d, q, n1, beta, &order1, &order2)
}

/// The columns of `a` and of `b` (each listed in ascending order of `d`)
/// in one list ascending in `d` (ties: `a` first).
fn merge_ascending(d: &[f64], a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && d[a[i]] <= d[b[j]]) {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out
}

/// A small block by faer's self-adjoint EVD (QR iteration; sequential):
/// eigenvalues into `d`, eigenvectors into `q`; `false` if it
/// did not converge.
fn leaf(d: &mut [f64], e: &[f64], q: MatMut<'_, f64>) -> bool {
    let m = d.len();
    let t = Mat::from_fn(m, m, |i, j| match i.wrapping_sub(j) {
        0 => d[i],
        1 => e[j],
        _ => 0.0,
    });
    let mut s = Diag::<f64>::zeros(m);
    let scratch = self_adjoint_evd_scratch::<f64>(m, ComputeEigenvectors::Yes, Par::Seq, Default::default());
    let mut mem = MemBuffer::new(scratch);
    let solved = self_adjoint_evd(
        t.as_ref(),
        s.as_mut(),
        Some(q),
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    );
    if solved.is_err() {
        return false;
    }
    for (i, x) in d.iter_mut().enumerate() {
        *x = s[i];
    }
    true
}
