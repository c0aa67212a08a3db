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
//! **Tree.** A cascade over slots `lo..hi` has positions `0..hi − lo`
//! (position `p` is slot `lo + p`) in an implicit `FANOUT`-ary heap: the
//! children of `p` are `FANOUT·p + 1 ..= FANOUT·p + FANOUT`. The waker visits
//! the root; a visit of `p` *hands `p` its subtree* if `p` sleeps, and
//! otherwise visits `p`'s children itself. So a member that is awake
//! (running, spinning, the waker itself) never holds up the wake-up of its
//! subtree. A team (`lo = 0`) and any other range (a part of a team, a
//! sub-team starting past the master) cascade alike.
//!
//! **Hand-off.** Per slot a word holds a *request*: the range `lo..hi` of a
//! cascade whose subtree at that slot is to be woken (0: none). A visitor
//! that finds `p`'s parker awake (one `SeqCst` load, the load
//! `unpark_if_sleeping` makes) visits `p`'s children itself. Else, to hand
//! `p` its subtree, it puts its request in `p`'s word (a `SeqCst`
//! read-modify-write): into an empty word, or merged with a waiting request
//! of the same `lo` (the larger `hi`: the subtree of `p` over `lo..hi` is
//! contained in the one over `lo..hi'` for `hi' ≥ hi`); then it
//! `unpark_if_sleeping`s `p`'s parker.
//! * It woke `p` (the parker said `SLEEPING`): `p` returns from its park and
//!   takes the word ([`Cascade::take`], which every participant's wait loop
//!   calls after each park), so `p` cascades over its subtree.
//! * It did not: it takes the word back (`swap(0)`). A 0 means `p` took it
//!   meanwhile and cascades; otherwise the visitor serves the request it
//!   took back (its own, merged or not, or another waker's that came after
//!   `p` took the visitor's).
//! * The word holds a request of another range (another waker's, still
//!   waiting there): no hand-off. The visitor wakes `p` itself
//!   (`unpark_if_sleeping`; `p` serves the other request when it takes its
//!   word) and visits `p`'s children itself.
//!
//! Whoever takes a request out of a word — its slot's owner, or a visitor
//! taking a word back — serves it; a request is put in a word only by a
//! visitor that then wakes the owner or takes the word back, so no request
//! is left unserved once every visit has returned and every woken owner
//! has taken its word.
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
//! `SLEEPING` and wakes it (itself, or by handing it its subtree), or a
//! visit of an ancestor handed the subtree to a member that serves it.
//! Several wakers at once, of equal or different ranges, keep this: each
//! cascade's visits cover its own range whether its requests are handed
//! off, merged, or refused for another range's (then the visitor does the
//! work itself). `sync::cascade::model` checks a chain of two hand-offs from
//! slot 0 and one over a range starting at 1, each failing when the woken
//! member does not take its word; two and three wakers of different ranges
//! racing over the same sleepers are checked under shuttle
//! (`shuttle_model`) and run with real threads
//! (`tests::wakers_of_different_ranges_at_once`).

use super::atomic::{AtomicU64, Ordering};
use super::Parker;
use crossbeam_utils::CachePadded;
use std::ops::Range;

/// Children per node of the cascade tree: a waker of up to `FANOUT + 1`
/// members wakes them all itself (as fast as a cascade there, and sooner).
pub(crate) const FANOUT: usize = 8;

/// The per-slot hand-off words of one pool; see the module documentation.
pub(crate) struct Cascade {
    words: Box<[CachePadded<AtomicU64>]>,
    fanout: usize,
}

/// A cascade over slots `lo..hi` (`lo < hi`), as kept in a hand-off word:
/// `lo` in the high half, `hi` (never 0) in the low one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Request {
    lo: usize,
    hi: usize,
}

impl Request {
    fn word(self) -> u64 {
        ((self.lo as u64) << 32) | self.hi as u64
    }

    fn of(word: u64) -> Option<Request> {
        (word != 0)
            .then_some(Request { lo: (word >> 32) as usize, hi: (word & u64::from(u32::MAX)) as usize })
    }
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
        assert!(u32::try_from(n).is_ok(), "slots fit a request's halves");
        Cascade { words: (0..n).map(|_| CachePadded::new(AtomicU64::new(0))).collect(), fanout }
    }

    /// Wakes every participant of `slots` (clamped to the pool) that
    /// sleeps, down the tree over them, as a waker whose condition write
    /// was a `SeqCst` read-modify-write; `parker(s)` is slot `s`'s parker.
    /// Returns the wake-ups this thread issued.
    pub(crate) fn wake<'p>(&self, slots: Range<usize>, parker: impl Fn(usize) -> &'p Parker + Copy) -> u32 {
        let hi = slots.end.min(self.words.len());
        let lo = slots.start.min(hi);
        if hi - lo <= self.fanout + 1 {
            return (lo..hi).map(|s| parker(s).unpark_if_sleeping() as u32).sum();
        }
        self.visit(0, Request { lo, hi }, parker)
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
        match Request::of(word.swap(0, Ordering::SeqCst)) {
            None => 0,
            Some(r) => self.children(slot - r.lo, r, parker),
        }
    }

    /// Visits position `p` of the cascade `r`.
    fn visit<'p>(&self, p: usize, r: Request, parker: impl Fn(usize) -> &'p Parker + Copy) -> u32 {
        let slot = r.lo + p;
        // Awake (the common case when few sleep): one load, as
        // `unpark_if_sleeping`'s own, and no write to the slot's word.
        if !parker(slot).is_sleeping() {
            return self.children(p, r, parker);
        }
        let word = &self.words[slot];
        if !self.hand_off(word, r) {
            // Another range's request waits there: the slot serves that one
            // once woken; this cascade's subtree is served here.
            return parker(slot).unpark_if_sleeping() as u32 + self.children(p, r, parker);
        }
        if parker(slot).unpark_if_sleeping() {
            return 1;
        }
        match Request::of(word.swap(0, Ordering::SeqCst)) {
            // The slot took it meanwhile: it cascades.
            None => 0,
            Some(taken) => self.children(slot - taken.lo, taken, parker),
        }
    }

    /// Puts `r` in a slot's hand-off word: into an empty word, or merged
    /// with a request of the same `lo`. False, writing nothing, when the
    /// word holds another range's request.
    fn hand_off(&self, word: &AtomicU64, r: Request) -> bool {
        word.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| match Request::of(w) {
            None => Some(r.word()),
            Some(o) if o.lo == r.lo => Some(Request { lo: r.lo, hi: o.hi.max(r.hi) }.word()),
            Some(_) => None,
        })
        .is_ok()
    }

    /// Visits the children of position `p` of the cascade `r`.
    fn children<'p>(&self, p: usize, r: Request, parker: impl Fn(usize) -> &'p Parker + Copy) -> u32 {
        let first = p * self.fanout + 1;
        let end = r.hi - r.lo;
        (first..(first + self.fanout).min(end)).map(|c| self.visit(c, r, parker)).sum()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{Cascade, FANOUT};
    use crate::sync::Parker;
    use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

    /// The threads of `sleepers` (slots of a pool of `n`) sleep on a word
    /// until it reaches `wakers.len()`; each waker (a thread outside the
    /// sleepers) adds one to the word and cascades over its range `lo..hi`,
    /// all at once. Every sleeper wakes and no
    /// hand-off word is left set. Returns the wake-ups each sleeper, then
    /// each waker, issued. (A sleeper woken spuriously before the word is
    /// complete goes back to sleep; all are asleep before the wakers start.)
    fn cascade(n: usize, sleepers: std::ops::Range<usize>, wakers: &[(usize, usize)]) -> Vec<u32> {
        let cascade = Cascade::new(n);
        let parkers: Vec<Parker> = (0..n).map(|_| Parker::new()).collect();
        let go = AtomicU32::new(0);
        let full = wakers.len() as u32;
        let asleep = AtomicUsize::new(0);
        let wakes: Vec<AtomicU32> = (0..sleepers.len() + wakers.len()).map(|_| AtomicU32::new(0)).collect();
        let woke = AtomicUsize::new(0);
        let parker = |s: usize| &parkers[s];
        let start = std::sync::Barrier::new(wakers.len());
        std::thread::scope(|s| {
            for (i, me) in sleepers.clone().enumerate() {
                let (cascade, go, asleep, wakes, woke) = (&cascade, &go, &asleep, &wakes, &woke);
                s.spawn(move || {
                    let mut counted = false;
                    loop {
                        let token = parker(me).prepare();
                        if go.load(Ordering::Acquire) == full {
                            break;
                        }
                        if !counted {
                            counted = true;
                            asleep.fetch_add(1, Ordering::SeqCst);
                        }
                        parker(me).park_unless(token, || go.fetch_add(0, Ordering::SeqCst) == full);
                        wakes[i].fetch_add(cascade.take(me, parker), Ordering::Relaxed);
                    }
                    woke.fetch_add(1, Ordering::Relaxed);
                });
            }
            // Every sleeper is asleep before the word changes.
            while asleep.load(Ordering::SeqCst) < sleepers.len()
                || !sleepers.clone().all(|s| parkers[s].is_sleeping())
            {
                std::thread::yield_now();
            }
            for (k, &(lo, hi)) in wakers.iter().enumerate() {
                let (cascade, go, wakes, start) = (&cascade, &go, &wakes, &start);
                let i = sleepers.len() + k;
                s.spawn(move || {
                    start.wait();
                    go.fetch_add(1, Ordering::SeqCst);
                    wakes[i].fetch_add(cascade.wake(lo..hi, parker), Ordering::Relaxed);
                });
            }
        });
        assert_eq!(woke.load(Ordering::Relaxed), sleepers.len());
        assert!(cascade.words.iter().all(|w| w.load(Ordering::Relaxed) == 0), "a hand-off word left set");
        wakes.iter().map(|w| w.load(Ordering::Relaxed)).collect()
    }

    fn assert_at_most_fanout(per_thread: &[u32]) {
        let max = *per_thread.iter().max().unwrap();
        assert!(max as usize <= FANOUT, "a thread issued {max} wake-ups: {per_thread:?}");
        assert!(per_thread.iter().sum::<u32>() >= 1);
    }

    /// 63 threads sleep in slots 1..64; the waker (slot 0, awake) cascades
    /// over the team 0..64. Every sleeper wakes, and no thread — the waker
    /// or a woken member — issues more than `FANOUT` wake-ups (the waker
    /// alone issued 63 before).
    #[test]
    fn every_sleeper_wakes_and_nobody_wakes_more_than_fanout() {
        assert_at_most_fanout(&cascade(64, 1..64, &[(0, 64)]));
    }

    /// The same over a range that does not start at 0: 63 sleepers in slots
    /// 5..68 of a pool of 68, the waker outside them. (`wake_waiting` of
    /// such a range was a loop of 63 wakes by the waker before.)
    #[test]
    fn a_range_past_slot_0_cascades_too() {
        assert_at_most_fanout(&cascade(68, 5..68, &[(5, 68)]));
    }

    /// Wakers of different ranges over the same sleepers at once (the team
    /// 0..40 and the part 3..40; 1..40, 2..40 and 0..40 over 2..40, the
    /// slots every range holds: a sleeper waits for every waker): where one's
    /// request waits in a word another's visit wakes the slot and serves its
    /// subtree itself. Every sleeper wakes, in every round.
    #[test]
    fn wakers_of_different_ranges_at_once() {
        for _ in 0..10 {
            cascade(40, 3..40, &[(0, 40), (3, 40)]);
            cascade(40, 2..40, &[(1, 40), (2, 40), (0, 40)]);
        }
    }

    /// A visit of an awake member takes its hand-off word back and serves
    /// the largest request it took back.
    #[test]
    fn an_awake_member_is_passed_over() {
        let cascade = Cascade::with_fanout(40, 2);
        let parkers: Vec<Parker> = (0..40).map(|_| Parker::new()).collect();
        // Nobody sleeps: no word is written.
        assert_eq!(cascade.wake(0..40, |s| &parkers[s]), 0);
        assert_eq!(cascade.wake(7..40, |s| &parkers[s]), 0);
        assert!(cascade.words.iter().all(|w| w.load(Ordering::Relaxed) == 0));
    }

    /// A request keeps both ends; ranges are clamped to the pool.
    #[test]
    fn requests_round_trip() {
        use super::Request;
        let r = Request { lo: 5, hi: 68 };
        assert_eq!(Request::of(r.word()), Some(r));
        assert_eq!(Request::of(0), None);
        let parkers: Vec<Parker> = (0..4).map(|_| Parker::new()).collect();
        assert_eq!(Cascade::new(4).wake(2..100, |s| &parkers[s]), 0);
        assert_eq!(Cascade::new(4).wake(9..100, |s| &parkers[s]), 0);
    }
}

/// The hand-off, model-checked on chains (fan-out 1). `chain`: the cascade
/// over `lo..lo + 3` (`lo` 0, and 1 for a range past slot 0: positions
/// 0 → 1 → 2 are slots `lo` → `lo + 1` → `lo + 2`); the waker makes the
/// condition true and visits position 0 (awake: nobody sleeps there); the
/// other two slots sleep on it, and each calls [`Cascade::take`] after its
/// park, as the pool's wait loops do. Both always wake. Weakened (a woken
/// slot does not take its word), the last slot can sleep for ever when the
/// middle one was handed the subtree: loom's park yields, so it reports a
/// model that exceeds its branches.
///
/// Two wakers of different ranges at once (the refused hand-off, where
/// another range's request waits in a word) are checked under shuttle
/// (`shuttle_model`) and with real threads
/// (`tests::wakers_of_different_ranges_at_once`), not here: a loom model of
/// two wakers and two sleepers exceeds loom's branch bound even for the
/// sound protocol (loom treats `SeqCst` loads as `AcqRel`, and a parked
/// thread's re-reads of its word may be stale).
#[cfg(all(test, loom))]
mod model {
    use super::{Cascade, Request};
    use crate::sync::atomic::{AtomicBool, Ordering};
    use crate::sync::Parker;
    use loom::sync::Arc;

    /// The loop of a sleeper in `slot` until `done(last)`, taking its word
    /// after each park unless `weaken`.
    fn sleep_until(
        cascade: &Cascade,
        parkers: &[Parker],
        slot: usize,
        weaken: bool,
        done: impl Fn(bool) -> bool,
    ) {
        loop {
            let token = parkers[slot].prepare();
            if done(false) {
                break;
            }
            parkers[slot].park_unless(token, || done(true));
            if !weaken {
                cascade.take(slot, |s| &parkers[s]);
            }
        }
    }

    /// A flag as a waiter reads it: a load while spinning, a
    /// read-modify-write for the last check (`parker.rs`).
    fn observe(flag: &AtomicBool, last: bool) -> bool {
        if last {
            flag.fetch_or(false, Ordering::SeqCst)
        } else {
            flag.load(Ordering::Acquire)
        }
    }

    fn chain(lo: usize, weaken: bool) {
        loom::model(move || {
            let cascade = Arc::new(Cascade::with_fanout(lo + 3, 1));
            let parkers: Arc<Vec<Parker>> = Arc::new((0..lo + 3).map(|_| Parker::new()).collect());
            let go = Arc::new(AtomicBool::new(false));
            let sleepers: Vec<_> = (lo + 1..lo + 3)
                .map(|me| {
                    let (cascade, parkers, go) = (cascade.clone(), parkers.clone(), go.clone());
                    loom::thread::spawn(move || {
                        sleep_until(&cascade, &parkers, me, weaken, |l| observe(&go, l))
                    })
                })
                .collect();
            go.swap(true, Ordering::SeqCst);
            cascade.visit(0, Request { lo, hi: lo + 3 }, |s| &parkers[s]);
            for s in sleepers {
                s.join().unwrap();
            }
        });
    }

    #[test]
    fn cascade_wakes_a_chain() {
        chain(0, false);
    }

    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn cascade_lost_when_weakened() {
        chain(0, true);
    }

    #[test]
    fn cascade_wakes_a_chain_past_slot_0() {
        chain(1, false);
    }

    #[test]
    #[should_panic(expected = "maximum number of branches")]
    fn cascade_past_slot_0_lost_when_weakened() {
        chain(1, true);
    }
}

/// What the loom models above cannot reach, under shuttle's randomized
/// schedulers (sequentially consistent, so they complement loom's
/// weak-memory search instead of replacing it): **two wakers of different
/// ranges** over the same sleepers at once, on trees of fan-out 1 and 2,
/// with four sleepers. Each sleeper loops as the pool's wait loops do
/// (prepare, check, `park_unless`, take its word) until both wakers have
/// made the condition true (so sleepers hold the slots every range holds,
/// as in `tests::wakers_of_different_ranges_at_once`: a sleeper woken by
/// the first waker sleeps again until the last one's cascade reaches it);
/// a sleeper nobody wakes yields for ever and
/// shuttle fails the schedule at its step bound. Weakened (a woken slot
/// does not take its word) the same model must fail.
#[cfg(all(test, shuttle))]
mod shuttle_model {
    use super::Cascade;
    use crate::sync::atomic::{AtomicUsize, Ordering};
    use crate::sync::Parker;
    use shuttle::sync::Arc;

    const SLOTS: usize = 6;
    const STEPS: usize = 20_000;

    /// Sleepers in the slots every range holds; wakers cascade over `ranges`.
    fn wakers(fanout: usize, ranges: &'static [(usize, usize)], weaken: bool) {
        let cascade = Arc::new(Cascade::with_fanout(SLOTS, fanout));
        let parkers: Arc<Vec<Parker>> = Arc::new((0..SLOTS).map(|_| Parker::new()).collect());
        let go = Arc::new(AtomicUsize::new(0));
        let full = ranges.len();
        let first = ranges.iter().map(|r| r.0).max().unwrap().max(1);
        let sleepers: Vec<_> = (first..SLOTS)
            .map(|me| {
                let (cascade, parkers, go) = (cascade.clone(), parkers.clone(), go.clone());
                shuttle::thread::spawn(move || loop {
                    let token = parkers[me].prepare();
                    if go.load(Ordering::SeqCst) == full {
                        break;
                    }
                    parkers[me].park_unless(token, || go.fetch_add(0, Ordering::SeqCst) == full);
                    if !weaken {
                        cascade.take(me, |s| &parkers[s]);
                    }
                })
            })
            .collect();
        let wakers: Vec<_> = ranges
            .iter()
            .map(|&(lo, hi)| {
                let (cascade, parkers, go) = (cascade.clone(), parkers.clone(), go.clone());
                shuttle::thread::spawn(move || {
                    go.fetch_add(1, Ordering::SeqCst);
                    cascade.wake(lo..hi, |s| &parkers[s]);
                })
            })
            .collect();
        for t in sleepers.into_iter().chain(wakers) {
            t.join().unwrap();
        }
        if !weaken {
            // Every request put in a word was served and taken out.
            assert!(cascade.words.iter().all(|w| w.load(Ordering::SeqCst) == 0), "a hand-off word left set");
        }
    }

    fn check(fanout: usize, ranges: &'static [(usize, usize)], weaken: bool, iterations: usize) {
        crate::sync::shuttle_check(iterations, STEPS, move || wakers(fanout, ranges, weaken));
    }

    #[test]
    fn two_ranges_on_a_chain() {
        check(1, &[(0, SLOTS), (1, SLOTS)], false, 20_000);
    }

    #[test]
    fn two_ranges_on_a_binary_tree() {
        check(2, &[(0, SLOTS), (1, SLOTS)], false, 20_000);
    }

    #[test]
    fn two_ranges_past_slot_0_on_a_chain() {
        check(1, &[(1, SLOTS), (2, SLOTS)], false, 20_000);
    }

    #[test]
    fn three_ranges_on_a_chain() {
        check(1, &[(1, SLOTS), (2, SLOTS), (0, SLOTS)], false, 10_000);
    }

    #[test]
    #[should_panic(expected = "exceeded max_steps")]
    fn two_ranges_lost_when_weakened() {
        check(1, &[(0, SLOTS), (1, SLOTS)], true, 3000);
    }
}
