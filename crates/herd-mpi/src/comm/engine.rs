//! The communicator thread's side: the table of MPI requests in flight, the listeners for
//! messages nobody posted a receive for, and the progress loop (protocol in README.md).
//!
//! Everything here runs on the communicator thread only: it is the one thread that calls
//! MPI, which is what `MPI_THREAD_FUNNELED` allows.

use crate::comm::shared::{Command, Shared};
use mpi::ffi;
use mpi::topology::SimpleCommunicator;
use mpi::traits::AsRaw;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// What to do when every request of an operation has completed. It owns the operation's
/// buffers, so they live exactly as long as MPI may touch them.
type Finish = Box<dyn FnOnce() + Send>;

/// A handler of messages arriving on one tag from any rank: `(source, bytes)`.
pub(crate) type Handler = Box<dyn FnMut(usize, Vec<u8>) + Send>;

struct Op {
    remaining: usize,
    finish: Finish,
}

struct Listener {
    tag: i32,
    handler: Handler,
}

/// The communicator thread's state.
pub(crate) struct Engine {
    /// `MPI_COMM_WORLD`.
    pub(crate) world: SimpleCommunicator,
    pub(crate) rank: usize,
    /// Requests in flight; `owner[i]` is the index in `ops` of the operation `reqs[i]` belongs to.
    reqs: Vec<ffi::MPI_Request>,
    owner: Vec<usize>,
    ops: Vec<Option<Op>>,
    free_ops: Vec<usize>,
    indices: Vec<i32>,
    listeners: Vec<Listener>,
    shared: Arc<Shared>,
}

impl Engine {
    pub(crate) fn new(world: SimpleCommunicator, rank: usize, shared: Arc<Shared>) -> Engine {
        Engine {
            world,
            rank,
            reqs: Vec::new(),
            owner: Vec::new(),
            ops: Vec::new(),
            free_ops: Vec::new(),
            indices: Vec::new(),
            listeners: Vec::new(),
            shared,
        }
    }

    /// The raw world communicator, for the FFI calls that post requests.
    pub(crate) fn comm(&self) -> ffi::MPI_Comm {
        self.world.as_raw()
    }

    /// Tracks the requests of one operation; `finish` runs when all of them completed.
    /// No request at all: `finish` runs now.
    pub(crate) fn track(&mut self, reqs: Vec<ffi::MPI_Request>, finish: Finish) {
        if reqs.is_empty() {
            finish();
            return;
        }
        let op = Op { remaining: reqs.len(), finish };
        let id = match self.free_ops.pop() {
            Some(i) => {
                self.ops[i] = Some(op);
                i
            }
            None => {
                self.ops.push(Some(op));
                self.ops.len() - 1
            }
        };
        for r in reqs {
            self.reqs.push(r);
            self.owner.push(id);
        }
    }

    /// Registers a handler for messages on `tag` that no receive was posted for.
    pub(crate) fn listen(&mut self, tag: i32, handler: Handler) {
        self.listeners.retain(|l| l.tag != tag);
        self.listeners.push(Listener { tag, handler });
    }

    /// Removes the handler of `tag`.
    pub(crate) fn unlisten(&mut self, tag: i32) {
        self.listeners.retain(|l| l.tag != tag);
    }

    /// Whether no request is in flight.
    pub(crate) fn quiet(&self) -> bool {
        self.reqs.is_empty()
    }

    /// One round of progress: `MPI_Testsome` over every request in flight, then a probe of
    /// each listened tag. Returns how many things happened.
    pub(crate) fn progress(&mut self) -> usize {
        let mut done = 0;
        if !self.reqs.is_empty() {
            self.indices.resize(self.reqs.len(), 0);
            let mut outcount: i32 = 0;
            // SAFETY: `reqs` holds `reqs.len()` valid requests posted by this thread; the
            // buffers they refer to are owned by the operations' `finish` closures, which
            // have not run yet; `indices` has room for `reqs.len()` entries.
            let rc = unsafe {
                ffi::MPI_Testsome(
                    self.reqs.len() as i32,
                    self.reqs.as_mut_ptr(),
                    &mut outcount,
                    self.indices.as_mut_ptr(),
                    ffi::RSMPI_STATUSES_IGNORE,
                )
            };
            assert_eq!(rc, ffi::MPI_SUCCESS as i32, "MPI_Testsome failed on rank {}", self.rank);
            self.shared.stats.testsome.fetch_add(1, Ordering::Relaxed);
            // SAFETY: RSMPI_UNDEFINED and RSMPI_REQUEST_NULL are constants the MPI shim
            // initialized before main; they are only read.
            let (undefined, null) = unsafe { (ffi::RSMPI_UNDEFINED, ffi::RSMPI_REQUEST_NULL) };
            if outcount > 0 && outcount != undefined {
                for k in 0..outcount as usize {
                    let id = self.owner[self.indices[k] as usize];
                    let op = self.ops[id].as_mut().expect("a completed request belongs to a live operation");
                    op.remaining -= 1;
                    if op.remaining == 0 {
                        let op = self.ops[id].take().expect("checked above");
                        self.free_ops.push(id);
                        (op.finish)();
                        self.shared.stats.completed.fetch_add(1, Ordering::Relaxed);
                    }
                    done += 1;
                }
                // Completed requests were set to MPI_REQUEST_NULL: drop them.
                let mut w = 0;
                for i in 0..self.reqs.len() {
                    if self.reqs[i] != null {
                        self.reqs[w] = self.reqs[i];
                        self.owner[w] = self.owner[i];
                        w += 1;
                    }
                }
                self.reqs.truncate(w);
                self.owner.truncate(w);
            }
        }
        if !self.listeners.is_empty() {
            let mut listeners = std::mem::take(&mut self.listeners);
            for l in &mut listeners {
                // A bounded number per round so one busy tag cannot starve the requests.
                for _ in 0..64 {
                    match self.probe(l.tag) {
                        Some((src, bytes)) => {
                            (l.handler)(src, bytes);
                            done += 1;
                        }
                        None => break,
                    }
                }
            }
            // Handlers may not register listeners (they cannot reach the engine), so the
            // taken list is complete.
            self.listeners = listeners;
        }
        done
    }

    /// Receives one message on `tag` from any rank, if one has arrived.
    fn probe(&mut self, tag: i32) -> Option<(usize, Vec<u8>)> {
        let mut flag: i32 = 0;
        // SAFETY: MPI_Message and MPI_Status are plain C values MPI fills in.
        let mut msg: ffi::MPI_Message = unsafe { std::mem::zeroed() };
        let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: the arguments are valid for the call's duration; called from the thread
        // that initialized MPI.
        let rc = unsafe {
            ffi::MPI_Improbe(ffi::RSMPI_ANY_SOURCE, tag, self.comm(), &mut flag, &mut msg, &mut status)
        };
        assert_eq!(rc, ffi::MPI_SUCCESS as i32, "MPI_Improbe failed on rank {}", self.rank);
        if flag == 0 {
            return None;
        }
        let mut count: i32 = 0;
        // SAFETY: `status` was filled by the matching probe.
        unsafe { ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut count) };
        let mut buf = vec![0u8; count.max(0) as usize];
        // SAFETY: `buf` has room for the `count` bytes of the matched message `msg`.
        let rc = unsafe {
            ffi::MPI_Mrecv(
                buf.as_mut_ptr().cast(),
                count,
                ffi::RSMPI_UINT8_T,
                &mut msg,
                ffi::RSMPI_STATUS_IGNORE,
            )
        };
        assert_eq!(rc, ffi::MPI_SUCCESS as i32, "MPI_Mrecv failed on rank {}", self.rank);
        self.shared.stats.received.fetch_add(1, Ordering::Relaxed);
        Some((status.MPI_SOURCE as usize, buf))
    }
}

/// The communicator thread's loop: run the commands compute participants queued, progress
/// the requests, and sleep when there is nothing to do. Returns when asked to stop and no
/// request is in flight.
pub(crate) fn run(shared: Arc<Shared>, mut engine: Engine) {
    let mut stopping = false;
    let mut idle: u32 = 0;
    loop {
        let mut work = 0;
        while let Some(cmd) = shared.queue.pop() {
            work += 1;
            match cmd {
                Command::Run(f) => {
                    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(&mut engine))) {
                        let msg = crate::panic_message(&p);
                        eprintln!(
                            "herd-mpi: rank {}: a command on the communicator thread panicked: {msg}",
                            engine.rank
                        );
                        shared.stats.panics.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Command::Stop => stopping = true,
            }
        }
        work += engine.progress();
        if stopping && engine.quiet() && shared.queue.is_empty() {
            break;
        }
        if work > 0 {
            idle = 0;
            continue;
        }
        idle = idle.saturating_add(1);
        if engine.quiet() && engine.listeners.is_empty() {
            // Nothing in flight: sleep until a command arrives (submitters unpark us).
            shared.stats.parks.fetch_add(1, Ordering::Relaxed);
            std::thread::park();
        } else if idle < 256 {
            std::hint::spin_loop();
        } else if idle < 512 {
            std::thread::yield_now();
        } else {
            // Requests in flight but none completing: back off to at most 200 µs between
            // polls so a communicator thread sharing a core with compute stays cheap.
            let us = ((idle - 512) as u64).min(200);
            std::thread::park_timeout(Duration::from_micros(us.max(1)));
        }
    }
}
