//! `ws`: one Chase–Lev deque per participant (crossbeam-deque), LIFO for its
//! owner, FIFO for thieves, victims chosen at random (flat, Cilk style), plus
//! an injector for jobs from threads outside the pool. A steal from a victim
//! of the thief's own shepherd counts as local, from any other as remote.

use super::counters::bump;
use super::owned::OwnedDeques;
use super::pending::Pending;
use super::{Counters, JobRef, Reclaim, Scheduler, Stolen, Target};
use crate::shepherds::Shepherds;
use crossbeam_deque::{Injector, Steal, Worker};
use std::sync::Arc;

/// Per-participant work-stealing deques; see the module documentation.
pub(crate) struct WorkStealing {
    deques: OwnedDeques,
    shepherd_of: Box<[usize]>,
    injector: Injector<JobRef>,
    pending: Arc<Pending>,
}

impl WorkStealing {
    pub(crate) fn new(shepherds: &Shepherds, pending: Arc<Pending>) -> WorkStealing {
        WorkStealing {
            deques: OwnedDeques::new(shepherds.of.len()),
            shepherd_of: shepherds.of.clone().into_boxed_slice(),
            injector: Injector::new(),
            pending,
        }
    }

    #[inline]
    unsafe fn local(&self, slot: usize) -> &Worker<JobRef> {
        // SAFETY: forwarded (the caller occupies `slot`).
        unsafe { self.deques.local(slot) }
    }
}

impl Scheduler for WorkStealing {
    #[inline]
    unsafe fn push(&self, slot: usize, job: JobRef) -> Target {
        self.pending.add(slot as u32);
        // SAFETY: forwarded.
        unsafe { self.local(slot).push(job) };
        Target::Anyone
    }

    #[inline]
    unsafe fn pop(&self, slot: usize) -> Option<JobRef> {
        // SAFETY: forwarded.
        let job = unsafe { self.local(slot).pop() }?;
        self.pending.sub(slot as u32);
        Some(job)
    }

    #[inline]
    unsafe fn reclaim(&self, slot: usize, job: JobRef) -> Reclaim {
        // SAFETY: forwarded.
        match unsafe { self.pop(slot) } {
            Some(j) if j == job => Reclaim::Mine,
            Some(other) => Reclaim::Other(other),
            None => Reclaim::Gone,
        }
    }

    #[inline]
    unsafe fn local_len(&self, slot: usize) -> usize {
        // SAFETY: forwarded.
        unsafe { self.local(slot).len() }
    }

    fn steal(&self, slot: usize, counters: &Counters) -> Stolen {
        let n = self.deques.stealers.len();
        loop {
            let mut retry = false;
            // SAFETY: only the occupant of `slot` steals for it.
            let start = unsafe { self.deques.random_below(slot, n) };
            for k in 0..n {
                let v = (start + k) % n;
                // Empty by its owner's count: not looked at (see `owned.rs`).
                if v == slot || !self.deques.may_hold(v, &self.pending) {
                    continue;
                }
                match self.deques.steal(v) {
                    Steal::Success(job) => {
                        self.pending.sub(v as u32);
                        if self.shepherd_of[v] == self.shepherd_of[slot] {
                            bump(&counters.local_steals, 1);
                        } else {
                            bump(&counters.remote_steals, 1);
                            bump(&counters.stolen_tasks, 1);
                        }
                        return Stolen { job: Some(job), wake: 0 };
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            match self.injector.steal() {
                Steal::Success(job) => return Stolen { job: Some(job), wake: 0 },
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            if !retry {
                bump(&counters.failed_steals, 1);
                return Stolen::default();
            }
        }
    }

    fn steal_one(&self, slot: usize, counters: &Counters) -> Option<JobRef> {
        self.steal(slot, counters).job
    }

    fn private_pop(&self) -> bool {
        true
    }

    fn inject(&self, job: JobRef) -> Target {
        self.injector.push(job);
        Target::Anyone
    }

    fn submit(&self, job: JobRef, _shepherd: usize) -> Target {
        self.inject(job)
    }

    fn has_work(&self, _slot: usize) -> bool {
        // The deques by their owners' counts, as `mts.rs` (why no sleeper
        // misses a job there).
        !self.injector.is_empty() || self.deques.any_may_hold(&self.pending)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::model::{id, job, machine};
    use super::*;

    /// An idle look at 15 empty victims looks at none of their deques, and
    /// a queued job is still found by every other participant.
    #[test]
    fn idle_looks_probe_no_empty_deque() {
        let sh = machine("l3:2 core:8 pu:1");
        let ws = WorkStealing::new(&sh, Arc::new(Pending::new(16)));
        let c = Counters::default();
        for _ in 0..100 {
            for slot in 0..16 {
                assert!(ws.steal(slot, &c).job.is_none());
            }
        }
        assert_eq!(ws.deques.probes.load(std::sync::atomic::Ordering::Relaxed), 0);
        assert!(!ws.has_work(0));
        for thief in (0..16).filter(|&t| t != 7) {
            // SAFETY: this thread stands for slot 7 here.
            unsafe { ws.push(7, job(thief)) };
            assert!(ws.has_work(thief), "a queued job is seen before sleeping");
            assert_eq!(ws.steal(thief, &c).job.map(id), Some(thief));
        }
    }
}
