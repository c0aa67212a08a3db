//! The start gate of a region with task reductions (`GOMP_parallel_reductions`):
//! no member starts its body before every member has arrived (why: see
//! `RegionReductions` in `reduction.rs`).
//!
//! **Arrival: a combining tree.** Members are grouped `FANIN` to a leaf
//! counter, leaves `FANIN` to a counter of the next level, up to one root.
//! A member adds one to its leaf; the last arrival at a node (the one whose
//! add completes the node's count of children) goes on to the parent, the
//! others stop there. The last arrival at the root opens the gate. So each
//! counter's line is written by at most `FANIN` members, and the opener
//! makes `⌈log_FANIN n⌉` adds — not `n` adds to one line, the first
//! version's counter.
//!
//! **Ordering.** The adds are `AcqRel`: the last arrival at a node acquires
//! what the earlier ones released, and releases it, with its own writes, to
//! the parent; the opener's `SeqCst` swap of `open` releases everything to
//! the members, which read `open` with `Acquire` (and a `SeqCst`
//! read-modify-write before sleeping). A member past the gate sees every
//! member's writes from before its arrival.
//!
//! **Waiting runs no task** (`wait::until_without_tasks`): the gate exists so
//! that no task runs on a member before its body has started. (The team's
//! tree barrier, tried in a8a0a6d and reverted in 41a0353, is a task
//! scheduling point: a member still waiting there ran a task a member
//! already released had created.) It spins, then sleeps; the opener wakes
//! the sleepers after its swap (`Team::wake_all`: one load of the pool's
//! count of sleeping waiters when nobody sleeps, else herd's wake-up
//! cascade, in which no thread issues more than ~8 wake-ups) — the
//! conditional-wake rule, so no wake-up is lost.

use crate::team::Team;
use crate::wait::{self, AtomicU32, Observe};
use crossbeam_utils::CachePadded;
use std::sync::atomic::Ordering;

/// Children per counter of the arrival tree.
pub(crate) const FANIN: usize = 4;

/// A one-shot start gate for `n` members (see the module documentation).
pub(crate) struct StartGate {
    /// The counters, leaves first, then each level up to the root (one node).
    levels: Vec<Box<[CachePadded<AtomicU32>]>>,
    /// Members.
    n: usize,
    fanin: usize,
    /// 1 once every member arrived.
    open: CachePadded<AtomicU32>,
}

impl StartGate {
    /// A closed gate for `n >= 1` members.
    pub(crate) fn new(n: usize) -> StartGate {
        StartGate::with_fanin(n, FANIN)
    }

    /// A closed gate for `n >= 1` members with `fanin >= 2` children per
    /// counter (models and tests use small ones).
    pub(crate) fn with_fanin(n: usize, fanin: usize) -> StartGate {
        assert!(n >= 1 && fanin >= 2);
        let mut levels = Vec::new();
        let mut below = n;
        loop {
            let width = below.div_ceil(fanin);
            levels.push((0..width).map(|_| CachePadded::new(AtomicU32::new(0))).collect());
            if width == 1 {
                break;
            }
            below = width;
        }
        StartGate { levels, n, fanin, open: CachePadded::new(AtomicU32::new(0)) }
    }

    /// Member `me` arrives; returns whether it was the last, which opened
    /// the gate (the caller then wakes the others).
    pub(crate) fn arrive(&self, me: usize) -> bool {
        debug_assert!(me < self.n);
        let order = if wait::weakened("gate-relaxed") { Ordering::Relaxed } else { Ordering::AcqRel };
        let mut below = self.n;
        let mut child = me;
        for level in &self.levels {
            let node = child / self.fanin;
            let want = (below - node * self.fanin).min(self.fanin) as u32;
            if level[node].fetch_add(1, order) + 1 != want {
                return false;
            }
            below = level.len();
            child = node;
        }
        let order = if wait::weakened("gate-relaxed") { Ordering::Relaxed } else { Ordering::SeqCst };
        self.open.swap(1, order);
        true
    }

    /// Whether every member arrived (`last`: the check before sleeping, see
    /// `wait::until`).
    fn is_open(&self, last: bool) -> bool {
        self.open.observe(last) != 0
    }

    /// Member `me` of `team` (`None`: a member alone) passes the gate:
    /// arrives, and waits, running no task, until every member arrived.
    pub(crate) fn pass(&self, team: Option<&Team>, me: usize) {
        if self.arrive(me) {
            if let Some(t) = team.filter(|_| !wait::weakened("gate-nowake")) {
                t.wake_all();
            }
            return;
        }
        wait::until_without_tasks(|last| self.is_open(last));
    }

    /// The writes each counter's line received so far (its value: every
    /// write is an add of one), leaves first; for the tests.
    #[cfg(all(test, not(loom)))]
    fn writes(&self) -> Vec<Vec<u32>> {
        self.levels.iter().map(|l| l.iter().map(|c| c.load(Ordering::Relaxed)).collect()).collect()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{StartGate, FANIN};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// 64 members arriving one by one in a scrambled order: only the very
    /// last opens the gate; no counter's line is written more than
    /// `FANIN` times (the single counter it replaces took 64); the tree has
    /// ⌈log_FANIN 64⌉ levels, so the opener made that many adds.
    #[test]
    fn arrival_writes_each_line_at_most_fanin_times() {
        let n = 64;
        let gate = StartGate::new(n);
        let order: Vec<usize> = (0..n).map(|k| (k * 37 + 11) % n).collect();
        for (k, &me) in order.iter().enumerate() {
            assert_eq!(gate.arrive(me), k == n - 1, "arrival {k} (member {me})");
        }
        let writes = gate.writes();
        assert_eq!(writes.len(), 3, "levels for 64 members at fan-in {FANIN}");
        let max = writes.iter().flatten().copied().max().unwrap();
        assert!(max as usize <= FANIN, "a counter's line written {max} times");
        // Every arrival is counted once at its leaf and once per level it climbed.
        assert_eq!(writes[0].iter().sum::<u32>() as usize, n);
        assert_eq!(writes.last().unwrap(), &vec![FANIN as u32]);
    }

    /// Uneven trees (sizes that are not powers of the fan-in, fan-in 2 and
    /// 3): the gate opens exactly at the last arrival.
    #[test]
    fn uneven_sizes_open_at_the_last_arrival() {
        for fanin in [2, 3, 4] {
            for n in 1..=40 {
                let gate = StartGate::with_fanin(n, fanin);
                for me in (0..n).rev() {
                    assert_eq!(gate.arrive(me), me == 0, "n {n} fan-in {fanin} member {me}");
                }
            }
        }
    }

    /// 64 threads pass the gate: each sees every member's write from before
    /// its arrival.
    #[test]
    fn members_pass_after_every_arrival() {
        let n = 64;
        let gate = StartGate::new(n);
        let before: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        std::thread::scope(|s| {
            for me in 0..n {
                let (gate, before) = (&gate, &before);
                s.spawn(move || {
                    before[me].store(1, Ordering::Relaxed);
                    gate.pass(None, me);
                    let seen = before.iter().filter(|b| b.load(Ordering::Relaxed) == 1).count();
                    assert_eq!(seen, n, "member {me} passed before every member arrived");
                });
            }
        });
    }
}

/// The gate with three members on a tree of fan-in 2 (members 0 and 1 share
/// a leaf, member 2 climbs alone to the root), members that sleep (model
/// parkers): each member's write before the gate is seen by every member
/// after it, and nobody sleeps for ever. Weakened, it fails:
/// `HERD_OMP_WEAKEN=gate-relaxed` (`Relaxed` adds and open): loom reports
/// the unordered read of a member's write as a causality violation;
/// `gate-nowake` (the opener wakes nobody): deadlock.
#[cfg(all(test, loom))]
mod model {
    use super::StartGate;
    use crate::loom_models::members;
    use crate::team::Team;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    /// Each member's cell, written by its owner before the gate and read by
    /// everyone after it; loom checks that those accesses are ordered.
    struct Cells(Vec<UnsafeCell<u32>>);

    // SAFETY: a cell is written only by its member before the gate and read
    // only after it; the gate orders the two (what the model checks: loom
    // reports any unordered access).
    unsafe impl Sync for Cells {}

    #[test]
    fn loom_start_gate_three_members() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(2);
        b.check(|| {
            let team = Arc::new(Team::new(3, None));
            let gate = Arc::new(StartGate::with_fanin(3, 2));
            let before = Arc::new(Cells((0..3).map(|_| UnsafeCell::new(0)).collect()));
            members(&team, 3, move |team, me| {
                // SAFETY: member `me` alone writes its cell, before the gate.
                before.0[me].with_mut(|p| unsafe { *p = 1 });
                gate.pass(Some(team), me);
                for (k, b) in before.0.iter().enumerate() {
                    // SAFETY: read after the gate, which every write precedes.
                    let v = b.with(|p| unsafe { *p });
                    assert_eq!(v, 1, "member {me} passed before member {k} arrived");
                }
            });
        });
    }
}
