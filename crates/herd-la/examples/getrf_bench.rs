//! Times `herd_la::Getrf` on one shape with both schedules, alternating
//! (`join`, `dataflow`, `join`, ...) so that both see the same load:
//! `getrf_bench M N NB THREADS REPS` prints each schedule's minimum and
//! median seconds and GFLOP/s (LAPACK's flop count). An `M × NB` shape times
//! one panel factorization alone.

use herd_la::{getrf_flops, random_matrix, Getrf, LuSchedule};
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let [m, n, nb, threads, reps] = args[..] else {
        eprintln!("usage: getrf_bench M N NB THREADS REPS");
        std::process::exit(2);
    };
    let pool = herd::Pool::builder().num_threads(threads).build().expect("a pool");
    let a = random_matrix(m, n, 42);
    let schedules = [LuSchedule::Join, LuSchedule::Dataflow];
    let mut times = vec![Vec::new(); schedules.len()];
    for _ in 0..reps {
        for (s, &schedule) in schedules.iter().enumerate() {
            let mut lu = a.clone();
            let mut ipiv = vec![0; m.min(n)];
            let start = Instant::now();
            pool.install(|| Getrf::new().block(nb).schedule(schedule).run(lu.as_mut(), &mut ipiv))
                .expect("valid");
            times[s].push(start.elapsed().as_secs_f64());
        }
    }
    let f = getrf_flops(m, n) / 1e9;
    for (s, t) in schedules.iter().zip(&mut times) {
        t.sort_by(f64::total_cmp);
        let (min, med) = (t[0], t[t.len() / 2]);
        println!(
            "{m}x{n} nb={nb} threads={threads} {s:?}: min {min:.4} s ({:.1} GFLOP/s), median {med:.4} s ({:.1})",
            f / min,
            f / med
        );
    }
}
