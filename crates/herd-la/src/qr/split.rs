//! Spreading independent pieces of a matrix over the participants of the
//! current herd pool: the target of a block reflector cut into column (or
//! row) blocks, halved recursively with faer's `split_at_*_mut` (each piece a
//! `MatMut` of its own, no locks) and run with [`herd::join`], so idle
//! participants steal the larger pending halves.

use faer::MatMut;

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
