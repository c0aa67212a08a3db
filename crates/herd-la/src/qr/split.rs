//! Spreading independent pieces of a matrix over the participants of the
//! current herd pool: the target of a block reflector cut into column (or
//! row) blocks, halved recursively with faer's `split_at_*_mut` (each piece a
//! `MatMut` of its own, no locks) and run with [`herd::join`], so idle
//! participants steal the larger pending halves.

use faer::{Mat, MatMut};

use super::block::Block;
use crate::Op;

/// Narrowest column piece of a block reflector's target: below this, packing
/// `V` for each piece's products outweighs its arithmetic.
const MIN_COLS: usize = 32;
/// Shortest row piece when the target is cut by rows (with a reduction).
const MIN_ROWS: usize = 256;

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
    cols_from(c, 0, width.max(1), f);
}

fn cols_from<F>(c: MatMut<'_, f64>, col0: usize, width: usize, f: &F)
where
    F: Fn(MatMut<'_, f64>, usize) + Sync,
{
    let blocks = c.ncols().div_ceil(width);
    if blocks <= 1 {
        f(c, col0);
        return;
    }
    let left = (blocks / 2) * width;
    let (l, r) = c.split_at_col_mut(left);
    herd::join(|| cols_from(l, col0, width, f), || cols_from(r, col0 + left, width, f));
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
/// current herd pool. `C`'s columns are independent, so with enough of them
/// (two pieces of at least [`MIN_COLS`] per participant) they are cut into
/// column pieces and nothing is shared. A tall, narrow `C` (a panel, the
/// last columns, a tall-skinny matrix) is cut into row pieces instead:
/// `W = Σ V_iᵀ·C_i` formed piece by piece in parallel and summed in piece
/// order (deterministic for a given pool size), `Y = op(T)·W` once (`w² · nc`
/// flops), then `C_i −= V_i·Y` in parallel.
pub(crate) fn apply_left_par(blk: &Block, op: Op, c: MatMut<'_, f64>) {
    let (r, nc) = (c.nrows(), c.ncols());
    if blk.width() == 0 || nc == 0 {
        return;
    }
    let participants = herd::current_num_threads().max(1);
    if participants == 1 || nc >= 2 * participants * MIN_COLS || r < 2 * MIN_ROWS {
        let width = piece(nc, MIN_COLS);
        for_cols(c, width, &|cols: MatMut<'_, f64>, _| blk.apply_left(op, cols));
        return;
    }
    let height = piece(r, MIN_ROWS);
    let cr = c.as_ref();
    let parts = par_map(r.div_ceil(height), &|i| {
        let row0 = i * height;
        blk.left_product(row0, cr.subrows(row0, height.min(r - row0)))
    });
    let mut w = Mat::<f64>::zeros(blk.width(), nc);
    for p in &parts {
        w += p;
    }
    let y = blk.times_t(op, w.as_ref());
    for_rows(c, height, &|rows: MatMut<'_, f64>, row0| blk.subtract_left(row0, y.as_ref(), rows));
}
