//! Lightweight threads (ULTs): functions that run on their own small stack as
//! jobs of a pool, and that *block* — on a [`Feb`](crate::Feb), a
//! [`Barrier`](crate::Barrier) or [`UltHandle::join`] — by suspending, which
//! frees their worker for other jobs (the Qthreads model of the MAESTRO paper,
//! maestro-qthreads-scheduling.txt §2).
//!
//! ```
//! let h = herd::ult::spawn(|| {
//!     let word = std::sync::Arc::new(herd::Feb::new_empty(0u64));
//!     let w = word.clone();
//!     let producer = herd::ult::spawn(move || w.write_ef(42));
//!     let v = word.read_fe(); // suspends until the producer has written
//!     producer.join().unwrap();
//!     v
//! });
//! assert_eq!(h.join().unwrap(), 42);
//! ```
//!
//! **Running.** [`spawn`] queues a job on the caller's pool (the global pool
//! from outside any pool) for the caller's shepherd. A worker that takes it
//! takes a stack from the stack pool (`stack`), makes a corosensei coroutine
//! on it and resumes it; when the function returns, the stack goes back to
//! the pool. A thread that blocks suspends with `Block` and its worker runs
//! the waiter protocol (`block::waiter`); the waker re-queues it with
//! `Registry::submit` for its shepherd, so it resumes on *any* worker of the
//! shepherd. [`yield_now`] suspends with `Yield`: the worker first takes one
//! other job of its own (if any), re-queues the thread, then runs that job,
//! so a thread that polls with `yield_now` lets the others progress.
//!
//! **Migration and thread-locals.** A coroutine may resume on another OS
//! thread than the one it suspended on. herd's own code running inside a
//! lightweight thread re-reads thread-locals after every suspension: they are
//! read only in functions that are not inlined into a caller that suspends
//! (the compiler may otherwise reuse a thread-local's address computed on
//! the previous thread). **User code must not hold references to
//! thread-locals (or thread-bound objects such as a `MutexGuard`) across a
//! blocking call** (`Feb` operations, `Barrier::wait`, `UltHandle::join`,
//! [`yield_now`]).
//!
//! **Stacks** are `HERD_STACK_SIZE` bytes (default 64 KiB) with a guard page;
//! running past one is reported (`guard`): the process prints
//! `herd: lightweight thread stack overflow (stack N bytes; raise HERD_STACK_SIZE)`
//! and aborts. Threads queued but not started hold no stack; each *started*
//! unfinished thread holds one (about 32 000 at most by default; see
//! `stack`).

mod guard;
mod stack;

pub use stack::size as stack_size;

use crate::block::waiter::{Blockable, UltState, Waiter};
use crate::pool::{current_arc, global_registry, with_current, without_lazy_joins, Registry};
use crate::sched::JobRef;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

/// Why a lightweight thread suspended.
enum Suspend {
    /// Re-queue it ([`yield_now`]).
    Yield,
    /// It registered a [`Waiter`]; its waker re-queues it.
    Block,
}

type Co = Coroutine<(), Suspend, (), DefaultStack>;

/// A lightweight thread's control block, at the start of its job data.
pub(crate) struct Core {
    state: UltState,
    reg: Arc<Registry>,
    shepherd: usize,
    /// The job function that resumes it (monomorphised per spawn site).
    execute: unsafe fn(*const ()),
    /// Set by the coroutine when it starts; valid while it has not returned.
    yielder: Cell<*const Yielder<(), Suspend>>,
    /// Made when the thread first runs.
    co: UnsafeCell<Option<Co>>,
    /// The guard page of its stack.
    guard: Cell<(usize, usize)>,
}

// SAFETY: a `Core` (with its coroutine and whatever is on its stack) moves
// between worker threads: whichever worker runs its job owns it, one at a
// time (a job runs once; the waiter protocol re-queues it only after it has
// suspended). What the coroutine keeps on its stack is the spawned `Send`
// closure and herd's own frames, which re-read thread-locals after each
// suspension (see the module documentation); user code must not hold
// thread-local references across blocking calls.
unsafe impl Send for Core {}

/// The job data of a lightweight thread: its core, then the closure that
/// starts it (taken on the first run).
#[repr(C)]
struct Ult<S> {
    core: Core,
    start: UnsafeCell<Option<S>>,
}

thread_local! {
    /// The lightweight thread this OS thread is running, or null.
    static CURRENT: Cell<*const Core> = const { Cell::new(ptr::null()) };
}

/// True when called from inside a lightweight thread.
#[inline(never)]
pub fn current_is_ult() -> bool {
    !CURRENT.with(|c| c.get()).is_null()
}

/// The running lightweight thread as a [`Blockable`] for the waiter protocol.
#[inline(never)]
pub(crate) fn current_blockable() -> Option<Blockable> {
    let core = CURRENT.with(|c| c.get());
    // SAFETY: the core of the running thread is alive while it runs.
    (!core.is_null()).then(|| Blockable {
        state: unsafe { &(*core).state },
        ctx: core as *const (),
        suspend: suspend_blocked,
        requeue,
    })
}

/// Suspends the running lightweight thread with `Block`.
unsafe fn suspend_blocked(ctx: *const ()) {
    // SAFETY: `ctx` is the running thread's core, whose yielder is valid
    // while its coroutine runs.
    unsafe { (*(*(ctx as *const Core)).yielder.get()).suspend(Suspend::Block) };
}

/// Queues a suspended lightweight thread to run in its shepherd.
unsafe fn requeue(ctx: *const ()) {
    // SAFETY: `ctx` is a suspended thread that the caller owns.
    let core = unsafe { &*(ctx as *const Core) };
    // The thread may run and finish (dropping its registry reference) as soon
    // as it is queued: keep the registry alive through `submit`.
    let reg = core.reg.clone();
    // SAFETY: the job data stays valid until the job has run once.
    reg.submit(unsafe { JobRef::new(ctx, core.execute) }, core.shepherd);
}

/// Yields the running lightweight thread: it is re-queued and other jobs
/// may run first. Outside a lightweight thread, yields the OS thread.
pub fn yield_now() {
    let core = CURRENT.with(|c| c.get());
    if core.is_null() {
        std::thread::yield_now();
    } else {
        // SAFETY: the running thread's yielder is valid while it runs.
        unsafe { (*(*core).yielder.get()).suspend(Suspend::Yield) };
    }
}

/// Runs `f` as a lightweight thread of the caller's pool (the global pool
/// from outside any pool), in the caller's shepherd (shepherd 0 from
/// outside), and returns a handle to join it.
///
/// `f` runs on its own stack of [`stack_size`] bytes and may block on
/// [`Feb`](crate::Feb)s, [`Barrier`](crate::Barrier)s and other threads'
/// handles without holding its worker.
pub fn spawn<F, R>(f: F) -> UltHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    guard::install();
    let (reg, shepherd) = caller_pool();
    let packet = Arc::new(Packet::new());
    let p = packet.clone();
    let start = move |stack: std::io::Result<()>| {
        let r =
            match stack {
                Ok(()) => catch_unwind(AssertUnwindSafe(f)),
                Err(e) => Err(Box::new(format!("herd: cannot map a lightweight thread stack: {e}"))
                    as Box<dyn Any + Send>),
            };
        p.complete(r);
    };
    launch(reg.clone(), shepherd, start);
    UltHandle { packet, reg }
}

fn launch<S: FnOnce(std::io::Result<()>) + Send + 'static>(reg: Arc<Registry>, shepherd: usize, start: S) {
    let ult = Box::new(Ult {
        core: Core {
            state: UltState::new(),
            reg,
            shepherd,
            execute: run::<S>,
            yielder: Cell::new(ptr::null()),
            co: UnsafeCell::new(None),
            guard: Cell::new((0, 0)),
        },
        start: UnsafeCell::new(Some(start)),
    });
    let data = Box::into_raw(ult) as *const ();
    // SAFETY: `core` is the first field of the `repr(C)` `Ult`.
    let core = unsafe { &*(data as *const Core) };
    // SAFETY: the box is freed by `run` after the thread returns, so the data
    // is valid until the job (and every re-queue of it) has run.
    core.reg.submit(unsafe { JobRef::new(data, run::<S>) }, shepherd);
}

/// The pool a spawn from here goes to: the caller's (a participant's), else
/// the global pool; and the shepherd.
fn caller_pool() -> (Arc<Registry>, usize) {
    match current_arc() {
        Some((reg, slot)) => {
            let shepherd = reg.shepherds.of[slot];
            (reg, shepherd)
        }
        None => (global_registry().clone(), 0),
    }
}

/// Sets the thread-local current thread for a resume, restoring it after.
struct Resuming {
    prev: *const Core,
}

impl Resuming {
    fn enter(core: *const Core) -> Resuming {
        Resuming { prev: CURRENT.with(|c| c.replace(core)) }
    }
}

impl Drop for Resuming {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.prev));
    }
}

/// The job of a lightweight thread: start or resume it until it returns,
/// yields or blocks.
unsafe fn run<S: FnOnce(std::io::Result<()>) + Send + 'static>(data: *const ()) {
    let ult = data as *mut Ult<S>;
    let core_ptr = data as *const Core;
    // SAFETY: the job data is a live `Ult<S>` (see `launch`), owned by this
    // job while it runs; `core` is its first field.
    let core = unsafe { &*core_ptr };
    // SAFETY: only the worker running the job touches the coroutine.
    let co = unsafe { &mut *core.co.get() };
    if co.is_none() {
        // SAFETY: as above; the start closure is taken on the first run only.
        let start = unsafe { (*(*ult).start.get()).take() }.expect("a lightweight thread starts once");
        match stack::take() {
            Ok(stack) => {
                core.guard.set(stack::guard_of(&stack));
                *co = Some(Coroutine::with_stack(stack, move |y: &Yielder<(), Suspend>, ()| {
                    // SAFETY: the core outlives its coroutine.
                    unsafe { (*core_ptr).yielder.set(y) };
                    start(Ok(()));
                }));
            }
            Err(e) => {
                start(Err(e));
                // SAFETY: the thread never ran; nothing refers to it any more.
                drop(unsafe { Box::from_raw(ult) });
                return;
            }
        }
    }
    guard::ensure_altstack();
    let coroutine = co.as_mut().expect("made above");
    loop {
        let r = {
            let _current = Resuming::enter(core_ptr);
            let _guard = guard::Running::enter(core.guard.get(), stack::size());
            // It may suspend inside a `join` and resume on another worker:
            // no join continuation of it is recorded on this participant.
            without_lazy_joins(|| coroutine.resume(()))
        };
        match r {
            CoroutineResult::Return(()) => {
                let finished = co.take().expect("it ran");
                stack::give(finished.into_stack());
                // SAFETY: the thread returned: no waker or queue refers to it.
                drop(unsafe { Box::from_raw(ult) });
                return;
            }
            CoroutineResult::Yield(Suspend::Yield) => {
                // SAFETY: the thread is suspended and owned by this job.
                unsafe { yield_to_others(core_ptr) };
                return;
            }
            // Parked: the waker re-queues it (and may already have). Woken
            // before it finished suspending: resume it at once.
            CoroutineResult::Yield(Suspend::Block) => {
                if core.state.park() {
                    return;
                }
            }
        }
    }
}

/// Re-queues a yielding thread after taking one other job of the calling
/// participant, which it then runs.
unsafe fn yield_to_others(core: *const Core) {
    with_current(|cur| {
        // SAFETY (all three blocks): the thread is alive until re-queued,
        // and suspended, so ours to queue; the pool the calling thread
        // occupies outlives this call.
        let other = cur.and_then(|(reg, slot)| {
            let same_pool = ptr::eq(reg, unsafe { Arc::as_ptr(&(*core).reg) });
            same_pool.then(|| reg.find_work(slot)).flatten().map(|job| (reg, slot, job))
        });
        unsafe { requeue(core as *const ()) };
        if let Some((reg, slot, job)) = other {
            reg.run_job(slot, job);
        }
    })
}

/// The result slot shared by a thread and its handle.
struct Packet<R> {
    /// Null, the joiner's waiter, or `finished()`.
    state: AtomicPtr<Waiter>,
    result: UnsafeCell<Option<std::thread::Result<R>>>,
}

// SAFETY: the result is written once by the thread before `state` is swapped
// to finished (release) and read once by the joiner after seeing it
// (acquire); R: Send moves it between threads.
unsafe impl<R: Send> Sync for Packet<R> {}
// SAFETY: as above.
unsafe impl<R: Send> Send for Packet<R> {}

fn finished() -> *mut Waiter {
    NonNull::dangling().as_ptr()
}

impl<R> Packet<R> {
    fn new() -> Packet<R> {
        Packet { state: AtomicPtr::new(ptr::null_mut()), result: UnsafeCell::new(None) }
    }

    fn is_finished(&self) -> bool {
        self.state.load(Ordering::Acquire) == finished()
    }

    /// The thread: publish the result, wake the joiner if it waits.
    fn complete(&self, r: std::thread::Result<R>) {
        // SAFETY: only the thread writes the result, before publishing it.
        unsafe { *self.result.get() = Some(r) };
        let prev = self.state.swap(finished(), Ordering::AcqRel);
        if !prev.is_null() {
            // SAFETY: `prev` is the joiner's registered waiter, woken once.
            unsafe { Waiter::wake(prev) };
        }
    }

    /// The joiner: block until the thread has completed.
    fn wait(&self) {
        let w = Waiter::current();
        let me = &w as *const Waiter as *mut Waiter;
        if self.state.compare_exchange(ptr::null_mut(), me, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            w.wait();
        }
        debug_assert!(self.is_finished());
    }
}

/// A handle to a lightweight thread, returned by [`spawn`]. Dropping it
/// detaches the thread.
pub struct UltHandle<R> {
    packet: Arc<Packet<R>>,
    reg: Arc<Registry>,
}

impl<R> std::fmt::Debug for UltHandle<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UltHandle").field("finished", &self.is_finished()).finish()
    }
}

impl<R> UltHandle<R> {
    /// Waits for the thread and returns its result, or the payload of its
    /// panic. From a lightweight thread this suspends; from a participant of
    /// a pool it runs other jobs meanwhile; from outside every pool it takes
    /// the thread's pool's master role if free (running its jobs, so that
    /// even a pool without workers completes the thread), else it sleeps.
    pub fn join(self) -> std::thread::Result<R> {
        if !self.packet.is_finished() {
            let packet = &*self.packet;
            if with_current(|cur| cur.is_none()) {
                if let Err(wait) = self.reg.try_enter_local(|| packet.wait()) {
                    wait();
                }
            } else {
                packet.wait();
            }
        }
        // SAFETY: the thread has completed (acquire above) and this consuming
        // call is the only reader.
        unsafe { (*self.packet.result.get()).take() }.expect("a completed thread left its result")
    }

    /// True once the thread has returned (or panicked).
    pub fn is_finished(&self) -> bool {
        self.packet.is_finished()
    }
}

#[cfg(all(test, not(loom), not(herd_tsan)))]
mod tests {
    use super::*;

    #[test]
    fn spawn_join_and_current_is_ult() {
        assert!(!current_is_ult());
        let h = spawn(|| (current_is_ult(), 6 * 7));
        assert_eq!(h.join().unwrap(), (true, 42));
    }

    #[test]
    fn yield_now_resumes() {
        let h = spawn(|| {
            let mut n = 0;
            for _ in 0..10 {
                yield_now();
                n += 1;
            }
            n
        });
        assert_eq!(h.join().unwrap(), 10);
    }
}
