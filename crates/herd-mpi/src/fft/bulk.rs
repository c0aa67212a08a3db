//! The bulk-synchronous 2-D FFT (blue-horizon §8's "naïve" version): all local rows are
//! FFT'd (each group of rows packed into the send buffer right after its FFT, as the
//! overlapped version does, so that the two differ only in the overlap), one all-to-all
//! moves every block, the received blocks are transposed, and the rows of the transposed
//! output are FFT'd. Nothing overlaps: the all-to-all waits for every row FFT, and the
//! transpose waits for the whole all-to-all.

use super::local::{fft_rows, Direction, SharedMut, C64};
use super::transpose::{pack, unpack_transpose, ChunkShape};
use super::Fft2d;
use crate::error::Result;

/// Transforms `rows` (this rank's slab, overwritten with its row FFTs) into `out` (this
/// rank's slab of the transposed result).
pub(crate) fn transform(
    fft: &mut Fft2d<'_>,
    dir: Direction,
    rows: &mut [C64],
    out: &mut [C64],
) -> Result<()> {
    let (n, m, p) = (fft.slab.n, fft.slab.m(), fft.slab.ranks);
    let shape = ChunkShape { n, m, p, k0: 0, h: m };
    let (mut send, recv) = fft.bulk_buffers.take(0, shape.len());
    let view = SharedMut::new(&mut send);
    fft_rows(&fft.rows, dir, rows, n, 0..m, |r, data| {
        // SAFETY: `send` has shape.len() elements and lives until after this loop; each group
        // of rows packs only its own rows' segments.
        unsafe { pack(shape, r, data, view) }
    });
    let (send, recv) = fft.mpi.ialltoall_into(send, recv)?.wait()?;
    unpack_transpose(shape, &recv, out);
    fft.bulk_buffers.put(0, send, recv);
    fft_rows(&fft.rows, dir, out, n, 0..m, |_, _| {});
    Ok(())
}
