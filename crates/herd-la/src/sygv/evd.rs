//! Step 3 of `sygv`: the symmetric eigendecomposition `C = Z·Λ·Zᵀ`, all on
//! herd.
//!
//! 1. `C = Q·T·Qᵀ` by one of two reductions ([`Reduction`]):
//!    * one stage below the crossover ([`two_stage::two_stage_from`]):
//!      LAPACK's blocked Householder tridiagonal reduction (`dsytrd`,
//!      `tridiag.rs`): `4n³/3` flops, half of them in memory-bound
//!      symmetric matrix–vector products spread over the participants,
//!      half in rank-`2·nb` updates by herd's `syr2k`;
//!    * two stages from it on (`two_stage/`, LAPACK's `dsytrd_2stage`):
//!      dense to band by matrix products on herd, then band to tridiagonal
//!      by bulge chasing — no matrix–vector products, but a second set of
//!      reflectors to apply;
//! 2. `T = V·Λ·Vᵀ` (`divide/`): Cuppen's divide and conquer as LAPACK's
//!    `dstedc` — halves solved in parallel, merges by deflation, the
//!    secular equation's roots in parallel and the eigenvector update by
//!    herd's GEMM, `O(n³)` at most (`≈ 4n³/3` without deflation);
//! 3. `Z = Q·V` (LAPACK's `dormtr`): one stage, herd's
//!    [`ormqr`](crate::ormqr()) with the reflectors below `C`'s subdiagonal,
//!    the column blocks of `V` spread over the participants (`2n³` flops);
//!    two stages, the chase's reflectors in blocks and then stage 1's by
//!    `ormqr` (`2n³` flops each, the first in smaller products).
//!
//! [`eigenvalues`] (LAPACK's `jobz = 'N'`) does step 1 only, with its own
//! crossover to the two stages, and `T`'s eigenvalues by root-free QL/QR
//! without vectors (`tridiag_values.rs`): no `V`, no back-transformation.

use faer::{MatMut, MatRef};

use super::{copy, divide, tridiag, tridiag_values, two_stage};
use crate::{ormqr, Op, Side};

/// Eigenvalues of the symmetric `c` (lower triangle read; its strict lower
/// triangle overwritten by the reflectors) into `w`, ascending, and the
/// orthonormal eigenvectors into the columns of `z`.
pub(super) fn eigen(c: MatMut<'_, f64>, w: &mut [f64], z: MatMut<'_, f64>) {
    let n = c.nrows();
    eigen_by(Reduction::for_order(n, true), c, w, z);
}

/// [`eigen`] with the reduction `reduction`.
pub(super) fn eigen_by(reduction: Reduction, c: MatMut<'_, f64>, w: &mut [f64], mut z: MatMut<'_, f64>) {
    let n = c.nrows();
    if n == 0 {
        return;
    }
    column_major(c, |mut c| {
        let (mut d, mut e) = (vec![0.0; n], vec![0.0; n - 1]);
        let q = reduce(c.as_mut(), reduction, &mut d, &mut e);
        divide::eigen(&d, &e, w, z.as_mut());
        sort_ascending(w, z.as_mut());
        q.back_transform(c.as_ref(), z);
    });
}

/// The eigenvalues of the symmetric `c` (lower triangle read; its strict
/// lower triangle destroyed) into `w`, ascending, without eigenvectors:
/// the reduction [`Reduction::for_order`] picks for the values-only job,
/// then the root-free QL/QR iteration on `T` (`sterf.rs`).
pub(super) fn eigenvalues(c: MatMut<'_, f64>, w: &mut [f64]) {
    let n = c.nrows();
    eigenvalues_by(Reduction::for_order(n, false), c, w);
}

/// [`eigenvalues`] with the reduction `reduction`.
pub(super) fn eigenvalues_by(reduction: Reduction, c: MatMut<'_, f64>, w: &mut [f64]) {
    let n = c.nrows();
    if n == 0 {
        return;
    }
    column_major(c, |c| {
        let (mut d, mut e) = (vec![0.0; n], vec![0.0; n - 1]);
        // The reflectors are not needed: no back-transformation (the
        // chase does not even keep its own).
        match reduction {
            Reduction::OneStage => drop(reduce(c, reduction, &mut d, &mut e)),
            Reduction::TwoStage(nb) => two_stage::reduce_values(c, nb, &mut d, &mut e),
        }
        tridiag_values::eigenvalues(&d, &e, w);
    });
}

/// Runs `f` on `c` when its columns are contiguous (the reductions read
/// columns as slices), else on a column-major copy of it.
fn column_major(c: MatMut<'_, f64>, f: impl FnOnce(MatMut<'_, f64>)) {
    if c.row_stride() == 1 {
        f(c);
    } else {
        let mut owned = c.to_owned();
        f(owned.as_mut());
    }
}

/// How `C` is reduced to tridiagonal.
#[derive(Clone, Copy, Debug)]
pub(super) enum Reduction {
    /// LAPACK's blocked `dsytrd` (`tridiag.rs`).
    OneStage,
    /// Dense to band of this half-bandwidth, then bulge chasing
    /// (`two_stage/`).
    TwoStage(usize),
}

impl Reduction {
    /// The reduction for order `n`, with eigenvectors ([`eigen`],
    /// `vectors`) or without ([`eigenvalues`]): two stages from
    /// [`two_stage::two_stage_from`] on.
    pub(super) fn for_order(n: usize, vectors: bool) -> Reduction {
        if n >= two_stage::two_stage_from(vectors) {
            Reduction::TwoStage(two_stage::BAND)
        } else {
            Reduction::OneStage
        }
    }
}

/// The reflectors of either reduction (their vectors in the reduced `C`).
pub(super) enum Reflectors {
    OneStage(Vec<f64>),
    TwoStage(two_stage::Reflectors),
}

/// `C = Q·T·Qᵀ` by `how`: `T`'s diagonal into `d`, subdiagonal into `e`.
pub(super) fn reduce(c: MatMut<'_, f64>, how: Reduction, d: &mut [f64], e: &mut [f64]) -> Reflectors {
    match how {
        Reduction::OneStage => {
            let mut tau = vec![0.0; e.len()];
            tridiag::reduce(c, d, e, &mut tau);
            Reflectors::OneStage(tau)
        }
        Reduction::TwoStage(nb) => Reflectors::TwoStage(two_stage::reduce(c, nb, d, e)),
    }
}

impl Reflectors {
    /// `z ← Q·z`, with `c` as the reduction left it (LAPACK's `dormtr`).
    fn back_transform(&self, c: MatRef<'_, f64>, z: MatMut<'_, f64>) {
        let n = c.nrows();
        match self {
            Reflectors::OneStage(tau) if n > 1 => {
                ormqr(Side::Left, Op::NoTrans, c.submatrix(1, 0, n - 1, n - 1), tau, z.subrows_mut(1, n - 1))
                    .expect("shapes agree by construction");
            }
            Reflectors::OneStage(_) => {}
            Reflectors::TwoStage(q) => two_stage::back_transform(c, q, z),
        }
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
