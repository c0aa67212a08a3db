//! Waiting and atomics of the team protocols, swappable for loom's so that
//! the barrier and the worksharing ring can be model-checked
//! (`RUSTFLAGS="--cfg loom" cargo test -p herd-omp --lib -- loom`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64};
#[cfg(loom)]
use std::cell::RefCell;
#[cfg(loom)]
use std::sync::atomic::Ordering;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64};

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

/// Waits until `done(_)` holds without running any task: for the waits
/// that are not task scheduling points (OpenMP 5.2 §12.9: a doacross sink,
/// an `ordered` turn, a worksharing construct's entry), where starting a
/// task would run it inside the waiting code — e.g. a task another member
/// created, on a thread that is in the middle of an ordered iteration.
/// Spins, then sleeps until the waker of `done` wakes it (`Team::wake`,
/// `Team::wake_all`), with the same contract on `done(true)` as [`until`].
#[cfg(not(loom))]
#[inline]
pub(crate) fn until_without_tasks(done: impl Fn(bool) -> bool) {
    if !done(false) {
        herd::rt::wait_until_without_jobs(done)
    }
}

/// Under loom no jobs run while waiting: as [`until`] (the same sleep and
/// wake-up as the model parker's).
#[cfg(loom)]
pub(crate) fn until_without_tasks(done: impl Fn(bool) -> bool) {
    until(done)
}

/// [`until`], running only the jobs `admit` accepts (a task bound by the
/// task scheduling constraint; see `task/constraint.rs`).
#[cfg(not(loom))]
#[inline]
pub(crate) fn until_admitting(done: impl Fn(bool) -> bool, admit: &dyn herd::rt::Admit) {
    if !done(false) {
        herd::rt::wait_until_admitting(done, admit)
    }
}

/// Under loom no jobs run while waiting: as [`until`].
#[cfg(loom)]
pub(crate) fn until_admitting(done: impl Fn(bool) -> bool, _admit: &dyn herd::rt::Admit) {
    until(done)
}

/// Waits until `done(false)` holds on a thread alone in its team (a team of
/// one, or no team): nobody of the team could wake it — a team of one has no
/// pool handle — and what it waits for (a detached task's event, and the
/// completions that hang on it) is done by other threads or never. So it
/// polls: spins, then yields; and says on stderr once, after 5 s, what it is
/// waiting for rather than hang silently (`what`).
#[cfg(not(loom))]
pub(crate) fn until_alone(done: impl Fn(bool) -> bool, what: &str) {
    let mut spins = 0u32;
    let start = std::time::Instant::now();
    let mut warned = false;
    while !done(false) {
        if spins < 64 {
            spins += 1;
            std::hint::spin_loop();
            continue;
        }
        std::thread::yield_now();
        if !warned && start.elapsed() > std::time::Duration::from_secs(5) {
            warned = true;
            eprintln!("herd-omp: a thread alone in its team has waited 5 s for {what}");
        }
    }
}

/// Under loom: re-check and yield.
#[cfg(loom)]
pub(crate) fn until_alone(done: impl Fn(bool) -> bool, _what: &str) {
    while !done(false) {
        loom::thread::yield_now();
    }
}

/// Under loom: re-check and yield; or, on a thread that registered a model
/// parker ([`model_enter`]), sleep as `herd::rt::wait_until` does: announce
/// on the parker with a `SeqCst` read-modify-write, check `done(true)`, and
/// wait until a waker ([`ModelParker::unpark_if_sleeping`], called by
/// `Team::wake`) clears the announcement. A wake-up the protocol loses
/// leaves the thread parked for ever, which loom reports as a deadlock.
#[cfg(loom)]
pub(crate) fn until(done: impl Fn(bool) -> bool) {
    let Some(parker) = PARKER.with(|p| p.borrow().clone()) else {
        while !done(false) {
            loom::thread::yield_now();
        }
        return;
    };
    loop {
        if done(false) {
            return;
        }
        parker.state.swap(1, Ordering::SeqCst);
        if done(true) {
            parker.state.swap(0, Ordering::SeqCst);
            return;
        }
        while parker.state.load(Ordering::SeqCst) == 1 {
            parker.notify.wait();
        }
    }
}

#[cfg(loom)]
loom::thread_local! {
    static PARKER: RefCell<Option<std::sync::Arc<ModelParker>>> = RefCell::new(None);
}

/// A member's sleep state under loom (herd's parker, reduced to the
/// announcement and the conditional wake).
#[cfg(loom)]
pub(crate) struct ModelParker {
    /// 1: announced sleeping.
    state: AtomicU32,
    /// Where it sleeps (a wake left over from an earlier sleep only makes
    /// the next wait re-check `state`).
    notify: loom::sync::Notify,
}

#[cfg(loom)]
impl Default for ModelParker {
    fn default() -> Self {
        ModelParker { state: AtomicU32::new(0), notify: loom::sync::Notify::new() }
    }
}

#[cfg(loom)]
impl ModelParker {
    /// Wakes the owner if it announced sleeping (herd: `unpark_if_sleeping`,
    /// a `SeqCst` load of the parker word).
    pub(crate) fn unpark_if_sleeping(&self) {
        if self.state.load(Ordering::SeqCst) == 1 {
            self.state.swap(0, Ordering::SeqCst);
            self.notify.notify();
        }
    }
}

/// Makes the calling loom thread sleep on `parker` in [`until`] (models only).
#[cfg(all(loom, test))]
pub(crate) fn model_enter(parker: &std::sync::Arc<ModelParker>) {
    PARKER.with(|p| *p.borrow_mut() = Some(parker.clone()));
}

/// Under loom, whether the protocol step `what` is weakened for a
/// demonstration that its model fails without it (`HERD_OMP_WEAKEN=what`;
/// see `loom_models`). Always false outside loom.
#[cfg(loom)]
pub(crate) fn weakened(what: &str) -> bool {
    std::env::var("HERD_OMP_WEAKEN").is_ok_and(|w| w == what)
}

#[cfg(not(loom))]
#[inline(always)]
pub(crate) fn weakened(_: &str) -> bool {
    false
}

/// Reading a word a waiter's condition depends on: an `Acquire` load while
/// spinning, a `SeqCst` read-modify-write for the last check before sleeping
/// (`last`), as `herd::rt::wait_until` requires — herd's one primitive for
/// the conditional-wake rule (implemented for loom's atomics too).
pub(crate) use herd::rt::Observe;
