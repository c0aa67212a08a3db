//! The blocked right-looking LU with look-ahead, scheduled on the herd pool
//! with `herd::join` on disjoint faer views.
//!
//! Step `k` (panel `k` — columns `j..j + jb` — already factored, its pivots
//! in `ipiv[j..j + jb]`) runs two branches with `herd::join`:
//!
//! * **critical path**: the columns of panel `k + 1` are updated by panel `k`
//!   (interchanges, triangular solve, GEMM) and panel `k + 1` is factored
//!   (recursive `dgetrf2`);
//! * **the rest**: every column right of panel `k + 1` is updated by panel
//!   `k`, cut into column tiles of `nb` columns (and, when there are fewer
//!   tiles than participants, each tile's GEMM into row blocks), the tiles
//!   handed out with `crate::spread` (every tile stealable at once).
//!
//! So panel `k + 1` is factored while the trailing update of step `k`
//! proceeds (look-ahead of depth one), and a participant that finishes the
//! critical path steals tiles of the rest. The interchanges of panel `k` are
//! applied to the columns left of it (L's columns, which nobody else touches
//! then) beside the trailing update of step `k`, as LAPACK applies them.
//!
//! With look-ahead of depth one the dependencies are exactly "the next panel
//! after its columns' update, the next step after both branches", which
//! nested joins express with split borrows of one `MatMut` — no `unsafe`, no
//! locks, no tile copy of the column-major matrix. The price is a join per
//! step: the next step cannot start before the last piece of this one. The
//! default schedule, `dataflow.rs`, has no such barrier.

use faer::reborrow::IntoConst;
use faer::{MatMut, MatRef};

use super::kernels::{gemm_parts, getrf2, laswp, update_block};

/// Pieces of work per participant aimed at in each step's trailing update,
/// so that a participant that finishes early finds some to steal.
const PIECES_PER_PARTICIPANT: usize = 4;
/// Multiply–adds above which a tile's GEMM is cut into row blocks whatever
/// the participant count (about 1 ms of one core): the step ends with the
/// last piece, so pieces must be small against a step.
const MAX_PIECE: usize = 1 << 26;

/// Factors `a` in place with panels of `nb` columns (`nb ≥ 1`); `ipiv`
/// (length `min(m, n)`) receives the pivots as row indices of `a`. Returns
/// the first zero pivot.
pub(super) fn getrf_blocked(mut a: MatMut<'_, f64>, ipiv: &mut [usize], nb: usize) -> Option<usize> {
    let (m, n) = (a.nrows(), a.ncols());
    let mn = m.min(n);
    if mn == 0 {
        return None;
    }
    let participants = herd::current_num_threads().max(1);
    let jb0 = nb.min(mn);
    let mut info = getrf2(a.as_mut().subcols_mut(0, jb0), &mut ipiv[..jb0], participants);
    let mut j = 0;
    while j < mn {
        let jb = nb.min(mn - j);
        let next = j + jb;
        let (left, right) = a.as_mut().split_at_col_mut(next);
        let (done_cols, panel_cols) = left.split_at_col_mut(j);
        let panel = panel_cols.into_const().subrows(j, m - j);
        let (done, todo) = ipiv.split_at_mut(next);
        let piv = &done[j..];
        // The columns left of the panel get its interchanges beside the
        // trailing update (nobody else touches them in this step).
        let swap_left = || swap_columns(done_cols, piv, j, nb);
        if next < mn {
            let jb2 = nb.min(mn - next);
            let (cols, rest) = right.split_at_col_mut(jb2);
            let (found, ((), ())) = herd::join(
                || {
                    let mut cols = cols;
                    let rows = m - next;
                    let parts = gemm_parts(PIECES_PER_PARTICIPANT * participants, rows, jb2, jb);
                    update_block(cols.as_mut(), panel, piv, j, parts);
                    let found = getrf2(cols.subrows_mut(next, rows), &mut todo[..jb2], participants);
                    todo[..jb2].iter_mut().for_each(|p| *p += next);
                    found.map(|f| f + next)
                },
                || herd::join(|| update_columns(rest, panel, piv, j, nb, participants), swap_left),
            );
            info = info.or(found);
        } else {
            // The last panel; for m < n the columns right of it still get its update.
            herd::join(|| update_columns(right, panel, piv, j, nb, participants), swap_left);
        }
        j = next;
    }
    info
}

/// Updates every column of `c` by the factored panel (see
/// [`update_block`]), in tiles of `nb` columns spread with `crate::spread`,
/// each tile's GEMM cut into row blocks so that there are about
/// [`PIECES_PER_PARTICIPANT`] pieces per participant and none above
/// [`MAX_PIECE`].
fn update_columns(
    c: MatMut<'_, f64>,
    panel: MatRef<'_, f64>,
    piv: &[usize],
    j: usize,
    nb: usize,
    participants: usize,
) {
    let tiles = c.ncols().div_ceil(nb);
    if tiles == 0 {
        return;
    }
    let (rows, jb) = (c.nrows() - j - piv.len(), piv.len());
    let width = nb.min(c.ncols());
    let by_load = (PIECES_PER_PARTICIPANT * participants).div_ceil(tiles);
    let by_size = rows.saturating_mul(width).saturating_mul(jb) / MAX_PIECE;
    let parts = gemm_parts(by_load.max(by_size), rows, width, jb);
    split_tiles(c, nb, &|block| update_block(block, panel, piv, j, parts));
}

/// Applies the interchanges `piv` of rows `j..` to the columns `c` (left of
/// their panel), in tiles of `nb` columns spread with `crate::spread`.
fn swap_columns(c: MatMut<'_, f64>, piv: &[usize], j: usize, nb: usize) {
    split_tiles(c, nb, &|block| laswp(block, piv, j));
}

/// Runs `f` on each column tile of `nb` columns of `c` (the last one
/// narrower), spread with [`crate::spread::for_each`].
fn split_tiles<F: Fn(MatMut<'_, f64>) + Sync>(c: MatMut<'_, f64>, nb: usize, f: &F) {
    crate::spread::for_each(crate::spread::col_blocks(c, nb), &|(tile, _)| f(tile));
}
