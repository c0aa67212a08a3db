//! Barriers, `critical`, `atomic` and the `omp_*_lock` API.
//!
//! **Locks** live in the caller's storage, as with libgomp: gcc's `omp_lock_t`
//! is one 32-bit word, `omp_nest_lock_t` is `{ int lock; int count; void
//! *owner; }`, and a named critical section's `.gomp_critical_user_NAME` is a
//! pointer-sized zero-initialised variable. The word is a futex mutex in the
//! classic three-state form (0 free, 1 held, 2 held with sleepers): acquire
//! with a compare-exchange 0→1 (`Acquire`), else spin briefly, then swap in 2
//! and sleep on the futex while the word is 2; release with a swap to 0
//! (`Release`) and wake one sleeper if it was 2. A nest lock's owner is the
//! owning *task* (OpenMP locks are owned by tasks), compared by address.

use crate::team::Team;
use crate::thread::{self, ThreadState};
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

/// The team barrier for the calling member (no-op outside a team).
pub(crate) fn barrier_in(team: &Team, me: usize, ts: &ThreadState) {
    if team.n <= 1 {
        return;
    }
    let task = crate::task::current(ts);
    let epoch = team.barrier(me, ts.epoch.get());
    ts.epoch.set(epoch);
    task.epoch.set(epoch);
}

/// `GOMP_barrier`.
pub(crate) fn barrier() {
    thread::with(|ts| {
        if let Some(team) = ts.team() {
            barrier_in(team, ts.num.get() as usize, ts);
        }
    })
}

/// Polls (a `pause` each) for a contended lock before sleeping on it, per
/// holder: a holder usually leaves a critical section within a few hundred
/// nanoseconds, and sleeping makes every later release a futex wake.
const SPIN: u32 = 1000;

/// Acquires the futex mutex at `word`.
#[inline]
pub(crate) fn lock(word: &AtomicU32) {
    if word.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
        lock_slow(word);
    }
}

#[cold]
fn lock_slow(word: &AtomicU32) {
    let take = || {
        (word.load(Ordering::Relaxed) == 0)
            .then(|| word.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok())
    };
    if spin_for(take, SPIN, !crowded()) {
        return;
    }
    while word.swap(2, Ordering::Acquire) != 0 {
        atomic_wait::wait(word, 2);
    }
}

/// Polls `take` — `None` while the lock is held, `Some(true)` when this
/// thread took it, `Some(false)` when it was seen free and another thread
/// took it first — up to `budget` times, a `pause` before each: `true` once
/// taken, `false` when the budget ran out (the caller then sleeps).
///
/// With `restart`, the budget starts again whenever the lock was seen free
/// and lost: it bounds the wait for one holder, not the whole wait, as
/// libgomp's `gomp_mutex_lock_slow` does (its `do_spin` returns at every
/// change of the word, and the spin starts anew after a lost race). A lock
/// that changes hands is making progress, and a waiter that sleeps on it
/// turns every later release into a futex wake: with 16 threads contending
/// one `critical`, a waiter can lose many races in a row. Without
/// `restart` (the team has more members than CPUs: a waiter's spinning
/// takes a holder's CPU), the budget bounds the whole wait, as libgomp's
/// throttled spin count does when it manages more threads than CPUs.
fn spin_for(mut take: impl FnMut() -> Option<bool>, budget: u32, restart: bool) -> bool {
    let mut spins = 0;
    while spins < budget {
        std::hint::spin_loop();
        spins += 1;
        match take() {
            Some(true) => return true,
            Some(false) if restart => spins = 0,
            _ => {}
        }
    }
    false
}

/// Whether the calling thread's team has more members than its pool has
/// CPUs (`false` outside a team: nothing says the waiters are crowded).
fn crowded() -> bool {
    thread::with(|ts| ts.team().is_some_and(Team::crowded))
}

/// Tries to acquire the mutex at `word`.
#[inline]
pub(crate) fn try_lock(word: &AtomicU32) -> bool {
    word.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok()
}

/// Releases the mutex at `word`.
#[inline]
pub(crate) fn unlock(word: &AtomicU32) {
    if word.swap(0, Ordering::Release) == 2 {
        atomic_wait::wake_one(word);
    }
}

static DEFAULT_CRITICAL: AtomicU32 = AtomicU32::new(0);
static ATOMIC: AtomicU32 = AtomicU32::new(0);

/// `GOMP_critical_start` / `_end`: the unnamed critical section.
pub(crate) fn critical_start() {
    lock(&DEFAULT_CRITICAL)
}
pub(crate) fn critical_end() {
    unlock(&DEFAULT_CRITICAL)
}

/// `GOMP_atomic_start` / `_end`: the lock behind atomics the hardware lacks.
pub(crate) fn atomic_start() {
    lock(&ATOMIC)
}
pub(crate) fn atomic_end() {
    unlock(&ATOMIC)
}

/// The lock word inside a named critical section's pointer-sized variable.
///
/// # Safety
/// `pptr` is gcc's `&.gomp_critical_user_NAME`: pointer-sized, aligned,
/// zero-initialised, used only as this lock.
pub(crate) unsafe fn critical_word<'a>(pptr: *mut *mut c_void) -> &'a AtomicU32 {
    // SAFETY: the caller's contract; a u32 fits at the start of the pointer.
    unsafe { AtomicU32::from_ptr(pptr as *mut u32) }
}

/// gcc's `omp_nest_lock_t`.
#[repr(C)]
pub(crate) struct NestLock {
    lock: AtomicU32,
    count: AtomicU32,
    owner: AtomicPtr<c_void>,
}

const _: () = assert!(std::mem::size_of::<NestLock>() == 16);

fn owner_id() -> *mut c_void {
    thread::with(|ts| crate::task::current(ts) as *const _ as *mut c_void)
}

impl NestLock {
    pub(crate) fn init(&self) {
        self.lock.store(0, Ordering::Relaxed);
        self.count.store(0, Ordering::Relaxed);
        self.owner.store(std::ptr::null_mut(), Ordering::Relaxed);
    }

    pub(crate) fn set(&self) {
        let me = owner_id();
        if self.owner.load(Ordering::Relaxed) != me {
            lock(&self.lock);
            self.owner.store(me, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn unset(&self) {
        if self.count.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.owner.store(std::ptr::null_mut(), Ordering::Relaxed);
            unlock(&self.lock);
        }
    }

    /// The new nesting count, or 0 if another task holds it.
    pub(crate) fn test(&self) -> i32 {
        let me = owner_id();
        if self.owner.load(Ordering::Relaxed) != me {
            if !try_lock(&self.lock) {
                return 0;
            }
            self.owner.store(me, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed) as i32 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A scripted lock for [`spin_for`]: held, seen free and lost every
    /// `every`-th poll, `lost` times, then free and taken.
    fn script(every: u32, lost: u32) -> impl FnMut() -> Option<bool> {
        let (mut polls, mut races) = (0u32, 0u32);
        move || {
            polls += 1;
            if polls % every != 0 {
                return None;
            }
            races += 1;
            Some(races > lost)
        }
    }

    #[test]
    fn the_spin_budget_is_per_holder_unless_crowded() {
        // A lock that changes hands every 100 polls, 50 times before this
        // waiter wins: 5,000 polls, five budgets, never a whole one without
        // a change.
        assert!(spin_for(script(100, 50), SPIN, true));
        // Crowded: the budget bounds the whole wait.
        assert!(!spin_for(script(100, 50), SPIN, false));
        // One holder that keeps it longer than the budget: sleep either way.
        assert!(!spin_for(script(SPIN + 1, 0), SPIN, true));
        assert!(!spin_for(script(SPIN + 1, 0), SPIN, false));
        // Free within the budget: taken either way.
        assert!(spin_for(script(SPIN, 0), SPIN, false));
    }

    #[test]
    fn futex_mutex_excludes() {
        let word = Arc::new(AtomicU32::new(0));
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (w, c) = (word.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        lock(&w);
                        // A non-atomic read-modify-write under the lock.
                        let v = c.load(Ordering::Relaxed);
                        c.store(v + 1, Ordering::Relaxed);
                        unlock(&w);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(counter.load(Ordering::Relaxed), 80_000);
        assert_eq!(word.load(Ordering::Relaxed), 0);
    }
}
