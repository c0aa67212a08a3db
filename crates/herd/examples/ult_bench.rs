//! Lightweight-thread costs: spawn+join latency and a FEB ping-pong between
//! two lightweight threads (medians of 5 runs).
//!
//! `cargo run --release -p herd --example ult_bench [threads]`

use herd::{ult, Bind, Feb, Pool};
use std::sync::Arc;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ns_per(n: usize, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let threads: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let pool = Pool::builder().num_threads(threads).bind(Bind::False).build().expect("pool");
    const N: usize = 100_000;
    pool.install(|| {
        // Warm the stack pool and the allocator.
        for _ in 0..1000 {
            ult::spawn(|| 1).join().unwrap();
        }
        let one_by_one = median(
            (0..5)
                .map(|_| {
                    ns_per(N, || {
                        for i in 0..N {
                            std::hint::black_box(ult::spawn(move || i).join().unwrap());
                        }
                    })
                })
                .collect(),
        );
        let batched = median(
            (0..5)
                .map(|_| {
                    ns_per(N, || {
                        let hs: Vec<_> = (0..N).map(|i| ult::spawn(move || i)).collect();
                        for h in hs {
                            std::hint::black_box(h.join().unwrap());
                        }
                    })
                })
                .collect(),
        );
        const ROUNDS: usize = 200_000;
        let ping_pong = median(
            (0..5)
                .map(|_| {
                    let (a, b) = (Arc::new(Feb::new_empty(0usize)), Arc::new(Feb::new_empty(0usize)));
                    ns_per(ROUNDS, || {
                        let (a2, b2) = (a.clone(), b.clone());
                        let pong = ult::spawn(move || {
                            for _ in 0..ROUNDS {
                                let v = a2.read_fe();
                                b2.write_ef(v + 1);
                            }
                        });
                        let (a3, b3) = (a.clone(), b.clone());
                        let ping = ult::spawn(move || {
                            let mut v = 0;
                            for _ in 0..ROUNDS {
                                a3.write_ef(v);
                                v = b3.read_fe();
                            }
                            v
                        });
                        assert_eq!(ping.join().unwrap(), ROUNDS);
                        pong.join().unwrap();
                    })
                })
                .collect(),
        );
        println!("participants: {threads}");
        println!("spawn+join, one at a time: {one_by_one:.0} ns");
        println!("spawn+join, {N} spawned then joined: {batched:.0} ns per thread");
        println!("FEB ping-pong between two ULTs: {ping_pong:.0} ns per round trip");
    });
}
