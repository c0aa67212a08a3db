//! The overlapped 2-D FFT (blue-horizon §8.2, the "granularized steps" made a software
//! pipeline). This rank's `m` rows are cut into `K` chunks of about `m/K` consecutive rows.
//! Chunk `k` is row-FFT'd and packed by the compute participants (the herd pool), then its
//! all-to-all is handed to the communicator thread (`MPI_Ialltoall`, progressed there by
//! `MPI_Testsome`) and the compute participants go on at once:
//!
//! ```text
//! compute:  FFT+pack 0 | FFT+pack 1 | T 0 | FFT+pack 2 | T 1 | … | FFT+pack K-1 | T K-2 | T K-1 | column FFTs
//! comm:                 [ a2a 0 ...........]  [ a2a 1 .........]       [ a2a K-1 ......]
//! ```
//!
//! (`T k`: the local transpose of chunk `k` into the output.) While chunk `k` is on the
//! wire, chunk `k+1` is FFT'd and chunk `k-1` transposed. The second-dimension FFTs need every
//! row of the first dimension (a column of the output takes one element from each of the
//! `n` input rows), so they start when the last chunk has arrived and been transposed; only
//! the last chunk's all-to-all (`1/K` of the volume) is exposed.
//!
//! Chunking by rows (rather than by output columns) is what makes the first FFT and the
//! exchange overlap: a row is complete after its own FFT, so its blocks can leave at once;
//! chunking the exchange by output columns instead would start communicating only after all
//! row FFTs. `K` = [`super::DEFAULT_CHUNKS`] by default: the exposed tail shrinks as `1/K`
//! while each exchange stays large (for n = 4096 on 2 ranks a chunk is 256 rows, 8 MiB per
//! rank pair) so that per-collective latency stays negligible.

use super::local::{fft_rows, Direction, SharedMut, C64};
use super::transpose::{pack, unpack_transpose, ChunkShape};
use super::Fft2d;
use crate::error::Result;
use crate::Pending;

/// The chunks of `m` rows into `k` parts (`k <= m`), as even as possible.
pub(crate) fn chunks(n: usize, m: usize, p: usize, k: usize) -> Vec<ChunkShape> {
    (0..k)
        .map(|i| {
            let (k0, k1) = (i * m / k, (i + 1) * m / k);
            ChunkShape { n, m, p, k0, h: k1 - k0 }
        })
        .collect()
}

type InFlight = (usize, ChunkShape, Pending<(Vec<C64>, Vec<C64>)>);

/// Transforms `rows` (this rank's slab, overwritten with its row FFTs) into `out` (this
/// rank's slab of the transposed result) with `fft.chunks()` chunks.
pub(crate) fn transform(
    fft: &mut Fft2d<'_>,
    dir: Direction,
    rows: &mut [C64],
    out: &mut [C64],
) -> Result<()> {
    let (n, m, p) = (fft.slab.n, fft.slab.m(), fft.slab.ranks);
    let shapes = chunks(n, m, p, fft.chunks.min(m));
    let mut in_flight: Option<InFlight> = None;
    for (k, &shape) in shapes.iter().enumerate() {
        let (mut send, recv) = fft.chunk_buffers.take(k, shape.len());
        let view = SharedMut::new(&mut send);
        fft_rows(&fft.rows, dir, rows, n, shape.k0..shape.k0 + shape.h, |r, data| {
            // SAFETY: `send` has shape.len() elements and lives until after this loop; each
            // group of rows packs only its own rows' segments.
            unsafe { pack(shape, r, data, view) }
        });
        let next = fft.mpi.ialltoall_into(send, recv)?;
        // Chunk k is on its way; meanwhile transpose chunk k-1 (then FFT chunk k+1).
        if let Some(prev) = in_flight.replace((k, shape, next)) {
            finish(fft, prev, out)?;
        }
    }
    if let Some(last) = in_flight.take() {
        finish(fft, last, out)?;
    }
    fft_rows(&fft.rows, dir, out, n, 0..m, |_, _| {});
    Ok(())
}

/// Waits for a chunk's all-to-all, transposes it into `out` and keeps its buffers.
fn finish(fft: &mut Fft2d<'_>, (k, shape, pending): InFlight, out: &mut [C64]) -> Result<()> {
    let (send, recv) = pending.wait()?;
    unpack_transpose(shape, &recv, out);
    fft.chunk_buffers.put(k, send, recv);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn chunks_cover_the_rows() {
        for (m, k) in [(10usize, 3usize), (2048, 8), (5, 5), (7, 1)] {
            let c = super::chunks(m * 2, m, 2, k);
            assert_eq!(c.len(), k);
            assert_eq!(c[0].k0, 0);
            assert!(c.windows(2).all(|w| w[0].k0 + w[0].h == w[1].k0));
            assert_eq!(c[k - 1].k0 + c[k - 1].h, m);
            assert!(c.iter().all(|s| s.h >= m / k && s.h <= m / k + 1));
        }
    }
}
