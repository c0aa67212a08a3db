//! The decision rule of the contention monitor: a hill-climb over the number
//! of active workers `k` of one shepherd.
//!
//! **Signal.** Once per epoch the monitor hands [`HillClimb::step`] a
//! [`Sample`]: the limit `k` that was in force, the shepherd's throughput
//! (jobs plus loop chunks its participants completed, per second) and whether
//! the shepherd was *busy* (its active participants were idle for less than
//! a set fraction of the epoch). With hardware counters the sample also
//! carries LLC misses per thousand cycles.
//!
//! **Estimates.** Per `k` the model keeps an exponentially weighted moving
//! average (EWMA) of the throughput (and of the miss rate) measured while `k`
//! workers were active.
//!
//! **Moves.** The model has a *home* `k` (initially every member). Every
//! [`ClimbSettings::probe_every`] busy epochs it *probes* a neighbour —
//! alternately `home − 1` and `home + 1`, within `1..=members` — for one
//! epoch, then compares the estimates of probe and home and moves home to
//! the probe only if it is clearly better:
//!
//! * its throughput is at least [`ClimbSettings::hysteresis`] (5 %) higher, or
//! * (hardware counters) it has fewer workers, a throughput within the
//!   hysteresis band of home's, and home's misses per kilo-cycle exceed the
//!   probe's by more than the hysteresis: misses rise with `k` while
//!   throughput does not — contention that more workers only make worse.
//!
//! The hysteresis keeps noise from moving the limit back and forth. A probe
//! that does not move home doubles the wait before the next one (up to 16×
//! `probe_every`); a move resets it. A probe costs one epoch at a worse `k`
//! (at `k − 1` on a machine with no contention, about 1/7 of the throughput
//! of the probing epochs with a fixed cadence: auto throttling measured 5–8 %
//! below no throttling on the array walk), so a settled climb probes rarely
//! while a changing workload is still followed. An epoch
//! that is not busy (a serial phase, a region too small for the shepherd)
//! says nothing about contention: the model then cancels a running probe and
//! moves home one step back toward all-active, keeping its estimates.
//!
//! **PCE.** The per-job cost at `k` is `k / throughput(k)` (worker-seconds per
//! job); relative to the cost at `k = 1` it is the *parallel cost efficiency*
//! of thread-management-overhead-atlas.txt (mean parallel computation time
//! over serial time): 1 means perfect scaling, 1.3 that each job costs 30 %
//! more worker time than alone, the price of contention. Where `k = 1` was
//! never measured, the smallest measured `k` is the reference ([`Pce::base`]).

use serde::Serialize;

/// Tuning of the hill-climb.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ClimbSettings {
    /// Weight of a new sample in the EWMA (0..=1).
    pub alpha: f64,
    /// Relative improvement a neighbour needs before the home moves there.
    pub hysteresis: f64,
    /// Busy epochs at home between two probes (at least 1).
    pub probe_every: u32,
}

impl Default for ClimbSettings {
    fn default() -> Self {
        ClimbSettings { alpha: 0.5, hysteresis: 0.05, probe_every: 6 }
    }
}

/// One epoch's measure of one shepherd.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// The active limit in force during the epoch.
    pub active: usize,
    /// Jobs plus loop chunks completed per second.
    pub throughput: f64,
    /// The active participants were (nearly) never idle.
    pub busy: bool,
    /// LLC misses per thousand cycles, with hardware counters.
    pub misses_per_kilocycle: Option<f64>,
}

/// Per-job cost at each `k` relative to the cost at `base`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pce {
    /// The reference `k` (1 where measured, else the smallest measured).
    pub base: usize,
    /// Index `k − 1`: the relative cost at `k`, where measured.
    pub relative_cost: Vec<Option<f64>>,
}

/// Most the wait between probes grows, in units of `probe_every`.
const MAX_BACKOFF: u32 = 16;

/// The hill-climb of one shepherd; see the module documentation.
#[derive(Clone, Debug, Serialize)]
pub struct HillClimb {
    max: usize,
    home: usize,
    probe: Option<usize>,
    probe_up_next: bool,
    since_probe: u32,
    /// Busy epochs at home before the next probe (doubles after a probe
    /// that did not move home).
    probe_wait: u32,
    throughput: Vec<Option<f64>>,
    misses: Vec<Option<f64>>,
    settings: ClimbSettings,
}

impl HillClimb {
    /// A climb over `1..=max` workers, starting with all of them active.
    ///
    /// # Panics
    /// If `max` is 0.
    pub fn new(max: usize, settings: ClimbSettings) -> HillClimb {
        assert!(max >= 1, "a shepherd has at least one member");
        HillClimb {
            max,
            home: max,
            probe: None,
            probe_up_next: false,
            since_probe: 0,
            probe_wait: settings.probe_every.max(1),
            throughput: vec![None; max],
            misses: vec![None; max],
            settings: ClimbSettings { probe_every: settings.probe_every.max(1), ..settings },
        }
    }

    /// The limit to apply now: the probe, or home.
    pub fn limit(&self) -> usize {
        self.probe.unwrap_or(self.home)
    }

    /// The best `k` known so far (the limit between probes).
    pub fn home(&self) -> usize {
        self.home
    }

    /// The throughput estimate at `k`.
    pub fn throughput(&self, k: usize) -> Option<f64> {
        self.throughput.get(k.wrapping_sub(1)).copied().flatten()
    }

    /// The throughput estimates, index `k − 1`.
    pub fn throughputs(&self) -> &[Option<f64>] {
        &self.throughput
    }

    /// The miss-rate estimate at `k`.
    pub fn misses_per_kilocycle(&self, k: usize) -> Option<f64> {
        self.misses.get(k.wrapping_sub(1)).copied().flatten()
    }

    /// Per-job cost at each measured `k`, relative to `k = 1` (or the
    /// smallest measured `k`); see the module documentation.
    pub fn pce(&self) -> Pce {
        let cost = |k: usize| self.throughput(k).filter(|&t| t > 0.0).map(|t| k as f64 / t);
        let base = (1..=self.max).find(|&k| cost(k).is_some()).unwrap_or(1);
        let relative_cost = (1..=self.max).map(|k| cost(k).and_then(|c| cost(base).map(|b| c / b))).collect();
        Pce { base, relative_cost }
    }

    /// Feeds one epoch's sample; returns the limit for the next epoch.
    pub fn step(&mut self, sample: Sample) -> usize {
        if !sample.busy {
            self.probe = None;
            self.since_probe = 0;
            self.home = (self.home + 1).min(self.max);
            return self.limit();
        }
        let k = sample.active.clamp(1, self.max);
        let a = self.settings.alpha;
        let ewma = |old: Option<f64>, x: f64| Some(old.map_or(x, |o| o + a * (x - o)));
        if sample.throughput.is_finite() && sample.throughput >= 0.0 {
            self.throughput[k - 1] = ewma(self.throughput[k - 1], sample.throughput);
        }
        if let Some(m) = sample.misses_per_kilocycle.filter(|m| m.is_finite() && *m >= 0.0) {
            self.misses[k - 1] = ewma(self.misses[k - 1], m);
        }
        if let Some(p) = self.probe.take() {
            if self.better(p, self.home) {
                self.home = p;
                self.probe_wait = self.settings.probe_every;
            } else {
                self.probe_wait = (self.probe_wait * 2).min(self.settings.probe_every * MAX_BACKOFF);
            }
            self.since_probe = 0;
        } else {
            self.since_probe += 1;
            if self.since_probe >= self.probe_wait {
                self.probe = self.next_probe();
            }
        }
        self.limit()
    }

    /// The neighbour of home to probe next (alternating down and up).
    fn next_probe(&mut self) -> Option<usize> {
        let (down, up) =
            ((self.home > 1).then(|| self.home - 1), (self.home < self.max).then(|| self.home + 1));
        let first_up = self.probe_up_next;
        self.probe_up_next = !self.probe_up_next;
        if first_up {
            up.or(down)
        } else {
            down.or(up)
        }
    }

    /// True when `c` is clearly better than `h` (module documentation).
    fn better(&self, c: usize, h: usize) -> bool {
        let hy = self.settings.hysteresis;
        let (Some(tc), Some(th)) = (self.throughput(c), self.throughput(h)) else {
            return false;
        };
        if tc >= th * (1.0 + hy) {
            return true;
        }
        if c < h && tc >= th * (1.0 - hy) {
            if let (Some(mc), Some(mh)) = (self.misses_per_kilocycle(c), self.misses_per_kilocycle(h)) {
                return mh > mc * (1.0 + hy);
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `epochs` busy epochs against the throughput curve `t` (index
    /// `k − 1`) and miss curve `m`; returns the homes visited.
    fn climb(c: &mut HillClimb, t: &[f64], m: Option<&[f64]>, epochs: usize) -> Vec<usize> {
        let mut homes = Vec::new();
        for _ in 0..epochs {
            let k = c.limit();
            c.step(Sample {
                active: k,
                throughput: t[k - 1],
                busy: true,
                misses_per_kilocycle: m.map(|m| m[k - 1]),
            });
            homes.push(c.home());
        }
        homes
    }

    #[test]
    fn finds_the_peak_of_the_throughput_curve() {
        let t = [1.0, 1.8, 2.4, 2.2, 2.0, 1.8, 1.6, 1.4];
        let mut c = HillClimb::new(8, ClimbSettings::default());
        assert_eq!(c.limit(), 8);
        climb(&mut c, &t, None, 400);
        assert_eq!(c.home(), 3);
        // It stays there: probing both neighbours does not move it.
        let homes = climb(&mut c, &t, None, 100);
        assert!(homes.iter().all(|&h| h == 3), "{homes:?}");
        // ...and the limit is the probe only for single epochs.
        let pce = c.pce();
        assert_eq!(pce.base, 2);
        // Cost per job at k = 3 relative to k = 2: (3 / 2.4) / (2 / 1.8).
        let r3 = pce.relative_cost[2].unwrap();
        assert!((r3 - (3.0 / 2.4) / (2.0 / 1.8)).abs() < 1e-9, "{r3}");
    }

    #[test]
    fn monotone_curve_keeps_everyone_active() {
        let t: Vec<f64> = (1..=8).map(|k| k as f64).collect();
        let mut c = HillClimb::new(8, ClimbSettings::default());
        let homes = climb(&mut c, &t, None, 200);
        assert!(homes.iter().all(|&h| h == 8), "{homes:?}");
    }

    #[test]
    fn a_settled_climb_probes_less_and_less() {
        let mut c = HillClimb::new(2, ClimbSettings::default());
        let mut probes = 0;
        for _ in 0..400 {
            let k = c.limit();
            if k != c.home() {
                probes += 1;
            }
            c.step(Sample {
                active: k,
                throughput: 100.0 * k as f64,
                busy: true,
                misses_per_kilocycle: None,
            });
        }
        // A fixed cadence would probe 400 / 7 = 57 times; with the doubling
        // wait (6, 12, 24, 48, 96, 96, ...) about seven.
        assert!((4..=10).contains(&probes), "{probes} probes");
        assert_eq!(c.home(), 2);
    }

    #[test]
    fn hysteresis_ignores_small_gains() {
        // Each worker fewer is 3 % better: under the 5 % threshold.
        let t: Vec<f64> = (1..=8).map(|k| 1.03f64.powi(8 - k)).collect();
        let mut c = HillClimb::new(8, ClimbSettings::default());
        let homes = climb(&mut c, &t, None, 200);
        assert!(homes.iter().all(|&h| h == 8), "{homes:?}");
        // With 10 % per step it walks down to one worker.
        let t: Vec<f64> = (1..=8).map(|k| 1.10f64.powi(8 - k)).collect();
        let mut c = HillClimb::new(8, ClimbSettings::default());
        climb(&mut c, &t, None, 400);
        assert_eq!(c.home(), 1);
        assert_eq!(c.pce().base, 1);
    }

    #[test]
    fn misses_rising_without_throughput_gain_throttle() {
        // Throughput saturates at k = 3; misses per kilo-cycle grow with k.
        let t = [1.0, 2.0, 3.0, 3.0, 3.0, 3.0];
        let m = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let mut c = HillClimb::new(6, ClimbSettings::default());
        climb(&mut c, &t, Some(&m), 400);
        assert_eq!(c.home(), 3);
        // Without the miss signal the flat curve does not move the limit.
        let mut c = HillClimb::new(6, ClimbSettings::default());
        climb(&mut c, &t, None, 400);
        assert_eq!(c.home(), 6);
    }

    #[test]
    fn idle_epochs_step_back_toward_all_active() {
        let t = [4.0, 3.0, 2.0, 1.0];
        let mut c = HillClimb::new(4, ClimbSettings::default());
        climb(&mut c, &t, None, 300);
        assert_eq!(c.home(), 1);
        let idle = Sample { active: 1, throughput: 0.0, busy: false, misses_per_kilocycle: None };
        assert_eq!(c.step(idle), 2);
        assert_eq!(c.step(idle), 3);
        assert_eq!(c.step(idle), 4);
        assert_eq!(c.step(idle), 4);
        // The estimates survive: the climb returns to 1.
        climb(&mut c, &t, None, 300);
        assert_eq!(c.home(), 1);
    }

    #[test]
    fn never_below_one_and_single_member_never_probes() {
        let mut c = HillClimb::new(1, ClimbSettings::default());
        for _ in 0..50 {
            assert_eq!(
                c.step(Sample { active: 1, throughput: 1.0, busy: true, misses_per_kilocycle: None }),
                1
            );
        }
        let mut c = HillClimb::new(3, ClimbSettings::default());
        let limits: Vec<usize> = (0..100)
            .map(|_| {
                let k = c.limit();
                c.step(Sample {
                    active: k,
                    throughput: 10.0 / k as f64,
                    busy: true,
                    misses_per_kilocycle: None,
                })
            })
            .collect();
        assert!(limits.iter().all(|&k| (1..=3).contains(&k)));
        assert_eq!(c.home(), 1);
    }
}
