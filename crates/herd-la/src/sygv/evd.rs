//! Step 3 of `sygv`: the symmetric eigendecomposition `C = Z·Λ·Zᵀ`.
//!
//! 1. `C = Q·T·Qᵀ`: faer's Householder tridiagonal reduction
//!    (`faer::linalg::evd::tridiag::tridiag_in_place`), **sequential**
//!    (`Par::Seq`): `4n³/3` flops, half of them in memory-bound symmetric
//!    matrix–vector products;
//! 2. `T = V·Λ·Vᵀ` on herd (`tridiagonal.rs`): bisection and inverse
//!    iteration, parallel over eigenvalues and clusters, `O(n²)`;
//! 3. `Z = Q·V` on herd: each block of Householder reflectors (last to
//!    first) applied to the column blocks of `V` at once (independent, like
//!    the right-hand sides of `trsm`) by faer's sequential block reflector
//!    application, one join per block (`2n³` flops in all).
//!
//! What the first step would need on herd: a two-stage reduction — dense to
//! band by tiled QR-like steps (BLAS-3, parallel over tiles as a herd-flow
//! graph, the way the Cholesky is), then band to tridiagonal by bulge
//! chasing, pipelined over sweeps — and the back-transformation of the
//! second stage's reflectors (again over column blocks of `V`).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::tridiag::{tridiag_in_place, tridiag_in_place_scratch};
use faer::linalg::householder::{
    apply_block_householder_on_the_left_in_place_scratch,
    apply_block_householder_on_the_left_in_place_with_conj,
};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::{Conj, Mat, MatMut, MatRef, Par};

use super::{copy, tridiagonal};

/// Eigenvalues of the symmetric `c` (lower triangle read; overwritten by
/// the Householder reflectors) into `w`, ascending, and the orthonormal
/// eigenvectors into the columns of `z`.
pub(super) fn eigen(mut c: MatMut<'_, f64>, w: &mut [f64], mut z: MatMut<'_, f64>) {
    let n = c.nrows();
    if n == 0 {
        return;
    }
    let bs = recommended_block_size::<f64>(n, n);
    let mut h = Mat::<f64>::zeros(bs, n - 1);
    {
        let mut mem = MemBuffer::new(tridiag_in_place_scratch::<f64>(n, Par::Seq, Default::default()));
        tridiag_in_place(c.as_mut(), h.as_mut(), Par::Seq, MemStack::new(&mut mem), Default::default());
    }
    let d: Vec<f64> = (0..n).map(|i| c[(i, i)]).collect();
    let e: Vec<f64> = (0..n - 1).map(|i| c[(i + 1, i)]).collect();
    tridiagonal::eigen(&d, &e, w, z.as_mut());
    sort_ascending(w, z.as_mut());
    if n > 1 {
        back_transform(c.as_ref().submatrix(1, 0, n - 1, n - 1), h.as_ref(), z.subrows_mut(1, n - 1));
    }
}

/// `v ← Q·v` for the Householder sequence `Q` of `basis` (unit lower, the
/// reflectors' essential parts) and its block factors `factor`, as faer's
/// `apply_block_householder_sequence_on_the_left_in_place_with_conj` — the
/// blocks of reflectors from the last to the first — but each block applied
/// to the column blocks of `v` in parallel (`herd::join`): the block's
/// panel of reflectors is read by all participants while it is in cache,
/// one join per block of reflectors.
fn back_transform(basis: MatRef<'_, f64>, factor: MatRef<'_, f64>, mut v: MatMut<'_, f64>) {
    let bs = factor.nrows();
    let size = factor.ncols();
    let width = copy::width(v.ncols());
    let mut j = size;
    let mut block = size % bs;
    if block == 0 {
        block = bs;
    }
    while j > 0 {
        let j0 = j - block;
        block = bs;
        let essentials = basis.submatrix(j0, j0, basis.nrows() - j0, j - j0);
        let t = factor.submatrix(0, j0, j - j0, j - j0);
        let rows = v.as_mut().subrows_mut(j0, basis.nrows() - j0);
        copy::for_each_col_block(rows, width, &|cols: MatMut<'_, f64>, _| {
            let req = apply_block_householder_on_the_left_in_place_scratch::<f64>(
                essentials.nrows(),
                t.nrows(),
                cols.ncols(),
            );
            let mut mem = MemBuffer::new(req);
            apply_block_householder_on_the_left_in_place_with_conj(
                essentials,
                t,
                Conj::No,
                cols,
                Par::Seq,
                MemStack::new(&mut mem),
            );
        });
        j = j0;
    }
}

/// Sorts `w` ascending and permutes the columns of `z` with it (a no-op
/// when `w` is sorted already, as it is unless `T` split into blocks).
fn sort_ascending(w: &mut [f64], mut z: MatMut<'_, f64>) {
    if w.windows(2).all(|p| p[0] <= p[1]) {
        return;
    }
    let mut order: Vec<usize> = (0..w.len()).collect();
    order.sort_by(|&i, &j| w[i].total_cmp(&w[j]));
    let (ws, zs) = (w.to_vec(), z.to_owned());
    for (dst, &src) in order.iter().enumerate() {
        w[dst] = ws[src];
    }
    let zs = zs.as_ref();
    let order = &order;
    copy::for_each_col_block(z.as_mut(), copy::width(w.len()), &|mut block: MatMut<'_, f64>, col0| {
        for c in 0..block.ncols() {
            block.as_mut().col_mut(c).copy_from(zs.col(order[col0 + c]));
        }
    });
}
