//! The test matrix of the distributed Cholesky, generated tile by tile so that no rank needs
//! the global matrix: the shared SPD matrix of [`crate::spd`] (strictly diagonally dominant
//! with a positive diagonal, so symmetric positive definite for every `n` and seed).

use crate::spd;
use herd_la::{Tile, TiledMatrix};

/// Element `(i, j)` of the `n × n` test matrix: [`spd::entry`], the matrix the ScaLAPACK
/// anchor factors too.
pub fn entry(n: usize, seed: u64, i: usize, j: usize) -> f64 {
    spd::entry(i, j, n, seed)
}

/// Rows (or columns) of tile index `t` of an order-`n` matrix in tiles of `nb`.
pub fn tile_len(n: usize, nb: usize, t: usize) -> usize {
    nb.min(n - t * nb)
}

/// Tile `(ti, tj)` of the test matrix (all of it, both triangles of a diagonal tile).
pub fn matrix_tile(n: usize, nb: usize, seed: u64, ti: usize, tj: usize) -> Tile {
    let (r, c) = (tile_len(n, nb, ti), tile_len(n, nb, tj));
    let mut t = Tile::zeros(r, c);
    let d = t.data_mut();
    for jj in 0..c {
        for ii in 0..r {
            d[ii + jj * r] = entry(n, seed, ti * nb + ii, tj * nb + jj);
        }
    }
    t
}

/// The whole test matrix (for single-rank references in tests).
pub fn global_matrix(n: usize, nb: usize, seed: u64) -> Result<TiledMatrix, herd_la::LaError> {
    let mut a = TiledMatrix::zeros(n, n, nb)?;
    for tj in 0..a.nt() {
        for ti in 0..a.mt() {
            *a.tile_get_mut(ti, tj) = matrix_tile(n, nb, seed, ti, tj);
        }
    }
    Ok(a)
}

/// The probe vector of the residual check ([`spd::probe`]).
pub fn probe_vector(n: usize) -> Vec<f64> {
    (0..n).map(spd::probe).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiled_consistently() {
        // The matrix's own properties (symmetric, dominant, seeded) are spd's tests.
        let n = 37;
        let a = global_matrix(n, 8, 3).unwrap();
        for i in 0..n {
            for j in 0..n {
                assert_eq!(a.get(i, j), Some(spd::entry(i, j, n, 3)), "({i}, {j})");
            }
        }
        let t = matrix_tile(n, 8, 3, 4, 1);
        assert_eq!((t.rows(), t.cols()), (5, 8));
        assert_eq!(t.data()[2 + 3 * 5], spd::entry(34, 11, n, 3));
    }
}
