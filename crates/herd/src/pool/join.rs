//! `join(a, b)`: run two closures, potentially in parallel.
//!
//! Exposing work: `b` is recorded as a continuation of this participant
//! (`lazy.rs`), and work is made stealable only when none of the jobs the
//! caller queued is still waiting (`sched::Pending`: its own deque is empty
//! under `ws`, no job it pushed is left in its shared queue under `mts`,
//! `central`, `fifo`), or, while some participant sleeps, when fewer than
//! a few are (`expose_for_sleepers`: a tree of coarse leaves reaches the
//! sleepers before its owners enter the leaves) — and then it is the
//! participant's *oldest* recorded continuation that is queued, the largest
//! piece it holds, not necessarily this `b`. A join that exposes nothing
//! costs a few stores to the participant's own line (no fence, no shared
//! write), which keeps
//! fine-grained recursion (fib without cutoff) close to serial speed, while
//! idle participants steal the shallowest pending continuations, as from
//! Rayon's always-push deque. Where recording is off (inside a lightweight
//! thread, or deeper than `lazy::CAPACITY` joins) the older rule applies:
//! when nothing of ours is queued, expose something — an older recorded
//! continuation if one is left, else this `b` — and otherwise run inline
//! (lazy binary splitting, Tzannes et al.).
//!
//! When `a` returns and `b` was not exposed, `b` runs inline like a plain
//! call. When it was: take it back if nobody stole it
//! (`Scheduler::reclaim`: exactly `b` from a shared queue, so that two
//! joiners never swap continuations) and run it inline; otherwise wait on
//! `b`'s latch, running other jobs meanwhile.
//!
//! Panics follow Rayon: `b` always runs, even when `a` panicked (inline
//! after `a`, or wherever it was stolen to, awaited), and only then does the
//! panic continue to the caller; if both panic, `a`'s is the one that
//! continues (`b`'s payload is dropped). The inline paths catch `a`'s panic
//! too; catching costs nothing unless something panics.

use super::lazy;
use super::registry::Registry;
use super::worker::with_current;
use crate::sched::{JobRef, JobResult, Reclaim, Scheduler, StackJob};
use crate::sync::SetLatch;
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;

/// Runs `a` and `b`, potentially in parallel, and returns both results.
///
/// Called from outside any pool, it runs on the global pool with the calling
/// thread as the master.
///
/// # Panics
///
/// As in Rayon: if `a` panics, `b` still runs (whether it was stolen by
/// another participant or not), and the panic reaches the caller once both
/// have finished. If only `b` panics, its panic reaches the caller after `a`
/// has finished. If both panic, `a`'s panic is the one propagated.
#[inline]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    with_current(|cur| match cur {
        Some((reg, slot)) => join_in(reg, slot, a, b),
        None => join_outside(a, b),
    })
}

/// `join` from a thread outside any pool: enter the global pool as master.
#[cold]
#[inline(never)]
fn join_outside<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    super::global_registry().enter(|| join(a, b))
}

#[inline(always)]
fn join_in<A, B, RA, RB>(reg: &Registry, slot: usize, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    if reg.num_threads() > 1 {
        if lazy::recording() {
            return join_recorded(reg, slot, a, b);
        }
        // Deeper than `lazy::CAPACITY` joins, or in a lightweight thread:
        // lazy binary splitting, an older continuation first.
        if reg.pending.none(slot) && !expose_older(reg, slot) {
            return join_pushed(reg, slot, a, b);
        }
    }
    join_inline(a, b)
}

/// At most this many of a participant's jobs are queued by joins that
/// expose work for sleepers ([`expose_for_sleepers`]).
const EXPOSED_FOR_SLEEPERS: u32 = 4;

/// Whether a recorded join whose participant has jobs queued exposes one
/// more all the same: while some participant sleeps or is being woken for
/// work (`Sleepers::any`), and the whole pool may take jobs, up to
/// [`EXPOSED_FOR_SLEEPERS`] queued. Otherwise a tree of few long leaves
/// reaches idle participants one continuation per owner at a time: an
/// owner that has entered a leaf exposes nothing until it returns, and what
/// it passed on the way down waits (16 leaves of 50 ms on 16 participants
/// took 4 leaves' time on 7; `examples/coarse_join.rs`). Where everyone is
/// busy nobody sleeps, and this costs one load of the sleepers' line, which
/// only sleepers and wakers write. Out of line and only reached when
/// something is queued, so that the join's own code stays as it was (written
/// into `join_recorded` as one condition, it changed how a caller's
/// fine-grained recursion was compiled: `fib` on one participant, which
/// never comes here, ran 2.7x slower). During a region of fewer
/// participants than the pool (`Registry::team`), the workers outside it
/// sleep and may not be woken for its jobs: the sleepers' count says
/// nothing about who could take one, and each push would only scan the
/// sleepers' bits for an eligible one, so the rule is off.
#[inline(never)]
fn expose_for_sleepers(reg: &Registry, slot: usize) -> bool {
    reg.sleepers.any()
        && reg.team.load(Ordering::Relaxed) >= reg.num_threads()
        && reg.pending.count(slot) < EXPOSED_FOR_SLEEPERS
}

/// Queues the participant's oldest unexposed continuation, if it has one.
#[inline(never)]
fn expose_older(reg: &Registry, slot: usize) -> bool {
    match reg.lazy(slot).expose_oldest() {
        Some(oldest) => {
            reg.push_job(slot, oldest);
            true
        }
        None => false,
    }
}

/// `join` with `b` recorded as a continuation (see the module documentation).
/// Out of line: only the shallowest joins of a participant's stack come
/// here, and keeping this path out of `join_in` lets the compiler optimise
/// the deep recursion of fine-grained trees as it does plain calls (inlined,
/// it made fib(30) on one participant 1.5x slower).
#[inline(never)]
fn join_recorded<A, B, RA, RB>(reg: &Registry, slot: usize, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let lazy = reg.lazy(slot);
    let _level = lazy::descend();
    let job_b = StackJob::new(|_migrated| b(), SetLatch::new(reg.parker(slot)));
    // SAFETY: `job_b` does not move until its entry is popped below (a panic
    // of `a` is caught first) and, if it was exposed, `take_back` has taken
    // it back from the queue or seen its latch set.
    let job_ref = unsafe { job_b.as_job_ref() };
    let index = lazy.record(job_ref);
    if reg.pending.none(slot) || expose_for_sleepers(reg, slot) {
        let exposed = expose_older(reg, slot);
        debug_assert!(exposed, "an entry was just recorded");
    }
    let ra = panic::catch_unwind(AssertUnwindSafe(a));
    let stolen = lazy.pop(index) && !take_back(reg, slot, &job_b, job_ref);
    conclude(ra, job_b, stolen)
}

/// `join` with this `b` queued at once (lazy binary splitting).
#[inline(never)]
fn join_pushed<A, B, RA, RB>(reg: &Registry, slot: usize, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(|_migrated| b(), SetLatch::new(reg.parker(slot)));
    // SAFETY: `job_b` does not move until `take_back` has taken it back from
    // the queue or seen its latch set.
    let job_ref = unsafe { job_b.as_job_ref() };
    reg.push_job(slot, job_ref);
    let ra = panic::catch_unwind(AssertUnwindSafe(a));
    let stolen = !take_back(reg, slot, &job_b, job_ref);
    conclude(ra, job_b, stolen)
}

/// The results of a join whose `a` returned `ra`: `b` ran on a thief
/// (`stolen`: its result is in the job) or runs inline now. `a`'s panic wins.
/// Takes the job by value, so only once nothing refers to it any more.
#[inline(always)]
fn conclude<F, RA, RB>(
    ra: std::thread::Result<RA>,
    job_b: StackJob<SetLatch, F, RB>,
    stolen: bool,
) -> (RA, RB)
where
    F: FnOnce(bool) -> RB + Send,
    RB: Send,
{
    if stolen {
        let rb = job_b.into_result();
        return match ra {
            Err(p) => panic::resume_unwind(p),
            Ok(ra) => (ra, JobResult::into_return_value(rb)),
        };
    }
    match ra {
        Ok(ra) => (ra, job_b.run_inline()),
        Err(p) => run_then_resume(|| job_b.run_inline(), p),
    }
}

/// `a` then `b` on the calling thread, with `join`'s panic rules.
#[inline(always)]
fn join_inline<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB,
{
    let ra = match panic::catch_unwind(AssertUnwindSafe(a)) {
        Ok(ra) => ra,
        Err(p) => run_then_resume(b, p),
    };
    (ra, b())
}

/// `a` panicked with `p`: run `b` (dropping a panic of its own), then go on
/// with `a`'s panic.
#[cold]
#[inline(never)]
fn run_then_resume<RB>(b: impl FnOnce() -> RB, p: Box<dyn Any + Send>) -> ! {
    drop(panic::catch_unwind(AssertUnwindSafe(b)));
    panic::resume_unwind(p)
}

/// `b` (`job_b`, queued as `job_ref`) was exposed and `a` has returned:
/// true when it was taken back from the queue (nobody stole it; the caller
/// runs it inline), false once its thief has run it (its latch is set).
/// Other jobs run meanwhile.
#[inline(never)]
fn take_back<F, RB>(reg: &Registry, slot: usize, job_b: &StackJob<SetLatch, F, RB>, job_ref: JobRef) -> bool
where
    F: FnOnce(bool) -> RB + Send,
    RB: Send,
{
    loop {
        if job_b.latch.probe() {
            return false;
        }
        // SAFETY: the caller occupies `slot`.
        match unsafe { reg.sched.reclaim(slot, job_ref) } {
            Reclaim::Mine => return true,
            Reclaim::Other(other) => reg.run_job(slot, other),
            Reclaim::Gone => {
                reg.wait_until(Some(slot), reg.parker(slot), |_| job_b.latch.probe());
                return false;
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::sync::counted;
    use crate::{current_thread_index, Pool, Sched, WaitPolicy};
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// Waits (yielding) until `flag` is set; fails the test after 10 s (60 under TSan)
    /// rather than hanging it.
    fn wait_for(flag: &AtomicBool, what: &str) {
        // ThreadSanitizer runs these 5-20x slower, beside the other tests on
        // 2 cores (`make tsan` once saw 10 s pass here).
        let limit = Duration::from_secs(if cfg!(herd_tsan) { 60 } else { 10 });
        let start = Instant::now();
        while !flag.load(Ordering::Acquire) {
            assert!(start.elapsed() < limit, "{what} never happened");
            std::thread::yield_now();
        }
    }

    /// The panic message of a caught panic (`panic!("literal")` payloads).
    fn message(p: Box<dyn std::any::Any + Send>) -> &'static str {
        *p.downcast::<&'static str>().expect("a &'static str payload")
    }

    /// Runs `join(a, b)` on `pool`, `a` and `b` panicking as asked, and
    /// returns the payload the caller caught and the participant `b` ran on
    /// (`None` if `b` did not run). With `steal`, `a` waits until `b` has
    /// started on another participant before finishing.
    fn join_panics(
        pool: &Pool,
        a_panics: bool,
        b_panics: bool,
        steal: bool,
    ) -> (Option<&'static str>, Option<usize>) {
        let b_started = AtomicBool::new(false);
        let b_ran_on = AtomicUsize::new(usize::MAX);
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.join(
                || {
                    if steal {
                        wait_for(&b_started, "b stolen");
                    }
                    if a_panics {
                        panic!("a");
                    }
                },
                || {
                    b_started.store(true, Ordering::Release);
                    b_ran_on.store(current_thread_index().expect("in the pool"), Ordering::Relaxed);
                    if b_panics {
                        panic!("b");
                    }
                },
            )
        }));
        let ran_on = b_ran_on.load(Ordering::Relaxed);
        (r.err().map(message), (ran_on != usize::MAX).then_some(ran_on))
    }

    /// Not stolen (one participant: `b` runs inline after `a`): `b` runs
    /// even when `a` panicked; `a`'s panic wins over `b`'s.
    #[test]
    fn panics_not_stolen_run_b_and_propagate_a() {
        let pool = Pool::builder().num_threads(1).build().unwrap();
        assert_eq!(join_panics(&pool, false, false, false), (None, Some(0)));
        assert_eq!(join_panics(&pool, true, false, false), (Some("a"), Some(0)));
        assert_eq!(join_panics(&pool, false, true, false), (Some("b"), Some(0)));
        assert_eq!(join_panics(&pool, true, true, false), (Some("a"), Some(0)));
        // The pool still works.
        assert_eq!(pool.install(|| fib(15)), 610);
    }

    /// Stolen (`a` waits until `b` has started on the other participant):
    /// the caller gets `a`'s panic after `b` finished; `b`'s alone otherwise.
    /// On every scheduler.
    #[test]
    fn panics_stolen_wait_for_b_and_propagate_a() {
        for sched in Sched::ALL {
            let pool = Pool::builder().num_threads(2).scheduler(sched).build().unwrap();
            for (a, b, want) in [
                (false, false, None),
                (true, false, Some("a")),
                (false, true, Some("b")),
                (true, true, Some("a")),
            ] {
                assert_eq!(
                    join_panics(&pool, a, b, true),
                    (want, Some(1)),
                    "{sched}: a panics: {a}, b panics: {b}"
                );
            }
            assert_eq!(pool.install(|| fib(15)), 610);
        }
    }

    /// Split but not stolen (the only other participant is kept busy, so the
    /// joiner takes `b` back itself): `b` runs after `a` panicked. On every
    /// scheduler (each has its own `reclaim`).
    #[test]
    fn panics_split_and_reclaimed_run_b() {
        for sched in Sched::ALL {
            let pool = Pool::builder().num_threads(2).scheduler(sched).build().unwrap();
            for (a_panics, b_panics, want) in [(true, false, "a"), (true, true, "a"), (false, true, "b")] {
                let busy = AtomicBool::new(false);
                let release = AtomicBool::new(false);
                let inner = pool.join(
                    || {
                        // The other participant is inside the outer `b` now.
                        wait_for(&busy, "outer b stolen");
                        let (r, on) = join_panics_here(a_panics, b_panics);
                        release.store(true, Ordering::Release);
                        (r, on)
                    },
                    || {
                        busy.store(true, Ordering::Release);
                        wait_for(&release, "inner join done");
                    },
                );
                assert_eq!(
                    inner.0,
                    (Some(want), Some(0)),
                    "{sched}: a panics: {a_panics}, b panics: {b_panics}"
                );
            }
            assert_eq!(pool.install(|| fib(15)), 610);
        }
    }

    /// `join_panics` on the current pool, without stealing help.
    fn join_panics_here(a_panics: bool, b_panics: bool) -> (Option<&'static str>, Option<usize>) {
        let b_ran_on = AtomicUsize::new(usize::MAX);
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            super::join(
                || {
                    if a_panics {
                        panic!("a");
                    }
                },
                || {
                    b_ran_on.store(current_thread_index().expect("in the pool"), Ordering::Relaxed);
                    if b_panics {
                        panic!("b");
                    }
                },
            )
        }));
        let ran_on = b_ran_on.load(Ordering::Relaxed);
        (r.err().map(message), (ran_on != usize::MAX).then_some(ran_on))
    }

    /// A join tree entered while the other participants sleep exposes every
    /// shallow continuation at once (each push wakes one sleeper), not one
    /// per owner at a time: the `b`s of the three joins above the first
    /// leaf are all queued before it runs. (Before, only the first was, and
    /// the others waited until the leaf returned: a tree of few long
    /// leaves ran in waves on a few participants.)
    #[test]
    fn sleeping_participants_get_every_shallow_continuation() {
        let pool = Pool::builder().num_threads(4).wait(WaitPolicy::Passive).build().unwrap();
        let reg = pool.registry.clone();
        for round in 0..5 {
            let start = Instant::now();
            while reg.sleepers.asleep() < 3 {
                assert!(start.elapsed() < Duration::from_secs(10), "the workers never slept");
                std::thread::sleep(Duration::from_millis(1));
            }
            let exposed = pool.install(|| {
                let leaf =
                    || super::super::worker::with_current(|cur| cur.map(|(r, slot)| r.lazy(slot).exposed()));
                super::join(|| super::join(|| super::join(leaf, || None::<u32>).0, || ()).0, || ()).0
            });
            assert_eq!(exposed, Some(3), "round {round}");
        }
    }

    /// A tree of as many coarse leaves as participants (16, on however many
    /// CPUs), on a pool whose workers sleep: every leaf starts before any ends
    /// (each waits, up to 5 s, for all to have started). A participant a push
    /// has claimed counts as being woken until it runs, so later joins still
    /// expose work for it. (Counted only while asleep, it was missed: this
    /// test failed in 2 of 5 runs on 2 CPUs, and on a synthetic
    /// 16-participant topology 16 leaves of 50 ms ran on 15 participants in
    /// about half of the rounds.)
    #[test]
    fn every_coarse_leaf_starts_at_once() {
        use std::sync::{Condvar, Mutex};
        const N: usize = 16;
        let pool = Pool::builder().num_threads(N).wait(WaitPolicy::Passive).build().unwrap();
        let reg = pool.registry.clone();
        fn tree(leaves: usize, started: &(Mutex<usize>, Condvar)) -> usize {
            if leaves == 1 {
                let (lock, cv) = started;
                let mut n = lock.lock().unwrap();
                *n += 1;
                cv.notify_all();
                let (n, _) = cv.wait_timeout_while(n, Duration::from_secs(5), |n| *n < N).unwrap();
                return usize::from(*n >= N);
            }
            let half = leaves / 2;
            let (a, b) = super::join(|| tree(half, started), || tree(leaves - half, started));
            a + b
        }
        for round in 0..10 {
            let start = Instant::now();
            while reg.sleepers.asleep() < N - 1 {
                assert!(start.elapsed() < Duration::from_secs(10), "the workers never slept");
                std::thread::sleep(Duration::from_millis(1));
            }
            let started = (Mutex::new(0), Condvar::new());
            let together = pool.install(|| tree(N, &started));
            assert_eq!(together, N, "round {round}: leaves that saw all {N} start");
        }
    }

    /// While the pool's team is smaller than the pool (a smaller region),
    /// its sleeping workers outside the team cannot take the region's jobs,
    /// so they make no join expose more than the lazy rule does.
    #[test]
    fn sleepers_outside_the_team_expose_nothing_more() {
        let pool = Pool::builder().num_threads(4).wait(WaitPolicy::Passive).build().unwrap();
        let reg = pool.registry.clone();
        let start = Instant::now();
        while reg.sleepers.asleep() < 3 {
            assert!(start.elapsed() < Duration::from_secs(10), "the workers never slept");
            std::thread::sleep(Duration::from_millis(1));
        }
        let old = reg.set_team(1);
        let exposed = pool.install(|| {
            let leaf =
                || super::super::worker::with_current(|cur| cur.map(|(r, slot)| r.lazy(slot).exposed()));
            super::join(|| super::join(|| super::join(leaf, || None::<u32>).0, || ()).0, || ()).0
        });
        reg.set_team(old);
        assert_eq!(exposed, Some(1));
    }

    fn fib(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (a, b) = super::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }

    /// A `join` writes no pool-wide word: with every worker awake (none
    /// announced as sleeping), thousands of splits from the master do not
    /// write the pool's sleeper count once.
    #[test]
    fn joins_write_no_pool_wide_word() {
        let pool = Pool::builder().num_threads(2).wait(WaitPolicy::Active).build().unwrap();
        pool.install(|| assert_eq!(fib(18), 2584));
        let before = counted::writes();
        let r = pool.install(|| fib(22));
        assert_eq!(r, 17711);
        assert_eq!(counted::writes() - before, 0, "joins wrote the pool-wide sleeper count");
    }
}
