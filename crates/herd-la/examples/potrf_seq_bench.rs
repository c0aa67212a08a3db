//! Single-core GFLOP/s of the sequential tiled Cholesky vs faer's `llt` with `Par::Seq`.
//!
//! `cargo run --release -p herd-la --example potrf_seq_bench [--features openblas] -- [N] [NB...]`
use std::time::Instant;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::Par;
use herd_la::{potrf_flops, potrf_seq_tiled_with, random_spd, residual, Backend, Tile, TiledMatrix};

fn best_of<F: FnMut() -> f64>(reps: usize, mut f: F) -> f64 {
    (0..reps).map(|_| f()).fold(f64::INFINITY, f64::min)
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|s| s.parse().ok()).collect();
    let n = args.first().copied().unwrap_or(2000);
    let nbs: Vec<usize> = if args.len() > 1 { args[1..].to_vec() } else { vec![128, 192, 256, 384] };
    let reps = 5;
    let a = random_spd(n, 1);
    let gf = |t: f64| potrf_flops(n) / t / 1e9;

    let mut l = a.clone();
    let t = best_of(reps, || {
        l.copy_from(&a);
        let mut mem = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, Par::Seq, Default::default()));
        let start = Instant::now();
        cholesky_in_place(
            l.as_mut(),
            Default::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .unwrap();
        start.elapsed().as_secs_f64()
    });
    let r = residual(a.as_ref(), l.as_ref()).unwrap();
    println!("faer llt Par::Seq      n={n}          {:7.3} s  {:6.2} GFLOP/s  residual {r:.3}", t, gf(t));

    #[allow(unused_mut)]
    let mut backends = vec![Backend::Faer];
    #[cfg(feature = "openblas")]
    backends.push(Backend::OpenBlas);
    for backend in backends {
        for &nb in &nbs {
            let mut out = None;
            let t = best_of(reps, || {
                let mut tm = TiledMatrix::from_faer(a.as_ref(), nb).unwrap();
                let start = Instant::now();
                potrf_seq_tiled_with(&mut tm, backend).unwrap();
                let t = start.elapsed().as_secs_f64();
                out = Some(tm);
                t
            });
            let l = out.map(|tm| tm.to_faer()).unwrap();
            let r = residual(a.as_ref(), l.as_ref()).unwrap();
            let (ta, tb) =
                (Tile::from_faer(a.submatrix(0, 0, nb, nb)), Tile::from_faer(a.submatrix(nb, 0, nb, nb)));
            let mut tc = Tile::from_faer(a.submatrix(0, nb, nb, nb));
            let calls = 20;
            let tg = best_of(reps, || {
                let start = Instant::now();
                for _ in 0..calls {
                    backend.gemm(&ta, &tb, &mut tc).unwrap();
                }
                start.elapsed().as_secs_f64()
            });
            let gemm_rate = 2.0 * (nb as f64).powi(3) * calls as f64 / tg / 1e9;
            println!(
                "tiled seq {backend:<8?}     n={n} nb={nb:<4} {:7.3} s  {:6.2} GFLOP/s  residual {r:.3}  (tile GEMM {gemm_rate:.1} GFLOP/s)",
                t,
                gf(t)
            );
        }
    }
}
