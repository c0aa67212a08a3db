//! Hardware counters (through `perf-event2`): last-level-cache misses and
//! cycles.
//!
//! Two ways of counting, both optional — every opener returns the kernel's
//! error unchanged, and the callers fall back to software measures:
//!
//! * [`ProcessCounters`]: the calling thread *and every thread it creates
//!   afterwards* (`inherit`), no matter on which CPU. A pool opens them on the
//!   building thread just before it spawns its workers, so that the counts
//!   cover the master and every worker without the workers opening anything
//!   themselves (the registry records no thread ids). Reading an inherited
//!   counter sums the live child counters. Needs `perf_event_paranoid` ≤ 2
//!   (user-space counting only) and a PMU the kernel exposes.
//! * [`CpuCounters`]: everything that runs on one CPU, any process
//!   (`herd monitor`'s per-socket meters). Needs `perf_event_paranoid` ≤ 0 or
//!   `CAP_PERFMON`.
//!
//! Where `perf_event_open` is refused (`ENOENT` in virtual machines without a
//! virtual PMU, `EACCES`/`EPERM` under a strict `perf_event_paranoid`) the
//! error is kept as the reason of the fallback.

use perf_event::events::Hardware;
use perf_event::{Builder, Counter};
use std::io;

/// One reading of a (cycles, LLC misses) pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// CPU cycles.
    pub cycles: u64,
    /// Last-level-cache misses.
    pub llc_misses: u64,
}

impl Reading {
    /// The counts between `earlier` and `self` (wrapping).
    pub fn since(self, earlier: Reading) -> Reading {
        Reading {
            cycles: self.cycles.wrapping_sub(earlier.cycles),
            llc_misses: self.llc_misses.wrapping_sub(earlier.llc_misses),
        }
    }

    /// LLC misses per thousand cycles (`None` without cycles).
    pub fn misses_per_kilocycle(self) -> Option<f64> {
        (self.cycles > 0).then(|| self.llc_misses as f64 * 1000.0 / self.cycles as f64)
    }
}

/// A cycles and an LLC-miss counter.
struct Pair {
    cycles: Counter,
    misses: Counter,
}

impl Pair {
    fn open(configure: impl Fn(&mut Builder<'static>)) -> io::Result<Pair> {
        let build = |event: Hardware| {
            let mut b = Builder::new(event);
            configure(&mut b);
            b.build()
        };
        let mut pair = Pair { cycles: build(Hardware::CPU_CYCLES)?, misses: build(Hardware::CACHE_MISSES)? };
        pair.cycles.enable()?;
        pair.misses.enable()?;
        Ok(pair)
    }

    fn read(&mut self) -> io::Result<Reading> {
        Ok(Reading { cycles: self.cycles.read()?, llc_misses: self.misses.read()? })
    }
}

/// Counters of the calling thread and of every thread it creates after the
/// call; see the module documentation.
pub struct ProcessCounters {
    pair: Pair,
}

impl std::fmt::Debug for ProcessCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProcessCounters")
    }
}

impl ProcessCounters {
    /// Opens user-space cycles and LLC-miss counters on the calling thread,
    /// inherited by the threads it creates later.
    pub fn open() -> io::Result<ProcessCounters> {
        let pair = Pair::open(|b| {
            b.observe_self().any_cpu().inherit(true).exclude_kernel(true).exclude_hv(true);
        })?;
        Ok(ProcessCounters { pair })
    }

    /// The counts so far.
    pub fn read(&mut self) -> io::Result<Reading> {
        self.pair.read()
    }
}

/// System-wide counters of a set of CPUs (every process); see the module
/// documentation.
pub struct CpuCounters {
    cpus: Vec<(u32, Pair)>,
}

impl CpuCounters {
    /// Opens cycles and LLC-miss counters on each CPU of `os_indices`; fails
    /// with the first CPU's error.
    pub fn open(os_indices: &[u32]) -> io::Result<CpuCounters> {
        let cpus = os_indices
            .iter()
            .map(|&cpu| {
                Pair::open(|b| {
                    b.any_pid().one_cpu(cpu as usize);
                })
                .map(|p| (cpu, p))
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(CpuCounters { cpus })
    }

    /// The counts so far, per CPU (OS index, reading).
    pub fn read(&mut self) -> io::Result<Vec<(u32, Reading)>> {
        self.cpus.iter_mut().map(|(cpu, p)| p.read().map(|r| (*cpu, r))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_arithmetic() {
        let a = Reading { cycles: 1000, llc_misses: 5 };
        let b = Reading { cycles: 3000, llc_misses: 25 };
        let d = b.since(a);
        assert_eq!(d, Reading { cycles: 2000, llc_misses: 20 });
        assert_eq!(d.misses_per_kilocycle(), Some(10.0));
        assert_eq!(Reading::default().misses_per_kilocycle(), None);
    }

    #[test]
    fn opening_either_works_or_says_why() {
        // On machines without a PMU (or with a strict perf_event_paranoid)
        // the kernel's error comes back; where it works, counts are readable.
        match ProcessCounters::open() {
            Ok(mut c) => {
                let a = c.read().unwrap();
                let mut x = 0u64;
                for i in 0..100_000u64 {
                    x = x.wrapping_add(std::hint::black_box(i));
                }
                std::hint::black_box(x);
                assert!(c.read().unwrap().cycles >= a.cycles);
            }
            Err(e) => assert!(e.raw_os_error().is_some(), "not an OS error: {e}"),
        }
    }
}
