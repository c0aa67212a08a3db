//! Waiting while running only *admitted* jobs: for a runtime whose waiters
//! may not run just any job. An OpenMP task suspended in `taskwait` or at a
//! taskgroup's end may run only its own descendants (the *task scheduling
//! constraint*: a thread must not start, inside a tied task, a task that is
//! not its descendant — it could need a lock the suspended task holds, or
//! threadprivate data in the state the suspended task left it).
//!
//! **Where jobs go that a waiter may not run.** A deque cannot be searched
//! or handed a job back by a thief, so a job the waiter took and may not
//! run goes
//! - back on its own deque when it came from there (`Scheduler::private_pop`:
//!   its own deque holds, above the jobs it pushed before its task began,
//!   only that task's descendants, so the first refusal means nothing
//!   admissible is left there until it runs another job);
//! - else to the pool's `rejected` queue, which every participant looks at
//!   right after its own queue (and before sleeping), so a participant
//!   that may run anything takes it at once.
//!
//! Stealing takes one job at a time (`Scheduler::steal_one`): a bulk steal
//! would bury the waiter's own jobs under ones it may not run.
//!
//! **Liveness.** Every refusal moves a job out of a deque or rotates the
//! `rejected` queue, which the waiter searches too, so a waiter keeps
//! reaching every queued job while it looks. It sleeps *unannounced*: the
//! wakes pushers send for new work go to participants that can run any job.
//! It is woken by its condition, or by whoever rejects a job: the refuser
//! asks [`Admit::rejected`] which waiters may need the job (herd-omp: the
//! task's parent's and its taskgroup's), queues it, advances the
//! `rejections` count (`SeqCst`) and then wakes them; a waiter re-checks
//! that count after announcing its sleep, so a rejection between its last
//! look and its sleep is never missed.

use super::registry::Registry;
use crate::sched::{JobRef, Scheduler, Target};
use crate::sync::{Observe, Parker};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// A waiter's rule for which jobs it may run (see the module documentation).
pub trait Admit {
    /// Whether the waiter may run the job `run(data)`.
    fn admit(&self, data: *const (), run: unsafe fn(*const ())) -> bool;
    /// The job `run(data)` was refused by a waiter and is about to go to the
    /// pool's rejected queue (it has not run; the call is the refuser's last
    /// exclusive access): up to two participants (pool indices) that may be
    /// waiting to run it, woken once it is queued.
    fn rejected(&self, data: *const (), run: unsafe fn(*const ())) -> [Option<usize>; 2];
}

/// At most this many jobs of the rejected queue are looked at per look.
const ROTATE: usize = 4;
/// Spins between two looks for work.
const LOOK_EVERY: u32 = 8;

impl Registry {
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
        // The own deque's top was refused: nothing admissible is left there
        // until this waiter runs a job (which may push new descendants).
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
            // Sleep, unannounced: woken by the condition's waker or by a
            // rejection (see the module documentation).
            let seen = self.rejections.load(Ordering::SeqCst);
            let token = parker.prepare();
            if let Some(job) = self.find_admitted(slot, admit, &mut own_blocked) {
                self.run_job(slot, job);
                own_blocked = false;
            } else if !done(false) {
                parker.park_unless(token, || done(true) || self.rejections.observe(true) != seen);
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

    /// One look for a job `admit` accepts: the own queue's newest, a few of
    /// the rejected queue, one stolen job. Refused jobs go where the module
    /// documentation says.
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
                *own_blocked = true;
                if self.sched.private_pop() {
                    self.push_job(slot, job);
                } else {
                    self.reject(slot, job, admit);
                }
            }
        }
        for _ in 0..ROTATE {
            let Some(job) = self.take_rejected() else { break };
            if accepts(job) {
                return Some(job);
            }
            // Back at the far end; a sleeper that looked while it was out
            // is woken for it.
            self.rejected.push(job);
            self.notify_work(Target::Anyone, slot);
        }
        let job = self.sched.steal_one(slot, self.counters.of(slot))?;
        if accepts(job) {
            return Some(job);
        }
        self.reject(slot, job, admit);
        None
    }

    /// Puts a refused job in the rejected queue and wakes for it: a
    /// participant that may run anything (announced sleepers), and whoever
    /// [`Admit::rejected`] names.
    fn reject(&self, slot: usize, job: JobRef, admit: &dyn Admit) {
        // Asked first, while the job is still only ours (once queued it may
        // run and be freed at once); woken after the count moved, so that a
        // waiter either sees the count move before it sleeps or is asleep
        // (announced on its parker) when the wake comes.
        let (data, run) = job.parts();
        let waiters = admit.rejected(data, run);
        self.rejected.push(job);
        self.rejections.fetch_add(1, Ordering::SeqCst);
        self.notify_work(Target::Anyone, slot);
        for w in waiters.into_iter().flatten() {
            if w < self.slots.len() {
                self.parker(w).unpark_if_sleeping();
            }
        }
    }
}
