//! Sleepy announcements: how a participant that found no work tells those who
//! make work that it is about to sleep, so that new work wakes it.
//!
//! Protocol (who waits, who wakes, what ordering):
//! * The **sleeper** takes a [`Parker`] token, then [`Sleepers::announce`]s
//!   itself (a `SeqCst` flag store and counter increment), then re-checks the
//!   queues, and only then parks with the token; afterwards it
//!   [`Sleepers::retract`]s (clearing the flag if no waker already did).
//! * The **pusher** makes work visible (a deque push), then calls
//!   [`Sleepers::notify_one`]: a `SeqCst` read-modify-write of the counter
//!   (`fetch_add(0)`); if non-zero it claims one flag with a `SeqCst` swap and
//!   unparks that participant.
//! * Why nothing is lost: both sides do a read-modify-write on the counter, so
//!   one comes first in its modification order. If the pusher's comes first,
//!   the sleeper's increment reads from it (release/acquire), so the sleeper's
//!   re-check sees the pushed work. If the sleeper's comes first, the pusher
//!   reads a non-zero count and unparks — and an unpark that lands before
//!   `park` invalidates the token, so the sleeper does not sleep.

use super::atomic::{AtomicBool, AtomicUsize, Ordering};
use super::Parker;
use crossbeam_utils::CachePadded;

/// One sleepy flag per participant and a count of the set flags.
pub(crate) struct Sleepers {
    flags: Box<[CachePadded<AtomicBool>]>,
    /// On its own line: it changes whenever someone sleeps or wakes, and
    /// must not drag the registry's read-mostly fields along.
    count: CachePadded<AtomicUsize>,
}

impl Sleepers {
    pub(crate) fn new(n: usize) -> Sleepers {
        Sleepers {
            flags: (0..n).map(|_| CachePadded::new(AtomicBool::new(false))).collect(),
            count: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// Sleeper: announce that `slot` is about to sleep. Re-check for work after this.
    pub(crate) fn announce(&self, slot: usize) {
        self.flags[slot].store(true, Ordering::SeqCst);
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// Sleeper: withdraw the announcement (after waking, or when the re-check
    /// found work). Returns `false` when a pusher had already claimed it: the
    /// sleeper was woken *for work*, and if it leaves its wait without taking
    /// any it must pass the wake on ([`Sleepers::notify_one`]), or the work
    /// could sit unseen while every other participant sleeps.
    pub(crate) fn retract(&self, slot: usize) -> bool {
        if self.flags[slot].swap(false, Ordering::SeqCst) {
            self.count.fetch_sub(1, Ordering::SeqCst);
            true
        } else {
            false
        }
    }

    /// Pusher: after making work visible, wake one announced sleeper, if
    /// any. `target()` (called only when someone sleeps) gives the slot to
    /// look from (cyclically, so that the pusher's neighbours are woken
    /// first) and which slots are eligible. `parker(slot)` gives the parker
    /// of the participant in `slot`.
    #[inline]
    pub(crate) fn notify_one<'a, E: Fn(usize) -> bool>(
        &self,
        target: impl FnOnce() -> (usize, E),
        parker: impl Fn(usize) -> &'a Parker,
    ) -> Option<usize> {
        // A read-modify-write (not a plain load) so that it reads the latest
        // count: if it comes before the sleeper's increment in the counter's
        // modification order, that increment synchronises with it and the
        // sleeper's re-check sees our work.
        if self.count.fetch_add(0, Ordering::SeqCst) == 0 {
            return None;
        }
        let (start, eligible) = target();
        self.wake_one(start, eligible, parker)
    }

    #[cold]
    fn wake_one<'a>(
        &self,
        start: usize,
        eligible: impl Fn(usize) -> bool,
        parker: impl Fn(usize) -> &'a Parker,
    ) -> Option<usize> {
        let n = self.flags.len();
        for slot in (start..n).chain(0..start.min(n)) {
            let flag = &self.flags[slot];
            if flag.load(Ordering::Relaxed) && eligible(slot) && flag.swap(false, Ordering::SeqCst) {
                self.count.fetch_sub(1, Ordering::SeqCst);
                parker(slot).unpark();
                return Some(slot);
            }
        }
        None
    }
}

#[cfg(all(test, loom))]
mod tests {
    use super::*;
    use loom::sync::Arc;

    /// A sleeper that parks when it sees no work and a pusher that publishes
    /// work then notifies: the sleeper always ends up seeing the work.
    #[test]
    fn pushed_work_wakes_a_sleeper() {
        loom::model(|| {
            let sleepers = Arc::new(Sleepers::new(1));
            let parker = Arc::new(Parker::new());
            let work = Arc::new(AtomicBool::new(false));
            let (s2, p2, w2) = (sleepers.clone(), parker.clone(), work.clone());
            let pusher = loom::thread::spawn(move || {
                w2.store(true, Ordering::Release);
                s2.notify_one(|| (0, |_| true), |_| &*p2);
            });
            loop {
                let token = parker.prepare();
                if work.load(Ordering::Acquire) {
                    break;
                }
                sleepers.announce(0);
                if work.load(Ordering::Acquire) {
                    sleepers.retract(0);
                    break;
                }
                parker.park(token);
                sleepers.retract(0);
            }
            pusher.join().unwrap();
        });
    }
}
