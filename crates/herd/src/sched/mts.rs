//! `mts`: MAESTRO's multi-threaded shepherds (maestro-qthreads-scheduling.txt
//! §3.3). One LIFO queue per shepherd, shared by its workers, so that a task
//! and the tasks it spawns meet in the cache the shepherd shares.
//!
//! **Remote steal protocol.** A worker whose shepherd queue is empty tries to
//! become its shepherd's *stealer* (a compare-exchange on the shepherd's
//! `stealing` flag). Only the winner steals: it visits the other shepherds
//! nearest first (topology distance) and from the first non-empty one takes
//! a chunk of its *oldest* jobs (the largest pieces of a divide-and-conquer
//! tree) under that queue's lock — `HERD_STEAL_CHUNK` jobs, by default as
//! many as its shepherd has workers. It keeps the oldest to run and pushes
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
use super::shared::SharedQueue;
use super::{Counters, JobRef, Scheduler, Stolen, Target};
use crate::shepherds::Shepherds;
use crate::sync::atomic::{AtomicBool, Ordering};
use crossbeam_utils::CachePadded;

/// One shepherd's queue and its stealer ticket.
#[derive(Default)]
struct Shepherd {
    queue: SharedQueue,
    stealing: AtomicBool,
}

/// See the module documentation.
pub(crate) struct Mts {
    shepherds: Box<[CachePadded<Shepherd>]>,
    shepherd_of: Box<[usize]>,
    /// For each shepherd, the others nearest first.
    nearest: Box<[Box<[usize]>]>,
    /// Jobs per remote steal, per shepherd.
    chunk: Box<[usize]>,
}

impl Mts {
    pub(crate) fn new(shepherds: &Shepherds, chunk: Option<usize>) -> Mts {
        Mts {
            shepherds: (0..shepherds.len()).map(|_| CachePadded::new(Shepherd::default())).collect(),
            shepherd_of: shepherds.of.clone().into_boxed_slice(),
            nearest: shepherds.nearest.iter().map(|v| v.clone().into_boxed_slice()).collect(),
            chunk: shepherds.members.iter().map(|m| chunk.unwrap_or(m.len()).max(1)).collect(),
        }
    }

    #[inline]
    fn own(&self, slot: usize) -> &Shepherd {
        &self.shepherds[self.shepherd_of[slot]]
    }

    /// The remote steal for shepherd `h`, by the worker holding its ticket.
    fn steal_for(&self, h: usize, counters: &Counters) -> Stolen {
        let mut chunk = Vec::with_capacity(self.chunk[h]);
        for &v in self.nearest[h].iter() {
            self.shepherds[v].queue.take_oldest(self.chunk[h], &mut chunk);
            if !chunk.is_empty() {
                bump(&counters.remote_steals, 1);
                bump(&counters.stolen_tasks, chunk.len() as u64);
                let mut jobs = chunk.into_iter();
                let first = jobs.next();
                let moved = jobs.len() > 0;
                if moved {
                    // The rest, oldest deepest: the newest end gets the
                    // youngest of the stolen jobs.
                    self.shepherds[h].queue.push_all(jobs);
                }
                return Stolen { job: first, moved };
            }
        }
        bump(&counters.failed_steals, 1);
        Stolen::default()
    }
}

impl Scheduler for Mts {
    #[inline]
    unsafe fn push(&self, slot: usize, job: JobRef) -> Target {
        self.own(slot).queue.push(job);
        Target::Anyone
    }

    #[inline]
    unsafe fn pop(&self, slot: usize) -> Option<JobRef> {
        self.own(slot).queue.pop_newest()
    }

    #[inline]
    unsafe fn local_is_empty(&self, slot: usize) -> bool {
        self.own(slot).queue.is_empty()
    }

    #[inline]
    unsafe fn local_len(&self, slot: usize) -> usize {
        self.own(slot).queue.len()
    }

    fn steal(&self, slot: usize, counters: &Counters) -> Stolen {
        let h = self.shepherd_of[slot];
        let me = &self.shepherds[h];
        if let Some(job) = me.queue.pop_newest() {
            return Stolen { job: Some(job), moved: false };
        }
        if self.nearest[h].is_empty()
            || me.stealing.load(Ordering::Relaxed)
            || me.stealing.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err()
        {
            // Alone, or a sibling is stealing for the shepherd: wait for its work.
            return Stolen::default();
        }
        let stolen = self.steal_for(h, counters);
        me.stealing.store(false, Ordering::Release);
        stolen
    }

    fn inject(&self, job: JobRef) -> Target {
        self.submit(job, 0)
    }

    fn submit(&self, job: JobRef, shepherd: usize) -> Target {
        self.shepherds[shepherd].queue.push(job);
        Target::Anyone
    }

    #[inline]
    fn has_work(&self, _slot: usize) -> bool {
        self.shepherds.iter().any(|s| !s.queue.is_empty())
    }
}
