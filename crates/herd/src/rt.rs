//! Low-level hooks for runtimes built on herd (such as `herd-omp`, the
//! libgomp ABI): regions of part of a pool, waiting as a participant while
//! running queued jobs, waking a participant, and pushing raw jobs.
//!
//! Applications should use [`join`](crate::join), [`scope`](crate::scope),
//! [`Pool::broadcast`] and the loops; these hooks exist so that another
//! runtime's synchronisation (a team barrier, a task wait) can cooperate with
//! herd's idle protocol instead of blocking a core.
//!
//! **Waiting protocol** ([`wait_until`]): the caller gives a condition
//! `done(last)`. The participant checks it while spinning (`last == false`,
//! a cheap load is enough), runs its own and stolen jobs meanwhile, and before
//! sleeping announces that it sleeps and checks `done(true)` once more; that
//! last check **must read with a read-modify-write** (e.g. `fetch_add(0,
//! SeqCst)`) of the word that the waker changes with a read-modify-write
//! before calling [`PoolHandle::wake`]. Then either the waiter's check sees
//! the change, or the waker sees the sleeping announcement and wakes it — a
//! wake-up cannot be lost (the protocol of the region post/acknowledgement,
//! model-checked in `sync::parker`).

pub use crate::pool::Admit;
use crate::pool::{slot_in, with_current, Registry};
use crate::pool::{BroadcastContext, Pool};
pub use crate::sync::Observe;
use std::sync::Arc;

/// Runs `f` with the calling thread as `pool`'s master (participant 0),
/// waiting for the master role if another thread holds it; directly if the
/// caller already is a participant of `pool`.
pub fn enter<R>(pool: &Pool, f: impl FnOnce() -> R) -> R {
    pool.registry().enter_local(f)
}

/// Like [`enter`], but gives `f` back at once (`Err(f)`) when another
/// thread holds the master role, so that the caller can go elsewhere.
pub fn try_enter<R, F: FnOnce() -> R>(pool: &Pool, f: F) -> Result<R, F> {
    pool.registry().try_enter_local(f)
}

/// Runs `f` on the first `n` participants of `pool` (`1 <= n <=
/// pool.num_threads()`), the calling thread being participant 0 (see
/// [`enter`]), and returns when all have finished and then `drain(_)` holds
/// (the master runs jobs while it waits for that; `drain` follows the
/// contract of [`wait_until`]'s condition: the region's jobs left behind by
/// its shares are counted there). Participants `n..` take no part and take
/// none of the region's jobs until it returns. From inside a running region
/// of the same pool, or with `n == 1`, `f` runs once on the caller alone
/// (index 0 of 1). A panic in any share reaches the caller after every
/// share has finished.
///
/// # Panics
/// If `n` is 0 or larger than the pool.
pub fn broadcast_n<F>(pool: &Pool, n: usize, f: F, drain: &dyn Fn(bool) -> bool)
where
    F: Fn(BroadcastContext) + Sync,
{
    assert!(
        n >= 1 && n <= pool.num_threads(),
        "broadcast_n: {n} participants for a pool of {}",
        pool.num_threads()
    );
    let reg = pool.registry();
    reg.enter_local(|| {
        reg.broadcast_n(n, f, false, Some(drain));
    });
}

/// Like [`broadcast_n`], but each share calls `func(data, ctx)` directly:
/// the function and data pointers travel in the region post itself (the
/// participant's port line), so a participant reads nothing else to start —
/// no closure on the master's stack. For runtimes whose per-region state
/// lives in long-lived, rarely written memory (herd-omp's teams).
///
/// # Safety
/// Calling `func(data, ctx)` on any participant, concurrently, during the
/// call must be sound (`data` is shared and must outlive the call).
///
/// # Panics
/// If `n` is 0 or larger than the pool.
pub unsafe fn broadcast_raw(
    pool: &Pool,
    n: usize,
    func: unsafe fn(*const (), BroadcastContext),
    data: *const (),
    drain: &dyn Fn(bool) -> bool,
) {
    assert!(
        n >= 1 && n <= pool.num_threads(),
        "broadcast_raw: {n} participants for a pool of {}",
        pool.num_threads()
    );
    let reg = pool.registry();
    // SAFETY: the caller's contract.
    reg.enter_local(|| unsafe { reg.broadcast_raw(n, func, data, drain) });
}

/// Waits until `done(_)` holds; see the module documentation for the
/// contract on `done(true)`. On a participant of a pool, jobs are run while
/// waiting and the thread sleeps on its slot's parker (woken by
/// [`PoolHandle::wake`] with its index); on any other thread this spins,
/// then yields.
pub fn wait_until(done: impl Fn(bool) -> bool) {
    crate::pool::wait_current(done)
}

/// Like [`wait_until`], but runs no job at all: the participant spins, then
/// sleeps on its slot's parker until its waker calls [`PoolHandle::wake`] /
/// [`PoolHandle::wake_waiting`] (same contract on `done(true)`); new work
/// does not wake it, and it takes none. For waits in which the runtime's
/// rules forbid starting other work (an OpenMP `ordered` region's turn, a
/// doacross sink: not task scheduling points).
pub fn wait_until_without_jobs(done: impl Fn(bool) -> bool) {
    with_current(|cur| match cur {
        // Not announced to pushers (it could not take their work): only the
        // waker of `done` wakes it, as `wait_until`'s own sleep is woken;
        // counted in `parked_waiters` alike, for `wake_waiting`.
        Some((reg, slot)) => {
            let parked = reg.parked_waiters.guard();
            reg.wait_without_jobs(slot, |last| {
                parked.check(last);
                done(last)
            });
        }
        // No participant: it has no jobs to run; polls as `wait_until` does.
        None => wait_until(done),
    })
}

/// Like [`wait_until`], but runs only the queued jobs `admit` accepts
/// (a waiter bound by a scheduling constraint, such as an OpenMP task in
/// `taskwait`); jobs it refuses stay available to every other participant.
/// See [`Admit`] for the rule and how refused jobs are handed on.
pub fn wait_until_admitting(done: impl Fn(bool) -> bool, admit: &dyn Admit) {
    crate::pool::wait_current_admitting(done, admit)
}

/// Makes `data` runnable as a job of the calling participant's pool: pushed
/// on its own queue (so it may be stolen by the other participants of the
/// running region), and a sleeping participant is woken for it. Returns
/// `false`, doing nothing, if the calling thread is not a participant of any
/// pool.
///
/// # Safety
/// `run(data)` will be called exactly once, on some participant of the
/// pool, at some later time; `data` must stay valid until then, and running it
/// must be sound on any thread (`Send`).
pub unsafe fn push(data: *const (), run: unsafe fn(*const ())) -> bool {
    // SAFETY: the caller's contract.
    let job = unsafe { crate::sched::JobRef::new(data, run) };
    with_current(|cur| cur.map(|(reg, slot)| reg.push_job(slot, job)).is_some())
}

/// Whether the calling participant's pool sleeps at once in its waits (a
/// passive wait policy, or more participants than cores) rather than
/// spinning first; `false` off the pool. For a runtime that chooses between
/// a protocol that favours spinning waiters and one that favours sleeping
/// ones (herd-omp's doacross post).
pub fn current_waits_sleep_at_once() -> bool {
    with_current(|cur| cur.is_some_and(|(reg, _)| reg.spin() == Some(std::time::Duration::ZERO)))
}

/// Jobs queued on the calling participant's own deque (0 off the pool):
/// a runtime can run new work inline when enough is already stealable
/// (lazy task creation).
#[inline]
pub fn local_queue_len() -> usize {
    // SAFETY: the calling thread occupies `slot` of `reg`.
    with_current(|cur| {
        cur.map_or(0, |(reg, slot)| unsafe { crate::sched::Scheduler::local_len(&reg.sched, slot) })
    })
}

/// Runs one queued job of the calling participant's pool, if there is one
/// (its own newest first, else a stolen one). Returns whether it ran a job.
pub fn run_one() -> bool {
    with_current(|cur| match cur.and_then(|(reg, slot)| Some((reg, slot, reg.find_work(slot)?))) {
        Some((reg, slot, job)) => {
            reg.run_job(slot, job);
            true
        }
        None => false,
    })
}

/// Like [`run_one`], but runs only a job `admit` accepts (jobs it refuses
/// are handed on as in [`wait_until_admitting`]).
pub fn run_one_admitting(admit: &dyn Admit) -> bool {
    with_current(|cur| cur.is_some_and(|(reg, slot)| reg.run_one_admitting(slot, admit)))
}

/// A shareable handle on a pool's participants, for waking them.
#[derive(Clone)]
pub struct PoolHandle {
    reg: Arc<Registry>,
}

impl std::fmt::Debug for PoolHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolHandle").field("num_threads", &self.reg.num_threads()).finish()
    }
}

impl PoolHandle {
    /// The handle of `pool`.
    pub fn of(pool: &Pool) -> PoolHandle {
        PoolHandle { reg: pool.registry().clone() }
    }

    /// How many of the pool's participants can run at once: its number of
    /// participants, or fewer when it is oversubscribed (the distinct PUs
    /// its places cover). A runtime shapes its synchronisation by it: with
    /// `k` participants per PU, a hop of a tree costs a context switch, not
    /// a cache-line transfer.
    pub fn concurrency(&self) -> usize {
        self.reg.placement.usable_pus.min(self.reg.num_threads()).max(1)
    }

    /// Wakes participant `index` if it sleeps in [`wait_until`] (or idles
    /// between regions). Call after the read-modify-write that makes its
    /// condition true.
    #[inline]
    pub fn wake(&self, index: usize) {
        self.reg.parker(index).unpark_if_sleeping();
    }

    /// Wakes every participant of `slots` that sleeps in [`wait_until`]:
    /// one load when none does (the pool counts its sleepers there, see
    /// `sync/parked.rs`). Otherwise a wake-up *cascade* (`sync/cascade.rs`)
    /// down a tree of the slots of the range (a team `0..n`, or any part
    /// of one): the caller wakes the sleepers at the top of the tree and
    /// each woken participant wakes those of its subtree, so that no thread
    /// issues more than a few wake-ups however large the range (the caller
    /// alone would issue one per sleeper). Slots past the pool are ignored.
    /// Call after the `SeqCst` read-modify-write that makes their condition
    /// true, as `wake`. (A participant idle between regions is not counted:
    /// this is for waits on a runtime's own words.)
    #[inline]
    pub fn wake_waiting(&self, slots: std::ops::Range<usize>) {
        if self.reg.parked_waiters.any() {
            self.reg.cascade.wake(slots, |s| self.reg.parker(s));
        }
    }

    /// True when the calling thread is a participant of this pool.
    #[inline]
    pub fn is_current(&self) -> bool {
        slot_in(&self.reg).is_some()
    }
}
