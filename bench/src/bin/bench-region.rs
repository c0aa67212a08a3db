//! Empty fork-join region overhead, EPCC style (see `herd_bench::epcc_overhead_us`).
//!
//! usage: bench-region --impl IMPL [--threads 2] [--regions 20000] [--samples 7]
//!
//! IMPL:
//! * `herd` — `pool.broadcast(|_| ())` called from the main thread;
//! * `herd-install` — the same calls made inside `pool.install`, so the
//!   caller already is the pool's master;
//! * `rayon` — `ThreadPool::broadcast(|_| ())` from the main thread (not a
//!   pool worker);
//! * `rayon-install` — the same calls made inside `pool.install`, from a
//!   pool worker;
//! * `pingpong` — no runtime: the hardware floor of any fork-join, one
//!   cache-line round trip between two spinning threads bound to CPUs 0 and 1
//!   (the "region" is: the caller bumps a shared counter, the other thread
//!   sees it and bumps it again, the caller sees that).
//!
//! Prints one record: the median over samples, in µs per region.

use herd_bench::{current_cpu, epcc_overhead_us, herd_pool, rayon_pool, wrong, Args, Record};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const BENCH: &str = "region";
/// Regions run by the (untimed) verification pass.
const CHECK_REGIONS: usize = 1000;

fn main() {
    let mut args = Args::from_env();
    let imp: String = args.get("impl", String::new());
    let threads: usize = args.get("threads", 2);
    let regions: u64 = args.get("regions", 20_000);
    let samples: usize = args.get("samples", 7);
    args.finish();

    let (samples, bound) = match imp.as_str() {
        "herd" | "herd-install" => {
            let (pool, bound) = herd_pool(threads);
            let region = || {
                black_box(pool.broadcast(|_| ()));
            };
            let v = if imp == "herd" {
                epcc_overhead_us(regions, samples, region)
            } else {
                pool.install(|| epcc_overhead_us(regions, samples, region))
            };
            for _ in 0..CHECK_REGIONS {
                check(&pool.broadcast(|ctx| (ctx.index(), current_cpu())), threads);
            }
            (v, bound)
        }
        "rayon" | "rayon-install" => {
            let (pool, bound) = rayon_pool(threads);
            let region = || {
                black_box(pool.broadcast(|_| ()));
            };
            let v = if imp == "rayon" {
                epcc_overhead_us(regions, samples, region)
            } else {
                pool.install(|| epcc_overhead_us(regions, samples, region))
            };
            for _ in 0..CHECK_REGIONS {
                check(&pool.broadcast(|ctx| (ctx.index(), current_cpu())), threads);
            }
            (v, bound)
        }
        "pingpong" => pingpong(regions, samples),
        other => herd_bench::fail(&format!(
            "--impl: unknown {other:?} (herd, herd-install, rayon, rayon-install, pingpong)"
        )),
    };
    let (name, case) = match imp.split_once('-') {
        Some(split) => split,
        None if imp == "pingpong" => (imp.as_str(), "roundtrip"),
        None => (imp.as_str(), "broadcast"),
    };
    Record::from_samples(BENCH, name, case, threads, &samples, "us")
        .bound(bound)
        .with("regions", regions)
        .emit();
}

/// Every participant ran the region exactly once (binding is checked when
/// the pool is built).
fn check(ran: &[(usize, i32)], threads: usize) {
    if ran.len() != threads || ran.iter().enumerate().any(|(i, &(idx, _))| idx != i) {
        wrong(BENCH, &format!("region ran as {ran:?}, expected indices 0..{threads}"));
    }
}

/// A counter alone on its cache line(s).
#[repr(align(128))]
struct Line(AtomicU64);

/// Round trips between the calling thread (bound to CPU 0) and a spinning
/// partner (CPU 1); returns the samples and whether both were on distinct CPUs.
fn pingpong(regions: u64, samples: usize) -> (Vec<f64>, bool) {
    let line = Line(AtomicU64::new(0));
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let partner = s.spawn(|| {
            let ok = herd_bench::bind_current_thread(1).is_ok();
            let cpu = current_cpu();
            let mut answered = 0u64;
            loop {
                let v = line.0.load(Ordering::Acquire);
                if v % 2 == 1 {
                    line.0.store(v + 1, Ordering::Release);
                    answered += 1;
                } else if stop.load(Ordering::Relaxed) {
                    return (answered, ok, cpu);
                } else {
                    std::hint::spin_loop();
                }
            }
        });
        let ok = herd_bench::bind_current_thread(0).is_ok();
        let mut asked = 0u64;
        let v = epcc_overhead_us(regions, samples, || {
            let v = line.0.load(Ordering::Relaxed);
            line.0.store(v + 1, Ordering::Release);
            while line.0.load(Ordering::Acquire) != v + 2 {
                std::hint::spin_loop();
            }
            asked += 1;
        });
        stop.store(true, Ordering::Relaxed);
        let (answered, partner_ok, partner_cpu) = partner.join().expect("partner thread");
        if answered != asked || line.0.load(Ordering::Relaxed) != 2 * asked {
            wrong(BENCH, &format!("ping-pong lost a message: {asked} sent, {answered} answered"));
        }
        (v, ok && partner_ok && current_cpu() != partner_cpu)
    })
}
