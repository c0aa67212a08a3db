//! Doacross loops: `ordered(n)` with `depend(sink: v)` / `depend(source)`
//! (`GOMP_loop_doacross_*_start`, `GOMP_doacross_post`, `GOMP_doacross_wait`
//! and their `ull` forms; the entry points are in `doacross/abi.rs`).
//!
//! **ABI.** gcc normalises the outermost doacross loop to `0..counts[0]` step
//! 1 and hands its chunks out as an ordinary loop (the `*_next` entry points
//! continue it); the `ncounts` dimensions are the loops of the nest, each
//! given by its iteration count, and `post`/`wait` name an iteration by its
//! vector of 0-based indices. `wait` is C-variadic with exactly `ncounts`
//! arguments (see `abi::wait_shim`).
//!
//! **Posted words.** Every iteration belongs to one *slot*, and the
//! iterations of a slot are all run, in lexicographic order, by one thread:
//! under a static schedule one slot per member (the owner of the outermost
//! index: a post goes to the poster's own slot without arithmetic), under
//! dynamic one per chunk, under guided one per outermost index (guided
//! chunks have no fixed grid). A slot's posted word holds `1 +` the
//! flattened index of the last iteration its thread posted (0: none).
//! While the slots fit in 1 MiB, a slot is two 64-byte aligned cache lines:
//! its posted word alone on the first, so the post fast path writes no line
//! another poster writes, and its waiter registration (below) on the
//! second, which only sleeping waiters write. `wait(v)`
//! reads `v`'s slot until it is at least `1 + flat(v)`; since the slot's
//! thread posts in order, everything up to `v` of that slot is then posted
//! (and its writes visible: the post is a release, the reads acquire). A
//! sink vector outside the iteration space returns at once.
//!
//! **Sleeping, and whom a post wakes.** A waiter spins, then sleeps as herd
//! participants do, running no task meanwhile (`wait::until_without_tasks`:
//! a doacross wait is not a task scheduling point). Before its last check it
//! registers on the slot it waits for: it writes the posted value it wants
//! in its own record, sets its bit in the slot's waiter mask and counts
//! itself in the slot's waiter count (`SeqCst` read-modify-writes on the
//! slot's registration line), and stays registered until its wait ends. A
//! poster stores its slot's word and then loads the slot's waiter count —
//! when nobody sleeps, a line nobody writes, so a hit in its cache (on the
//! posted line, which the waiters are reading, that load would miss: it cost
//! the 2-thread wavefront 0.7 ms of 8.2); when it is not zero it
//! wakes exactly the registered members whose wanted value it reached —
//! O(team / 64) mask words, no wake for a waiter of another slot or of a
//! later iteration. One of the two sides sees the other, so a registered
//! waiter is always woken: the store→load order on each side comes from
//! the post's `SeqCst` swap, or — where the kernel has membarrier(2) and
//! the pool's waiters spin before they sleep — from the waiter's heavy
//! fence alone, leaving the post a plain store (`doacross/fence.rs` has the
//! argument; loom models both below). A pool whose waits sleep at once
//! (passive, or oversubscribed) keeps the swap: there every wait would pay
//! the heavy fence, which interrupts every CPU running a thread of the
//! process.

mod abi;
mod fence;

use crate::team::Team;
use crate::wait::{self, AtomicU64, Observe};
use crate::ws::{self, LoopParams, Space};
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::sync::atomic::Ordering;

/// How a loop's iterations map onto slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotMap {
    /// Static, one block per member of `n` over `len` outer iterations.
    Blocks { len: u64, n: u64 },
    /// Static with chunk `chunk`, dealt round-robin to `n` members.
    RoundRobin { chunk: u64, n: u64 },
    /// Dynamic (one slot per chunk) or guided (`chunk` 1: per outer index).
    PerChunk { chunk: u64 },
}

impl SlotMap {
    #[inline]
    fn slot(self, i0: u64) -> u64 {
        match self {
            SlotMap::Blocks { len, n } => herd::partition::block_owner(len, i0, n),
            SlotMap::RoundRobin { chunk: 1, n } => i0 % n,
            SlotMap::RoundRobin { chunk, n } => (i0 / chunk) % n,
            SlotMap::PerChunk { chunk: 1 } => i0,
            SlotMap::PerChunk { chunk } => i0 / chunk,
        }
    }

    /// The slot of a post of outer index `i0` by member `me`: under the
    /// static schedules the poster owns `i0`, so its slot is `me`.
    #[inline]
    fn post_slot(self, i0: u64, me: usize) -> u64 {
        match self {
            SlotMap::Blocks { .. } | SlotMap::RoundRobin { .. } => {
                debug_assert_eq!(self.slot(i0), me as u64, "a static doacross post by a non-owner");
                me as u64
            }
            SlotMap::PerChunk { .. } => self.slot(i0),
        }
    }

    fn slots(self, len: u64) -> u64 {
        match self {
            SlotMap::Blocks { n, .. } | SlotMap::RoundRobin { n, .. } => n,
            SlotMap::PerChunk { chunk } => len.div_ceil(chunk),
        }
    }
}

/// A slot's words: the posted word first; from `Doacross::reg` on, its
/// registration: the waiter count, then the waiter mask (bit `m % 64` of
/// word `m / 64` for member `m`). [`Doacross::word`] adds `reg` to the
/// registration's indices.
const POSTED: usize = 0;
const WAITERS: usize = 1;
const MASK: usize = 2;

/// Slot padding: the posted word on a cache line of its own and the
/// registration on the next (more lines for the masks of a team of over
/// 448) while the slots fit in this.
const PAD_LIMIT_BYTES: u64 = 1 << 20;

/// Words per cache line.
const LINE_WORDS: usize = 8;

/// A doacross loop's shared state (owned by its worksharing entry).
pub(crate) struct Doacross {
    /// Iteration count of each dimension (all ≥ 1).
    counts: Box<[u64]>,
    map: SlotMap,
    /// Slot `k` is `words[base + k * stride..][..stride]` (see [`POSTED`]).
    words: Box<[AtomicU64]>,
    /// Offset of the first 64-byte aligned word of `words`.
    base: usize,
    stride: usize,
    /// Offset of the registration in a slot, minus 1 (see [`WAITERS`]).
    reg: usize,
    /// Mask words per slot.
    mask_words: usize,
    /// Post with a plain store (the waiters' heavy fence orders it; see
    /// `fence`) rather than a `SeqCst` swap.
    asymmetric: bool,
    /// Waits spin tightly before the general wait: not where the pool's
    /// waits sleep at once (a passive policy asks for no spinning; in an
    /// oversubscribed pool a spinning waiter holds the CPU the poster it
    /// waits for may need).
    #[cfg_attr(loom, allow(dead_code))]
    spin_first: bool,
    /// Member `m`'s wanted posted value while registered (its line is
    /// written by `m` only when it is about to sleep).
    want: Box<[CachePadded<AtomicU64>]>,
}

/// Iterations of [`Doacross::wait`]'s tight spin before the general wait.
#[cfg(not(loom))]
const SPIN: u32 = 4000;

impl Doacross {
    /// The state for a loop of `p` over `counts` in a team of `n`; `None`
    /// when no synchronisation is needed (a team of one, an empty nest).
    pub(crate) fn new(p: &LoopParams, counts: &[u64], n: usize) -> Option<Box<Doacross>> {
        if n <= 1 || counts.is_empty() || counts.contains(&0) {
            return None;
        }
        if counts.iter().try_fold(1u64, |a, &c| a.checked_mul(c)).is_none_or(|t| t == u64::MAX) {
            crate::unsupported::unsupported(
                "a doacross loop nest of 2^64 iterations or more (its iterations cannot be numbered)",
            );
        }
        let len = counts[0];
        let map = match p.kind {
            crate::icv::SchedKind::Static | crate::icv::SchedKind::Auto if p.chunk == 0 => {
                SlotMap::Blocks { len, n: n as u64 }
            }
            crate::icv::SchedKind::Static | crate::icv::SchedKind::Auto => {
                SlotMap::RoundRobin { chunk: p.chunk, n: n as u64 }
            }
            crate::icv::SchedKind::Dynamic => SlotMap::PerChunk { chunk: p.chunk.max(1) },
            crate::icv::SchedKind::Guided => SlotMap::PerChunk { chunk: 1 },
        };
        let slots = map.slots(len);
        let mask_words = n.div_ceil(64);
        let packed = MASK + mask_words;
        let padded = LINE_WORDS + (packed - 1).next_multiple_of(LINE_WORDS);
        let (stride, reg) = if slots.saturating_mul(padded as u64 * 8) <= PAD_LIMIT_BYTES {
            (padded, LINE_WORDS - 1)
        } else {
            (packed, 0)
        };
        let total = (slots as usize).checked_mul(stride).and_then(|w| w.checked_add(LINE_WORDS - 1));
        let Some(total) = total else {
            crate::unsupported::unsupported("a doacross loop with more chunks than memory can count");
        };
        let words: Box<[AtomicU64]> = (0..total).map(|_| AtomicU64::new(0)).collect();
        let base = (words.as_ptr() as usize / 8).wrapping_neg() % LINE_WORDS;
        let sleep_at_once = herd::rt::current_waits_sleep_at_once();
        Some(Box::new(Doacross {
            counts: counts.into(),
            map,
            words,
            base,
            stride,
            reg,
            mask_words,
            // The heavy fence is paid per sleep, and interrupts every CPU
            // running a thread of the process: worth it where waiters spin
            // first and rarely sleep, not where every wait sleeps (a passive
            // policy, or an oversubscribed pool), which keep the swap.
            asymmetric: fence::available() && !sleep_at_once,
            spin_first: !sleep_at_once,
            want: (0..n).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
        }))
    }

    /// `1 +` the flattened index of `v`, or `None` if `v` lies outside the
    /// iteration space. `v` yields one index per dimension.
    #[inline]
    fn flat(&self, v: impl Iterator<Item = u64>) -> Option<(u64, u64)> {
        let mut flat = 0u64;
        let mut first = None;
        let mut seen = 0;
        for (x, &c) in v.zip(self.counts.iter()) {
            if x >= c {
                return None;
            }
            first.get_or_insert(x);
            // No overflow: the product of the counts is below u64::MAX (new).
            flat = flat * c + x;
            seen += 1;
        }
        debug_assert_eq!(seen, self.counts.len());
        Some((first?, flat + 1))
    }

    /// Word `j` of slot `k` (see [`POSTED`]).
    #[inline]
    fn word(&self, k: u64, j: usize) -> &AtomicU64 {
        let j = if j == POSTED { 0 } else { self.reg + j };
        &self.words[self.base + k as usize * self.stride + j]
    }

    /// Marks iteration `v` done (the slot of member `me`, the poster).
    #[inline]
    pub(crate) fn post(&self, team: &Team, me: usize, v: impl Iterator<Item = u64>) {
        let Some((i0, f)) = self.flat(v) else { return };
        let k = self.map.post_slot(i0, me);
        let w = self.word(k, POSTED);
        if wait::weakened("doacross-post-nowake") {
            w.store(f, Ordering::Release);
            return;
        }
        // Store, then load the waiter count: see the module doc (a waiter
        // registered before its last check of `w`). The load is `SeqCst`
        // after the `SeqCst` swap; after the light fence the order comes
        // from the waiters' heavy fence, and the load only acquires.
        let order = if self.asymmetric {
            w.store(f, Ordering::Release);
            fence::light();
            Ordering::Acquire
        } else {
            w.swap(f, Ordering::SeqCst);
            Ordering::SeqCst
        };
        if self.word(k, WAITERS).load(order) != 0 {
            self.wake_waiters(team, k, f);
        }
    }

    /// Wakes the members registered on slot `k` that want at most `f`.
    #[cold]
    fn wake_waiters(&self, team: &Team, k: u64, f: u64) {
        for j in 0..self.mask_words {
            // Acquire: a set bit's registration (after its `want` store) is
            // seen with it.
            let mut bits = self.word(k, MASK + j).load(Ordering::Acquire);
            while bits != 0 {
                let m = j * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                // A stale bit (the member left, perhaps registered again
                // elsewhere) costs at most a spurious wake.
                if self.want[m].load(Ordering::Relaxed) <= f {
                    team.wake(m);
                }
            }
        }
    }

    /// Registers member `me` on slot `k`, wanting posted value `f`.
    fn register(&self, k: u64, me: usize, f: u64) {
        self.want[me].store(f, Ordering::Relaxed);
        self.word(k, MASK + me / 64).fetch_or(1 << (me % 64), Ordering::SeqCst);
        self.word(k, WAITERS).fetch_add(1, Ordering::SeqCst);
    }

    fn unregister(&self, k: u64, me: usize) {
        self.word(k, WAITERS).fetch_sub(1, Ordering::Relaxed);
        self.word(k, MASK + me / 64).fetch_and(!(1 << (me % 64)), Ordering::Relaxed);
    }

    /// Member `me` waits until iteration `v` is posted (at once if `v` is
    /// outside the iteration space).
    #[inline]
    pub(crate) fn wait(&self, me: usize, v: impl Iterator<Item = u64>) {
        let Some((i0, f)) = self.flat(v) else { return };
        let k = self.map.slot(i0);
        let w = self.word(k, POSTED);
        if w.load(Ordering::Acquire) >= f {
            return;
        }
        self.wait_slow(me, k, w, f);
    }

    #[inline(never)]
    fn wait_slow(&self, me: usize, k: u64, w: &AtomicU64, f: u64) {
        // A short tight spin first (unless waits sleep at once): the post a
        // wavefront waits for is usually a few hundred nanoseconds away,
        // less than the wake-up latency of the general wait.
        #[cfg(not(loom))]
        if self.spin_first {
            for _ in 0..SPIN {
                if w.load(Ordering::Acquire) >= f {
                    return;
                }
                std::hint::spin_loop();
            }
        }
        let registered = Cell::new(false);
        wait::until_without_tasks(|last| {
            if last && !registered.get() {
                self.register(k, me, f);
                // One heavy fence per wait: every post after it sees the
                // registration (see `fence`).
                if self.asymmetric {
                    fence::heavy();
                }
                registered.set(true);
            }
            // The last check before sleeping: after the heavy fence a load
            // sees every post the registration may have missed (and, unlike
            // the read-modify-write the swapping post pairs with, takes no
            // ownership of the poster's line). The member's parker
            // announcement precedes the registration, so a poster that
            // sees the registration sees the announcement (`Team::wake`).
            let v = if self.asymmetric && last { w.load(Ordering::Acquire) } else { w.observe(last) };
            v >= f
        });
        if registered.get() {
            self.unregister(k, me);
        }
    }

    /// The number of dimensions (`ncounts`).
    #[inline]
    pub(crate) fn dims(&self) -> usize {
        self.counts.len()
    }
}

/// Loop parameters of a doacross loop: the outermost dimension, normalised.
fn params(count0: u64, sched: crate::icv::Sched) -> LoopParams {
    let mut p = ws::long_params(0, 0, 1, sched, false);
    p.count = count0;
    p.space = Space::Long { start: 0, incr: 1 };
    p
}

/// Starts a doacross loop (every member): the worksharing entry's
/// initialiser builds the posted words before the entry is published.
pub(crate) fn loop_start(
    counts: Vec<u64>,
    sched: crate::icv::Sched,
    mem: Option<*mut *mut libc::c_void>,
    red: *mut usize,
) {
    let p = params(counts.first().copied().unwrap_or(0), sched);
    ws::loop_start_with(p, mem, red, |n| Doacross::new(&p, &counts, n));
}

/// loom models of post/wait, for both post variants (a `SeqCst` swap; a
/// plain store ordered by the waiter's heavy fence, modelled as described
/// in `doacross/fence.rs`): a waiter never passes before the post it
/// depends on (the poster's earlier write is visible after the wait), a
/// post of an earlier iteration does not release it, and a waiter that went
/// to sleep is always woken by the post it waits for (a lost wake-up is a
/// loom deadlock). Weakened, loom reports that deadlock: with
/// `HERD_OMP_WEAKEN=doacross-post-nowake` (post neither reads the waiter
/// count nor wakes) both models, with `HERD_OMP_WEAKEN=doacross-no-heavy-fence`
/// the asymmetric one.
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::icv::SchedKind;
    use loom::sync::atomic::AtomicUsize;
    use loom::sync::Arc;

    fn post_then_wait(asymmetric: bool) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(3);
        b.check(move || {
            let team = Arc::new(Team::new(2, None));
            let sched = crate::icv::Sched { kind: SchedKind::Static, chunk: 0, monotonic: true };
            // Two outer iterations of two, static blocks: member 0 owns
            // (0, _), member 1 owns (1, _).
            let mut d = *Doacross::new(&params(2, sched), &[2, 2], 2).unwrap();
            d.asymmetric = asymmetric;
            let d = Arc::new(d);
            let data = Arc::new(AtomicUsize::new(0));
            let (t2, d2, data2) = (team.clone(), d.clone(), data.clone());
            let waiter = loom::thread::spawn(move || {
                wait::model_enter(&t2.model_parkers[1]);
                d2.wait(1, [0u64, 1].into_iter());
                assert_eq!(data2.load(Ordering::Relaxed), 7, "wait passed before the post");
                d2.post(&t2, 1, [1u64, 0].into_iter());
            });
            d.post(&team, 0, [0u64, 0].into_iter());
            data.store(7, Ordering::Relaxed);
            d.post(&team, 0, [0u64, 1].into_iter());
            // A sink outside the space returns at once.
            d.wait(0, [5u64, 0].into_iter());
            waiter.join().unwrap();
            // 1 + flat(1, 0) = 1 + (1 * 2 + 0).
            assert_eq!(d.word(1, POSTED).load(Ordering::Relaxed), 3, "iteration (1, 0) posted");
            assert_eq!(d.word(0, WAITERS).load(Ordering::Relaxed), 0, "the waiter left its registration");
            assert_eq!(d.word(0, MASK).load(Ordering::Relaxed), 0, "the waiter left its registration");
        });
    }

    #[test]
    fn doacross_post_then_wait_swap() {
        post_then_wait(false);
    }

    #[test]
    fn doacross_post_then_wait_asymmetric() {
        post_then_wait(true);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Every slot is run by one thread: the slot of an outer index is its
    /// owner under the static schedules (and a post's slot is the poster's
    /// number), its chunk under dynamic.
    #[test]
    fn slots_match_the_schedules() {
        for len in [1u64, 2, 7, 100] {
            for n in 1..6u64 {
                for chunk in [0u64, 1, 3] {
                    let map = if chunk == 0 {
                        SlotMap::Blocks { len, n }
                    } else {
                        SlotMap::RoundRobin { chunk, n }
                    };
                    for me in 0..n {
                        for r in herd::partition::static_chunks(len, chunk, me, n) {
                            for i in r {
                                assert_eq!(map.slot(i), me, "len {len} n {n} chunk {chunk} i {i}");
                                assert_eq!(map.post_slot(i, me as usize), me);
                            }
                        }
                    }
                    assert!(map.slots(len) == n);
                }
            }
            for chunk in [1u64, 3] {
                let dynamic = SlotMap::PerChunk { chunk };
                assert_eq!(dynamic.slots(len), len.div_ceil(chunk));
                assert_eq!(dynamic.slot(len - 1), (len - 1) / chunk);
                assert_eq!(dynamic.post_slot(len - 1, 0), (len - 1) / chunk);
            }
        }
    }

    #[test]
    fn flat_numbers_lexicographically_and_rejects_outside() {
        let p =
            params(4, crate::icv::Sched { kind: crate::icv::SchedKind::Dynamic, chunk: 1, monotonic: true });
        let d = Doacross::new(&p, &[4, 3, 2], 2).unwrap();
        assert_eq!(d.flat([0u64, 0, 0].into_iter()), Some((0, 1)));
        assert_eq!(d.flat([1u64, 2, 1].into_iter()), Some((1, 1 + 6 + 4 + 1)));
        assert_eq!(d.flat([4u64, 0, 0].into_iter()), None);
        assert_eq!(d.flat([0u64, (-1i64) as u64, 0].into_iter()), None);
        assert!(Doacross::new(&p, &[4, 0], 2).is_none(), "an empty nest needs no state");
        assert!(Doacross::new(&p, &[4], 1).is_none(), "a team of one needs no state");
    }

    /// Slots are whole, aligned cache lines, the posted word alone on the
    /// first, the registration on the next (the mask of a team of 500 takes
    /// two), disjoint, and packed when padding would pass 1 MiB.
    #[test]
    fn slot_layout() {
        let sched = |kind, chunk| crate::icv::Sched { kind, chunk, monotonic: true };
        for (n, lines) in [(2usize, 2usize), (64, 2), (448, 2), (449, 3), (500, 3)] {
            let d =
                Doacross::new(&params(1000, sched(crate::icv::SchedKind::Static, 1)), &[1000, 4], n).unwrap();
            assert_eq!(d.stride, lines * LINE_WORDS, "team of {n}");
            assert_eq!(d.mask_words, n.div_ceil(64));
            for k in 0..n as u64 {
                let posted = d.word(k, POSTED) as *const AtomicU64 as usize;
                assert_eq!(posted % 64, 0, "slot {k} of {n} aligned");
                assert_eq!(d.word(k, WAITERS) as *const AtomicU64 as usize, posted + 64, "registration line");
            }
            let last = d.word(n as u64 - 1, MASK + d.mask_words - 1) as *const AtomicU64;
            assert!(last < d.words.as_ptr_range().end, "slot {} inside the words", n - 1);
        }
        // 2^20 dynamic chunks of one: packed (posted word, count, one mask word).
        let d =
            Doacross::new(&params(1 << 20, sched(crate::icv::SchedKind::Dynamic, 1)), &[1 << 20], 4).unwrap();
        assert_eq!(d.stride, MASK + 1);
    }

    /// A registration sets the member's bit, the slot's count and its wanted
    /// value; leaving clears both (members above 64 use later mask words).
    #[test]
    fn registration_is_per_slot_and_member() {
        let p =
            params(8, crate::icv::Sched { kind: crate::icv::SchedKind::Static, chunk: 1, monotonic: true });
        let d = Doacross::new(&p, &[8, 2], 130).unwrap();
        d.register(3, 129, 5);
        d.register(3, 2, 7);
        assert_eq!(d.word(3, WAITERS).load(Ordering::Relaxed), 2);
        assert_eq!(d.word(3, MASK).load(Ordering::Relaxed), 1 << 2);
        assert_eq!(d.word(3, MASK + 2).load(Ordering::Relaxed), 1 << 1);
        assert_eq!(d.want[129].load(Ordering::Relaxed), 5);
        for k in [0u64, 2, 4] {
            assert_eq!(d.word(k, WAITERS).load(Ordering::Relaxed), 0, "slot {k} untouched");
        }
        d.unregister(3, 129);
        d.unregister(3, 2);
        assert_eq!(d.word(3, WAITERS).load(Ordering::Relaxed), 0);
        assert!((0..3).all(|j| d.word(3, MASK + j).load(Ordering::Relaxed) == 0));
    }

    /// A post stores `1 + flat` in the poster's slot; a wait for a posted
    /// iteration or one outside the space returns at once.
    #[test]
    fn post_then_wait_on_one_thread() {
        let team = Team::new(2, None);
        let p =
            params(4, crate::icv::Sched { kind: crate::icv::SchedKind::Static, chunk: 1, monotonic: true });
        let d = Doacross::new(&p, &[4, 3], 2).unwrap();
        d.post(&team, 1, [1u64, 2].into_iter());
        assert_eq!(d.word(1, POSTED).load(Ordering::Relaxed), 1 + 3 + 2);
        assert_eq!(d.word(0, POSTED).load(Ordering::Relaxed), 0);
        d.wait(0, [1u64, 1].into_iter());
        d.wait(0, [1u64, 2].into_iter());
        d.wait(0, [7u64, 0].into_iter());
    }
}
