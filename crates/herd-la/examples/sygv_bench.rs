//! Times `herd_la::sygv` (A·x = λ·B·x, all eigenpairs) alone, without the
//! peers `herd la sygv` runs (OpenBLAS's `dsygv` takes minutes at n = 4000):
//! `sygv_bench N THREADS REPS` prints the minimum and median seconds. Build
//! it in two trees to compare two versions on the same load, alternately.

use herd_la::{random_matrix, random_spd, sygv};
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let [n, threads, reps] = args[..] else {
        eprintln!("usage: sygv_bench N THREADS REPS");
        std::process::exit(2);
    };
    let pool = herd::Pool::builder().num_threads(threads).build().expect("a pool");
    // As `herd la sygv`: a random symmetric A, entries in (−2, 2), and an SPD B.
    let r = random_matrix(n, n, 3);
    let a0 = faer::Mat::from_fn(n, n, |i, j| 2.0 * r[(i.max(j), i.min(j))]);
    let b0 = random_spd(n, 7);
    let mut times = Vec::new();
    for _ in 0..reps {
        let (mut a, mut b, mut w) = (a0.clone(), b0.clone(), vec![0.0; n]);
        let start = Instant::now();
        pool.install(|| sygv(a.as_mut(), b.as_mut(), &mut w)).expect("B is positive definite");
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!("sygv n={n} threads={threads}: min {:.4} s, median {:.4} s", times[0], times[times.len() / 2]);
}
