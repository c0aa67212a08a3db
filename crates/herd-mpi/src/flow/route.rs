//! Routing: the state a distributed graph shares with its hooks — forwarding of tags to the
//! rank `compute_on` names and of items to the ranks `consumed_on` names (through the
//! communicator thread), the inbox the communicator thread fills, and the injection of
//! received messages into the local collections by a compute participant.

use super::wire::{self, Parsed};
use crate::Mpi;
use herd_flow::Injector;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Brings one received item or tag into the local collections: `(injector, key or tag,
/// value bytes)`.
pub(crate) type Handler = dyn Fn(&mut Injector<'_>, &[u8], &[u8]) -> Result<(), String> + Send + Sync;

/// What the communicator thread hands the graph: messages and the result of the last
/// termination round.
#[derive(Default)]
pub(crate) struct Events {
    pub(crate) messages: VecDeque<(usize, Vec<u8>)>,
    pub(crate) round: Option<[u64; 2]>,
}

/// The state of one rank's distributed graph, shared with its hooks and listener.
pub(crate) struct State {
    pub(crate) mpi: Arc<Mpi>,
    /// The MPI tag of this graph's messages.
    pub(crate) tag: i32,
    pub(crate) rank: usize,
    pub(crate) size: usize,
    /// Messages this rank sent (counted before the send is handed to MPI).
    pub(crate) sent: AtomicU64,
    /// Messages this rank received and processed (counted after processing).
    pub(crate) received: AtomicU64,
    pub(crate) bytes_sent: AtomicU64,
    /// A step failed here or a rank sent an abort: no step runs any more on this rank.
    pub(crate) failed: AtomicBool,
    /// This rank's own first error.
    pub(crate) local_error: Mutex<Option<String>>,
    pub(crate) events: Mutex<Events>,
    pub(crate) wake: Condvar,
    /// Injectors by registration index (items and step collections share the numbering).
    pub(crate) handlers: Mutex<Vec<Arc<Handler>>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    /// Sends one message to `dest` on the graph's tag.
    fn send(&self, dest: usize, msg: Vec<u8>) {
        self.sent.fetch_add(1, Ordering::SeqCst);
        self.bytes_sent.fetch_add(msg.len() as u64, Ordering::Relaxed);
        if let Err(e) = self.mpi.send_bytes(dest, self.tag, msg) {
            // The message will never arrive: count it as received so that the termination
            // rounds still balance, and fail (no step may wait for it in vain).
            self.received.fetch_add(1, Ordering::SeqCst);
            self.fail(format!("cannot send to rank {dest}: {e}"));
        }
    }

    /// Checks a rank named by a tuner.
    fn check_rank(&self, what: &str, collection: &str, key: &dyn Debug, r: usize) -> bool {
        if r < self.size {
            return true;
        }
        self.fail(format!(
            "{what} of {collection}[{key:?}] names rank {r}, but there are {} ranks",
            self.size
        ));
        false
    }

    /// Forwards an item put here to every other rank in `nodes`.
    pub(crate) fn forward_item<K: Serialize + Debug, V: Serialize>(
        &self,
        collection: &str,
        index: u32,
        key: &K,
        value: &V,
        nodes: &[usize],
    ) {
        let mut dests: Vec<usize> = Vec::with_capacity(nodes.len());
        for &n in nodes {
            if n != self.rank && self.check_rank("consumed_on", collection, key, n) {
                dests.push(n);
            }
        }
        dests.sort_unstable();
        dests.dedup();
        if dests.is_empty() || self.failed.load(Ordering::Acquire) {
            return;
        }
        match wire::item_message(index, key, value) {
            Ok(msg) => {
                let last = dests.pop().expect("not empty");
                for d in dests {
                    self.send(d, msg.clone());
                }
                self.send(last, msg);
            }
            Err(e) => self.fail(format!("item {collection}[{key:?}]: {e}")),
        }
    }

    /// Sends a tag to the rank that computes its step, with the number of the memoizing
    /// tag collection it was put into, if it was (the receiver deduplicates those).
    pub(crate) fn forward_tag<K: Serialize + Debug>(
        &self,
        collection: &str,
        index: u32,
        dest: usize,
        tag: &K,
        memo: Option<u32>,
    ) {
        if !self.check_rank("compute_on", collection, tag, dest) || self.failed.load(Ordering::Acquire) {
            return;
        }
        match wire::tag_message(index, &(memo, tag)) {
            Ok(msg) => self.send(dest, msg),
            Err(e) => self.fail(format!("tag {collection}({tag:?}): {e}")),
        }
    }

    /// Records this rank's error (the first one is kept) and, the first time, tells every
    /// other rank to stop (one abort message each).
    pub(crate) fn fail(&self, error: String) {
        let first = {
            let mut e = lock(&self.local_error);
            let first = e.is_none();
            e.get_or_insert(error.clone());
            first
        };
        self.failed.store(true, Ordering::Release);
        if first {
            for r in (0..self.size).filter(|&r| r != self.rank) {
                self.send(r, wire::abort_message(&error));
            }
        }
    }

    /// The communicator thread's listener: queue the message and wake the waiting thread.
    pub(crate) fn deliver(&self, src: usize, bytes: Vec<u8>) {
        lock(&self.events).messages.push_back((src, bytes));
        self.wake.notify_all();
    }

    /// The communicator thread completed a termination round.
    pub(crate) fn round_done(&self, totals: [u64; 2]) {
        lock(&self.events).round = Some(totals);
        self.wake.notify_all();
    }

    /// Processes every queued message (on a compute participant: a drainer between its
    /// batches, or the thread in `wait`); returns how many. Each is counted as received
    /// after it was injected, so until then it counts as in flight.
    pub(crate) fn poll(&self, inj: &mut Injector<'_>) -> usize {
        let mut n = 0;
        loop {
            let batch = std::mem::take(&mut lock(&self.events).messages);
            if batch.is_empty() {
                break;
            }
            for (src, bytes) in batch {
                self.process(inj, src, &bytes);
                self.received.fetch_add(1, Ordering::SeqCst);
                n += 1;
            }
        }
        if self.failed.load(Ordering::Acquire) {
            inj.halt();
        }
        n
    }

    fn process(&self, inj: &mut Injector<'_>, src: usize, bytes: &[u8]) {
        let (index, a, b) = match wire::parse(bytes) {
            Ok(Parsed::Abort) => {
                // The failing rank reports its error itself at the end of `wait`.
                self.failed.store(true, Ordering::Release);
                return;
            }
            Ok(Parsed::Item(i, k, v)) => (i, k, v),
            Ok(Parsed::Tag(i, t)) => (i, t, &[][..]),
            Err(e) => return self.fail(format!("from rank {src}: {e}")),
        };
        if self.failed.load(Ordering::Acquire) {
            return; // the graph is stopping: received work is dropped
        }
        let h = lock(&self.handlers).get(index as usize).cloned();
        let r = match h {
            Some(h) => h(inj, a, b),
            None => Err(format!("no collection number {index} (the ranks built different graphs)")),
        };
        if let Err(e) = r {
            self.fail(format!("a message from rank {src}: {e}"));
        }
    }
}
