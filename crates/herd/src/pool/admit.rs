//! Waiting while running only *admitted* jobs: for a runtime whose waiters
//! may not run just any job. An OpenMP tied task suspended in `taskwait` or
//! at a taskgroup's end may start only its own descendants (the *task
//! scheduling constraint*: a thread must not start, inside a tied task, a
//! task that may need a lock the suspended task holds, or threadprivate
//! data in the state the suspended task left it).
//!
//! **Where a job goes that a waiter took and may not run.** A deque cannot
//! be searched, nor handed a job back by a thief, so:
//! - popped from the waiter's *own* deque (`Scheduler::private_pop`): back on
//!   it, where it was (its bottom). Above the jobs pushed before the waiting
//!   task began, the own deque holds only that task's descendants, so the
//!   first refusal means nothing admissible is left there until the waiter
//!   runs a job (`own_blocked`);
//! - stolen, or popped from a shared queue: to the waiter's own *refused
//!   queue* (`Registry::refused`, one per participant, `refused.rs`). Only
//!   the refuser pushes there, so a refusal writes the refuser's own lines
//!   and its group's summary counter (shared by at most 8 participants of
//!   one shepherd), not a line every participant writes (a pool-wide queue
//!   written per refusal, the first version's design, was rejected for that
//!   reason). Every participant looks at its own refused queue right after
//!   its own deque (`find_work`), at the others' after a failed steal, and
//!   at the summary before sleeping (`has_work`): a refused job stays where
//!   every participant's search reaches it.
//!
//! The searches cost one load in a pool whose waiters never refused a job
//! (a flag set once by the first refusal, never cleared), and after that
//! one load per group of 8 participants plus a look at the queues of the
//! groups that hold refused jobs — not every participant's queue (O(P)
//! per failed steal and per pre-sleep check, the first version). Why no
//! sleeper misses a counted job: `refused.rs`.
//!
//! Stealing takes one job at a time (`Scheduler::steal_one`): a bulk steal
//! would bury the waiter's own jobs under ones it may not run.
//!
//! **Nothing is lost, nobody hangs.** A job is always in a queue every
//! search reaches, or in the hands of one participant, who runs it or puts
//! it in its refused queue. A refusal then wakes
//! - an announced sleeper, as a push does (`notify_work`; announced
//!   sleepers may run anything and re-check `has_work`, which reads every
//!   refused queue, before sleeping);
//! - the waiters the runtime names ([`Admit::wake_for`]: herd-omp names the
//!   task's parent's runner and its taskgroup's waiter, the only waits that
//!   need this job to finish), with [`Parker::unpark`] after the push.
//!
//! A job refused from the own deque is pushed back there (a push: it wakes
//! an announced sleeper) and the named waiters are woken too.
//!
//! An admitting waiter sleeps with [`Parker::prepare`]'s token taken
//! *before* its last search, and announces itself to pushers after that
//! search (so that new work wakes it; a wake it cannot use it passes on
//! with `notify_work`, and a job it takes and refuses is re-announced by
//! the refusal). A push between its last search and its announcement does
//! not wake it: only promptness depends on that wake, not progress (the
//! job is on its pusher's deque, and whoever refuses it names the waiters
//! that need it). A named waiter is never missed: a refusal after its
//! token moves the word, so `park_unless` does not sleep; a refusal before it happens-before the
//! last search (the refuser's push is sequenced before its `SeqCst` bump of
//! the word, which the token read), so the search sees the job. The model
//! `pool::admit::model` checks this hand-off.

use super::registry::Registry;
use crate::sched::{JobRef, Scheduler, Target};
use crate::sync::Parker;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// A waiter's rule for which jobs it may run (see the module documentation).
pub trait Admit {
    /// Whether the waiter may run the job `run(data)`.
    fn admit(&self, data: *const (), run: unsafe fn(*const ())) -> bool;
    /// The job `run(data)` was refused by this waiter and is about to be
    /// queued again, in its refused queue or back on its deque (it has not
    /// run; this is the refuser's last exclusive access): up to two
    /// participants (pool indices) that may be waiting to run it, woken once
    /// it is queued.
    fn wake_for(&self, data: *const (), run: unsafe fn(*const ())) -> [Option<usize>; 2];
}

/// Spins between two looks for work.
const LOOK_EVERY: u32 = 8;
/// Jobs of the own refused queue looked at per look (refused ones rotate).
const ROTATE: usize = 4;

impl Registry {
    /// A job of `slot`'s refused queue, if any (see `refused.rs`).
    #[inline]
    pub(crate) fn take_refused(&self, slot: usize) -> Option<JobRef> {
        self.refused.take_own(slot)
    }

    /// A job of another participant's refused queue (after a failed steal:
    /// an idle participant's path; one load in a pool that never refused,
    /// one per group of participants after, and a look at the queues of
    /// the groups that hold refused jobs).
    pub(crate) fn take_others_refused(&self, slot: usize) -> Option<JobRef> {
        self.refused.take_others(slot, self.team.load(Ordering::Relaxed))
    }

    /// Whether any refused queue may hold a job (before sleeping, after the
    /// announcement).
    pub(crate) fn any_refused(&self) -> bool {
        self.refused.any()
    }

    /// [`Registry::wait_until`] for the occupant of `slot` that may run only
    /// the jobs `admit` accepts; see the module documentation.
    pub(crate) fn wait_admitting(
        &self,
        slot: usize,
        parker: &Parker,
        done: impl Fn(bool) -> bool,
        admit: &dyn Admit,
    ) {
        let mut spins: u32 = 1;
        let mut spin_started: Option<Instant> = None;
        // The own deque's newest job was refused: nothing admissible is left
        // there until this waiter runs a job (which may push descendants).
        let mut own_blocked = false;
        loop {
            if done(false) {
                return;
            }
            if spins.is_multiple_of(LOOK_EVERY) {
                if let Some(job) = self.find_admitted(slot, admit, &mut own_blocked) {
                    self.run_job(slot, job);
                    own_blocked = false;
                    spins = 1;
                    spin_started = None;
                    continue;
                }
            }
            spins = spins.wrapping_add(1);
            match self.spin {
                None => {
                    std::hint::spin_loop();
                    continue;
                }
                Some(limit) if !limit.is_zero() => {
                    if !spins.is_multiple_of(64) {
                        std::hint::spin_loop();
                        continue;
                    }
                    if spin_started.get_or_insert_with(Instant::now).elapsed() < limit {
                        continue;
                    }
                }
                Some(_) => {}
            }
            // Sleep: the token first, then the last search (see the module
            // documentation); announced after it, so that pushes of new work
            // wake this waiter too (a wake it cannot use is passed on).
            let token = parker.prepare();
            if let Some(job) = self.find_admitted(slot, admit, &mut own_blocked) {
                self.run_job(slot, job);
                own_blocked = false;
            } else if !done(false) {
                let announced = !self.throttled(slot);
                if announced {
                    self.sleepers.announce(slot);
                }
                parker.park_unless(token, || done(true));
                if std::ptr::eq(parker, self.parker(slot)) {
                    self.cascade.take(slot, |s| self.parker(s));
                }
                if announced && !self.sleepers.retract(slot) {
                    // A pusher woke this waiter for its job: take it, or
                    // wake another participant for it.
                    if let Some(job) = self.find_admitted(slot, admit, &mut own_blocked) {
                        self.run_job(slot, job);
                        own_blocked = false;
                    } else {
                        self.notify_work(Target::Anyone, slot);
                    }
                }
            }
            spins = 1;
            spin_started = None;
        }
    }

    /// Runs one queued job `admit` accepts, if [`Registry::find_admitted`]
    /// finds one, as the occupant of `slot`. Returns whether it ran one.
    pub(crate) fn run_one_admitting(&self, slot: usize, admit: &dyn Admit) -> bool {
        match self.find_admitted(slot, admit, &mut false) {
            Some(job) => {
                self.run_job(slot, job);
                true
            }
            None => false,
        }
    }

    /// One look for a job `admit` accepts: the own deque's newest, a few of
    /// the own refused queue, one stolen job, one of another's refused
    /// queue. Refused jobs go where the module documentation says.
    fn find_admitted(&self, slot: usize, admit: &dyn Admit, own_blocked: &mut bool) -> Option<JobRef> {
        if slot >= self.team.load(Ordering::Relaxed) || self.throttled(slot) {
            return None;
        }
        let accepts = |job: JobRef| {
            let (data, run) = job.parts();
            admit.admit(data, run)
        };
        if !*own_blocked {
            // SAFETY: the caller occupies `slot`.
            if let Some(job) = unsafe { self.sched.pop(slot) } {
                if accepts(job) {
                    return Some(job);
                }
                if self.sched.private_pop() {
                    *own_blocked = true;
                    // Back where it was: the bottom of the own deque, where
                    // thieves reach it; the waiters that need it are woken
                    // to come and take it.
                    let (data, run) = job.parts();
                    let waiters = admit.wake_for(data, run);
                    self.push_job(slot, job);
                    self.wake_named(slot, waiters);
                } else {
                    self.refuse(slot, job, admit);
                }
            }
        }
        for _ in 0..ROTATE {
            let Some(job) = self.take_refused(slot) else { break };
            if accepts(job) {
                return Some(job);
            }
            // Back at the far end; whoever looked while it was out is woken
            // for it again.
            self.refuse(slot, job, admit);
        }
        if let Some(job) = self.sched.steal_one(slot, self.counters.of(slot)) {
            if accepts(job) {
                return Some(job);
            }
            self.refuse(slot, job, admit);
        }
        let job = self.take_others_refused(slot)?;
        if accepts(job) {
            return Some(job);
        }
        self.refuse(slot, job, admit);
        None
    }

    /// Puts a refused job in `slot`'s refused queue and wakes for it: an
    /// announced sleeper (one that may run anything), and whoever
    /// [`Admit::wake_for`] names.
    fn refuse(&self, slot: usize, job: JobRef, admit: &dyn Admit) {
        // Asked first, while the job is still only ours (once queued it may
        // run and be freed at once).
        let (data, run) = job.parts();
        let waiters = admit.wake_for(data, run);
        self.refused.push(slot, job);
        self.notify_work(Target::Anyone, slot);
        self.wake_named(slot, waiters);
    }

    /// Wakes the participants [`Admit::wake_for`] named (not `slot`, the
    /// caller), after the job is queued.
    fn wake_named(&self, slot: usize, waiters: [Option<usize>; 2]) {
        for w in waiters.into_iter().flatten() {
            if w < self.slots.len() && w != slot {
                // `unpark`, not `unpark_if_sleeping`: the waiter's last
                // search is not a read-modify-write of the queues, so the
                // word itself must move (see the module documentation).
                self.parker(w).unpark();
            }
        }
    }
}

/// The refusal hand-off, model-checked: a waiter that may run only job 1
/// and a participant that took job 1 and may not run it. The refuser puts it
/// in its refused queue (here a loom `Mutex<Vec>`) and wakes the waiter with
/// `unpark`; the waiter takes its token, searches the queue, and parks
/// unless its condition (job 1 has run) holds. With `unpark_if_sleeping`
/// instead (`weaken`), the wake can fall between the waiter's search and
/// its sleep and is lost: the waiter parks for ever (loom's park yields, so
/// loom reports it as a model that exceeds its branches).
#[cfg(all(test, loom))]
mod model {
    use crate::sync::atomic::{AtomicBool, Ordering};
    use crate::sync::Parker;
    use loom::sync::{Arc, Mutex};

    fn hand_off(weaken: bool) {
        loom::model(move || {
            let parker = Arc::new(Parker::new());
            let queue = Arc::new(Mutex::new(Vec::<usize>::new()));
            let ran = Arc::new(AtomicBool::new(false));
            let refuser = {
                let (parker, queue) = (parker.clone(), queue.clone());
                loom::thread::spawn(move || {
                    // It took job 1 (stolen) and may not run it.
                    queue.lock().unwrap().push(1);
                    if weaken {
                        parker.unpark_if_sleeping();
                    } else {
                        parker.unpark();
                    }
                })
            };
            // The waiter: admits job 1 only.
            loop {
                if ran.load(Ordering::SeqCst) {
                    break;
                }
                let token = parker.prepare();
                let job = queue.lock().unwrap().pop();
                if let Some(j) = job {
                    assert_eq!(j, 1);
                    ran.store(true, Ordering::SeqCst);
                    continue;
                }
                parker.park_unless(token, || ran.load(Ordering::SeqCst));
            }
            refuser.join().unwrap();
        });
    }

    #[test]
    fn refused_job_reaches_its_waiter() {
        hand_off(false);
    }

    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn refused_job_lost_wake_when_weakened() {
        hand_off(true);
    }
}
