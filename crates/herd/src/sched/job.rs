//! Type-erased jobs: what sits in a deque.
//!
//! A [`JobRef`] is a data pointer plus the function that knows its type. Jobs
//! live either on the stack of the thread that waits for them ([`StackJob`],
//! used by `join`: the owner never returns before the job has run, so the
//! pointer stays valid) or on the heap ([`HeapJob`], used by `scope` spawns:
//! the job frees itself when it has run).

use crate::sync::latch::Latch;
use std::any::Any;
use std::cell::UnsafeCell;
use std::panic::{self, AssertUnwindSafe};

/// A pointer to a job and the function that runs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobRef {
    data: *const (),
    execute: unsafe fn(*const ()),
}

// SAFETY: a JobRef is handed between participants by the deques; the job types
// it points to are only built from `Send` closures (see StackJob/HeapJob).
unsafe impl Send for JobRef {}

/// Two JobRefs are the same job when they point to the same data.
impl PartialEq for JobRef {
    fn eq(&self, other: &JobRef) -> bool {
        std::ptr::eq(self.data, other.data)
    }
}
impl Eq for JobRef {}

impl JobRef {
    /// # Safety
    /// `data` must stay valid until `execute(data)` has been called exactly once.
    pub(crate) unsafe fn new(data: *const (), execute: unsafe fn(*const ())) -> JobRef {
        JobRef { data, execute }
    }

    /// The job's data pointer (model tests name jobs by it).
    #[cfg(test)]
    pub(crate) fn data(self) -> *const () {
        self.data
    }

    /// The data pointer and the function that runs it (what a runtime's
    /// `Admit` rule looks at).
    #[inline]
    pub(crate) fn parts(self) -> (*const (), unsafe fn(*const ())) {
        (self.data, self.execute)
    }

    /// Runs the job. Each JobRef must be executed exactly once.
    #[inline]
    pub(crate) unsafe fn execute(self) {
        // SAFETY: the constructor's contract.
        unsafe { (self.execute)(self.data) }
    }
}

/// The outcome of a job: not yet run, a value, or a caught panic.
pub(crate) enum JobResult<R> {
    None,
    Ok(R),
    Panic(Box<dyn Any + Send>),
}

impl<R> JobResult<R> {
    /// The value, re-raising a caught panic.
    pub(crate) fn into_return_value(self) -> R {
        match self {
            JobResult::Ok(r) => r,
            JobResult::Panic(p) => panic::resume_unwind(p),
            JobResult::None => unreachable!("job result read before the job ran"),
        }
    }
}

/// A job on the stack of the thread that will wait for it.
pub(crate) struct StackJob<L: Latch, F, R> {
    pub(crate) latch: L,
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<JobResult<R>>,
}

impl<L: Latch, F: FnOnce(bool) -> R + Send, R: Send> StackJob<L, F, R> {
    pub(crate) fn new(func: F, latch: L) -> Self {
        StackJob { latch, func: UnsafeCell::new(Some(func)), result: UnsafeCell::new(JobResult::None) }
    }

    /// # Safety
    /// The job must not move or be dropped until it has run (the latch is set)
    /// or been taken back with [`StackJob::run_inline`].
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef {
        // SAFETY: forwarded to the caller.
        unsafe { JobRef::new(self as *const Self as *const (), Self::execute) }
    }

    /// Runs the job on a thief: stores the result (or the panic), then sets the latch.
    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` came from `as_job_ref` and the owner keeps the job
        // alive until the latch is set, which is our last access.
        unsafe {
            let this = &*(this as *const Self);
            let func = (*this.func.get()).take().expect("job run twice");
            *this.result.get() = match panic::catch_unwind(AssertUnwindSafe(|| func(true))) {
                Ok(r) => JobResult::Ok(r),
                Err(p) => JobResult::Panic(p),
            };
            Latch::set(&this.latch);
        }
    }

    /// Runs the job on its owner, which popped it back before anyone stole it.
    pub(crate) fn run_inline(self) -> R {
        let func = self.func.into_inner().expect("job run twice");
        func(false)
    }

    /// The result after the latch was observed set.
    pub(crate) fn into_result(self) -> JobResult<R> {
        self.result.into_inner()
    }
}

/// A job on the heap that frees itself once run.
pub(crate) struct HeapJob<F> {
    func: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    pub(crate) fn new(func: F) -> Box<Self> {
        Box::new(HeapJob { func })
    }

    /// Leaks the job into a JobRef; running it frees it.
    ///
    /// # Safety
    /// Everything `func` borrows must outlive the run (scopes guarantee this by
    /// waiting for all their jobs).
    pub(crate) unsafe fn into_job_ref(self: Box<Self>) -> JobRef {
        // SAFETY: the box stays alive until `execute` reclaims it.
        unsafe { JobRef::new(Box::into_raw(self) as *const (), Self::execute) }
    }

    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` came from `Box::into_raw` in `into_job_ref` and each
        // JobRef runs once.
        let this = unsafe { Box::from_raw(this as *mut Self) };
        (this.func)();
    }
}
