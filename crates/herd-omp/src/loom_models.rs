//! loom models of the team protocols (run with `make test-loom`):
//! the worksharing ring (exclusive initialisation, publication, recycling
//! with a ring of two), the two-member barrier (writes before it are seen
//! after it), the tree barrier (with sleeping members: no lost wake-up, no
//! release before every member arrived, reuse), the barrier's task drain (no
//! member leaves while a task of the epoch is outstanding; the per-member
//! counts read in the right order; the drained epoch passed on to sleepers)
//! and the end-of-region drain (a finishing task wakes the sleeping master).
//! These drive the real `ws`/`team` functions; only the atomics and the wait
//! loop are loom's (`crate::wait`, whose model parker sleeps for real, so a
//! lost wake-up is a loom deadlock).
//!
//! Each model with sleeping members was checked to fail when the protocol is
//! weakened, with `HERD_OMP_WEAKEN=...` in the environment of the loom run (see
//! each model's comment for the failure loom reports).

use crate::icv::SchedKind;
use crate::team::Team;
use crate::thread::ThreadState;
use crate::ws::{self, LoopParams, Space};
use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize};
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

/// Three `single nowait` constructs met by three members in any
/// interleaving (one may run ahead through all three): each is claimed by
/// exactly one member. Fails with `HERD_OMP_WEAKEN=single_cas` (a claim by
/// a plain store after the check: two members claim one single).
#[test]
fn single_claimed_once() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        let team = Arc::new(Team::new(3, None));
        let wins: Arc<Vec<AtomicUsize>> = Arc::new((0..3).map(|_| AtomicUsize::new(0)).collect());
        let run = |team: Arc<Team>, wins: Arc<Vec<AtomicUsize>>, num: u32| {
            let ts = member(&team, num);
            for s in 0..3 {
                if ws::claim_single(&team, &ts) {
                    wins[s].fetch_add(1, Ordering::Relaxed);
                }
            }
        };
        let others: Vec<_> = (1..3)
            .map(|num| {
                let (t, w) = (team.clone(), wins.clone());
                loom::thread::spawn(move || run(t, w, num))
            })
            .collect();
        run(team, wins.clone(), 0);
        others.into_iter().for_each(|h| h.join().unwrap());
        for (s, w) in wins.iter().enumerate() {
            assert_eq!(w.load(Ordering::Relaxed), 1, "single {s}");
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
        team.task_created(0, 0);
        let (tt, dt) = (team.clone(), done.clone());
        let task = loom::thread::spawn(move || {
            dt.store(true, Ordering::Relaxed);
            tt.task_finished(0, 0);
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

/// Runs `f(team, me)` as member `me` of `team` on `threads` loom threads
/// (the model's main thread is member 0), each sleeping on its model parker;
/// returns each member's result, by member number.
pub(crate) fn members<R: Send + 'static>(
    team: &Arc<Team>,
    threads: usize,
    f: impl Fn(&Team, usize) -> R + Send + Sync + 'static,
) -> Vec<R> {
    let f = Arc::new(f);
    let handles: Vec<_> = (1..threads)
        .map(|me| {
            let (t, f) = (team.clone(), f.clone());
            loom::thread::spawn(move || {
                crate::wait::model_enter(&t.model_parkers[me]);
                f(&t, me)
            })
        })
        .collect();
    crate::wait::model_enter(&team.model_parkers[0]);
    let mut out = vec![f(team, 0)];
    out.extend(handles.into_iter().map(|h| h.join().unwrap()));
    out
}

/// The tree barrier, three members in a chain (fan-in 2: 0 ← 1 ← 2, so the
/// middle member both waits for a child and is released by its parent), two
/// consecutive barriers, members that sleep: a member's write before a
/// barrier is seen by every member after it (nobody is released before all
/// arrived), the `arrive` words are reused, and no wake-up is lost (loom
/// reports a deadlock otherwise). Weakened, it fails:
/// `HERD_OMP_WEAKEN=release_early` (parents release without waiting for
/// their children): "released before member 2 arrived";
/// `release_store` (the release written with a plain store instead of a
/// read-modify-write): deadlock, the lost wake-up; `sleeper_load` (the
/// child's check before sleeping a plain load): deadlock.
#[test]
fn tree_barrier_with_sleepers() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        let team = Arc::new(Team::with_fanin(3, None, 2));
        let data: Arc<Vec<AtomicUsize>> = Arc::new((0..3).map(|_| AtomicUsize::new(0)).collect());
        members(&team, 3, move |team, me| {
            let mut epoch = 0;
            for round in 1..=2 {
                data[me].store(round, Ordering::Relaxed);
                epoch = team.barrier(me, epoch);
                for (k, d) in data.iter().enumerate() {
                    assert!(d.load(Ordering::Relaxed) >= round, "released before member {k} arrived");
                }
            }
        });
    });
}

/// The drain with per-member counts: member 0 created task A before the
/// barrier; member 1 runs A, which creates B, finishes A, then runs and
/// finishes B, and drains; member 0 drains meanwhile (and may sleep). Member
/// 0 leaves only after B finished, and is woken. Weakened:
/// `HERD_OMP_WEAKEN=drain_order` (sum `created` before `finished`): member
/// 0 reads A's creation but not B's, then both A's finish — "left the drain
/// while task B was outstanding".
#[test]
fn drain_counts_and_wakes() {
    drain_a_task_and_its_child(|| Team::new(2, None));
}

/// The model of `drain_counts_and_wakes` on the two-member team `team()`
/// makes.
fn drain_a_task_and_its_child(team: fn() -> Team) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(move || {
        let team = Arc::new(team());
        let done_b = Arc::new(AtomicBool::new(false));
        team.task_created(0, 0);
        members(&team, 2, move |team, me| {
            if me == 1 {
                team.task_created(1, 0); // A creates B
                team.task_finished(1, 0); // A finishes
                done_b.store(true, Ordering::Relaxed);
                team.task_finished(1, 0); // B finishes
            }
            team.drain(me, 0, |_| false);
            assert!(done_b.load(Ordering::Relaxed), "left the drain while task B was outstanding");
        });
    });
}

/// The staggered drain: as `drain_counts_and_wakes` (member 1 runs task
/// A, which creates B, and finishes both; member 0 drains meanwhile and may
/// sleep), with each member summing the counts on every second spinning
/// check and reading the drained mark on the others: member 0 leaves only
/// after B finished, whether it saw the sums or member 1's mark, and is
/// woken. Weakened: `HERD_OMP_WEAKEN=drain_last_mark_only` (the check
/// before sleeping reads only the mark, so a member that did not sum on its
/// last spin sleeps past a drain finished meanwhile): deadlock.
#[test]
fn staggered_drain() {
    drain_a_task_and_its_child(|| Team::new(2, None).with_drain_every(2));
}

/// The drainers' mark and the wake-up chain: three members in a chain
/// (fan-in 2: 0 ← 1 ← 2), each summing on every second spinning check.
/// Member 0 runs the epoch's one task and drains; members 1 and 2 drain
/// meanwhile and may sleep. A member that enters the drain after another
/// marked it must still wake its neighbours: member 2 may be asleep in it,
/// and only member 1 wakes it. Weakened: `HERD_OMP_WEAKEN=drain_entry_mark`
/// (a drainer's mark ends the drain at entry, without the wakes — found by
/// the 64-member `drainers_sum_on_a_share_of_their_checks`, which hung):
/// deadlock.
#[test]
fn drainers_mark_passes_the_wake_on() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.check(|| {
        let team = Arc::new(Team::with_fanin(3, None, 2).with_drain_every(2));
        let done = Arc::new(AtomicBool::new(false));
        team.task_created(0, 0);
        members(&team, 3, move |team, me| {
            if me == 0 {
                done.store(true, Ordering::Relaxed);
                team.task_finished(0, 0);
            }
            assert!(team.drain(me, 0, |_| false));
            assert!(done.load(Ordering::Relaxed), "member {me} left the drain while the task ran");
        });
    });
}

/// The root's check at the release: three members in a chain (fan-in 2,
/// using the mark as a team of more than `DRAIN_SUMMERS` does);
/// member 0 created a task before the barrier and member 2 finished it
/// before arriving, so the root finds the epoch drained, marks it and
/// releases; every member skips its drain and sees the task's effects.
/// Weakened: `HERD_OMP_WEAKEN=release_early` (parents release without
/// waiting for their children, so the root may check before the finish is
/// counted; it then does not mark, and the members drain): loom reports a
/// deadlock (the early release also breaks the tree's arrival count).
#[test]
fn root_marks_a_drained_epoch() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        let team = Arc::new(Team::with_fanin(3, None, 2).with_drain_every(2));
        let done = Arc::new(AtomicBool::new(false));
        team.task_created(0, 0);
        members(&team, 3, move |team, me| {
            if me == 2 {
                done.store(true, Ordering::Relaxed);
                team.task_finished(2, 0);
            }
            assert_eq!(team.barrier(me, 0), 1);
            assert!(done.load(Ordering::Relaxed), "member {me} left the barrier before the task finished");
        });
    });
}

/// The end-of-region drain with two tasks finishing on two threads: each
/// finisher only wakes the master (it sums nothing); the master, woken by
/// the first finish, re-checks, finds the second outstanding and sleeps
/// again, and the second finish must wake it once more. Weakened:
/// `HERD_OMP_WEAKEN=end_wake`: deadlock.
#[test]
fn end_drain_two_finishers() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        let team = Arc::new(Team::new(3, None));
        let done = Arc::new(AtomicU32::new(0));
        team.task_created(0, 0);
        team.task_created(0, 0);
        let others: Vec<_> = (1..3)
            .map(|num| {
                let (t, d) = (team.clone(), done.clone());
                loom::thread::spawn(move || {
                    d.fetch_add(1, Ordering::Relaxed);
                    t.task_finished(num, 0);
                })
            })
            .collect();
        crate::wait::model_enter(&team.model_parkers[0]);
        crate::wait::until(|last| team.region_drained(0, last));
        team.region_done();
        assert_eq!(done.load(Ordering::Relaxed), 2, "the master left before both tasks finished");
        for o in others {
            o.join().unwrap();
        }
    });
}

/// The end-of-region drain: the master (every member has returned) waits
/// for the task member 1 still runs, and sleeps; the finishing task sees
/// `end_sleep` and wakes it. Weakened: `HERD_OMP_WEAKEN=end_wake` (the
/// finisher does not check): deadlock.
#[test]
fn end_drain_wakes_the_master() {
    loom::model(|| {
        let team = Arc::new(Team::new(2, None));
        let done = Arc::new(AtomicBool::new(false));
        team.task_created(0, 0);
        let (t2, d2) = (team.clone(), done.clone());
        let other = loom::thread::spawn(move || {
            d2.store(true, Ordering::Relaxed);
            t2.task_finished(1, 0);
        });
        crate::wait::model_enter(&team.model_parkers[0]);
        crate::wait::until(|last| team.region_drained(0, last));
        team.region_done();
        assert!(done.load(Ordering::Relaxed), "the master left before the task finished");
        other.join().unwrap();
    });
}

/// An ordered loop's turns (`ordered.rs`), two members with two chunks each
/// (member 0 holds turns 0 and 2, member 1 turns 1 and 3), members that
/// sleep: the turns are taken in order and each passer wakes the one
/// member waiting for the next turn (loom reports a deadlock if a wake-up
/// is lost). `keyed`: the table's slots are the turn modulo 2, as for a
/// dynamic loop of chunk 1; otherwise every turn maps to slot 0, so that
/// the two waiters collide and the loop falls back to waking the team.
/// Weakened, `HERD_OMP_WEAKEN=ordered-nowake` (the passer wakes nobody):
/// deadlock.
fn ordered_turns(keyed: bool) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(move || {
        let team = Arc::new(Team::new(2, None));
        let waiters = Arc::new(crate::ordered::TurnWaiters::new(2));
        let turn = Arc::new(loom::sync::atomic::AtomicU64::new(0));
        let taken = Arc::new(AtomicUsize::new(0));
        members(&team, 2, move |team, me| {
            let key = |t: u64| if keyed { (t % 2) as usize } else { 0 };
            for a in [me as u64, me as u64 + 2] {
                waiters.wait(&turn, a, key(a), me);
                assert_eq!(taken.fetch_add(1, Ordering::Relaxed) as u64, a, "turn taken out of order");
                waiters.pass(team, &turn, a + 1, key(a + 1));
            }
        });
    });
}

#[test]
fn ordered_turns_wake_their_waiter() {
    ordered_turns(true);
}

#[test]
fn ordered_turns_fall_back_to_waking_the_team() {
    ordered_turns(false);
}
