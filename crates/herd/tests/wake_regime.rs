//! The pool's wake regime after idleness: every worker starts asleep, then
//! a burst of back-to-back regions must reach the fast regime (workers
//! spinning between regions, no wake-up system calls), not stay slow.
//! The tests of this binary run one at a time, so that they do not compete
//! for the cores.

use herd::{Pool, WaitPolicy};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Up to four participants (the machine's cores) with the default 200 µs
/// spin window.
fn spinning_pool() -> Pool {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(4);
    Pool::builder().num_threads(threads).wait(WaitPolicy::Spin(Duration::from_micros(200))).build().unwrap()
}

#[test]
fn burst_after_idle_reaches_the_spinning_regime() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let pool = spinning_pool();
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

/// Regions separated by 400 µs of serial work, with a 200 µs spin window:
/// a fixed window would let every worker fall asleep before each region
/// (a wake-up per worker per region, for ever); the adaptive window learns
/// the gap after the first sleeps and the workers stay awake.
#[test]
fn regions_slightly_further_apart_than_the_window_stop_waking() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let pool = spinning_pool();
    let serial = |d: Duration| {
        let t = Instant::now();
        while t.elapsed() < d {
            std::hint::spin_loop();
        }
    };
    let regions = 400u64;
    let mut wakes_at_half = 0;
    pool.reset_stats();
    for r in 0..regions {
        pool.broadcast(|_| std::hint::black_box(r));
        serial(Duration::from_micros(400));
        if r == regions / 2 {
            wakes_at_half = pool.stats().iter().map(|s| s.wakes).sum::<u64>();
        }
    }
    let late = pool.stats().iter().map(|s| s.wakes).sum::<u64>() - wakes_at_half;
    // A fixed window costs at least one wake-up per region (about 210 in
    // the last 200 measured here); the adaptive window measured 0–59 on
    // a 2-core machine also running compilers (a spinning worker that is
    // descheduled for longer than its window falls asleep). Fail at half
    // the fixed window's rate.
    assert!(late * 2 <= regions / 2, "{late} wake-ups in the last {} regions 400 µs apart", regions / 2);
}
