//! Times `herd_la::sygv` (A·x = λ·B·x, all eigenpairs) alone, without the
//! peers `herd la sygv` runs (OpenBLAS's `dsygv` takes minutes at n = 4000):
//! `sygv_bench N THREADS REPS [values]` prints the minimum and median
//! seconds (`values`: `herd_la::sygv_values`, the eigenvalues only). Build
//! it in two trees to compare two versions on the same load, alternately.

use herd_la::{random_matrix, random_spd, sygv, sygv_values};
use std::time::Instant;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let values = args.last().is_some_and(|a| a == "values");
    if values {
        args.pop();
    }
    let args: Vec<usize> = args.iter().map(|a| a.parse().expect("a number")).collect();
    let [n, threads, reps] = args[..] else {
        eprintln!("usage: sygv_bench N THREADS REPS [values]");
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
        let solve = if values { sygv_values } else { sygv };
        pool.install(|| solve(a.as_mut(), b.as_mut(), &mut w)).expect("B is positive definite");
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let job = if values { "sygv_values" } else { "sygv" };
    println!("{job} n={n} threads={threads}: min {:.4} s, median {:.4} s", times[0], times[times.len() / 2]);
}
