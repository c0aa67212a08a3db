//! GFLOP/s of herd's GEMM under several block shapes of `C`, against faer's
//! own sequential and parallel matmul, to choose and check `Blocking::Auto`:
//! `cargo run --release -p herd-la --example gemm_bench -- [N] [REPS] [K] [ROWSxCOLS ...]`
//!
//! Without `K` (or `K = 0`) the product is `C ← A·B`, all `n × n`; with it,
//! the ATLAS paper's rank-K update `C ← C − A·Bᵀ` (`A`, `B` `n × K`). Every
//! variant runs once per round, rounds rotating the first variant; medians.
//! The herd variants run on a pool of `HERD_NUM_THREADS` (default: every
//! core) participants.
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use herd_la::{gemm_flops, random_matrix, Blocking, Gemm, Op};
use std::time::Instant;

type Variant<'a> = (String, Box<dyn FnMut(&mut Mat<f64>) + 'a>);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).and_then(|s| s.parse::<usize>().ok());
    let n = arg(0).unwrap_or(2000);
    let reps = arg(1).unwrap_or(5);
    let rank = arg(2).filter(|&k| k > 0);
    let mut blocks: Vec<(usize, usize)> = args
        .iter()
        .skip(3)
        .filter_map(|s| s.split_once('x').and_then(|(r, c)| Some((r.parse().ok()?, c.parse().ok()?))))
        .collect();
    if blocks.is_empty() {
        blocks =
            vec![(n, n.div_ceil(2)), (n.div_ceil(2), n), (n.div_ceil(2), n.div_ceil(2)), (n, n.div_ceil(4))];
    }
    let pool = herd::PoolBuilder::from_env().and_then(|b| b.build()).expect("a herd pool");
    let threads = pool.num_threads();
    // C ← α·A·op(B) + β·C: (k, op(B), α, β, accumulation) of the two forms.
    let (k, op_b, alpha, beta, accum) = match rank {
        Some(k) => (k, Op::Trans, -1.0, 1.0, Accum::Add),
        None => (n, Op::NoTrans, 1.0, 0.0, Accum::Replace),
    };
    let a = random_matrix(n, k, 1);
    let b = if rank.is_some() { random_matrix(n, k, 2) } else { random_matrix(k, n, 2) };
    let b_op = if rank.is_some() { b.transpose() } else { b.as_ref() };
    let a_ref = a.as_ref();
    let faer_with = |par: Par| move |c: &mut Mat<f64>| matmul(c.as_mut(), accum, a_ref, b_op, alpha, par);
    let mut variants: Vec<Variant<'_>> = vec![
        ("faer Par::Seq".into(), Box::new(faer_with(Par::Seq))),
        (format!("faer Par::rayon({threads})"), Box::new(faer_with(Par::rayon(threads)))),
    ];
    for blocking in std::iter::once(Blocking::Auto)
        .chain(blocks.into_iter().map(|(rows, cols)| Blocking::Fixed { rows, cols }))
    {
        let (pool, a, b) = (&pool, &a, &b);
        variants.push((
            format!("herd {blocking:?}"),
            Box::new(move |c| {
                pool.install(|| {
                    Gemm::new(Op::NoTrans, op_b, alpha, beta).blocking(blocking).run(
                        a.as_ref(),
                        b.as_ref(),
                        c.as_mut(),
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
    let form = rank.map_or("C ← A·B".to_string(), |k| format!("C ← C − A·Bᵀ, k = {k}"));
    println!("n = {n}, {form}, {threads} herd participants, median of {reps}");
    for ((name, _), t) in variants.iter().zip(&mut times) {
        t.sort_by(f64::total_cmp);
        let med = t[t.len() / 2];
        println!("{name:<48} {med:>8.4} s {:>7.1} GFLOP/s", gemm_flops(n, n, k) / med / 1e9);
    }
}
