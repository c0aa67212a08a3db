//! Waking many sleepers at once without one thread making all the system
//! calls: a wake-up *cascade* down a tree of the participants.
//!
//! A runtime that makes a word true for a whole team (herd-omp's
//! worksharing publish, its ring's release, a start gate) must wake every
//! member that sleeps on it. Done by the waker alone that is up to `n − 1`
//! futex wakes in a row by one thread — at `n = 128`, a hundred-odd system
//! calls on the construct's critical path. Instead the waker wakes only the
//! *frontier* of a tree over the members and hands each woken member its
//! subtree: a woken member, back from its park, wakes the sleepers of its
//! own subtree the same way. No thread makes more than about
//! [`FANOUT`] wake-ups per level, and the last sleeper is woken after
//! `⌈log_FANOUT n⌉` hops.
//!
//! **Tree.** Positions `0..end` of slots `0..end`, as an implicit
//! `FANOUT`-ary heap: the children of `p` are `FANOUT·p + 1 ..= FANOUT·p +
//! FANOUT`. The waker visits the root; a visit of `p` *hands `p` its
//! subtree* if `p` sleeps, and otherwise visits `p`'s children itself. So a
//! member that is awake (running, spinning, the waker itself) never holds
//! up the wake-up of its subtree.
//!
//! **Hand-off.** Per slot a word holds `end` of a requested cascade (0:
//! none). A visitor that finds `p`'s parker awake (one `SeqCst` load, the
//! load `unpark_if_sleeping` makes) visits `p`'s children itself. Else, to
//! hand `p` its subtree, it raises `p`'s word to `end` (`fetch_max`,
//! `SeqCst`), then `unpark_if_sleeping`s `p`'s parker.
//! * It woke `p` (the parker said `SLEEPING`): `p` returns from its park and
//!   takes the word ([`Cascade::take`], which every participant's wait loop
//!   calls after each park), so `p` cascades over its subtree.
//! * It did not: it takes the word back (`swap(0)`). A 0 means `p` took it
//!   meanwhile and cascades; otherwise the visitor visits `p`'s children
//!   itself, up to the largest `end` it took back (another waker's request
//!   it took back with its own is served by this visit).
//!
//! **No lost wake-up** (the conditional-wake rule of `parker.rs` carried
//! down the tree): the waker made the condition true with a `SeqCst`
//! read-modify-write before the cascade. A sleeper announced `SLEEPING`
//! before its last check of the condition (a read-modify-write): if that
//! check came after the waker's in the condition's order it saw the
//! condition; if before, its `SLEEPING` happens-before the waker's write,
//! and so before every visit that follows it — the waker's own loads, and
//! through the `SeqCst` write and take of a hand-off word, the woken
//! member's loads too. So the visit of the sleeper's position sees
//! `SLEEPING` and wakes it, or a visit of an ancestor handed the subtree to
//! a member that will. `sync::cascade::model` checks a chain of two
//! hand-offs and fails when the woken member does not take its word.

use super::atomic::{AtomicU32, Ordering};
use super::Parker;
use crossbeam_utils::CachePadded;

/// Children per node of the cascade tree: a waker of up to `FANOUT + 1`
/// members wakes them all itself (as fast as a cascade there, and sooner).
pub(crate) const FANOUT: usize = 8;

/// The per-slot hand-off words of one pool; see the module documentation.
pub(crate) struct Cascade {
    words: Box<[CachePadded<AtomicU32>]>,
    fanout: usize,
}

impl Cascade {
    /// Words for `n` slots.
    pub(crate) fn new(n: usize) -> Cascade {
        Cascade::with_fanout(n, FANOUT)
    }

    /// Words for `n` slots, `fanout ≥ 1` children per node (models use 1,
    /// a chain).
    pub(crate) fn with_fanout(n: usize, fanout: usize) -> Cascade {
        assert!(fanout >= 1);
        Cascade { words: (0..n).map(|_| CachePadded::new(AtomicU32::new(0))).collect(), fanout }
    }

    /// Wakes every participant of slots `0..end` that sleeps, down the
    /// tree, as a waker whose condition write was a `SeqCst`
    /// read-modify-write; `parker(s)` is slot `s`'s parker. Returns the
    /// wake-ups this thread issued.
    pub(crate) fn wake<'p>(&self, end: usize, parker: impl Fn(usize) -> &'p Parker + Copy) -> u32 {
        let end = end.min(self.words.len());
        if end <= self.fanout + 1 {
            return (0..end).map(|s| parker(s).unpark_if_sleeping() as u32).sum();
        }
        self.visit(0, end, parker)
    }

    /// Called by the occupant of `slot` after each park: if a visitor
    /// handed it its subtree, wakes that subtree's sleepers. Returns the
    /// wake-ups this thread issued.
    #[inline]
    pub(crate) fn take<'p>(&self, slot: usize, parker: impl Fn(usize) -> &'p Parker + Copy) -> u32 {
        let word = &self.words[slot];
        if word.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        match word.swap(0, Ordering::SeqCst) as usize {
            0 => 0,
            end => self.children(slot, end, parker),
        }
    }

    /// Visits position `p` of a cascade over `0..end`.
    fn visit<'p>(&self, p: usize, end: usize, parker: impl Fn(usize) -> &'p Parker + Copy) -> u32 {
        // Awake (the common case when few sleep): one load, as
        // `unpark_if_sleeping`'s own, and no write to `p`'s word.
        if !parker(p).is_sleeping() {
            return self.children(p, end, parker);
        }
        let word = &self.words[p];
        word.fetch_max(end as u32, Ordering::SeqCst);
        if parker(p).unpark_if_sleeping() {
            return 1;
        }
        match word.swap(0, Ordering::SeqCst) as usize {
            // `p` took it meanwhile: it cascades.
            0 => 0,
            taken => self.children(p, taken.max(end), parker),
        }
    }

    /// Visits the children of `p` in a cascade over `0..end`.
    fn children<'p>(&self, p: usize, end: usize, parker: impl Fn(usize) -> &'p Parker + Copy) -> u32 {
        let first = p * self.fanout + 1;
        (first..(first + self.fanout).min(end)).map(|c| self.visit(c, end, parker)).sum()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{Cascade, FANOUT};
    use crate::sync::Parker;
    use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

    /// 64 threads sleep on a word until it is set; the waker sets it and
    /// cascades. Every sleeper wakes, and no thread — the waker or a woken
    /// member — issues more than `FANOUT` wake-ups (the waker alone issued
    /// 63 before). (A sleeper woken spuriously before the word is set goes
    /// back to sleep; it is asleep again before the waker starts.)
    #[test]
    fn every_sleeper_wakes_and_nobody_wakes_more_than_fanout() {
        let n = 64;
        let cascade = Cascade::new(n);
        let parkers: Vec<Parker> = (0..n).map(|_| Parker::new()).collect();
        let go = AtomicU32::new(0);
        let asleep = AtomicUsize::new(0);
        let wakes: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
        let woke = AtomicUsize::new(0);
        let parker = |s: usize| &parkers[s];
        std::thread::scope(|s| {
            for me in 1..n {
                let (cascade, go, asleep, wakes, woke) = (&cascade, &go, &asleep, &wakes, &woke);
                s.spawn(move || {
                    let mut counted = false;
                    loop {
                        let token = parker(me).prepare();
                        if go.load(Ordering::Acquire) != 0 {
                            break;
                        }
                        if !counted {
                            counted = true;
                            asleep.fetch_add(1, Ordering::SeqCst);
                        }
                        parker(me).park_unless(token, || go.fetch_add(0, Ordering::SeqCst) != 0);
                        wakes[me].fetch_add(cascade.take(me, parker), Ordering::Relaxed);
                    }
                    woke.fetch_add(1, Ordering::Relaxed);
                });
            }
            // Every sleeper is asleep before the word is set.
            while asleep.load(Ordering::SeqCst) < n - 1 || !(1..n).all(|s| parkers[s].is_sleeping()) {
                std::thread::yield_now();
            }
            go.swap(1, Ordering::SeqCst);
            wakes[0].fetch_add(cascade.wake(n, parker), Ordering::Relaxed);
        });
        assert_eq!(woke.load(Ordering::Relaxed), n - 1);
        let per_thread: Vec<u32> = wakes.iter().map(|w| w.load(Ordering::Relaxed)).collect();
        let max = *per_thread.iter().max().unwrap();
        assert!(max as usize <= FANOUT, "a thread issued {max} wake-ups: {per_thread:?}");
        assert!(per_thread.iter().sum::<u32>() >= 1);
    }

    /// A visit of an awake member takes its hand-off word back and serves
    /// the largest request it took back.
    #[test]
    fn an_awake_member_is_passed_over() {
        let cascade = Cascade::with_fanout(40, 2);
        let parkers: Vec<Parker> = (0..40).map(|_| Parker::new()).collect();
        // Nobody sleeps: every word is taken back, none is left set.
        assert_eq!(cascade.wake(40, |s| &parkers[s]), 0);
        assert!(cascade.words.iter().all(|w| w.load(Ordering::Relaxed) == 0));
    }
}

/// The hand-off, model-checked on a chain (fan-out 1: 0 → 1 → 2): slot 0
/// makes the condition true and cascades; slots 1 and 2 sleep on it, and
/// each calls [`Cascade::take`] after its park, as the pool's wait loops
/// do. Both always wake. Weakened (a woken slot does not take its word),
/// slot 2 can sleep for ever when slot 1 was handed the subtree: loom's park
/// yields, so it reports a model that exceeds its branches.
#[cfg(all(test, loom))]
mod model {
    use super::Cascade;
    use crate::sync::atomic::{AtomicBool, Ordering};
    use crate::sync::Parker;
    use loom::sync::Arc;

    fn chain(weaken: bool) {
        loom::model(move || {
            let cascade = Arc::new(Cascade::with_fanout(3, 1));
            let parkers: Arc<Vec<Parker>> = Arc::new((0..3).map(|_| Parker::new()).collect());
            let go = Arc::new(AtomicBool::new(false));
            let sleepers: Vec<_> = (1..3)
                .map(|me| {
                    let (cascade, parkers, go) = (cascade.clone(), parkers.clone(), go.clone());
                    loom::thread::spawn(move || loop {
                        let token = parkers[me].prepare();
                        if go.load(Ordering::Acquire) {
                            break;
                        }
                        parkers[me].park_unless(token, || go.fetch_or(false, Ordering::SeqCst));
                        if !weaken {
                            cascade.take(me, |s| &parkers[s]);
                        }
                    })
                })
                .collect();
            go.swap(true, Ordering::SeqCst);
            cascade.visit(0, 3, |s| &parkers[s]);
            for s in sleepers {
                s.join().unwrap();
            }
        });
    }

    #[test]
    fn cascade_wakes_a_chain() {
        chain(false);
    }

    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn cascade_lost_when_weakened() {
        chain(true);
    }
}
