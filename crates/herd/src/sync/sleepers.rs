//! Sleepy announcements: how a participant that found no work tells those who
//! make work that it is about to sleep, so that new work wakes it.
//!
//! Protocol (who waits, who wakes, what ordering; see also `README.md`):
//! * The **sleeper** takes a [`Parker`] token, then [`Sleepers::announce`]s
//!   itself (its flag, a `SeqCst` increment of the count, a `SeqCst` fence),
//!   then re-checks the queues, and only then parks with the token;
//!   afterwards it [`Sleepers::retract`]s (clearing the flag if no waker
//!   already did).
//! * The **pusher** makes work visible (a deque push), then calls
//!   [`Sleepers::notify_one`]: a `SeqCst` fence and an `Acquire` *load* of
//!   the count. Zero: nothing more — a push writes no pool-wide word. Else it
//!   claims one flag with a `SeqCst` swap and unparks that participant.
//! * Why nothing is lost: the two fences are ordered in the single total
//!   order of `SeqCst` operations. If the pusher's comes first, the
//!   sleeper's re-check (after its fence) sees the pushed work; if the
//!   sleeper's comes first, the pusher's load (after its fence) sees the
//!   increment, and its `Acquire` makes the flag (stored before the
//!   increment) visible — and an unpark that lands before `park`
//!   invalidates the token, so the sleeper does not sleep.
//! * The count's line is written only when someone falls asleep or is
//!   woken; pushers only read it, so on a busy pool it stays shared in every
//!   core's cache (rayon-core's `sleep/` counters follow the same rule).
//!   `tests::pushes_write_nothing_shared` counts the writes.

#[cfg(not(all(test, not(loom))))]
use super::atomic::AtomicUsize;
use super::atomic::{fence, AtomicBool, Ordering};
use super::Parker;
use crossbeam_utils::CachePadded;

/// One sleepy flag per participant and a count of the set flags.
pub(crate) struct Sleepers {
    flags: Box<[CachePadded<AtomicBool>]>,
    /// On its own line: it changes whenever someone sleeps or wakes, and
    /// must not drag the registry's read-mostly fields along.
    count: CachePadded<Count>,
    /// Participants a pusher has claimed ([`Sleepers::notify_one`]) that
    /// have not yet withdrawn their announcement ([`Sleepers::retract`]):
    /// woken for work, no longer in `count`, not yet running. A futex wake
    /// takes microseconds, and a join that looked only at `count` in that
    /// time saw nobody to expose work for (`pool/join.rs`). Written by the
    /// claim and by the claimed participant's retract, so only where a push
    /// wakes someone (a region's wake-up, which claims no flag, writes
    /// nothing here); a hint, read relaxed. A claimed participant that had
    /// not parked yet may retract before its waker's increment: the count
    /// then wraps below zero for that instant, which only makes `any` true.
    waking: CachePadded<Count>,
}

impl Sleepers {
    pub(crate) fn new(n: usize) -> Sleepers {
        Sleepers {
            flags: (0..n).map(|_| CachePadded::new(AtomicBool::new(false))).collect(),
            count: CachePadded::new(Count::new(0)),
            waking: CachePadded::new(Count::new(0)),
        }
    }

    /// Sleeper: announce that `slot` is about to sleep. Re-check for work after this.
    pub(crate) fn announce(&self, slot: usize) {
        self.flags[slot].store(true, Ordering::SeqCst);
        self.count.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    /// True when some participant has announced that it sleeps, or is being
    /// woken for work: relaxed loads of lines that only sleepers, wakers and
    /// the woken write (a hint for exposing work; see `pool/join.rs`).
    #[inline]
    pub(crate) fn any(&self) -> bool {
        self.count.load(Ordering::Relaxed) != 0 || self.waking.load(Ordering::Relaxed) != 0
    }

    /// How many participants have announced that they sleep.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn asleep(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Sleeper: withdraw the announcement (after waking, or when the re-check
    /// found work). Returns whether a pusher had already claimed it: then
    /// the sleeper was woken *for work*, and if it leaves its wait without
    /// taking any it must pass the wake on ([`Sleepers::notify_one`]), or the
    /// work could sit unseen while every other participant sleeps. Either
    /// way it no longer counts as asleep or being woken.
    pub(crate) fn retract(&self, slot: usize) -> bool {
        if self.flags[slot].swap(false, Ordering::SeqCst) {
            self.count.fetch_sub(1, Ordering::SeqCst);
            false
        } else {
            self.waking.fetch_sub(1, Ordering::Relaxed);
            true
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
        // The fence orders our push before the load against the sleeper's
        // fence (see the module documentation); the load writes nothing.
        fence(Ordering::SeqCst);
        if self.count.load(Ordering::Acquire) == 0 {
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
                // Counted as being woken from the claim (before it leaves
                // `count`) until its `retract`, so that joins see someone to
                // expose work for while the wake takes effect.
                self.waking.fetch_add(1, Ordering::Relaxed);
                self.count.fetch_sub(1, Ordering::SeqCst);
                parker(slot).unpark();
                return Some(slot);
            }
        }
        None
    }
}

/// In unit tests the count is an atomic that counts, per thread, every
/// operation that writes it (a read-modify-write that changes nothing
/// included), so that tests can assert that pushes write nothing shared.
#[cfg(all(test, not(loom)))]
pub(crate) mod counted {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};

    thread_local!(static WRITES: Cell<u64> = const { Cell::new(0) });

    /// Writes to any sleeper count by the calling thread so far.
    pub(crate) fn writes() -> u64 {
        WRITES.with(Cell::get)
    }

    fn wrote() {
        WRITES.with(|w| w.set(w.get() + 1));
    }

    #[derive(Default)]
    pub(crate) struct CountedUsize(AtomicUsize);

    impl CountedUsize {
        pub(crate) fn new(v: usize) -> Self {
            CountedUsize(AtomicUsize::new(v))
        }
        pub(crate) fn load(&self, o: Ordering) -> usize {
            self.0.load(o)
        }
        pub(crate) fn fetch_add(&self, v: usize, o: Ordering) -> usize {
            wrote();
            self.0.fetch_add(v, o)
        }
        pub(crate) fn fetch_sub(&self, v: usize, o: Ordering) -> usize {
            wrote();
            self.0.fetch_sub(v, o)
        }
    }
}
#[cfg(all(test, not(loom)))]
use counted::CountedUsize as Count;
#[cfg(not(all(test, not(loom))))]
use AtomicUsize as Count;

#[cfg(all(test, not(loom)))]
mod unit {
    use super::*;

    /// Pushes while nobody sleeps write nothing shared; an announced sleeper
    /// is claimed by the next push (one write), and the claim clears it.
    #[test]
    fn pushes_write_nothing_shared() {
        let s = Sleepers::new(4);
        let parkers: Vec<Parker> = (0..4).map(|_| Parker::new()).collect();
        let before = counted::writes();
        for _ in 0..1000 {
            assert_eq!(s.notify_one(|| (0, |_| true), |i| &parkers[i]), None);
        }
        assert_eq!(counted::writes() - before, 0, "a push with no sleeper wrote the pool-wide count");
        s.announce(2);
        let before = counted::writes();
        assert_eq!(s.notify_one(|| (0, |_| true), |i| &parkers[i]), Some(2));
        // The claim: the sleeping count down, the waking count up.
        assert_eq!(counted::writes() - before, 2);
        assert!(s.any(), "the claimed participant counts as being woken until it retracts");
        assert!(s.retract(2), "the claimed flag was already cleared by the waker");
        assert!(!s.any(), "retracted, it no longer counts");
        assert_eq!(s.notify_one(|| (0, |_| true), |i| &parkers[i]), None);
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
            // Whoever claimed what, nobody is left counted as asleep or being woken.
            assert!(!sleepers.any(), "a sleeper or a wake was left counted");
        });
    }
}
