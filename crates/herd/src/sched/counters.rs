//! Per-worker scheduling counters: tasks run, loop chunks, local and remote
//! steals, failed steals, idle time, wakes and refusals.
//!
//! Each participant slot has its own cache line of counters. Only the
//! occupant of the slot writes them (a relaxed load and store, no
//! read-modify-write: one owner), anyone may read them (relaxed loads; a
//! snapshot taken while the pool runs is approximate, one taken while it is
//! idle is exact). The cost on the hot path is one store to a line the
//! worker already owns.

use crossbeam_utils::CachePadded;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// One slot's counters; see the module documentation.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) tasks: AtomicU64,
    pub(crate) chunks: AtomicU64,
    pub(crate) local_steals: AtomicU64,
    pub(crate) remote_steals: AtomicU64,
    pub(crate) stolen_tasks: AtomicU64,
    pub(crate) failed_steals: AtomicU64,
    pub(crate) idle_ns: AtomicU64,
    /// Region posts this participant sent (to its wake-tree children).
    pub(crate) posts: AtomicU64,
    /// Sleeping participants it woke with a system call for a region post
    /// or acknowledgement.
    pub(crate) wakes: AtomicU64,
    /// Jobs it took and refused in an admitting wait (`pool/admit.rs`).
    pub(crate) refusals: AtomicU64,
}

/// Adds `n` to a counter only its owner writes.
#[inline(always)]
pub(crate) fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

/// What one participant did since its pool was built (or since
/// [`Pool::reset_stats`](crate::Pool::reset_stats)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WorkerStats {
    /// Participant index (0 is the master's slot).
    pub index: usize,
    /// Its shepherd.
    pub shepherd: usize,
    /// Jobs (tasks, stolen join halves, scope spawns, lightweight-thread
    /// resumptions) it ran.
    pub tasks: u64,
    /// Loop chunks it claimed (dynamic, guided and adaptive schedules).
    pub chunks: u64,
    /// Jobs it took from another worker of its own shepherd's queues (`ws`:
    /// steals from a same-shepherd victim; shared-queue schedulers take from
    /// their shepherd's queue without stealing, so this stays 0 there).
    pub local_steals: u64,
    /// Steal operations that took work from another shepherd (`mts`: one
    /// chunk per operation, see [`stolen_tasks`](Self::stolen_tasks)).
    pub remote_steals: u64,
    /// Jobs moved by its remote steals.
    pub stolen_tasks: u64,
    /// Steal attempts that found nothing.
    pub failed_steals: u64,
    /// Time spent waiting with nothing to run, in nanoseconds (counted from
    /// the 64th spin of a wait, or from going to sleep if sooner: the first
    /// few hundred nanoseconds of a wait read no clock and are not counted).
    pub idle_ns: u64,
    /// Region posts this participant sent: the master to its children in
    /// the wake tree, each worker to its own (at most ⌈log₂ n⌉ per region).
    pub posts: u64,
    /// Participants it woke with a system call (futex) for a region post
    /// or acknowledgement.
    pub wakes: u64,
    /// Jobs it took (popped, stole or took from a refused queue) in an
    /// admitting wait and could not run, so handed on (`rt::Admit`): each
    /// is a wasted take, and a waiter whose job is taken this way waits
    /// for it to come back.
    pub refusals: u64,
}

impl WorkerStats {
    /// Idle time as a duration.
    pub fn idle(&self) -> Duration {
        Duration::from_nanos(self.idle_ns)
    }
}

/// The counters of every slot.
pub(crate) struct AllCounters {
    slots: Box<[CachePadded<Counters>]>,
}

impl AllCounters {
    pub(crate) fn new(n: usize) -> AllCounters {
        AllCounters { slots: (0..n).map(|_| CachePadded::new(Counters::default())).collect() }
    }

    #[inline(always)]
    pub(crate) fn of(&self, slot: usize) -> &Counters {
        &self.slots[slot]
    }

    /// A snapshot; `shepherd_of[i]` is slot `i`'s shepherd.
    pub(crate) fn snapshot(&self, shepherd_of: &[usize]) -> Vec<WorkerStats> {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        self.slots
            .iter()
            .enumerate()
            .map(|(i, c)| WorkerStats {
                index: i,
                shepherd: shepherd_of[i],
                tasks: get(&c.tasks),
                chunks: get(&c.chunks),
                local_steals: get(&c.local_steals),
                remote_steals: get(&c.remote_steals),
                stolen_tasks: get(&c.stolen_tasks),
                failed_steals: get(&c.failed_steals),
                idle_ns: get(&c.idle_ns),
                posts: get(&c.posts),
                wakes: get(&c.wakes),
                refusals: get(&c.refusals),
            })
            .collect()
    }

    /// Zeroes every counter. Approximate while the pool runs (a worker's
    /// concurrent increment may survive).
    pub(crate) fn reset(&self) {
        for c in self.slots.iter() {
            for a in [
                &c.tasks,
                &c.chunks,
                &c.local_steals,
                &c.remote_steals,
                &c.stolen_tasks,
                &c.failed_steals,
                &c.idle_ns,
                &c.posts,
                &c.wakes,
                &c.refusals,
            ] {
                a.store(0, Ordering::Relaxed);
            }
        }
    }
}
