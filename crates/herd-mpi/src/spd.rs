//! The deterministic symmetric positive definite test matrix shared by herd's distributed
//! Cholesky and the ScaLAPACK anchor, so that both factor the same matrix and no rank ever
//! holds the whole of it: any rank computes any entry from `(i, j, n, seed)` alone.
//!
//! * off the diagonal, `A(i, j) = A(j, i)` is uniform in `[-0.5, 0.5)`: the top 53 bits of
//!   a SplitMix64 hash of `(min(i, j), max(i, j), seed)`, scaled;
//! * on the diagonal, `A(i, i) = n + 1`.
//!
//! Each row's off-diagonal entries sum in absolute value to less than `(n − 1) / 2`, well below
//! the diagonal `n + 1`: the matrix is strictly diagonally dominant with a positive diagonal,
//! hence SPD (Gershgorin: every eigenvalue lies in `[n/2 + 1.5, 3n/2 + 0.5]`), and well
//! conditioned (condition number below 3) at every size.

/// SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mix.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Entry `(i, j)` (0-based) of the `n × n` SPD test matrix for `seed` (see the module docs).
/// Symmetric: `entry(i, j, n, seed) == entry(j, i, n, seed)`.
pub fn entry(i: usize, j: usize, n: usize, seed: u64) -> f64 {
    if i == j {
        return n as f64 + 1.0;
    }
    let (lo, hi) = if i < j { (i as u64, j as u64) } else { (j as u64, i as u64) };
    let h = mix(mix(mix(seed ^ 0x9e37_79b9_7f4a_7c15).wrapping_add(lo)).wrapping_add(hi));
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64) - 0.5
}

/// Entry `i` of the vector both residual checks multiply by (`‖A·x − L·(Lᵀ·x)‖`).
pub fn probe(i: usize) -> f64 {
    1.0 / (1.0 + (i % 13) as f64)
}

/// The whole matrix, column-major (`a[i + j * n]`), for sequential references and tests.
pub fn dense(n: usize, seed: u64) -> Vec<f64> {
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            a[i + j * n] = entry(i, j, n, seed);
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_bounded_and_seeded() {
        let n = 50;
        for i in 0..n {
            assert_eq!(entry(i, i, n, 3), 51.0);
            let mut off = 0.0;
            for j in 0..n {
                assert_eq!(entry(i, j, n, 3), entry(j, i, n, 3));
                if i != j {
                    let v = entry(i, j, n, 3);
                    assert!((-0.5..0.5).contains(&v), "{v}");
                    off += v.abs();
                }
            }
            assert!(off < entry(i, i, n, 3) / 2.0);
        }
        assert_ne!(entry(1, 2, n, 3), entry(1, 2, n, 4));
        assert_ne!(entry(1, 2, n, 3), entry(1, 3, n, 3));
        // roughly uniform: mean near 0 over many entries
        let mean: f64 = (0..1000).map(|k| entry(k, k + 1, 2000, 9)).sum::<f64>() / 1000.0;
        assert!(mean.abs() < 0.05, "{mean}");
    }

    #[test]
    fn dense_factors() {
        let n = 40;
        let a = dense(n, 1);
        let m = faer::Mat::from_fn(n, n, |i, j| a[i + j * n]);
        assert!(m.llt(faer::Side::Lower).is_ok());
    }
}
