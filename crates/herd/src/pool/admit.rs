//! Waiting while running only *admitted* jobs: for a runtime whose waiters
//! may not run just any job. An OpenMP tied task suspended in `taskwait` or
//! at a taskgroup's end may start only its own descendants (the *task
//! scheduling constraint*: a thread must not start, inside a tied task, a
//! task that may need a lock the suspended task holds, or threadprivate
//! data in the state the suspended task left it).
//!
//! **Where a job goes that a waiter took and may not run.** A deque cannot
//! be searched, nor handed a job back by a thief, so the job goes to the
//! *refused queue* (`Registry::refused`, one per participant, `refused.rs`)
//! of the first waiter the runtime names for it ([`Admit::wake_for`]:
//! herd-omp names the task's parent's runner, then its taskgroup's waiter —
//! the waits that need it). That waiter looks at its own refused queue
//! right after its own deque, before it steals: the job reaches it in one
//! look. When the runtime names nobody (or only the refuser), a job popped
//! from the own deque (`Scheduler::private_pop`) goes back on it, where
//! thieves reach it, and a stolen one to the refuser's own refused queue.
//! Above the jobs pushed before the waiting task began, the own deque holds
//! only that task's descendants, so after a refusal of a popped job nothing
//! admissible is left there until the waiter runs a job (`own_blocked`).
//!
//! (The first version put every stolen job it refused in the refuser's own
//! queue, and queues were crossbeam `Injector`s, which a searcher cannot
//! filter: a waiter looking for its job in the others' queues took
//! whatever came first and refused it in turn. At 16 busy-waiting
//! participants, each waiting for its own task — EPCC's `taskwait` — jobs
//! wandered from queue to queue and a task cost 149 µs, against 0.5 µs
//! under libomp. Now a waiter takes from the others' refused queues only
//! a job it admits.)
//!
//! A refusal writes the refused queue of the waiter that needs the job and
//! its group's summary counter (shared by at most 8 participants of one
//! shepherd), not a line every participant writes (a pool-wide queue
//! written per refusal was rejected for that reason). Every participant
//! looks at its own refused queue right after its own deque (`find_work`),
//! at the others' after a failed steal, and at the summary before sleeping
//! (`has_work`): a refused job stays where every participant's search
//! reaches it. The searches cost one load in a pool whose waiters never
//! refused a job (a flag set once by the first refusal, never cleared), and
//! after that one load per group of 8 participants plus a look at the
//! queues of the groups that hold refused jobs — not every participant's
//! queue (O(P) per failed steal and per pre-sleep check, the first
//! version). Why no sleeper misses a counted job: `refused.rs`.
//!
//! Stealing takes one job at a time (`Scheduler::steal_one`): a bulk steal
//! would bury the waiter's own jobs under ones it may not run. A waiter
//! whose stolen job it had to refuse steals less often while it spins
//! (it skips 1, 2, 4, … up to 16 looks' steals until it runs a job): every
//! such steal takes a job from a participant that may be about to pop it.
//! Its last search before sleeping always steals.
//!
//! **Nothing is lost, nobody hangs.** A job is always in a queue every
//! search reaches, or in the hands of one participant, who runs it or hands
//! it on as above. A refusal then wakes
//! - an announced sleeper, as a push does (`notify_work`; announced
//!   sleepers may run anything and re-check `has_work`, which reads every
//!   refused queue, before sleeping);
//! - the waiters the runtime names, with [`Parker::unpark`] after the push.
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
use crate::sched::counters::bump;
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

/// What an admitting wait remembers from one look for work to the next.
#[derive(Default)]
struct Looks {
    /// A job popped from the own deque was refused (see `find_admitted`).
    own_blocked: bool,
    /// Looks left that do not steal.
    steal_skip: u32,
    /// Looks skipped after the last refused steal (doubling, up to
    /// [`MAX_STEAL_SKIP`]).
    backoff: u32,
}

impl Looks {
    /// The waiter ran a job: its deque may hold new descendants, and
    /// stealing pays again.
    fn ran(&mut self) {
        *self = Looks::default();
    }

    /// A stolen job was refused: steal less often until a job runs.
    fn refused_steal(&mut self) {
        self.backoff = (self.backoff * 2).clamp(1, MAX_STEAL_SKIP);
        self.steal_skip = self.backoff;
    }
}

/// Most looks an admitting waiter lets pass without stealing after refused
/// steals (see the module documentation).
const MAX_STEAL_SKIP: u32 = 16;

/// Spins between two looks for work.
const LOOK_EVERY: u32 = 8;

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
        self.refused.take_others(slot, self.team.load(Ordering::Relaxed), &|_| true)
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
        // The first look at once (a `taskwait` finds its newest child on its
        // own deque before a thief does), and again at once after a job ran.
        let mut spins: u32 = 0;
        let mut spin_started: Option<Instant> = None;
        let mut looks = Looks::default();
        loop {
            if done(false) {
                return;
            }
            if spins.is_multiple_of(LOOK_EVERY) {
                if let Some(job) = self.find_admitted(slot, admit, &mut looks) {
                    self.run_job(slot, job);
                    looks.ran();
                    spins = 0;
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
            // The last search steals, whatever the back-off.
            looks.steal_skip = 0;
            if let Some(job) = self.find_admitted(slot, admit, &mut looks) {
                self.run_job(slot, job);
                looks.ran();
            } else if !done(false) {
                let announced = !self.throttled(slot);
                if announced {
                    self.sleepers.announce(slot);
                }
                parker.park_unless(token, || done(true));
                if std::ptr::eq(parker, self.parker(slot)) {
                    self.cascade.take(slot, |s| self.parker(s));
                }
                if announced && self.sleepers.retract(slot) {
                    // A pusher woke this waiter for its job: take it, or
                    // wake another participant for it.
                    looks.steal_skip = 0;
                    if let Some(job) = self.find_admitted(slot, admit, &mut looks) {
                        self.run_job(slot, job);
                        looks.ran();
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
        match self.find_admitted(slot, admit, &mut Looks::default()) {
            Some(job) => {
                self.run_job(slot, job);
                true
            }
            None => false,
        }
    }

    /// One look for a job `admit` accepts: the own deque's newest, the
    /// oldest admitted job of the own refused queue, one stolen job (unless
    /// backing off), an admitted job of another's refused queue. Refused
    /// jobs go where the module documentation says.
    fn find_admitted(&self, slot: usize, admit: &dyn Admit, looks: &mut Looks) -> Option<JobRef> {
        if slot >= self.team.load(Ordering::Relaxed) || self.throttled(slot) {
            return None;
        }
        let accepts = |job: JobRef| {
            let (data, run) = job.parts();
            admit.admit(data, run)
        };
        if !looks.own_blocked {
            // SAFETY: the caller occupies `slot`.
            if let Some(job) = unsafe { self.sched.pop(slot) } {
                if accepts(job) {
                    return Some(job);
                }
                let own = self.sched.private_pop();
                // Above the jobs pushed before the waiting task began, the
                // own deque holds only its descendants: after a refusal
                // nothing admissible is left there until this waiter runs
                // a job (which may push more).
                looks.own_blocked |= own;
                self.refuse(slot, job, admit, own);
            }
        }
        // Jobs refused for this waiter were sent to its own refused queue.
        if let Some(job) = self.refused.take_own_if(slot, &|job| accepts(*job)) {
            return Some(job);
        }
        if looks.steal_skip > 0 {
            looks.steal_skip -= 1;
        } else if let Some(job) = self.sched.steal_one(slot, self.counters.of(slot)) {
            if accepts(job) {
                return Some(job);
            }
            self.refuse(slot, job, admit, false);
            looks.refused_steal();
        }
        self.refused.take_others(slot, self.team.load(Ordering::Relaxed), &|job| accepts(*job))
    }

    /// Hands on a job the waiter at `slot` took and may not run: to the
    /// refused queue of the first waiter [`Admit::wake_for`] names (the one
    /// that needs it looks there first), or, when it names none but `slot`,
    /// back on `slot`'s own deque where thieves reach it (a job popped from
    /// it: the caller then stops popping, `own_blocked`) or in `slot`'s own
    /// refused queue (a stolen one). Then wakes an announced sleeper (one
    /// that may run anything) and the named waiters.
    fn refuse(&self, slot: usize, job: JobRef, admit: &dyn Admit, popped_own: bool) {
        // Asked first, while the job is still only ours (once queued it may
        // run and be freed at once).
        let (data, run) = job.parts();
        let waiters = admit.wake_for(data, run);
        bump(&self.counters.of(slot).refusals, 1);
        let named = waiters.into_iter().flatten().find(|&w| w < self.slots.len() && w != slot);
        match named {
            Some(w) => self.refused.push(w, job),
            // (Nobody else named: nobody to wake but a sleeper, which the
            // push wakes.)
            None if popped_own => {
                self.push_job(slot, job);
                return;
            }
            None => self.refused.push(slot, job),
        }
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
/// in the waiter's refused queue (here a loom `Mutex<Vec>`) and wakes it with
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
