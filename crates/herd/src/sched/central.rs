//! `central`: one LIFO queue shared by every participant. The simplest
//! scheduler and the baseline for the others: perfect balance, no locality,
//! one lock that every push and pop contends for.

use super::pending::{Pending, NO_SLOT};
use super::shared::SharedQueue;
use super::{Counters, JobRef, Reclaim, Scheduler, Stolen, Target};
use std::sync::Arc;

/// See the module documentation.
pub(crate) struct Central {
    queue: SharedQueue,
    /// Each slot's jobs still queued (lazy splitting).
    pending: Arc<Pending>,
}

impl Central {
    pub(crate) fn new(pending: Arc<Pending>) -> Central {
        Central { queue: SharedQueue::default(), pending }
    }
}

impl Scheduler for Central {
    #[inline]
    unsafe fn push(&self, slot: usize, job: JobRef) -> Target {
        self.queue.push(job, slot as u32, &self.pending);
        Target::Anyone
    }

    #[inline]
    unsafe fn pop(&self, _slot: usize) -> Option<JobRef> {
        self.queue.pop_newest(&self.pending)
    }

    #[inline]
    unsafe fn reclaim(&self, _slot: usize, job: JobRef) -> Reclaim {
        if self.queue.take_back(job, &self.pending) {
            Reclaim::Mine
        } else {
            Reclaim::Gone
        }
    }

    #[inline]
    unsafe fn local_len(&self, _slot: usize) -> usize {
        self.queue.len()
    }

    fn steal(&self, _slot: usize, counters: &Counters) -> Stolen {
        // There is nowhere else to look: `pop` already tried the one queue.
        super::counters::bump(&counters.failed_steals, 1);
        Stolen::default()
    }

    fn inject(&self, job: JobRef) -> Target {
        self.queue.push(job, NO_SLOT, &self.pending);
        Target::Anyone
    }

    fn submit(&self, job: JobRef, _shepherd: usize) -> Target {
        self.inject(job)
    }

    #[inline]
    fn has_work(&self, _slot: usize) -> bool {
        !self.queue.is_empty()
    }
}
