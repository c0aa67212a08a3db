//! Who has what queued: per participant slot, the number of jobs it pushed
//! that are still waiting in some queue.
//!
//! `join` splits lazily on "none of my jobs is still queued"
//! (`Pending::none`), the same test for every scheduler, read from the
//! worker's own cache line without dispatching on the scheduler. The pusher
//! increments its count; whoever removes a job — the pusher popping it back,
//! a sibling popping a shared queue, a thief stealing it, a remote steal
//! moving it — decrements the pusher's count (relaxed: the count is a hint
//! for when to split, never a condition anyone waits on). Under `ws` this is
//! exactly "my deque is empty"; under the shared queues each queued job
//! carries its pusher's slot. (Reading a shared queue's length on every join
//! instead made fine-grained trees up to 2x slower than `ws`.)

use crate::sync::atomic::{AtomicU32, Ordering};
use crossbeam_utils::CachePadded;

/// No pushing slot (a job from outside the pool).
pub(crate) const NO_SLOT: u32 = u32::MAX;

#[cfg(all(test, not(loom)))]
thread_local! {
    /// Counts read by this thread (tests only: what a path costs in P).
    static READS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The counts the calling thread has read so far (tests only).
#[cfg(all(test, not(loom)))]
pub(crate) fn reads() -> u64 {
    READS.get()
}

/// Per slot, its jobs still queued; see the module documentation.
pub(crate) struct Pending {
    slots: Box<[CachePadded<AtomicU32>]>,
}

impl Pending {
    pub(crate) fn new(n: usize) -> Pending {
        Pending { slots: (0..n).map(|_| CachePadded::new(AtomicU32::new(0))).collect() }
    }

    /// True when none of `slot`'s jobs is queued.
    #[inline]
    pub(crate) fn none(&self, slot: usize) -> bool {
        self.count(slot) == 0
    }

    /// How many of `slot`'s jobs are queued.
    #[inline]
    pub(crate) fn count(&self, slot: usize) -> u32 {
        #[cfg(all(test, not(loom)))]
        READS.set(READS.get() + 1);
        self.slots[slot].load(Ordering::Relaxed)
    }

    #[inline]
    pub(crate) fn add(&self, owner: u32) {
        if owner != NO_SLOT {
            self.slots[owner as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `n` jobs of `from` now sit in `to`'s queue (a bulk steal).
    #[inline]
    pub(crate) fn moved(&self, from: u32, to: u32, n: u32) {
        if n > 0 {
            if from != NO_SLOT {
                self.slots[from as usize].fetch_sub(n, Ordering::Relaxed);
            }
            if to != NO_SLOT {
                self.slots[to as usize].fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    #[inline]
    pub(crate) fn sub(&self, owner: u32) {
        if owner != NO_SLOT {
            self.slots[owner as usize].fetch_sub(1, Ordering::Relaxed);
        }
    }
}
