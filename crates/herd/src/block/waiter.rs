//! The block/wake protocol of lightweight threads, full/empty bits, the
//! software-thread barrier and `UltHandle::join`.
//!
//! A [`Waiter`] lives on the stack of the party that blocks, inside the
//! record it queues on the object it waits for (a FEB word, a barrier, a join
//! packet). Whoever makes the wait condition true (the *waker*) first writes
//! what the blocked party will read (a value, a result) and then calls
//! [`Waiter::wake`] exactly once per registration. The waker reads the
//! waiter's kind *before* the wake-up and touches nothing of it after, except
//! as stated below; the blocked party does not leave [`Waiter::wait`] (and so
//! keeps the record alive) until the waker is done with it.
//!
//! **Who waits, who wakes:**
//! * A **lightweight thread** suspends its coroutine ([`UltState`]), so its
//!   worker is free to run other jobs. The worker, *after* the coroutine has
//!   yielded, moves the state `RUNNING → PARKED` with a compare-exchange. The
//!   waker `swap`s in `NOTIFIED`: if it read `PARKED`, it owns the thread and
//!   re-queues it (on any worker of its shepherd, so the coroutine may resume
//!   on another OS thread); if it read `RUNNING`, the thread has not finished
//!   suspending, the worker's compare-exchange fails and the worker resumes it
//!   at once. Either way the thread resumes exactly once, after the wake.
//! * An OS thread that is a **participant** of a pool waits with the pool's
//!   idle loop (`Registry::wait_until`), running other jobs meanwhile — this
//!   is what lets a pool's master join lightweight threads when the pool has
//!   few workers. The waker `swap`s `phase` to `WOKEN` (a `SeqCst`
//!   read-modify-write), calls `unpark_if_sleeping` on the participant's
//!   parker, and stores `RELEASED`. The participant's last check before
//!   sleeping reads `phase` with a read-modify-write (the conditional-wake
//!   rule of `sync::parker`).
//! * **Any other thread** parks on its thread-local [`Parker`]; the waker does
//!   the same `WOKEN` swap, an unconditional `unpark`, and stores `RELEASED`.
//!
//! For OS threads, the waiter leaves only when it reads `RELEASED` (it spins
//! briefly between `WOKEN` and `RELEASED`), so the parker or registry the
//! waker is still touching stays alive. A lightweight thread needs no such
//! step: after its `NOTIFIED` swap the waker touches the thread only when it
//! read `PARKED`, and then the thread cannot run until the waker re-queues it.
//!
//! **Ordering:** the waker's writes happen before the wake-up's release
//! (`swap` of `NOTIFIED`/`WOKEN`), which the blocked party reads with acquire
//! (its failed compare-exchange, `phase` load) or receives through the job
//! queue that re-queues it.
//!
//! Loom models: `block::feb::loom_tests` (the FEB wait queue with this state
//! machine).

use crate::pool::{with_current, Registry};
use crate::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use crate::sync::{Observe, Parker};

/// The state machine of a lightweight thread that blocks; see the module
/// documentation.
#[derive(Debug)]
pub(crate) struct UltState(AtomicU8);

const RUNNING: u8 = 0;
const PARKED: u8 = 1;
const NOTIFIED: u8 = 2;

impl UltState {
    pub(crate) fn new() -> UltState {
        UltState(AtomicU8::new(RUNNING))
    }

    /// Worker, after the thread's coroutine suspended to block: true if it
    /// stays parked (its waker re-queues it), false if it was woken meanwhile
    /// and must be resumed at once.
    #[inline]
    pub(crate) fn park(&self) -> bool {
        match self.0.compare_exchange(RUNNING, PARKED, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => true,
            Err(s) => {
                debug_assert_eq!(s, NOTIFIED);
                self.0.store(RUNNING, Ordering::Relaxed);
                false
            }
        }
    }

    /// Waker: true if the caller must re-queue the thread (it had parked).
    #[inline]
    pub(crate) fn notify(&self) -> bool {
        if self.0.swap(NOTIFIED, Ordering::AcqRel) == PARKED {
            // We own the thread now; nobody else reads the state until the
            // thread runs again, after it has been re-queued.
            self.0.store(RUNNING, Ordering::Relaxed);
            true
        } else {
            false
        }
    }
}

/// How a lightweight thread blocks and is resumed (type-erased, so that the
/// protocol is independent of the coroutine machinery and can be modelled).
#[derive(Clone, Copy)]
pub(crate) struct Blockable {
    pub(crate) state: *const UltState,
    pub(crate) ctx: *const (),
    /// Called by the thread itself: suspends until re-queued (the worker
    /// then runs [`UltState::park`]).
    pub(crate) suspend: unsafe fn(*const ()),
    /// Called by a waker that owns the parked thread: queue it to run.
    pub(crate) requeue: unsafe fn(*const ()),
}

#[derive(Clone, Copy)]
enum Who {
    Ult(Blockable),
    Participant(*const Registry, usize),
    Thread(*const Parker),
}

const WAITING: u32 = 0;
const WOKEN: u32 = 1;
const RELEASED: u32 = 2;

/// A blocked party; see the module documentation.
pub(crate) struct Waiter {
    who: Who,
    /// OS-thread waiters: `WAITING`, `WOKEN` (the waker still touches the
    /// parker), `RELEASED`.
    phase: AtomicU32,
}

thread_local! {
    /// Where a thread outside every pool sleeps.
    static PARKER: Parker = Parker::new();
}

impl Waiter {
    /// A waiter for the calling context: the running lightweight thread, else
    /// the pool participant, else a plain thread.
    ///
    /// Not inlined: it reads thread-locals, which must be re-read after each
    /// suspension of a lightweight thread (see `crate::ult`).
    #[inline(never)]
    pub(crate) fn current() -> Waiter {
        if let Some(b) = crate::ult::current_blockable() {
            return Waiter::ult(b);
        }
        if let Some((reg, slot)) = with_current(|cur| cur.map(|(reg, slot)| (reg as *const Registry, slot))) {
            return Waiter::with(Who::Participant(reg, slot));
        }
        PARKER.with(Waiter::thread)
    }

    /// A lightweight thread's waiter.
    pub(crate) fn ult(b: Blockable) -> Waiter {
        Waiter::with(Who::Ult(b))
    }

    /// A waiter that sleeps on `parker`, which must outlive the wait.
    pub(crate) fn thread(parker: &Parker) -> Waiter {
        Waiter::with(Who::Thread(parker))
    }

    fn with(who: Who) -> Waiter {
        Waiter { who, phase: AtomicU32::new(WAITING) }
    }

    /// Blocks until [`Waiter::wake`] has been called (and, for OS threads,
    /// has finished). Call once, after the waiter has been published to its
    /// waker; the waiter must not move until this returns.
    #[inline(never)]
    pub(crate) fn wait(&self) {
        match self.who {
            // SAFETY: `b` describes the running thread (built by
            // `ult::current_blockable` or a model), which is the caller.
            Who::Ult(b) => unsafe { (b.suspend)(b.ctx) },
            Who::Participant(reg, slot) => {
                // SAFETY: the caller occupies `slot` of this live registry.
                let reg = unsafe { &*reg };
                // Help first: the job we wait for is often the newest one
                // queued (a thread just spawned); run queued jobs at once
                // rather than after the idle loop's first spins, while an
                // idle sibling might take it to another core.
                while self.phase.load(Ordering::Acquire) == WAITING {
                    match reg.find_work(slot) {
                        Some(job) => reg.run_job(slot, job),
                        None => break,
                    }
                }
                reg.wait_until(Some(slot), reg.parker(slot), |last| self.phase.observe(last) != WAITING);
                self.await_release();
            }
            Who::Thread(p) => {
                // SAFETY: the parker outlives the wait (`Waiter::thread`).
                let p = unsafe { &*p };
                loop {
                    let token = p.prepare();
                    if self.phase.load(Ordering::Acquire) != WAITING {
                        break;
                    }
                    p.park(token);
                }
                self.await_release();
            }
        }
    }

    /// The short wait between the waker's `WOKEN` and `RELEASED`.
    fn await_release(&self) {
        let mut spins = 0u32;
        while self.phase.load(Ordering::Acquire) != RELEASED {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                yield_now();
            }
        }
    }

    /// Wakes the party blocked on `this`. Call exactly once per
    /// registration, after writing what it will read.
    ///
    /// # Safety
    /// `this` points to a published waiter that has not been woken yet. It
    /// may be freed by its owner as soon as the wake-up is complete.
    #[inline(never)]
    pub(crate) unsafe fn wake(this: *const Waiter) {
        // SAFETY: the waiter stays alive until woken (its owner is blocked).
        let who = unsafe { (*this).who };
        match who {
            Who::Ult(b) => {
                // SAFETY: a blocked thread's state outlives it; after the swap
                // we touch the thread only if we own it (it had parked).
                if unsafe { (*b.state).notify() } {
                    // SAFETY: the thread is parked and ours to re-queue.
                    unsafe { (b.requeue)(b.ctx) }
                }
            }
            Who::Participant(reg, slot) => {
                // SAFETY: the owner waits for `RELEASED` before leaving, so the
                // waiter and the registry it occupies stay alive until then.
                unsafe {
                    (*this).phase.swap(WOKEN, Ordering::SeqCst);
                    (*reg).parker(slot).unpark_if_sleeping();
                    (*this).phase.store(RELEASED, Ordering::Release);
                }
            }
            Who::Thread(p) => {
                // SAFETY: as above, the parker is alive until `RELEASED`.
                unsafe {
                    (*this).phase.swap(WOKEN, Ordering::SeqCst);
                    (*p).unpark();
                    (*this).phase.store(RELEASED, Ordering::Release);
                }
            }
        }
    }
}

#[cfg(not(loom))]
fn yield_now() {
    std::thread::yield_now();
}

#[cfg(loom)]
fn yield_now() {
    loom::thread::yield_now();
}

/// A lightweight thread for loom models: "suspending" is waiting (yielding)
/// until re-queued, on the same loom thread, after running the worker's side
/// of the protocol ([`UltState::park`]).
#[cfg(all(test, loom))]
pub(crate) mod model {
    use super::{Blockable, UltState};
    use crate::sync::atomic::{AtomicBool, Ordering};

    pub(crate) struct ModelUlt {
        state: UltState,
        queued: AtomicBool,
        /// Weakened protocol for the negative check: park without looking
        /// for `NOTIFIED`.
        pub(crate) broken: bool,
    }

    impl ModelUlt {
        pub(crate) fn new() -> ModelUlt {
            ModelUlt { state: UltState::new(), queued: AtomicBool::new(false), broken: false }
        }

        pub(crate) fn blockable(&self) -> Blockable {
            Blockable {
                state: &self.state,
                ctx: self as *const ModelUlt as *const (),
                suspend: suspend_model,
                requeue: requeue_model,
            }
        }
    }

    unsafe fn suspend_model(ctx: *const ()) {
        // SAFETY: `ctx` is the `ModelUlt` of the running model thread.
        let u = unsafe { &*(ctx as *const ModelUlt) };
        let parked = if u.broken {
            u.state.0.store(super::PARKED, Ordering::SeqCst);
            true
        } else {
            u.state.park()
        };
        if parked {
            while !u.queued.load(Ordering::Acquire) {
                loom::thread::yield_now();
            }
            u.queued.store(false, Ordering::Relaxed);
        }
    }

    unsafe fn requeue_model(ctx: *const ()) {
        // SAFETY: `ctx` is a live `ModelUlt` (its model thread is parked).
        unsafe { (*(ctx as *const ModelUlt)).queued.store(true, Ordering::Release) };
    }
}
