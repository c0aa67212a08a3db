//! `lifo`: MAESTRO's multi-threaded shepherds as the paper builds them
//! (maestro-qthreads-scheduling.txt §3.3): one LIFO queue per shepherd,
//! shared by its workers under a lock, so that a task and the tasks it
//! spawns meet in the cache the shepherd shares. Every push and pop takes
//! the shepherd's lock, so it pays only for small shepherds (an L2, a
//! 4-core cluster: `HERD_SHEPHERD=l2` or `HERD_WORKERS_PER_SHEPHERD=4`);
//! the default `mts` (`mts.rs`) keeps the stealing policy on per-worker
//! deques.
//!
//! **Remote steal protocol.** A worker whose shepherd queue is empty tries to
//! become its shepherd's *stealer* (a compare-exchange on the shepherd's
//! `stealing` flag). Only the winner steals: it visits the other shepherds
//! nearest first (topology distance) and from the first non-empty one takes
//! a chunk of its *oldest* jobs (the largest pieces of a divide-and-conquer
//! tree) under that queue's lock — `HERD_STEAL_CHUNK` jobs, by default as
//! many as its shepherd has workers, but never more than half of the
//! victim's queue (rounded up), so that the victim's own workers keep their
//! share and a chunk is not stolen back and forth between idle shepherds
//! (taking up to the whole chunk, jobs were moved about twice each before
//! running on the 4-domain synthetic machine; with the half rule remote
//! steals fell about five-fold). It keeps the oldest to run and pushes
//! the rest on its own shepherd's queue, then clears the flag; the caller
//! wakes the siblings for them. The losers of the compare-exchange do not
//! steal: they wait for that work (their idle loop re-checks the shepherd
//! queue), so a shepherd never sends more than one thief at a time and the
//! victim's lock sees one remote taker per shepherd.
//!
//! Who waits, who wakes: siblings spin or sleep in the pool's idle protocol;
//! the stealer's push is followed by the pool's `notify_work`, which wakes
//! sleepers (sync::Sleepers). The flag is only an admission ticket (`Acquire`
//! on winning, `Release` on clearing); the jobs themselves move under the
//! queues' locks. Model-checked in this file's loom test.

use super::counters::bump;
use super::pending::{Pending, NO_SLOT};
use super::shared::SharedQueue;
use super::{Counters, JobRef, Reclaim, Scheduler, Stolen, Target};
use crate::shepherds::Shepherds;
use crate::sync::atomic::{AtomicBool, Ordering};
use crossbeam_utils::CachePadded;
use std::sync::Arc;

/// One shepherd's queue and its stealer ticket.
#[derive(Default)]
struct Shepherd {
    queue: SharedQueue,
    stealing: AtomicBool,
    /// Workers of this shepherd inside `steal_for` (model tests check <= 1).
    #[cfg(all(test, loom))]
    in_steal: crate::sync::atomic::AtomicUsize,
}

/// See the module documentation.
pub(crate) struct ShepherdLifo {
    shepherds: Box<[CachePadded<Shepherd>]>,
    shepherd_of: Box<[usize]>,
    /// For each shepherd, the others nearest first.
    nearest: Box<[Box<[usize]>]>,
    /// Jobs per remote steal, per shepherd.
    chunk: Box<[usize]>,
    /// Each slot's jobs still queued (lazy splitting).
    pending: Arc<Pending>,
}

impl ShepherdLifo {
    pub(crate) fn new(shepherds: &Shepherds, chunk: Option<usize>, pending: Arc<Pending>) -> ShepherdLifo {
        ShepherdLifo {
            shepherds: (0..shepherds.len()).map(|_| CachePadded::new(Shepherd::default())).collect(),
            shepherd_of: shepherds.of.clone().into_boxed_slice(),
            nearest: shepherds.nearest.iter().map(|v| v.clone().into_boxed_slice()).collect(),
            chunk: shepherds.members.iter().map(|m| chunk.unwrap_or(m.len()).max(1)).collect(),
            pending,
        }
    }

    #[inline]
    fn own(&self, slot: usize) -> &Shepherd {
        &self.shepherds[self.shepherd_of[slot]]
    }

    /// The remote steal for shepherd `h`, by the worker holding its ticket.
    fn steal_for(&self, slot: usize, h: usize, counters: &Counters) -> Stolen {
        #[cfg(all(test, loom))]
        let _one = super::model::OneStealer::enter(&self.shepherds[h].in_steal);
        let mut chunk = Vec::with_capacity(self.chunk[h]);
        for &v in self.nearest[h].iter() {
            self.shepherds[v].queue.take_oldest(self.chunk[h], &mut chunk, &self.pending);
            if !chunk.is_empty() {
                bump(&counters.remote_steals, 1);
                bump(&counters.stolen_tasks, chunk.len() as u64);
                let mut jobs = chunk.into_iter();
                let first = jobs.next();
                let moved = jobs.len();
                if moved > 0 {
                    // The rest, oldest deepest: the newest end gets the
                    // youngest of the stolen jobs.
                    self.shepherds[h].queue.push_all(jobs, slot as u32, &self.pending);
                }
                return Stolen { job: first, wake: moved };
            }
        }
        bump(&counters.failed_steals, 1);
        Stolen::default()
    }
}

impl Scheduler for ShepherdLifo {
    #[inline]
    unsafe fn push(&self, slot: usize, job: JobRef) -> Target {
        self.own(slot).queue.push(job, slot as u32, &self.pending);
        Target::Anyone
    }

    #[inline]
    unsafe fn pop(&self, slot: usize) -> Option<JobRef> {
        self.own(slot).queue.pop_newest(&self.pending)
    }

    #[inline]
    unsafe fn reclaim(&self, slot: usize, job: JobRef) -> Reclaim {
        if self.own(slot).queue.take_back(job, &self.pending) {
            Reclaim::Mine
        } else {
            Reclaim::Gone
        }
    }

    #[inline]
    unsafe fn local_len(&self, slot: usize) -> usize {
        self.own(slot).queue.len()
    }

    fn steal(&self, slot: usize, counters: &Counters) -> Stolen {
        let h = self.shepherd_of[slot];
        let me = &self.shepherds[h];
        if let Some(job) = me.queue.pop_newest(&self.pending) {
            return Stolen { job: Some(job), wake: 0 };
        }
        if self.nearest[h].is_empty()
            || me.stealing.load(Ordering::Relaxed)
            || me.stealing.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err()
        {
            // Alone, or a sibling is stealing for the shepherd: wait for its work.
            return Stolen::default();
        }
        let stolen = self.steal_for(slot, h, counters);
        me.stealing.store(false, Ordering::Release);
        stolen
    }

    fn inject(&self, job: JobRef) -> Target {
        self.submit(job, 0)
    }

    fn submit(&self, job: JobRef, shepherd: usize) -> Target {
        self.shepherds[shepherd].queue.push(job, NO_SLOT, &self.pending);
        Target::Anyone
    }

    #[inline]
    fn has_work(&self, _slot: usize) -> bool {
        self.shepherds.iter().any(|s| !s.queue.is_empty())
    }
}

#[cfg(all(test, loom))]
mod tests {
    use super::super::model::{id, job, layout};
    use super::*;
    use loom::sync::Arc;

    /// Shepherd 1's two workers find their queue empty at the same time
    /// while shepherd 0's worker pops its own queue of three jobs: every job
    /// is taken exactly once, at most one worker of shepherd 1 steals at a
    /// time, and a chunk moved to shepherd 1 is there for the sibling.
    #[test]
    fn bulk_steal_moves_each_job_once() {
        loom::model(|| {
            let sh = layout();
            assert_eq!(sh.members, vec![vec![0, 1], vec![2, 3]]);
            let mts = Arc::new(ShepherdLifo::new(&sh, None, std::sync::Arc::new(Pending::new(4))));
            for i in 1..=3 {
                // SAFETY: this thread stands for slot 0 here.
                unsafe { mts.push(0, job(i)) };
            }
            let thieves: Vec<_> = [2usize, 3]
                .into_iter()
                .map(|slot| {
                    let mts = mts.clone();
                    loom::thread::spawn(move || {
                        let c = Counters::default();
                        let mut got = Vec::new();
                        let s = mts.steal(slot, &c);
                        got.extend(s.job.map(id));
                        // A sibling woken for the moved jobs takes them from
                        // the shared queue.
                        // SAFETY: this thread stands for `slot`.
                        while let Some(j) = unsafe { mts.pop(slot) } {
                            got.push(id(j));
                        }
                        let steals = c.remote_steals.load(std::sync::atomic::Ordering::Relaxed);
                        (got, steals)
                    })
                })
                .collect();
            let mut taken = Vec::new();
            // SAFETY: this thread stands for slot 0.
            if let Some(j) = unsafe { mts.pop(0) } {
                taken.push(id(j));
            }
            let mut steals = 0;
            for t in thieves {
                let (got, s) = t.join().unwrap();
                taken.extend(got);
                steals += s;
            }
            // Whatever is left sits in a queue.
            for slot in [0, 2] {
                // SAFETY: the threads have finished; this one stands for every slot.
                while let Some(j) = unsafe { mts.pop(slot) } {
                    taken.push(id(j));
                }
            }
            taken.sort_unstable();
            assert_eq!(taken, vec![1, 2, 3], "a job was lost or taken twice");
            assert!(steals <= 2);
            assert!(!mts.shepherds[1].stealing.load(Ordering::Relaxed), "ticket left taken");
        });
    }
}
