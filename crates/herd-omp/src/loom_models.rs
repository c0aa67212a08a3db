//! loom models of the team protocols (run with `make test-loom`):
//! the worksharing ring (exclusive initialisation, publication, recycling
//! with a ring of two), the dissemination barrier (writes before it are seen
//! after it) and the barrier's task drain (no member leaves while a task of
//! the epoch is outstanding). These drive the real `ws`/`team` functions;
//! only the atomics and the wait loop are loom's (`crate::wait`).

use crate::icv::SchedKind;
use crate::team::Team;
use crate::thread::ThreadState;
use crate::ws::{self, LoopParams, Space};
use loom::sync::atomic::{AtomicBool, AtomicUsize};
use loom::sync::Arc;
use std::sync::atomic::Ordering;

fn member(_team: &Team, num: u32) -> ThreadState {
    let ts = ThreadState::new();
    ts.num.set(num);
    ts
}

/// Three dynamic loops of 1, 2 and 3 iterations by two members on a ring of
/// two entries: each iteration is claimed exactly once, so no member read a
/// construct's parameters before its initialiser published them, and the
/// recycled entry was not reused early.
#[test]
fn ring_publishes_and_recycles() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 100_000;
    b.check(|| {
        let team = Arc::new(Team::new(2, None));
        let claims: Arc<Vec<AtomicUsize>> = Arc::new((0..6).map(|_| AtomicUsize::new(0)).collect());
        let run = |team: Arc<Team>, claims: Arc<Vec<AtomicUsize>>, num: u32| {
            let ts = member(&team, num);
            for s in 0..3u64 {
                let p = LoopParams {
                    count: s + 1,
                    kind: SchedKind::Dynamic,
                    chunk: 1,
                    ordered: false,
                    space: Space::Long { start: 0, incr: 1 },
                };
                for i in ws::model_claims(&team, &ts, p) {
                    // Iteration i of construct s lives at s*(s+1)/2 + i.
                    claims[(s * (s + 1) / 2 + i) as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        };
        let (t2, c2) = (team.clone(), claims.clone());
        let other = loom::thread::spawn(move || run(t2, c2, 1));
        run(team, claims.clone(), 0);
        other.join().unwrap();
        for (k, c) in claims.iter().enumerate() {
            assert_eq!(c.load(Ordering::Relaxed), 1, "iteration slot {k}");
        }
    });
}

/// Two barriers among two members: a write before a barrier is seen by the
/// other member after it.
#[test]
fn barrier_orders_writes() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 100_000;
    b.check(|| {
        let team = Arc::new(Team::new(2, None));
        let data: Arc<Vec<AtomicUsize>> = Arc::new((0..2).map(|_| AtomicUsize::new(0)).collect());
        let run = |team: Arc<Team>, data: Arc<Vec<AtomicUsize>>, me: usize| {
            let mut epoch = 0;
            for round in 1..=2 {
                data[me].store(round, Ordering::Relaxed);
                epoch = team.barrier(me, epoch);
                assert!(
                    data[1 - me].load(Ordering::Relaxed) >= round,
                    "a write before barrier {round} was not seen"
                );
            }
        };
        let (t2, d2) = (team.clone(), data.clone());
        let other = loom::thread::spawn(move || run(t2, d2, 1));
        run(team, data, 0);
        other.join().unwrap();
    });
}

/// A task of epoch 0 outstanding when a member reaches the barrier: it does
/// not leave before the task's completion, whose effects it then sees. (One
/// member, so that loom explores the drain itself; the rounds are covered by
/// `barrier_orders_writes`.)
#[test]
fn barrier_drains_tasks() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        let team = Arc::new(Team::new(1, None));
        let done = Arc::new(AtomicBool::new(false));
        team.pending[0].fetch_add(1, Ordering::Relaxed);
        let (tt, dt) = (team.clone(), done.clone());
        let task = loom::thread::spawn(move || {
            dt.store(true, Ordering::Relaxed);
            tt.pending[0].fetch_sub(1, Ordering::SeqCst);
        });
        assert_eq!(team.barrier(0, 0), 1);
        assert!(done.load(Ordering::Relaxed), "the member left the barrier before the task finished");
        task.join().unwrap();
    });
}

/// The barrier's sleep handshake (see `team`): a member signals with a
/// plain store into its own flag and, after its own wait, fences and checks
/// whether the member waiting for it announced sleeping; a member about to
/// sleep announces it (compare-exchange on its parker word), fences, and
/// re-checks the flag with a read-modify-write. Either the re-check sees the
/// signal or the signaller sees the announcement. Without the sleeper's
/// fence loom finds the lost wake-up.
#[test]
fn barrier_signal_wakes_a_sleeper() {
    use loom::sync::atomic::{fence, AtomicU32};
    loom::model(|| {
        let flag = Arc::new(AtomicU32::new(0));
        let parker = Arc::new(AtomicU32::new(0));
        let woken = Arc::new(AtomicBool::new(false));
        let (f2, p2, w2) = (flag.clone(), parker.clone(), woken.clone());
        let signaller = loom::thread::spawn(move || {
            f2.store(1, Ordering::Release);
            // ... its own wait happens here ...
            fence(Ordering::SeqCst);
            if p2.load(Ordering::SeqCst) == 1 {
                w2.store(true, Ordering::SeqCst);
            }
        });
        parker.compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst).unwrap();
        fence(Ordering::SeqCst);
        let saw = flag.fetch_add(0, Ordering::SeqCst);
        signaller.join().unwrap();
        if saw == 0 {
            assert!(woken.load(Ordering::SeqCst), "the sleeper missed the signal and was not woken");
        }
    });
}

/// Two members each signal, then both decide to sleep: they cannot both miss
/// the other's signal (no cycle of sleepers, which nobody would wake). With
/// the fence and the read-modify-write replaced by a relaxed store and load,
/// loom finds the store-buffering outcome where both miss.
#[test]
fn barrier_members_cannot_all_sleep() {
    use loom::sync::atomic::{fence, AtomicU32};
    loom::model(|| {
        let flags = Arc::new([AtomicU32::new(0), AtomicU32::new(0)]);
        let run = |flags: Arc<[AtomicU32; 2]>, me: usize| {
            flags[me].store(1, Ordering::Release);
            fence(Ordering::SeqCst);
            flags[1 - me].fetch_add(0, Ordering::SeqCst)
        };
        let f2 = flags.clone();
        let other = loom::thread::spawn(move || run(f2, 1));
        let saw0 = run(flags, 0);
        let saw1 = other.join().unwrap();
        assert!(saw0 == 1 || saw1 == 1, "both members missed the other's signal");
    });
}
