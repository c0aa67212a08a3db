//! The synchronisation types of herd-flow: from `std`, or from loom under `--cfg loom` so that
//! the protocols of [`ready`](crate::ready) and [`items`](crate::items) can be model-checked
//! (`make test-loom`; the models are in `src/models.rs`).
//!
//! `Arc` stays `std`'s in both cases: loom's cannot hold unsized values (`Arc<dyn …>`), and
//! reference counts are not part of the protocols checked.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
pub(crate) use std::sync::atomic::Ordering;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning: every critical section of herd-flow leaves its data
/// consistent before anything that can panic (user code never runs under a lock).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
