//! The task-scheduler boundary and the four schedulers behind it.
//!
//! Everything above this module (join, scope, loops, the worker loop, the
//! lightweight threads) talks to the scheduler only through [`Scheduler`]:
//! push a job on the current participant's queue, pop the newest local job,
//! find work elsewhere, tell whether the local queue is empty, and submit a
//! job from any thread to a shepherd. [`Queues`] picks one of the schedulers
//! of `HERD_SCHED` (maestro-qthreads-scheduling.txt §3.3, §4.2):
//!
//! * [`Mts`] (default): one Chase–Lev deque per participant; idle workers
//!   steal from their own shepherd first; one worker per shepherd at a time
//!   steals a chunk of the oldest jobs of the nearest non-empty shepherd
//!   into its own deque, for its siblings;
//! * [`WorkStealing`] (`ws`): one Chase–Lev deque per participant
//!   (crossbeam-deque), LIFO locally, FIFO steals from random victims;
//! * [`Central`]: one queue for everyone;
//! * [`Fifo`]: one FIFO per shepherd, jobs placed round-robin, no stealing;
//! * [`ShepherdLifo`] (`lifo`): one locked LIFO per shepherd with `mts`'s
//!   bulk remote steals — MAESTRO's MTS as the paper builds it.
//!
//! Every scheduler counts, in the caller's [`Counters`], the steals it makes.

mod central;
pub(crate) mod counters;
mod deques;
mod fifo;
pub(crate) mod job;
mod lifo;
#[cfg(test)]
mod model;
mod mts;
mod owned;
pub(crate) mod pending;
mod shared;

pub(crate) use central::Central;
pub use counters::WorkerStats;
pub(crate) use counters::{AllCounters, Counters};
pub(crate) use deques::WorkStealing;
pub(crate) use fifo::Fifo;
pub(crate) use job::{HeapJob, JobRef, JobResult, StackJob};
pub(crate) use lifo::ShepherdLifo;
pub(crate) use mts::Mts;
pub(crate) use pending::Pending;

use crate::config::Sched;
use crate::shepherds::Shepherds;
use std::sync::Arc;

/// Who may take a job just queued: anyone in the team, or only the workers
/// of one shepherd (a scheduler without stealing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Any participant of the running team.
    Anyone,
    /// Only the workers of this shepherd.
    Shepherd(usize),
}

/// The result of a steal: a job to run, and how many sleeping siblings the
/// caller should wake for work the steal left where they can take it.
#[derive(Default)]
pub(crate) struct Stolen {
    pub(crate) job: Option<JobRef>,
    pub(crate) wake: usize,
}

/// The most sleepers one steal wakes (`mts`): a bulk steal wakes two
/// siblings, and each thief that leaves work behind in its victim wakes one
/// more, so wake-ups spread as a tree instead of one thread issuing a
/// system call per moved job.
pub(crate) const STEAL_WAKE_FANOUT: usize = 2;

/// What a joiner found when it came back for the job it queued.
pub(crate) enum Reclaim {
    /// It took its own job back: run it inline.
    Mine,
    /// It took another job (newer, from its own deque): run it, then ask again.
    Other(JobRef),
    /// Someone else took its job: wait for it.
    Gone,
}

/// The interface between the runtime and a task scheduler.
pub(crate) trait Scheduler: Sync {
    /// Queues a job made by the occupant of `slot`. Caller occupies `slot`.
    unsafe fn push(&self, slot: usize, job: JobRef) -> Target;
    /// Takes the job `slot` should run next from its own queue (its deque,
    /// or its shepherd's queue). Caller occupies `slot`.
    unsafe fn pop(&self, slot: usize) -> Option<JobRef>;
    /// `join`'s way back to the job `job` it queued. Shared queues take
    /// exactly that job if it is still there (popping the newest could hand
    /// the joiner a sibling's job and the sibling the joiner's, crossing
    /// every continuation over); `ws` pops its own deque. Caller occupies
    /// `slot`.
    unsafe fn reclaim(&self, slot: usize, job: JobRef) -> Reclaim;
    /// Jobs in `slot`'s own queue. Caller occupies `slot`.
    unsafe fn local_len(&self, slot: usize) -> usize;
    /// Takes work from elsewhere for `slot` (caller occupies it), counting
    /// in `counters`.
    fn steal(&self, slot: usize, counters: &Counters) -> Stolen;
    /// Queues a job from a thread outside the pool.
    fn inject(&self, job: JobRef) -> Target;
    /// Queues a job, from any thread, for the workers of `shepherd`
    /// (schedulers without per-shepherd queues take it as an injection).
    fn submit(&self, job: JobRef, shepherd: usize) -> Target;
    /// True when `slot` could find work somewhere (used before sleeping).
    fn has_work(&self, slot: usize) -> bool;
    /// The running region has participants `0..n` (`Registry::set_team`);
    /// a scheduler that places jobs itself must place them in the team.
    fn set_team(&self, _n: usize) {}
    /// One job from elsewhere, for a waiter that may run only some jobs
    /// (`Registry::wait_admitting`): never moves other jobs into the
    /// caller's queue (a bulk steal would bury its own jobs under ones it
    /// may not run). `None` by default: schedulers whose `pop` already
    /// reaches every job they would steal.
    fn steal_one(&self, _slot: usize, _counters: &Counters) -> Option<JobRef> {
        None
    }
    /// Whether `pop` takes only jobs the caller pushed (a private deque), so
    /// that a job the caller may not run can go back where it was.
    fn private_pop(&self) -> bool {
        false
    }
}

/// The scheduler chosen for a pool: a closed set, dispatched by `match` so
/// that the hot calls inline.
pub(crate) enum Queues {
    Mts(Box<Mts>),
    Ws(Box<WorkStealing>),
    Central(Central),
    Fifo(Fifo),
    Lifo(ShepherdLifo),
}

impl Queues {
    /// Builds `kind` for a pool laid out as `shepherds`; `chunk`: jobs per
    /// `mts` remote steal (`None`: the stealing shepherd's size); `pending`:
    /// the pool's per-slot counts of queued jobs, kept by every scheduler.
    pub(crate) fn new(
        kind: Sched,
        shepherds: &Shepherds,
        chunk: Option<usize>,
        pending: &Arc<Pending>,
    ) -> Queues {
        let pending = Arc::clone(pending);
        match kind {
            Sched::Mts => Queues::Mts(Box::new(Mts::new(shepherds, chunk, pending))),
            Sched::Ws => Queues::Ws(Box::new(WorkStealing::new(shepherds, pending))),
            Sched::Central => Queues::Central(Central::new(pending)),
            Sched::Fifo => Queues::Fifo(Fifo::new(shepherds, pending)),
            Sched::Lifo => Queues::Lifo(ShepherdLifo::new(shepherds, chunk, pending)),
        }
    }

    /// Which scheduler this is.
    pub(crate) fn kind(&self) -> Sched {
        match self {
            Queues::Mts(_) => Sched::Mts,
            Queues::Ws(_) => Sched::Ws,
            Queues::Central(_) => Sched::Central,
            Queues::Fifo(_) => Sched::Fifo,
            Queues::Lifo(_) => Sched::Lifo,
        }
    }
}

macro_rules! each {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            Queues::Mts($q) => $e,
            Queues::Ws($q) => $e,
            Queues::Central($q) => $e,
            Queues::Fifo($q) => $e,
            Queues::Lifo($q) => $e,
        }
    };
}

impl Scheduler for Queues {
    #[inline]
    unsafe fn push(&self, slot: usize, job: JobRef) -> Target {
        // SAFETY: forwarded.
        each!(self, q => unsafe { q.push(slot, job) })
    }
    #[inline]
    unsafe fn pop(&self, slot: usize) -> Option<JobRef> {
        // SAFETY: forwarded.
        each!(self, q => unsafe { q.pop(slot) })
    }
    #[inline]
    unsafe fn reclaim(&self, slot: usize, job: JobRef) -> Reclaim {
        // SAFETY: forwarded.
        each!(self, q => unsafe { q.reclaim(slot, job) })
    }
    #[inline]
    unsafe fn local_len(&self, slot: usize) -> usize {
        // SAFETY: forwarded.
        each!(self, q => unsafe { q.local_len(slot) })
    }
    #[inline]
    fn steal(&self, slot: usize, counters: &Counters) -> Stolen {
        each!(self, q => q.steal(slot, counters))
    }
    fn inject(&self, job: JobRef) -> Target {
        each!(self, q => q.inject(job))
    }
    fn submit(&self, job: JobRef, shepherd: usize) -> Target {
        each!(self, q => q.submit(job, shepherd))
    }
    #[inline]
    fn has_work(&self, slot: usize) -> bool {
        each!(self, q => q.has_work(slot))
    }
    fn set_team(&self, n: usize) {
        each!(self, q => q.set_team(n))
    }
    fn steal_one(&self, slot: usize, counters: &Counters) -> Option<JobRef> {
        each!(self, q => q.steal_one(slot, counters))
    }
    fn private_pop(&self) -> bool {
        each!(self, q => q.private_pop())
    }
}
