//! The `O(n²)` data movement of `sygv` on the herd pool: filling the column
//! blocks of a matrix, each from data it does not alias, with one
//! participant per block (the blocks spread with `crate::spread`).

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
    crate::spread::for_each(crate::spread::col_blocks(m, width), &|(block, col0)| f(block, col0));
}
