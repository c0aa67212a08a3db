//! The parker: one futex word per waiting thread.
//!
//! Protocol (who waits, who wakes, what ordering):
//! * The word holds an event counter in bits 1.. and a `SLEEPING` flag in bit 0.
//! * The **owner** (the only thread that ever sleeps on this parker) takes a
//!   token with [`Parker::prepare`], then checks its wake-up condition (a latch,
//!   a mailbox, work to steal). If the condition is false it calls
//!   [`Parker::park`] with the token: a `SeqCst` compare-exchange from `token` to
//!   `token | SLEEPING` succeeds only if no event happened since `prepare`, and
//!   then the owner sleeps on the futex until the word changes.
//! * A **waker** first makes the condition true (a `Release` or `SeqCst` store),
//!   then calls [`Parker::unpark`], which always bumps the counter with a
//!   `SeqCst` `fetch_add` and calls `futex_wake` only if the `SLEEPING` flag was
//!   set.
//! * No lost wake-up: either the bump happens before the owner's
//!   compare-exchange (which then fails, and the owner re-checks its
//!   condition), or after it (the waker sees `SLEEPING` and wakes the futex,
//!   whose kernel-side compare makes a wake racing with the sleep harmless).
//!   Spurious returns from `park` are allowed: callers loop on their condition.

use super::atomic::{AtomicU32, Ordering};

const SLEEPING: u32 = 1;
const EVENT: u32 = 2;

/// A futex word with an event counter; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Parker {
    word: AtomicU32,
}

impl Parker {
    pub(crate) fn new() -> Parker {
        Parker { word: AtomicU32::new(0) }
    }

    /// Owner: a token naming the current event count. Check the wake-up
    /// condition *after* taking it.
    #[inline]
    pub(crate) fn prepare(&self) -> u32 {
        self.word.load(Ordering::SeqCst) & !SLEEPING
    }

    /// Owner: sleep unless an event happened since `token` was taken. May
    /// return spuriously.
    #[cfg_attr(not(any(loom, shuttle)), allow(dead_code))]
    pub(crate) fn park(&self, token: u32) {
        self.park_unless(token, || false)
    }

    /// Owner: like [`Parker::park`], but after announcing `SLEEPING` re-checks
    /// `cond` and returns if it holds. Needed when a waker uses
    /// [`Parker::unpark_if_sleeping`]; `cond` must then read the condition
    /// with a read-modify-write.
    pub(crate) fn park_unless(&self, token: u32, cond: impl Fn() -> bool) {
        if self.word.compare_exchange(token, token | SLEEPING, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return;
        }
        if cond() {
            self.word.fetch_and(!SLEEPING, Ordering::SeqCst);
            return;
        }
        while self.word.load(Ordering::SeqCst) == token | SLEEPING {
            wait(&self.word, token | SLEEPING);
        }
        self.word.fetch_and(!SLEEPING, Ordering::SeqCst);
    }

    /// Waker: record an event and wake the owner if it sleeps. Call after making
    /// the owner's condition true.
    /// Returns whether it issued a wake-up (a system call).
    #[inline]
    pub(crate) fn unpark(&self) -> bool {
        let prev = self.word.fetch_add(EVENT, Ordering::SeqCst);
        if prev & SLEEPING != 0 {
            wake(&self.word);
            return true;
        }
        false
    }

    /// Waker whose condition write was a `SeqCst` read-modify-write: wake the
    /// owner only if it announced `SLEEPING`, saving the write to the owner's
    /// cache line when it is spinning. Sound only with an owner that parks
    /// with [`Parker::park_unless`] and re-checks with a read-modify-write: if
    /// the owner's re-check comes after the waker's RMW in the condition's
    /// modification order it sees the condition; if before, the waker's RMW
    /// reads from it, so the owner's `SLEEPING` compare-exchange happens
    /// before the waker's load of the word, which then sees `SLEEPING`.
    /// Returns whether it issued a wake-up (a system call).
    #[inline]
    pub(crate) fn unpark_if_sleeping(&self) -> bool {
        self.word.load(Ordering::SeqCst) & SLEEPING != 0 && self.unpark()
    }

    /// Whether the owner has announced `SLEEPING` (a `SeqCst` load: the
    /// first half of [`Parker::unpark_if_sleeping`], for a waker that does
    /// something else before the wake-up when it does).
    #[inline]
    pub(crate) fn is_sleeping(&self) -> bool {
        self.word.load(Ordering::SeqCst) & SLEEPING != 0
    }
}

#[cfg(not(any(loom, shuttle)))]
fn wait(word: &AtomicU32, expected: u32) {
    atomic_wait::wait(word, expected);
}

#[cfg(not(any(loom, shuttle)))]
fn wake(word: &AtomicU32) {
    atomic_wait::wake_all(word);
}

// Under loom or shuttle there is no futex: waiting is modelled as yielding
// until the word changes. Loom explores it exhaustively; under shuttle a
// sleeper nobody wakes yields for ever, which shuttle reports when a schedule
// exceeds its step bound.
#[cfg(any(loom, shuttle))]
fn wait(word: &AtomicU32, expected: u32) {
    while word.load(Ordering::SeqCst) == expected {
        super::model_yield();
    }
}

#[cfg(any(loom, shuttle))]
fn wake(_word: &AtomicU32) {}

#[cfg(all(test, loom))]
mod tests {
    use super::*;
    use loom::sync::atomic::AtomicBool;
    use loom::sync::Arc;

    /// The owner sleeps until a flag is set; the waker sets it and unparks. In
    /// every interleaving the owner terminates having seen the flag.
    #[test]
    fn no_lost_wakeup() {
        loom::model(|| {
            let p = Arc::new(Parker::new());
            let flag = Arc::new(AtomicBool::new(false));
            let (p2, f2) = (p.clone(), flag.clone());
            let waker = loom::thread::spawn(move || {
                f2.store(true, Ordering::SeqCst);
                p2.unpark();
            });
            loop {
                let t = p.prepare();
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                p.park(t);
            }
            waker.join().unwrap();
        });
    }

    /// The conditional wake of a counting latch: two wakers count down with
    /// a SeqCst RMW and wake only a sleeping owner; the owner re-checks after
    /// announcing that it sleeps. The owner always terminates.
    #[test]
    fn conditional_wake_of_rmw_condition() {
        loom::model(|| {
            let p = Arc::new(Parker::new());
            let count = Arc::new(loom::sync::atomic::AtomicUsize::new(2));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let (p, c) = (p.clone(), count.clone());
                    loom::thread::spawn(move || {
                        if c.fetch_sub(1, Ordering::SeqCst) == 1 {
                            p.unpark_if_sleeping();
                        }
                    })
                })
                .collect();
            loop {
                let t = p.prepare();
                if count.load(Ordering::Acquire) == 0 {
                    break;
                }
                p.park_unless(t, || count.fetch_add(0, Ordering::SeqCst) == 0);
            }
            for h in hs {
                h.join().unwrap();
            }
        });
    }

    /// Two wakers, one owner waiting for both events.
    #[test]
    fn two_wakers() {
        loom::model(|| {
            let p = Arc::new(Parker::new());
            let count = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let (p, c) = (p.clone(), count.clone());
                    loom::thread::spawn(move || {
                        c.fetch_add(1, Ordering::SeqCst);
                        p.unpark();
                    })
                })
                .collect();
            loop {
                let t = p.prepare();
                if count.load(Ordering::SeqCst) == 2 {
                    break;
                }
                p.park(t);
            }
            for h in hs {
                h.join().unwrap();
            }
        });
    }
}
