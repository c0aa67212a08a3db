//! `geqrf`'s schedule: blocked right-looking Householder QR with a look-ahead
//! of one panel, on the herd pool.
//!
//! Step `s` holds panel `s` factored and its block reflector `(V, T)`
//! formed. One [`herd::join`] then runs, side by side,
//! * the critical path: panel `s + 1`'s columns updated (`C ← Hᵀ·C`), its
//!   lower part factored ([`panel`], recursive) and its `(V, T)` formed;
//! * the rest of the trailing matrix updated by `Hᵀ`, cut into column blocks
//!   (or row blocks with a reduction when it is narrow, [`apply_left_par`])
//!   that the other participants (and the first one, once its panel is
//!   done) take.
//!
//! The panel's own block products (and the next panel's update) are cut into
//! row pieces the same way, so participants that finish their share of the
//! update early steal pieces of the critical path instead of waiting.
//!
//! So the panel, sequential by nature, overlaps with the `O(mn·nb)` update
//! instead of idling all but one participant, as in the ATLAS paper's LU/QR
//! with look-ahead. A fork–join per step rather than a herd-flow graph: the
//! output must be LAPACK's (one reflector per column of the whole panel, not
//! the TS/TT tile kernels' tree), so the panel spans all the rows below the
//! diagonal, and a graph over column blocks would only express this same
//! one-step look-ahead; its join per step costs `O(log P)`, not `O(P)`.

use faer::MatMut;

use super::block::Block;
use super::householder::panel;
use super::split::apply_left_par;
use crate::Op;

/// `C ← Hᵀ·C` for the block `blk`, spread over the pool.
fn update(blk: &Block, c: MatMut<'_, f64>) {
    apply_left_par(blk, Op::Trans, c);
}

/// The QR of the column-major `a` (`m × n`) in panels of `nb` columns,
/// `tau[..min(m, n)]` written (`tau.len() ≥ min(m, n)`, `nb ≥ 1`).
pub(crate) fn geqrf_blocked(a: MatMut<'_, f64>, tau: &mut [f64], nb: usize) {
    let k = a.nrows().min(a.ncols());
    if k == 0 {
        return;
    }
    let b0 = nb.min(k);
    let (first, mut trailing) = a.split_at_col_mut(b0);
    let (tau0, mut tau_rest) = tau[..k].split_at_mut(b0);
    let mut blk = panel(first, tau0);
    let mut done = b0;
    while trailing.ncols() > 0 {
        let b = blk.width();
        let next_w = nb.min(k - done);
        if next_w == 0 {
            // m < n: no rows left for another panel; the last columns only
            // receive the update.
            update(&blk, trailing);
            break;
        }
        let (mut next, mut others) = trailing.split_at_col_mut(next_w);
        let (tau_next, tau_after) = std::mem::take(&mut tau_rest).split_at_mut(next_w);
        let current = &blk;
        let (next_blk, ()) = herd::join(
            move || {
                apply_left_par(current, Op::Trans, next.as_mut());
                panel(next.split_at_row_mut(b).1, tau_next)
            },
            || update(current, others.as_mut()),
        );
        trailing = others.split_at_row_mut(b).1;
        tau_rest = tau_after;
        blk = next_blk;
        done += next_w;
    }
}
