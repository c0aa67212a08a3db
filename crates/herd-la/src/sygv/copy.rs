//! The `O(n²)` data movement of `sygv` on the herd pool: filling the column
//! blocks of a matrix, each from data it does not alias, with one
//! participant per block (the blocks spread with `herd::join`).

use faer::MatMut;

/// No block is narrower than this many columns (unless the matrix is).
const MIN_WIDTH: usize = 64;

/// A column-block width for an `n`-column matrix: about two blocks per
/// participant of the current pool (the copies are memory-bound and short),
/// at least `MIN_WIDTH`.
pub(super) fn width(n: usize) -> usize {
    n.div_ceil(2 * herd::current_num_threads().max(1)).max(MIN_WIDTH).max(1)
}

/// Runs `f(block, col0)` for the blocks of `width` columns of `m` (`block`
/// is `m[.., col0..col0 + width]`, the last one narrower) on the current
/// herd pool.
pub(super) fn for_each_col_block<F>(m: MatMut<'_, f64>, width: usize, f: &F)
where
    F: Fn(MatMut<'_, f64>, usize) + Sync,
{
    let width = width.max(1);
    let blocks = m.ncols().div_ceil(width);
    split(m, 0, blocks, width, f);
}

fn split<F>(m: MatMut<'_, f64>, col0: usize, blocks: usize, width: usize, f: &F)
where
    F: Fn(MatMut<'_, f64>, usize) + Sync,
{
    if blocks <= 1 {
        if m.ncols() > 0 {
            f(m, col0);
        }
        return;
    }
    let left = blocks / 2;
    let (l, r) = m.split_at_col_mut(left * width);
    herd::join(|| split(l, col0, left, width, f), || split(r, col0 + left * width, blocks - left, width, f));
}
