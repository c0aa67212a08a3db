//! Per-participant Chase–Lev deques (crossbeam-deque) for the schedulers
//! that keep one per worker (`ws`, `mts`): the owner end of each, touched
//! only by the thread occupying the slot, its stealer end for everyone, and
//! the occupant's random-number state for choosing victims.

use super::pending::Pending;
use super::JobRef;
use crossbeam_deque::{Steal, Stealer, Worker};
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
    /// The thieves' ends, by slot (steal through [`OwnedDeques::steal`]).
    pub(crate) stealers: Box<[Stealer<JobRef>]>,
    /// Steals that reached crossbeam's `steal` (and so pinned its epoch)
    /// and found the deque empty (see [`OwnedDeques::steal`]).
    #[cfg(all(test, not(loom)))]
    pub(crate) pinned_empty: std::sync::atomic::AtomicUsize,
    /// Deques looked at by [`OwnedDeques::steal`] and
    /// [`OwnedDeques::steal_batch_and_pop`].
    #[cfg(all(test, not(loom)))]
    pub(crate) probes: std::sync::atomic::AtomicUsize,
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
        OwnedDeques {
            own,
            stealers,
            #[cfg(all(test, not(loom)))]
            pinned_empty: std::sync::atomic::AtomicUsize::new(0),
            #[cfg(all(test, not(loom)))]
            probes: std::sync::atomic::AtomicUsize::new(0),
        }
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

    /// Whether a thief should look at `v`'s deque: its owner's count of
    /// queued jobs (`pending`) is not zero — one relaxed load of a line
    /// written only by pushes and pops, no fence. Under loom the deque
    /// itself (`is_empty`): the filter decides only whether a victim is
    /// looked at, never what a steal does, and the count's loads would
    /// multiply the models' interleavings many times over.
    #[inline]
    pub(crate) fn may_hold(&self, v: usize, pending: &Pending) -> bool {
        if cfg!(loom) {
            !self.stealers[v].is_empty()
        } else {
            !pending.none(v)
        }
    }

    /// Whether any deque may hold a job by [`OwnedDeques::may_hold`] (the
    /// pre-sleep check: a relaxed load per deque, not a fence).
    pub(crate) fn any_may_hold(&self, pending: &Pending) -> bool {
        (0..self.stealers.len()).any(|v| self.may_hold(v, pending))
    }

    /// One job from the top of `v`'s deque — as `Stealer::steal`, but an
    /// empty deque is seen without pinning crossbeam's epoch. `steal` pins
    /// it (a locked compare-exchange, a load of the global epoch), and every
    /// 128th pin of a thread scans every registered thread's epoch (a cache
    /// miss each, their owners write them at every pin) and may advance the
    /// global epoch, a line every pin reads: on the spin path of P idle
    /// participants, each trying P − 1 victims per look, that is O(P) misses
    /// per look and a line every core writes. `is_empty` is two loads and a
    /// fence, and pins nothing. (The schedulers look at a victim only when
    /// [`OwnedDeques::may_hold`] says so: an idle look at P − 1 empty
    /// victims costs P − 1 cached loads.)
    #[inline]
    pub(crate) fn steal(&self, v: usize) -> Steal<JobRef> {
        #[cfg(all(test, not(loom)))]
        self.probes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let s = &self.stealers[v];
        if s.is_empty() {
            return Steal::Empty;
        }
        let got = s.steal();
        #[cfg(all(test, not(loom)))]
        if got.is_empty() {
            self.pinned_empty.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        got
    }

    /// `steal_batch_with_limit_and_pop` from `v`'s deque into `dest`, with
    /// the same empty check first (see [`OwnedDeques::steal`]).
    #[inline]
    pub(crate) fn steal_batch_and_pop(&self, v: usize, dest: &Worker<JobRef>, limit: usize) -> Steal<JobRef> {
        #[cfg(all(test, not(loom)))]
        self.probes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let s = &self.stealers[v];
        if s.is_empty() {
            return Steal::Empty;
        }
        s.steal_batch_with_limit_and_pop(dest, limit)
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::OwnedDeques;
    use crate::sched::JobRef;
    use std::sync::atomic::Ordering;

    unsafe fn nothing(_: *const ()) {}

    /// Steals from empty deques — an idle participant's every look — never
    /// reach crossbeam's `steal` (which pins the epoch); a queued job is
    /// still stolen, by one steal or in a batch.
    #[test]
    fn empty_deques_are_seen_without_pinning() {
        let d = OwnedDeques::new(4);
        for _ in 0..1000 {
            for v in 0..4 {
                assert!(d.steal(v).is_empty());
            }
        }
        // SAFETY: this thread stands for every slot's occupant here.
        let (w0, w1) = unsafe { (d.local(0), d.local(1)) };
        for _ in 0..3 {
            // SAFETY: `nothing` reads no data.
            w0.push(unsafe { JobRef::new(std::ptr::null(), nothing) });
        }
        assert!(d.steal(0).is_success());
        assert!(d.steal_batch_and_pop(0, w1, 8).is_success());
        assert_eq!(w1.len() + w0.len(), 1, "one job left after a steal and a batch with its pop");
        assert_eq!(d.pinned_empty.load(Ordering::Relaxed), 0, "a steal pinned the epoch on an empty deque");
    }
}

#[cfg(all(test, not(loom)))]
mod look_cost {
    use super::OwnedDeques;
    use crate::sched::pending::Pending;

    /// What one idle look at 15 empty victims costs on one thread: through
    /// crossbeam's `steal` (an epoch pin each), `is_empty` (a fence each),
    /// or the owners' counts (a relaxed load each). Not a timed test: run
    /// with `--ignored --nocapture` to see the numbers.
    #[test]
    #[ignore]
    fn idle_look_cost() {
        let d = OwnedDeques::new(16);
        let p = Pending::new(16);
        let looks = 200_000;
        let time = |f: &dyn Fn() -> usize| {
            let t = std::time::Instant::now();
            let mut n = 0;
            for _ in 0..looks {
                n += f();
            }
            assert_eq!(n, 0);
            t.elapsed().as_nanos() as f64 / looks as f64
        };
        for _ in 0..3 {
            let pin = time(&|| (1..16).filter(|&v| d.stealers[v].steal().is_success()).count());
            let fence = time(&|| (1..16).filter(|&v| !d.stealers[v].is_empty()).count());
            let count = time(&|| (1..16).filter(|&v| !p.none(v)).count());
            eprintln!("ns per look at 15 victims: steal {pin:.1}, is_empty {fence:.1}, counts {count:.1}");
        }
    }
}
