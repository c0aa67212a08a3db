//! Single-core GFLOP/s of the four tile kernels, per backend, for tile sizes NB:
//! `OPENBLAS_CORETYPE=SkylakeX cargo run --release -p herd-la --example kernels_bench [--features openblas] -- [NB...]`
//!
//! The tiled Cholesky's work is almost all GEMM (`C -= A·Bᵀ`), so the GEMM column bounds what
//! a backend lets the factorization reach per core. `Herd` is faer's POTRF and TRSM with herd's
//! own GEMM and SYRK (its packed product where the CPU has AVX-512F or AVX2 and the tile is at
//! least 320 wide, else faer's).
use herd_la::{random_spd, Backend, Tile};
use std::time::Instant;

fn best_of<F: FnMut() -> f64>(reps: usize, mut f: F) -> f64 {
    (0..reps).map(|_| f()).fold(f64::INFINITY, f64::min)
}

fn tile(nb: usize, seed: u64) -> Tile {
    Tile::from_faer(random_spd(nb, seed).as_ref())
}

fn main() {
    let nbs: Vec<usize> = std::env::args().skip(1).filter_map(|s| s.parse().ok()).collect();
    let nbs = if nbs.is_empty() { vec![192, 256, 320, 384] } else { nbs };
    #[allow(unused_mut)]
    let mut backends = vec![Backend::Herd, Backend::Faer];
    #[cfg(feature = "openblas")]
    backends.push(Backend::OpenBlas);
    println!("{:>10} {:>5} {:>8} {:>8} {:>8} {:>8}", "backend", "nb", "gemm", "syrk", "trsm", "potrf");
    for nb in nbs {
        let n3 = (nb * nb * nb) as f64;
        for &b in &backends {
            let (a, bm, spd) = (tile(nb, 1), tile(nb, 2), tile(nb, 3));
            let reps = 20;
            let mut c = tile(nb, 4);
            let gemm = best_of(reps, || {
                let s = Instant::now();
                b.gemm(&a, &bm, &mut c).unwrap();
                s.elapsed().as_secs_f64()
            });
            let syrk = best_of(reps, || {
                let s = Instant::now();
                b.syrk(&a, &mut c).unwrap();
                s.elapsed().as_secs_f64()
            });
            let mut l = spd.clone();
            b.potrf(&mut l).unwrap();
            let trsm = best_of(reps, || {
                let mut x = a.clone();
                let s = Instant::now();
                b.trsm(&l, &mut x).unwrap();
                s.elapsed().as_secs_f64()
            });
            let potrf = best_of(reps, || {
                let mut x = spd.clone();
                let s = Instant::now();
                b.potrf(&mut x).unwrap();
                s.elapsed().as_secs_f64()
            });
            println!(
                "{:>10} {nb:>5} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
                format!("{b:?}"),
                2.0 * n3 / gemm / 1e9,
                n3 / syrk / 1e9,
                n3 / trsm / 1e9,
                n3 / 3.0 / potrf / 1e9
            );
        }
    }
}
