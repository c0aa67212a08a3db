//! The 2-D process grid and block-cyclic ownership shared by the distributed Cholesky and
//! the ScaLAPACK anchor (row-major rank order, as BLACS's default `Cblacs_gridinit(…, "Row", …)`).

use crate::error::{MpiError, Result};
use serde::Serialize;

/// A `rows × cols` grid of ranks; rank `r` sits at `(r / cols, r % cols)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ProcessGrid {
    /// Process rows.
    pub rows: usize,
    /// Process columns.
    pub cols: usize,
}

impl ProcessGrid {
    /// The most square grid of `ranks` processes with `rows ≤ cols` (2 → 1×2, 4 → 2×2, 6 → 2×3).
    pub fn square(ranks: usize) -> Result<ProcessGrid> {
        if ranks == 0 {
            return Err(MpiError::Invalid("a process grid needs at least one rank".into()));
        }
        let mut rows = (ranks as f64).sqrt() as usize;
        while rows > 1 && !ranks.is_multiple_of(rows) {
            rows -= 1;
        }
        Ok(ProcessGrid { rows: rows.max(1), cols: ranks / rows.max(1) })
    }

    /// A given shape; `rows * cols` must be the number of ranks.
    pub fn new(rows: usize, cols: usize, ranks: usize) -> Result<ProcessGrid> {
        if rows == 0 || cols == 0 || rows * cols != ranks {
            return Err(MpiError::Invalid(format!(
                "a {rows}×{cols} process grid does not match {ranks} ranks"
            )));
        }
        Ok(ProcessGrid { rows, cols })
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.rows * self.cols
    }

    /// The grid coordinates of `rank`.
    pub fn coords(&self, rank: usize) -> (usize, usize) {
        (rank / self.cols, rank % self.cols)
    }

    /// The rank at grid coordinates `(pr, pc)`.
    pub fn rank_at(&self, pr: usize, pc: usize) -> usize {
        pr * self.cols + pc
    }

    /// The owner of tile (block) `(i, j)` under 2-D block-cyclic distribution.
    pub fn owner(&self, i: usize, j: usize) -> usize {
        self.rank_at(i % self.rows, j % self.cols)
    }

    /// The local index of global block `i` along a dimension cycled over `p` processes.
    pub fn local_block(i: usize, p: usize) -> usize {
        i / p
    }

    /// How many of `n` elements in blocks of `nb`, cycled over `p` processes, process
    /// coordinate `coord` holds (ScaLAPACK's `numroc` with source 0).
    pub fn numroc(n: usize, nb: usize, coord: usize, p: usize) -> usize {
        let nblocks = n / nb;
        let mut count = (nblocks / p) * nb;
        let extra = nblocks % p;
        if coord < extra {
            count += nb;
        } else if coord == extra {
            count += n % nb;
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_grids() {
        assert_eq!(ProcessGrid::square(1).unwrap(), ProcessGrid { rows: 1, cols: 1 });
        assert_eq!(ProcessGrid::square(2).unwrap(), ProcessGrid { rows: 1, cols: 2 });
        assert_eq!(ProcessGrid::square(4).unwrap(), ProcessGrid { rows: 2, cols: 2 });
        assert_eq!(ProcessGrid::square(6).unwrap(), ProcessGrid { rows: 2, cols: 3 });
        assert_eq!(ProcessGrid::square(7).unwrap(), ProcessGrid { rows: 1, cols: 7 });
        assert!(ProcessGrid::square(0).is_err());
        assert!(ProcessGrid::new(2, 3, 5).is_err());
    }

    #[test]
    fn owners_cycle_and_numroc_sums() {
        let g = ProcessGrid { rows: 2, cols: 3 };
        assert_eq!(g.owner(0, 0), 0);
        assert_eq!(g.owner(1, 2), 5);
        assert_eq!(g.owner(2, 3), 0);
        assert_eq!(g.coords(4), (1, 1));
        for (n, nb, p) in [(100, 7, 3), (64, 16, 4), (5, 8, 2), (0, 4, 3)] {
            let total: usize = (0..p).map(|c| ProcessGrid::numroc(n, nb, c, p)).sum();
            assert_eq!(total, n, "n {n} nb {nb} p {p}");
        }
    }
}
