//! Timing helpers shared by the experiments: one mean, one median, one
//! human-readable duration format.

use std::time::{Duration, Instant};

/// Runs `f` and returns how long it took.
#[inline]
pub fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

/// The arithmetic mean (zero for no samples).
pub fn mean(samples: &[Duration]) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    samples.iter().sum::<Duration>() / samples.len() as u32
}

/// The median of `samples` (the mean of the two middle ones for an even count).
pub fn median(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Microseconds as a float.
pub fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// `850 ns`, `12.3 µs`, `4.56 ms`, `1.23 s` for a time in nanoseconds.
pub fn human_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn mean_of_durations() {
        let ms = Duration::from_millis;
        assert_eq!(mean(&[ms(1), ms(3)]), ms(2));
        assert_eq!(mean(&[]), Duration::ZERO);
    }

    #[test]
    fn human() {
        assert_eq!(human_ns(850.0), "850.0 ns");
        assert_eq!(human_ns(12_300.0), "12.30 µs");
        assert_eq!(human_ns(4_560_000.0), "4.56 ms");
    }
}
