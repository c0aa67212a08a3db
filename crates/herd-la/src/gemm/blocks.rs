//! Cutting `C` into disjoint blocks and running one closure per block on the
//! participants of the current herd pool.
//!
//! The blocks form a grid of `br × bc` blocks of `mb × nb` entries (the last
//! block row and column smaller when `mb`, `nb` do not divide the shape).
//! [`for_each_block`] halves the grid recursively — along the dimension with
//! more blocks — with `faer`'s `split_at_*_mut`, so every block is a
//! `MatMut` of its own (no `unsafe`, no locks), and hands them out with
//! `crate::spread` (halves spawned at once in a `herd::scope`, a column
//! group's blocks together; why not a `herd::join` tree: `spread.rs`).
//!
//! Partitioning `C` (never `K`) means no two blocks write the same entry and
//! no reduction is needed, whatever `K` is: for the ATLAS paper's rank-K
//! update (`K` ≈ 40–256, `C` large) each participant streams its block of
//! `C` once, like the paper's static split of `C` among the threads.

use faer::MatMut;

use crate::LaError;

/// How `C` is cut into blocks for a [`Gemm`](super::Gemm).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Blocking {
    /// Chosen from the shape of the product and the number of participants
    /// of the current pool: about one block per participant, as square as the shape allows,
    /// none thinner than 64 rows or columns unless `C` is, one block for small products.
    #[default]
    Auto,
    /// Blocks of `rows × cols` entries of `C` (edge blocks smaller); both at
    /// least 1.
    Fixed {
        /// Rows of a block.
        rows: usize,
        /// Columns of a block.
        cols: usize,
    },
}

/// Below this many multiply–adds (`m·n·k`) the product runs as one block on
/// the caller: a few tens of microseconds, less than waking a worker costs
/// back in lost cache and synchronisation.
const SEQUENTIAL_BELOW: usize = 96 * 96 * 96;
/// Blocks per participant aimed at by [`Grid::auto`].
const BLOCKS_PER_PARTICIPANT: usize = 1;
/// [`Grid::auto`] makes no block dimension smaller than this (unless the
/// matrix is), so that a block's packed panels are reused over many
/// micro-kernel calls.
const MIN_BLOCK: usize = 64;
/// Block row counts are rounded up to a multiple of this (a cache line of
/// `f64`), so that blocks start on the micro-kernel's row boundaries.
const ROW_ALIGN: usize = 8;

/// A grid of blocks over an `m × n` matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Grid {
    /// Rows of a block (at least 1).
    pub(crate) mb: usize,
    /// Columns of a block (at least 1).
    pub(crate) nb: usize,
    /// Block rows: `ceil(m / mb)`.
    pub(crate) br: usize,
    /// Block columns: `ceil(n / nb)`.
    pub(crate) bc: usize,
}

impl Grid {
    /// The grid of `blocking` over an `m × n` `C` of a product with inner
    /// dimension `k`, for `participants` participants.
    ///
    /// # Errors
    /// [`LaError::InvalidTileSize`] for a fixed block dimension of 0.
    pub(crate) fn new(
        blocking: Blocking,
        (m, n, k): (usize, usize, usize),
        participants: usize,
    ) -> Result<Grid, LaError> {
        match blocking {
            Blocking::Auto => Ok(Grid::auto((m, n, k), participants)),
            Blocking::Fixed { rows, cols } => {
                if rows == 0 || cols == 0 {
                    return Err(LaError::InvalidTileSize { nb: rows.min(cols) });
                }
                Ok(Grid::of(m, n, rows, cols))
            }
        }
    }

    /// Blocks of `mb × nb` over `m × n`.
    fn of(m: usize, n: usize, mb: usize, nb: usize) -> Grid {
        Grid { mb, nb, br: m.div_ceil(mb).max(1), bc: n.div_ceil(nb).max(1) }
    }

    /// One block for small products or one participant; otherwise about
    /// `BLOCKS_PER_PARTICIPANT` blocks per participant, as square as the
    /// shape allows, none thinner than `MIN_BLOCK` unless `C` is. Ties cut
    /// rows: for a square product on 2 cores (AMD EPYC, Zen 4), halves of
    /// rows ran 1–2.5 % faster than halves of columns in three alternating
    /// runs (`examples/gemm_bench.rs`), and no slower for the rank-K update.
    /// faer's kernel blocks each block for the caches itself (packed
    /// `kc × nc` panels of `B`, `mc × kc` of `A`), so a block only needs to
    /// be large enough that packing its panels is small against its
    /// arithmetic: more blocks than participants measured no faster.
    pub(crate) fn auto((m, n, k): (usize, usize, usize), participants: usize) -> Grid {
        let one = Grid::of(m, n, m.max(1), n.max(1));
        if participants <= 1 || m.saturating_mul(n).saturating_mul(k) < SEQUENTIAL_BELOW {
            return one;
        }
        let target = participants * BLOCKS_PER_PARTICIPANT;
        let (br_max, bc_max) = ((m / MIN_BLOCK).max(1), (n / MIN_BLOCK).max(1));
        let mut best: Option<(f64, Grid)> = None;
        for br in 1..=target.min(br_max) {
            let bc = target.div_ceil(br).min(bc_max);
            let mb = m.div_ceil(br).next_multiple_of(ROW_ALIGN).min(m);
            let g = Grid::of(m, n, mb, n.div_ceil(bc));
            // Fewer blocks than participants leaves some idle: worst; then
            // the squarest block.
            let idle = (g.br * g.bc < participants) as u8 as f64;
            let aspect = (g.mb as f64 / g.nb as f64).max(g.nb as f64 / g.mb as f64);
            let score = idle * 1e9 + aspect;
            // `<=`: of equal scores the last, the one with the most block rows.
            if best.is_none_or(|(s, _)| score <= s) {
                best = Some((score, g));
            }
        }
        best.map_or(one, |(_, g)| g)
    }
}

/// Runs `f(block, row0, col0)` for every block of `grid` over `c`
/// (`block` is `c[row0.., col0..]` of the grid's size, clipped) on the
/// participants of the current herd pool (the global pool when the caller
/// is in none): the blocks are handed out by [`crate::spread::for_each`].
pub(crate) fn for_each_block<F>(c: MatMut<'_, f64>, grid: Grid, f: &F)
where
    F: Fn(MatMut<'_, f64>, usize, usize) + Sync,
{
    if grid.br * grid.bc <= 1 {
        f(c, 0, 0);
        return;
    }
    let mut blocks = Vec::with_capacity(grid.br * grid.bc);
    split(c, (0, 0), (grid.br, grid.bc), grid, &mut blocks);
    // A column group's blocks next to each other, so that the members that
    // share packed panels of `B` are handed out together.
    blocks.sort_unstable_by_key(|&(_, row0, col0)| (col0, row0));
    crate::spread::for_each(blocks, &|(block, row0, col0)| f(block, row0, col0));
}

/// The `br × bc` blocks of `c`, whose first entry is `origin` in the whole
/// matrix, with their origins, appended to `out`.
fn split<'a>(
    c: MatMut<'a, f64>,
    origin: (usize, usize),
    (br, bc): (usize, usize),
    grid: Grid,
    out: &mut Vec<(MatMut<'a, f64>, usize, usize)>,
) {
    let (row0, col0) = origin;
    if br * bc <= 1 {
        out.push((c, row0, col0));
    } else if bc >= br {
        // `left < bc` blocks of `nb` columns end before `c` does.
        let left = bc / 2;
        let (l, r) = c.split_at_col_mut(left * grid.nb);
        split(l, origin, (br, left), grid, out);
        split(r, (row0, col0 + left * grid.nb), (br, bc - left), grid, out);
    } else {
        let top = br / 2;
        let (t, b) = c.split_at_row_mut(top * grid.mb);
        split(t, origin, (top, bc), grid, out);
        split(b, (row0 + top * grid.mb, col0), (br - top, bc), grid, out);
    }
}
