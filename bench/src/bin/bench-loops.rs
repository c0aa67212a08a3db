//! A parallel loop of n trivial iterations, `a[i] = i + rep`, under one
//! schedule; the Rust side of `bench/c/loops.c`.
//!
//! usage: bench-loops --impl IMPL --schedule S [--threads 2] [--n 1000000]
//!                    [--reps 20] [--samples 5]
//!
//! IMPL:
//! * `herd` — `pool.for_each(0..n, schedule, ..)`, S one of `static`,
//!   `static,C`, `dynamic,C`, `guided,C`, `adaptive`;
//! * `rayon` — `a.par_iter_mut().enumerate().for_each(..)` inside
//!   `pool.install` (S must be `par_iter`).
//!
//! One sample times `reps` loops; prints the median time per loop over
//! samples, in µs, after checking that the last loop wrote every element.

use herd_bench::{herd_pool, parse_schedule, rayon_pool, seconds, wrong, Args, Record};
use rayon::prelude::*;

const BENCH: &str = "loops";
const WARMUP: u64 = 5;

/// The output array, written through a raw pointer by many participants; each
/// index is written by exactly one of them. `Copy`, so that the loop body
/// captures the pointer by value.
#[derive(Clone, Copy)]
struct Out(*mut u64);
// SAFETY: participants write disjoint elements, and the caller reads only
// after the loop (a fork-join region) has completed.
unsafe impl Sync for Out {}

impl Out {
    /// # Safety
    /// `i` is in bounds and written by no other thread during this loop.
    #[inline(always)]
    unsafe fn set(&self, i: usize, v: u64) {
        // SAFETY: the caller's contract (in bounds, no concurrent writer).
        unsafe { *self.0.add(i) = v };
    }
}

/// Times `reps` calls of `run(rep)` per sample after a warm-up; returns µs
/// per call and the last `rep` used.
fn measure(reps: u64, samples: usize, mut run: impl FnMut(u64)) -> (Vec<f64>, u64) {
    let mut rep = 0;
    for _ in 0..WARMUP {
        rep += 1;
        run(rep);
    }
    let times = (0..samples)
        .map(|_| {
            seconds(|| {
                for _ in 0..reps {
                    rep += 1;
                    run(rep);
                }
            }) / reps as f64
                * 1e6
        })
        .collect();
    (times, rep)
}

fn main() {
    let mut args = Args::from_env();
    let imp: String = args.get("impl", String::new());
    let sched: String = args.get("schedule", String::new());
    let threads: usize = args.get("threads", 2);
    let n: usize = args.get("n", 1_000_000);
    let reps: u64 = args.get("reps", 20);
    let samples: usize = args.get("samples", 5);
    args.finish();

    let mut a = vec![0u64; n];
    let (times, last, bound) = match imp.as_str() {
        "herd" => {
            let schedule = parse_schedule(&sched).unwrap_or_else(|e| herd_bench::fail(&e));
            let (pool, bound) = herd_pool(threads);
            let out = Out(a.as_mut_ptr());
            let (t, last) = measure(reps, samples, |rep| {
                // SAFETY: every index of 0..n is visited once per loop.
                pool.for_each(0..n, schedule, move |i| unsafe { out.set(i, i as u64 + rep) })
            });
            (t, last, bound)
        }
        "rayon" => {
            if sched != "par_iter" {
                herd_bench::fail("--impl rayon takes --schedule par_iter");
            }
            let (pool, bound) = rayon_pool(threads);
            let (t, last) = measure(reps, samples, |rep| {
                pool.install(|| a.par_iter_mut().enumerate().for_each(|(i, x)| *x = i as u64 + rep))
            });
            (t, last, bound)
        }
        other => herd_bench::fail(&format!("--impl: unknown {other:?} (herd, rayon)")),
    };
    if let Some(i) = (0..n).find(|&i| a[i] != i as u64 + last) {
        wrong(BENCH, &format!("a[{i}] = {}, expected {}", a[i], i as u64 + last));
    }
    Record::from_samples(BENCH, &imp, &sched, threads, &times, "us")
        .bound(bound)
        .with("n", n)
        .with("reps", reps)
        .emit();
}
