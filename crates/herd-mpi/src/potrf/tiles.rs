//! The test matrix of the distributed Cholesky, generated tile by tile so that no rank needs
//! the global matrix: `A = G + n·I` with `G(i, j) = G(j, i) = h(seed, min(i,j), max(i,j))`,
//! `h` a SplitMix64 hash mapped into the open interval (−1, 1). Every off-diagonal row sum
//! of `|A|` is below `n − 1` and every diagonal entry above `n − 1`, so `A` is strictly
//! diagonally dominant with a positive diagonal: symmetric positive definite for every `n`
//! and seed.

use herd_la::{Tile, TiledMatrix};

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hash of `(seed, a, b)` in the open interval (−1, 1).
pub fn unit(seed: u64, a: u64, b: u64) -> f64 {
    let h = splitmix(splitmix(splitmix(seed) ^ a) ^ b.wrapping_mul(0x2545_F491_4F6C_DD1D));
    ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// Element `(i, j)` of the `n × n` test matrix.
pub fn entry(n: usize, seed: u64, i: usize, j: usize) -> f64 {
    let (a, b) = if i <= j { (i, j) } else { (j, i) };
    let g = unit(seed, a as u64, b as u64);
    if i == j {
        g + n as f64
    } else {
        g
    }
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

/// The probe vector of the residual check: `x_i = h(seed ^ PROBE, i, n)`.
pub fn probe_vector(n: usize, seed: u64) -> Vec<f64> {
    (0..n).map(|i| unit(seed ^ 0x5EED_0F_9A0BE, i as u64, n as u64)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_dominant_and_tiled_consistently() {
        let n = 37;
        for i in 0..n {
            let off: f64 = (0..n).filter(|&j| j != i).map(|j| entry(n, 3, i, j).abs()).sum();
            assert!(entry(n, 3, i, i) > off, "row {i} dominant");
            for j in 0..n {
                assert_eq!(entry(n, 3, i, j), entry(n, 3, j, i));
                assert!(entry(n, 3, i, j) != entry(n, 4, i, j), "the seed matters");
            }
        }
        let a = global_matrix(n, 8, 3).unwrap();
        assert_eq!(a.get(36, 5), Some(entry(n, 3, 36, 5)));
        assert_eq!(matrix_tile(n, 8, 3, 4, 0).rows(), 5);
    }
}
