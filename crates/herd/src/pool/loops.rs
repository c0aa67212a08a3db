//! Parallel loops over index ranges: `for_each` and `map_reduce`.
//!
//! Called by the master (or from outside the pool), a loop is one fork-join
//! region in which every participant takes iterations according to the
//! [`Schedule`]:
//! * `Static { chunk }` — `chunk == 0`: one contiguous block per participant;
//!   otherwise chunks dealt round-robin. No synchronisation at all.
//! * `Dynamic { chunk }` — chunks taken from one shared atomic counter.
//! * `Guided { min_chunk }` — like dynamic, each chunk `remaining / n` (at
//!   least `min_chunk`), taken with a compare-exchange.
//! * `Adaptive` (the default) — each participant starts on its static block
//!   and takes it front to back in small pieces; a participant that runs out
//!   steals the back half of the largest remaining block. Static's locality
//!   with dynamic's balance; one compare-exchange per piece.
//!
//! **Throttling** (`HERD_THROTTLE`) acts at chunk boundaries: under the
//! dynamic, guided and adaptive schedules a throttled participant takes no
//! further chunk (the others take the rest; in an adaptive loop they steal
//! what is left of its block) and waits while chunks remain, taking chunks
//! again when the limit rises. A chunk that has started always finishes;
//! static schedules assign iterations up front and are not throttled.
//!
//! Called from inside a region or a task on another participant (a nested
//! loop), the loop cannot start a region; it splits the range recursively with
//! [`join`](super::join()) instead, so idle participants can still help.

use super::region::block;
use super::registry::Registry;
use super::worker::with_current;
use crate::partition;
use crossbeam_utils::CachePadded;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// How a loop's iterations are divided among participants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Schedule {
    /// Fixed assignment: `chunk == 0` gives each participant one contiguous
    /// block; otherwise chunks of `chunk` iterations are dealt round-robin.
    Static {
        /// Chunk size, or 0 for one block per participant.
        chunk: usize,
    },
    /// Chunks of `chunk` iterations taken first come, first served.
    Dynamic {
        /// Chunk size (0 is taken as 1).
        chunk: usize,
    },
    /// Chunks proportional to the remaining iterations divided by the number
    /// of participants, never smaller than `min_chunk`.
    Guided {
        /// Smallest chunk (0 is taken as 1).
        min_chunk: usize,
    },
    /// Static blocks with stealing of half-blocks (the default).
    #[default]
    Adaptive,
}

/// Iterations handed to the body in one call.
type Body<'a> = dyn Fn(usize, Range<usize>) + Sync + 'a;

impl Registry {
    /// Runs `body(participant, chunk)` over `range` split by `schedule`.
    /// The caller occupies a slot of this registry.
    pub(crate) fn run_loop(&self, range: Range<usize>, schedule: Schedule, body: &Body<'_>) {
        let len = range.end.saturating_sub(range.start);
        if len == 0 {
            return;
        }
        let n = self.num_threads();
        let can_start_region = self.is_master() && !self.region_active.load(Ordering::Relaxed);
        if n == 1 {
            body(0, range);
            return;
        }
        if !can_start_region {
            let grain = (len / (n * 8)).max(1);
            split_with_join(range, grain, body);
            return;
        }
        let lo = range.start;
        match schedule {
            Schedule::Static { chunk: 0 } => {
                self.broadcast(
                    |ctx| {
                        let b = block(len, ctx.index(), n);
                        if !b.is_empty() {
                            body(ctx.index(), lo + b.start..lo + b.end);
                        }
                    },
                    false,
                );
            }
            Schedule::Static { chunk } => {
                self.broadcast(
                    |ctx| {
                        let i = ctx.index();
                        for c in partition::static_chunks(len as u64, chunk as u64, i as u64, n as u64) {
                            body(i, lo + c.start as usize..lo + c.end as usize);
                        }
                    },
                    false,
                );
            }
            Schedule::Dynamic { chunk } => {
                let chunk = chunk.max(1);
                let next = CachePadded::new(AtomicUsize::new(0));
                self.broadcast(
                    |ctx| loop {
                        if !self.may_take_chunk(ctx.index(), || next.load(Ordering::Relaxed) < len) {
                            break;
                        }
                        let start = next.fetch_add(chunk, Ordering::Relaxed);
                        if start >= len {
                            break;
                        }
                        self.count_chunk(ctx.index());
                        body(ctx.index(), lo + start..lo + (start + chunk).min(len));
                    },
                    false,
                );
            }
            Schedule::Guided { min_chunk } => {
                let min_chunk = min_chunk.max(1);
                let next = CachePadded::new(AtomicUsize::new(0));
                self.broadcast(
                    |ctx| {
                        let mut start = next.load(Ordering::Relaxed);
                        loop {
                            if start >= len
                                || !self.may_take_chunk(ctx.index(), || next.load(Ordering::Relaxed) < len)
                            {
                                break;
                            }
                            start = next.load(Ordering::Relaxed);
                            if start >= len {
                                break;
                            }
                            let size =
                                partition::guided_chunk((len - start) as u64, n as u64, min_chunk as u64)
                                    as usize;
                            match next.compare_exchange_weak(
                                start,
                                start + size,
                                Ordering::Relaxed,
                                Ordering::Relaxed,
                            ) {
                                Ok(_) => {
                                    self.count_chunk(ctx.index());
                                    body(ctx.index(), lo + start..lo + start + size);
                                    start = next.load(Ordering::Relaxed);
                                }
                                Err(now) => start = now,
                            }
                        }
                    },
                    false,
                );
            }
            Schedule::Adaptive => {
                if len > u32::MAX as usize {
                    // Offsets are packed in 32 bits; fall back to guided.
                    return self.run_loop(range, Schedule::Guided { min_chunk: 1 << 12 }, body);
                }
                let blocks: Vec<CachePadded<AtomicU64>> = (0..n)
                    .map(|i| {
                        let b = block(len, i, n);
                        CachePadded::new(AtomicU64::new(pack(b.start, b.end)))
                    })
                    .collect();
                let piece = (len / (n * 64)).max(1);
                self.broadcast(|ctx| adaptive_share(self, &blocks, ctx.index(), piece, lo, body), false);
            }
        }
    }

    /// Before participant `i` takes a loop chunk: while it is throttled it
    /// waits (asleep, polling every 100 µs) as long as `more()` says chunks
    /// remain, so that a long loop gets it back when the limit rises (a
    /// throttled participant that left the loop for good lost the rest of
    /// it). Returns whether it may take one.
    fn may_take_chunk(&self, i: usize, more: impl Fn() -> bool) -> bool {
        while self.throttled(i) {
            if !more() {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        true
    }

    /// Participant `i` of a loop took a chunk.
    #[inline]
    fn count_chunk(&self, i: usize) {
        crate::sched::counters::bump(&self.counters.of(i).chunks, 1);
    }
}

#[inline]
fn pack(start: usize, end: usize) -> u64 {
    ((start as u64) << 32) | end as u64
}

#[inline]
fn unpack(v: u64) -> (usize, usize) {
    ((v >> 32) as usize, (v & 0xffff_ffff) as usize)
}

/// One participant's part of an adaptive loop; see the module documentation.
fn adaptive_share(
    reg: &Registry,
    blocks: &[CachePadded<AtomicU64>],
    me: usize,
    piece: usize,
    lo: usize,
    body: &Body<'_>,
) {
    let mine = &blocks[me];
    'share: loop {
        // Throttled: the others steal what is left of our block meanwhile.
        let any_left = || {
            blocks.iter().any(|b| {
                let (s, e) = unpack(b.load(Ordering::Acquire));
                s < e
            })
        };
        if !reg.may_take_chunk(me, any_left) {
            return;
        }
        // Take pieces from the front of our own block.
        let mut cur = mine.load(Ordering::Acquire);
        loop {
            let (s, e) = unpack(cur);
            if s >= e {
                break;
            }
            let take = piece.min(e - s);
            match mine.compare_exchange_weak(cur, pack(s + take, e), Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    reg.count_chunk(me);
                    body(me, lo + s..lo + s + take);
                    if reg.throttled(me) {
                        // Leave our block to the others and wait above.
                        // (Falling through to the steal below instead
                        // overwrote the rest of our block with a stolen
                        // range: iterations were lost — the flipping-limits
                        // test caught it about once in 100 runs.)
                        continue 'share;
                    }
                    cur = mine.load(Ordering::Acquire);
                }
                Err(now) => cur = now,
            }
        }
        // Out of work (our block is empty, so nobody else writes it): steal
        // the back half of the largest remaining block.
        let mut stolen = None;
        'steal: loop {
            let victim = blocks
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != me)
                .map(|(i, b)| {
                    let (s, e) = unpack(b.load(Ordering::Acquire));
                    (e.saturating_sub(s), i)
                })
                .max();
            let Some((remaining, v)) = victim else { break };
            if remaining == 0 {
                break;
            }
            let vb = &blocks[v];
            let cur = vb.load(Ordering::Acquire);
            let (s, e) = unpack(cur);
            if s >= e {
                continue 'steal;
            }
            let mid = s + (e - s) / 2;
            if mid == s {
                // One iteration left: take it whole.
                if vb.compare_exchange(cur, pack(e, e), Ordering::AcqRel, Ordering::Acquire).is_ok() {
                    stolen = Some((s, e));
                    break;
                }
                continue 'steal;
            }
            if vb.compare_exchange(cur, pack(s, mid), Ordering::AcqRel, Ordering::Acquire).is_ok() {
                stolen = Some((mid, e));
                break;
            }
        }
        match stolen {
            None => return,
            Some((s, e)) => mine.store(pack(s, e), Ordering::Release),
        }
    }
}

/// Recursive halving with `join`, for loops that cannot start a region.
fn split_with_join(range: Range<usize>, grain: usize, body: &Body<'_>) {
    let len = range.end - range.start;
    if len <= grain {
        let slot = with_current(|cur| cur.map_or(0, |(_, slot)| slot));
        body(slot, range);
        return;
    }
    let mid = range.start + len / 2;
    super::join(
        || split_with_join(range.start..mid, grain, body),
        || split_with_join(mid..range.end, grain, body),
    );
}
