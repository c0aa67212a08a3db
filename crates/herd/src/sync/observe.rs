//! The read a waiter's condition is made of: one primitive for the
//! conditional-wake rule (see `sync/README.md`).
//!
//! A waiter checks its condition cheaply while it spins (an `Acquire` load)
//! and, once it has announced `SLEEPING` on its parker, one last time with a
//! `SeqCst` read-modify-write ([`Observe::observe`] with `last = true`). A
//! waker that made the condition true with a `SeqCst` read-modify-write may
//! then wake it only if it sleeps ([`Parker::unpark_if_sleeping`]): of the
//! two read-modify-writes on the condition word one comes first, and either
//! the waiter's last check sees the condition or the waker sees `SLEEPING`.
//!
//! [`Parker::unpark_if_sleeping`]: super::Parker::unpark_if_sleeping

use std::sync::atomic::Ordering;

/// Reading a word a waiter's condition depends on; see the module documentation.
pub trait Observe {
    /// The word's value type.
    type Value;
    /// An `Acquire` load, or (`last`: the check before sleeping) a `SeqCst`
    /// read-modify-write that changes nothing.
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
    std::sync::atomic::AtomicU8 => u8,
    std::sync::atomic::AtomicU32 => u32,
    std::sync::atomic::AtomicU64 => u64,
    std::sync::atomic::AtomicUsize => usize
);
#[cfg(loom)]
observe!(
    loom::sync::atomic::AtomicU8 => u8,
    loom::sync::atomic::AtomicU32 => u32,
    loom::sync::atomic::AtomicU64 => u64,
    loom::sync::atomic::AtomicUsize => usize
);
#[cfg(shuttle)]
observe!(
    shuttle::sync::atomic::AtomicU8 => u8,
    shuttle::sync::atomic::AtomicU32 => u32,
    shuttle::sync::atomic::AtomicU64 => u64,
    shuttle::sync::atomic::AtomicUsize => usize
);
