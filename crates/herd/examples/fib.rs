//! Recursive Fibonacci with a `join` at every level (no cutoff), on 1 and on
//! all participants, against the plain sequential function; with the
//! scheduling counters of one run (jobs run, stolen, failed steals, idle).
//!
//! `cargo run --release -p herd --example fib -- 30`

use std::hint::black_box;
use std::time::Instant;

fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = herd::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn best_of<R>(reps: usize, mut f: impl FnMut() -> R) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() -> Result<(), herd::Error> {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(30);
    let seq = best_of(5, || fib_seq(black_box(n)));
    println!("sequential fib({n}) = {}: {:.2} ms", fib_seq(n), seq * 1e3);
    let max = herd::Pool::builder().build()?.num_threads();
    for threads in 1..=max {
        let pool = herd::Pool::builder().num_threads(threads).build()?;
        let t = best_of(5, || pool.install(|| fib(black_box(n))));
        pool.reset_stats();
        pool.install(|| fib(black_box(n)));
        let st = pool.stats();
        let sum = |f: fn(&herd::WorkerStats) -> u64| st.iter().map(f).sum::<u64>();
        println!(
            "herd fib({n}), {threads} participant(s): {:.2} ms ({:.2}x sequential); one run: {} jobs run, {} stolen, {} failed steals, idle {:.2} ms",
            t * 1e3,
            t / seq,
            sum(|s| s.tasks),
            sum(|s| s.local_steals + s.stolen_tasks),
            sum(|s| s.failed_steals),
            sum(|s| s.idle_ns) as f64 / 1e6
        );
    }
    Ok(())
}
