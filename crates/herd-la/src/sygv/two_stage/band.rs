//! Stage 1 of the two-stage reduction: the symmetric `A` (lower triangle)
//! to a symmetric band matrix `B = Q₁ᵀ·A·Q₁` of half-bandwidth `nb`, as
//! LAPACK's `dsytrd_sy2sb` (uplo 'L'), all BLAS-3 on herd.
//!
//! For each block column `k..k + nb`:
//!
//! * the panel below the band, `A[k + nb.., k..k + nb]`, is QR-factored by
//!   herd-la's recursive Householder panel ([`panel`], the block products
//!   spread over the pool): `R` stays in the band, the reflectors' vectors
//!   below it (`geqrf`'s layout), their `τ` in `tau[k..]`, and the block
//!   reflector `Q = I − V·T·Vᵀ` comes back in compact-WY form;
//! * the trailing matrix `S = A[k + nb.., k + nb..]` takes the two-sided
//!   update `S ← Qᵀ·S·Q` as a rank-`2·nb` update, with `X = S·V·T`,
//!   `W = X − ½·V·(Tᵀ·Vᵀ·X)`: `S ← S − V·Wᵀ − W·Vᵀ`. `S·V` is a symmetric
//!   matrix product from `S`'s lower triangle ([`symm_times`], row blocks of
//!   the result spread over the pool), the rank-`2·nb` update herd's
//!   [`syr2k`] (BLAS-3 on herd).
//!
//! `4n³/3` flops, all in matrix products (the one-stage `dsytrd` has half of
//! them in memory-bound matrix–vector products).

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatMut, MatRef, Par};

use crate::qr::householder::panel;
use crate::qr::split::{for_rows, piece};
use crate::syrk::syr2k;
use crate::{Op, Uplo};

/// The shortest row block of [`symm_times`] given to one participant.
const MIN_ROWS: usize = 64;

/// Reduces the symmetric, column-major `a` (`n × n`, lower triangle read
/// and written; the strict upper triangle is not touched) to half-bandwidth
/// `nb ≥ 1`: the band (`a[i, j]`, `0 ≤ i − j ≤ nb`) holds `B`; below it,
/// the reflectors of `Q₁` in `geqrf`'s layout relative to `a[nb.., ..]`
/// (reflector `c` in column `c` from row `c + nb`, its leading 1 implicit),
/// with `tau` (`n − nb` entries, `tau.len() == n.saturating_sub(nb)`) their
/// factors, so that `Q₁ = H₀···H_{n−nb−1}` is applied by `ormqr` on
/// `a[nb.., ..n − nb]`.
pub(super) fn reduce(mut a: MatMut<'_, f64>, nb: usize, tau: &mut [f64]) {
    let n = a.nrows();
    assert!(nb >= 1 && a.ncols() == n && tau.len() == n.saturating_sub(nb));
    let mut k = 0;
    while k + nb < n {
        let p = n - k - nb;
        let w = nb.min(p);
        let (left, right) = a.as_mut().split_at_col_mut(k + nb);
        let blk = panel(left.submatrix_mut(k + nb, k, p, nb), &mut tau[k..k + w]);
        let s = right.submatrix_mut(k + nb, 0, p, p);
        two_sided_update(s, blk.explicit_v().as_ref(), blk.t());
        k += nb;
    }
}

/// `S ← Qᵀ·S·Q` for the symmetric `s` (`p × p`, lower triangle) and
/// `Q = I − V·T·Vᵀ` (`v`: `p × w`, `t`: `w × w` upper triangular).
fn two_sided_update(mut s: MatMut<'_, f64>, v: MatRef<'_, f64>, t: MatRef<'_, f64>) {
    let (p, w) = v.shape();
    // X = S·V·T, row blocks in parallel.
    let mut x = Mat::<f64>::zeros(p, w);
    {
        let s = s.as_ref();
        for_rows(x.as_mut(), piece(p, MIN_ROWS), &|mut rows: MatMut<'_, f64>, row0| {
            let mut y = Mat::<f64>::zeros(rows.nrows(), w);
            symm_times(s, v, row0, y.as_mut());
            triangular::matmul(
                rows.as_mut(),
                BlockStructure::Rectangular,
                Accum::Replace,
                y.as_ref(),
                BlockStructure::Rectangular,
                t,
                BlockStructure::TriangularUpper,
                1.0,
                Par::Seq,
            );
        });
    }
    // M = Tᵀ·(Vᵀ·X) (symmetric), W = X − ½·V·M.
    let mut vx = Mat::<f64>::zeros(w, w);
    matmul(vx.as_mut(), Accum::Replace, v.transpose(), x.as_ref(), 1.0, Par::Seq);
    let mut m = Mat::<f64>::zeros(w, w);
    triangular::matmul(
        m.as_mut(),
        BlockStructure::Rectangular,
        Accum::Replace,
        t.transpose(),
        BlockStructure::TriangularLower,
        vx.as_ref(),
        BlockStructure::Rectangular,
        1.0,
        Par::Seq,
    );
    {
        let m = m.as_ref();
        for_rows(x.as_mut(), piece(p, MIN_ROWS), &|rows: MatMut<'_, f64>, row0| {
            let h = rows.nrows();
            matmul(rows, Accum::Add, v.subrows(row0, h), m, -0.5, Par::Seq);
        });
    }
    syr2k(Uplo::Lower, Op::NoTrans, -1.0, v, x.as_ref(), 1.0, s.as_mut())
        .expect("shapes agree by construction");
}

/// Rows `row0..row0 + y.nrows()` of `S·V` into `y`, for the symmetric `s`
/// stored in its lower triangle: with the block `[r0, r1)` of rows,
///
/// ```text
/// Y = S[r0..r1, ..r0]·V[..r0] + S[r0..r1, r0..r1]·V[r0..r1] + S[r1.., r0..r1]ᵀ·V[r1..],
/// ```
///
/// the diagonal block read as its lower triangle and its transpose's strict
/// upper one. Sequential (the caller spreads row blocks).
fn symm_times(s: MatRef<'_, f64>, v: MatRef<'_, f64>, row0: usize, mut y: MatMut<'_, f64>) {
    let (p, h) = (s.nrows(), y.nrows());
    let (r0, r1) = (row0, row0 + h);
    matmul(y.as_mut(), Accum::Replace, s.submatrix(r0, 0, h, r0), v.subrows(0, r0), 1.0, Par::Seq);
    let diag = s.submatrix(r0, r0, h, h);
    let vb = v.subrows(r0, h);
    for (lhs, shape) in
        [(diag, BlockStructure::TriangularLower), (diag.transpose(), BlockStructure::StrictTriangularUpper)]
    {
        triangular::matmul(
            y.as_mut(),
            BlockStructure::Rectangular,
            Accum::Add,
            lhs,
            shape,
            vb,
            BlockStructure::Rectangular,
            1.0,
            Par::Seq,
        );
    }
    matmul(
        y.as_mut(),
        Accum::Add,
        s.submatrix(r1, r0, p - r1, h).transpose(),
        v.subrows(r1, p - r1),
        1.0,
        Par::Seq,
    );
}
