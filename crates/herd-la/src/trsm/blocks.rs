//! Cutting the right-hand sides of a triangular solve into column blocks and
//! running one closure per block on the participants of the current herd
//! pool.
//!
//! [`for_each_col_block`] cuts the blocks with faer's `split_at_col_mut`
//! (every block a `MatMut` of its own: no `unsafe`, no locks) and hands
//! them out with `crate::spread` (every block stealable at once).

use faer::MatMut;

/// Below this many multiply–adds (`k²·n` for a `k × k` triangle and `n`
/// right-hand sides, about twice the solve's) the solve runs as one block on
/// the caller.
const SEQUENTIAL_BELOW: usize = 96 * 96 * 96;
/// No block is narrower than this many right-hand sides (unless `B` is):
/// faer's solve updates the trailing rows with a matrix product whose
/// efficiency needs a panel this wide.
const MIN_BLOCK: usize = 32;
/// Block widths are rounded up to a multiple of this.
const ALIGN: usize = 8;

/// The block width for `n` right-hand sides of a `k × k` triangle on
/// `participants` participants: all of them (one block) for small solves or
/// one participant; otherwise about one block per participant, at least
/// `MIN_BLOCK` wide.
pub(super) fn width(k: usize, n: usize, participants: usize) -> usize {
    if participants <= 1 || k.saturating_mul(k).saturating_mul(n) < SEQUENTIAL_BELOW {
        return n.max(1);
    }
    n.div_ceil(participants).next_multiple_of(ALIGN).max(MIN_BLOCK).min(n).max(1)
}

/// Runs `f(block)` for the blocks of `width` columns of `b` (the last one
/// narrower), spread over the current herd pool with
/// [`crate::spread::for_each`].
pub(super) fn for_each_col_block<F>(b: MatMut<'_, f64>, width: usize, f: &F)
where
    F: Fn(MatMut<'_, f64>) + Sync,
{
    crate::spread::for_each(crate::spread::col_blocks(b, width), &|(block, _)| f(block));
}
