//! Step 3 of `sygv`: the symmetric eigendecomposition `C = Z·Λ·Zᵀ`, all on
//! herd.
//!
//! 1. `C = Q·T·Qᵀ`: LAPACK's blocked Householder tridiagonal reduction
//!    (`dsytrd`, `tridiag.rs`): `4n³/3` flops, half of them in memory-bound
//!    symmetric matrix–vector products spread over the participants, half
//!    in rank-`2·nb` updates by herd's `syr2k`;
//! 2. `T = V·Λ·Vᵀ` (`divide/`): Cuppen's divide and conquer as LAPACK's
//!    `dstedc` — halves solved in parallel, merges by deflation, the
//!    secular equation's roots in parallel and the eigenvector update by
//!    herd's GEMM, `O(n³)` at most (`≈ 4n³/3` without deflation);
//! 3. `Z = Q·V` (LAPACK's `dormtr`): herd's [`ormqr`](crate::ormqr) with the
//!    reflectors below `C`'s subdiagonal, the column blocks of `V` spread
//!    over the participants (`2n³` flops).
//!
//! A two-stage reduction (dense to band by BLAS-3 tiles, then band to
//! tridiagonal by bulge chasing) would move the matrix–vector half into
//! matrix products too, at the price of a second back-transformation.

use faer::MatMut;

use super::{copy, divide, tridiag};
use crate::{ormqr, Op, Side};

/// Eigenvalues of the symmetric `c` (lower triangle read; its strict lower
/// triangle overwritten by the reflectors) into `w`, ascending, and the
/// orthonormal eigenvectors into the columns of `z`.
pub(super) fn eigen(mut c: MatMut<'_, f64>, w: &mut [f64], mut z: MatMut<'_, f64>) {
    let n = c.nrows();
    if n == 0 {
        return;
    }
    // The reduction reads columns as slices: a copy for other layouts.
    let mut owned;
    let mut c = if c.row_stride() == 1 {
        c.as_mut()
    } else {
        owned = c.to_owned();
        owned.as_mut()
    };
    let (mut d, mut e, mut tau) = (vec![0.0; n], vec![0.0; n - 1], vec![0.0; n - 1]);
    tridiag::reduce(c.as_mut(), &mut d, &mut e, &mut tau);
    divide::eigen(&d, &e, w, z.as_mut());
    sort_ascending(w, z.as_mut());
    if n > 1 {
        ormqr(
            Side::Left,
            Op::NoTrans,
            c.as_ref().submatrix(1, 0, n - 1, n - 1),
            &tau,
            z.subrows_mut(1, n - 1),
        )
        .expect("shapes agree by construction");
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
