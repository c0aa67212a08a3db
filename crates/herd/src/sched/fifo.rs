//! `fifo`: Qthreads' original scheduler. One FIFO queue per shepherd; a new
//! job goes to the next shepherd in round-robin order (each participant keeps
//! its own turn), workers take the oldest job of their own shepherd's queue
//! and never steal. Balance comes only from the round-robin placement.

use super::pending::{Pending, NO_SLOT};
use super::shared::SharedQueue;
use super::{Counters, JobRef, Reclaim, Scheduler, Stolen, Target};
use crate::shepherds::Shepherds;
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// See the module documentation.
pub(crate) struct Fifo {
    queues: Box<[CachePadded<SharedQueue>]>,
    shepherd_of: Box<[usize]>,
    /// Each slot's next shepherd (only its occupant touches it).
    turn: Box<[CachePadded<Cell<usize>>]>,
    /// The next shepherd for jobs from outside the pool.
    outside_turn: AtomicUsize,
    /// Each slot's jobs still queued (lazy splitting).
    pending: Arc<Pending>,
    /// For each shepherd, its first (lowest) participant index: a shepherd
    /// takes part in a region of `team` participants iff that is `< team`.
    first: Box<[usize]>,
    /// Participants of the running region (see `Registry::set_team`): jobs go
    /// only to shepherds with a member in it, or they would never run.
    team: AtomicUsize,
}

// SAFETY: `turn[i]` is only touched by the occupant of slot `i` (the pool's
// slot-occupancy invariant); the queues are Sync.
unsafe impl Sync for Fifo {}

impl Fifo {
    pub(crate) fn new(shepherds: &Shepherds, pending: Arc<Pending>) -> Fifo {
        let n = shepherds.of.len();
        Fifo {
            queues: (0..shepherds.len()).map(|_| CachePadded::new(SharedQueue::default())).collect(),
            shepherd_of: shepherds.of.clone().into_boxed_slice(),
            // Start each participant at its own shepherd.
            turn: (0..n).map(|i| CachePadded::new(Cell::new(shepherds.of[i]))).collect(),
            outside_turn: AtomicUsize::new(0),
            first: shepherds.members.iter().map(|m| m[0]).collect(),
            pending,
            team: AtomicUsize::new(n),
        }
    }

    /// Shepherd `h`, or the first one after it with a member in the team
    /// (shepherd 0 holds the master, so there always is one).
    #[inline]
    fn in_team(&self, mut h: usize) -> usize {
        let team = self.team.load(Ordering::Relaxed);
        while self.first[h] >= team {
            h = if h + 1 == self.queues.len() { 0 } else { h + 1 };
        }
        h
    }

    #[inline]
    fn own(&self, slot: usize) -> &SharedQueue {
        &self.queues[self.shepherd_of[slot]]
    }
}

impl Scheduler for Fifo {
    #[inline]
    unsafe fn push(&self, slot: usize, job: JobRef) -> Target {
        let turn = &self.turn[slot];
        let h = self.in_team(turn.get());
        turn.set(if h + 1 == self.queues.len() { 0 } else { h + 1 });
        self.queues[h].push(job, slot as u32, &self.pending);
        Target::Shepherd(h)
    }

    #[inline]
    unsafe fn pop(&self, slot: usize) -> Option<JobRef> {
        self.own(slot).pop_oldest(&self.pending)
    }

    #[inline]
    unsafe fn reclaim(&self, _slot: usize, job: JobRef) -> Reclaim {
        // Round-robin placement: the job may be in any shepherd's queue.
        if self.queues.iter().any(|q| q.take_back(job, &self.pending)) {
            Reclaim::Mine
        } else {
            Reclaim::Gone
        }
    }

    #[inline]
    unsafe fn local_len(&self, slot: usize) -> usize {
        self.own(slot).len()
    }

    fn steal(&self, _slot: usize, counters: &Counters) -> Stolen {
        // No stealing: `pop` already tried the shepherd's queue.
        super::counters::bump(&counters.failed_steals, 1);
        Stolen::default()
    }

    fn inject(&self, job: JobRef) -> Target {
        let h = self.outside_turn.fetch_add(1, Ordering::Relaxed) % self.queues.len();
        self.submit(job, self.in_team(h))
    }

    fn submit(&self, job: JobRef, shepherd: usize) -> Target {
        self.queues[shepherd].push(job, NO_SLOT, &self.pending);
        Target::Shepherd(shepherd)
    }

    #[inline]
    fn has_work(&self, slot: usize) -> bool {
        !self.own(slot).is_empty()
    }

    fn set_team(&self, n: usize) {
        self.team.store(n, Ordering::Relaxed);
    }
}
