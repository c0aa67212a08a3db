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
//! jobs meanwhile. If `a` panicked, `b` is not started if still local (or
//! awaited if stolen) and the panic continues to the caller.

use super::registry::Registry;
use super::worker::with_current;
use crate::sched::{JobResult, Reclaim, Scheduler, StackJob};
use crate::sync::SetLatch;
use std::panic::{self, AssertUnwindSafe};

/// Runs `a` and `b`, potentially in parallel, and returns both results.
///
/// Called from outside any pool, it runs on the global pool with the calling
/// thread as the master. A panic in either closure reaches the caller after
/// both have finished (or after `a`, if `b` had not started).
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
        let ra = a();
        return (ra, b());
    }
    join_split(reg, slot, a, b)
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
                    Err(p) => panic::resume_unwind(p),
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
    use crate::{Pool, WaitPolicy};

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
