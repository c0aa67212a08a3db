//! One rank's part of an `n × n` matrix distributed 2-D block-cyclically in `nb × nb` blocks
//! over a [`ProcessGrid`] (ScaLAPACK's layout, source process `(0, 0)`): block `(I, J)` lives
//! on grid coordinates `(I mod rows, J mod cols)`, and each rank stores its blocks as one
//! column-major local array with leading dimension `lld = max(1, local rows)`.

use crate::grid::ProcessGrid;

/// The local part of a block-cyclic matrix on one rank.
#[derive(Clone, Debug)]
pub struct LocalMatrix {
    /// Global order.
    pub n: usize,
    /// Block size.
    pub nb: usize,
    /// The process grid.
    pub grid: ProcessGrid,
    /// This rank's grid row.
    pub myrow: usize,
    /// This rank's grid column.
    pub mycol: usize,
    /// Local rows (`numroc(n, nb, myrow, rows)`).
    pub mloc: usize,
    /// Local columns (`numroc(n, nb, mycol, cols)`).
    pub nloc: usize,
    /// Leading dimension of `data`.
    pub lld: usize,
    /// `lld × nloc`, column-major.
    pub data: Vec<f64>,
}

/// The global index of local index `l` along a dimension cycled over `p` processes, at
/// process coordinate `coord`.
pub fn local_to_global(l: usize, nb: usize, coord: usize, p: usize) -> usize {
    ((l / nb) * p + coord) * nb + l % nb
}

/// `(owner coordinate, local index)` of global index `g` along a dimension cycled over `p`.
pub fn global_to_local(g: usize, nb: usize, p: usize) -> (usize, usize) {
    let block = g / nb;
    (block % p, (block / p) * nb + g % nb)
}

impl LocalMatrix {
    /// The part of rank `rank` (row-major in `grid`), filled with `f(i, j)` at each global
    /// `(i, j)` it owns; no other entries are computed.
    pub fn from_fn(
        n: usize,
        nb: usize,
        grid: ProcessGrid,
        rank: usize,
        f: impl Fn(usize, usize) -> f64,
    ) -> LocalMatrix {
        let (myrow, mycol) = grid.coords(rank);
        let mloc = ProcessGrid::numroc(n, nb, myrow, grid.rows);
        let nloc = ProcessGrid::numroc(n, nb, mycol, grid.cols);
        let lld = mloc.max(1);
        let mut data = vec![0.0; lld * nloc];
        for lj in 0..nloc {
            let j = local_to_global(lj, nb, mycol, grid.cols);
            let col = &mut data[lj * lld..lj * lld + mloc];
            for (li, v) in col.iter_mut().enumerate() {
                *v = f(local_to_global(li, nb, myrow, grid.rows), j);
            }
        }
        LocalMatrix { n, nb, grid, myrow, mycol, mloc, nloc, lld, data }
    }

    /// Global row of local row `li`.
    pub fn row(&self, li: usize) -> usize {
        local_to_global(li, self.nb, self.myrow, self.grid.rows)
    }

    /// Global column of local column `lj`.
    pub fn col(&self, lj: usize) -> usize {
        local_to_global(lj, self.nb, self.mycol, self.grid.cols)
    }

    /// Local entry `(li, lj)`.
    pub fn at(&self, li: usize, lj: usize) -> f64 {
        self.data[li + lj * self.lld]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_owned_once_and_maps_round_trip() {
        let (n, nb) = (37, 8);
        let g = ProcessGrid { rows: 2, cols: 3 };
        let mut seen = vec![0u8; n * n];
        for r in 0..g.size() {
            let m = LocalMatrix::from_fn(n, nb, g, r, |i, j| (i * 1000 + j) as f64);
            for lj in 0..m.nloc {
                for li in 0..m.mloc {
                    let (i, j) = (m.row(li), m.col(lj));
                    assert_eq!(m.at(li, lj), (i * 1000 + j) as f64);
                    assert_eq!(g.owner(i / nb, j / nb), r);
                    assert_eq!(global_to_local(i, nb, g.rows), (m.myrow, li));
                    assert_eq!(global_to_local(j, nb, g.cols), (m.mycol, lj));
                    seen[i + j * n] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
    }
}
