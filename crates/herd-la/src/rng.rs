//! Deterministic test and benchmark data: a SplitMix64 stream and the random
//! matrices drawn from it.

use faer::Mat;

/// SplitMix64 (Steele, Lea and Flood): a tiny, fast, well-mixed 64-bit
/// generator; the same seed gives the same stream on every machine.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream starting from `seed`.
    pub(crate) fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next value, uniform in `[0, 1)` (53 random bits).
    pub(crate) fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The next value, uniform in `[-1, 1)`.
    pub(crate) fn next_signed(&mut self) -> f64 {
        2.0 * self.next_unit() - 1.0
    }
}

/// A deterministic `m × n` matrix with entries uniform in `[-1, 1)` from a
/// SplitMix64 stream seeded with `seed`, filled column by column. Costs `O(mn)`.
pub fn random_matrix(m: usize, n: usize, seed: u64) -> Mat<f64> {
    let mut rng = SplitMix64::new(seed);
    let mut a = Mat::zeros(m, n);
    for j in 0..n {
        for i in 0..m {
            a[(i, j)] = rng.next_signed();
        }
    }
    a
}

/// A deterministic, well-conditioned `n × n` symmetric positive definite matrix for tests and
/// benchmarks: symmetric off-diagonal entries uniform in `[-1, 1)` from a SplitMix64 stream
/// seeded with `seed`, and diagonal entries `n + 1 + u` (`u ∈ [0, 1)`), which makes it strictly
/// diagonally dominant and therefore SPD. Costs `O(n²)`.
pub fn random_spd(n: usize, seed: u64) -> Mat<f64> {
    let mut rng = SplitMix64::new(seed);
    let mut a = Mat::zeros(n, n);
    for j in 0..n {
        a[(j, j)] = n as f64 + 1.0 + rng.next_unit();
        for i in j + 1..n {
            let v = rng.next_signed();
            a[(i, j)] = v;
            a[(j, i)] = v;
        }
    }
    a
}
