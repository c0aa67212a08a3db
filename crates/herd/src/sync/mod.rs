//! Synchronisation primitives of the runtime: the per-thread [`Parker`]
//! (spin-then-futex sleep with no lost wake-ups) and the latches that regions,
//! joins and scopes wait on.
//!
//! Under `--cfg loom` the atomics come from loom so that the protocols can be
//! model-checked (see `model` in each file); under `--cfg shuttle` from
//! shuttle, whose randomized schedulers reach models too large for loom's
//! exhaustive search (more threads, more wakers: `shuttle_model`s).

mod cascade;
pub(crate) mod latch;
mod observe;
mod parked;
mod parker;
mod sleepers;

pub(crate) use cascade::Cascade;
pub(crate) use latch::{CountLatch, LockLatch, SetLatch};
pub use observe::Observe;
pub(crate) use parked::Parked;
pub(crate) use parker::Parker;
#[cfg(all(test, not(loom)))]
pub(crate) use sleepers::counted;
pub(crate) use sleepers::Sleepers;

#[cfg(loom)]
pub(crate) use loom::sync::atomic;
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(shuttle)]
pub(crate) use shuttle::sync::atomic;
#[cfg(shuttle)]
pub(crate) use shuttle::sync::{Mutex, MutexGuard};
#[cfg(not(any(loom, shuttle)))]
pub(crate) use std::sync::atomic;
#[cfg(not(any(loom, shuttle)))]
pub(crate) use std::sync::{Mutex, MutexGuard};
