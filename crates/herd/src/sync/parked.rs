//! Counting the participants parked in a conditional wait, so that a waker
//! of many — a runtime's "every member that may sleep on this word"
//! (herd-omp's worksharing publish, its ring's release, an ordered turn) —
//! costs one load when nobody sleeps, instead of a load of every member's
//! parker line.
//!
//! Protocol (who waits, who wakes, what ordering; see also `README.md`):
//! * The **owner** waits with the conditional-wake pattern (`parker.rs`:
//!   `park_unless` with a last check that reads the condition with a `SeqCst`
//!   read-modify-write). Its last check before sleeping first adds one to
//!   the count (`SeqCst`), and its next check (after it woke, or when the
//!   last check held) takes it back: [`Parked::guard`] wraps the checks.
//! * The **waker** makes the condition true with a `SeqCst`
//!   read-modify-write, then loads the count (`SeqCst`). Zero: nobody can be
//!   asleep on a condition it made true, and it wakes nobody. Non-zero: it
//!   calls `unpark_if_sleeping` on each parker it may have to wake.
//! * Why nothing is lost: if the waker's load comes before the owner's
//!   increment in the single total order of `SeqCst` operations, the
//!   waker's read-modify-write on the condition comes before it too, so the
//!   owner's last check (a read-modify-write of the same word, after its
//!   increment) reads it and the owner does not sleep. Otherwise the waker
//!   sees the count and falls back to the per-parker conditional wake,
//!   which is sound on its own (`parker.rs`).
//! * The count's line is written only when a participant falls asleep or
//!   wakes (the slow path, next to a futex call); wakers only read it, so
//!   it stays shared in every core's cache.

use super::atomic::{AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;
use std::cell::Cell;

/// The number of participants asleep (or about to sleep) in a counted wait.
#[derive(Default)]
pub(crate) struct Parked {
    count: CachePadded<AtomicUsize>,
}

impl Parked {
    pub(crate) fn new() -> Parked {
        Parked::default()
    }

    /// Waker, after the `SeqCst` read-modify-write that made the condition
    /// true: whether anyone may be asleep in a counted wait.
    #[inline]
    pub(crate) fn any(&self) -> bool {
        self.count.load(Ordering::SeqCst) != 0
    }

    /// Owner: a guard for one wait. Call [`ParkedGuard::check`] with each
    /// check's `last` flag before evaluating the condition; dropping the
    /// guard takes back a count still held.
    pub(crate) fn guard(&self) -> ParkedGuard<'_> {
        ParkedGuard { parked: self, counted: Cell::new(false) }
    }
}

/// One wait's share of [`Parked`]'s count.
pub(crate) struct ParkedGuard<'a> {
    parked: &'a Parked,
    counted: Cell<bool>,
}

impl ParkedGuard<'_> {
    /// Before a check of the condition: `last` (the last check before
    /// sleeping) counts the owner, any other check uncounts it.
    #[inline]
    pub(crate) fn check(&self, last: bool) {
        if last != self.counted.get() {
            if last {
                self.parked.count.fetch_add(1, Ordering::SeqCst);
            } else {
                self.parked.count.fetch_sub(1, Ordering::SeqCst);
            }
            self.counted.set(last);
        }
    }
}

impl Drop for ParkedGuard<'_> {
    fn drop(&mut self) {
        self.check(false);
    }
}

#[cfg(all(test, not(loom)))]
mod unit {
    use super::*;

    /// Checks while spinning write nothing; the last check counts once,
    /// however often it repeats; the next check, or the guard's end, uncounts.
    #[test]
    fn counts_only_the_sleeping_stretch() {
        let p = Parked::new();
        let g = p.guard();
        g.check(false);
        assert!(!p.any());
        g.check(true);
        g.check(true);
        assert_eq!(p.count.load(Ordering::SeqCst), 1);
        g.check(false);
        assert!(!p.any());
        g.check(true);
        drop(g);
        assert!(!p.any(), "the guard's end took the count back");
    }
}

#[cfg(all(test, loom))]
mod tests {
    use super::*;
    use crate::sync::{Observe, Parker};
    use loom::sync::atomic::AtomicU32;
    use loom::sync::Arc;

    /// An owner waiting on a word with the counted conditional wait, and a
    /// waker that sets the word with a read-modify-write and wakes only if
    /// the count says someone may sleep: the owner always leaves its wait.
    /// (Without the owner's increment the model deadlocks: the waker skips
    /// the wake while the owner sleeps.)
    #[test]
    fn counted_wait_is_woken() {
        loom::model(|| {
            let parked = Arc::new(Parked::new());
            let parker = Arc::new(Parker::new());
            let word = Arc::new(AtomicU32::new(0));
            let (p2, k2, w2) = (parked.clone(), parker.clone(), word.clone());
            let waker = loom::thread::spawn(move || {
                w2.swap(1, Ordering::SeqCst);
                if p2.any() {
                    k2.unpark_if_sleeping();
                }
            });
            let g = parked.guard();
            loop {
                g.check(false);
                if word.observe(false) == 1 {
                    break;
                }
                let token = parker.prepare();
                parker.park_unless(token, || {
                    g.check(true);
                    word.observe(true) == 1
                });
            }
            drop(g);
            waker.join().unwrap();
            assert!(!parked.any());
        });
    }
}
