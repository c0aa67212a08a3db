//! The blocking layer of lightweight threads, full/empty bits and barriers:
//! one waiter protocol (`waiter.rs`) for the three kinds of party that
//! block — a lightweight thread (suspends, freeing its worker), a pool
//! participant (waits in the idle loop, running jobs) and any other thread
//! (parks) — and the two objects built on it, [`Feb`] and [`Barrier`].
//! It sits above the pool (a waiter names the participant it wakes) and
//! beside `ult/` (which suspends and re-queues lightweight threads); the
//! primitives it uses (`sync::Parker`) know nothing of either.

pub(crate) mod barrier;
pub(crate) mod feb;
pub(crate) mod waiter;

pub use barrier::Barrier;
pub use feb::Feb;
