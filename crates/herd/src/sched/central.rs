//! `central`: one LIFO queue shared by every participant. The simplest
//! scheduler and the baseline for the others: perfect balance, no locality,
//! one lock that every push and pop contends for.

use super::shared::SharedQueue;
use super::{Counters, JobRef, Scheduler, Stolen, Target};
use crate::shepherds::Shepherds;

/// See the module documentation.
pub(crate) struct Central {
    queue: SharedQueue,
    /// Participants sharing the queue.
    sharers: usize,
}

impl Central {
    pub(crate) fn new(shepherds: &Shepherds) -> Central {
        Central { queue: SharedQueue::default(), sharers: shepherds.of.len() }
    }
}

impl Scheduler for Central {
    #[inline]
    unsafe fn push(&self, _slot: usize, job: JobRef) -> Target {
        self.queue.push(job);
        Target::Anyone
    }

    #[inline]
    unsafe fn pop(&self, _slot: usize) -> Option<JobRef> {
        self.queue.pop_newest()
    }

    #[inline]
    unsafe fn wants_split(&self, _slot: usize) -> bool {
        self.queue.len() < self.sharers
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
        self.queue.push(job);
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
