//! A queue shared by several workers: a lock around a `VecDeque`, with its
//! length mirrored in an atomic so that "is it empty?" costs one load.
//!
//! Why a lock and not a lock-free structure: several workers push *and* pop
//! at the same end (the shepherd's LIFO), and a remote steal takes a chunk
//! of several jobs from the other end at once, which a Chase–Lev deque
//! cannot do. Qthreads' shepherd queues are locked for the same reason. The
//! lock is std's futex mutex (spins briefly, then sleeps), so a holder
//! preempted on an oversubscribed machine does not make others spin.
//!
//! Each queued job remembers the slot that pushed it, so that whoever
//! removes it updates that slot's count of queued jobs ([`Pending`]).
//!
//! Ordering: `len` is written under the lock after the change and read
//! without it (`Relaxed`) only as a hint; a decision that matters (taking a
//! job) always takes the lock. A pusher writes `len` before its `SeqCst`
//! read-modify-write in `Sleepers::notify_one`, and a sleeper reads it after
//! its own `SeqCst` read-modify-write in `Sleepers::announce`: whichever
//! comes first in the counter's order, the push is seen or the sleeper is
//! woken (the proof in `sync::Sleepers`).

use super::pending::Pending;
use super::JobRef;
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::{Mutex, MutexGuard};
use std::collections::VecDeque;

/// See the module documentation.
pub(crate) struct SharedQueue {
    jobs: Mutex<VecDeque<(JobRef, u32)>>,
    len: AtomicUsize,
}

impl Default for SharedQueue {
    fn default() -> Self {
        SharedQueue { jobs: Mutex::new(VecDeque::with_capacity(64)), len: AtomicUsize::new(0) }
    }
}

impl SharedQueue {
    #[inline]
    fn lock(&self) -> MutexGuard<'_, VecDeque<(JobRef, u32)>> {
        // A panic never happens while the lock is held (no user code runs
        // under it), but do not turn a poisoned lock into a second panic.
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a job pushed by slot `owner` ([`NO_SLOT`] from outside) at the
    /// newest end.
    #[inline]
    pub(crate) fn push(&self, job: JobRef, owner: u32, pending: &Pending) {
        pending.add(owner);
        let mut q = self.lock();
        q.push_back((job, owner));
        self.len.store(q.len(), Ordering::Relaxed);
    }

    /// Adds jobs of slot `owner` at the newest end, the last one newest.
    pub(crate) fn push_all(
        &self,
        jobs: impl ExactSizeIterator<Item = JobRef>,
        owner: u32,
        pending: &Pending,
    ) {
        let mut q = self.lock();
        for job in jobs {
            pending.add(owner);
            q.push_back((job, owner));
        }
        self.len.store(q.len(), Ordering::Relaxed);
    }

    /// Takes the newest job (LIFO).
    #[inline]
    pub(crate) fn pop_newest(&self, pending: &Pending) -> Option<JobRef> {
        if self.is_empty() {
            return None;
        }
        let mut q = self.lock();
        let (job, owner) = q.pop_back()?;
        self.len.store(q.len(), Ordering::Relaxed);
        drop(q);
        pending.sub(owner);
        Some(job)
    }

    /// Takes `job` back if it is still queued (searched from the newest
    /// end, where a joiner's own job usually is).
    #[inline]
    pub(crate) fn take_back(&self, job: JobRef, pending: &Pending) -> bool {
        if self.is_empty() {
            return false;
        }
        let mut q = self.lock();
        let Some(i) = q.iter().rposition(|&(j, _)| j == job) else { return false };
        let (_, owner) = q.remove(i).expect("found above");
        self.len.store(q.len(), Ordering::Relaxed);
        drop(q);
        pending.sub(owner);
        true
    }

    /// Takes the oldest job (FIFO).
    #[inline]
    pub(crate) fn pop_oldest(&self, pending: &Pending) -> Option<JobRef> {
        if self.is_empty() {
            return None;
        }
        let mut q = self.lock();
        let (job, owner) = q.pop_front()?;
        self.len.store(q.len(), Ordering::Relaxed);
        drop(q);
        pending.sub(owner);
        Some(job)
    }

    /// Takes up to `n` of the oldest jobs, but no more than half of those
    /// queued (rounded up), oldest first: a bulk steal that leaves the
    /// victim's own workers their share.
    pub(crate) fn take_oldest(&self, n: usize, into: &mut Vec<JobRef>, pending: &Pending) {
        if self.is_empty() {
            return;
        }
        let mut q = self.lock();
        let k = n.min(q.len().div_ceil(2));
        for (job, owner) in q.drain(..k) {
            pending.sub(owner);
            into.push(job);
        }
        self.len.store(q.len(), Ordering::Relaxed);
    }

    /// No job visible (a hint without the lock).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len.load(Ordering::Relaxed) == 0
    }

    /// Jobs visible (a hint without the lock).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }
}
