//! What compute participants and the communicator thread share: the command queue, the
//! thread to unpark, and the counters.

use crate::comm::engine::Engine;
use crossbeam_queue::SegQueue;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::Thread;

/// A unit of work for the communicator thread.
pub(crate) enum Command {
    /// Runs on the communicator thread with its engine (posts requests, calls MPI).
    Run(Box<dyn FnOnce(&mut Engine) + Send>),
    /// Finish the requests in flight, then finalize MPI and exit.
    Stop,
}

/// Counters of the communicator thread (all relaxed: they are statistics).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) commands: AtomicU64,
    pub(crate) completed: AtomicU64,
    pub(crate) testsome: AtomicU64,
    pub(crate) received: AtomicU64,
    pub(crate) parks: AtomicU64,
    pub(crate) panics: AtomicU64,
}

/// A snapshot of the communicator thread's counters ([`crate::Mpi::stats`]).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct CommStats {
    /// Commands compute participants handed over.
    pub commands: u64,
    /// Operations whose requests all completed.
    pub completed: u64,
    /// `MPI_Testsome` calls.
    pub testsome: u64,
    /// Messages received by listeners.
    pub received: u64,
    /// Times the thread slept with nothing in flight.
    pub parks: u64,
    /// Commands that panicked (a bug: reported on stderr).
    pub panics: u64,
    /// CPU time the communicator thread has used so far, in nanoseconds (its thread CPU
    /// clock; 0 where the clock cannot be read).
    pub cpu_ns: u64,
}

/// The state shared by the [`crate::Mpi`] handle and the communicator thread.
pub(crate) struct Shared {
    /// Lock-free multi-producer queue: compute participants push and go on; the
    /// communicator thread pops (crossbeam's segmented queue).
    pub(crate) queue: SegQueue<Command>,
    pub(crate) thread: Thread,
    /// The largest element count one MPI call is given; larger messages are split.
    pub(crate) max_count: usize,
    pub(crate) stats: Counters,
}

impl Shared {
    /// Queues a command and wakes the communicator thread if it sleeps.
    pub(crate) fn submit(&self, cmd: Command) {
        self.stats.commands.fetch_add(1, Ordering::Relaxed);
        self.queue.push(cmd);
        self.thread.unpark();
    }

    pub(crate) fn snapshot(&self) -> CommStats {
        let s = &self.stats;
        CommStats {
            commands: s.commands.load(Ordering::Relaxed),
            completed: s.completed.load(Ordering::Relaxed),
            testsome: s.testsome.load(Ordering::Relaxed),
            received: s.received.load(Ordering::Relaxed),
            parks: s.parks.load(Ordering::Relaxed),
            panics: s.panics.load(Ordering::Relaxed),
            cpu_ns: 0,
        }
    }
}
