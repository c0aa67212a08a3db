//! fib(n) with a join at every level, no cutoff.
//!
//! usage: bench-fib --impl IMPL [--threads T] [--n 30] [--samples 7]
//!
//! IMPL:
//! * `seq` — the plain recursive function, `fib(n-1) + fib(n-2)`, argument
//!   behind `black_box`. The compiler may transform the recursion (e.g. turn
//!   the second call into a loop), so it can make fewer than 2·fib(n+1)−1 calls;
//! * `seq-calls` — the same recursion with both results passed through
//!   `black_box`, which keeps every one of the 2·fib(n+1)−1 calls;
//! * `herd` — `herd::join` at every level, in a pool of T participants;
//! * `rayon` — `rayon::join` at every level, in a pool of T threads.
//!
//! Prints one record: the median over samples of one fib(n), in ms.

use herd_bench::{fib_calls, fib_iter, herd_pool, rayon_pool, seconds, wrong, Args, Record};
use std::hint::black_box;

const BENCH: &str = "fib";

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

fn fib_seq_calls(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        black_box(fib_seq_calls(n - 1)) + black_box(fib_seq_calls(n - 2))
    }
}

fn fib_herd(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = herd::join(|| fib_herd(n - 1), || fib_herd(n - 2));
    a + b
}

fn fib_rayon(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

/// Runs `fib` once to warm up, then `samples` times; checks every result and
/// returns the times in ms.
fn measure(n: u64, samples: usize, fib: impl Fn(u64) -> u64) -> Vec<f64> {
    let expect = fib_iter(n);
    (0..=samples)
        .map(|_| {
            let mut r = 0;
            let t = seconds(|| r = fib(black_box(n)));
            if r != expect {
                wrong(BENCH, &format!("fib({n}) gave {r}, expected {expect}"));
            }
            t * 1e3
        })
        .skip(1)
        .collect()
}

fn main() {
    let mut args = Args::from_env();
    let imp: String = args.get("impl", String::new());
    let threads: usize = args.get("threads", 1);
    let n: u64 = args.get("n", 30);
    let samples: usize = args.get("samples", 7);
    args.finish();
    if n > 60 {
        herd_bench::fail("--n must be at most 60");
    }

    let (times, threads, bound) = match imp.as_str() {
        "seq" => (measure(n, samples, fib_seq), 1, false),
        "seq-calls" => (measure(n, samples, fib_seq_calls), 1, false),
        "herd" => {
            let (pool, bound) = herd_pool(threads);
            (pool.install(|| measure(n, samples, fib_herd)), threads, bound)
        }
        "rayon" => {
            let (pool, bound) = rayon_pool(threads);
            (pool.install(|| measure(n, samples, fib_rayon)), threads, bound)
        }
        other => herd_bench::fail(&format!("--impl: unknown {other:?} (seq, seq-calls, herd, rayon)")),
    };
    let (name, case) = match imp.split_once('-') {
        Some((name, variant)) => (name, format!("join,n={n},{variant}")),
        None => (imp.as_str(), format!("join,n={n}")),
    };
    let rec = Record::from_samples(BENCH, name, &case, threads, &times, "ms");
    let ns_per_call = rec.value * 1e6 / fib_calls(n) as f64;
    rec.bound(bound).with("result", fib_iter(n)).with("ns_per_call", ns_per_call).emit();
}
