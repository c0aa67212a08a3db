//! The pool's wake regime after idleness: every worker starts asleep, then
//! a burst of back-to-back regions must reach the fast regime (workers
//! spinning between regions, no wake-up system calls), not stay slow.
//! One test per binary, so that no other test competes for the cores.

use herd::{Pool, WaitPolicy};
use std::time::Duration;

#[test]
fn burst_after_idle_reaches_the_spinning_regime() {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(4);
    let pool = Pool::builder()
        .num_threads(threads)
        .wait(WaitPolicy::Spin(Duration::from_micros(200)))
        .build()
        .unwrap();
    // Workers fall asleep.
    std::thread::sleep(Duration::from_millis(50));
    pool.reset_stats();
    let burst = 4000u64;
    let mut late_wakes = 0;
    for r in 0..burst {
        pool.broadcast(|_| std::hint::black_box(r));
        if r == burst / 2 {
            late_wakes = pool.stats().iter().map(|s| s.wakes).sum::<u64>();
        }
    }
    let stats = pool.stats();
    let total: u64 = stats.iter().map(|s| s.wakes).sum();
    let second_half = total - late_wakes;
    // The first regions wake the sleepers; after that, back-to-back regions
    // find them spinning. Allow a few wake-ups for preemption on a shared
    // machine (a descheduled worker may time out its spin), not one per
    // region.
    assert!(
        second_half * 50 <= burst / 2,
        "{second_half} wake-ups in the last {} back-to-back regions: the pool stayed in the slow regime",
        burst / 2
    );
}
