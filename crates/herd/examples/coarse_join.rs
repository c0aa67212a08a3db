//! A join tree of coarse leaves: `coarse_join LEAVES MS ROUNDS` splits
//! `LEAVES` leaves in halves with `herd::join`, each leaf sleeping `MS`
//! milliseconds, and prints each round's time and how many participants ran
//! a leaf. Sleeping leaves need no cores, so a pool larger than the machine
//! (`HERD_NUM_THREADS=16` with `HERD_TOPOLOGY="pack:1 l3:1 l2:16 core:1
//! pu:1"`) shows how fast the tree's pieces reach idle participants: with
//! every leaf started at once a round takes one leaf's time. The pool's
//! participants are left to fall asleep between rounds.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn tree(leaves: usize, ms: u64, ran: &Mutex<HashMap<usize, usize>>) {
    if leaves == 1 {
        std::thread::sleep(Duration::from_millis(ms));
        *ran.lock().unwrap().entry(herd::current_thread_index().unwrap_or(usize::MAX)).or_default() += 1;
        return;
    }
    let half = leaves / 2;
    herd::join(|| tree(half, ms, ran), || tree(leaves - half, ms, ran));
}

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("a number")).collect();
    let [leaves, ms, rounds] = args[..] else {
        eprintln!("usage: coarse_join LEAVES MS ROUNDS");
        std::process::exit(2);
    };
    // The global pool, configured by the `HERD_*` variables.
    println!("{} participants, {leaves} leaves of {ms} ms", herd::current_num_threads());
    for _ in 0..rounds {
        std::thread::sleep(Duration::from_millis(200));
        let ran = Mutex::new(HashMap::new());
        let start = Instant::now();
        tree(leaves as usize, ms, &ran);
        let t = start.elapsed().as_secs_f64() * 1e3;
        let ran = ran.into_inner().unwrap();
        let most = ran.values().copied().max().unwrap_or(0);
        println!("{t:.1} ms on {} participants (at most {most} leaves on one)", ran.len());
    }
}
