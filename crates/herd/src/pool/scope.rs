//! `scope(|s| s.spawn(...))`: spawn any number of tasks that may borrow from
//! the enclosing stack; `scope` returns when all of them have finished.
//!
//! The scope holds a [`CountLatch`] starting at one (for the scope body). Each
//! `spawn` increments it and pushes a heap job on the spawning participant's
//! deque (or the injector, from outside the pool); each job counts it down as
//! its last access to the scope. The owner counts down for the body, then waits
//! on the latch, running jobs (its own first, newest first) meanwhile. The first
//! panic of the body or of any task is kept and re-raised after everything has
//! finished.

use super::registry::Registry;
use super::worker::{slot_in, with_current};
use crate::sched::HeapJob;
use crate::sync::latch::Latch;
use crate::sync::CountLatch;
use std::any::Any;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

/// A scope in which tasks can be spawned; see [`scope`].
pub struct Scope<'scope> {
    registry: *const Registry,
    latch: CountLatch,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Invariant in `'scope`, like `std::thread::Scope`.
    _marker: PhantomData<&'scope mut &'scope ()>,
}

// SAFETY: the registry pointer is only used to reach thread-safe state; the
// scope outlives every task that refers to it.
unsafe impl Sync for Scope<'_> {}
// SAFETY: as above.
unsafe impl Send for Scope<'_> {}

/// Creates a scope, runs `body` in it, and waits for every task spawned in it.
///
/// Called from outside any pool, it runs on the global pool with the calling
/// thread as the master.
pub fn scope<'scope, OP, R>(body: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    with_current(|cur| match cur {
        Some((reg, slot)) => scope_in(reg, slot, body),
        None => super::global_registry().enter(|| scope(body)),
    })
}

fn scope_in<'scope, OP, R>(reg: &Registry, slot: usize, body: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    let scope = Scope {
        registry: reg,
        latch: CountLatch::new(1, reg.parker(slot)),
        panic: Mutex::new(None),
        _marker: PhantomData,
    };
    let result = panic::catch_unwind(AssertUnwindSafe(|| body(&scope)));
    // SAFETY: the scope is alive; this counts down for the body.
    unsafe { Latch::set(&scope.latch) };
    reg.wait_until(Some(slot), reg.parker(slot), |last| scope.latch.probe(last));
    if let Some(p) = scope.panic.lock().unwrap_or_else(|e| e.into_inner()).take() {
        panic::resume_unwind(p);
    }
    match result {
        Ok(r) => r,
        Err(p) => panic::resume_unwind(p),
    }
}

impl<'scope> Scope<'scope> {
    /// Spawns `f` into the scope. It may run on any participant, before or
    /// after this call returns, but before [`scope`] returns.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.latch.increment();
        let scope_addr = self as *const Scope<'scope> as usize;
        let job = HeapJob::new(move || {
            // SAFETY: the scope waits for this job before it is dropped.
            let scope = unsafe { &*(scope_addr as *const Scope<'scope>) };
            if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(scope))) {
                scope.panic.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(p);
            }
            // SAFETY: last access to the scope from this job.
            unsafe { Latch::set(&scope.latch) };
        });
        // SAFETY: the scope outlives the job (it waits on the latch), so the
        // job's borrows of `'scope` data stay valid.
        let job_ref = unsafe { job.into_job_ref() };
        // SAFETY: the registry outlives the scope.
        let reg = unsafe { &*self.registry };
        match slot_in(reg) {
            Some(slot) => reg.push_job(slot, job_ref),
            None => reg.inject(job_ref),
        }
    }
}
