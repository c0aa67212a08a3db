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
/// A model checker's yield: where a modelled thread waits for another.
#[cfg(loom)]
pub(crate) fn model_yield() {
    loom::thread::yield_now();
}

/// A model checker's yield: where a modelled thread waits for another.
#[cfg(shuttle)]
pub(crate) fn model_yield() {
    shuttle::thread::yield_now();
}

/// Runs `model` under shuttle's random scheduler and then its PCT scheduler
/// (depth 3), `iterations` schedules each; a schedule longer than `steps`
/// fails (a sleeper nobody wakes yields for ever).
#[cfg(all(test, shuttle))]
pub(crate) fn shuttle_check(iterations: usize, steps: usize, model: impl Fn() + Send + Sync + 'static) {
    let model = std::sync::Arc::new(model);
    let mut config = shuttle::Config::new();
    config.max_steps = shuttle::MaxSteps::FailAfter(steps);
    let m = model.clone();
    shuttle::Runner::new(shuttle::scheduler::RandomScheduler::new(iterations), config.clone())
        .run(move || m());
    shuttle::Runner::new(shuttle::scheduler::PctScheduler::new(3, iterations), config).run(move || model());
}

#[cfg(not(any(loom, shuttle)))]
pub(crate) use std::sync::atomic;
#[cfg(not(any(loom, shuttle)))]
pub(crate) use std::sync::{Mutex, MutexGuard};
