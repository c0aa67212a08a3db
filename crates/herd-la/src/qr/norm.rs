//! The 2-norm of a column for `dlarfg` ([`larfg`](super::householder::larfg)):
//! the sum of squares by a dot product compiled for the widest vectors the
//! CPU has (chosen at run time; never an instruction the CPU lacks), and
//! faer's scaled norm only where that sum overflowed or came near the
//! underflow threshold.
//!
//! Why not faer's norm for every column: with it, `geqr2` of a 4000 × 16
//! leaf of the recursive panel took 0.43 ms on the 2-vCPU Xeon, with this
//! one 0.24 ms (`norm_times`, below; BENCHMARKS.md "QR's panel"), though
//! faer's norm of a 4000-entry vector alone takes 0.7 µs in a loop — not
//! diagnosed inside faer.
//!
//! The dot product keeps [`LANES`] partial sums, added in a fixed order at
//! the end, and never contracts a multiply and an add into a fused one:
//! every code path gives the same bits on every CPU.

/// Partial sums of [`dot`]: two AVX-512 vectors of `f64` (with one, the
/// latency of its add bounded the loop), four AVX2 ones.
const LANES: usize = 16;

/// `sqrt(Σ x_i²)` without overflow or underflow, as LAPACK's `dnrm2`;
/// NaN if an entry is NaN. The sum of squares by [`dot`] where it is
/// finite and at least `len·f64::MIN_POSITIVE/ε` (the squares lost to
/// underflow, at most `len·f64::MIN_POSITIVE`, are then below its
/// rounding), else faer's scaled 2-norm.
pub(crate) fn nrm2(x: &[f64]) -> f64 {
    let ssq = dot(x, x);
    let safe = x.len() as f64 * f64::MIN_POSITIVE / f64::EPSILON;
    if ssq.is_finite() && ssq >= safe {
        ssq.sqrt()
    } else {
        faer::ColRef::from_slice(x).norm_l2()
    }
}

/// `xᵀ·y` (`x.len() == y.len()`), with the same bits on every path.
pub(super) fn dot(x: &[f64], y: &[f64]) -> f64 {
    debug_assert_eq!(x.len(), y.len());
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            return unsafe { dot_avx512(x, y) };
        }
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { dot_avx2(x, y) };
        }
    }
    dot_any(x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn dot_avx512(x: &[f64], y: &[f64]) -> f64 {
    dot_any(x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(x: &[f64], y: &[f64]) -> f64 {
    dot_any(x, y)
}

/// [`dot`] in portable code, inlined into the feature-enabled copies.
#[inline(always)]
fn dot_any(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = [0.0f64; LANES];
    let (xc, yc) = (x.chunks_exact(LANES), y.chunks_exact(LANES));
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (a, b) in xc.zip(yc) {
        for k in 0..LANES {
            acc[k] += a[k] * b[k];
        }
    }
    for (k, (a, b)) in xr.iter().zip(yr).enumerate() {
        acc[k] += a * b;
    }
    // Pairwise, in a fixed order.
    let mut half = LANES;
    while half > 1 {
        half /= 2;
        for k in 0..half {
            acc[k] += acc[k + half];
        }
    }
    acc[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_gives_the_same_bits() {
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 63, 1000, 4001] {
            let x: Vec<f64> = (0..len).map(|i| ((i * 37 % 101) as f64 - 50.0) / 7.0).collect();
            let y: Vec<f64> = (0..len).map(|i| ((i * 53 % 97) as f64 - 48.0) / 3.0).collect();
            let want = dot_any(&x, &y);
            let naive: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
            assert!((want - naive).abs() <= 1e-12 * (1.0 + naive.abs()), "{len}: {want} {naive}");
            assert_eq!(dot(&x, &y).to_bits(), want.to_bits(), "{len}");
            #[cfg(target_arch = "x86_64")]
            {
                if is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2 (checked just above).
                    assert_eq!(unsafe { dot_avx2(&x, &y) }.to_bits(), want.to_bits());
                }
            }
        }
    }

    #[test]
    fn the_norm_falls_back_where_squares_overflow_or_underflow() {
        let scaled = |s: f64| {
            let x: Vec<f64> = (0..1000).map(|i| s * ((i % 7) as f64 - 3.0)).collect();
            (nrm2(&x), faer::ColRef::from_slice(&x).norm_l2())
        };
        for s in [1.0, 1e200, 1e-200, 1e-310, 0.0] {
            let (got, want) = scaled(s);
            assert!((got - want).abs() <= 4.0 * f64::EPSILON * want, "{s}: {got} {want}");
            assert!(got.is_finite());
        }
        assert!(nrm2(&[1.0, f64::NAN]).is_nan());
        assert_eq!(nrm2(&[3.0, f64::INFINITY]), f64::INFINITY);
        assert_eq!(nrm2(&[]), 0.0);
    }
}

/// Run by hand: `cargo test --release -p herd-la --lib norm_times -- --ignored --nocapture`.
#[cfg(test)]
mod timing {
    use super::super::householder::{geqr2, larfg};
    use std::time::Instant;

    #[test]
    #[ignore = "timing, run by hand"]
    fn norm_times() {
        let x: Vec<f64> = (0..4000).map(|i| (i % 17) as f64 - 8.0).collect();
        let (reps, mut s) = (10_000, 0.0);
        let t0 = Instant::now();
        for _ in 0..reps {
            s += super::nrm2(&x[1..]);
        }
        let ours = t0.elapsed().as_secs_f64() / reps as f64;
        let t0 = Instant::now();
        for _ in 0..reps {
            s += faer::ColRef::from_slice(&x[1..]).norm_l2();
        }
        let scaled = t0.elapsed().as_secs_f64() / reps as f64;
        // Fresh copies: repeated reflections of one vector drift into
        // subnormal numbers.
        let mut xs: Vec<_> = (0..100).map(|_| x.clone()).collect();
        let t0 = Instant::now();
        xs.iter_mut().for_each(|x| s += larfg(x));
        let reflector = t0.elapsed().as_secs_f64() / 100.0;
        let c = crate::random_matrix(4000, 16, 3);
        let mut cs: Vec<_> = (0..100).map(|_| c.clone()).collect();
        let mut tau = vec![0.0; 16];
        let t0 = Instant::now();
        cs.iter_mut().for_each(|c| geqr2(c.as_mut(), &mut tau));
        let leaf = t0.elapsed().as_secs_f64() / 100.0;
        println!(
            "4000 rows: nrm2 {ours:.2e} s, faer's norm_l2 {scaled:.2e} s, larfg {reflector:.2e} s, \
             geqr2 of 16 columns {leaf:.2e} s ({s:e})"
        );
    }
}
