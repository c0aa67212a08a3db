//! Waiting and atomics of the team protocols, swappable for loom's so that
//! the barrier and the worksharing ring can be model-checked
//! (`RUSTFLAGS="--cfg loom" cargo test -p herd-omp --lib -- loom`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64, AtomicUsize};

/// Waits until `done(_)` holds, as a herd participant (running tasks
/// meanwhile; see `herd::rt::wait_until` for the contract on `done(true)`).
#[cfg(not(loom))]
#[inline]
pub(crate) fn until(done: impl Fn(bool) -> bool) {
    herd::rt::wait_until(done)
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
