//! The ATLAS paper's measures of parallel overhead
//! (thread-management-overhead-atlas.txt §I-A).
//!
//! * FST — full serial time: the whole problem solved serially;
//! * PST — partitioned serial time: one participant's partition solved serially;
//! * FPT — full parallel time: the whole problem solved by the region;
//! * PCT — per-core time: each participant's time inside its share;
//! * PMO = FPT − max PCT: parallel management overhead (dispatch, wake-ups,
//!   joins — everything that is not computing);
//! * PCE = mean PCT / mean PST: partitioned computational expansion (how much
//!   slower the same partition computes when everyone computes at once).

use crate::RegionTiming;
use serde::Serialize;
use std::time::Duration;

/// Measured times of one experiment point, all averaged over trials.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Measures {
    /// Full serial time.
    pub fst: Duration,
    /// Partitioned serial time, per participant's partition.
    pub pst: Vec<Duration>,
    /// Full parallel time.
    pub fpt: Duration,
    /// Per-core time, per participant.
    pub pct: Vec<Duration>,
}

impl Measures {
    /// Parallel management overhead: FPT − max PCT (zero if negative).
    pub fn pmo(&self) -> Duration {
        let max_pct = self.pct.iter().max().copied().unwrap_or_default();
        self.fpt.saturating_sub(max_pct)
    }

    /// Partitioned computational expansion: mean PCT / mean PST.
    pub fn pce(&self) -> f64 {
        let mean = |v: &[Duration]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().map(Duration::as_secs_f64).sum::<f64>() / v.len() as f64
            }
        };
        let pst = mean(&self.pst);
        if pst == 0.0 {
            f64::NAN
        } else {
            mean(&self.pct) / pst
        }
    }

    /// PMO as a fraction of FPT.
    pub fn pmo_fraction(&self) -> f64 {
        if self.fpt.is_zero() {
            0.0
        } else {
            self.pmo().as_secs_f64() / self.fpt.as_secs_f64()
        }
    }

    /// Speed-up over the full serial time: FST / FPT.
    pub fn speedup(&self) -> f64 {
        self.fst.as_secs_f64() / self.fpt.as_secs_f64()
    }
}

/// Averages region timings (element-wise for PCT).
pub fn mean_timing(samples: &[RegionTiming]) -> RegionTiming {
    let n = samples.len().max(1) as u32;
    let parts = samples.first().map_or(0, |s| s.pct.len());
    RegionTiming {
        fpt: samples.iter().map(|s| s.fpt).sum::<Duration>() / n,
        pct: (0..parts).map(|i| samples.iter().map(|s| s.pct[i]).sum::<Duration>() / n).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pmo_and_pce() {
        let ms = |v: u64| Duration::from_millis(v);
        let m = Measures { fst: ms(100), pst: vec![ms(50), ms(50)], fpt: ms(60), pct: vec![ms(52), ms(55)] };
        assert_eq!(m.pmo(), ms(5));
        assert!((m.pce() - 1.07).abs() < 1e-9);
        assert!((m.speedup() - 100.0 / 60.0).abs() < 1e-9);
    }

    #[test]
    fn mean_of_timings() {
        let t = |f: u64, a: u64, b: u64| RegionTiming {
            fpt: Duration::from_micros(f),
            pct: vec![Duration::from_micros(a), Duration::from_micros(b)],
        };
        let m = mean_timing(&[t(10, 4, 6), t(20, 6, 8)]);
        assert_eq!(m.fpt, Duration::from_micros(15));
        assert_eq!(m.pct, vec![Duration::from_micros(5), Duration::from_micros(7)]);
    }
}
