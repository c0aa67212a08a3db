//! Step 3 of `sygv`: the symmetric eigendecomposition `C = Z·Λ·Zᵀ`.
//!
//! 1. `C = Q·T·Qᵀ`: faer's Householder tridiagonal reduction
//!    (`faer::linalg::evd::tridiag::tridiag_in_place`), **sequential**
//!    (`Par::Seq`): `4n³/3` flops, half of them in memory-bound symmetric
//!    matrix–vector products;
//! 2. `T = V·Λ·Vᵀ` on herd (`tridiagonal.rs`): bisection and inverse
//!    iteration, parallel over eigenvalues and clusters, `O(n²)`;
//! 3. `Z = Q·V` on herd: the Householder reflectors applied to column blocks
//!    of `V` (independent, like the right-hand sides of `trsm`), each block
//!    by faer's sequential blocked Householder application (`2n³` flops in
//!    all).
//!
//! What the first step would need on herd: a two-stage reduction — dense to
//! band by tiled QR-like steps (BLAS-3, parallel over tiles as a herd-flow
//! graph, the way the Cholesky is), then band to tridiagonal by bulge
//! chasing, pipelined over sweeps — and the back-transformation of the
//! second stage's reflectors (again over column blocks of `V`).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::tridiag::{tridiag_in_place, tridiag_in_place_scratch};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj,
};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::{Conj, Mat, MatMut, Par};

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
        let basis = c.as_ref().submatrix(1, 0, n - 1, n - 1);
        let factor = h.as_ref();
        copy::for_each_col_block(z, copy::width(n), &|block: MatMut<'_, f64>, _| {
            let req = apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(
                n - 1,
                bs,
                block.ncols(),
            );
            let mut mem = MemBuffer::new(req);
            apply_block_householder_sequence_on_the_left_in_place_with_conj(
                basis,
                factor,
                Conj::No,
                block.subrows_mut(1, n - 1),
                Par::Seq,
                MemStack::new(&mut mem),
            );
        });
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
