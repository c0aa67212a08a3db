//! Distributed herd-flow under mpirun: results equal to the single-rank run, quiescence with
//! messages in flight, memoized tags deduplicated across ranks, the blocked-step diagnosis
//! naming the rank, and a failing step on one rank stopping every rank with its error.

use herd_flow::{Ctx, Deps, Items, StepError, Tuner};
use herd_mpi::flow::{DistError, RankBlocked};
use herd_mpi::{mpi_test, DistGraph, Mpi, Options};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// fib(n) on rank n % size, depending on fib(n-1) and fib(n-2).
struct FibTuner {
    fib: Items<u64, u64>,
    size: usize,
}
impl Tuner<u64> for FibTuner {
    fn depends(&self, &n: &u64, deps: &mut Deps) {
        if n >= 2 {
            deps.item(&self.fib, n - 1);
            deps.item(&self.fib, n - 2);
        }
    }
    fn compute_on(&self, &n: &u64) -> usize {
        n as usize % self.size
    }
}

/// Builds fib on `dg`; every item also goes to rank 0, which checks them all.
fn fib_graph(dg: &DistGraph, top: u64) -> Items<u64, u64> {
    let size = dg.size();
    let fib = dg
        .items::<u64, u64>("fib")
        .with_consumers(move |&n| vec![0, (n as usize + 1) % size, (n as usize + 2) % size]);
    let f = fib.clone();
    let steps = dg.steps_tuned("fib", FibTuner { fib: fib.clone(), size }, move |&n: &u64, ctx: &Ctx<'_>| {
        let v = if n < 2 { n } else { ctx.get(&f, &(n - 1))?.wrapping_add(*ctx.get(&f, &(n - 2))?) };
        ctx.put(&f, n, v)?;
        Ok(())
    });
    let tags = dg.tags::<u64>("n");
    tags.prescribes(&steps);
    if dg.rank() == 0 {
        // every tag from rank 0: routed to the rank of its step
        for n in 0..=top {
            tags.put(n);
        }
    }
    fib
}

mpi_test!(fn fib_equals_single_rank() ranks [1, 2, 4] within 120 {
    let mpi = Arc::new(Mpi::init(Options::default()).unwrap());
    let (r, p) = (mpi.rank(), mpi.size());
    let top = 90;
    let dg = DistGraph::new(&mpi, "fib");
    let fib = fib_graph(&dg, top);
    let stats = dg.wait().unwrap();
    assert_eq!(stats.executed_total, top + 1);
    assert_eq!(stats.local.executed, (0..=top).filter(|n| *n as usize % p == r).count() as u64);
    // the single-rank (sequential) values
    let mut want = vec![0u64, 1];
    for n in 2..=top as usize {
        want.push(want[n - 1].wrapping_add(want[n - 2]));
    }
    if r == 0 {
        for n in 0..=top {
            assert_eq!(*fib.get(&n).unwrap(), want[n as usize], "fib({n})");
        }
    }
    for n in (0..=top).filter(|n| *n as usize % p == r) {
        assert_eq!(*fib.get(&n).unwrap(), want[n as usize], "fib({n}) where it was computed");
    }
    if p > 1 {
        assert!(stats.sent > 0 && stats.received > 0, "{stats:?}");
    }
    drop((dg, fib));
    // A second graph on the same ranks (the next tag) works as the first.
    let dg = DistGraph::new(&mpi, "fib2");
    let fib = fib_graph(&dg, 40);
    dg.wait().unwrap();
    if r == 0 {
        assert_eq!(*fib.get(&40).unwrap(), want[40]);
    }
    drop((dg, fib));
    drop(Arc::try_unwrap(mpi).ok().expect("the graphs released the handle"));
});

/// Steps on rank `(tag + shift) % size`.
struct Shifted {
    size: usize,
    shift: u64,
}
impl Tuner<u64> for Shifted {
    fn compute_on(&self, &t: &u64) -> usize {
        ((t + self.shift) % self.size as u64) as usize
    }
}

/// A step collection that counts its executions on this rank.
fn counting(dg: &DistGraph, name: &str, shift: u64, ran: &Arc<AtomicU64>) -> herd_flow::Steps<u64> {
    let ran = ran.clone();
    dg.steps_tuned(name, Shifted { size: dg.size(), shift }, move |_: &u64, _: &Ctx<'_>| {
        ran.fetch_add(1, Ordering::Relaxed);
        Ok(())
    })
}

// Every rank puts the same tags, each twice, into a memoizing collection with two step
// collections attached (their steps on different ranks) and once into a plain one: a
// memoized tag runs each of its steps once in the whole graph (the step's rank ignores the
// other ranks' puts), a plain tag once per put.
mpi_test!(fn memoized_tags_put_on_every_rank_run_once() ranks [1, 2, 4] within 120 {
    let mpi = Arc::new(Mpi::init(Options::default()).unwrap());
    let (r, p) = (mpi.rank() as u64, mpi.size() as u64);
    let n = 40u64;
    let dg = DistGraph::new(&mpi, "memo");
    let (ran_a, ran_b, ran_c) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let a = counting(&dg, "a", 0, &ran_a);
    let b = counting(&dg, "b", 1, &ran_b);
    let c = counting(&dg, "c", 0, &ran_c);
    let memo = dg.tags::<u64>("memo");
    memo.memoize().prescribes(&a).prescribes(&b);
    let plain = dg.tags::<u64>("plain");
    plain.prescribes(&c);
    for t in 0..n {
        memo.put(t);
        memo.put(t);
        plain.put(t);
    }
    let stats = dg.wait().unwrap();
    let here = |shift: u64| (0..n).filter(|t| (t + shift) % p == r).count() as u64;
    assert_eq!(ran_a.load(Ordering::Relaxed), here(0), "memoized, step a");
    assert_eq!(ran_b.load(Ordering::Relaxed), here(1), "memoized, step b");
    assert_eq!(ran_c.load(Ordering::Relaxed), p * here(0), "plain: one step per put");
    assert_eq!(stats.executed_total, 2 * n + p * n);
    // Ignored: the second put on each rank, and the other ranks' puts where the step runs.
    assert_eq!(stats.local.duplicate_tags, n + (p - 1) * (here(0) + here(1)), "{stats:?}");
    drop((dg, a, b, c, memo, plain));
    drop(Arc::try_unwrap(mpi).ok().expect("the graph released the handle"));
});

/// A chain passed around the ranks with a pause in every step and a large item: each
/// rank is idle most of the time while the chain's message is on its way or being worked
/// on elsewhere, so a wait that ended on local idleness would end early.
/// step(i) runs on rank i % size and gets `items[i]`.
struct RoundRobin<V> {
    items: Items<u32, V>,
    size: usize,
}
impl<V: Send + Sync + 'static> Tuner<u32> for RoundRobin<V> {
    fn depends(&self, &i: &u32, deps: &mut Deps) {
        deps.item(&self.items, i);
    }
    fn compute_on(&self, &i: &u32) -> usize {
        i as usize % self.size
    }
}

/// The item each link of `quiescence_waits_for_messages_in_flight` puts: 256 KiB, so that
/// it is still in flight when its sender's steps are done. 16 KiB under ThreadSanitizer
/// (`make tsan` sets `herd_tsan`), where the instrumented serialization and sums made the
/// test take 56 s with 256 KiB items; there every message is slow to send anyway.
const ITEM_BYTES: usize = if cfg!(herd_tsan) { 1 << 14 } else { 1 << 18 };

mpi_test!(fn quiescence_waits_for_messages_in_flight() ranks [1, 2, 4] within 120 {
    let mpi = Arc::new(Mpi::init(Options::default()).unwrap());
    let p = mpi.size();
    let len = 60u32;
    let dg = DistGraph::new(&mpi, "chain");
    let x = dg.items::<u32, Vec<u8>>("x").with_consumed_on(move |&i| i as usize % p);
    let out = dg.items::<u32, u64>("out").with_consumed_on(|_| 0);
    let (xs, o) = (x.clone(), out.clone());
    let steps = dg.steps_tuned("link", RoundRobin { items: x.clone(), size: p }, move |&i: &u32, ctx: &Ctx<'_>| {
        let v = ctx.get(&xs, &i)?;
        std::thread::sleep(Duration::from_millis(2));
        let sum: u64 = v.iter().map(|&b| b as u64).sum();
        if i < len {
            // the next link gets an `ITEM_BYTES` item and its tag, put here and routed
            ctx.put(&xs, i + 1, vec![(i % 251) as u8; ITEM_BYTES])?;
        } else {
            ctx.put(&o, i, sum)?;
        }
        Ok(())
    });
    let tags = dg.tags::<u32>("i");
    tags.prescribes(&steps);
    if mpi.rank() == p - 1 {
        // put on the last rank, all routed
        for i in 0..=len {
            tags.put(i);
        }
        x.put(0, vec![1; 10]).unwrap();
    }
    let stats = dg.wait().unwrap();
    assert_eq!(stats.executed_total, len as u64 + 1);
    if mpi.rank() == 0 {
        assert_eq!(*out.get(&len).unwrap(), ((len - 1) % 251) as u64 * ITEM_BYTES as u64);
    }
    assert!(stats.rounds >= 2);
    drop((dg, x, out, tags, steps));
    drop(Arc::try_unwrap(mpi).ok().expect("released"));
});

// step(k) on rank k % size gets a[k]; a[k] is put (on rank 0) for every k but 1 and 2.
mpi_test!(fn blocked_steps_are_named_with_their_rank() ranks [1, 2, 4] within 120 {
    let mpi = Arc::new(Mpi::init(Options::default()).unwrap());
    let p = mpi.size();
    let dg = DistGraph::new(&mpi, "blocked");
    let a = dg.items::<u32, u32>("a").with_consumed_on(move |&k| k as usize % p);
    let aa = a.clone();
    let steps = dg.steps_tuned("need", RoundRobin { items: a.clone(), size: p }, move |&k: &u32, ctx: &Ctx<'_>| {
        ctx.get(&aa, &k)?;
        Ok(())
    });
    let tags = dg.tags::<u32>("k");
    tags.prescribes(&steps);
    if mpi.rank() == 0 {
        for k in 0..6 {
            tags.put(k);
            if k != 1 && k != 2 {
                a.put(k, k).unwrap();
            }
        }
    }
    match dg.wait() {
        Err(DistError::Unsatisfied(b)) => {
            let want: Vec<RankBlocked> = [1u32, 2]
                .iter()
                .map(|&k| RankBlocked {
                    rank: k as usize % p,
                    blocked: herd_flow::Blocked {
                        step_collection: "need".into(),
                        tag: k.to_string(),
                        missing: vec![("a".into(), k.to_string())],
                    },
                })
                .collect();
            let mut got = b.clone();
            got.sort_by_key(|b| b.blocked.tag.clone());
            assert_eq!(got, want);
            let msg = DistError::Unsatisfied(b).to_string();
            assert!(msg.contains(&format!("rank {}: need(1) waits for a[1]", 1 % p)), "{msg}");
        }
        other => panic!("expected Unsatisfied, got {other:?}"),
    }
    drop((dg, a, tags, steps));
    drop(Arc::try_unwrap(mpi).ok().expect("released"));
});

/// A chain of steps across the ranks where the step of tag 5 (on rank 1) fails or
/// panics; other ranks keep working on an independent set of slow steps meanwhile.
fn failing_run(mpi: &Arc<Mpi>, panic: bool) -> Result<herd_mpi::DistStats, DistError> {
    let p = mpi.size();
    let dg = DistGraph::new(mpi, "failing");
    let a = dg.items::<u32, u32>("a").with_consumed_on(move |&k| k as usize % p);
    let aa = a.clone();
    let steps =
        dg.steps_tuned("s", RoundRobin { items: a.clone(), size: p }, move |&k: &u32, ctx: &Ctx<'_>| {
            ctx.get(&aa, &k)?;
            if k == 5 {
                if panic {
                    panic!("panic in step 5");
                }
                return Err(StepError::msg("boom in step 5"));
            }
            if k < 5 {
                ctx.put(&aa, k + 1, k)?;
            } else {
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(())
        });
    let tags = dg.tags::<u32>("k");
    tags.prescribes(&steps);
    if mpi.rank() == 0 {
        for k in 0..6 {
            tags.put(k);
        }
        a.put(0, 0).unwrap();
        // slow independent steps 100.. on every rank, their items put up front
        for k in 100..100 + 8 * p as u32 {
            tags.put(k);
            a.put(k, k).unwrap();
        }
    }
    dg.set_stall_timeout(Duration::from_secs(60));
    let r = dg.wait();
    drop((dg, a, tags, steps));
    r
}

mpi_test!(fn a_failing_step_on_rank_1_stops_every_rank() ranks [2, 4] within 120 {
    let mpi = Arc::new(Mpi::init(Options::default()).unwrap());
    for panic in [false, true] {
        match failing_run(&mpi, panic) {
            Err(DistError::Failed { rank, message }) => {
                assert_eq!(rank, 5 % mpi.size(), "the failing rank is named");
                let want = if panic { "panicked: panic in step 5" } else { "boom in step 5" };
                assert!(message.contains(want) && message.contains("s(5)"), "{message}");
            }
            other => panic!("rank {}: expected Failed, got {other:?}", mpi.rank()),
        }
    }
    drop(Arc::try_unwrap(mpi).ok().expect("released"));
});
