//! The distributed 2-D FFT (copy-pack-overlap-blue-horizon.txt §8): an `n × n` complex
//! matrix distributed by rows ([`Slab`]), transformed by row FFTs, an all-to-all transpose
//! and row FFTs again — bulk-synchronously ([`Fft2d::forward_bulk`]) or with the all-to-all
//! of each chunk of rows overlapped with the FFTs of the next on the communicator thread
//! ([`Fft2d::forward_overlapped`]) — and FFTW's own MPI 2-D FFT as the anchor ([`fftw`]).
//!
//! **Layout.** Input: rank `r` holds rows `r·m .. (r+1)·m` (`m = n/P`) of `x`, row-major,
//! `m · n` elements. Output (all three implementations, FFTW with
//! `FFTW_MPI_TRANSPOSED_OUT`): the **transposed** result — rank `r` holds rows
//! `r·m .. (r+1)·m` of `Yᵀ`, i.e. `out[c·n + k1] = Y[k1, r·m + c]`, where
//! `Y[k1, k2] = Σ x[j1, j2] e^{-2πi (j1 k1 + j2 k2)/n}`. The inverse transforms take that
//! transposed layout and give back the normal one, unnormalized (`n² · x`).
//! Algorithm and pipeline: `README.md` beside this file.

mod bulk;
pub mod fftw;
mod local;
mod overlapped;
mod slab;
mod transpose;

pub use local::{Direction, C64};
pub use slab::Slab;

use crate::error::{MpiError, Result};
use crate::Mpi;
use local::RowFft;

/// The default number of chunks of the overlapped transform (see `overlapped.rs`): the
/// exposed last exchange is `1/8` of the volume, and each chunk's exchange is still large.
pub const DEFAULT_CHUNKS: usize = 8;

/// Which of herd's two distributed algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Row FFTs, one all-to-all, transpose, row FFTs.
    Bulk,
    /// In chunks: each chunk's all-to-all overlaps the next chunk's FFTs.
    Overlapped,
}

/// Send and receive buffers of the all-to-alls, kept between transforms so that repeated
/// transforms neither allocate nor fault in fresh pages.
#[derive(Default)]
struct Buffers {
    slots: Vec<(Vec<C64>, Vec<C64>)>,
}

impl Buffers {
    /// The buffers of chunk `k`, `len` elements each (allocated the first time).
    fn take(&mut self, k: usize, len: usize) -> (Vec<C64>, Vec<C64>) {
        if self.slots.len() <= k {
            self.slots.resize_with(k + 1, Default::default);
        }
        let (mut s, mut r) = std::mem::take(&mut self.slots[k]);
        s.resize(len, C64::default());
        r.resize(len, C64::default());
        (s, r)
    }

    /// Returns chunk `k`'s buffers.
    fn put(&mut self, k: usize, send: Vec<C64>, recv: Vec<C64>) {
        self.slots[k] = (send, recv);
    }
}

/// A distributed `n × n` complex 2-D FFT on this rank's slab, computed by the herd pool's
/// participants (`herd::global()`) with the communicator thread of `mpi` moving the data.
/// Every rank makes one with the same `n` and chunk count and calls the same transforms in
/// the same order (they are collective).
pub struct Fft2d<'m> {
    mpi: &'m Mpi,
    slab: Slab,
    rows: RowFft,
    chunks: usize,
    bulk_buffers: Buffers,
    chunk_buffers: Buffers,
}

impl<'m> Fft2d<'m> {
    /// Plans the transform of order `n` over all ranks of `mpi`. Errors: `n == 0` or `n` not
    /// divisible by the number of ranks.
    pub fn new(mpi: &'m Mpi, n: usize) -> Result<Fft2d<'m>> {
        let slab = Slab::new(n, mpi.size(), mpi.rank())?;
        Ok(Fft2d {
            mpi,
            slab,
            rows: RowFft::new(n),
            chunks: DEFAULT_CHUNKS,
            bulk_buffers: Buffers::default(),
            chunk_buffers: Buffers::default(),
        })
    }

    /// Sets the number of chunks `K` of the overlapped transform (at least 1; more than
    /// `n/P` is taken as `n/P`, one row per chunk).
    pub fn with_chunks(mut self, chunks: usize) -> Result<Fft2d<'m>> {
        if chunks == 0 {
            return Err(MpiError::Invalid(
                "2-D FFT: chunks = 0; the overlapped transform needs at least 1".into(),
            ));
        }
        self.chunks = chunks;
        Ok(self)
    }

    /// The chunk count the overlapped transform uses (after clamping to `n/P`).
    pub fn chunks(&self) -> usize {
        self.chunks.min(self.slab.m())
    }

    /// This rank's slab.
    pub fn slab(&self) -> Slab {
        self.slab
    }

    /// The forward transform, bulk-synchronous. `rows` is this rank's slab of `x` (it is
    /// overwritten with its row FFTs); the result is this rank's slab of `Yᵀ`.
    pub fn forward_bulk(&mut self, rows: &mut [C64]) -> Result<Vec<C64>> {
        self.transform(Algorithm::Bulk, Direction::Forward, rows)
    }

    /// The forward transform, overlapped. Same arguments and result as
    /// [`Fft2d::forward_bulk`] (bit for bit: the same FFTs on the same data).
    pub fn forward_overlapped(&mut self, rows: &mut [C64]) -> Result<Vec<C64>> {
        self.transform(Algorithm::Overlapped, Direction::Forward, rows)
    }

    /// The inverse of the forward transforms (unnormalized): `input` is this rank's slab of
    /// `Yᵀ` (overwritten), the result this rank's slab of `n² · x`.
    pub fn inverse(&mut self, alg: Algorithm, input: &mut [C64]) -> Result<Vec<C64>> {
        self.transform(alg, Direction::Inverse, input)
    }

    /// Transforms `input` into a new buffer.
    pub fn transform(&mut self, alg: Algorithm, dir: Direction, input: &mut [C64]) -> Result<Vec<C64>> {
        let mut out = vec![C64::default(); self.slab.local_len()];
        self.transform_into(alg, dir, input, &mut out)?;
        Ok(out)
    }

    /// Transforms `input` (overwritten with its first-dimension FFTs) into `out` (every
    /// element written), both `n/P · n` elements. Collective.
    pub fn transform_into(
        &mut self,
        alg: Algorithm,
        dir: Direction,
        input: &mut [C64],
        out: &mut [C64],
    ) -> Result<()> {
        self.slab.check_len("the input", input.len())?;
        self.slab.check_len("the output", out.len())?;
        match alg {
            Algorithm::Bulk => bulk::transform(self, dir, input, out),
            Algorithm::Overlapped => overlapped::transform(self, dir, input, out),
        }
    }
}

/// Floating-point operations of an `n × n` complex FFT by the usual convention,
/// `5 · n² · log2(n²)`.
pub fn flops(n: usize) -> f64 {
    let nn = (n as f64) * (n as f64);
    5.0 * nn * nn.log2()
}
