//! Taking the master role: a thread calling into a pool from outside
//! becomes its participant 0 for the call (bound to the master's place,
//! holding the master lock). One way in, [`Registry::take_master`]; the
//! three entry points differ only in what they do when another thread holds
//! the role: hand the closure to the workers (`enter`), wait for the lock
//! (`enter_local`), or give up (`try_enter_local`).

use super::registry::Registry;
use super::worker::{slot_in, Occupancy};
use crate::sched::StackJob;
use crate::sync::LockLatch;
use std::sync::{Arc, MutexGuard, TryLockError};

/// The master role, held while alive: the master lock and slot 0.
struct Master<'a> {
    _occupancy: Occupancy,
    _lock: MutexGuard<'a, ()>,
}

impl Registry {
    /// Takes the master role: waiting for the master lock if `block`, else
    /// `None` when another thread holds it.
    fn take_master(&self, block: bool) -> Option<Master<'_>> {
        let lock = match self.master_lock.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) if !block => return None,
            Err(TryLockError::WouldBlock) => self.master_lock.lock().unwrap_or_else(|e| e.into_inner()),
        };
        self.bind_master_once();
        Some(Master { _occupancy: Occupancy::enter(self, 0), _lock: lock })
    }

    /// Runs `f` as a participant of this registry: directly if the calling
    /// thread already is one, else as the master (slot 0) if the master lock
    /// is free, else — another thread is master — by handing `f` to the
    /// workers and blocking until it has run.
    pub(crate) fn enter<F, R>(self: &Arc<Registry>, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        if slot_in(self).is_some() {
            return f();
        }
        let injectable = self.dispatch.persistent() && self.num_threads() > 1;
        match self.take_master(!injectable) {
            Some(_master) => f(),
            None => self.inject_and_wait(f),
        }
    }

    /// Like [`Registry::enter`] for closures that need not be `Send`: a thread
    /// that cannot become the master waits for the master lock.
    pub(crate) fn enter_local<R>(&self, f: impl FnOnce() -> R) -> R {
        if slot_in(self).is_some() {
            return f();
        }
        let _master = self.take_master(true);
        f()
    }

    /// Like [`Registry::enter_local`], but returns `Err(f)` at once when
    /// another thread holds the master role.
    pub(crate) fn try_enter_local<R, F: FnOnce() -> R>(&self, f: F) -> Result<R, F> {
        if slot_in(self).is_some() {
            return Ok(f());
        }
        match self.take_master(false) {
            Some(_master) => Ok(f()),
            None => Err(f),
        }
    }

    /// True when the calling thread occupies slot 0 of this registry.
    #[inline]
    pub(crate) fn is_master(&self) -> bool {
        slot_in(self) == Some(0)
    }

    #[cold]
    fn inject_and_wait<F, R>(&self, f: F) -> R
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        let job = StackJob::new(|_| f(), LockLatch::new());
        // SAFETY: `job` lives on this frame until its latch is set, which we wait for.
        self.inject(unsafe { job.as_job_ref() });
        job.latch.wait();
        job.into_result().into_return_value()
    }
}
