//! The ready queue: enabled steps by priority, and the drainers that run them.
//!
//! Enabled steps wait in priority buckets (highest priority first, first enabled first within
//! a priority: a FIFO per priority level, so a pop costs O(1) for the usual handful of levels
//! instead of a binary heap's O(log n) cache misses). A *drainer* is one herd job that pops
//! and runs steps until the queue is empty; a graph runs at most one drainer per worker of the
//! pool during [`Graph::wait`](crate::Graph::wait).
//!
//! # Protocol (no lost wake-up, no surplus job)
//! The bucket map, the number of queued steps, the number of live drainers and the drainer
//! limit are one value under one mutex.
//! * **Who retires.** A drainer whose pop finds the queue empty (or the graph stopped)
//!   decrements the drainer count *in the same critical section* and exits.
//! * **Who starts drainers.** A drainer that queues steps ([`ReadyQueue::push_all`]) then
//!   raises the count to `min(limit, live + queued)` under the lock, and spawns exactly the
//!   difference: the count never exceeds the limit nor the work, and it only counts drainers
//!   that have not retired.
//! * **Nothing is stranded.** A step queued by a drainer is run by it if no other drainer
//!   takes it: the pusher pops again before it can retire, and retiring needs an empty queue
//!   under the lock. The environment (outside a step, possibly on another thread during a
//!   `wait`) only queues ([`ReadyQueue::queue_all`]): `wait` loops — [`ReadyQueue::start`],
//!   scope, [`ReadyQueue::close`] — until the queue is empty after its drainers retired.
//!
//! The model checks in `models.rs` run this protocol under loom.

use crate::sync::{lock, Mutex};
use std::collections::{BTreeMap, VecDeque};

struct Inner<T> {
    buckets: BTreeMap<i64, VecDeque<T>>,
    len: usize,
    drainers: usize,
    limit: usize,
}

/// Enabled steps (any `T`; the graph uses `Arc<Inst>`) and the drainer count.
pub(crate) struct ReadyQueue<T> {
    inner: Mutex<Inner<T>>,
}

impl<T> ReadyQueue<T> {
    pub(crate) fn new() -> Self {
        ReadyQueue { inner: Mutex::new(Inner { buckets: BTreeMap::new(), len: 0, drainers: 0, limit: 0 }) }
    }

    /// Queues `(priority, step)` pairs; returns how many drainers the caller must spawn (they
    /// are already counted). Only a drainer may call this (it pops again before retiring, so the
    /// steps cannot be stranded even when no drainer is added).
    pub(crate) fn push_all(&self, steps: impl IntoIterator<Item = (i64, T)>) -> usize {
        let mut q = lock(&self.inner);
        Self::enqueue(&mut q, steps);
        Self::grow(&mut q)
    }

    /// Queues `(priority, step)` pairs without starting drainers: for pushers that are not
    /// drainers (the environment, possibly during a `wait`). A live drainer or the `wait`'s
    /// next round runs them.
    pub(crate) fn queue_all(&self, steps: impl IntoIterator<Item = (i64, T)>) {
        Self::enqueue(&mut lock(&self.inner), steps);
    }

    fn enqueue(q: &mut Inner<T>, steps: impl IntoIterator<Item = (i64, T)>) {
        for (p, s) in steps {
            q.buckets.entry(p).or_default().push_back(s);
            q.len += 1;
        }
    }

    fn grow(q: &mut Inner<T>) -> usize {
        let want = q.limit.min(q.drainers + q.len);
        let add = want.saturating_sub(q.drainers);
        q.drainers += add;
        add
    }

    /// Opens the queue to at most `limit` drainers; returns how many the caller must spawn.
    pub(crate) fn start(&self, limit: usize) -> usize {
        let mut q = lock(&self.inner);
        q.limit = limit;
        Self::grow(&mut q)
    }

    /// Closes the queue to new drainers (the end of a `wait`); returns the drainers still
    /// counted (0 once every spawned drainer has retired).
    pub(crate) fn close(&self) -> usize {
        let mut q = lock(&self.inner);
        q.limit = 0;
        q.drainers
    }

    /// A drainer's next steps, best first, appended to `out` (which must be empty): one step,
    /// or a batch from the top priority level when that level holds many (see
    /// [`batch_size`]). Returns `false` when the queue is empty or `stop` is true: the calling
    /// drainer has then retired (it must not pop again).
    pub(crate) fn pop_or_retire(&self, stop: impl FnOnce() -> bool, out: &mut Vec<T>) -> bool {
        let mut q = lock(&self.inner);
        if q.len > 0 && !stop() {
            let limit = q.limit;
            let mut best = q.buckets.last_entry().expect("len > 0 means a bucket");
            let level = best.get_mut();
            let n = batch_size(level.len(), limit);
            out.extend(level.drain(..n));
            if level.is_empty() {
                best.remove();
            }
            q.len -= n;
            return true;
        }
        q.drainers -= 1;
        false
    }

    /// Number of queued steps.
    pub(crate) fn len(&self) -> usize {
        lock(&self.inner).len
    }

    /// Removes every queued step (returned, to be dropped outside the lock).
    pub(crate) fn clear(&self) -> Vec<T> {
        let mut q = lock(&self.inner);
        q.len = 0;
        std::mem::take(&mut q.buckets).into_values().flatten().collect()
    }
}

/// How many steps a drainer takes at once from a priority level holding `level` steps when
/// at most `limit` drainers run: one while the level is short (so priorities are followed
/// step by step, as tiled factorizations need), up to 16 when it holds many more steps than
/// there are drainers (so the drainers of a wide level of tiny steps meet at the queue's
/// lock once per batch, not once per step). A batch never exceeds a quarter of what each
/// drainer would get, so the others keep enough to do.
pub(crate) fn batch_size(level: usize, limit: usize) -> usize {
    (level / (4 * limit.max(1))).clamp(1, 16).min(level)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn priority_then_fifo() {
        let q = ReadyQueue::new();
        assert_eq!(q.push_all([(0, 'a'), (5, 'b'), (0, 'c'), (5, 'd'), (-1, 'e')]), 0, "closed: no drainer");
        assert_eq!(q.start(4), 4);
        let (mut order, mut out) = (String::new(), Vec::new());
        while q.pop_or_retire(|| false, &mut out) {
            assert_eq!(out.len(), 1, "short levels are popped a step at a time");
            order.extend(out.drain(..));
        }
        assert_eq!(order, "bdace");
        // That drainer retired; three more to retire.
        for _ in 0..3 {
            assert!(!q.pop_or_retire(|| false, &mut out));
        }
        assert_eq!(q.close(), 0);
    }

    #[test]
    fn drainers_bounded_by_limit_and_work() {
        let q = ReadyQueue::new();
        assert_eq!(q.start(2), 0, "nothing queued");
        assert_eq!(q.push_all([(0, 1)]), 1);
        assert_eq!(q.push_all([(0, 2), (0, 3), (0, 4)]), 1, "second drainer, then at the limit");
        assert_eq!(q.push_all([(0, 5)]), 0);
        assert_eq!(q.len(), 5);
        assert!(!q.pop_or_retire(|| true, &mut Vec::new()), "stop retires even with steps queued");
        assert_eq!(q.push_all([(0, 6)]), 1, "a retired drainer is replaced");
        assert_eq!(q.clear().len(), 6);
        assert_eq!(q.close(), 2);
    }

    #[test]
    fn batches_from_wide_levels_only() {
        assert_eq!(batch_size(1, 2), 1);
        assert_eq!(batch_size(15, 2), 1);
        assert_eq!(batch_size(40, 2), 5);
        assert_eq!(batch_size(100_000, 2), 16);
        assert_eq!(batch_size(3, 0), 1);
        let q = ReadyQueue::new();
        q.push_all((0..100).map(|i| (0, i)).chain([(1, 1000)]));
        q.start(2);
        let mut out = Vec::new();
        assert!(q.pop_or_retire(|| false, &mut out));
        assert_eq!(out, [1000], "the top level holds one step");
        out.clear();
        assert!(q.pop_or_retire(|| false, &mut out));
        assert_eq!(out, (0..12).collect::<Vec<_>>(), "first enabled first within a batch");
        assert_eq!(q.len(), 88);
    }
}
