//! Where `geqrf`'s time goes (ignored test, run by hand):
//! `QR_N=4000 QR_NB=128 QR_THREADS=2 cargo test --release -p herd-la --lib qr_phase_times -- --ignored --nocapture`.
//!
//! Prints the whole factorization's time on `QR_THREADS` participants and,
//! on one participant, the panels of its critical path (each panel's
//! update by the previous block, then its factorization) summed: the
//! critical path when the panels run on one participant (with more, their
//! block products are cut into pieces, which shortens it), and the pieces
//! of the first panel's recursion.

use std::time::Instant;

use super::block::Block;
use super::householder::{geqr2, panel, PANEL_LEAF};
use super::split::join_par;
use super::Qr;
use crate::{random_matrix, Op};

fn var(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
#[ignore = "timing, run by hand"]
fn qr_phase_times() {
    let (n, nb, threads) = (var("QR_N", 4000), var("QR_NB", 128), var("QR_THREADS", 2));
    let pool = herd::Pool::builder().num_threads(threads).build().expect("a pool");
    let one = herd::Pool::builder().num_threads(1).build().expect("a pool");
    let a = random_matrix(n, n, 7);
    for round in 0..2 {
        let mut qr = a.clone();
        let mut tau = vec![0.0; n];
        let t0 = Instant::now();
        pool.install(|| Qr::new().block_size(nb).geqrf(qr.as_mut(), &mut tau).unwrap());
        let whole = t0.elapsed().as_secs_f64();
        let flops = 4.0 / 3.0 * (n as f64).powi(3);
        println!(
            "round {round} n {n} nb {nb} threads {threads}: geqrf {whole:.4} s, {:.1} GFLOP/s",
            flops / whole / 1e9
        );
    }
    // The critical path on one participant: panel s's update by block s−1
    // and its factorization, s = 1…; leaves apart.
    let (mut path, mut leaves) = (0.0, 0.0);
    let mut s = 1;
    while s * nb < n {
        let rows = n - (s - 1) * nb;
        let w = nb.min(n - s * nb);
        let mut prev = random_matrix(rows, nb, s as u64);
        let mut t = vec![0.0; nb];
        let blk = one.install(|| panel(prev.as_mut(), &mut t));
        let mut next = random_matrix(rows, w, s as u64 + 1000);
        let mut tn = vec![0.0; w];
        let t0 = Instant::now();
        let _ = one.install(|| {
            blk.apply_left(Op::Trans, next.as_mut());
            panel(next.as_mut().split_at_row_mut(nb).1, &mut tn)
        });
        path += t0.elapsed().as_secs_f64();
        let mut leaf = random_matrix(rows - nb, PANEL_LEAF, 3);
        let t0 = Instant::now();
        geqr2(leaf.as_mut(), &mut tn[..PANEL_LEAF]);
        let _ = Block::from_panel(leaf.as_ref(), &tn[..PANEL_LEAF]);
        leaves += t0.elapsed().as_secs_f64() * (w / PANEL_LEAF) as f64;
        s += 1;
    }
    // The first panel alone (the longest) on one and on all participants.
    for round in 0..3 {
        for (name, p) in [("one", &one), ("all", &pool)] {
            let mut first = a.as_ref().subcols(0, nb).to_owned();
            let mut t = vec![0.0; nb];
            let t0 = Instant::now();
            let _ = p.install(|| panel(first.as_mut(), &mut t));
            println!("round {round} first panel {n} x {nb} on {name}: {:.5} s", t0.elapsed().as_secs_f64());
        }
    }
    // The pieces of the first panel's recursion, on one participant.
    one.install(|| {
        let time = |f: &mut dyn FnMut()| {
            let t0 = Instant::now();
            for _ in 0..5 {
                f();
            }
            t0.elapsed().as_secs_f64() / 5.0
        };
        let mut w = PANEL_LEAF;
        while w <= nb {
            let (mut x, mut y) = (random_matrix(n, w, 11), random_matrix(n - w, w, 12));
            let (mut t, mut t2) = (vec![0.0; w], vec![0.0; w]);
            let leaf = if w == PANEL_LEAF {
                let copies: Vec<_> = (0..5).map(|_| x.clone()).collect();
                let t0 = Instant::now();
                for mut c in copies {
                    geqr2(c.as_mut(), &mut t);
                }
                t0.elapsed().as_secs_f64() / 5.0
            } else {
                0.0
            };
            panel(x.as_mut(), &mut t);
            panel(y.as_mut(), &mut t2);
            let form = time(&mut || drop(Block::from_panel(x.as_ref(), &t)));
            let (first, second) = (Block::from_panel(x.as_ref(), &t), Block::from_panel(y.as_ref(), &t2));
            let joined = time(&mut || drop(join_par(&first, &second)));
            let mut c = random_matrix(n, w, 13);
            let apply = time(&mut || first.apply_left(Op::Trans, c.as_mut()));
            println!(
                "width {w}, {n} rows: geqr2 {leaf:.5} s, dlarft {form:.5}, join of two {joined:.5}, \
                 apply to {w} columns {apply:.5}"
            );
            w *= 2;
        }
    });
    println!(
        "critical path on one participant: {path:.4} s, of which leaves (geqr2 + dlarft) about {leaves:.4} s"
    );
}
