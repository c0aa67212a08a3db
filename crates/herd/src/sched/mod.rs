//! The task-scheduler boundary.
//!
//! Everything above this module (join, scope, loops, the worker loop) talks to
//! the scheduler only through [`Scheduler`]: push a job on the current
//! participant's queue, pop the newest local job, find work elsewhere, and
//! tell whether the local queue is empty. The foundation ships one scheduler,
//! [`WorkStealing`]: one Chase–Lev deque per participant (crossbeam-deque),
//! LIFO locally, FIFO steals, victims tried nearest first by topology
//! distance, plus an injector for jobs from threads outside the pool. The
//! hierarchical (shepherd) schedulers of later work implement the same
//! methods.

pub(crate) mod job;

pub(crate) use job::{HeapJob, JobRef, JobResult, StackJob};

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use std::cell::UnsafeCell;

/// Per-participant work-stealing deques; see the module documentation.
pub(crate) struct WorkStealing {
    /// Owner ends, one per participant slot. Only the thread occupying slot
    /// `i` touches `locals[i]` (the pool's slot-occupancy invariant).
    locals: Box<[UnsafeCell<Worker<JobRef>>]>,
    stealers: Box<[Stealer<JobRef>]>,
    /// For each slot, the other slots nearest first.
    victims: Box<[Box<[usize]>]>,
    injector: Injector<JobRef>,
}

// SAFETY: `locals[i]` is only accessed by the single thread occupying slot `i`
// (enforced by the pool: persistent workers own their slot, slot 0 is taken
// under the master lock, launch-and-join threads borrow slots of a region the
// master holds); everything else is Sync.
unsafe impl Sync for WorkStealing {}

/// The interface between the runtime and a task scheduler.
pub(crate) trait Scheduler: Sync {
    /// Pushes on slot `slot`'s queue. Caller occupies `slot`.
    unsafe fn push(&self, slot: usize, job: JobRef);
    /// Pops the newest job of `slot`'s own queue. Caller occupies `slot`.
    unsafe fn pop(&self, slot: usize) -> Option<JobRef>;
    /// True when `slot`'s own queue holds nothing. Caller occupies `slot`.
    unsafe fn local_is_empty(&self, slot: usize) -> bool;
    /// Jobs in `slot`'s own queue. Caller occupies `slot`.
    unsafe fn local_len(&self, slot: usize) -> usize;
    /// Takes work from elsewhere (other slots, the injector) for `slot`.
    fn steal(&self, slot: usize) -> Option<JobRef>;
    /// Queues a job from outside the pool.
    fn inject(&self, job: JobRef);
    /// True when some queue visibly holds work (used before sleeping).
    fn has_work(&self) -> bool;
}

impl WorkStealing {
    /// `victims[i]` lists the slots `i` steals from, nearest first.
    pub(crate) fn new(victims: Vec<Vec<usize>>) -> WorkStealing {
        let locals: Vec<Worker<JobRef>> = victims.iter().map(|_| Worker::new_lifo()).collect();
        let stealers = locals.iter().map(|w| w.stealer()).collect();
        WorkStealing {
            locals: locals.into_iter().map(UnsafeCell::new).collect(),
            stealers,
            victims: victims.into_iter().map(Vec::into_boxed_slice).collect(),
            injector: Injector::new(),
        }
    }

    #[inline]
    unsafe fn local(&self, slot: usize) -> &Worker<JobRef> {
        debug_assert!(slot < self.locals.len());
        // SAFETY: slots are always `< locals.len()` (one deque per participant)
        // and the caller occupies `slot` (see the Sync impl).
        unsafe { &*self.locals.get_unchecked(slot).get() }
    }
}

impl Scheduler for WorkStealing {
    #[inline]
    unsafe fn push(&self, slot: usize, job: JobRef) {
        // SAFETY: forwarded.
        unsafe { self.local(slot).push(job) }
    }

    #[inline]
    unsafe fn pop(&self, slot: usize) -> Option<JobRef> {
        // SAFETY: forwarded.
        unsafe { self.local(slot).pop() }
    }

    #[inline]
    unsafe fn local_is_empty(&self, slot: usize) -> bool {
        // SAFETY: forwarded.
        unsafe { self.local(slot).is_empty() }
    }

    #[inline]
    unsafe fn local_len(&self, slot: usize) -> usize {
        // SAFETY: forwarded.
        unsafe { self.local(slot).len() }
    }

    fn steal(&self, slot: usize) -> Option<JobRef> {
        loop {
            let mut retry = false;
            for &v in self.victims[slot].iter() {
                match self.stealers[v].steal() {
                    Steal::Success(job) => return Some(job),
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            match self.injector.steal() {
                Steal::Success(job) => return Some(job),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            if !retry {
                return None;
            }
        }
    }

    fn inject(&self, job: JobRef) {
        self.injector.push(job);
    }

    fn has_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }
}
