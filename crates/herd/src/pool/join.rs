//! `join(a, b)`: run two closures, potentially in parallel.
//!
//! Lazy splitting: `b` is made stealable only when none of the jobs the
//! caller queued is still waiting — its own deque is empty (`ws`), or no job
//! it pushed is left in its shared queue (`mts`, `central`, `fifo` count each
//! slot's queued jobs) — i.e. when no stealable work of this participant is
//! already waiting (Tzannes et al.'s lazy binary splitting). Otherwise `a` and `b` run inline
//! like plain calls — one thread-local read and a read of the worker's own
//! queued-job count (`sched::Pending`) — which
//! keeps fine-grained recursion (fib without cutoff) close to serial speed,
//! while every idle participant still finds the oldest, largest piece of work
//! to steal.
//!
//! When `b` is pushed: run `a` (catching a panic), then take `b` back if
//! nobody stole it (`Scheduler::reclaim`: exactly `b` from a shared queue,
//! so that two joiners never swap continuations) and run it inline; otherwise wait on `b`'s latch, running other
//! jobs meanwhile.
//!
//! Panics follow Rayon: `b` always runs, even when `a` panicked (inline
//! after `a`, or wherever it was stolen to, awaited), and only then does the
//! panic continue to the caller; if both panic, `a`'s is the one that
//! continues (`b`'s payload is dropped). The inline paths catch `a`'s panic
//! too; catching costs nothing unless something panics.

use super::registry::Registry;
use super::worker::with_current;
use crate::sched::{JobResult, Reclaim, Scheduler, StackJob};
use crate::sync::SetLatch;
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

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
    if reg.num_threads() == 1 || !reg.pending.none(slot) {
        let ra = match panic::catch_unwind(AssertUnwindSafe(a)) {
            Ok(ra) => ra,
            Err(p) => run_then_resume(b, p),
        };
        return (ra, b());
    }
    join_split(reg, slot, a, b)
}

/// `a` panicked with `p`: run `b` (dropping a panic of its own), then go on
/// with `a`'s panic.
#[cold]
#[inline(never)]
fn run_then_resume<RB>(b: impl FnOnce() -> RB, p: Box<dyn Any + Send>) -> ! {
    drop(panic::catch_unwind(AssertUnwindSafe(b)));
    panic::resume_unwind(p)
}

#[inline(never)]
fn join_split<A, B, RA, RB>(reg: &Registry, slot: usize, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(|_migrated| b(), SetLatch::new(reg.parker(slot)));
    // SAFETY: `job_b` stays on this frame until it ran (latch set) or was popped back.
    let job_ref = unsafe { job_b.as_job_ref() };
    reg.push_job(slot, job_ref);

    let ra = panic::catch_unwind(AssertUnwindSafe(a));

    loop {
        if job_b.latch.probe() {
            break;
        }
        // SAFETY: the caller occupies `slot`.
        match unsafe { reg.sched.reclaim(slot, job_ref) } {
            Reclaim::Mine => {
                // Nobody stole `b`.
                return match ra {
                    Ok(ra) => (ra, job_b.run_inline()),
                    Err(p) => run_then_resume(|| job_b.run_inline(), p),
                };
            }
            Reclaim::Other(other) => reg.run_job(slot, other),
            Reclaim::Gone => {
                reg.wait_until(Some(slot), reg.parker(slot), |_| job_b.latch.probe());
                break;
            }
        }
    }
    let rb = job_b.into_result();
    match (ra, rb) {
        (Err(p), _) => panic::resume_unwind(p),
        (Ok(ra), rb) => (ra, JobResult::into_return_value(rb)),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::sync::counted;
    use crate::{current_thread_index, Pool, Sched, WaitPolicy};
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// Waits (yielding) until `flag` is set; fails the test after 10 s
    /// rather than hanging it.
    fn wait_for(flag: &AtomicBool, what: &str) {
        let start = Instant::now();
        while !flag.load(Ordering::Acquire) {
            assert!(start.elapsed() < Duration::from_secs(10), "{what} never happened");
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
