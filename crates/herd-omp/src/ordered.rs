//! Passing an ordered loop's turn to the one member waiting for it.
//!
//! The turn is an iteration index (`ws.rs`): the member holding chunk
//! `[a, b)` waits for `turn == a`, and on finishing the chunk sets
//! `turn = b`. The first version then woke every sleeping member of the
//! team (`Team::wake_all`): in an ordered loop whose members sleep while
//! they wait (long bodies, or `OMP_WAIT_POLICY=passive`), every turn cost
//! up to `n − 1` wake-ups by the passer, on the loop's critical path, and
//! all but one of the woken went back to sleep. libgomp posts the one
//! waiting thread's semaphore; so does this, without a queue of members.
//!
//! **Who waits for which turn.** Chunks are handed out and finished in
//! increasing order, and a member takes its next chunk only after
//! finishing the last, so the chunks taken and not finished are at most `n`
//! consecutive ones. Numbered by `a / chunk` (static with a chunk,
//! dynamic), their numbers modulo `n` are distinct; for a static loop of
//! one block per member the block's owner is the key. So a waiter about to
//! sleep registers in slot `key(a)` of an `n`-word table — one word holding
//! `a + 1` and its member number — and the passer, after setting the turn
//! to `b`, loads slot `key(b)` and wakes the member it names if it waits
//! for `b`. Guided chunks have no fixed grid: two waiters may want one slot.
//! The second then sets `broadcast`, and from then on every pass of that
//! loop wakes the team as before (correct, only slower).
//!
//! **No lost wake-up.** The waiter registers with a `SeqCst`
//! read-modify-write (a compare-exchange of its slot, or the swap of
//! `broadcast`) *before* its last check, which reads the turn with a
//! `SeqCst` read-modify-write (`Observe`); the passer sets the turn with a
//! `SeqCst` swap *before* it loads the slot and `broadcast` (`SeqCst`). In
//! the single total order of these operations either the waiter's check
//! comes after the passer's swap (it reads `b` and does not sleep), or its
//! registration comes before the passer's loads (the passer wakes it). The
//! wake is `Team::wake` (a load of the member's parker when it does not
//! sleep). The loom model `loom_models::ordered_turns_wake_their_waiter`
//! checks it; weakened (`HERD_OMP_WEAKEN=ordered-nowake`: the passer wakes
//! nobody) loom reports the sleeping member's deadlock.
//!
//! **Cost.** The pass's fast path is one load of one word of the table (a
//! line written only by members about to sleep) and one of `broadcast`;
//! the wait's fast path is unchanged (no registration unless it sleeps).

use crate::team::Team;
use crate::wait::{self, AtomicU32, AtomicU64, Observe};
use std::cell::Cell;
use std::sync::atomic::Ordering;

/// Bits of a table word that hold the member number.
const MEMBER_BITS: u32 = 16;

/// The registrations of one worksharing entry's ordered waiters.
pub(crate) struct TurnWaiters {
    /// Per key: `(a + 1) << MEMBER_BITS | member` of the member waiting for
    /// turn `a`, or 0.
    slots: Box<[AtomicU64]>,
    /// Nonzero once a registration found its slot taken (or could not be
    /// packed): every pass of this loop wakes the team.
    broadcast: AtomicU32,
}

impl TurnWaiters {
    /// The table of a team of `n` members.
    pub(crate) fn new(n: usize) -> TurnWaiters {
        TurnWaiters {
            slots: (0..n.max(1)).map(|_| AtomicU64::new(0)).collect(),
            broadcast: AtomicU32::new(0),
        }
    }

    /// For the initialiser of a new loop (before it publishes the entry):
    /// back to "every pass wakes its one waiter". The slots are already
    /// empty: every waiter takes its registration back before it leaves its
    /// wait.
    pub(crate) fn reset(&self) {
        self.broadcast.store(0, Ordering::Relaxed);
    }

    /// Member `me` waits until `turn == a`; `key` is `a`'s slot (see the
    /// module documentation).
    pub(crate) fn wait(&self, turn: &AtomicU64, a: u64, key: usize, me: usize) {
        let registered: Cell<Option<(usize, u64)>> = Cell::new(None);
        let broadcast = Cell::new(false);
        wait::until_without_tasks(|last| {
            if last && registered.get().is_none() && !broadcast.get() {
                match self.register(a, key, me) {
                    Some(word) => registered.set(Some((key, word))),
                    None => broadcast.set(true),
                }
            }
            turn.observe(last) == a
        });
        if let Some((key, word)) = registered.get() {
            // Only this member writes a word naming it; a failure means
            // nothing to undo.
            let _ = self.slots[key].compare_exchange(word, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// Registers `me` as the waiter for turn `a` in slot `key`: the word
    /// written, or `None` after falling back to `broadcast`.
    fn register(&self, a: u64, key: usize, me: usize) -> Option<u64> {
        let word = a
            .checked_add(1)
            .filter(|&v| v < 1 << (64 - MEMBER_BITS) && me < 1 << MEMBER_BITS)
            .map(|v| v << MEMBER_BITS | me as u64);
        if let Some(word) = word {
            if self.slots[key].compare_exchange(0, word, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                return Some(word);
            }
        }
        self.broadcast.swap(1, Ordering::SeqCst);
        None
    }

    /// After the caller finished its chunk, which sets `turn = b`: wakes
    /// the member waiting for `b` (slot `key`), or the team after a
    /// fallback.
    pub(crate) fn pass(&self, team: &Team, turn: &AtomicU64, b: u64, key: usize) {
        turn.swap(b, Ordering::SeqCst);
        if wait::weakened("ordered-nowake") {
            return;
        }
        let word = self.slots[key].load(Ordering::SeqCst);
        if word != 0 && word >> MEMBER_BITS == b.wrapping_add(1) {
            team.wake((word & ((1 << MEMBER_BITS) - 1)) as usize);
        }
        if self.broadcast.load(Ordering::SeqCst) != 0 {
            team.wake_all();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::TurnWaiters;

    /// Registrations pack the turn and the member; a taken slot falls back
    /// to broadcasting, and so does a turn too large to pack.
    #[test]
    fn registration_and_fallback() {
        let t = TurnWaiters::new(4);
        let w = t.register(6, 2, 3).expect("an empty slot");
        assert_eq!(w, 7 << 16 | 3);
        assert_eq!(t.broadcast.load(std::sync::atomic::Ordering::Relaxed), 0);
        assert!(t.register(10, 2, 1).is_none(), "slot 2 is taken");
        assert_eq!(t.broadcast.load(std::sync::atomic::Ordering::Relaxed), 1);
        t.reset();
        assert!(t.register(u64::MAX - 1, 0, 0).is_none(), "too large to pack");
        assert!(t.register(5, 1, 1 << 16).is_none(), "member number too large to pack");
    }
}
