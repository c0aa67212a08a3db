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
//!   tiles than participants, each tile's GEMM into row blocks), spread by
//!   recursive halving with `herd::join`.
//!
//! So panel `k + 1` is factored while the trailing update of step `k`
//! proceeds (look-ahead of depth one), and a participant that finishes the
//! critical path steals tiles of the rest. The interchanges of each panel are
//! applied to the columns left of it (L's columns) at the end, every earlier
//! panel's columns independently (the result is LAPACK's: the interchanges
//! of rows below a panel commute with everything done to its columns after
//! its factorization).
//!
//! Why `herd::join` rather than a herd-flow graph: with look-ahead of depth
//! one the dependencies are exactly "the next panel after its columns'
//! update, the next step after both branches", which nested joins express
//! with split borrows of one `MatMut` — no `unsafe`, no locks, no tile copy
//! of the column-major matrix — while a deeper look-ahead would need a graph
//! over column tiles (left for later; see the module's documentation).

use faer::{MatMut, MatRef};

use super::kernels::{getrf2, laswp, update_block};

/// GEMM row blocks are not made shorter than this many rows.
const MIN_ROWS: usize = 256;

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
    let mut info = getrf2(a.as_mut().subcols_mut(0, jb0), &mut ipiv[..jb0]);
    let mut j = 0;
    while j < mn {
        let jb = nb.min(mn - j);
        let next = j + jb;
        if next >= n {
            break;
        }
        let (left, right) = a.as_mut().split_at_col_mut(next);
        let panel = left.as_ref().submatrix(j, j, m - j, jb);
        let (done, todo) = ipiv.split_at_mut(next);
        let piv = &done[j..];
        if next < mn {
            let jb2 = nb.min(mn - next);
            let (cols, rest) = right.split_at_col_mut(jb2);
            let parts = row_parts(participants, 1, m - next);
            let (found, ()) = herd::join(
                || {
                    let mut cols = cols;
                    update_block(cols.as_mut(), panel, piv, j, parts);
                    let found = getrf2(cols.subrows_mut(next, m - next), &mut todo[..jb2]);
                    todo[..jb2].iter_mut().for_each(|p| *p += next);
                    found.map(|f| f + next)
                },
                || update_columns(rest, panel, piv, j, nb, participants),
            );
            info = info.or(found);
        } else {
            // m < n: the last panel; the columns right of it only get its update.
            update_columns(right, panel, piv, j, nb, participants);
        }
        j = next;
    }
    apply_left(a.subcols_mut(0, mn), ipiv, nb, 0);
    info
}

/// Row blocks per column tile's GEMM: enough that `tiles` tiles give every
/// participant about two pieces, none shorter than [`MIN_ROWS`].
fn row_parts(participants: usize, tiles: usize, rows: usize) -> usize {
    (2 * participants).div_ceil(tiles.max(1)).min(rows / MIN_ROWS).max(1)
}

/// Updates every column of `c` by the factored panel (see
/// [`update_block`]), in tiles of `nb` columns spread with `herd::join`.
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
    let parts = row_parts(participants, tiles, c.nrows() - j - piv.len());
    split_tiles(c, tiles, nb, &|block| update_block(block, panel, piv, j, parts));
}

/// Runs `f` on each of the `tiles` column tiles of `nb` columns of `c` (the
/// last one narrower), halving with `herd::join`.
fn split_tiles<F: Fn(MatMut<'_, f64>) + Sync>(c: MatMut<'_, f64>, tiles: usize, nb: usize, f: &F) {
    if tiles <= 1 {
        f(c);
        return;
    }
    let half = tiles / 2;
    let (l, r) = c.split_at_col_mut(half * nb);
    herd::join(|| split_tiles(l, half, nb, f), || split_tiles(r, tiles - half, nb, f));
}

/// Applies to the columns of every panel the interchanges of the panels
/// right of it. `a` holds the panels from the one starting at column `col0`
/// (a multiple of `nb`) on; the panels are independent and spread with
/// `herd::join`.
fn apply_left(a: MatMut<'_, f64>, ipiv: &[usize], nb: usize, col0: usize) {
    let panels = a.ncols().div_ceil(nb);
    if panels == 0 {
        return;
    }
    if panels == 1 {
        let after = col0 + a.ncols();
        if after < ipiv.len() {
            laswp(a, &ipiv[after..], after);
        }
        return;
    }
    let half = panels / 2;
    let (l, r) = a.split_at_col_mut(half * nb);
    herd::join(|| apply_left(l, ipiv, nb, col0), || apply_left(r, ipiv, nb, col0 + half * nb));
}
