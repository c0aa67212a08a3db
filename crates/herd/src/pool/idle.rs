//! Idle participants: waiting for a condition while running jobs, finding
//! work (own queue, then stealing), and waking sleepers when work appears.
//!
//! **Idle protocol** ([`Registry::wait_until`]): a waiting occupant runs its
//! own newest job, else steals (nearest victims first), else spins for the
//! configured time, else announces itself *sleepy*, re-checks its condition
//! and the queues, and parks. A thread that makes work stealable
//! ([`Registry::notify_work`]) checks whether anyone sleeps and, only then,
//! claims one sleepy bit and unparks that slot (protocol and proof:
//! `sync::Sleepers`, `sync/README.md`).

use super::registry::Registry;
use super::worker::{slot_in, with_current};
use super::yields::Yields;
use crate::sched::{JobRef, Scheduler, Target};
use crate::sync::{Observe, Parker};
use crate::trace;
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

thread_local! {
    /// Whether this thread's last steal left work behind in its victim
    /// ([`Stolen::wake`](crate::sched::Stolen) non-zero): read and cleared
    /// by [`Registry::more_after_job`]. Per thread, like the yield budget
    /// (`yields.rs`), so that no line is shared.
    static STEAL_LEFT_WORK: Cell<bool> = const { Cell::new(false) };
}

/// Records that this thread's steal left work behind. Out of line: the
/// search is inlined into the wait loop, itself inlined into joins, whose
/// code must not grow (a thread-local store inline here made task-suite
/// fib at 1 participant 25 % slower, session 39).
#[cold]
#[inline(never)]
fn left_work() {
    STEAL_LEFT_WORK.set(true);
}

/// How a wait went, for callers that adapt their spinning
/// (`Registry::worker_main`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waited {
    /// How long it lasted, measured from its first clock reading (after 64
    /// spins, or on going to sleep); `None` for a short wait, which reads
    /// no clock at all.
    pub(crate) lasted: Option<Duration>,
    /// It went to sleep at least once.
    pub(crate) slept: bool,
}

/// The spin window of a persistent worker between regions, adapted to the
/// gaps it observes: a worker that slept through a gap shorter than
/// [`AdaptiveSpin::MAX_FACTOR`] × the configured window spins for twice that
/// gap next time (so that a program whose regions arrive every few hundred
/// microseconds keeps its workers awake instead of paying a wake-up chain
/// per region — the slow steady state of a fixed window shorter than the
/// gap); a gap longer than that (a serial phase) returns to the configured
/// window, and a wait that ended while spinning lets the window decay
/// halfway back toward twice the gap it saw.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AdaptiveSpin {
    base: Duration,
    window: Duration,
}

impl AdaptiveSpin {
    /// The most the window grows, as a multiple of the configured one.
    pub(crate) const MAX_FACTOR: u32 = 32;

    pub(crate) fn new(base: Duration) -> AdaptiveSpin {
        AdaptiveSpin { base, window: base }
    }

    /// The window to spin for in the next wait.
    #[inline]
    pub(crate) fn window(&self) -> Duration {
        self.window
    }

    /// Learns from one wait.
    pub(crate) fn observe(&mut self, w: Waited) {
        let Some(gap) = w.lasted else {
            return; // a short wait: keep the window
        };
        let cap = self.base * Self::MAX_FACTOR;
        self.window = if gap > cap {
            self.base
        } else if w.slept {
            (gap * 2).clamp(self.base, cap)
        } else {
            ((self.window + gap * 2) / 2).clamp(self.base, cap)
        };
    }
}

/// While spinning, a wait checks its condition (usually one cache line of
/// its own) every iteration and the queues every `STEAL_EVERY`-th, so that
/// a region post is noticed within a few nanoseconds while idle
/// participants still pick up stealable work promptly.
const STEAL_EVERY: u32 = 8;

/// What a wait does after its spinning ([`Registry::before_sleep`]).
enum Next {
    /// Search the queues now.
    Search,
    /// It yielded the CPU: check again.
    Again,
    /// Announce itself and sleep.
    Sleep,
}

impl Registry {
    /// Makes work visible to sleeping participants: call after queueing a
    /// job for `target`. `near` is the slot that queued it (0 from outside):
    /// sleepers of its shepherd are woken first, since they take the job
    /// from the shared queue without a remote steal.
    #[inline]
    pub(crate) fn notify_work(&self, target: Target, near: usize) {
        let woken = self.sleepers.notify_one(
            || {
                let start = match target {
                    Target::Anyone => self.shepherds.members[self.shepherds.of[near]][0],
                    Target::Shepherd(h) => self.shepherds.members[h][0],
                };
                let team = self.team.load(Ordering::Relaxed);
                let eligible = move |slot: usize| {
                    slot < team
                        && match target {
                            Target::Anyone => true,
                            Target::Shepherd(h) => self.shepherds.of[slot] == h,
                        }
                };
                (start, eligible)
            },
            |slot| self.parker(slot),
        );
        if woken.is_some() && trace::enabled() {
            trace::instant(trace::Kind::Wake, 0);
        }
    }

    /// Queues `job` as the occupant of `slot` and wakes a sleeper for it.
    #[inline]
    pub(crate) fn push_job(&self, slot: usize, job: JobRef) {
        // SAFETY: the caller occupies `slot`.
        let target = unsafe { self.sched.push(slot, job) };
        self.notify_work(target, slot);
    }

    /// Queues `job` from any thread: on the calling participant's own queue
    /// if it is one of this pool's, else for the workers of `shepherd` (a
    /// lightweight thread resumes in its shepherd).
    pub(crate) fn submit(&self, job: JobRef, shepherd: usize) {
        let ours = slot_in(self);
        let target = match ours {
            // SAFETY: the calling thread occupies `slot` of this registry.
            Some(slot) if self.shepherds.of[slot] == shepherd => unsafe { self.sched.push(slot, job) },
            _ => self.sched.submit(job, shepherd),
        };
        self.notify_work(target, ours.unwrap_or(self.shepherds.members[shepherd][0]));
    }

    /// Queues `job` from a thread outside the pool.
    pub(crate) fn inject(&self, job: JobRef) {
        let target = self.sched.inject(job);
        self.notify_work(target, 0);
    }

    /// Runs `job` as the occupant of `slot`.
    #[inline]
    pub(crate) fn run_job(&self, slot: usize, job: JobRef) {
        crate::sched::counters::bump(&self.counters.of(slot).tasks, 1);
        if trace::enabled() {
            trace::begin(trace::Kind::Task, slot as u64);
        }
        // SAFETY: every JobRef in the queues is executed exactly once: it was
        // removed from its queue by this pop/steal.
        unsafe { job.execute() };
        if trace::enabled() {
            trace::end(trace::Kind::Task, slot as u64);
        }
    }

    /// Finds a job for `slot`: its own newest, else a stolen one.
    #[inline]
    pub(crate) fn find_work(&self, slot: usize) -> Option<JobRef> {
        if slot >= self.team.load(Ordering::Relaxed) || self.throttled(slot) {
            return None;
        }
        let job = self.find_any(slot)?;
        // The check above read `team` before the take: a region of fewer
        // participants may have begun in between (its master sets `team`,
        // then pushes). The take synchronizes with the job's push, so this
        // load sees that region's team: a job of a region this slot is not
        // in goes to the refused queue of the master (slot 0, a member of
        // every region; anyone may push on a refused queue), and a member is
        // woken for it (`notify_work` wakes only members), as a refusal
        // (`refused.rs`; loom model `pool::refused::hand_back_model`).
        if slot >= self.team.load(Ordering::Relaxed) {
            self.refused.hand_back(job, || self.notify_work(Target::Anyone, 0));
            return None;
        }
        Some(job)
    }

    /// [`Registry::find_work`]'s look, without the team checks.
    fn find_any(&self, slot: usize) -> Option<JobRef> {
        // SAFETY: the caller occupies `slot`.
        if let Some(job) = unsafe { self.sched.pop(slot) } {
            return Some(job);
        }
        // Jobs a waiter of `admit.rs` refused: its own first, others' after
        // a failed steal.
        if let Some(job) = self.take_refused(slot) {
            return Some(job);
        }
        let stolen = self.sched.steal(slot, self.counters.of(slot));
        for _ in 0..stolen.wake {
            self.notify_work(Target::Shepherd(self.shepherds.of[slot]), slot);
        }
        if stolen.wake > 0 {
            left_work();
        }
        let Some(job) = stolen.job else {
            return self.take_others_refused(slot);
        };
        if trace::enabled() {
            trace::instant(trace::Kind::Steal, slot as u64);
        }
        Some(job)
    }

    /// Waits until `done(_)` holds. `slot` is the slot the caller occupies (it
    /// then runs jobs while waiting), or `None` for a thread that only waits
    /// (the proxy's idle loop, the master of a non-master-last region);
    /// `parker` is where the caller sleeps, the one its wakers unpark.
    /// `done(true)` is the last check before sleeping, after `SLEEPING` is
    /// announced (see [`Parker::park_unless`]); `done(false)` the cheap check
    /// while spinning.
    pub(crate) fn wait_until(&self, slot: Option<usize>, parker: &Parker, done: impl Fn(bool) -> bool) {
        self.wait_with(slot, parker, self.spin(), done);
    }

    /// [`Registry::wait_until`] with an explicit spin policy (`None`: spin
    /// forever; `Some(ZERO)`: sleep at once).
    pub(crate) fn wait_with(
        &self,
        slot: Option<usize>,
        parker: &Parker,
        spin: Option<Duration>,
        done: impl Fn(bool) -> bool,
    ) -> Waited {
        let owner = slot.filter(|&s| std::ptr::eq(parker, self.parker(s)));
        self.wait_core(slot, owner, parker, spin, done)
    }

    /// [`Registry::wait_until`] for the occupant of `slot` that runs no
    /// job meanwhile (`rt::wait_until_without_jobs`), sleeping on its
    /// slot's parker.
    pub(crate) fn wait_without_jobs(&self, slot: usize, done: impl Fn(bool) -> bool) {
        self.wait_core(None, Some(slot), self.parker(slot), self.spin(), done);
    }

    /// The wait loop. `slot`: the participant that runs jobs while it
    /// waits (`None`: none run); `owner`: the slot whose parker `parker`
    /// is, which takes a wake-up cascade handed to it after each park
    /// (`sync/cascade.rs`).
    fn wait_core(
        &self,
        slot: Option<usize>,
        owner: Option<usize>,
        parker: &Parker,
        spin: Option<Duration>,
        done: impl Fn(bool) -> bool,
    ) -> Waited {
        const CLOCK_EVERY: u32 = 64;
        let mut spin_started: Option<Instant> = None;
        // Start past a steal point: a region's master and a worker that has
        // just acknowledged its share check their condition first. (Where
        // participants outnumber CPUs, a waiter whose own queue holds a job
        // still runs it before its first yield: `before_sleep`.)
        let oversubscribed = self.placement.oversubscribed;
        let mut spins: u32 = 1;
        // A pusher woke us for work that we have not taken (see
        // `Sleepers::retract`): pass the wake on if we leave.
        let mut owe_wake = false;
        // Idle since the first search for work that found nothing.
        let mut idle_since: Option<Instant> = None;
        // The first clock reading of this wait (none for a short wait) and
        // whether it slept: what the worker loop adapts its spinning to.
        let mut first_clock: Option<Instant> = None;
        let mut slept = false;
        // Yields before the first sleep, adapted per thread (`yields.rs`),
        // where participants outnumber CPUs (the condition is usually made
        // true by one that needs this CPU); a passive policy on enough CPUs
        // sleeps at once, as asked.
        let mut yields = if oversubscribed { Yields::start() } else { Yields::NONE };
        let stop_idle = |since: &mut Option<Instant>| {
            if let (Some(t), Some(s)) = (since.take(), slot) {
                crate::sched::counters::bump(&self.counters.of(s).idle_ns, t.elapsed().as_nanos() as u64);
            }
        };
        loop {
            if done(false) {
                stop_idle(&mut idle_since);
                yields.settle();
                if owe_wake {
                    self.notify_work(Target::Anyone, slot.unwrap_or(0));
                }
                return Waited { lasted: first_clock.map(|t| t.elapsed()), slept };
            }
            if let Some(s) = slot {
                if spins.is_multiple_of(STEAL_EVERY) {
                    if let Some(job) = self.find_work(s) {
                        stop_idle(&mut idle_since);
                        yields.settle();
                        owe_wake = false;
                        self.run_job(s, job);
                        spin_started = None;
                        spins = 1;
                        if oversubscribed && self.more_after_job(s) {
                            // What follows a job, while more is queued, is a
                            // new wait: its own yields (a barrier's wait that
                            // runs many tasks spent its budget, and its
                            // window ran out, on the first, and slept
                            // between all the others).
                            yields = Yields::start();
                        }
                        continue;
                    }
                }
            }
            spins = spins.wrapping_add(1);
            // Idle time is counted from the first clock point (every
            // `CLOCK_EVERY` spins, or before sleeping), so that short waits —
            // a barrier that completes within a few spins — read no clock.
            if slot.is_some() && idle_since.is_none() && spins.is_multiple_of(CLOCK_EVERY) {
                idle_since = Some(Instant::now());
            }
            match spin {
                None => {
                    std::hint::spin_loop();
                    continue;
                }
                Some(limit) if !limit.is_zero() => {
                    if !spins.is_multiple_of(CLOCK_EVERY) {
                        std::hint::spin_loop();
                        continue;
                    }
                    let start = *spin_started.get_or_insert_with(Instant::now);
                    first_clock.get_or_insert(start);
                    if start.elapsed() < limit {
                        continue;
                    }
                }
                Some(_) => match self.before_sleep(slot, spins, oversubscribed, &mut yields) {
                    Next::Search => {
                        spins = 0;
                        continue;
                    }
                    Next::Again => continue,
                    Next::Sleep => {}
                },
            }
            if slot.is_some() && idle_since.is_none() {
                idle_since = Some(Instant::now());
            }
            // Sleep protocol. A throttled participant does not announce
            // itself to pushers; it is woken by `set_active_limit` instead.
            let token = parker.prepare();
            let throttled = slot.is_some_and(|s| self.throttled(s));
            let announced = slot.filter(|_| !throttled);
            if let Some(s) = announced {
                self.sleepers.announce(s);
            }
            let wake_now = done(false) || announced.is_some_and(|s| self.more_work(s));
            if !wake_now {
                first_clock.get_or_insert_with(Instant::now);
                slept = true;
                if trace::enabled() {
                    trace::begin(trace::Kind::Sleep, slot.unwrap_or(usize::MAX) as u64);
                }
                parker.park_unless(token, || done(true) || (throttled && self.unthrottled_now(slot)));
                if trace::enabled() {
                    trace::end(trace::Kind::Sleep, slot.unwrap_or(usize::MAX) as u64);
                }
                if let Some(o) = owner {
                    self.cascade.take(o, |s| self.parker(s));
                }
            }
            if let Some(s) = announced {
                if self.sleepers.retract(s) {
                    owe_wake = true;
                }
            }
            spin_started = None;
            spins = 0;
        }
    }

    /// Whether any queue (by its count) may hold a job for `slot`: the
    /// check before sleeping, after the announcement (the two-fence argument
    /// of `sync/sleepers.rs`). It loads every participant's count (O(P)),
    /// which only a wait about to sleep pays. Out of line (see
    /// [`Registry::before_sleep`]).
    #[inline(never)]
    fn more_work(&self, slot: usize) -> bool {
        slot < self.team.load(Ordering::Relaxed) && (self.sched.has_work(slot) || self.any_refused())
    }

    /// After a job, whether an oversubscribed wait starts a new yield
    /// budget: only while the work it came from goes on — its own queue
    /// holds a job (a master creating tasks, a bulk steal's moved chunk),
    /// or the steal that brought the job left work behind in the victim
    /// (`Stolen::wake`), or a refused queue holds one. A thief that took
    /// the one task a member queued before its `taskwait` sees nothing
    /// more, and sleeps as before, rather than yield on and take the next
    /// member's. O(1) in the participants (it once read every
    /// participant's count, [`Registry::more_work`], after every job).
    /// Out of line (see [`Registry::before_sleep`]).
    #[inline(never)]
    fn more_after_job(&self, slot: usize) -> bool {
        let left = STEAL_LEFT_WORK.replace(false);
        // SAFETY: the caller occupies `slot` (the wait loop's contract).
        slot < self.team.load(Ordering::Relaxed)
            && (left || unsafe { self.sched.local_len(slot) } > 0 || self.any_refused())
    }

    /// What a wait that no longer spins does next (`spins`: the wait loop's
    /// count, `spins % STEAL_EVERY == 1` right after a search): yield if it
    /// has yields left ([`Yields`]), else sleep. Where participants outnumber
    /// CPUs a wait does not spin, it yields, and a yield is no spin: the wait
    /// looked for work only every `STEAL_EVERY`-th yield, so a member that
    /// queued an OpenMP task and entered a barrier gave its CPU away up to
    /// seven times before it ran its own task. So there, before each yield
    /// (unless it has just searched), a waiter whose own queue holds a job
    /// searches at once (EPCC task-barrier at 4 threads on 2 CPUs: 13.9 →
    /// 2.6 µs; BENCHMARKS.md, session 38). Only its own queue: looking at
    /// every queue's count before each yield (and stealing when one was not
    /// empty) made the master's task-creating constructs slower at 8 and 16
    /// threads on 2 CPUs. Out of line: the wait loop is inlined into joins,
    /// whose code must not grow (session 35's trap).
    #[inline(never)]
    fn before_sleep(
        &self,
        slot: Option<usize>,
        spins: u32,
        oversubscribed: bool,
        yields: &mut Yields,
    ) -> Next {
        // SAFETY: `slot` is the slot the waiting thread occupies (the wait
        // loop's contract, as for its `find_work(s)`).
        if oversubscribed
            && spins % STEAL_EVERY != 1
            && slot.is_some_and(|s| unsafe { self.sched.local_len(s) } > 0)
        {
            Next::Search
        } else if yields.take() {
            Next::Again
        } else {
            Next::Sleep
        }
    }

    /// The last check of a throttled participant before sleeping: whether
    /// its rank is now below its shepherd's active limit (read with the
    /// conditional-wake `Observe`, so that a limit raised while it was
    /// deciding to sleep is seen and it goes back to work).
    #[cold]
    fn unthrottled_now(&self, slot: Option<usize>) -> bool {
        slot.is_some_and(|s| self.shepherds.rank[s] < self.limits[self.shepherds.of[s]].observe(true))
    }
}

/// Waits until `done(_)` holds as whatever the calling thread is: on a
/// participant of a pool, jobs are run while waiting and the thread sleeps on
/// its slot's parker; any other thread spins, then yields. Same contract on
/// `done(true)` as [`Registry::wait_until`].
pub(crate) fn wait_current(done: impl Fn(bool) -> bool) {
    with_current(|cur| match cur {
        Some((reg, slot)) => {
            // Counted, so that `PoolHandle::wake_waiting` skips the parkers
            // when nobody sleeps (`sync/parked.rs`).
            let parked = reg.parked_waiters.guard();
            reg.wait_until(Some(slot), reg.parker(slot), |last| {
                parked.check(last);
                done(last)
            })
        }
        None => {
            let mut spins = 0u32;
            while !done(spins >= 64) {
                if spins < 64 {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
    })
}

/// [`wait_current`] admitting only the jobs `admit` accepts (see
/// `admit.rs`); any other thread waits as there.
pub(crate) fn wait_current_admitting(done: impl Fn(bool) -> bool, admit: &dyn super::Admit) {
    with_current(|cur| match cur {
        Some((reg, slot)) => {
            let parked = reg.parked_waiters.guard();
            reg.wait_admitting(
                slot,
                reg.parker(slot),
                |last| {
                    parked.check(last);
                    done(last)
                },
                admit,
            )
        }
        None => wait_current(done),
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{AdaptiveSpin, Waited};
    use crate::sched::{JobRef, Target};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// A region of 2 of 4 participants waits (its drain) for a job queued
    /// in the refused queue of participant 3, outside the region — as a job
    /// 3 refused before the region began, or one it took and refused while
    /// its team check raced with the region's start, is. A member takes and
    /// runs it. Before `RefusedQueues::take_others` searched the queues of
    /// slots outside the team, no member's search reached the job while
    /// every member's pre-sleep check counted it (`RefusedQueues::any`):
    /// the members spun and the region never returned (this test failed by
    /// its deadline, in every run).
    #[test]
    fn a_member_takes_a_job_refused_outside_its_region() {
        static RAN: AtomicUsize = AtomicUsize::new(0);
        static RAN_ON: AtomicUsize = AtomicUsize::new(usize::MAX);
        static HANDLE: std::sync::Mutex<Option<crate::rt::PoolHandle>> = std::sync::Mutex::new(None);
        unsafe fn job(_: *const ()) {
            RAN_ON.store(crate::current_thread_index().unwrap(), Ordering::SeqCst);
            RAN.fetch_add(1, Ordering::SeqCst);
            let h = HANDLE.lock().unwrap().clone().unwrap();
            h.wake(0);
            h.wake(1);
        }
        let pool = crate::Pool::builder().num_threads(4).wait(crate::WaitPolicy::Passive).build().unwrap();
        *HANDLE.lock().unwrap() = Some(crate::rt::PoolHandle::of(&pool));
        let (tx, rx) = std::sync::mpsc::channel();
        // Leaked, so that a hung region (the failure) does not block the
        // test's end on the pool's drop.
        let pool: &'static crate::Pool = Box::leak(Box::new(pool));
        std::thread::spawn(move || {
            let reg = pool.registry();
            crate::rt::broadcast_n(
                pool,
                2,
                |ctx| {
                    if ctx.index() == 0 {
                        // SAFETY: `job` is a plain function with no data.
                        reg.refused.push(3, unsafe { JobRef::new(std::ptr::null(), job) });
                        reg.notify_work(Target::Anyone, 3);
                    }
                },
                &|last| {
                    let v =
                        if last { RAN.fetch_add(0, Ordering::SeqCst) } else { RAN.load(Ordering::SeqCst) };
                    v == 1
                },
            );
            tx.send(()).unwrap();
        });
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the region of 2 never took the job queued at participant 3, outside it");
        assert_eq!(RAN.load(Ordering::SeqCst), 1);
        assert!(RAN_ON.load(Ordering::SeqCst) < 2, "a participant outside the region ran the job");
    }

    /// Where participants outnumber CPUs, a waiter whose own queue holds a
    /// job runs it before it gives its CPU away (an OpenMP member that
    /// queued a task and entered a barrier). 2 participants on a 1-PU
    /// synthetic machine: participant 1 is kept inside a stolen `b` while
    /// participant 0 spawns a job into a scope (its own queue, nobody free
    /// to steal it) and waits for the scope. Before, the wait looked for
    /// work only every 8th turn of its loop and yielded 7 times first
    /// (fails with `taken == 7`).
    #[test]
    fn an_oversubscribed_waiter_runs_its_own_job_before_yielding() {
        use std::sync::atomic::AtomicBool;
        let topo = crate::Topology::synthetic("pack:1 core:1 pu:1").unwrap();
        let pool = crate::Pool::builder().num_threads(2).topology(topo).build().unwrap();
        assert!(pool.info().oversubscribed);
        let (b_started, release) = (AtomicBool::new(false), AtomicBool::new(false));
        let wait_for = |flag: &AtomicBool| {
            let start = std::time::Instant::now();
            while !flag.load(Ordering::Acquire) {
                assert!(start.elapsed() < Duration::from_secs(30), "participant 1 never took b");
                std::thread::yield_now();
            }
        };
        let taken = pool.join(
            || {
                wait_for(&b_started);
                let before = super::super::yields::taken();
                crate::scope(|s| s.spawn(|_| {}));
                let taken = super::super::yields::taken() - before;
                release.store(true, Ordering::Release);
                taken
            },
            || {
                b_started.store(true, Ordering::Release);
                wait_for(&release);
            },
        );
        assert_eq!(taken.0, 0, "the scope's wait yielded before running its own job");
    }

    /// After a job, an oversubscribed wait decides whether to start a new
    /// yield budget from its own queue and its last steal, reading no other
    /// participant's count: at P = 128 the decision loads none, where the
    /// pre-sleep check (`more_work`) loads all 128 (the decision called
    /// that check after every job before, session 38). A steal that left
    /// work behind renews the budget once.
    #[test]
    fn renewing_the_yield_budget_reads_no_other_queue() {
        use crate::sched::pending::reads;
        let topo = crate::Topology::synthetic("pack:1 core:1 pu:1").unwrap();
        let pool = crate::Pool::builder().num_threads(128).topology(topo).build().unwrap();
        assert!(pool.info().oversubscribed);
        pool.install(|| {
            super::with_current(|cur| {
                let (reg, slot) = cur.expect("install runs on a participant");
                super::STEAL_LEFT_WORK.set(false);
                let before = reads();
                assert!(!reg.more_after_job(slot), "nothing is queued");
                assert_eq!(reads() - before, 0, "the decision read other participants' counts");
                let before = reads();
                assert!(!reg.more_work(slot));
                assert!(reads() - before >= 128, "the pre-sleep check reads every count");
                super::STEAL_LEFT_WORK.set(true);
                assert!(reg.more_after_job(slot), "a steal left work behind");
                assert!(!reg.more_after_job(slot), "once");
            })
        });
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Regions every 300 µs with a 200 µs window: after one sleep the window
    /// covers the gap; a long serial phase resets it; short waits keep it.
    #[test]
    fn window_follows_the_gaps() {
        let mut a = AdaptiveSpin::new(us(200));
        a.observe(Waited { lasted: Some(us(300)), slept: true });
        assert_eq!(a.window(), us(600));
        a.observe(Waited { lasted: None, slept: false });
        assert_eq!(a.window(), us(600), "a short wait keeps the window");
        a.observe(Waited { lasted: Some(us(250)), slept: false });
        assert_eq!(a.window(), us(550), "decays halfway toward twice the gap");
        a.observe(Waited { lasted: Some(us(50_000)), slept: true });
        assert_eq!(a.window(), us(200), "a serial phase returns to the configured window");
        a.observe(Waited { lasted: Some(us(6_000)), slept: true });
        assert_eq!(a.window(), us(200) * AdaptiveSpin::MAX_FACTOR, "capped");
        a.observe(Waited { lasted: Some(us(10)), slept: false });
        assert_eq!(a.window(), us(3_210));
    }
}
