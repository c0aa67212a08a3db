//! [`Pending`]: the completion of an operation handed to the communicator thread.
//!
//! The communicator thread fills the slot once and unparks the waiter; the waiter spins
//! briefly (a completion usually follows within microseconds on one node) and then parks.
//! Written here rather than taken from a futures executor because the waiter is a herd
//! participant that must not need an async runtime: this is the hand-off the papers'
//! communicator thread makes, one word and one wake.

use crate::error::{MpiError, Result};
use crate::sync::{current, park_for, AtomicBool, Mutex, Ordering, Thread, SPINS};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Slot<T> {
    done: AtomicBool,
    value: Mutex<Option<Result<T>>>,
    waiter: Mutex<Option<Thread>>,
}

/// The result of an operation the communicator thread completes later (a send, a receive,
/// an all-to-all, a closure). [`Pending::wait`] blocks the calling thread until it is done.
#[must_use = "an operation's result (and its buffer) is only seen through wait"]
pub struct Pending<T> {
    slot: Arc<Slot<T>>,
    rank: usize,
}

/// The communicator thread's side of a [`Pending`].
pub(crate) struct Completer<T> {
    slot: Arc<Slot<T>>,
}

/// A new pending result and the handle that completes it.
pub(crate) fn pending<T>(rank: usize) -> (Pending<T>, Completer<T>) {
    let slot =
        Arc::new(Slot { done: AtomicBool::new(false), value: Mutex::new(None), waiter: Mutex::new(None) });
    (Pending { slot: slot.clone(), rank }, Completer { slot })
}

impl<T> Completer<T> {
    /// Stores the result and wakes the waiter, if one is parked.
    pub(crate) fn complete(self, value: Result<T>) {
        *self.slot.value.lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
        self.slot.done.store(true, Ordering::Release);
        if let Some(t) = self.slot.waiter.lock().unwrap_or_else(|e| e.into_inner()).take() {
            t.unpark();
        }
    }
}

impl<T> Drop for Completer<T> {
    fn drop(&mut self) {
        // A completer dropped without a result (its thread stopped): the waiter gets an error
        // instead of hanging.
        if !self.slot.done.load(Ordering::Acquire) {
            let mut v = self.slot.value.lock().unwrap_or_else(|e| e.into_inner());
            if v.is_none() {
                *v = Some(Err(MpiError::Stopped {
                    rank: usize::MAX,
                    why: "the operation was dropped before it completed".into(),
                }));
            }
            drop(v);
            self.slot.done.store(true, Ordering::Release);
            if let Some(t) = self.slot.waiter.lock().unwrap_or_else(|e| e.into_inner()).take() {
                t.unpark();
            }
        }
    }
}

impl<T> Pending<T> {
    /// Whether the operation has completed (then [`Pending::wait`] returns at once).
    pub fn is_done(&self) -> bool {
        self.slot.done.load(Ordering::Acquire)
    }

    /// Blocks until the operation completes and returns its result.
    pub fn wait(self) -> Result<T> {
        self.wait_until(None)
    }

    /// As [`Pending::wait`], but gives up with [`MpiError::Timeout`] after `limit`.
    pub fn wait_timeout(self, limit: Duration) -> Result<T> {
        self.wait_until(Some(Instant::now() + limit))
    }

    fn wait_until(self, deadline: Option<Instant>) -> Result<T> {
        let start = Instant::now();
        let mut spins = 0u32;
        while !self.is_done() {
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            *self.slot.waiter.lock().unwrap_or_else(|e| e.into_inner()) = Some(current());
            if self.is_done() {
                break;
            }
            match deadline {
                None => park_for(Duration::from_millis(100)),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(MpiError::Timeout {
                            rank: self.rank,
                            what: "an operation handed to the communicator thread".into(),
                            seconds: (now - start).as_secs_f64(),
                        });
                    }
                    park_for((d - now).min(Duration::from_millis(100)));
                }
            }
        }
        let v = self.slot.value.lock().unwrap_or_else(|e| e.into_inner()).take();
        match v {
            Some(Err(MpiError::Stopped { rank: usize::MAX, why })) => {
                Err(MpiError::Stopped { rank: self.rank, why })
            }
            Some(v) => v,
            None => Err(MpiError::Stopped { rank: self.rank, why: "no result was stored".into() }),
        }
    }
}

#[cfg(all(test, loom))]
mod models {
    //! loom model of the completion hand-off: whatever the interleaving of `complete` (the
    //! communicator thread) and `wait` (a compute participant: check, register, re-check,
    //! park), the waiter returns the value and never sleeps forever (loom reports a deadlock
    //! if the unpark could be lost). The same for a completer dropped unfilled.
    use super::*;

    #[test]
    fn completion_is_never_lost() {
        loom::model(|| {
            let (p, c) = pending::<u32>(0);
            // Not joined: loom's join shares the park token the completer's unpark may leave
            // behind; loom runs every spawned thread to its end anyway.
            loom::thread::spawn(move || c.complete(Ok(7)));
            assert_eq!(p.wait().unwrap(), 7);
        });
    }

    #[test]
    fn dropped_completer_wakes_the_waiter() {
        loom::model(|| {
            let (p, c) = pending::<u32>(3);
            loom::thread::spawn(move || drop(c));
            match p.wait() {
                Err(MpiError::Stopped { rank, .. }) => assert_eq!(rank, 3),
                other => panic!("expected Stopped, got {:?}", other.map(|_| ())),
            }
        });
    }
}
