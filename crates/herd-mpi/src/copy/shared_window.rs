//! The strided block exchange of [`super::exchange`] through an MPI-3 shared-memory window,
//! when the two ranks share a node: each rank packs its block straight into its own segment
//! of a window both ranks map (`MPI_Win_allocate_shared`, made once per pair and kept in the
//! [`Mpi`] handle), and the peer unpacks directly from there. Two copies (pack, unpack)
//! instead of three (pack, MPI's transfer, unpack), and no message at all after the window
//! exists. A peer on another node, or a window that would be larger than
//! [`SharedWindowExchange::max_window_bytes`] or cannot be allocated, falls back to the
//! message pipeline of [`super::pipelined`] (the returned [`Route`] says which was taken).
//!
//! # The ring and its protocol
//!
//! The packed form (`count × blocklen` elements) is cut into chunks as the pipelined
//! exchange cuts it (packed indices, so they may cut blocks). Each rank's segment is
//!
//! ```text
//! [ published: u64 | pad ][ consumed: u64 | pad ][ slot 0 ][ slot 1 ] … [ slot K−1 ]
//!   0                      128                    256 (each slot a multiple of 64 bytes)
//! ```
//!
//! Both counters only grow, and each is written by its segment's owner only: `published`
//! counts the chunks the owner has packed into its slots since the window was made,
//! `consumed` the peer's chunks the owner has unpacked. The ranks' `g`-th chunks (counted
//! over every exchange of the pair) go to slot `g mod K` of each segment. A rank
//!
//! 1. before packing its chunk `g` into slot `g mod K`, waits until the peer's `consumed`
//!    is at least `g − K + 1`: the peer has finished reading chunk `g − K`, the slot's
//!    previous content (write-after-read);
//! 2. packs the chunk, then stores `published = g + 1` with **Release**;
//! 3. unpacks the peer's chunk `j` only once the peer's `published` is at least `j + 1`,
//!    loaded with **Acquire** (read-after-write), and only after it has packed its own
//!    chunk `j` (the peer's elements replace the very elements this rank's chunk `j` reads);
//!    then stores `consumed = j + 1` with **Release**, so that the peer's wait in step 1,
//!    an Acquire load, orders its next write of that slot after these reads.
//!
//! While it waits in step 1 a rank unpacks whatever the peer has published, so neither
//! rank can wait for the other in a cycle (if both wait in step 1, each has packed more
//! chunks than the other has consumed, which the other can then unpack). An exchange ends
//! once this rank has unpacked all of the peer's chunks: the peer may still be reading
//! this rank's slots, which only the next exchange (step 1) writes again; the caller's
//! buffer itself is never in the window. The counters start at 0 in a new window (zeroed,
//! then a barrier of the pair); a window is only replaced (grown) when both ranks ask for
//! it at the start of an exchange, after a barrier.
//!
//! Why atomics and not `MPI_Win_sync`: under `MPI_THREAD_FUNNELED` only the communicator
//! thread may call MPI, but the packs and unpacks run on herd's participants. In the
//! unified memory model of a shared window, what `MPI_Win_sync` adds between a store and
//! the flag that publishes it is a memory barrier (Open MPI's `osc/sm` implements it as
//! `opal_atomic_mb()`); the Release store and Acquire load of the counters give exactly
//! the ordering the protocol needs, on the counter words themselves. The window is locked
//! for its whole life (`MPI_Win_lock_all(MPI_MODE_NOCHECK)`, one passive-target epoch), as
//! the standard asks of load/store access to it. The model test at the end of this file
//! (`make test-loom`) checks the protocol with loom on two threads: no data race on a slot,
//! every chunk read is the one published, and no deadlock; weakened variants fail there.
//!
//! Both ranks must exchange the same layout shape with the same chunk size and slot count
//! (as for the pipelined exchange), and one pair exchanges from one thread at a time.

use super::exchange::check_peer;
use super::pack::{pack_part_with, unpack_part_with, Vector};
use super::parallel::global_copier;
use super::pipelined::PipelinedExchange;
use crate::comm::Segments;
use crate::{Mpi, MpiError, Result};
use serde::Serialize;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// The chunk size [`SharedWindowExchange::default`] uses, in bytes (measured with
/// `herd mpi copy --window-chunk`, BENCHMARKS.md "Shared-window exchange (session 30)").
pub const DEFAULT_WINDOW_CHUNK_BYTES: usize = 1 << 20;

/// The slots per segment [`SharedWindowExchange::default`] uses.
pub const DEFAULT_SLOTS: usize = 4;

/// The largest segment [`SharedWindowExchange::default`] allocates per rank (larger
/// windows fall back to messages): 256 MiB.
pub const DEFAULT_MAX_WINDOW_BYTES: usize = 256 << 20;

/// Byte offsets in a segment: the two counters, each on its own pair of cache lines (the
/// adjacent-line prefetcher fetches pairs), and the first slot.
const PUBLISHED: usize = 0;
const CONSUMED: usize = 128;
const HEADER: usize = 256;
const LINE: usize = 64;

/// Which way an exchange went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Route {
    /// Through the pair's shared-memory window.
    SharedWindow,
    /// As chunk messages ([`super::pipelined`]): the peer is on another node.
    OtherNode,
    /// As chunk messages: the window this exchange needs is larger than
    /// [`SharedWindowExchange::max_window_bytes`], or it could not be allocated.
    NoWindow,
}

/// A strided block exchange with a peer rank through a shared-memory window when the peer
/// shares this node, and as a pipeline of chunk messages otherwise (module docs).
#[derive(Debug)]
pub struct SharedWindowExchange {
    slots: usize,
    max_window_bytes: usize,
    /// The fallback, which also fixes the chunk size.
    messages: PipelinedExchange,
}

impl Default for SharedWindowExchange {
    fn default() -> Self {
        SharedWindowExchange {
            slots: DEFAULT_SLOTS,
            max_window_bytes: DEFAULT_MAX_WINDOW_BYTES,
            messages: PipelinedExchange::new(DEFAULT_WINDOW_CHUNK_BYTES).expect("not 0"),
        }
    }
}

impl SharedWindowExchange {
    /// An exchange that cuts the packed block into chunks of at most `chunk_bytes` (at least
    /// one element each), with `slots` chunks in flight per rank. Errors: `chunk_bytes` or
    /// `slots` is 0.
    pub fn new(chunk_bytes: usize, slots: usize) -> Result<SharedWindowExchange> {
        if slots == 0 {
            return Err(MpiError::Invalid(
                "shared-window block exchange: the slot count must be at least 1 (it is 0)".into(),
            ));
        }
        Ok(SharedWindowExchange {
            slots,
            max_window_bytes: DEFAULT_MAX_WINDOW_BYTES,
            messages: PipelinedExchange::new(chunk_bytes)?,
        })
    }

    /// The same exchange with another limit on the segment allocated per rank, in bytes
    /// (exchanges whose window would be larger go as messages, [`Route::NoWindow`]).
    pub fn with_max_window_bytes(mut self, bytes: usize) -> SharedWindowExchange {
        self.max_window_bytes = bytes;
        self
    }

    /// The chunk size in bytes.
    pub fn chunk_bytes(&self) -> usize {
        self.messages.chunk_bytes()
    }

    /// The slots per segment.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The limit on the segment allocated per rank, in bytes.
    pub fn max_window_bytes(&self) -> usize {
        self.max_window_bytes
    }

    /// The packed ranges of the chunks `layout` is cut into (as [`PipelinedExchange::chunks`]).
    pub fn chunks(&self, layout: Vector) -> Result<Vec<Range<usize>>> {
        self.messages.chunks(layout)
    }

    /// The bytes of the segment each rank needs for `layout`: the header and `slots` slots
    /// of the longest chunk, each rounded up to whole cache lines.
    pub fn window_bytes(&self, layout: Vector) -> Result<usize> {
        let longest = self.chunks(layout)?.first().map_or(0, Range::len).max(1);
        longest
            .checked_mul(std::mem::size_of::<f64>())
            .and_then(|b| b.checked_next_multiple_of(LINE))
            .and_then(|b| b.checked_mul(self.slots))
            .and_then(|b| b.checked_add(HEADER))
            .ok_or_else(|| {
                MpiError::Invalid(format!(
                    "shared-window block exchange: {} slots of {longest} elements overflow usize",
                    self.slots
                ))
            })
    }

    /// Sends `layout`'s elements of `data` to `peer` and replaces them with the peer's (the
    /// result of the other exchanges), through the pair's shared window when the peer
    /// shares this node, as chunk messages on `tag` otherwise; returns the way it went.
    /// The first exchange with a peer (and one that needs a larger window) is collective
    /// over the pair: it makes the pair's communicator and window. Errors: `peer` is not
    /// another rank, `tag` is reserved, the layout overlaps itself or does not fit `data`,
    /// an MPI call failed, or the communicator thread stopped.
    pub fn exchange(
        &mut self,
        mpi: &Mpi,
        peer: usize,
        tag: i32,
        data: &mut [f64],
        layout: Vector,
    ) -> Result<Route> {
        check_peer(mpi, peer)?;
        crate::comm::check_tag(tag)?;
        layout.check("shared-window block exchange", data.len(), usize::MAX)?;
        let need = self.window_bytes(layout)?;
        if need > self.max_window_bytes {
            self.messages.exchange(mpi, peer, tag, data, layout)?;
            return Ok(Route::NoWindow);
        }
        let link = mpi.peer_link(peer);
        let mut link = link.lock().unwrap_or_else(|e| e.into_inner());
        let Some(seg) = link.window(mpi, peer, need, HEADER, self.slots as u64)? else {
            let route = if link.same_node() { Route::NoWindow } else { Route::OtherNode };
            drop(link);
            self.messages.exchange(mpi, peer, tag, data, layout)?;
            return Ok(route);
        };
        let parts = self.chunks(layout)?;
        let slot_bytes = (seg.bytes - HEADER) / self.slots / LINE * LINE;
        let ring = Ring::new(seg, self.slots);
        let mut moves = Moves { data, layout, parts: &parts, seg, slot_bytes };
        ring.exchange(parts.len(), &mut moves, &mut Backoff::default())
        // `link` (the lock) drops here: the window stays while the exchange used it
    }
}

/// One rank's four counters of the ring: its own two (written only by it) and the peer's.
struct Ring<'a, C> {
    my_published: &'a C,
    my_consumed: &'a C,
    peer_published: &'a C,
    peer_consumed: &'a C,
    slots: u64,
}

/// A counter of the ring: loaded with Acquire, stored with Release (an `AtomicU64` in the
/// window; loom's in the model test).
trait Counter {
    fn get(&self) -> u64;
    fn set(&self, v: u64);
}

impl Counter for AtomicU64 {
    fn get(&self) -> u64 {
        self.load(Ordering::Acquire)
    }
    fn set(&self, v: u64) {
        self.store(v, Ordering::Release)
    }
}

/// What the ring moves: chunk `k` of this exchange packed into this rank's slot, and the
/// peer's chunk `k` unpacked from the peer's slot.
trait Chunks {
    fn pack(&mut self, k: usize, slot: usize) -> Result<()>;
    fn unpack(&mut self, k: usize, slot: usize) -> Result<()>;
}

/// Waiting for the peer: spin, then yield (ranks may share cores), then sleep briefly
/// (the peer may be computing for long).
trait Idle {
    fn wait(&mut self);
}

impl<'a> Ring<'a, AtomicU64> {
    /// The counters in the two segments of `seg`.
    fn new(seg: Segments, slots: usize) -> Ring<'a, AtomicU64> {
        // SAFETY: both segments are at least HEADER bytes, 8-byte aligned (checked when the
        // window was allocated), and stay mapped while the caller holds the pair's link,
        // longer than the ring; the counters are only accessed atomically, by both ranks.
        unsafe {
            let at = |base: *mut u8, off: usize| &*(base.add(off) as *const AtomicU64);
            Ring {
                my_published: at(seg.mine, PUBLISHED),
                my_consumed: at(seg.mine, CONSUMED),
                peer_published: at(seg.theirs, PUBLISHED),
                peer_consumed: at(seg.theirs, CONSUMED),
                slots: slots as u64,
            }
        }
    }
}

impl<C: Counter> Ring<'_, C> {
    /// One exchange of `m` chunks each way (the protocol of the module docs).
    fn exchange(&self, m: usize, moves: &mut impl Chunks, idle: &mut impl Idle) -> Result<Route> {
        // the chunks this rank published so far (it is the only writer); it has consumed
        // as many of the peer's, since every exchange ends with all of them consumed
        let g0 = self.my_published.get();
        let k = self.slots;
        let mut next = 0;
        for c in 0..m {
            let g = g0 + c as u64;
            // 1. the slot's previous chunk (g − K) must have been read by the peer
            while g >= k && self.peer_consumed.get() < g - k + 1 {
                if !self.try_unpack(g0, c, &mut next, moves)? {
                    idle.wait();
                }
            }
            // 2.
            moves.pack(c, (g % k) as usize)?;
            self.my_published.set(g + 1);
            // 3. what has arrived of the chunks this rank has packed
            while self.try_unpack(g0, c + 1, &mut next, moves)? {}
        }
        while next < m {
            if !self.try_unpack(g0, m, &mut next, moves)? {
                idle.wait();
            }
        }
        Ok(Route::SharedWindow)
    }

    /// Unpacks the peer's chunk `next` if it is one of the `packed` this rank has packed
    /// and the peer has published it.
    fn try_unpack(&self, g0: u64, packed: usize, next: &mut usize, moves: &mut impl Chunks) -> Result<bool> {
        let g = g0 + *next as u64;
        if *next >= packed || self.peer_published.get() < g + 1 {
            return Ok(false);
        }
        moves.unpack(*next, (g % self.slots) as usize)?;
        self.my_consumed.set(g + 1);
        *next += 1;
        Ok(true)
    }
}

/// The packs and unpacks of one exchange between `data` and the window's slots.
struct Moves<'a> {
    data: &'a mut [f64],
    layout: Vector,
    parts: &'a [Range<usize>],
    seg: Segments,
    slot_bytes: usize,
}

impl Chunks for Moves<'_> {
    fn pack(&mut self, k: usize, slot: usize) -> Result<()> {
        let part = self.parts[k].clone();
        // SAFETY: the slot lies in this rank's segment (HEADER + slots × slot_bytes ≤ its
        // bytes, and a chunk has at most slot_bytes / 8 elements: the window was sized for
        // the longest), 8-byte aligned (slots are whole lines apart); by the ring's step 1
        // the peer has finished reading it and reads it again only after this chunk is
        // published, so nobody else accesses it while this slice lives.
        let slot = unsafe {
            std::slice::from_raw_parts_mut(
                self.seg.mine.add(HEADER + slot * self.slot_bytes) as *mut f64,
                part.len(),
            )
        };
        pack_part_with(global_copier(), slot, self.data, self.layout, part)
    }

    fn unpack(&mut self, k: usize, slot: usize) -> Result<()> {
        let part = self.parts[k].clone();
        // SAFETY: as in `pack`, for the peer's segment (same size and slots): by the ring's
        // step 3 the peer has published this chunk (Acquire) and writes the slot again only
        // after this rank has consumed it, so the slice is not written while it lives.
        let slot = unsafe {
            std::slice::from_raw_parts(
                self.seg.theirs.add(HEADER + slot * self.slot_bytes) as *const f64,
                part.len(),
            )
        };
        unpack_part_with(global_copier(), self.data, slot, self.layout, part)
    }
}

/// Spins 256 times, yields 4096 times, then sleeps 50 µs a round.
#[derive(Default)]
struct Backoff {
    rounds: u32,
}

impl Idle for Backoff {
    fn wait(&mut self) {
        self.rounds = self.rounds.saturating_add(1);
        if self.rounds < 256 {
            std::hint::spin_loop();
        } else if self.rounds < 256 + 4096 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_settings_are_checked() {
        let e = SharedWindowExchange::new(1 << 20, 0).unwrap_err().to_string();
        assert!(e.contains("slot count") && e.contains('0'), "{e}");
        let e = SharedWindowExchange::new(0, 4).unwrap_err().to_string();
        assert!(e.contains("chunk size"), "{e}");
        let x = SharedWindowExchange::new(1000, 3).unwrap();
        assert_eq!((x.chunk_bytes(), x.slots()), (1000, 3));
        // 125 elements = 1000 bytes, rounded up to 1024 per slot
        let l = Vector { count: 100, blocklen: 10, stride: 20 };
        assert_eq!(x.window_bytes(l).unwrap(), HEADER + 3 * 1024);
        // an empty layout still gets a slot of one line
        assert_eq!(x.window_bytes(Vector { count: 0, blocklen: 3, stride: 5 }).unwrap(), HEADER + 3 * 64);
        // one chunk of the whole block when the chunk is larger
        let big = SharedWindowExchange::new(1 << 40, 1).unwrap();
        assert_eq!(big.window_bytes(l).unwrap(), HEADER + 8000);
        assert_eq!(big.with_max_window_bytes(5).max_window_bytes(), 5);
        assert!(SharedWindowExchange::new(usize::MAX, usize::MAX)
            .unwrap()
            .window_bytes(Vector { count: 1, blocklen: usize::MAX / 16, stride: 0 })
            .is_err());
    }

    /// Two threads as the two ranks, over plain memory, with the real counters: many
    /// exchanges of changing data with few slots. Run with 1 slot (every chunk waits for
    /// the peer) and with more chunks than slots.
    #[test]
    fn ring_on_two_threads_moves_every_chunk_once_in_order() {
        use std::sync::Arc;
        for (slots, m) in [(1usize, 5usize), (2, 7), (3, 3), (4, 1), (2, 0)] {
            let segs: Arc<[[AtomicU64; 2]; 2]> = Arc::new(Default::default());
            let data: Arc<Vec<Vec<AtomicU64>>> =
                Arc::new((0..2).map(|_| (0..slots).map(|_| AtomicU64::new(0)).collect()).collect());
            let run = |me: usize| {
                let (segs, data) = (segs.clone(), data.clone());
                std::thread::spawn(move || {
                    let ring = Ring {
                        my_published: &segs[me][0],
                        my_consumed: &segs[me][1],
                        peer_published: &segs[1 - me][0],
                        peer_consumed: &segs[1 - me][1],
                        slots: slots as u64,
                    };
                    for round in 0..300u64 {
                        let mut mv = SlotMoves { me, round, data: &data, got: Vec::new() };
                        ring.exchange(m, &mut mv, &mut Backoff::default()).unwrap();
                        let want: Vec<u64> = (0..m as u64).map(|k| tag(1 - me, round, k)).collect();
                        assert_eq!(mv.got, want, "rank {me}, round {round}, {slots} slots");
                    }
                })
            };
            let (a, b) = (run(0), run(1));
            a.join().unwrap();
            b.join().unwrap();
        }
    }

    fn tag(rank: usize, round: u64, k: u64) -> u64 {
        (rank as u64) << 60 | round << 20 | k
    }

    /// Slots of one word per rank (relaxed: the ring's counters must order them).
    struct SlotMoves<'a> {
        me: usize,
        round: u64,
        data: &'a [Vec<AtomicU64>],
        got: Vec<u64>,
    }

    impl Chunks for SlotMoves<'_> {
        fn pack(&mut self, k: usize, slot: usize) -> Result<()> {
            self.data[self.me][slot].store(tag(self.me, self.round, k as u64), Ordering::Relaxed);
            Ok(())
        }
        fn unpack(&mut self, _k: usize, slot: usize) -> Result<()> {
            self.got.push(self.data[1 - self.me][slot].load(Ordering::Relaxed));
            Ok(())
        }
    }
}

#[cfg(all(test, loom))]
mod models {
    //! loom model of the ring: two threads as the two ranks make back-to-back exchanges of
    //! `m` chunks each through `K` slots whose contents are loom cells, so a write of a slot
    //! that is not ordered with the peer's read of it (or the reverse) is a data race loom
    //! reports; each rank checks that it read exactly the peer's chunks of that exchange, in
    //! order; a cycle of waits would be a deadlock loom reports. Weakened variants (Relaxed
    //! counters) must fail.
    use super::{Chunks, Counter, Idle, Ring};
    use crate::Result;
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::{AtomicU64, Ordering};
    use loom::sync::Arc;

    struct Flag {
        v: AtomicU64,
        load: Ordering,
        store: Ordering,
    }

    impl Counter for Flag {
        fn get(&self) -> u64 {
            self.v.load(self.load)
        }
        fn set(&self, v: u64) {
            self.v.store(v, self.store)
        }
    }

    /// Both ranks' counters and slots.
    struct Segs {
        published: [Flag; 2],
        consumed: [Flag; 2],
        slots: [Vec<UnsafeCell<u64>>; 2],
    }

    fn tag(rank: usize, round: u64, k: u64) -> u64 {
        (rank as u64) << 32 | round << 16 | k
    }

    struct Cells<'a> {
        me: usize,
        round: u64,
        segs: &'a Segs,
        got: Vec<u64>,
    }

    impl Chunks for Cells<'_> {
        fn pack(&mut self, k: usize, slot: usize) -> Result<()> {
            let v = tag(self.me, self.round, k as u64);
            // SAFETY: a loom cell: loom checks that no access to it races with this one.
            self.segs.slots[self.me][slot].with_mut(|p| unsafe { *p = v });
            Ok(())
        }
        fn unpack(&mut self, _k: usize, slot: usize) -> Result<()> {
            // SAFETY: as in `pack`.
            let v = self.segs.slots[1 - self.me][slot].with(|p| unsafe { *p });
            self.got.push(v);
            Ok(())
        }
    }

    struct Yield;
    impl Idle for Yield {
        fn wait(&mut self) {
            loom::thread::yield_now()
        }
    }

    fn side(segs: &Segs, me: usize, slots: usize, m: usize, rounds: u64) {
        let ring = Ring {
            my_published: &segs.published[me],
            my_consumed: &segs.consumed[me],
            peer_published: &segs.published[1 - me],
            peer_consumed: &segs.consumed[1 - me],
            slots: slots as u64,
        };
        for round in 0..rounds {
            let mut cells = Cells { me, round, segs, got: Vec::new() };
            ring.exchange(m, &mut cells, &mut Yield).unwrap();
            let want: Vec<u64> = (0..m as u64).map(|k| tag(1 - me, round, k)).collect();
            assert_eq!(cells.got, want, "rank {me}, round {round}");
        }
    }

    /// `slots` slots, `m` chunks an exchange, `rounds` exchanges; `load` / `store`: the
    /// counters' orderings (Acquire / Release in the real ring).
    fn model(slots: usize, m: usize, rounds: u64, load: Ordering, store: Ordering) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(3);
        b.check(move || {
            let flag = || Flag { v: AtomicU64::new(0), load, store };
            let cells = || (0..slots).map(|_| UnsafeCell::new(0)).collect::<Vec<_>>();
            let segs = Arc::new(Segs {
                published: [flag(), flag()],
                consumed: [flag(), flag()],
                slots: [cells(), cells()],
            });
            let s = segs.clone();
            let other = loom::thread::spawn(move || side(&s, 1, slots, m, rounds));
            side(&segs, 0, slots, m, rounds);
            other.join().unwrap();
        });
    }

    #[test]
    fn models_ring_one_slot_two_exchanges() {
        model(1, 2, 2, Ordering::Acquire, Ordering::Release);
    }

    #[test]
    fn models_ring_two_slots_three_chunks() {
        model(2, 3, 1, Ordering::Acquire, Ordering::Release);
    }

    #[test]
    #[should_panic(expected = "Causality violation")]
    fn models_ring_relaxed_publish_races() {
        model(1, 1, 1, Ordering::Acquire, Ordering::Relaxed);
    }

    #[test]
    #[should_panic(expected = "Causality violation")]
    fn models_ring_relaxed_wait_races() {
        model(1, 2, 1, Ordering::Relaxed, Ordering::Release);
    }
}
