//! The refused queues of `admit.rs`, with a sharded summary of where refused
//! jobs sit, so that a search for them is not a look at every
//! participant's queue.
//!
//! **Queues.** One per participant slot: a waiter that took a job it may
//! not run pushes it on the queue of the waiter that needs it, or on its
//! own (`admit.rs` says which, and who looks where); anyone takes from any
//! queue — an idle participant the oldest job, an admitting waiter only a
//! job it may run (a queue is searched under its lock, see `queue`). One
//! exception, rare: a participant that took a job of a region it is not in
//! (`find_work`'s second team check) hands it back on the master's queue
//! ([`RefusedQueues::hand_back`]), counting and waking as a refuser does.
//!
//! **Summary.** The slots are split into *groups* of at most [`GROUP`]
//! participants of one shepherd (so a group shares a cache, and its line
//! travels only inside it when refuser and waiter share a shepherd). Each group has a counter:
//! a refuser adds one after its push, a taker takes one off after a
//! successful take. A search loads the group counters (`⌈P / GROUP⌉`
//! loads, 16 at P = 128) and looks only at the queues of groups whose
//! counter is non-zero, its own group first — instead of the `P` queue
//! loads per failed steal and per pre-sleep check of the first version. The
//! counters are hints for *where*; the no-lost-job argument below does not
//! need them to be exact at every instant.
//!
//! **Nobody sleeps on a counted job** (with `sync/sleepers.rs`'s protocol,
//! which the refuser's `notify_work` runs). The refuser: push, add one to
//! its group's counter, then `notify_work` (a `SeqCst` fence, then the load
//! of the sleeper count). A sleeper: announces itself (its `SeqCst` fence),
//! then [`RefusedQueues::any`] loads the counters. By the two fences, either
//! the sleeper's load sees the refuser's add, or the refuser's load sees the
//! announcement and wakes a sleeper. A counter can read 0 while a job is
//! queued only when some job's push is not yet counted (each take's
//! subtraction follows its job's push, and each push's add follows it): the
//! refuser of that push has its add and its `notify_work` still to come, so
//! the argument applies to it. A counter that reads "−1" (a take counted
//! before its push's add) reads non-zero: a wasted look, never a lost job.
//! `pool::refused::model` checks the hand-off, and `find_work`'s hand-back
//! to the master with the master about to sleep.
//!
//! **A smaller region** (participants `0..team` of the pool) changes who
//! searches, not where: a member's search ([`RefusedQueues::take_others`])
//! looks at every group's queues, those of slots outside the team
//! included, and a non-member's finds nothing (it may run no job of the
//! region; `find_work` and `admit.rs` stop it before). So [`RefusedQueues::any`]
//! counting every group is exact for the members whose pre-sleep check
//! reads it (a non-member's check does not: `idle.rs`): a job it counts is
//! one their search reaches. The first version searched only the queues of
//! slots `0..team` while `any` counted all of them, so a job refused by a
//! participant outside the region (before the region began, or by one
//! whose team check raced with the region's start) kept every member from
//! sleeping — each pre-sleep check saw it, no search took it — for as long
//! as the region lasted, and hung a region that waited for that job
//! (`pool::idle::tests::a_member_takes_a_job_refused_outside_its_region`).
//!
//! **Before any refusal** a pool's searches cost one load of `seen`, a line
//! nobody writes after the first refusal of the pool's life.

use crate::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;

/// Most participants per group (one summary counter each).
pub(crate) const GROUP: usize = 8;

/// The refused queues and their summary; see the module documentation.
pub(crate) struct RefusedQueues<T> {
    queues: Box<[CachePadded<queue::Queue<T>>]>,
    /// Per group, its queues' jobs: pushes counted minus takes counted
    /// (wrapping; a hint, see the module documentation).
    counts: Box<[CachePadded<AtomicUsize>]>,
    /// Per group, its slots in index order.
    members: Box<[Box<[usize]>]>,
    /// Per slot, its group.
    group_of: Box<[usize]>,
    /// Set once, by the pool's first refusal.
    seen: CachePadded<AtomicBool>,
    #[cfg(all(test, not(loom)))]
    looks: std::sync::atomic::AtomicUsize,
}

impl<T> RefusedQueues<T> {
    /// Queues for `n` slots grouped by locality: each of `domains` (the
    /// shepherds' members, together every slot `0..n` once) split into
    /// groups of at most [`GROUP`] consecutive members.
    pub(crate) fn new(n: usize, domains: &[Vec<usize>]) -> RefusedQueues<T> {
        let members: Box<[Box<[usize]>]> =
            domains.iter().flat_map(|d| d.chunks(GROUP)).map(|c| c.to_vec().into_boxed_slice()).collect();
        let mut group_of = vec![usize::MAX; n];
        for (g, m) in members.iter().enumerate() {
            for &s in m.iter() {
                group_of[s] = g;
            }
        }
        assert!(group_of.iter().all(|&g| g != usize::MAX), "every slot in one domain");
        RefusedQueues {
            queues: (0..n).map(|_| CachePadded::new(queue::Queue::new())).collect(),
            counts: (0..members.len()).map(|_| CachePadded::new(AtomicUsize::new(0))).collect(),
            members,
            group_of: group_of.into_boxed_slice(),
            seen: CachePadded::new(AtomicBool::new(false)),
            #[cfg(all(test, not(loom)))]
            looks: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Queues a refused job on `slot`'s queue (the refuser's own, or that of
    /// the waiter the job was refused for). The caller then wakes an
    /// announced sleeper (`notify_work`: its fence orders this push and the
    /// count before its load of the sleepers).
    pub(crate) fn push(&self, slot: usize, job: T) {
        self.queues[slot].push(job);
        self.counts[self.group_of[slot]].fetch_add(1, Ordering::SeqCst);
        if !self.seen.load(Ordering::Relaxed) {
            self.seen.store(true, Ordering::SeqCst);
        }
    }

    /// `find_work`'s hand-back: a participant outside the running region
    /// took `job`, one of the region's; it queues it on the master's queue
    /// (slot 0, a member of every region, which looks there first; anyone
    /// may push on a queue), counted, and then `notify` (the caller's
    /// `notify_work` for the team) wakes an announced member for it. The
    /// same order as a refusal — push, count, then the waker's fence and
    /// load — so the argument of the module documentation holds for it;
    /// `model::handed_back_job_runs_once` checks it.
    pub(crate) fn hand_back(&self, job: T, notify: impl FnOnce()) {
        self.push(0, job);
        notify();
    }

    /// A job of `slot`'s own queue, if any: one load of `seen` in a pool
    /// that never refused, of the queue's length hint when it is empty.
    #[inline]
    pub(crate) fn take_own(&self, slot: usize) -> Option<T> {
        self.take_own_if(slot, &|_| true)
    }

    /// The oldest job of `slot`'s own queue that `accept` accepts (an
    /// admitting waiter's look: the jobs refused for it were sent there).
    #[inline]
    pub(crate) fn take_own_if(&self, slot: usize, accept: &dyn Fn(&T) -> bool) -> Option<T> {
        if !self.seen.load(Ordering::SeqCst) {
            return None;
        }
        self.take(slot, accept)
    }

    /// A job `accept` accepts of another participant's queue for `slot`, a
    /// member of a team `0..team` (after a failed steal): the group
    /// counters, then the queues of the groups that hold jobs, `slot`'s
    /// group first — every group, slots outside the team included (see the
    /// module documentation). Nothing for a slot outside the team. An idle
    /// participant accepts any job; an admitting waiter only the ones it
    /// may run, so that it never takes a job out only to queue it again.
    pub(crate) fn take_others(&self, slot: usize, team: usize, accept: &dyn Fn(&T) -> bool) -> Option<T> {
        if slot >= team || !self.seen.load(Ordering::SeqCst) {
            return None;
        }
        let groups = self.counts.len();
        let own = self.group_of[slot];
        (0..groups).map(|k| (own + k) % groups).find_map(|g| {
            if self.counts[g].load(Ordering::SeqCst) == 0 {
                return None;
            }
            self.members[g].iter().filter(|&&s| s != slot).find_map(|&s| self.take(s, accept))
        })
    }

    /// Whether any queue may hold a job (the check before sleeping, after
    /// the sleeper's announcement): one load per group. Every counted job is
    /// one a member's [`RefusedQueues::take_others`] reaches.
    pub(crate) fn any(&self) -> bool {
        self.seen.load(Ordering::SeqCst) && self.counts.iter().any(|c| c.load(Ordering::SeqCst) != 0)
    }

    fn take(&self, slot: usize, accept: &dyn Fn(&T) -> bool) -> Option<T> {
        #[cfg(all(test, not(loom)))]
        self.looks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let job = self.queues[slot].take_if(accept)?;
        self.counts[self.group_of[slot]].fetch_sub(1, Ordering::SeqCst);
        Some(job)
    }
}

/// The queue itself: a `VecDeque` under a lock, with a length hint read
/// without the lock. Not crossbeam's `Injector` (the first version): an
/// admitting waiter must take from another's queue only a job it may run
/// ([`RefusedQueues::take_others`] with a rule), and an `Injector` cannot be
/// searched — a waiter took whatever came first and refused it again,
/// moving jobs from queue to queue. The lock is held for a push, or a scan
/// of one queue (short: a refused job is sent to the waiter that needs it,
/// and idle participants take any job from any queue); nobody takes it
/// when the hint says the queue is empty.
mod queue {
    use crate::sync::atomic::{AtomicUsize, Ordering};
    use crate::sync::Mutex;
    use std::collections::VecDeque;

    pub(super) struct Queue<T> {
        jobs: Mutex<VecDeque<T>>,
        /// `jobs.len()`, stored under the lock (`Release`); a reader that
        /// saw a push's count in the summary (`SeqCst`, after the push)
        /// sees it here too.
        len: AtomicUsize,
    }

    impl<T> Queue<T> {
        pub(super) fn new() -> Queue<T> {
            Queue { jobs: Mutex::new(VecDeque::new()), len: AtomicUsize::new(0) }
        }

        pub(super) fn push(&self, job: T) {
            let mut jobs = self.jobs.lock().unwrap();
            jobs.push_back(job);
            self.len.store(jobs.len(), Ordering::Release);
        }

        /// The oldest job `accept` accepts, taken out.
        pub(super) fn take_if(&self, accept: &dyn Fn(&T) -> bool) -> Option<T> {
            if self.len.load(Ordering::Acquire) == 0 {
                return None;
            }
            let mut jobs = self.jobs.lock().unwrap();
            let at = jobs.iter().position(accept)?;
            let job = jobs.remove(at);
            self.len.store(jobs.len(), Ordering::Release);
            job
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{RefusedQueues, GROUP};
    use std::sync::atomic::Ordering;

    /// 128 slots in 8 domains of 16: 16 groups of 8.
    fn node() -> RefusedQueues<u32> {
        let domains: Vec<Vec<usize>> = (0..8).map(|d| (d * 16..d * 16 + 16).collect()).collect();
        RefusedQueues::new(128, &domains)
    }

    fn looks(q: &RefusedQueues<u32>) -> usize {
        q.looks.swap(0, Ordering::Relaxed)
    }

    /// One refused job at slot 100: a search from slot 0 finds it looking at
    /// no more than one group's queues (not 127), and once it is taken the
    /// searches look at no queue at all.
    #[test]
    fn a_search_looks_only_where_jobs_are() {
        let q = node();
        assert!(!q.any() && q.take_others(0, 128, &|_| true).is_none());
        assert_eq!(looks(&q), 0, "no queue looked at before any refusal");
        q.push(100, 7);
        assert!(q.any());
        assert_eq!(q.take_others(0, 128, &|_| true), Some(7));
        let n = looks(&q);
        assert!(n <= GROUP, "looked at {n} queues for one job");
        assert!(!q.any());
        assert_eq!(q.take_others(0, 128, &|_| true), None);
        assert_eq!(looks(&q), 0, "looked at queues of empty groups");
    }

    /// The own queue first, then other groups. A member of a smaller team
    /// (`0..100`) takes a job queued at a slot outside it (120) — what
    /// `any` counts, it reaches; the first version's search skipped it while
    /// `any` still counted it, so members neither took it nor slept. A slot
    /// outside the team takes nothing. Every push and take balances its
    /// group's counter.
    #[test]
    fn a_member_reaches_every_counted_job() {
        let q = node();
        q.push(3, 1);
        q.push(3, 2);
        q.push(120, 3);
        assert_eq!(q.take_own(3), Some(1));
        assert_eq!(q.take_others(5, 100, &|_| true), Some(2), "slot 3 is in slot 5's group");
        assert!(q.any(), "the job at 120 is counted");
        assert_eq!(q.take_others(110, 100, &|_| true), None, "slot 110 is outside a team of 100");
        assert_eq!(
            q.take_others(5, 100, &|_| true),
            Some(3),
            "a counted job a member's search does not reach"
        );
        assert!(!q.any());
        assert!(q.counts.iter().all(|c| c.load(Ordering::Relaxed) == 0));
    }

    /// Groups never straddle domains, and hold at most `GROUP` slots.
    #[test]
    fn groups_follow_domains() {
        let domains = vec![vec![0, 1, 2], (3..20).collect(), vec![20]];
        let q = RefusedQueues::<u32>::new(21, &domains);
        let sizes: Vec<usize> = q.members.iter().map(|m| m.len()).collect();
        assert_eq!(sizes, vec![3, 8, 8, 1, 1]);
        assert_eq!(q.group_of[2], 0);
        assert_eq!(q.group_of[3], 1);
        assert_eq!(q.group_of[20], 4);
    }

    /// Concurrent refusers and takers: every job is taken exactly once and
    /// the counters end at zero.
    #[test]
    fn concurrent_pushes_and_takes_balance() {
        let q = node();
        let taken = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..4usize {
                let (q, taken) = (&q, &taken);
                s.spawn(move || {
                    let slot = t * 37 % 128;
                    for j in 0..2000u32 {
                        q.push(slot, j);
                        if q.take_others((slot + 64) % 128, 128, &|_| true).is_some() {
                            taken.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        while q.take_others(127, 128, &|_| true).is_some() || q.take_own(0).is_some() {
            taken.fetch_add(1, Ordering::Relaxed);
        }
        for s in 0..128 {
            while q.take_own(s).is_some() {
                taken.fetch_add(1, Ordering::Relaxed);
            }
        }
        assert_eq!(taken.load(Ordering::Relaxed), 8000);
        assert!(!q.any());
    }
}

/// The refusal hand-off to a sleeper, model-checked: a refuser queues a job
/// and runs the pusher's side of `sync/sleepers.rs` (`notify_one`); an idle
/// participant announces itself, checks [`RefusedQueues::any`], and parks
/// unless it holds. It must end up taking the job. Weakened (the push not
/// counted in the summary), the sleeper's check misses the job and, woken,
/// parks again for ever (loom's park yields, so loom reports a model that
/// exceeds its branches).
#[cfg(all(test, loom))]
mod model {
    use super::RefusedQueues;
    use crate::sync::{Parker, Sleepers};
    use loom::sync::Arc;

    fn hand_off(weaken: bool) {
        loom::model(move || {
            let queues = Arc::new(RefusedQueues::<u32>::new(2, &[vec![0], vec![1]]));
            let sleepers = Arc::new(Sleepers::new(2));
            let parker = Arc::new(Parker::new());
            let refuser = {
                let (queues, sleepers, parker) = (queues.clone(), sleepers.clone(), parker.clone());
                loom::thread::spawn(move || {
                    if weaken {
                        queues.queues[1].push(9); // uncounted
                        queues.seen.store(true, crate::sync::atomic::Ordering::SeqCst);
                    } else {
                        queues.push(1, 9);
                    }
                    sleepers.notify_one(|| (0, |_| true), |_| &*parker);
                })
            };
            loop {
                let token = parker.prepare();
                if let Some(job) = queues.take_others(0, 2, &|_| true) {
                    assert_eq!(job, 9);
                    break;
                }
                sleepers.announce(0);
                if queues.any() {
                    sleepers.retract(0);
                    continue;
                }
                parker.park(token);
                sleepers.retract(0);
            }
            refuser.join().unwrap();
        });
    }

    #[test]
    fn refused_job_reaches_a_sleeper() {
        hand_off(false);
    }

    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn uncounted_refusal_is_lost_when_weakened() {
        hand_off(true);
    }

    /// Searching takers: a refuser queues job 1 (for the waiter, slot 0)
    /// and job 2 (for nobody) on the waiter's queue; the waiter takes only
    /// job 1, from any queue, while an idle participant (slot 2) takes
    /// whatever it finds. Every job is taken exactly once, the waiter never
    /// gets job 2 (a take that removed another job than the one its rule
    /// accepted fails here), and the counters end at zero.
    #[test]
    fn searching_takers_take_each_job_once() {
        loom::model(|| {
            use crate::sync::atomic::Ordering;
            let queues = Arc::new(RefusedQueues::<u32>::new(3, &[vec![0, 1, 2]]));
            let refuser = {
                let queues = queues.clone();
                loom::thread::spawn(move || {
                    queues.push(0, 1);
                    queues.push(0, 2);
                })
            };
            let idle = {
                let queues = queues.clone();
                loom::thread::spawn(move || {
                    let mut got = Vec::new();
                    for _ in 0..2 {
                        got.extend(queues.take_own(2).or_else(|| queues.take_others(2, 3, &|_| true)));
                    }
                    got
                })
            };
            // The waiter looks once the jobs are queued (loom's `SeqCst` is
            // weaker than the hardware's: an earlier look may miss `seen`),
            // racing the idle participant.
            refuser.join().unwrap();
            let mine = queues.take_own_if(0, &|&j| j == 1).or_else(|| queues.take_others(0, 3, &|&j| j == 1));
            assert!(mine.is_none_or(|j| j == 1), "the waiter took a job it does not admit");
            let mut all: Vec<u32> = mine.into_iter().chain(idle.join().unwrap()).collect();
            for s in 0..3 {
                while let Some(j) = queues.take_own(s) {
                    all.push(j);
                }
            }
            all.sort_unstable();
            assert_eq!(all, vec![1, 2], "a job lost or taken twice");
            assert!(queues.counts.iter().all(|c| c.load(Ordering::SeqCst) == 0));
        });
    }
}

/// `find_work`'s hand-back, model-checked: a participant outside a region
/// of two (slot 2 of 3, the team `0..2`) took a job of the region and hands
/// it back ([`RefusedQueues::hand_back`], with `notify_work`'s wake of an
/// announced member: `Sleepers::notify_one` over the slots `< 2`). The
/// master (slot 0) waits as `idle.rs`'s wait loop does: look for a job (own
/// queue, then the others'), else announce, check [`RefusedQueues::any`],
/// park unless the job has run, retract (a wake for work not used is
/// passed on when leaving). In every interleaving — the master about to
/// sleep, between its last look and its park, included — the job is run
/// exactly once, by the master.
///
/// Checked weakened (each fails: the master sleeps for ever beside the
/// queued job, which loom reports as a model that exceeds its branches):
/// no wake after the push (`NoNotify`), the wake before the push
/// (`NotifyFirst`), the push not counted in the summary (`Uncounted`). The
/// count added *before* the push (`CountFirst`) is not a weakening, and the
/// model passes with it: a count never lags its job then, so a waiter that
/// sees it only looks again (a wasted look, the `wake_now` path) until the
/// push lands, and one that does not is seen by the hand-back's wake.
///
/// Under loom the member (slot 1) is left out: with a second sleeper the
/// model exceeds loom's branch bound even for the sound protocol (3 threads,
/// preemption bound 1, 20 000 branches), where loom treats `SeqCst` loads as
/// `AcqRel` and a parked thread's re-reads of its word may be stale. Under
/// shuttle (`make test-shuttle`: random and PCT schedules, sequentially
/// consistent) the member waits too, as the region's second sleeper: the
/// job runs exactly once, by whichever member the hand-back's wake reaches,
/// and both leave; the weakened variants fail there as well (a sleeper
/// yields for ever and the schedule exceeds its step bound).
#[cfg(all(test, any(loom, shuttle)))]
mod hand_back_model {
    use super::RefusedQueues;
    use crate::sync::atomic::{AtomicUsize, Ordering};
    use crate::sync::{Parker, Sleepers};
    #[cfg(loom)]
    use loom::{sync::Arc, thread};
    #[cfg(shuttle)]
    use shuttle::{sync::Arc, thread};

    const TEAM: usize = 2;
    const JOB: u32 = 9;

    #[derive(Clone, Copy, PartialEq)]
    enum Variant {
        Sound,
        NoNotify,
        NotifyFirst,
        Uncounted,
        CountFirst,
    }

    struct World {
        queues: RefusedQueues<u32>,
        sleepers: Sleepers,
        parkers: Vec<Parker>,
        ran: AtomicUsize,
    }

    impl World {
        /// `notify_work(Anyone, 0)`: one announced member, nearest slot 0 first.
        fn notify(&self) {
            self.sleepers.notify_one(|| (0, |s: usize| s < TEAM), |s| &self.parkers[s]);
        }

        /// Runs the job in `slot`; its completion wakes the region's other
        /// waiters, as the region's latch does (they wait for the job).
        fn run(&self, slot: usize, job: u32) {
            assert_eq!(job, JOB);
            assert!(slot < TEAM, "slot {slot}, outside the region, ran its job");
            self.ran.fetch_add(1, Ordering::SeqCst);
            for other in (0..TEAM).filter(|&s| s != slot) {
                self.parkers[other].unpark();
            }
        }

        fn done(&self, last: bool) -> bool {
            if last {
                self.ran.fetch_add(0, Ordering::SeqCst) != 0
            } else {
                self.ran.load(Ordering::Acquire) != 0
            }
        }

        /// The wait loop of member `slot` until the job has run.
        fn wait(&self, slot: usize) {
            let mut owe_wake = false;
            loop {
                if self.done(false) {
                    if owe_wake {
                        self.notify();
                    }
                    return;
                }
                if let Some(job) =
                    self.queues.take_own(slot).or_else(|| self.queues.take_others(slot, TEAM, &|_| true))
                {
                    self.run(slot, job);
                    owe_wake = false;
                    continue;
                }
                let token = self.parkers[slot].prepare();
                self.sleepers.announce(slot);
                if self.done(false) || self.queues.any() {
                    // Back to spinning.
                    crate::sync::model_yield();
                } else {
                    self.parkers[slot].park_unless(token, || self.done(true));
                }
                if self.sleepers.retract(slot) {
                    owe_wake = true;
                }
            }
        }

        /// The taker outside the region, holding the job.
        fn hand_back(&self, variant: Variant) {
            let q = &self.queues;
            let seen = || q.seen.store(true, Ordering::SeqCst);
            let count = || q.counts[q.group_of[0]].fetch_add(1, Ordering::SeqCst);
            match variant {
                Variant::Sound => q.hand_back(JOB, || self.notify()),
                Variant::NoNotify => q.push(0, JOB),
                Variant::NotifyFirst => {
                    self.notify();
                    q.push(0, JOB);
                }
                Variant::Uncounted => {
                    q.queues[0].push(JOB);
                    seen();
                    self.notify();
                }
                Variant::CountFirst => {
                    count();
                    q.queues[0].push(JOB);
                    seen();
                    self.notify();
                }
            }
        }
    }

    /// One run: the taker hands the job back while the region's waiters in
    /// `slots` wait for it.
    fn run_once(variant: Variant, slots: &'static [usize]) {
        let world = Arc::new(World {
            queues: RefusedQueues::new(3, &[vec![0, 1], vec![2]]),
            sleepers: Sleepers::new(3),
            parkers: (0..3).map(|_| Parker::new()).collect(),
            ran: AtomicUsize::new(0),
        });
        let taker = {
            let world = world.clone();
            thread::spawn(move || world.hand_back(variant))
        };
        let others: Vec<_> = slots[1..]
            .iter()
            .map(|&slot| {
                let world = world.clone();
                thread::spawn(move || world.wait(slot))
            })
            .collect();
        world.wait(slots[0]);
        taker.join().unwrap();
        for t in others {
            t.join().unwrap();
        }
        assert_eq!(world.ran.load(Ordering::SeqCst), 1);
        if variant != Variant::Uncounted {
            // (An uncounted push's take leaves its counter at "−1".)
            assert!(!world.queues.any());
        }
    }

    /// loom: the master alone waits (see above).
    #[cfg(loom)]
    fn hand_back(variant: Variant) {
        loom::model(move || run_once(variant, &[0]));
    }

    /// shuttle: the master and the member wait.
    #[cfg(shuttle)]
    fn hand_back(variant: Variant) {
        crate::sync::shuttle_check(10_000, 20_000, move || run_once(variant, &[0, 1]));
    }

    #[test]
    fn handed_back_job_runs_once() {
        hand_back(Variant::Sound);
    }

    #[test]
    #[cfg_attr(loom, should_panic(expected = "maximum number of branches"))]
    #[cfg_attr(shuttle, should_panic(expected = "exceeded max_steps"))]
    fn handed_back_job_lost_without_notify() {
        hand_back(Variant::NoNotify);
    }

    #[test]
    #[cfg_attr(loom, should_panic(expected = "maximum number of branches"))]
    #[cfg_attr(shuttle, should_panic(expected = "exceeded max_steps"))]
    fn handed_back_job_lost_when_notified_first() {
        hand_back(Variant::NotifyFirst);
    }

    #[test]
    #[cfg_attr(loom, should_panic(expected = "maximum number of branches"))]
    #[cfg_attr(shuttle, should_panic(expected = "exceeded max_steps"))]
    fn handed_back_job_lost_when_uncounted() {
        hand_back(Variant::Uncounted);
    }

    #[test]
    fn handed_back_job_counted_first_is_still_found() {
        hand_back(Variant::CountFirst);
    }
}
