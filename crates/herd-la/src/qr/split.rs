//! Spreading independent pieces of a matrix over the participants of the
//! current herd pool: the target of a block reflector cut into column (or
//! row) blocks with faer's `split_at_*_mut` (each piece a `MatMut` of its
//! own, no locks) and handed out with `crate::spread` (every piece
//! stealable at once); the pairwise sums of [`apply_left_par`] and
//! [`par_map`] stay on [`herd::join`] trees (their results combine up the
//! tree).

use faer::{Mat, MatMut};

use super::block::Block;
use crate::Op;

/// Narrowest column piece of a block reflector's target: below this, packing
/// `V` for each piece's products outweighs its arithmetic.
const MIN_COLS: usize = 32;
/// Shortest row piece when the target is cut by rows (with a reduction).
const MIN_ROWS: usize = 256;
/// Least work (flops) worth a piece of its own: about 0.1–0.2 ms of one
/// core. Finer pieces gain nothing and, on a loaded machine, every join
/// whose stolen half sits on a preempted participant stalls the step.
const MIN_PIECE_FLOPS: usize = 1 << 23;

/// Pieces aimed at per participant: more than one, so that a participant
/// delayed by the panel (or by another process) is relieved of whole pieces.
const PIECES_PER_PARTICIPANT: usize = 4;

/// The width of the pieces `len` columns (rows) are cut into: about
/// [`PIECES_PER_PARTICIPANT`] per participant of the current pool, none
/// narrower than `min` (unless `len` is).
pub(crate) fn piece(len: usize, min: usize) -> usize {
    let parts = herd::current_num_threads().max(1) * PIECES_PER_PARTICIPANT;
    len.div_ceil(parts).max(min).max(1)
}

/// Runs `f(cols, col0)` for the blocks of `width` columns of `c` (the last
/// narrower), in parallel on the current herd pool.
pub(crate) fn for_cols<F>(c: MatMut<'_, f64>, width: usize, f: &F)
where
    F: Fn(MatMut<'_, f64>, usize) + Sync,
{
    crate::spread::for_each(crate::spread::col_blocks(c, width), &|(cols, col0)| f(cols, col0));
}

/// Runs `f(rows, row0)` for the blocks of `height` rows of `c` (the last
/// shorter), in parallel on the current herd pool.
pub(crate) fn for_rows<F>(c: MatMut<'_, f64>, height: usize, f: &F)
where
    F: Fn(MatMut<'_, f64>, usize) + Sync,
{
    for_cols(c.transpose_mut(), height, &|piece: MatMut<'_, f64>, row0| f(piece.transpose_mut(), row0));
}

/// `(0..len).map(f)` collected, the calls spread over the current herd pool.
pub(crate) fn par_map<T, F>(len: usize, f: &F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    map_range(0, len, f)
}

fn map_range<T, F>(start: usize, end: usize, f: &F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    if end - start <= 1 {
        return (start..end).map(f).collect();
    }
    let mid = start + (end - start) / 2;
    let (mut l, r) = herd::join(|| map_range(start, mid, f), || map_range(mid, end, f));
    l.extend(r);
    l
}

/// `C ← op(H)·C` for the block `blk` (`C` with `blk.rows()` rows) on the
/// current herd pool, `C` cut in two dimensions into about
/// [`PIECES_PER_PARTICIPANT`] pieces per participant, fewer when a piece would
/// do less than [`MIN_PIECE_FLOPS`] (one piece: run on the caller). `C`'s
/// columns are independent: with enough of them (half the pieces, each of at
/// least [`MIN_COLS`]) they are cut into column pieces and nothing is shared.
/// Otherwise (a panel, the last columns, a tall-skinny matrix) each column
/// piece is also cut into row pieces of at least [`MIN_ROWS`], enough for
/// the number of pieces aimed at:
/// `W = Σ V_iᵀ·C_i` formed piece by piece in parallel and summed pairwise
/// up the same tree of joins (`O(log pieces)` deep, the same order for a
/// given pool size), `Y = op(T)·W` once per column piece (`w²·nc` flops),
/// then `C_i −= V_i·Y` in parallel.
pub(crate) fn apply_left_par(blk: &Block, op: Op, c: MatMut<'_, f64>) {
    let (r, nc) = (c.nrows(), c.ncols());
    if blk.width() == 0 || nc == 0 {
        return;
    }
    let participants = herd::current_num_threads().max(1);
    let flops = 4usize.saturating_mul(r).saturating_mul(blk.width()).saturating_mul(nc);
    let target = (PIECES_PER_PARTICIPANT * participants).min(flops / MIN_PIECE_FLOPS);
    if participants == 1 || target <= 1 {
        blk.apply_left(op, c);
        return;
    }
    let col_pieces = nc.div_ceil(MIN_COLS).clamp(1, target);
    let row_pieces =
        if 2 * col_pieces >= target { 1 } else { target.div_ceil(col_pieces).min(r / MIN_ROWS).max(1) };
    let width = nc.div_ceil(col_pieces);
    if row_pieces == 1 {
        for_cols(c, width, &|cols: MatMut<'_, f64>, _| blk.apply_left(op, cols));
        return;
    }
    let height = r.div_ceil(row_pieces);
    for_cols(c, width, &|cols: MatMut<'_, f64>, _| {
        let w = {
            let cr = cols.as_ref();
            par_sum(0, r.div_ceil(height), &|i| {
                let row0 = i * height;
                blk.left_product(row0, cr.subrows(row0, height.min(r - row0)))
            })
        };
        let y = blk.times_t(op, w.as_ref());
        for_rows(cols, height, &|rows: MatMut<'_, f64>, row0| blk.subtract_left(row0, y.as_ref(), rows));
    });
}

/// `T` of the blocks `first` and `second` joined ([`Block::joined_t`]),
/// the coupling `V₁ᵀ·V₂` summed over row pieces of `second`'s vectors on
/// the current herd pool when it is worth pieces (as [`apply_left_par`]
/// cuts rows: at least [`MIN_ROWS`] and [`MIN_PIECE_FLOPS`] a piece).
pub(crate) fn join_par(first: &Block<'_>, second: &Block<'_>) -> Mat<f64> {
    let r = second.rows();
    let flops = 2usize.saturating_mul(r).saturating_mul(first.width()).saturating_mul(second.width());
    let pieces = (PIECES_PER_PARTICIPANT * herd::current_num_threads().max(1))
        .min(flops / MIN_PIECE_FLOPS)
        .min(r / MIN_ROWS)
        .max(1);
    let height = r.div_ceil(pieces).max(1);
    let x = par_sum(0, r.div_ceil(height).max(1), &|i| {
        let row0 = i * height;
        Block::coupling(first, second, row0, height.min(r - row0))
    });
    Block::joined_t(first, second, x)
}

/// `f(start) + … + f(end − 1)` (`start < end`), the terms computed in
/// parallel and added pairwise as the joins return.
fn par_sum<F>(start: usize, end: usize, f: &F) -> Mat<f64>
where
    F: Fn(usize) -> Mat<f64> + Sync,
{
    if end - start <= 1 {
        return f(start);
    }
    let mid = start + (end - start) / 2;
    let (mut l, r) = herd::join(|| par_sum(start, mid, f), || par_sum(mid, end, f));
    l += &r;
    l
}
