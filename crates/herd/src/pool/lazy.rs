//! Each participant's stack of `join` continuations not yet made stealable.
//!
//! `join(a, b)` on a participant records `b` here (a [`JobRef`] to the
//! `StackJob` on its frame) and runs `a`. Only when none of the jobs this
//! participant queued is still waiting (`sched::Pending`: its last exposed
//! job was stolen, or it has none), or while some participant sleeps and
//! fewer than a few are (`join.rs`), does a join make work stealable, and then
//! it exposes the **oldest** recorded continuation — the `b` of the
//! shallowest join still running `a`, the largest piece of the tree this
//! participant holds — not its own, newest one. When `a` returns, the join
//! takes its entry back: not exposed, `b` runs inline like a plain call;
//! exposed, the join reclaims it from the queue or waits for the thief.
//!
//! Why this is herd's own code (lazy task creation, Mohr, Kranz and
//! Halstead 1991, with the owner promoting its oldest continuation): the
//! earlier rule, push `b` only when nothing of ours is queued (lazy binary
//! splitting), keeps fine-grained recursion near serial speed, but with many
//! idle thieves every exposed job is stolen at once, and the next join to
//! expose one is wherever the owner happens to be — deep in the recursion,
//! a tiny job — while the large continuations it passed on the way down are
//! run inline by the owner alone. On a 16-core node fib(30) then took
//! 12.7-16.1 ms on 16 workers against 3.9-5.0 ms on one (Rayon on 16:
//! 1.8-2.2 ms; BENCHMARKS.md). Exposing the oldest
//! entry gives thieves what Rayon's always-push deque gives them (the
//! shallowest pending `b`) while a join that exposes nothing costs a few
//! stores to this participant's own line, no fence.
//!
//! Only the occupant of the slot touches its stack, and entries are LIFO:
//! a join's entry is taken back before the join returns (its frame, where
//! the job lives, outlives the entry), also when `a` panics (caught). Jobs
//! the occupant runs while it waits for a stolen `b` nest inside that frame
//! and pop their own entries first. Lightweight threads break the nesting
//! (one may suspend inside `a` and resume on another worker), so a worker
//! turns recording off while it runs one ([`LazyOff`]); joins inside it use
//! plain lazy splitting. At most [`CAPACITY`] joins deep are recorded (the
//! depth is a thread-local, reset per occupancy);
//! deeper joins split lazily too, exposing an older entry first if one is
//! left.

use crate::sched::JobRef;
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;

/// How many joins deep a participant records. The oldest entries are the
/// ones exposed, so a bound costs little: a binary tree's joins more than 12
/// deep (all but 2^12 per stolen subtree) skip recording and its few stores,
/// and split lazily; their continuations are small. Measured: with 16, fib(30)
/// on 2 participants took 2.2 ms against 1.7 with 12 or 8 on the 2-core
/// development VM (the 2^16 recorded joins per subtree cost), and 4.3 ms
/// against 1.8 (the old lazy splitting) on the 16-core device at 2 threads.
/// The 16-core results in BENCHMARKS.md were taken with 16; 12 is not yet
/// measured there.
pub(crate) const CAPACITY: usize = 12;

/// One participant's continuation stack; see the module documentation.
pub(crate) struct LazyJoins {
    entries: UnsafeCell<[MaybeUninit<JobRef>; CAPACITY]>,
    /// Entries `0..top` are live.
    top: Cell<u32>,
    /// Entries `0..exposed` were queued (made stealable).
    exposed: Cell<u32>,
}

// SAFETY: a `LazyJoins` is reached only through `Registry::lazy(slot)` by the
// thread occupying `slot` (persistent workers own their slot; a master or a
// launch-and-join thread borrows it for an occupancy, during which nobody
// else runs as that slot), so no two threads touch one at a time.
unsafe impl Sync for LazyJoins {}

impl Default for LazyJoins {
    fn default() -> Self {
        LazyJoins {
            entries: UnsafeCell::new([MaybeUninit::uninit(); CAPACITY]),
            top: Cell::new(0),
            exposed: Cell::new(0),
        }
    }
}

impl LazyJoins {
    /// Records `job` as the newest continuation and returns its index.
    /// Only after [`LazyJoins::recording`] said yes.
    #[inline]
    pub(crate) fn record(&self, job: JobRef) -> u32 {
        let top = self.top.get();
        assert!((top as usize) < CAPACITY, "join continuation recorded on a full stack");
        // SAFETY: only the occupant accesses the array (see the Sync impl),
        // and `top < CAPACITY`.
        unsafe { (*self.entries.get())[top as usize] = MaybeUninit::new(job) };
        self.top.set(top + 1);
        top
    }

    /// The oldest continuation not yet exposed, now counted as exposed (the
    /// caller queues it).
    #[inline]
    pub(crate) fn expose_oldest(&self) -> Option<JobRef> {
        let e = self.exposed.get();
        if e >= self.top.get() {
            return None;
        }
        self.exposed.set(e + 1);
        // SAFETY: `e < top`: entry `e` was written by `record` and not popped.
        Some(unsafe { (*self.entries.get())[e as usize].assume_init() })
    }

    /// Takes back entry `index`, the newest (its join's `a` returned), and
    /// tells whether it was exposed.
    #[inline]
    pub(crate) fn pop(&self, index: u32) -> bool {
        debug_assert_eq!(index + 1, self.top.get(), "join continuations popped out of order");
        self.top.set(index);
        if index < self.exposed.get() {
            self.exposed.set(index);
            true
        } else {
            false
        }
    }

    /// How many of the live entries were exposed.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn exposed(&self) -> u32 {
        self.exposed.get()
    }

    /// No entry is live.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_empty(&self) -> bool {
        self.top.get() == 0
    }
}

thread_local! {
    /// How many recorded joins the calling thread is inside, in its current
    /// occupancy (running their `a` or `b`); [`OFF`] while it runs a
    /// lightweight thread. A thread-local next to the pool's `CURRENT`
    /// rather than a field of the slot: every `join` reads it, and this
    /// costs one load from a line the thread has just read.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// The depth that turns recording off (see [`LazyOff`]).
const OFF: u32 = u32::MAX / 2;

/// True when a join may record its continuation: recording is on and the
/// calling thread is fewer than [`CAPACITY`] recorded joins deep (a tree's
/// depth, counting joins whose `b` runs inline too, so that the deep joins,
/// most of a binary tree, skip recording).
#[inline]
pub(crate) fn recording() -> bool {
    DEPTH.with(|d| d.get()) < CAPACITY as u32
}

/// Counts the caller one recorded join deeper until the guard drops.
#[inline]
pub(crate) fn descend() -> Descent {
    DEPTH.with(|d| d.set(d.get() + 1));
    Descent(())
}

/// One level of recorded-join depth (see [`descend`]).
pub(crate) struct Descent(());

impl Drop for Descent {
    #[inline]
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// Sets the calling thread's depth to `depth` and returns the previous one
/// (an occupancy of another slot starts at 0 and restores the old depth
/// when it ends).
pub(crate) fn swap_depth(depth: u32) -> u32 {
    DEPTH.with(|d| d.replace(depth))
}

/// Turns recording off on the calling thread while it runs a lightweight
/// thread (see the module documentation); restored when dropped.
struct LazyOff {
    prev: u32,
}

impl LazyOff {
    fn new() -> LazyOff {
        LazyOff { prev: swap_depth(OFF) }
    }
}

impl Drop for LazyOff {
    fn drop(&mut self) {
        swap_depth(self.prev);
    }
}

/// Runs `f` (a lightweight thread's resumption) with continuation recording
/// off on the calling thread.
pub(crate) fn without_lazy_joins<R>(f: impl FnOnce() -> R) -> R {
    let _off = LazyOff::new();
    f()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    unsafe fn nop(_: *const ()) {}

    fn job(i: usize) -> JobRef {
        // SAFETY: never executed.
        unsafe { JobRef::new(i as *const (), nop) }
    }

    #[test]
    fn exposes_oldest_first_and_pops_lifo() {
        let l = LazyJoins::default();
        let (a, b, c) = (job(8), job(16), job(24));
        assert_eq!(l.record(a), 0);
        assert_eq!(l.record(b), 1);
        assert_eq!(l.expose_oldest(), Some(a), "the shallowest continuation first");
        assert_eq!(l.record(c), 2);
        assert_eq!(l.expose_oldest(), Some(b));
        assert!(!l.pop(2), "c was never exposed");
        assert!(l.pop(1), "b was exposed");
        assert_eq!(l.expose_oldest(), None, "a is exposed, nothing else is live");
        assert!(l.pop(0));
        assert!(l.is_empty());
        assert_eq!(l.expose_oldest(), None);
    }

    #[test]
    fn depth_bounds_recording_and_off_stops_it() {
        let prev = swap_depth(0);
        let mut levels = Vec::new();
        for _ in 0..CAPACITY {
            assert!(recording());
            levels.push(descend());
        }
        assert!(!recording(), "CAPACITY joins deep");
        levels.pop();
        assert!(recording());
        {
            let _off = LazyOff::new();
            assert!(!recording(), "off while a lightweight thread runs");
        }
        assert!(recording(), "on again");
        levels.clear();
        swap_depth(prev);
    }
}
