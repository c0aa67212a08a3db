//! A team: the threads of one parallel region, its barrier, its worksharing
//! ring and its count of outstanding tasks.
//!
//! **Barrier protocol** (dissemination barrier with a task drain). Barrier
//! number `b` (each thread counts its barriers; OpenMP makes every member
//! meet the same ones) has `ceil(log2 n)` rounds; in round `k`, member `i`
//! stores `b` into its *own* flag `k` (a plain `Release` store: the signal
//! costs no stall) and waits until the flag `k` of member `(i - 2^k) mod n`
//! has reached `b`; then it issues a `SeqCst` fence and wakes member
//! `(i + 2^k) mod n` if that one sleeps. A member about to sleep (in
//! `herd::rt::wait_until`, after announcing it on its parker with a `SeqCst`
//! compare-exchange) issues a `SeqCst` fence and re-checks with a
//! read-modify-write. No lost wake-up: if the sleeper's re-check reads a
//! value before the signal, it precedes the signaller's later fence in the
//! single total order, so the signaller's `SeqCst` load of the sleeper's
//! parker sees the announcement; and no cycle of sleepers: every sleeper's
//! fence would have to precede its predecessor's in that order, around the
//! ring. After the last round every member has arrived. Then each
//! member waits, running tasks, until the team's count of outstanding tasks
//! *of this epoch* is zero. Tasks are counted by the epoch of their creation
//! (`pending[epoch & 1]`): a member that leaves the barrier early and creates
//! a task of the next epoch cannot hold back members still draining this one,
//! and a count cannot rise again once it reached zero with all members in the
//! barrier (only tasks of the epoch create tasks of the epoch). The task whose
//! completion brings a count to zero wakes every member.
//!
//! Two threads: one round; measured about 30 ns above one cache-line round
//! trip between them (BENCHMARKS.md).

use crate::parallel::Spec;
use crate::task::Task;
use crate::wait::{self, AtomicU32, AtomicUsize, Observe};
use crate::ws::WorkShare;
use crossbeam_utils::CachePadded;
use herd::rt::PoolHandle;
use std::cell::Cell;
use std::sync::atomic::Ordering;

/// Worksharing constructs a member may run ahead of the slowest (nowait).
#[cfg(not(loom))]
pub(crate) const WS_RING: usize = 8;
/// A short ring under loom, so that recycling is explored.
#[cfg(loom)]
pub(crate) const WS_RING: usize = 2;
const MAX_ROUNDS: usize = 16;

/// The threads of one parallel region; see the module documentation.
pub(crate) struct Team {
    pub n: usize,
    /// Nesting level of the region (1: outermost).
    pub level: Cell<u32>,
    /// Active (more than one thread) regions enclosing and including this one.
    pub active_level: Cell<u32>,
    /// The encountering thread's team and number there (null at level 1).
    pub parent: Cell<*const Team>,
    pub parent_num: Cell<u32>,
    /// Wakes members; `None` for a team of one.
    pub handle: Option<PoolHandle>,
    rounds: u32,
    flags: Box<[CachePadded<[AtomicU32; MAX_ROUNDS]>]>,
    /// Outstanding deferred tasks by creation epoch parity.
    pub pending: [CachePadded<AtomicUsize>; 2],
    pub ws: Box<[CachePadded<WorkShare>]>,
    /// Each member's implicit task; reused region after region.
    pub implicit: Box<[CachePadded<Task>]>,
    /// Where the next region's worksharing and barrier numbering starts
    /// (written by the master between regions).
    pub ws_base: Cell<u64>,
    pub epoch_base: Cell<u32>,
    /// What the members run (written by the master before a region, and
    /// only when it differs from the previous region's, so that members of
    /// repeated regions find it in their caches).
    pub spec: Cell<Option<Spec>>,
    /// The master's worksharing and barrier numbers at the end of its share.
    pub end: CachePadded<Cell<(u64, u32)>>,
}

// SAFETY: the `Cell` fields are written only by the master between regions
// (or while building the team) and read by members during a region, after the
// post that starts it; everything shared during a region is atomic.
unsafe impl Sync for Team {}
// SAFETY: as above.
unsafe impl Send for Team {}

impl Team {
    pub(crate) fn new(n: usize, handle: Option<PoolHandle>) -> Team {
        let rounds = if n <= 1 { 0 } else { usize::BITS - (n - 1).leading_zeros() };
        assert!((rounds as usize) <= MAX_ROUNDS);
        Team {
            n,
            level: Cell::new(0),
            active_level: Cell::new(0),
            parent: Cell::new(std::ptr::null()),
            parent_num: Cell::new(0),
            handle,
            rounds,
            flags: (0..n).map(|_| CachePadded::new(Default::default())).collect(),
            pending: Default::default(),
            ws: (0..WS_RING).map(|i| CachePadded::new(WorkShare::new(i as u64))).collect(),
            implicit: (0..n).map(|_| CachePadded::new(Task::implicit_blank())).collect(),
            ws_base: Cell::new(0),
            epoch_base: Cell::new(0),
            spec: Cell::new(None),
            end: CachePadded::new(Cell::new((0, 0))),
        }
    }

    /// Wakes every member that sleeps (after the read-modify-write that made
    /// its condition true).
    pub(crate) fn wake_all(&self) {
        if let Some(h) = &self.handle {
            for i in 0..self.n {
                h.wake(i);
            }
        }
    }

    /// Wakes member `i` if it sleeps.
    #[inline]
    pub(crate) fn wake(&self, i: usize) {
        if let Some(h) = &self.handle {
            h.wake(i);
        }
    }

    /// True when no task of `epoch` is outstanding; `last`: the check before
    /// sleeping (a read-modify-write).
    #[inline]
    pub(crate) fn drained(&self, epoch: u32, last: bool) -> bool {
        self.pending[(epoch & 1) as usize].observe(last) == 0
    }

    /// True when no task of any epoch is outstanding.
    pub(crate) fn all_drained(&self, last: bool) -> bool {
        self.drained(0, last) && self.drained(1, last)
    }

    /// The team barrier for member `me`, whose implicit task has passed
    /// `epoch` barriers; returns the new epoch. Runs tasks while it waits.
    pub(crate) fn barrier(&self, me: usize, epoch: u32) -> u32 {
        let number = epoch.wrapping_add(1);
        if self.n > 1 {
            let reached = |v: u32| v.wrapping_sub(number) as i32 >= 0;
            for k in 0..self.rounds as usize {
                // Partners (me ± 2^k) mod n, without a division.
                let step = 1 << k;
                let to = if me + step >= self.n { me + step - self.n } else { me + step };
                let from = if me >= step { me - step } else { me + self.n - step };
                // Signal by a plain store into our own flag: no stall.
                let mine = &self.flags[me][k];
                mine.store(number, Ordering::Release);
                let theirs = &self.flags[from][k];
                wait::until(|last| {
                    if last {
                        // About to sleep: order our signal before the
                        // re-check (see the module documentation).
                        wait::fence(Ordering::SeqCst);
                    }
                    reached(theirs.observe(last))
                });
                // The member waiting for our signal may have gone to sleep
                // before it saw it: wake it (cheap now: the store has long
                // left the store buffer).
                wait::fence(Ordering::SeqCst);
                self.wake(to);
            }
        }
        wait::until(|last| self.drained(epoch, last));
        number
    }
}
