//! The protocol by which the blocks of one column group of `C` share packed
//! panels of `B` without ever waiting for a participant that may not come.
//!
//! The blocks of a grid column ("members" of the group) walk the same
//! sequence of `kc × nc` panels of `B`, numbered `t = 0, 1, …`. Panel `t`
//! lives in slot `t % R` of a ring of `R` slots (3, or fewer when there are
//! fewer panels); each slot's panel is cut
//! into `S` slices (runs of whole `NR`-column slivers).
//!
//! * **Slot word** (one cache line per slot): `(t + 1) << 32 | readers`,
//!   the panel the slot holds (0: none yet) and how many members hold it.
//!   A member *enters* panel `t` with one CAS: if the slot holds `t`, it adds
//!   itself as a reader; if the slot holds an older panel and has no reader,
//!   it takes the slot over for `t` (as its first reader); if the slot holds a
//!   newer panel (the member is late: it started after the others went on,
//!   e.g. a block run after another on the same participant) or an older
//!   panel still read by a slow member, it does **not wait**: `enter`
//!   returns `None` and the member packs panel `t` into a private buffer,
//!   as every block did before panels were shared. A member leaves with a
//!   `Release` decrement; every change of the word is a read-modify-write,
//!   so whoever takes the slot over (`Acquire`) has seen every earlier
//!   reader's reads of the old panel finish before it packs the new one.
//! * **Slice words** (one cache line each): `2t + 1` = slice claimed for
//!   panel `t`, `2t + 2` = packed (values only grow, so a slot's old panel
//!   never reads as the new one's). A reader of `t` claims, starting at its
//!   own slice (members spread over the panel) and wrapping round, every
//!   slice still below `2t + 1` with a CAS, packs each slice it won and
//!   stores `2t + 2` (`Release`); then it waits until every slice reads
//!   `2t + 2` (`Acquire`) and multiplies from the panel.
//!
//! Why this never deadlocks whatever subset of the members runs, and in
//! whatever order (a pool share smaller than the grid, a busy participant,
//! blocks run one after another by one participant): a member waits only for
//! slices *claimed* for the same panel, and a slice is only claimed by a
//! member that is already inside `fill`, between its claim and its `2t + 2`
//! store, running a copy that takes no lock, calls nothing in the pool and
//! cannot block. An unclaimed slice is never waited for: the waiter claims
//! it itself. The panel is packed once however many members come (one is
//! enough: it packs every slice). No member ever waits to *enter* a slot.
//!
//! Scale: the only words written are the group's own (a slot word and `S`
//! slice words per panel, each written by the group's members only: `br`
//! of them, about `√P`); nothing every participant writes, no `O(P)` loop.
//! A waiter spins on a slice word that only its packer writes, then yields
//! the CPU (a packer descheduled on an oversubscribed machine gets it).
//!
//! `claims_models` (under `--cfg loom`) checks it with the buffer as loom
//! cells: every write of a slice and every read of the panel is checked for
//! races, and a reader checks it sees the panel it entered; each weakening
//! of the protocol (a `Relaxed` publication, a takeover that ignores
//! readers, a claim by load and store) fails there.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A value on a cache line of its own (two lines: adjacent-line prefetch).
#[repr(align(128))]
#[derive(Default)]
struct Line<T>(T);

/// Ways to break the protocol, for the models to show that they notice
/// (only tests set one; elsewhere [`Claims::weak`] is always false).
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum Weakening {
    /// The protocol as written.
    #[default]
    None,
    /// A packed slice is published with `Relaxed` instead of `Release`.
    RelaxedPublish,
    /// A slot is taken over for a newer panel even while it has readers.
    TakeOverReadSlot,
    /// A slice is claimed by a load and a store instead of a CAS.
    ClaimWithoutCas,
}

/// The slot and slice words of one column group's ring of panels.
pub(super) struct Claims {
    /// Per slot: `(panel + 1) << 32 | readers`.
    slots: Box<[Line<AtomicU64>]>,
    /// Per slot, `slices` words: 0, `2t + 1` (claimed) or `2t + 2` (packed).
    slices: Box<[Line<AtomicUsize>]>,
    /// Slices per panel.
    per_panel: usize,
    #[cfg(test)]
    pub(super) weakening: Weakening,
}

/// A member's hold on the slot of panel `t` (it leaves on drop).
pub(super) struct Entered<'c> {
    claims: &'c Claims,
    slot: usize,
    panel: usize,
}

const READER: u64 = 1;
const READERS: u64 = (1 << 32) - 1;

impl Claims {
    /// A ring of `slots` slots (at least 1) of panels cut into `per_panel`
    /// slices (at least 1).
    pub(super) fn new(slots: usize, per_panel: usize) -> Claims {
        let (slots, per_panel) = (slots.max(1), per_panel.max(1));
        Claims {
            slots: (0..slots).map(|_| Line::default()).collect(),
            slices: (0..slots * per_panel).map(|_| Line::default()).collect(),
            per_panel,
            #[cfg(test)]
            weakening: Weakening::None,
        }
    }

    /// Slots in the ring.
    #[cfg(test)]
    pub(super) fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Slices per panel.
    pub(super) fn per_panel(&self) -> usize {
        self.per_panel
    }

    /// Whether the test under way weakened the protocol in way `w`.
    #[inline(always)]
    fn weak(&self, w: Weakening) -> bool {
        #[cfg(test)]
        return self.weakening == w;
        #[cfg(not(test))]
        {
            let _ = w;
            false
        }
    }

    /// Enters panel `t`'s slot as a reader, taking the slot over when it
    /// holds an older panel nobody reads; `None` (never a wait) when the
    /// slot holds a newer panel or an older one still read.
    pub(super) fn enter(&self, t: usize) -> Option<Entered<'_>> {
        let slot = t % self.slots.len();
        let word = &self.slots[slot].0;
        let tag = t as u64 + 1;
        let mut cur = word.load(Ordering::Acquire);
        loop {
            let (held, readers) = (cur >> 32, cur & READERS);
            let take_over_read = self.weak(Weakening::TakeOverReadSlot);
            let next = if held == tag {
                cur + READER
            } else if held < tag && (readers == 0 || take_over_read) {
                tag << 32 | READER
            } else {
                return None;
            };
            match word.compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(Entered { claims: self, slot, panel: t }),
                Err(now) => cur = now,
            }
        }
    }
}

impl Entered<'_> {
    /// The ring slot of the entered panel.
    pub(super) fn slot(&self) -> usize {
        self.slot
    }

    /// Claims and packs (`pack(slice)`) every slice of the panel nobody has
    /// claimed, starting at `first` and wrapping round, then waits until
    /// every slice is packed (only for slices other readers claimed and are
    /// packing). Returns the slices this caller packed.
    pub(super) fn fill(&self, first: usize, mut pack: impl FnMut(usize)) -> usize {
        let c = self.claims;
        let n = c.per_panel;
        let words = &c.slices[self.slot * n..(self.slot + 1) * n];
        let (claimed, packed) = (2 * self.panel + 1, 2 * self.panel + 2);
        let mut mine = 0;
        for j in 0..n {
            let i = (first + j) % n;
            let w = &words[i].0;
            let seen = w.load(Ordering::Relaxed);
            if seen >= claimed {
                continue;
            }
            let won = if c.weak(Weakening::ClaimWithoutCas) {
                w.store(claimed, Ordering::Relaxed);
                true
            } else {
                w.compare_exchange(seen, claimed, Ordering::Relaxed, Ordering::Relaxed).is_ok()
            };
            if won {
                pack(i);
                let publish =
                    if c.weak(Weakening::RelaxedPublish) { Ordering::Relaxed } else { Ordering::Release };
                w.store(packed, publish);
                mine += 1;
            }
        }
        for w in words {
            let mut spins = 0u32;
            while w.0.load(Ordering::Acquire) != packed {
                relax(&mut spins);
            }
        }
        mine
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.claims.slots[self.slot].0.fetch_sub(READER, Ordering::Release);
    }
}

/// One step of waiting for a packer: spin a little, then give the CPU away
/// (the packer may be descheduled on an oversubscribed machine).
fn relax(spins: &mut u32) {
    #[cfg(loom)]
    {
        let _ = spins;
        loom::thread::yield_now();
    }
    #[cfg(not(loom))]
    {
        *spins += 1;
        if *spins < 128 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// One member alone packs every slice once; a second entering the same
    /// panel packs nothing; the slot is taken over for panel `t + R` only
    /// once both have left; a late member (slot already on a newer panel)
    /// and one that finds the slot read for an older panel get `None`.
    #[test]
    fn enter_fill_take_over_and_late() {
        let claims = Claims::new(2, 3);
        let a = claims.enter(0).expect("empty slot");
        let mut packed = Vec::new();
        assert_eq!(a.fill(1, |i| packed.push(i)), 3);
        assert_eq!(packed, [1, 2, 0]);
        let b = claims.enter(0).expect("same panel");
        assert_eq!(b.fill(0, |_| panic!("already packed")), 0);
        assert!(claims.enter(2).is_none(), "slot 0 still read for panel 0");
        drop((a, b));
        let c = claims.enter(2).expect("slot 0 free");
        assert_eq!(c.slot(), 0);
        assert!(claims.enter(0).is_none(), "late for panel 0");
        assert_eq!(c.fill(0, |_| {}), 3);
        let d = claims.enter(1).expect("slot 1 empty");
        assert_eq!(d.slot(), 1);
    }

    /// Threads entering the same panels at once: each slice is packed
    /// exactly once per panel, and every reader sees all of it packed.
    #[test]
    fn concurrent_members_pack_each_slice_once() {
        use std::sync::atomic::AtomicUsize;
        let claims = Claims::new(4, 8);
        let counts: Vec<AtomicUsize> = (0..4 * 8).map(|_| AtomicUsize::new(0)).collect();
        std::thread::scope(|s| {
            for m in 0..6 {
                let (claims, counts) = (&claims, &counts);
                s.spawn(move || {
                    for t in 0..4 {
                        let e = claims.enter(t).expect("every panel has its own slot");
                        e.fill(m, |i| {
                            counts[t * 8 + i].fetch_add(1, Ordering::Relaxed);
                        });
                        assert!((0..8).all(|i| counts[t * 8 + i].load(Ordering::Relaxed) == 1));
                    }
                });
            }
        });
        assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1));
    }
}

/// Loom models of the protocol: members enter, fill and read panels whose
/// slices are loom cells (a write races with any unsynchronised read or
/// write), holding the panel number they were packed for.
#[cfg(all(test, loom))]
mod claims_models {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    struct Ring {
        claims: Claims,
        /// Per slot, per slice: the panel packed there (+1).
        cells: Vec<UnsafeCell<usize>>,
    }

    /// `members` threads each walking `panels` panels through a ring of
    /// `slots` slots of `slices` slices.
    fn run(members: usize, panels: usize, slots: usize, slices: usize, weakening: Weakening) {
        // Three preemptions (loom's advice for bugs in practice) bound the
        // search of the spinning waits.
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(move || {
            let mut claims = Claims::new(slots, slices);
            claims.weakening = weakening;
            let cells = (0..slots * slices).map(|_| UnsafeCell::new(0)).collect();
            let ring = Arc::new(Ring { claims, cells });
            let handles: Vec<_> = (0..members)
                .map(|m| {
                    let ring = ring.clone();
                    loom::thread::spawn(move || {
                        for t in 0..panels {
                            let Some(e) = ring.claims.enter(t) else { continue };
                            let base = e.slot() * slices;
                            e.fill(m, |i| ring.cells[base + i].with_mut(|p| unsafe { *p = t + 1 }));
                            for i in 0..slices {
                                // SAFETY (model): loom reports the read if it races a write.
                                let seen = ring.cells[base + i].with(|p| unsafe { *p });
                                assert_eq!(seen, t + 1, "slice {i} of panel {t}");
                            }
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        });
    }

    #[test]
    fn two_members_share_one_panel() {
        run(2, 1, 1, 2, Weakening::None);
    }

    #[test]
    fn two_members_recycle_one_slot() {
        run(2, 2, 1, 1, Weakening::None);
    }

    #[test]
    #[should_panic(expected = "Causality violation")]
    fn relaxed_publish_fails() {
        run(2, 1, 1, 1, Weakening::RelaxedPublish);
    }

    #[test]
    #[should_panic(expected = "Causality violation")]
    fn take_over_of_a_read_slot_fails() {
        run(2, 2, 1, 1, Weakening::TakeOverReadSlot);
    }

    #[test]
    #[should_panic(expected = "Causality violation")]
    fn claim_without_cas_fails() {
        run(2, 1, 1, 1, Weakening::ClaimWithoutCas);
    }
}
