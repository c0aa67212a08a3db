//! The four schedulers (`mts`, `ws`, `central`, `fifo`) behind the same
//! operations: every one runs join trees, scopes and every loop schedule to
//! the same results, counts what it does, and — on a synthetic machine of
//! four L3 domains — `mts` moves work between domains no more often than
//! flat work stealing does.

use herd::{Pool, Sched, Schedule, ShepherdLevel, Topology, WaitPolicy};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::Duration;

mod common;
use common::fib;

fn pool(sched: Sched, n: usize) -> Pool {
    Pool::builder().num_threads(n).scheduler(sched).build().unwrap()
}

#[test]
fn every_scheduler_runs_joins_scopes_and_loops() {
    for sched in Sched::ALL {
        for n in [1, 2, 3] {
            let p = pool(sched, n);
            assert_eq!(p.scheduler(), sched);
            assert_eq!(p.install(|| fib(20)), 6765, "{sched} n={n}");
            let count = AtomicUsize::new(0);
            p.scope(|s| {
                for _ in 0..200 {
                    s.spawn(|s| {
                        count.fetch_add(1, Ordering::Relaxed);
                        s.spawn(|_| {
                            count.fetch_add(1, Ordering::Relaxed);
                        });
                    });
                }
            });
            assert_eq!(count.load(Ordering::Relaxed), 400, "{sched} n={n}");
            for schedule in [
                Schedule::Static { chunk: 0 },
                Schedule::Static { chunk: 3 },
                Schedule::Dynamic { chunk: 5 },
                Schedule::Guided { min_chunk: 2 },
                Schedule::Adaptive,
            ] {
                let seen: Vec<AtomicU8> = (0..5000).map(|_| AtomicU8::new(0)).collect();
                p.for_each(0..5000, schedule, |i| {
                    seen[i].fetch_add(1, Ordering::Relaxed);
                });
                assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1), "{sched} {schedule:?}");
            }
            // Nested loops inside tasks split with join.
            let total = AtomicUsize::new(0);
            p.install(|| {
                herd::join(
                    || {
                        p.for_each(0..1000, Schedule::Adaptive, |_| {
                            total.fetch_add(1, Ordering::Relaxed);
                        })
                    },
                    || {
                        p.for_each(0..1000, Schedule::Dynamic { chunk: 1 }, |_| {
                            total.fetch_add(1, Ordering::Relaxed);
                        })
                    },
                )
            });
            assert_eq!(total.load(Ordering::Relaxed), 2000, "{sched} n={n}");
        }
    }
}

#[test]
fn every_scheduler_propagates_panics_and_stays_usable() {
    for sched in Sched::ALL {
        let p = pool(sched, 2);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            p.scope(|s| {
                for i in 0..50 {
                    s.spawn(move |_| assert!(i != 17, "task 17 fails"));
                }
            })
        }));
        assert!(r.is_err(), "{sched}");
        assert_eq!(p.install(|| fib(15)), 610, "{sched}");
    }
}

#[test]
fn counters_add_up() {
    for sched in Sched::ALL {
        let p = pool(sched, 2);
        p.reset_stats();
        p.scope(|s| {
            for _ in 0..1000 {
                s.spawn(|_| std::hint::black_box(()));
            }
        });
        let stats = p.stats();
        assert_eq!(stats.len(), 2);
        // Every spawned job ran exactly once, on one of the participants
        // (the scope's own body runs inline, not as a job).
        let tasks: u64 = stats.iter().map(|s| s.tasks).sum();
        assert_eq!(tasks, 1000, "{sched}: {stats:?}");
        p.for_each(0..10_000, Schedule::Dynamic { chunk: 100 }, |_| {});
        let chunks: u64 = p.stats().iter().map(|s| s.chunks).sum();
        assert_eq!(chunks, 100, "{sched}");
    }
}

/// The shepherds of a pool follow `HERD_SHEPHERD` and split with
/// `HERD_WORKERS_PER_SHEPHERD`.
#[test]
fn shepherds_of_a_synthetic_machine() {
    let topo = Topology::synthetic("pack:4 l3:1 core:8 pu:1").unwrap();
    let p = Pool::builder().topology(topo.clone()).wait(WaitPolicy::Passive).build().unwrap();
    assert_eq!(p.num_threads(), 32);
    assert_eq!(p.shepherds().len(), 4);
    let info = p.info();
    assert_eq!(info.shepherds.len(), 4);
    assert_eq!(info.shepherds[1].workers, (8..16).collect::<Vec<_>>());
    assert!(info.render(false).contains("4 shepherd(s) at level l3"));
    let p = Pool::builder()
        .topology(topo)
        .wait(WaitPolicy::Passive)
        .shepherd_level(ShepherdLevel::Core)
        .workers_per_shepherd(1)
        .build()
        .unwrap();
    assert_eq!(p.shepherds().len(), 32);
}

/// A binary task tree spawned eagerly (every node a scope task, as Qthreads
/// and BOTS create them) whose leaves spin a little, so that thieves find
/// work: counts leaves into `leaves`.
fn tree<'s>(s: &herd::Scope<'s>, depth: u32, leaves: &'s AtomicUsize) {
    if depth == 0 {
        let t = std::time::Instant::now();
        while t.elapsed() < Duration::from_micros(20) {
            std::hint::spin_loop();
        }
        leaves.fetch_add(1, Ordering::Relaxed);
        return;
    }
    s.spawn(move |s| tree(s, depth - 1, leaves));
    s.spawn(move |s| tree(s, depth - 1, leaves));
}

/// Same task trees on the synthetic `pack:4 l3:1 core:8 pu:1` machine (32
/// participants oversubscribed on this one: counts, not times): `mts` looks
/// for work in its own shepherd before it crosses to another, and a remote
/// steal moves a chunk, so a smaller share of its steals cross domains than
/// of `ws`'s (whose random victims are remote 24 times in 31), and its
/// remote steals move more than one job each on average.
///
/// The absolute number of remote steals is printed, not asserted: with 32
/// participants on 2 CPUs it is set by which threads the OS happens to run
/// (one pool's 20-tree total varies from 1,040 to 1,530 between runs), and
/// mts's lead there is 5–20 % (measured, session 28), so a count assertion
/// failed about one run in four. The share is stable: mts 0.53–0.58, ws
/// 0.72–0.76 over ten runs, also with a second copy of the test beside it.
#[test]
fn mts_keeps_steals_in_its_domain_more_than_ws() {
    let topo = Topology::synthetic("pack:4 l3:1 core:8 pu:1").unwrap();
    let pool = |sched: Sched| {
        Pool::builder().topology(topo.clone()).scheduler(sched).wait(WaitPolicy::Passive).build().unwrap()
    };
    let (mts_pool, ws_pool) = (pool(Sched::Mts), pool(Sched::Ws));
    // (local steals, remote steals, jobs moved by remote steals)
    let steals = |p: &Pool| -> [u64; 3] {
        let mut total = [0; 3];
        for _ in 0..4 {
            p.reset_stats();
            let leaves = AtomicUsize::new(0);
            p.scope(|s| tree(s, 12, &leaves));
            assert_eq!(leaves.load(Ordering::Relaxed), 1 << 12);
            for s in p.stats() {
                total[0] += s.local_steals;
                total[1] += s.remote_steals;
                total[2] += s.stolen_tasks;
            }
        }
        total
    };
    let (mut mts, mut ws) = ([0; 3], [0; 3]);
    for _ in 0..5 {
        let (m, w) = (steals(&mts_pool), steals(&ws_pool));
        for k in 0..3 {
            mts[k] += m[k];
            ws[k] += w[k];
        }
    }
    let share = |t: [u64; 3]| t[1] as f64 / (t[0] + t[1]).max(1) as f64;
    eprintln!(
        "steals over 20 trees each (local, remote, jobs moved remotely): mts {mts:?} (remote share {:.2}), \
         ws {ws:?} ({:.2})",
        share(mts),
        share(ws)
    );
    assert!(ws[1] > 0 && mts[1] > 0, "both pools stole across domains: mts {mts:?}, ws {ws:?}");
    // mts[1] / (mts[0] + mts[1]) < ws[1] / (ws[0] + ws[1]), in integers.
    assert!(
        u128::from(mts[1]) * u128::from(ws[0] + ws[1]) < u128::from(ws[1]) * u128::from(mts[0] + mts[1]),
        "a larger share of mts's steals crossed domains than of ws's: mts {:.2}, ws {:.2}",
        share(mts),
        share(ws)
    );
    assert!(mts[2] > mts[1], "mts's remote steals moved one job each ({mts:?}): no chunks");
}
