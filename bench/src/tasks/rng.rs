//! The kernels' deterministic randomness: SplitMix64 (Steele, Lea and
//! Flood), as a stream ([`Rng`]) and as a hash of a 64-bit state ([`mix`]),
//! so that every input, every random decision of a simulation and every
//! tree node of `uts` is the same in every run and on every runtime.

/// SplitMix64's finaliser: a bijective 64-bit mix.
#[inline(always)]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The child state `i` of `state`: a hash of both.
#[inline(always)]
pub fn child(state: u64, i: u64) -> u64 {
    mix(state ^ mix(i.wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

/// A uniform value in [0, 1) from 64 random bits.
#[inline(always)]
pub fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A SplitMix64 stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng(u64);

impl Rng {
    /// The stream starting at `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// A uniform value in [0, 1).
    #[inline(always)]
    pub fn next_f64(&mut self) -> f64 {
        unit(self.next_u64())
    }

    /// A uniform value in `0..n` (n > 0; the tiny modulo bias is irrelevant here).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_ranges() {
        // SplitMix64 from seed 0: the published first output.
        assert_eq!(Rng::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        let mut r = Rng::new(7);
        assert!((0..1000).map(|_| r.next_f64()).all(|x| (0.0..1.0).contains(&x)));
        assert!((0..1000).map(|_| r.below(5)).all(|x| x < 5));
        assert_ne!(child(1, 0), child(1, 1));
    }
}
