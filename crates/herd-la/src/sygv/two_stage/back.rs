//! The back-transformation of stage 2: `Z ← Q₂·Z` with the reflectors of
//! the bulge chase, blocked as LAPACK's `dormtr_hb2st` / PLASMA do.
//!
//! Sweep `i`'s step-`k` reflector acts on rows `i + 1 + k·nb ..`, one row
//! below sweep `i − 1`'s: the step-`k` reflectors of `g` consecutive
//! sweeps `j·g ..` ([`group_width`]: `g = nb/2`) form a block of `g`
//! vectors whose rows are staggered by one (a parallelogram of
//! `g + nb − 1` rows), turned into compact-WY form `I − V·T·Vᵀ` by
//! herd-la's QR [`Block`] and applied with matrix products. Two reflectors
//! of the chase that overlap keep their order if the blocks are applied to
//! `Z` sweep group by sweep group from the last (`j` descending) and,
//! within a group, step by step from the first (`k` ascending): a step-`k`
//! reflector overlaps a later sweep's only at steps `k` and below, and
//! blocks of one group and step are consecutive sweeps, applied in order.
//!
//! `Z`'s columns are independent: each group's blocks are formed in
//! parallel, then `Z` is cut into column blocks spread over the pool, each
//! taking all of the group's blocks in turn.

use faer::{Mat, MatMut};

use super::chase::Sweeps;
use crate::qr::block::Block;
use crate::qr::split::{for_cols, par_map, piece};
use crate::Op;

/// The narrowest column block of `Z` given to one participant.
const MIN_COLS: usize = 32;

/// Sweeps per block: half the band. A block of `g` sweeps spans
/// `g + nb − 1` rows, so its products do `(g + nb − 1)/nb` times the
/// useful flops (1.5× here, 2× with `g = nb`); narrower blocks make
/// thinner products. At `nb = 64` on one core, `g = 32` took `Q₂` in
/// 0.87–0.93 s where `g = 64` took 1.09–1.32 s and `g = 16` 0.99–1.10 s
/// (n = 2500).
fn group_width(nb: usize) -> usize {
    (nb / 2).max(1)
}

/// `z ← Q₂·z` for the `n × m` column-major `z` (`n` the order of the
/// chase).
pub(super) fn apply_q2(sweeps: &Sweeps, mut z: MatMut<'_, f64>) {
    let (n, nb) = (sweeps.n, sweeps.nb);
    assert_eq!(z.nrows(), n);
    if n < 3 || z.ncols() == 0 {
        return;
    }
    let sweep_count = n - 1;
    let g = group_width(nb);
    let groups = sweep_count.div_ceil(g);
    let width = piece(z.ncols(), MIN_COLS);
    for j in (0..groups).rev() {
        let i0 = j * g;
        let i1 = (i0 + g).min(sweep_count);
        // Steps whose group has a reflector of at least two rows.
        let steps = (i0 + 1..n - 1).step_by(nb).count();
        let blocks: Vec<Option<(usize, Block<'static>)>> =
            par_map(steps, &|k| group_block(sweeps, i0..i1, k));
        let blocks = &blocks;
        for_cols(z.as_mut(), width, &|mut cols: MatMut<'_, f64>, _| {
            for (r0, blk) in blocks.iter().flatten() {
                blk.apply_left(Op::NoTrans, cols.as_mut().subrows_mut(*r0, blk.rows()));
            }
        });
    }
}

/// The block of the step-`k` reflectors of the sweeps `range` with at
/// least two rows (a prefix of the range), with its first row; `None` if
/// there is none.
fn group_block(sweeps: &Sweeps, range: std::ops::Range<usize>, k: usize) -> Option<(usize, Block<'static>)> {
    let n = sweeps.n;
    let refl: Vec<_> =
        range.filter_map(|i| sweeps.reflector(i, k)).take_while(|(_, v, _)| v.len() >= 2).collect();
    let (r0, _, _) = *refl.first()?;
    let (s_last, v_last, _) = *refl.last()?;
    let rows = (s_last + v_last.len()).min(n) - r0;
    let mut p = Mat::<f64>::zeros(rows, refl.len());
    let mut tau = Vec::with_capacity(refl.len());
    for (q, (s, v, t)) in refl.iter().enumerate() {
        let top = s - r0;
        p.as_mut().col_mut(q).subrows_mut(top, v.len()).iter_mut().zip(v.iter()).for_each(|(x, y)| *x = *y);
        tau.push(*t);
    }
    Some((r0, Block::from_owned(p, &tau)))
}
