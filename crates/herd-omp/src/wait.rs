//! Waiting and atomics of the team protocols, swappable for loom's so that
//! the barrier and the worksharing ring can be model-checked
//! (`RUSTFLAGS="--cfg loom" cargo test -p herd-omp --lib -- loom`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64, AtomicUsize};
use std::sync::atomic::Ordering;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64, AtomicUsize};

/// Waits until `done(_)` holds, as a herd participant (running tasks
/// meanwhile; see `herd::rt::wait_until` for the contract on `done(true)`).
/// A condition that already holds costs one cheap check.
#[cfg(not(loom))]
#[inline]
pub(crate) fn until(done: impl Fn(bool) -> bool) {
    if !done(false) {
        herd::rt::wait_until(done)
    }
}

/// Under loom: re-check and yield. Nothing sleeps here, so the cheap form
/// of the check suffices (the sleep/wake side of the protocol is herd's,
/// model-checked in `herd::sync::parker`).
#[cfg(loom)]
pub(crate) fn until(done: impl Fn(bool) -> bool) {
    while !done(false) {
        loom::thread::yield_now();
    }
}

/// Reading a word a waiter's condition depends on: an `Acquire` load while
/// spinning, a `SeqCst` read-modify-write for the last check before sleeping
/// (`last`), as `herd::rt::wait_until` requires.
pub(crate) trait Observe {
    type Value;
    fn observe(&self, last: bool) -> Self::Value;
}

macro_rules! observe {
    ($($atomic:ty => $value:ty),*) => {$(
        impl Observe for $atomic {
            type Value = $value;
            #[inline]
            fn observe(&self, last: bool) -> $value {
                if last {
                    self.fetch_add(0, Ordering::SeqCst)
                } else {
                    self.load(Ordering::Acquire)
                }
            }
        }
    )*};
}

observe!(
    std::sync::atomic::AtomicU32 => u32,
    std::sync::atomic::AtomicU64 => u64,
    std::sync::atomic::AtomicUsize => usize
);
#[cfg(loom)]
observe!(AtomicU32 => u32, AtomicU64 => u64, AtomicUsize => usize);
