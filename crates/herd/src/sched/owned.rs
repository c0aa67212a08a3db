//! Per-participant Chase–Lev deques (crossbeam-deque) for the schedulers
//! that keep one per worker (`ws`, `mts`): the owner end of each, touched
//! only by the thread occupying the slot, its stealer end for everyone, and
//! the occupant's random-number state for choosing victims.

use super::JobRef;
use crossbeam_deque::{Stealer, Worker};
use crossbeam_utils::CachePadded;
use std::cell::{Cell, UnsafeCell};

/// What only the occupant of a slot touches.
struct Own {
    deque: UnsafeCell<Worker<JobRef>>,
    rng: Cell<u64>,
}

/// One deque per participant slot; see the module documentation.
pub(crate) struct OwnedDeques {
    own: Box<[CachePadded<Own>]>,
    /// The thieves' ends, by slot.
    pub(crate) stealers: Box<[Stealer<JobRef>]>,
}

// SAFETY: `own[i]` is only accessed by the single thread occupying slot `i`
// (enforced by the pool: persistent workers own their slot, slot 0 is taken
// under the master lock, launch-and-join threads borrow slots of a region the
// master holds); the stealers are Sync.
unsafe impl Sync for OwnedDeques {}

impl OwnedDeques {
    pub(crate) fn new(n: usize) -> OwnedDeques {
        let deques: Vec<Worker<JobRef>> = (0..n).map(|_| Worker::new_lifo()).collect();
        let stealers = deques.iter().map(|w| w.stealer()).collect();
        let own = deques
            .into_iter()
            .enumerate()
            .map(|(i, d)| {
                let seed = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 1);
                CachePadded::new(Own { deque: UnsafeCell::new(d), rng: Cell::new(seed | 1) })
            })
            .collect();
        OwnedDeques { own, stealers }
    }

    /// The occupant's state.
    ///
    /// # Safety
    /// The caller occupies `slot`.
    #[inline]
    unsafe fn own(&self, slot: usize) -> &Own {
        debug_assert!(slot < self.own.len());
        // SAFETY: slots are always `< own.len()` (one per participant).
        unsafe { self.own.get_unchecked(slot) }
    }

    /// The occupant's deque (owner end).
    ///
    /// # Safety
    /// The caller occupies `slot`.
    #[inline]
    pub(crate) unsafe fn local(&self, slot: usize) -> &Worker<JobRef> {
        // SAFETY: the caller occupies `slot` (see the Sync impl).
        unsafe { &*self.own(slot).deque.get() }
    }

    /// A random index below `n` (xorshift on the occupant's state).
    ///
    /// # Safety
    /// The caller occupies `slot`.
    pub(crate) unsafe fn random_below(&self, slot: usize, n: usize) -> usize {
        // SAFETY: the caller occupies `slot`.
        let rng = unsafe { &self.own(slot).rng };
        let mut x = rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rng.set(x);
        (x % n as u64) as usize
    }
}
