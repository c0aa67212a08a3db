//! `mts` (default): MAESTRO's multi-threaded shepherds
//! (maestro-qthreads-scheduling.txt §3.3) with the queues moved onto the
//! workers: every participant pushes and pops its own Chase–Lev deque
//! (crossbeam-deque; no lock and no line another core writes on the fast
//! path), and the paper's ideas become the *stealing policy*:
//!
//! 1. **Near before far.** An idle worker first takes one job from a sibling
//!    of its shepherd (random start, then every sibling in turn) — the job
//!    and the data it touches share the shepherd's cache — and from its
//!    shepherd's injector (jobs submitted to the shepherd from elsewhere:
//!    resumed lightweight threads, outside threads).
//! 2. **One stealer per shepherd, in bulk.** When its shepherd has nothing,
//!    it first looks (reads only) whether any other shepherd has work, and
//!    only then competes for its shepherd's `stealing` ticket (a
//!    compare-exchange). The winner visits the other shepherds nearest first
//!    and moves a chunk of the *oldest* jobs of the first non-empty deque it
//!    finds — the largest pieces of a divide-and-conquer tree — into its own
//!    deque (`steal_batch_with_limit_and_pop`: at most half the victim's
//!    deque, at most `HERD_STEAL_CHUNK`, default the shepherd's size), runs
//!    one and releases the ticket; the caller wakes two sleeping siblings,
//!    who take jobs from its deque by rule 1, and every thief that leaves
//!    work behind in its victim wakes one more — wake-ups spread as a tree,
//!    never a system call per moved job by one thread. Losers of the ticket
//!    do not steal remotely: they wait for that work. So a shepherd sends at
//!    most one thief across the machine at a time, and a remote steal brings
//!    work for the whole shepherd.
//!
//! Who waits, who wakes: idle workers spin or sleep in the pool's idle
//! protocol (`pool/idle.rs`); every push — the owner's, or the bulk steal's
//! — is followed by the pool's `notify_work` (`sync::Sleepers`: a fence and
//! a load of the sleeper count, no write unless someone sleeps). The ticket
//! is only an admission ticket (`Acquire` on winning, `Release` on
//! clearing); the jobs move through the deques' own protocols. Loom model
//! below: each job taken once, one stealer per shepherd.
//!
//! The earlier design — one locked LIFO per shepherd — is `lifo.rs`
//! (`HERD_SCHED=lifo`): every push and pop of a shepherd's workers took one
//! lock, which on a 16-core L3 serialised fine-grained task trees.

use super::counters::bump;
use super::owned::OwnedDeques;
use super::pending::{Pending, NO_SLOT};
use super::{Counters, JobRef, Reclaim, Scheduler, Stolen, Target, STEAL_WAKE_FANOUT};
use crate::shepherds::Shepherds;
use crate::sync::atomic::{AtomicBool, Ordering};
use crossbeam_deque::{Injector, Steal, Worker};
use crossbeam_utils::CachePadded;
use std::sync::Arc;

/// One shepherd's shared state: the remote-steal ticket and the queue of
/// jobs submitted to it from elsewhere.
#[derive(Default)]
struct Shepherd {
    stealing: AtomicBool,
    injector: Injector<JobRef>,
    /// Workers of this shepherd inside `steal_remote` (model tests check <= 1).
    #[cfg(all(test, loom))]
    in_steal: crate::sync::atomic::AtomicUsize,
}

/// See the module documentation.
pub(crate) struct Mts {
    deques: OwnedDeques,
    shepherd_of: Box<[usize]>,
    members: Box<[Box<[usize]>]>,
    /// For each shepherd, the others nearest first.
    nearest: Box<[Box<[usize]>]>,
    shepherds: Box<[CachePadded<Shepherd>]>,
    /// Jobs per remote steal, per shepherd.
    chunk: Box<[usize]>,
    pending: Arc<Pending>,
}

impl Mts {
    pub(crate) fn new(shepherds: &Shepherds, chunk: Option<usize>, pending: Arc<Pending>) -> Mts {
        Mts {
            deques: OwnedDeques::new(shepherds.of.len()),
            shepherd_of: shepherds.of.clone().into_boxed_slice(),
            members: shepherds.members.iter().map(|m| m.clone().into_boxed_slice()).collect(),
            nearest: shepherds.nearest.iter().map(|v| v.clone().into_boxed_slice()).collect(),
            shepherds: (0..shepherds.len()).map(|_| CachePadded::new(Shepherd::default())).collect(),
            chunk: shepherds.members.iter().map(|m| chunk.unwrap_or(m.len()).max(1)).collect(),
            pending,
        }
    }

    /// The occupant's deque.
    ///
    /// # Safety
    /// The caller occupies `slot`.
    #[inline]
    unsafe fn local(&self, slot: usize) -> &Worker<JobRef> {
        // SAFETY: forwarded.
        unsafe { self.deques.local(slot) }
    }

    /// A random index below `n` for the occupant of `slot`.
    fn random_below(&self, slot: usize, n: usize) -> usize {
        // SAFETY: only the occupant of `slot` steals for it.
        unsafe { self.deques.random_below(slot, n) }
    }

    /// Rule 1: one job from the caller's own shepherd (its injector, then
    /// its siblings' deques). `retry` is set when a steal lost a race.
    /// Returns the job and whether its source still holds work (a sleeping
    /// sibling should be woken for it).
    fn steal_near(
        &self,
        slot: usize,
        h: usize,
        counters: &Counters,
        retry: &mut bool,
    ) -> Option<(JobRef, bool)> {
        match self.shepherds[h].injector.steal() {
            Steal::Success(job) => return Some((job, !self.shepherds[h].injector.is_empty())),
            Steal::Retry => *retry = true,
            Steal::Empty => {}
        }
        let members = &self.members[h];
        let start = self.random_below(slot, members.len());
        for k in 0..members.len() {
            let v = members[(start + k) % members.len()];
            // Empty by its owner's count: not looked at (see `owned.rs`).
            if v == slot || !self.deques.may_hold(v, &self.pending) {
                continue;
            }
            match self.deques.steal(v) {
                Steal::Success(job) => {
                    self.pending.sub(v as u32);
                    bump(&counters.local_steals, 1);
                    return Some((job, !self.deques.stealers[v].is_empty()));
                }
                Steal::Retry => *retry = true,
                Steal::Empty => {}
            }
        }
        None
    }

    /// True when some shepherd other than `h` has a job queued (reads only:
    /// the injectors, and the members' counts of queued jobs).
    fn work_elsewhere(&self, h: usize) -> bool {
        self.nearest[h].iter().any(|&g| {
            !self.shepherds[g].injector.is_empty()
                || self.members[g].iter().any(|&v| self.deques.may_hold(v, &self.pending))
        })
    }

    /// Rule 2, by the holder of shepherd `h`'s ticket: a chunk of the oldest
    /// jobs of the nearest non-empty shepherd into the caller's deque.
    fn steal_remote(&self, slot: usize, h: usize, counters: &Counters) -> Stolen {
        #[cfg(all(test, loom))]
        let _one = super::model::OneStealer::enter(&self.shepherds[h].in_steal);
        let limit = self.chunk[h];
        // SAFETY: the caller occupies `slot`.
        let dest = unsafe { self.local(slot) };
        let before = dest.len();
        for &g in self.nearest[h].iter() {
            let victims = std::iter::once(None).chain({
                let m = &self.members[g];
                let start = self.random_below(slot, m.len());
                (0..m.len()).map(move |k| Some(m[(start + k) % m.len()]))
            });
            for v in victims {
                let got = loop {
                    let s = match v {
                        None => self.shepherds[g].injector.steal_batch_with_limit_and_pop(dest, limit),
                        Some(v) if !self.deques.may_hold(v, &self.pending) => Steal::Empty,
                        Some(v) => self.deques.steal_batch_and_pop(v, dest, limit),
                    };
                    match s {
                        Steal::Retry => continue,
                        Steal::Success(job) => break Some(job),
                        Steal::Empty => break None,
                    }
                };
                if let Some(job) = got {
                    let moved = dest.len().saturating_sub(before);
                    let from = v.map_or(NO_SLOT, |v| v as u32);
                    // The job taken to run and the ones moved left `from`.
                    self.pending.sub(from);
                    self.pending.moved(from, slot as u32, moved as u32);
                    bump(&counters.remote_steals, 1);
                    bump(&counters.stolen_tasks, moved as u64 + 1);
                    return Stolen { job: Some(job), wake: moved.min(STEAL_WAKE_FANOUT) };
                }
            }
        }
        bump(&counters.failed_steals, 1);
        Stolen::default()
    }
}

impl Scheduler for Mts {
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
        let h = self.shepherd_of[slot];
        loop {
            let mut retry = false;
            if let Some((job, more)) = self.steal_near(slot, h, counters, &mut retry) {
                return Stolen { job: Some(job), wake: usize::from(more) };
            }
            if retry {
                continue;
            }
            break;
        }
        let me = &self.shepherds[h];
        if !self.work_elsewhere(h)
            || me.stealing.load(Ordering::Relaxed)
            || me.stealing.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err()
        {
            // Nothing anywhere, or a sibling is stealing for the shepherd:
            // wait for its work.
            bump(&counters.failed_steals, 1);
            return Stolen::default();
        }
        let stolen = self.steal_remote(slot, h, counters);
        me.stealing.store(false, Ordering::Release);
        stolen
    }

    /// Rule 1's single steal, then one job from each farther shepherd in
    /// turn (its injector, then its workers' deques), nearest first: no
    /// ticket and no chunk.
    fn steal_one(&self, slot: usize, counters: &Counters) -> Option<JobRef> {
        let h = self.shepherd_of[slot];
        loop {
            let mut retry = false;
            if let Some((job, _)) = self.steal_near(slot, h, counters, &mut retry) {
                return Some(job);
            }
            for &g in self.nearest[h].iter() {
                match self.shepherds[g].injector.steal() {
                    Steal::Success(job) => return Some(job),
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
                for &v in self.members[g].iter() {
                    if !self.deques.may_hold(v, &self.pending) {
                        continue;
                    }
                    match self.deques.steal(v) {
                        Steal::Success(job) => {
                            self.pending.sub(v as u32);
                            bump(&counters.remote_steals, 1);
                            bump(&counters.stolen_tasks, 1);
                            return Some(job);
                        }
                        Steal::Retry => retry = true,
                        Steal::Empty => {}
                    }
                }
            }
            if !retry {
                return None;
            }
        }
    }

    fn private_pop(&self) -> bool {
        true
    }

    fn inject(&self, job: JobRef) -> Target {
        self.submit(job, 0)
    }

    fn submit(&self, job: JobRef, shepherd: usize) -> Target {
        self.shepherds[shepherd].injector.push(job);
        Target::Anyone
    }

    fn has_work(&self, _slot: usize) -> bool {
        // The deques by their owners' counts (`OwnedDeques::may_hold`: a
        // relaxed load each, not a fence): each count is added before its
        // job's push, which comes before the pusher's `notify_work` fence, so
        // a sleeper's check after its announcement's fence sees it or is
        // woken (`sync/sleepers.rs`); a bulk steal's moved count is added
        // before the thief wakes siblings for it.
        self.shepherds.iter().any(|s| !s.injector.is_empty()) || self.deques.any_may_hold(&self.pending)
    }
}

#[cfg(all(test, loom))]
mod tests {
    use super::super::model::{id, job, layout};
    use super::*;
    use loom::sync::Arc;

    /// Shepherd 1's two workers find nothing at the same time while
    /// shepherd 0's worker pops its own deque of four jobs: every job is
    /// taken exactly once, at most one worker of shepherd 1 steals remotely
    /// at a time, and a chunk moved into a thief's deque is there for its
    /// sibling.
    #[test]
    fn bulk_steal_moves_each_job_once() {
        loom::model(|| {
            let sh = layout();
            assert_eq!(sh.members, vec![vec![0, 1], vec![2, 3]]);
            let pending = std::sync::Arc::new(Pending::new(4));
            let mts = Arc::new(Mts::new(&sh, None, pending.clone()));
            for i in 1..=4 {
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
                        for _ in 0..2 {
                            let s = mts.steal(slot, &c);
                            got.extend(s.job.map(id));
                            // SAFETY: this thread stands for `slot`.
                            while let Some(j) = unsafe { mts.pop(slot) } {
                                got.push(id(j));
                            }
                        }
                        got
                    })
                })
                .collect();
            let mut taken = Vec::new();
            // SAFETY: this thread stands for slot 0.
            if let Some(j) = unsafe { mts.pop(0) } {
                taken.push(id(j));
            }
            for t in thieves {
                taken.extend(t.join().unwrap());
            }
            for slot in 0..4 {
                // SAFETY: the threads have finished; this one stands for every slot.
                while let Some(j) = unsafe { mts.pop(slot) } {
                    taken.push(id(j));
                }
            }
            taken.sort_unstable();
            assert_eq!(taken, vec![1, 2, 3, 4], "a job was lost or taken twice");
            assert!(!mts.shepherds[1].stealing.load(Ordering::Relaxed), "ticket left taken");
            for s in 0..4 {
                assert!(pending.none(s), "slot {s}: queued-job count off after all jobs were taken");
            }
        });
    }
}

#[cfg(all(test, not(loom)))]
mod idle_tests {
    use super::super::model::{id, job, machine};
    use super::*;

    /// An idle worker's looks (`steal`, `steal_one`) look at no deque while
    /// every deque is empty — not P − 1 of them per look, each with a fence
    /// — and still find a job pushed on any of them, near or far.
    #[test]
    fn idle_looks_probe_no_empty_deque() {
        let sh = machine("l3:4 core:4 pu:1");
        assert_eq!(sh.members.len(), 4);
        let pending = Arc::new(Pending::new(16));
        let mts = Mts::new(&sh, None, pending);
        let c = Counters::default();
        // A job pushed and popped back leaves every count at zero.
        // SAFETY: this thread stands for slot 0 here.
        unsafe { mts.push(0, job(1)) };
        // SAFETY: as above.
        assert_eq!(unsafe { mts.pop(0) }.map(id), Some(1));
        for _ in 0..100 {
            for slot in 0..16 {
                assert!(mts.steal(slot, &c).job.is_none());
                assert!(mts.steal_one(slot, &c).is_none());
            }
        }
        assert_eq!(mts.deques.probes.load(Ordering::Relaxed), 0, "idle looks looked at empty deques");
        assert!(!mts.has_work(3));
        // SAFETY: this thread stands for slot 14 here.
        unsafe { mts.push(14, job(14)) };
        assert!(mts.has_work(3), "a queued job is seen before sleeping");
        // SAFETY: as above.
        assert_eq!(unsafe { mts.pop(14) }.map(id), Some(14));
        for (victim, thief) in [(1usize, 2usize), (5, 2), (15, 0)] {
            // SAFETY: this thread stands for `victim` here.
            unsafe { mts.push(victim, job(victim)) };
            assert_eq!(mts.steal_one(thief, &c).map(id), Some(victim), "job of {victim} for {thief}");
        }
        // SAFETY: this thread stands for slot 9 here.
        unsafe { mts.push(9, job(9)) };
        assert_eq!(mts.steal(12, &c).job.map(id), Some(9), "a remote steal finds a far job");
        assert_eq!(mts.deques.pinned_empty.load(Ordering::Relaxed), 0);
    }
}
