//! The synchronisation types of herd-mpi's hand-off protocols: from `std`, or from loom
//! under `--cfg loom` so that [`Pending`](crate::Pending)'s completion can be model-checked
//! (`make test-loom`; the model is in `comm/pending.rs`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::AtomicBool;
#[cfg(loom)]
pub(crate) use loom::sync::Mutex;
#[cfg(loom)]
pub(crate) use loom::thread::{current, Thread};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::AtomicBool;
pub(crate) use std::sync::atomic::Ordering;
#[cfg(not(loom))]
pub(crate) use std::sync::Mutex;
#[cfg(not(loom))]
pub(crate) use std::thread::{current, Thread};

/// Parks the calling thread for at most `d` (loom has no timed park: a plain park, which
/// the model's unpark must then end).
#[cfg(not(loom))]
pub(crate) fn park_for(d: std::time::Duration) {
    std::thread::park_timeout(d)
}
#[cfg(loom)]
pub(crate) fn park_for(_d: std::time::Duration) {
    loom::thread::park()
}

/// Spins before parking: a completion usually follows within microseconds; loom explores
/// the park path only.
#[cfg(not(loom))]
pub(crate) const SPINS: u32 = 2000;
#[cfg(loom)]
pub(crate) const SPINS: u32 = 0;
