//! Times `herd_la::Qr::geqrf` on one shape: `qr_bench M N NB THREADS REPS`
//! prints the minimum and median seconds and GFLOP/s (LAPACK's flop count,
//! `2mn² − 2n³/3` for `m ≥ n`). An `M × NB` shape times one panel
//! factorization alone (the recursive panel with its block products on the
//! pool). For A/B runs of two builds, alternate the two binaries.

use herd_la::{random_matrix, Qr};
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let [m, n, nb, threads, reps] = args[..] else {
        eprintln!("usage: qr_bench M N NB THREADS REPS");
        std::process::exit(2);
    };
    let pool = herd::Pool::builder().num_threads(threads).build().expect("a pool");
    let a = random_matrix(m, n, 42);
    let mut times = Vec::new();
    for _ in 0..reps {
        let mut qr = a.clone();
        let mut tau = vec![0.0; m.min(n)];
        let start = Instant::now();
        pool.install(|| Qr::new().block_size(nb).geqrf(qr.as_mut(), &mut tau)).expect("valid");
        times.push(start.elapsed().as_secs_f64());
    }
    let (mf, nf) = (m as f64, n as f64);
    let (k, big) = if m >= n { (nf, mf) } else { (mf, nf) };
    let flops = (2.0 * big * k * k - 2.0 * k * k * k / 3.0) / 1e9;
    times.sort_by(f64::total_cmp);
    let (min, med) = (times[0], times[times.len() / 2]);
    println!(
        "{m}x{n} nb={nb} threads={threads}: min {min:.5} s ({:.1} GFLOP/s), median {med:.5} s ({:.1})",
        flops / min,
        flops / med
    );
}
