//! Times `herd_la::Getrf` on one shape: `getrf_bench M N NB THREADS REPS`
//! prints the minimum and median seconds and GFLOP/s (LAPACK's flop count).
//! An `M × NB` shape times one panel factorization alone.

use herd_la::{getrf_flops, random_matrix, Getrf};
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let [m, n, nb, threads, reps] = args[..] else {
        eprintln!("usage: getrf_bench M N NB THREADS REPS");
        std::process::exit(2);
    };
    let pool = herd::Pool::builder().num_threads(threads).build().expect("a pool");
    let a = random_matrix(m, n, 42);
    let mut times = Vec::new();
    for _ in 0..reps {
        let mut lu = a.clone();
        let mut ipiv = vec![0; m.min(n)];
        let start = Instant::now();
        pool.install(|| Getrf::new().block(nb).run(lu.as_mut(), &mut ipiv)).expect("valid");
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let (min, med) = (times[0], times[times.len() / 2]);
    let f = getrf_flops(m, n) / 1e9;
    println!(
        "{m}x{n} nb={nb} threads={threads}: min {min:.4} s ({:.1} GFLOP/s), median {med:.4} s ({:.1})",
        f / min,
        f / med
    );
}
