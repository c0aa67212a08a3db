//! Latches: one-shot conditions a thread waits on.
//!
//! * [`SetLatch`] — set once by whoever ran a stolen `join` branch; the owner of
//!   the `join` waits on it (stealing other work meanwhile).
//! * [`CountLatch`] — counts the outstanding jobs of a
//!   scope; the one who brings it to zero wakes the waiter.
//! * [`LockLatch`] — for threads outside the pool that hand work to it and block.
//!
//! Protocol of `SetLatch`/`CountLatch`: the waiter names its [`Parker`] when the
//! latch is made. The setter reads that pointer **before** publishing the
//! condition with a `Release`/`AcqRel` operation (after which the latch may be
//! freed by the waiter) and then calls [`Parker::unpark`]. The parker itself
//! lives in the pool's registry, which outlives every job, so touching it after
//! the latch is gone is sound. The waiter observes the condition with an
//! `Acquire` load, so everything the setter wrote before is visible to it.

use super::atomic::{AtomicBool, AtomicUsize, Ordering};
use super::{Observe, Parker};
use std::sync::{Condvar, Mutex};

/// Something a job sets when it completes.
pub(crate) trait Latch {
    /// Sets the latch.
    ///
    /// # Safety
    /// `this` must point to a live latch; it may be freed by the waiter as soon
    /// as this call has published the condition, so implementations must not
    /// touch `*this` after that.
    unsafe fn set(this: *const Self);
}

/// A latch set once; see the module documentation.
pub(crate) struct SetLatch {
    set: AtomicBool,
    target: *const Parker,
}

impl SetLatch {
    /// A latch whose setter will unpark `target`.
    ///
    /// `target` must outlive any call to `set` (it lives in the registry).
    pub(crate) fn new(target: &Parker) -> SetLatch {
        SetLatch { set: AtomicBool::new(false), target }
    }

    /// True once set; `Acquire`.
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }
}

impl Latch for SetLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: `this` is live until the store below (caller's contract); the
        // parker outlives the latch (constructor's contract).
        unsafe {
            let target = (*this).target;
            (*this).set.store(true, Ordering::Release);
            (*target).unpark();
        }
    }
}

/// A counter that wakes its waiter when it reaches zero.
pub(crate) struct CountLatch {
    count: AtomicUsize,
    target: *const Parker,
}

impl CountLatch {
    /// A latch with `count` outstanding parties whose last one unparks `target`.
    pub(crate) fn new(count: usize, target: &Parker) -> CountLatch {
        CountLatch { count: AtomicUsize::new(count), target }
    }

    /// Adds one outstanding party (before handing the latch to it).
    #[inline]
    pub(crate) fn increment(&self) {
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// True once the count is zero. `before_sleep`: the waiter has announced
    /// `SLEEPING` and this is its last check; it must then be a
    /// read-modify-write (see [`Parker::unpark_if_sleeping`]). Otherwise an
    /// `Acquire` load, cheap enough to spin on.
    #[inline]
    pub(crate) fn probe(&self, before_sleep: bool) -> bool {
        self.count.observe(before_sleep) == 0
    }
}

impl Latch for CountLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: as for `SetLatch::set`: `this` is live until our decrement,
        // which is the last access; the parker outlives the latch.
        unsafe {
            let target = (*this).target;
            // SeqCst RMW: the waiter parks with `park_unless(probe)`, so the
            // conditional wake is enough (no write to a spinning waiter's line).
            if (*this).count.fetch_sub(1, Ordering::SeqCst) == 1 {
                (*target).unpark_if_sleeping();
            }
        }
    }
}

/// A latch for a thread outside the pool: a mutex and condition variable.
/// Sound to free right after `wait` returns, because the setter's last access
/// is releasing the mutex the waiter must take to see the flag.
#[derive(Default)]
pub(crate) struct LockLatch {
    done: Mutex<bool>,
    cond: Condvar,
}

impl LockLatch {
    pub(crate) fn new() -> LockLatch {
        LockLatch::default()
    }

    /// Blocks until set.
    pub(crate) fn wait(&self) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = self.cond.wait(done).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Latch for LockLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: the waiter cannot return from `wait` (and free the latch)
        // before we release the mutex, which is our last access.
        unsafe {
            let mut done = (*this).done.lock().unwrap_or_else(|e| e.into_inner());
            *done = true;
            (*this).cond.notify_all();
        }
    }
}

// SAFETY: the raw parker pointer is only dereferenced for `unpark`, which is
// thread-safe; the pointee outlives the latch by construction.
unsafe impl Send for SetLatch {}
// SAFETY: as above; all other state is atomic.
unsafe impl Sync for SetLatch {}
// SAFETY: as for SetLatch.
unsafe impl Send for CountLatch {}
// SAFETY: as for SetLatch.
unsafe impl Sync for CountLatch {}

#[cfg(all(test, loom))]
mod tests {
    use super::*;
    use loom::sync::Arc;

    /// A region of three participants: two others count down, the waiter parks
    /// until the count is zero. The waiter always terminates, and sees the
    /// others' writes.
    #[test]
    fn count_latch_wakes_waiter() {
        loom::model(|| {
            let parker = Arc::new(Parker::new());
            let latch = Arc::new(CountLatch::new(2, &parker));
            let data = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let (l, d, _p) = (latch.clone(), data.clone(), parker.clone());
                    loom::thread::spawn(move || {
                        d.fetch_add(1, Ordering::Relaxed);
                        // SAFETY: the latch is kept alive by the Arc.
                        unsafe { Latch::set(&*l as *const CountLatch) };
                    })
                })
                .collect();
            loop {
                let t = parker.prepare();
                if latch.probe(false) {
                    break;
                }
                parker.park_unless(t, || latch.probe(true));
            }
            assert_eq!(data.load(Ordering::Relaxed), 2);
            for h in hs {
                h.join().unwrap();
            }
        });
    }

    /// Join protocol: the thief sets the latch after writing the result.
    #[test]
    fn set_latch_publishes_result() {
        loom::model(|| {
            let parker = Arc::new(Parker::new());
            let latch = Arc::new(SetLatch::new(&parker));
            let result = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
            let (l, r, _p) = (latch.clone(), result.clone(), parker.clone());
            let thief = loom::thread::spawn(move || {
                r.store(42, Ordering::Relaxed);
                // SAFETY: kept alive by the Arc.
                unsafe { Latch::set(&*l as *const SetLatch) };
            });
            loop {
                let t = parker.prepare();
                if latch.probe() {
                    break;
                }
                parker.park(t);
            }
            assert_eq!(result.load(Ordering::Relaxed), 42);
            thief.join().unwrap();
        });
    }
}
