//! Throttling: fixed limits, limits changed while loops and task trees run,
//! and the contention monitor's thread.

use herd::throttle::Source;
use herd::{Pool, Schedule, Throttle, Topology};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Runs `f`; aborts the whole test process, loudly, if it takes longer than
/// `limit` (a hang must not pass as a slow test).
fn with_watchdog<R>(name: &str, limit: Duration, f: impl FnOnce() -> R) -> R {
    let (tx, rx) = mpsc::channel::<()>();
    let name = name.to_string();
    let dog = std::thread::spawn(move || {
        if rx.recv_timeout(limit) == Err(mpsc::RecvTimeoutError::Timeout) {
            eprintln!("watchdog: {name} did not finish within {limit:?}: deadlock or lost work");
            std::process::abort();
        }
    });
    let r = f();
    drop(tx);
    dog.join().unwrap();
    r
}

/// Counts how often each index ran.
struct Hits(Vec<AtomicU8>);

impl Hits {
    fn new(n: usize) -> Hits {
        Hits((0..n).map(|_| AtomicU8::new(0)).collect())
    }

    fn hit(&self, i: usize) {
        self.0[i].fetch_add(1, Ordering::Relaxed);
    }

    fn assert_once(&self, what: &str) {
        for (i, h) in self.0.iter().enumerate() {
            assert_eq!(h.swap(0, Ordering::Relaxed), 1, "{what}: index {i}");
        }
    }
}

/// Leaves of a binary join tree over `range` (each leaf hit once).
fn join_tree(range: std::ops::Range<usize>, hits: &Hits) {
    if range.len() <= 2 {
        for i in range {
            hits.hit(i);
        }
        return;
    }
    let mid = range.start + range.len() / 2;
    herd::join(|| join_tree(range.start..mid, hits), || join_tree(mid..range.end, hits));
}

/// Every loop schedule, a join tree and nested scope spawns over `n` indices.
fn all_kinds_of_work(pool: &Pool, n: usize, hits: &Hits) {
    let schedules = [
        Schedule::Dynamic { chunk: 1 },
        Schedule::Dynamic { chunk: 7 },
        Schedule::Guided { min_chunk: 1 },
        Schedule::Adaptive,
        Schedule::Static { chunk: 0 },
        Schedule::Static { chunk: 3 },
    ];
    for s in schedules {
        pool.for_each(0..n, s, |i| hits.hit(i));
        hits.assert_once(&format!("for_each {s:?}"));
    }
    pool.install(|| join_tree(0..n, hits));
    hits.assert_once("join tree");
    pool.scope(|sc| {
        for block in 0..n.div_ceil(16) {
            sc.spawn(move |sc| {
                for i in block * 16..((block + 1) * 16).min(n) {
                    sc.spawn(move |_| hits.hit(i));
                }
            });
        }
    });
    hits.assert_once("scope");
    let sum = pool.map_reduce(0..n, Schedule::Guided { min_chunk: 2 }, |i| i as u64, 0, |a, b| a + b);
    assert_eq!(sum, (n as u64 * (n as u64 - 1)) / 2, "map_reduce");
}

#[test]
fn fixed_one_runs_every_job_on_rank_zero() {
    let topo = Topology::synthetic("pack:1 l3:1 core:2 pu:1").unwrap();
    let pool = Pool::builder().topology(topo).num_threads(2).throttle(Throttle::Fixed(1)).build().unwrap();
    assert_eq!(pool.shepherds().len(), 1);
    assert_eq!(pool.active_limit(0), 1);
    assert!(pool.monitor().is_none());
    let n = 500;
    let hits = Hits::new(n);
    with_watchdog("fixed(1)", Duration::from_secs(15), || {
        for s in [Schedule::Dynamic { chunk: 1 }, Schedule::Guided { min_chunk: 1 }, Schedule::Adaptive] {
            pool.for_each(0..n, s, |i| hits.hit(i));
            hits.assert_once(&format!("{s:?}"));
        }
        pool.install(|| join_tree(0..n, &hits));
        hits.assert_once("join tree");
        pool.scope(|sc| {
            for i in 0..n {
                let hits = &hits;
                sc.spawn(move |_| hits.hit(i));
            }
        });
        hits.assert_once("scope");
    });
    let stats = pool.stats();
    assert!(stats[0].tasks + stats[0].chunks > 0, "{stats:?}");
    assert_eq!((stats[1].tasks, stats[1].chunks), (0, 0), "the throttled worker ran work: {stats:?}");
    // Lifting the limit lets the worker take part again.
    pool.set_active_limit(0, 2);
    assert_eq!(pool.active_limit(0), 2);
    let hits = Hits::new(n);
    with_watchdog("after unthrottling", Duration::from_secs(15), || {
        pool.for_each(0..n, Schedule::Dynamic { chunk: 1 }, |i| hits.hit(i));
    });
    hits.assert_once("unthrottled");
}

#[test]
fn fixed_limit_is_clamped_and_zero_is_refused() {
    let topo = Topology::synthetic("pack:2 l3:1 core:3 pu:1").unwrap();
    let pool = Pool::builder().topology(topo.clone()).throttle(Throttle::Fixed(100)).build().unwrap();
    assert_eq!(pool.shepherds().len(), 2);
    assert_eq!((pool.active_limit(0), pool.active_limit(1)), (3, 3));
    let pool = Pool::builder().topology(topo.clone()).throttle(Throttle::Fixed(2)).build().unwrap();
    assert_eq!((pool.active_limit(0), pool.active_limit(1)), (2, 2));
    let e = Pool::builder().topology(topo).throttle(Throttle::Fixed(0)).build().unwrap_err();
    assert!(e.to_string().contains("throttle"), "{e}");
}

/// A thread flips every shepherd's limit between 1 and all every ~50 µs
/// while the master runs every kind of work; each index must run exactly
/// once and nothing may hang.
fn flipping(pool: &Pool, n: usize, rounds: usize, name: &str) {
    let stop = AtomicBool::new(false);
    let flips = AtomicU64::new(0);
    let hits = Hits::new(n);
    with_watchdog(name, Duration::from_secs(18), || {
        std::thread::scope(|s| {
            s.spawn(|| {
                let shepherds = pool.shepherds().len();
                let mut low = true;
                while !stop.load(Ordering::Relaxed) {
                    for h in 0..shepherds {
                        pool.set_active_limit(h, if low { 1 } else { usize::MAX });
                    }
                    low = !low;
                    flips.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_micros(50));
                }
                for h in 0..shepherds {
                    pool.set_active_limit(h, usize::MAX);
                }
            });
            // Stop the flipper however the body ends: a panic (lost or
            // repeated work) must reach the test, not hang the scope until
            // the watchdog aborts with the panic message still captured.
            struct Stop<'a>(&'a AtomicBool);
            impl Drop for Stop<'_> {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::Relaxed);
                }
            }
            let _stop = Stop(&stop);
            // At least `rounds` rounds, and on until the limits have flipped
            // a few times (on a loaded machine the flipper may not run at
            // all during a fast body).
            let mut done = 0;
            while done < rounds || flips.load(Ordering::Relaxed) < 8 {
                all_kinds_of_work(pool, n, &hits);
                done += 1;
            }
        });
    });
    eprintln!("{name}: {} flips", flips.load(Ordering::Relaxed));
    assert!(flips.load(Ordering::Relaxed) > 0, "the limit never changed");
    if pool.monitor().is_some() {
        return; // the monitor may have moved the limits since
    }
    for h in 0..pool.shepherds().len() {
        assert_eq!(pool.active_limit(h), pool.shepherds().members[h].len());
    }
}

#[test]
fn flipping_limits_never_deadlock_or_lose_work() {
    let pool = Pool::builder().num_threads(2).build().unwrap();
    flipping(&pool, 400, 60, "flipping, 2 participants");
}

/// A participant throttled during one long loop takes chunks again once the
/// limit rises (it waits instead of leaving the loop for good — the bug that
/// made `Throttle::Auto` halve the array walk's throughput: its first probe
/// at one active worker ended the second worker's part of the loop).
#[test]
fn a_throttled_participant_rejoins_a_long_loop() {
    for schedule in [Schedule::Dynamic { chunk: 1 }, Schedule::Guided { min_chunk: 1 }, Schedule::Adaptive] {
        let pool = Pool::builder().num_threads(2).build().unwrap();
        pool.set_active_limit(0, 1);
        pool.reset_stats();
        let started = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !started.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
                std::thread::sleep(Duration::from_millis(5));
                pool.set_active_limit(0, 2);
            });
            with_watchdog("rejoin", Duration::from_secs(60), || {
                pool.for_each(0..4000, schedule, |_| {
                    started.store(true, Ordering::Relaxed);
                    let t = Instant::now();
                    while t.elapsed() < Duration::from_micros(10) {
                        std::hint::spin_loop();
                    }
                })
            });
        });
        let chunks: Vec<u64> = pool.stats().iter().map(|s| s.chunks).collect();
        assert!(chunks[1] > 0, "{schedule:?}: participant 1 never came back: {chunks:?}");
    }
}

#[test]
fn flipping_limits_on_a_synthetic_four_socket_machine() {
    // 32 participants oversubscribed on this machine's cores: small work.
    let topo = Topology::synthetic("pack:4 l3:1 core:8 pu:1").unwrap();
    let pool = Pool::builder().topology(topo).build().unwrap();
    assert_eq!(pool.num_threads(), 32);
    assert_eq!(pool.shepherds().len(), 4);
    flipping(&pool, 200, 8, "flipping, synthetic 4×8");
}

fn thread_exists(tid: i64) -> bool {
    std::path::Path::new(&format!("/proc/self/task/{tid}")).exists()
}

#[test]
fn auto_monitor_starts_and_stops_with_the_pool() {
    let pool = Pool::builder().num_threads(2).throttle(Throttle::Auto).build().unwrap();
    let m = pool.monitor().expect("a monitor under Throttle::Auto");
    // The source and the reason agree.
    assert_eq!(m.source() == Source::Software, m.fallback_reason().is_some(), "{:?}", m.fallback_reason());
    assert!(m.describe(false).contains(m.source().name()));
    let tid = m.thread_id();
    assert!(tid > 0);
    let comm = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")).unwrap();
    assert_eq!(comm.trim(), "herd-monitor");
    // Keep the pool busy until the monitor has seen a busy epoch.
    let start = Instant::now();
    let done = AtomicUsize::new(0);
    with_watchdog("auto monitor", Duration::from_secs(18), || loop {
        pool.for_each(0..2000, Schedule::Dynamic { chunk: 1 }, |i| {
            let mut x = i as u64;
            for _ in 0..200 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            done.fetch_add(1, Ordering::Relaxed);
        });
        let st = pool.monitor().unwrap().state();
        if st.shepherds.iter().any(|s| s.busy_epochs > 0) || start.elapsed() > Duration::from_secs(8) {
            break;
        }
    });
    let st = pool.monitor().unwrap().state();
    assert!(st.epochs > 0, "the monitor never woke: {st:?}");
    assert!(st.shepherds.iter().any(|s| s.busy_epochs > 0), "no busy epoch seen: {st:?}");
    let busy = st.shepherds.iter().find(|s| s.busy_epochs > 0).unwrap();
    assert!(busy.throughput.iter().any(Option::is_some), "{busy:?}");
    for (h, s) in st.shepherds.iter().enumerate() {
        assert!((1..=s.members).contains(&s.limit), "shepherd {h}: {s:?}");
    }
    assert_eq!(done.load(Ordering::Relaxed) % 2000, 0);
    drop(pool);
    let t = Instant::now();
    while thread_exists(tid) && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!thread_exists(tid), "the monitor thread outlived its pool");
}

#[test]
fn auto_monitor_with_limits_moving_under_running_work() {
    // The monitor and an explicit flipper both change limits.
    let topo = Topology::synthetic("pack:2 l3:1 core:4 pu:1").unwrap();
    let pool = Pool::builder().topology(topo).throttle(Throttle::Auto).build().unwrap();
    assert!(pool.monitor().is_some());
    flipping(&pool, 300, 4, "auto + flipping");
    let tid = pool.monitor().unwrap().thread_id();
    drop(pool);
    let t = Instant::now();
    while thread_exists(tid) && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!thread_exists(tid));
}

#[test]
fn no_monitor_without_auto() {
    let pool = Pool::builder().num_threads(2).throttle(Throttle::Off).build().unwrap();
    assert!(pool.monitor().is_none());
    let pool = Pool::builder().num_threads(2).build().unwrap();
    assert!(pool.monitor().is_none());
}

#[test]
fn monitor_settings_are_checked() {
    use herd::throttle::MonitorSettings;
    let bad = MonitorSettings { epoch: Duration::ZERO, ..MonitorSettings::default() };
    let e =
        Pool::builder().num_threads(1).throttle(Throttle::Auto).monitor_settings(bad).build().unwrap_err();
    assert!(e.to_string().contains("monitor epoch"), "{e}");
    let bad = MonitorSettings { busy_threshold: 1.5, ..MonitorSettings::default() };
    let e =
        Pool::builder().num_threads(1).throttle(Throttle::Auto).monitor_settings(bad).build().unwrap_err();
    assert!(e.to_string().contains("busy_threshold"), "{e}");
}

/// Waits up to 3 s for `cond`.
fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(3) {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cond()
}

#[test]
fn a_saturated_socket_on_the_blackboard_lowers_the_limits() {
    use herd::throttle::blackboard::{self, Meter, MeterSource, Writer};
    use herd::throttle::MonitorSettings;
    let name = format!("/herd-test-throttle-{}", std::process::id());
    let _ = blackboard::unlink(&name);
    let settings = MonitorSettings {
        epoch: Duration::from_millis(5),
        blackboard: Some(name.clone()),
        ..MonitorSettings::default()
    };
    let pool =
        Pool::builder().num_threads(2).throttle(Throttle::Auto).monitor_settings(settings).build().unwrap();
    let members: Vec<usize> = pool.shepherds().members.iter().map(Vec::len).collect();
    let sockets = pool.info().pus.iter().map(|p| p.package + 1).max().unwrap();
    let writer = Writer::create(&name, sockets as u32, Duration::from_millis(5)).unwrap();
    let publish = |utilisation: f64| {
        let m = Meter {
            llc_miss_rate: 0.0,
            cycles_rate: 0.0,
            utilisation,
            suggested_active: 1,
            source: Some(MeterSource::Software),
        };
        writer.publish(&vec![m; sockets]);
    };
    // Other processes keep every socket busy: one active worker per shepherd.
    publish(1.0);
    let capped = eventually(|| {
        publish(1.0);
        // The state is updated just after the limits: wait for both.
        let st = pool.monitor().unwrap().state();
        (0..members.len()).all(|h| pool.active_limit(h) == 1)
            && st.shepherds.iter().all(|s| s.external_cap == Some(1))
    });
    let st = pool.monitor().unwrap().state();
    assert!(capped, "limits not lowered: {st:?}");
    assert_eq!(st.blackboard.as_deref(), Some(name.as_str()));
    assert!(st.shepherds.iter().all(|s| s.external_cap == Some(1)), "{st:?}");
    // Work still completes while capped.
    let hits = Hits::new(300);
    with_watchdog("capped by the blackboard", Duration::from_secs(15), || {
        all_kinds_of_work(&pool, 300, &hits);
    });
    // The others go away: the limits climb back to every member.
    let freed = eventually(|| {
        publish(0.0);
        let st = pool.monitor().unwrap().state();
        (0..members.len()).all(|h| pool.active_limit(h) == members[h])
            && st.shepherds.iter().all(|s| s.external_cap.is_none())
    });
    let st = pool.monitor().unwrap().state();
    assert!(freed, "limits not restored: {st:?}");
    assert!(st.shepherds.iter().all(|s| s.external_cap.is_none()), "{st:?}");
    drop(pool);
    blackboard::unlink(&name).unwrap();
}
