//! Integration tests of pools: regions under every dispatch strategy, join,
//! scope, loops, panics and reuse.

use herd::{Dispatch, Pool, Schedule, WaitPolicy};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

fn pool(n: usize, dispatch: Dispatch) -> Pool {
    Pool::builder().num_threads(n).dispatch(dispatch).build().expect("pool")
}

mod common;
use common::fib;

#[test]
fn broadcast_runs_every_index_once_under_each_strategy() {
    for d in Dispatch::ALL {
        for n in [1, 2, 3, 5] {
            let p = pool(n, d);
            for _ in 0..50 {
                let seen: Vec<usize> = p.broadcast(|ctx| {
                    assert_eq!(ctx.num_threads(), n);
                    ctx.index()
                });
                assert_eq!(seen, (0..n).collect::<Vec<_>>(), "{d} n={n}");
            }
        }
    }
}

#[test]
fn broadcast_timed_reports_every_participant() {
    let p = pool(3, Dispatch::Pwaml);
    let (_, t) = p.broadcast_timed(|_| std::thread::sleep(Duration::from_millis(2)));
    assert_eq!(t.pct.len(), 3);
    assert!(t.pct.iter().all(|&d| d >= Duration::from_millis(2)));
    assert!(t.fpt >= *t.pct.iter().max().unwrap());
}

#[test]
fn join_computes_fib_under_each_strategy() {
    for d in Dispatch::ALL {
        let p = pool(3, d);
        assert_eq!(p.install(|| fib(22)), 17711, "{d}");
    }
}

#[test]
fn join_inside_broadcast() {
    let p = pool(4, Dispatch::Pwaml);
    let r = p.broadcast(|ctx| fib(15 + ctx.index() as u64));
    assert_eq!(r, vec![610, 987, 1597, 2584]);
}

#[test]
fn million_spawned_tasks_each_run_once() {
    let p = pool(4, Dispatch::Pwaml);
    const N: usize = 1_000_000;
    let hits: Vec<std::sync::atomic::AtomicU8> = (0..N).map(|_| Default::default()).collect();
    p.scope(|s| {
        for chunk in 0..1000 {
            let hits = &hits;
            s.spawn(move |s| {
                for hit in &hits[chunk * 1000..(chunk + 1) * 1000] {
                    s.spawn(move |_| {
                        hit.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
        }
    });
    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
}

#[test]
fn every_schedule_covers_each_iteration_exactly_once() {
    let schedules = [
        Schedule::Static { chunk: 0 },
        Schedule::Static { chunk: 7 },
        Schedule::Dynamic { chunk: 1 },
        Schedule::Dynamic { chunk: 13 },
        Schedule::Guided { min_chunk: 1 },
        Schedule::Guided { min_chunk: 50 },
        Schedule::Adaptive,
    ];
    for n in [1, 2, 3, 4] {
        let p = pool(n, Dispatch::Pwaml);
        for s in schedules {
            for len in [0usize, 1, 2, 5, 100, 10_007] {
                let hits: Vec<AtomicUsize> = (0..len + 10).map(|_| AtomicUsize::new(0)).collect();
                p.for_each(10..10 + len, s, |i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
                for (i, h) in hits.iter().enumerate() {
                    let want = usize::from((10..10 + len).contains(&i));
                    assert_eq!(h.load(Ordering::Relaxed), want, "{s:?} n={n} len={len} i={i}");
                }
                let sum = p.map_reduce(10..10 + len, s, |i| i as u64, 0u64, |a, b| a + b);
                assert_eq!(sum, (10..10 + len as u64).sum::<u64>());
            }
        }
    }
}

#[test]
fn static_block_partition_is_contiguous_and_ordered() {
    let p = pool(3, Dispatch::Pwaml);
    let owner: Vec<AtomicUsize> = (0..30).map(|_| AtomicUsize::new(usize::MAX)).collect();
    p.broadcast(|ctx| {
        for i in ctx.block(30) {
            owner[i].store(ctx.index(), Ordering::Relaxed);
        }
    });
    let o: Vec<usize> = owner.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    assert_eq!(o, [vec![0; 10], vec![1; 10], vec![2; 10]].concat());
}

#[test]
fn nested_loop_inside_broadcast_is_correct() {
    let p = pool(3, Dispatch::Pwaml);
    let total = AtomicUsize::new(0);
    p.broadcast(|_| {
        p.for_each(0..1000, Schedule::default(), |i| {
            total.fetch_add(i, Ordering::Relaxed);
        });
    });
    assert_eq!(total.load(Ordering::Relaxed), 3 * 499_500);
}

#[test]
fn panic_in_share_reaches_caller_and_pool_stays_usable() {
    for d in Dispatch::ALL {
        let p = pool(3, d);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            p.broadcast(|ctx| {
                if ctx.index() == 2 {
                    panic!("share two failed");
                }
            })
        }));
        let msg = r.unwrap_err();
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"share two failed"), "{d}");
        assert_eq!(p.broadcast(|c| c.index()).len(), 3, "{d}");
    }
}

#[test]
fn panic_in_iteration_or_task_reaches_caller() {
    let p = pool(2, Dispatch::Pwaml);
    let ran = AtomicUsize::new(0);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.for_each(0..1000, Schedule::Dynamic { chunk: 10 }, |i| {
            ran.fetch_add(1, Ordering::Relaxed);
            if i == 500 {
                panic!("iteration 500");
            }
        })
    }));
    assert!(r.is_err());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.install(|| herd::join(|| fib(10), || -> u64 { panic!("b failed") }))
    }));
    assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"b failed"));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.scope(|s| {
            s.spawn(|_| panic!("task failed"));
            s.spawn(|_| {});
        })
    }));
    assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"task failed"));
    assert_eq!(p.install(|| fib(20)), 6765);
}

#[test]
fn external_threads_share_one_pool() {
    let p = pool(3, Dispatch::Pwaml);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (p, results) = (&p, &results);
            s.spawn(move || {
                for _ in 0..20 {
                    let v = p.install(|| fib(12 + t));
                    results.lock().unwrap().push((t, v));
                }
            });
        }
    });
    let r = results.into_inner().unwrap();
    assert_eq!(r.len(), 80);
    for (t, v) in r {
        assert_eq!(v, [144, 233, 377, 610][t as usize]);
    }
}

#[test]
fn passive_and_active_wait_policies_work() {
    for w in [WaitPolicy::Passive, WaitPolicy::Active, WaitPolicy::Spin(Duration::from_micros(5))] {
        let p = Pool::builder().num_threads(3).wait(w).build().unwrap();
        for _ in 0..200 {
            assert_eq!(p.broadcast(|c| c.index()).iter().sum::<usize>(), 3);
        }
        assert_eq!(p.install(|| fib(18)), 2584);
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(p.install(|| fib(18)), 2584);
    }
}

#[test]
fn oversubscribed_pool_is_reported_and_works() {
    let p = Pool::builder().num_threads(8).build().unwrap();
    let info = p.info();
    if info.pus.len() < 8 {
        assert!(info.oversubscribed);
        assert_eq!(info.wait, "passive");
        assert!(info.notes.iter().any(|n| n.contains("oversubscribed") && n.contains("yields the CPU")));
    }
    assert_eq!(p.install(|| fib(20)), 6765);
}

#[test]
fn global_pool_join_from_main_thread() {
    assert_eq!(fib(20), 6765);
    assert!(herd::current_num_threads() >= 1);
    assert_eq!(herd::current_thread_index(), None);
}

#[test]
fn synthetic_four_socket_pool_maps_workers_and_wakes_distant_first() {
    let topo = herd::Topology::synthetic("pack:4 l3:1 core:8 pu:1").unwrap();
    let p = Pool::builder().topology(topo).build().unwrap();
    let info = p.info();
    assert_eq!(info.num_threads, 32);
    assert!(!info.bound, "a synthetic topology is never bound");
    assert_eq!(info.master_pu, 0);
    // Participant i on PU i, the master's PU used by no worker.
    for w in &info.workers {
        assert_eq!(w.pu as usize, w.index);
    }
    // Distant first: the 24 workers on other packages, then the 7 sharing the master's L3.
    let pkg = |i: usize| info.pus[info.workers[i].pu as usize].package;
    assert!(info.wake_order[..24].iter().all(|&w| pkg(w) != 0));
    assert!(info.wake_order[24..].iter().all(|&w| pkg(w) == 0));
    assert_eq!(info.wake_order.len(), 31);
    // And it runs: 32 participants on this small machine (oversubscribed, passive).
    assert_eq!(p.broadcast(|c| c.index()).len(), 32);
    assert_eq!(p.install(|| fib(16)), 987);
}

#[test]
fn pinning_the_master_does_not_shrink_later_topologies() {
    let before = herd::Topology::detect().unwrap().pus().len();
    let p = Pool::builder().build().unwrap();
    p.broadcast(|_| ());
    drop(p);
    // The master is now pinned to one PU; a pool built afterwards still sees them all.
    assert_eq!(herd::Topology::detect().unwrap().pus().len(), before);
    assert_eq!(Pool::builder().build().unwrap().num_threads(), before);
}

#[test]
fn for_each_chunk_covers_the_range_in_disjoint_chunks() {
    let p = pool(3, Dispatch::Pwaml);
    for s in [Schedule::Static { chunk: 0 }, Schedule::Dynamic { chunk: 64 }, Schedule::Adaptive] {
        let hits: Vec<AtomicUsize> = (0..5000).map(|_| AtomicUsize::new(0)).collect();
        p.for_each_chunk(0..5000, s, |r| {
            assert!(r.start < r.end && r.end <= 5000);
            for i in r {
                hits[i].fetch_add(1, Ordering::Relaxed);
            }
        });
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "{s:?}");
    }
}

#[test]
fn results_of_a_region_with_a_panic_are_dropped_exactly_once() {
    let token = std::sync::Arc::new(());
    for d in [Dispatch::Pwaml, Dispatch::Pw, Dispatch::Ljaml] {
        let p = pool(3, d);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            p.broadcast(|ctx| {
                if ctx.index() == 1 {
                    panic!("share one");
                }
                vec![token.clone(); 3]
            })
        }));
        assert!(r.is_err());
        assert_eq!(std::sync::Arc::strong_count(&token), 1, "{d}: results leaked or not dropped");
        let ok = p.broadcast(|_| token.clone());
        assert_eq!(std::sync::Arc::strong_count(&token), 4);
        drop(ok);
        assert_eq!(std::sync::Arc::strong_count(&token), 1);
    }
}
