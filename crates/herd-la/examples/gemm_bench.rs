//! GFLOP/s of `C ← A·B` (n×n) for herd's GEMM under several block shapes of
//! `C`, against faer's own sequential and parallel matmul, to choose and
//! check `Blocking::Auto`:
//! `cargo run --release -p herd-la --example gemm_bench -- [N] [REPS] [ROWSxCOLS ...]`
//!
//! Every variant runs once per round, rounds rotating the first variant;
//! medians. The herd variants run on a pool of `HERD_NUM_THREADS` (default:
//! every core) participants.
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use herd_la::{gemm_flops, gemm_with, random_matrix, Blocking, Op};
use std::time::Instant;

type Variant<'a> = (String, Box<dyn FnMut(&mut Mat<f64>) + 'a>);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let reps: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let mut blocks: Vec<(usize, usize)> = args
        .iter()
        .skip(2)
        .filter_map(|s| s.split_once('x').and_then(|(r, c)| Some((r.parse().ok()?, c.parse().ok()?))))
        .collect();
    if blocks.is_empty() {
        blocks =
            vec![(n, n.div_ceil(2)), (n.div_ceil(2), n), (n.div_ceil(2), n.div_ceil(2)), (n, n.div_ceil(4))];
    }
    let pool = herd::PoolBuilder::from_env().and_then(|b| b.build()).expect("a herd pool");
    let threads = pool.num_threads();
    let (a, b) = (random_matrix(n, n, 1), random_matrix(n, n, 2));
    let mut variants: Vec<Variant<'_>> = vec![
        ("faer Par::Seq".into(), Box::new(|c| matmul(c.as_mut(), Accum::Replace, &a, &b, 1.0, Par::Seq))),
        (
            format!("faer Par::rayon({threads})"),
            Box::new(|c| matmul(c.as_mut(), Accum::Replace, &a, &b, 1.0, Par::rayon(threads))),
        ),
    ];
    for blocking in std::iter::once(Blocking::Auto)
        .chain(blocks.into_iter().map(|(rows, cols)| Blocking::Fixed { rows, cols }))
    {
        let (pool, a, b) = (&pool, &a, &b);
        variants.push((
            format!("herd {blocking:?}"),
            Box::new(move |c| {
                pool.install(|| {
                    gemm_with(
                        Op::NoTrans,
                        Op::NoTrans,
                        1.0,
                        a.as_ref(),
                        b.as_ref(),
                        0.0,
                        c.as_mut(),
                        blocking,
                    )
                })
                .expect("valid")
            }),
        ));
    }
    let mut c = Mat::zeros(n, n);
    let mut times = vec![Vec::new(); variants.len()];
    for rep in 0..reps {
        for turn in 0..variants.len() {
            let i = (rep + turn) % variants.len();
            c.fill(0.0);
            let start = Instant::now();
            (variants[i].1)(&mut c);
            times[i].push(start.elapsed().as_secs_f64());
        }
    }
    println!("n = {n}, {threads} herd participants, median of {reps}");
    for ((name, _), t) in variants.iter().zip(&mut times) {
        t.sort_by(f64::total_cmp);
        let med = t[t.len() / 2];
        println!("{name:<48} {med:>8.4} s {:>7.1} GFLOP/s", gemm_flops(n, n, n) / med / 1e9);
    }
}
