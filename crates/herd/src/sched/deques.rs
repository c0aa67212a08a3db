//! `ws`: one Chase–Lev deque per participant (crossbeam-deque), LIFO for its
//! owner, FIFO for thieves, victims chosen at random (flat, Cilk style), plus
//! an injector for jobs from threads outside the pool. A steal from a victim
//! of the thief's own shepherd counts as local, from any other as remote.

use super::counters::bump;
use super::pending::Pending;
use super::{Counters, JobRef, Reclaim, Scheduler, Stolen, Target};
use crate::shepherds::Shepherds;
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use crossbeam_utils::CachePadded;
use std::cell::{Cell, UnsafeCell};
use std::sync::Arc;

/// What only the occupant of a slot touches: its deque's owner end and its
/// random-number state.
struct Own {
    deque: UnsafeCell<Worker<JobRef>>,
    rng: Cell<u64>,
}

/// Per-participant work-stealing deques; see the module documentation.
pub(crate) struct WorkStealing {
    own: Box<[CachePadded<Own>]>,
    stealers: Box<[Stealer<JobRef>]>,
    shepherd_of: Box<[usize]>,
    injector: Injector<JobRef>,
    pending: Arc<Pending>,
}

// SAFETY: `own[i]` is only accessed by the single thread occupying slot `i`
// (enforced by the pool: persistent workers own their slot, slot 0 is taken
// under the master lock, launch-and-join threads borrow slots of a region the
// master holds); everything else is Sync.
unsafe impl Sync for WorkStealing {}

impl WorkStealing {
    pub(crate) fn new(shepherds: &Shepherds, pending: Arc<Pending>) -> WorkStealing {
        let n = shepherds.of.len();
        let deques: Vec<Worker<JobRef>> = (0..n).map(|_| Worker::new_lifo()).collect();
        let stealers = deques.iter().map(|w| w.stealer()).collect();
        WorkStealing {
            own: deques
                .into_iter()
                .enumerate()
                .map(|(i, d)| {
                    let seed = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 1);
                    CachePadded::new(Own { deque: UnsafeCell::new(d), rng: Cell::new(seed | 1) })
                })
                .collect(),
            stealers,
            shepherd_of: shepherds.of.clone().into_boxed_slice(),
            injector: Injector::new(),
            pending,
        }
    }

    #[inline]
    unsafe fn own(&self, slot: usize) -> &Own {
        debug_assert!(slot < self.own.len());
        // SAFETY: slots are always `< own.len()` (one per participant).
        unsafe { self.own.get_unchecked(slot) }
    }

    #[inline]
    unsafe fn local(&self, slot: usize) -> &Worker<JobRef> {
        // SAFETY: the caller occupies `slot` (see the Sync impl).
        unsafe { &*self.own(slot).deque.get() }
    }

    /// A random victim index to start from (xorshift; owner-only state).
    fn random_start(&self, slot: usize) -> usize {
        // SAFETY: `steal` is only called by the occupant of `slot`.
        let rng = unsafe { &self.own(slot).rng };
        let mut x = rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rng.set(x);
        (x % self.stealers.len() as u64) as usize
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
        let n = self.stealers.len();
        loop {
            let mut retry = false;
            let start = self.random_start(slot);
            for k in 0..n {
                let v = (start + k) % n;
                if v == slot {
                    continue;
                }
                match self.stealers[v].steal() {
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

    fn inject(&self, job: JobRef) -> Target {
        self.injector.push(job);
        Target::Anyone
    }

    fn submit(&self, job: JobRef, _shepherd: usize) -> Target {
        self.inject(job)
    }

    fn has_work(&self, _slot: usize) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }
}
