//! The strided block exchange of [`super::exchange`] made a software pipeline (the
//! blue-horizon paper §8.2's granularized steps, as the overlapped FFT does): the packed
//! form of the layout (`count × blocklen` elements) is cut into chunks of about
//! `chunk_bytes`; every chunk's receive is posted first, then chunk `k` is packed and sent
//! while the chunks before it are on the wire, and each received chunk is unpacked as soon
//! as it has arrived (in order, and only once this rank has packed the same chunk, since
//! the peer's data replaces this rank's own):
//!
//! ```text
//! compute:  post recvs | pack 0 | pack 1 | pack 2 (unpack 0 if in) | … | pack K-1 | unpack … K-1
//! comm:                  [ send 0 / recv 0 ] [ send 1 / recv 1 ] …       [ send K-1 / recv K-1 ]
//! ```
//!
//! A chunk is small enough to stay in cache between its pack and its send, and between its
//! arrival and its unpack. The chunk buffers belong to a [`PipelinedExchange`] and are
//! reused by its next exchange, so after the first call no page of them is faulted in
//! again. The sender packs straight into the buffer the communicator thread sends
//! ([`Mpi::isend`] takes the `Vec`), and the receiver unpacks straight from the buffer MPI
//! received into ([`Mpi::irecv_into`]): the only copies are herd's pack, MPI's transfer and
//! herd's unpack.
//!
//! Chunk boundaries are packed indices, so they may fall inside a block: a layout of one
//! long block is pipelined too. Both ranks must exchange the same layout shape with the
//! same chunk size (their chunk messages must match, as MPI counts must).

use super::exchange::check_peer;
use super::pack::{pack_part_with, unpack_part_with, Vector};
use super::parallel::global_copier;
use crate::{Mpi, MpiError, Pending, Result};
use std::ops::Range;

/// The chunk size [`PipelinedExchange::default`] uses, in bytes. Measured on the 2-core
/// VM with `herd mpi copy --chunk` (BENCHMARKS.md, "Pipelined strided exchange").
pub const DEFAULT_CHUNK_BYTES: usize = 1 << 20;

/// A pipelined strided block exchange with a peer rank, keeping its chunk buffers between
/// exchanges.
#[derive(Debug)]
pub struct PipelinedExchange {
    chunk_bytes: usize,
    /// Chunk buffers not in use, each with room for one chunk.
    free: Vec<Vec<f64>>,
}

impl Default for PipelinedExchange {
    fn default() -> Self {
        PipelinedExchange { chunk_bytes: DEFAULT_CHUNK_BYTES, free: Vec::new() }
    }
}

impl PipelinedExchange {
    /// An exchange that cuts the packed block into chunks of at most `chunk_bytes` (at least
    /// one element each). Error: `chunk_bytes` is 0.
    pub fn new(chunk_bytes: usize) -> Result<PipelinedExchange> {
        if chunk_bytes == 0 {
            return Err(MpiError::Invalid(
                "pipelined block exchange: the chunk size must be at least 1 byte (it is 0)".into(),
            ));
        }
        Ok(PipelinedExchange { chunk_bytes, free: Vec::new() })
    }

    /// The chunk size in bytes.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }

    /// The packed ranges of the chunks `layout` is cut into: as even as possible, each of
    /// at most `chunk_bytes` (and at least one element), covering `0..count × blocklen` in
    /// order; none for an empty layout.
    pub fn chunks(&self, layout: Vector) -> Result<Vec<Range<usize>>> {
        Ok(parts(layout.packed_len()?, self.chunk_elems()))
    }

    fn chunk_elems(&self) -> usize {
        (self.chunk_bytes / std::mem::size_of::<f64>()).max(1)
    }

    /// Sends `layout`'s elements of `data` to `peer` and replaces them with the peer's
    /// (the result of [`super::exchange::exchange_packed`] and
    /// [`super::exchange::exchange_datatype`]), chunk by chunk on `tag`. Errors: `peer` is
    /// not another rank, `tag` is reserved, the layout overlaps itself or does not fit
    /// `data`, or the communicator thread stopped.
    pub fn exchange(
        &mut self,
        mpi: &Mpi,
        peer: usize,
        tag: i32,
        data: &mut [f64],
        layout: Vector,
    ) -> Result<()> {
        check_peer(mpi, peer)?;
        layout.check("pipelined block exchange", data.len(), usize::MAX)?;
        let parts = self.chunks(layout)?;
        // the first chunk is the longest
        let room = parts.first().map_or(0, Range::len);
        let mut recvs: Vec<Option<Pending<Vec<f64>>>> = Vec::with_capacity(parts.len());
        for p in &parts {
            let buf = self.take(p.len(), room);
            recvs.push(Some(mpi.irecv_into(peer, tag, buf)?));
        }
        let copier = global_copier();
        let mut sends = Vec::with_capacity(parts.len());
        // the next chunk to unpack; chunks before it are in place
        let mut next = 0;
        for (k, p) in parts.iter().enumerate() {
            let mut buf = self.take(p.len(), room);
            pack_part_with(copier, &mut buf, data, layout, p.clone())?;
            sends.push(mpi.isend(peer, tag, buf)?);
            // unpack what has arrived of the chunks this rank has already packed
            while next <= k && recvs[next].as_ref().is_some_and(Pending::is_done) {
                self.unpack(&mut recvs[next], data, layout, &parts[next])?;
                next += 1;
            }
        }
        while next < parts.len() {
            self.unpack(&mut recvs[next], data, layout, &parts[next])?;
            next += 1;
        }
        for s in sends {
            self.free.push(s.wait()?);
        }
        Ok(())
    }

    /// Waits for a chunk's receive, unpacks it into `data` and keeps its buffer.
    fn unpack(
        &mut self,
        recv: &mut Option<Pending<Vec<f64>>>,
        data: &mut [f64],
        layout: Vector,
        part: &Range<usize>,
    ) -> Result<()> {
        let got = recv.take().expect("each chunk is unpacked once").wait()?;
        unpack_part_with(global_copier(), data, &got, layout, part.clone())?;
        self.free.push(got);
        Ok(())
    }

    /// A buffer of `len` elements, reusing a free one (whose pages are already in); a new
    /// one gets room for `room` elements (this exchange's longest chunk).
    fn take(&mut self, len: usize, room: usize) -> Vec<f64> {
        let mut buf = self.free.pop().unwrap_or_else(|| Vec::with_capacity(room));
        buf.resize(len, 0.0);
        buf
    }
}

/// One pipelined exchange with a fresh [`PipelinedExchange`] of `chunk_bytes` (its buffers
/// are dropped afterwards; keep a `PipelinedExchange` to reuse them).
pub fn exchange_pipelined(
    mpi: &Mpi,
    peer: usize,
    tag: i32,
    data: &mut [f64],
    layout: Vector,
    chunk_bytes: usize,
) -> Result<()> {
    PipelinedExchange::new(chunk_bytes)?.exchange(mpi, peer, tag, data, layout)
}

/// `0..n` cut into `ceil(n / max)` consecutive ranges as even as possible (each at most
/// `max`, `max ≥ 1`).
fn parts(n: usize, max: usize) -> Vec<Range<usize>> {
    let k = n.div_ceil(max);
    if k == 0 {
        return Vec::new();
    }
    let (q, r) = (n / k, n % k);
    let start = |i: usize| i * q + i.min(r);
    (0..k).map(|i| start(i)..start(i + 1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_in_order_within_the_size() {
        for n in [0usize, 1, 2, 7, 8, 9, 100, 1023, 1024, 1025, 1 << 20] {
            for max in [1usize, 2, 3, 8, 100, 1 << 17, usize::MAX] {
                let p = parts(n, max);
                assert_eq!(p.len(), n.div_ceil(max), "n {n} max {max}");
                let mut at = 0;
                for r in &p {
                    assert_eq!(r.start, at, "n {n} max {max}: {p:?}");
                    assert!(!r.is_empty() && r.len() <= max, "n {n} max {max}: {r:?}");
                    at = r.end;
                }
                assert_eq!(at, n, "n {n} max {max}");
                if let (Some(a), Some(b)) = (p.iter().map(|r| r.len()).min(), p.iter().map(|r| r.len()).max())
                {
                    assert!(b - a <= 1, "uneven parts for n {n} max {max}");
                }
            }
        }
    }

    #[test]
    fn chunk_size_is_checked_and_rounded_to_elements() {
        let e = PipelinedExchange::new(0).unwrap_err().to_string();
        assert!(e.contains("chunk size") && e.contains("0"), "{e}");
        let l = Vector { count: 10, blocklen: 3, stride: 5 };
        // 3 bytes is less than an f64: one element a chunk
        assert_eq!(PipelinedExchange::new(3).unwrap().chunks(l).unwrap().len(), 30);
        assert_eq!(PipelinedExchange::new(8 * 7).unwrap().chunks(l).unwrap().len(), 5);
        assert_eq!(PipelinedExchange::new(1 << 30).unwrap().chunks(l).unwrap(), vec![0..30]);
        assert!(PipelinedExchange::default()
            .chunks(Vector { count: 0, blocklen: 3, stride: 5 })
            .unwrap()
            .is_empty());
    }
}
