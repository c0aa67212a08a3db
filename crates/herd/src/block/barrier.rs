//! A barrier of software threads: lightweight threads and OS threads, in
//! any mix.
//!
//! **Protocol.** Under one lock, a count of arrivals in the current phase and
//! the list of parties waiting in it, each a record on its own stack holding
//! its [`Waiter`] (`block::waiter`). An arrival that is not the last queues its
//! record and blocks (a lightweight thread suspends, freeing its worker; an OS
//! thread waits or parks). The last arrival resets the count (starting the
//! next phase), takes the whole list, releases the lock and wakes every
//! record once, reading each one's link before waking it. Reuse across phases
//! needs no generation counter: a party released from phase `k` that arrives
//! again is counted in phase `k + 1` because the count was reset, and the
//! phase-`k` list it left can no longer be reached by anyone but the leader
//! that took it.

use crate::block::waiter::Waiter;
use std::cell::Cell;
use std::ptr;
use std::sync::Mutex;

/// A reusable barrier for `n` participants, which may be lightweight threads
/// (they suspend while waiting, freeing their worker, so `n` lightweight
/// threads on fewer workers pass it) or OS threads, in any mix. Each phase
/// releases all `n` arrivals and the next `n` arrivals form the next phase.
///
/// ```
/// use std::sync::Arc;
/// let b = Arc::new(herd::Barrier::new(3));
/// let hs: Vec<_> = (0..3)
///     .map(|_| {
///         let b = b.clone();
///         herd::ult::spawn(move || (0..4).filter(|_| b.wait()).count())
///     })
///     .collect();
/// let leaders: usize = hs.into_iter().map(|h| h.join().unwrap()).sum();
/// assert_eq!(leaders, 4); // one leader per phase
/// ```
pub struct Barrier {
    n: usize,
    state: Mutex<State>,
}

struct State {
    arrived: usize,
    waiting: *const Node,
}

/// A waiting party's record, on its stack.
struct Node {
    waiter: Waiter,
    next: Cell<*const Node>,
}

// SAFETY: the list of records is only touched under the lock, and each
// record stays alive until its owner is woken.
unsafe impl Send for Barrier {}
// SAFETY: as above.
unsafe impl Sync for Barrier {}

impl Barrier {
    /// A barrier for `n` participants (`0` behaves as `1`).
    pub fn new(n: usize) -> Barrier {
        Barrier { n: n.max(1), state: Mutex::new(State { arrived: 0, waiting: ptr::null() }) }
    }

    /// The number of participants per phase.
    pub fn participants(&self) -> usize {
        self.n
    }

    /// Waits until all `n` participants of the current phase have arrived.
    /// Returns `true` for exactly one of them (the last to arrive).
    pub fn wait(&self) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.arrived += 1;
        if st.arrived == self.n {
            st.arrived = 0;
            let mut node = std::mem::replace(&mut st.waiting, ptr::null());
            drop(st);
            while !node.is_null() {
                // SAFETY: a listed record is alive until woken; its link is
                // read before the wake, after which its owner may return.
                unsafe {
                    let next = (*node).next.get();
                    Waiter::wake(&(*node).waiter);
                    node = next;
                }
            }
            return true;
        }
        let node = Node { waiter: Waiter::current(), next: Cell::new(st.waiting) };
        st.waiting = &node;
        drop(st);
        node.waiter.wait();
        false
    }
}

impl std::fmt::Debug for Barrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Barrier").field("participants", &self.n).finish()
    }
}
