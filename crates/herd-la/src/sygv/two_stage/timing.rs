//! The measurement harness behind BENCHMARKS.md "(session 27)": the one-
//! and two-stage reductions and their back-transformations phase by phase
//! (the phases are crate-private, so no example can time them). Ignored by
//! default; run with
//!
//! ```text
//! PHASES_N=2000,3000 PHASES_NB=32,48 PHASES_THREADS=1 PHASES_CLOCK=cpu \
//!   cargo test --release -p herd-la --lib phase_times -- --ignored --nocapture
//! ```
//!
//! `PHASES_CLOCK=cpu` sums the CPU time of the process's threads
//! (`/proc/self/task/*/schedstat`, nanoseconds), steadier than wall time on
//! a shared machine; anything else times the wall clock. Each run checks
//! that the `Q` it formed is orthogonal (`‖Qᵀ·(Q·x) − x‖ / (n·‖x‖·ε)` for a
//! random `x`, below 30), so a fast wrong phase fails.

use std::time::Instant;

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, Mat, Par};

use super::back::apply_q2;
use super::band;
use super::chase::{chase, Band};
use crate::rng::SplitMix64;
use crate::sygv::tridiag;
use crate::{ormqr, random_matrix, Op, Side};

/// A comma-separated list of orders from the environment.
fn list(var: &str, default: &str) -> Vec<usize> {
    std::env::var(var)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .map(|x| x.trim().parse().expect("a number"))
        .collect()
}

/// Seconds on the chosen clock since an arbitrary origin.
struct Clock {
    cpu: bool,
    start: Instant,
}

impl Clock {
    fn now(&self) -> f64 {
        if !self.cpu {
            return self.start.elapsed().as_secs_f64();
        }
        let mut ns = 0u64;
        for task in std::fs::read_dir("/proc/self/task").expect("procfs") {
            let path = task.expect("a task").path().join("schedstat");
            if let Ok(text) = std::fs::read_to_string(path) {
                ns += text.split_whitespace().next().and_then(|x| x.parse().ok()).unwrap_or(0);
            }
        }
        ns as f64 * 1e-9
    }
}

/// `‖Qᵀ·(Q·x) − x‖ / (n·‖x‖·ε)` for a random `x`.
fn orthogonality(q: &Mat<f64>) -> f64 {
    let n = q.nrows();
    let mut rng = SplitMix64::new(9);
    let x = Col::from_fn(n, |_| rng.next_signed());
    let (mut qx, mut back) = (Mat::zeros(n, 1), Mat::zeros(n, 1));
    matmul(qx.as_mut(), Accum::Replace, q.as_ref(), x.as_mat(), 1.0, Par::Seq);
    matmul(back.as_mut(), Accum::Replace, q.transpose(), qx.as_ref(), 1.0, Par::Seq);
    (back - x.as_mat()).norm_l2() / (n as f64 * x.norm_l2() * f64::EPSILON)
}

#[test]
#[ignore = "a measurement harness: run with --ignored --nocapture"]
fn phase_times() {
    let (ns, nbs) = (list("PHASES_N", "2000"), list("PHASES_NB", "48"));
    let threads = list("PHASES_THREADS", "2")[0];
    let clock = Clock { cpu: std::env::var("PHASES_CLOCK").is_ok_and(|c| c == "cpu"), start: Instant::now() };
    let pool = herd::Pool::builder().num_threads(threads).build().expect("a pool");
    for &n in &ns {
        let r = random_matrix(n, n, 5);
        let a = Mat::from_fn(n, n, |i, j| r[(i, j)] + r[(j, i)]);
        let (mut d, mut e) = (vec![0.0; n], vec![0.0; n - 1]);
        for round in 0..2 {
            let (mut c, mut q, mut tau) = (a.clone(), Mat::<f64>::identity(n, n), vec![0.0; n - 1]);
            let t0 = clock.now();
            pool.install(|| tridiag::reduce(c.as_mut(), &mut d, &mut e, &mut tau));
            let t1 = clock.now();
            pool.install(|| {
                let v = c.as_ref().submatrix(1, 0, n - 1, n - 1);
                ormqr(Side::Left, Op::NoTrans, v, &tau, q.as_mut().subrows_mut(1, n - 1)).unwrap()
            });
            let t2 = clock.now();
            assert!(orthogonality(&q) < 30.0);
            println!(
                "n {n} threads {threads} round {round} one-stage: reduce {:.3} ormqr {:.3} total {:.3}",
                t1 - t0,
                t2 - t1,
                t2 - t0
            );
            for &nb in &nbs {
                let (mut c, mut q, mut tau1) = (a.clone(), Mat::<f64>::identity(n, n), vec![0.0; n - nb]);
                let t0 = clock.now();
                pool.install(|| band::reduce(c.as_mut(), nb, &mut tau1));
                let t1 = clock.now();
                let sweeps = chase(Band::from_lower(c.as_ref(), nb), &mut d, &mut e);
                let t2 = clock.now();
                pool.install(|| apply_q2(&sweeps, q.as_mut()));
                let t3 = clock.now();
                pool.install(|| {
                    let v = c.as_ref().submatrix(nb, 0, n - nb, n - nb);
                    ormqr(Side::Left, Op::NoTrans, v, &tau1, q.as_mut().subrows_mut(nb, n - nb)).unwrap()
                });
                let t4 = clock.now();
                assert!(orthogonality(&q) < 30.0);
                println!(
                    "n {n} threads {threads} round {round} two-stage nb {nb}: band {:.3} chase {:.3} Q2 {:.3} Q1 {:.3} total {:.3}",
                    t1 - t0,
                    t2 - t1,
                    t3 - t2,
                    t4 - t3,
                    t4 - t0
                );
            }
        }
    }
}
