//! Sleepy announcements: how a participant that found no work tells those who
//! make work that it is about to sleep, so that new work wakes it.
//!
//! Protocol (who waits, who wakes, what ordering; see also `README.md`):
//! * The **sleeper** takes a [`Parker`] token, then [`Sleepers::announce`]s
//!   itself (a `SeqCst` `fetch_or` of its bit into the announcement word of
//!   its slot's group of 64, then a `SeqCst` fence), then re-checks the
//!   queues, and only then parks with the token; afterwards it
//!   [`Sleepers::retract`]s (clearing its bit if no waker already did).
//! * The **pusher** makes work visible (a deque push), then calls
//!   [`Sleepers::notify_one`]: a `SeqCst` fence and an `Acquire` *load* of
//!   each announcement word (one for up to 64 participants, two for 128).
//!   All zero: nothing more — a push writes no pool-wide word. Else it
//!   claims one set bit with a `SeqCst` `fetch_and` and unparks that
//!   participant.
//! * Why nothing is lost: the two fences are ordered in the single total
//!   order of `SeqCst` operations. If the pusher's comes first, the
//!   sleeper's re-check (after its fence) sees the pushed work; if the
//!   sleeper's comes first, the pusher's load (after its fence) sees the
//!   bit — and an unpark that lands before `park` invalidates the token, so
//!   the sleeper does not sleep.
//! * Who wins a bit: the claim and the retract are both read-modify-writes
//!   of the same word that clear it, so exactly one of them sees it set.
//! * The words' lines are written only when someone falls asleep or is
//!   woken; pushers only read them, so on a busy pool they stay shared in
//!   every core's cache (rayon-core's `sleep/` counters follow the same
//!   rule). `unit::pushes_write_nothing_shared` counts the writes.
//! * **Finding whom to wake is not `O(P)`.** A waker reads the words (`P/64`
//!   loads) and tests only the set bits, nearest first, where a flag per
//!   participant made it load up to `P` lines to find the one sleeper
//!   (`unit::a_wake_reads_words_not_flags` counts the loads at P = 128).

use super::atomic::{fence, Ordering};
#[cfg(not(all(test, not(loom))))]
use super::atomic::{AtomicU64, AtomicUsize};
use super::Parker;
use crossbeam_utils::CachePadded;

/// Participants per announcement word.
const BITS: usize = 64;

/// One announcement bit per participant, 64 to a word (each word on its own
/// line), and the count of participants being woken.
pub(crate) struct Sleepers {
    /// Bit `s % 64` of word `s / 64`: slot `s` has announced that it sleeps
    /// and neither withdrawn that nor been claimed by a waker. Written only
    /// by announcing, retracting and claiming (never by a push that wakes
    /// nobody).
    words: Box<[CachePadded<Word>]>,
    /// Participants a pusher has claimed ([`Sleepers::notify_one`]) that
    /// have not yet withdrawn their announcement ([`Sleepers::retract`]):
    /// woken for work, no longer announced, not yet running. A futex wake
    /// takes microseconds, and a join that looked only at the announcements
    /// in that time saw nobody to expose work for (`pool/join.rs`). Written
    /// by the claim (before it clears the bit, so that [`Sleepers::any`]
    /// never misses a participant in between; taken back when the claim
    /// loses the bit) and by the claimed participant's retract, so only where
    /// a push wakes someone (a region's wake-up, which claims no bit, writes
    /// nothing here); a hint, read relaxed.
    waking: CachePadded<Count>,
}

impl Sleepers {
    pub(crate) fn new(n: usize) -> Sleepers {
        Sleepers {
            words: (0..n.div_ceil(BITS).max(1)).map(|_| CachePadded::new(Word::new(0))).collect(),
            waking: CachePadded::new(Count::new(0)),
        }
    }

    /// The word and bit of `slot`.
    #[inline]
    fn place(slot: usize) -> (usize, u64) {
        (slot / BITS, 1 << (slot % BITS))
    }

    /// Sleeper: announce that `slot` is about to sleep. Re-check for work after this.
    pub(crate) fn announce(&self, slot: usize) {
        let (w, bit) = Self::place(slot);
        self.words[w].fetch_or(bit, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    /// True when some participant has announced that it sleeps, or is being
    /// woken for work: relaxed loads of lines that only sleepers, wakers and
    /// the woken write (a hint for exposing work; see `pool/join.rs`).
    #[inline]
    pub(crate) fn any(&self) -> bool {
        self.words.iter().any(|w| w.load(Ordering::Relaxed) != 0) || self.waking.load(Ordering::Relaxed) != 0
    }

    /// How many participants have announced that they sleep.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn asleep(&self) -> usize {
        self.words.iter().map(|w| w.load(Ordering::SeqCst).count_ones() as usize).sum()
    }

    /// Sleeper: withdraw the announcement (after waking, or when the re-check
    /// found work). Returns whether a pusher had already claimed it: then
    /// the sleeper was woken *for work*, and if it leaves its wait without
    /// taking any it must pass the wake on ([`Sleepers::notify_one`]), or the
    /// work could sit unseen while every other participant sleeps. Either
    /// way it no longer counts as asleep or being woken.
    pub(crate) fn retract(&self, slot: usize) -> bool {
        let (w, bit) = Self::place(slot);
        if self.words[w].fetch_and(!bit, Ordering::SeqCst) & bit != 0 {
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
        // The fence orders our push before the loads against the sleeper's
        // fence (see the module documentation); the loads write nothing.
        fence(Ordering::SeqCst);
        if self.words.iter().all(|w| w.load(Ordering::Acquire) == 0) {
            return None;
        }
        let (start, eligible) = target();
        self.wake_one(start, eligible, parker)
    }

    /// Claims and unparks the first eligible announced slot at or after
    /// `start`, cyclically: each word is loaded once and only its set bits
    /// are looked at (the word of `start` twice: its bits from `start` on
    /// first, those below last).
    #[cold]
    fn wake_one<'a>(
        &self,
        start: usize,
        eligible: impl Fn(usize) -> bool,
        parker: impl Fn(usize) -> &'a Parker,
    ) -> Option<usize> {
        let nw = self.words.len();
        let start = start.min(nw * BITS - 1);
        let (w0, b0) = (start / BITS, start % BITS);
        let from = u64::MAX << b0;
        let visits = std::iter::once((w0, from))
            .chain((w0 + 1..nw).chain(0..w0).map(|w| (w, u64::MAX)))
            .chain((b0 > 0).then_some((w0, !from)));
        for (w, mask) in visits {
            let word = &self.words[w];
            let mut bits = word.load(Ordering::Relaxed) & mask;
            while bits != 0 {
                let bit = bits & bits.wrapping_neg();
                bits &= !bit;
                let slot = w * BITS + bit.trailing_zeros() as usize;
                if !eligible(slot) {
                    continue;
                }
                // Counted as being woken from before the claim (until its
                // `retract`), so that joins see someone to expose work for
                // while the wake takes effect; taken back if the sleeper
                // retracted (or another waker claimed it) first.
                self.waking.fetch_add(1, Ordering::Relaxed);
                if word.fetch_and(!bit, Ordering::SeqCst) & bit != 0 {
                    parker(slot).unpark();
                    return Some(slot);
                }
                self.waking.fetch_sub(1, Ordering::Relaxed);
            }
        }
        None
    }
}

/// In unit tests the words and the count are atomics that count, per
/// thread, every operation that writes them (a read-modify-write that
/// changes nothing included) and every load of a word, so that tests can
/// assert that pushes write nothing shared and that a wake reads `P/64`
/// words.
#[cfg(all(test, not(loom)))]
pub(crate) mod counted {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    thread_local! {
        static WRITES: Cell<u64> = const { Cell::new(0) };
        static WORD_LOADS: Cell<u64> = const { Cell::new(0) };
    }

    /// Writes to any sleepers' word or count by the calling thread so far.
    pub(crate) fn writes() -> u64 {
        WRITES.with(Cell::get)
    }

    /// Loads of announcement words by the calling thread so far.
    pub(crate) fn word_loads() -> u64 {
        WORD_LOADS.with(Cell::get)
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

    #[derive(Default)]
    pub(crate) struct CountedU64(AtomicU64);

    impl CountedU64 {
        pub(crate) fn new(v: u64) -> Self {
            CountedU64(AtomicU64::new(v))
        }
        pub(crate) fn load(&self, o: Ordering) -> u64 {
            WORD_LOADS.with(|l| l.set(l.get() + 1));
            self.0.load(o)
        }
        pub(crate) fn fetch_or(&self, v: u64, o: Ordering) -> u64 {
            wrote();
            self.0.fetch_or(v, o)
        }
        pub(crate) fn fetch_and(&self, v: u64, o: Ordering) -> u64 {
            wrote();
            self.0.fetch_and(v, o)
        }
    }
}
#[cfg(all(test, not(loom)))]
use counted::{CountedU64 as Word, CountedUsize as Count};
#[cfg(not(all(test, not(loom))))]
use {AtomicU64 as Word, AtomicUsize as Count};

#[cfg(all(test, not(loom)))]
mod unit {
    use super::*;

    /// Pushes while nobody sleeps write nothing shared; an announced sleeper
    /// is claimed by the next push (two writes), and the claim clears it.
    #[test]
    fn pushes_write_nothing_shared() {
        let s = Sleepers::new(4);
        let parkers: Vec<Parker> = (0..4).map(|_| Parker::new()).collect();
        let before = counted::writes();
        for _ in 0..1000 {
            assert_eq!(s.notify_one(|| (0, |_| true), |i| &parkers[i]), None);
        }
        assert_eq!(counted::writes() - before, 0, "a push with no sleeper wrote the sleepers' words");
        s.announce(2);
        assert_eq!(s.asleep(), 1);
        let before = counted::writes();
        assert_eq!(s.notify_one(|| (0, |_| true), |i| &parkers[i]), Some(2));
        // The claim: the waking count up, the announcement bit cleared.
        assert_eq!(counted::writes() - before, 2);
        assert_eq!(s.asleep(), 0);
        assert!(s.any(), "the claimed participant counts as being woken until it retracts");
        assert!(s.retract(2), "the claimed bit was already cleared by the waker");
        assert!(!s.any(), "retracted, it no longer counts");
        assert_eq!(s.notify_one(|| (0, |_| true), |i| &parkers[i]), None);
    }

    /// At P = 128 with one sleeper, the farthest from where the waker looks
    /// first, waking it loads the two words (and the start's word again for
    /// the bits below the start), not 128 flags; the scan is cyclic from the
    /// start, skips ineligible sleepers, and wakes nobody when none is
    /// eligible.
    #[test]
    fn a_wake_reads_words_not_flags() {
        let n = 128;
        let s = Sleepers::new(n);
        let parkers: Vec<Parker> = (0..n).map(|_| Parker::new()).collect();
        s.announce(69);
        let before = counted::word_loads();
        assert_eq!(s.notify_one(|| (70, |_| true), |i| &parkers[i]), Some(69));
        // 2 for the fast path, then word 1 from bit 6, word 0, word 1 below bit 6.
        assert_eq!(counted::word_loads() - before, 2 + 3);
        assert!(s.retract(69));

        // Nearest first, cyclically: from 100, 127 before 3 and 99.
        for slot in [3, 99, 127] {
            s.announce(slot);
        }
        assert_eq!(s.notify_one(|| (100, |_| true), |i| &parkers[i]), Some(127));
        assert_eq!(s.notify_one(|| (100, |_| true), |i| &parkers[i]), Some(3));
        // Only eligible slots are claimed; an ineligible sleeper stays announced.
        assert_eq!(s.notify_one(|| (0, |slot: usize| slot < 64), |i| &parkers[i]), None);
        assert_eq!(s.asleep(), 1);
        assert_eq!(s.notify_one(|| (0, |slot: usize| slot >= 64), |i| &parkers[i]), Some(99));
        for slot in [127, 3, 99] {
            assert!(s.retract(slot));
        }
        assert!(!s.any());
    }
}

#[cfg(all(test, loom))]
mod tests {
    use super::super::atomic::AtomicBool;
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
