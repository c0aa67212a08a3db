//! The AVX-512 micro-kernel: a `MR × NR` = `16 × 14` tile of `C` from a
//! packed `MR`-row sliver of `A` and `NR`-column sliver of `B`.
//!
//! The tile lives in 28 `zmm` accumulators (two vectors of 8 `f64` per
//! column); each step of the depth loads the sliver's 16 values of `A`
//! (two vectors) and issues 28 fused multiply–adds, each against one value
//! of `B` broadcast from memory (an embedded broadcast operand). 28 + 2 +
//! 1 registers of the 32: no spills, and 14 independent FMA pairs hide the
//! FMA latency on two FMA ports. The tile is then written back as
//! `C ← α·AB + β·C` (`β = 0` never reads `C`): with vector loads and
//! stores when the tile is whole and `C`'s columns are contiguous, through
//! a scratch tile otherwise (edges, row-major or strided `C`).
//!
//! Everything here requires AVX-512F; [`Avx512`] is the proof that the
//! running CPU has it, so only code holding one calls the kernel.

use core::arch::x86_64::*;
use core::mem::MaybeUninit;

use faer::MatRef;

use super::micro::{check, combine_scratch, MicroKernel};
use super::pack::pack;

/// Rows of the micro-tile (two 8-wide vectors).
const MR: usize = 16;
/// Columns of the micro-tile.
const NR: usize = 14;

/// Evidence that the running CPU supports AVX-512F: only
/// [`Avx512::detect`] makes one, after checking at run time.
#[derive(Clone, Copy, Debug)]
pub(super) struct Avx512(());

impl Avx512 {
    /// `Some` when the CPU (and OS) support AVX-512F.
    pub(super) fn detect() -> Option<Avx512> {
        is_x86_feature_detected!("avx512f").then_some(Avx512(()))
    }
}

const _: () = check::<Avx512>();

impl MicroKernel for Avx512 {
    const MR: usize = MR;
    const NR: usize = NR;
    /// A `384 × 14` sliver of `B` (42 KiB) is reused from L1 (48 KiB on the
    /// Xeon measured) by the whole inner loop. On that Xeon (2 MiB L2 per
    /// core), one thread, n = 2000: `kc = 384, mc = 320` ran 5–20 % faster
    /// than `256 × 480`, and no slower than `512 × 240`, `448 × 256` or
    /// `192 × 960`.
    const KC: usize = 384;
    /// `mc × kc` is 576 KiB, under a third of a 2 MiB L2. It was 320
    /// (960 KiB): on the 2-vCPU Xeon, one thread, the tiled Cholesky's
    /// `C −= A·Bᵀ` on square tiles of 288 and 320 (one block of `A` of the
    /// whole tile) ran at 53–60 GFLOP/s against 75–95 with 192 (two
    /// blocks), and 256, 336 and 384 at about the same speed; the whole
    /// n = 2000 product at 83–92 against 80–87 GFLOP/s (three alternating
    /// runs), n = 2000 and 4000 on two threads within the noise either way.
    const MC: usize = 192;

    #[inline]
    unsafe fn tile(
        self,
        kc: usize,
        a: *const f64,
        b: *const f64,
        alpha: f64,
        beta: f64,
        c: *mut f64,
        strides: (isize, isize),
        size: (usize, usize),
    ) {
        // SAFETY: `self` proves AVX-512F; the pointer contract is the caller's.
        unsafe { tile(kc, a, b, alpha, beta, c, strides, size) }
    }

    fn pack_a<'d>(dst: &'d mut [MaybeUninit<f64>], x: MatRef<'_, f64>) -> &'d [f64] {
        pack::<MR>(dst, x)
    }

    fn pack_b<'d>(dst: &'d mut [MaybeUninit<f64>], x: MatRef<'_, f64>) -> &'d [f64] {
        pack::<NR>(dst, x)
    }
}

/// [`Avx512::tile`] (same contract), compiled for AVX-512F.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
unsafe fn tile(
    kc: usize,
    a: *const f64,
    b: *const f64,
    alpha: f64,
    beta: f64,
    c: *mut f64,
    (rs, cs): (isize, isize),
    (mr, nr): (usize, usize),
) {
    let mut acc = [_mm512_setzero_pd(); 2 * NR];
    // Warm the tile of C's cache lines while the depth loop runs.
    if rs == 1 {
        for j in 0..nr {
            let col = c.wrapping_offset(j as isize * cs);
            _mm_prefetch::<_MM_HINT_T0>(col as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(col.wrapping_add(MR - 1) as *const i8);
        }
    }
    let (mut a, mut b) = (a, b);
    for _ in 0..kc {
        // SAFETY: the slivers hold `kc` steps of `MR` (`NR`) values; `a`
        // and `b` advance by one step per iteration.
        unsafe {
            let a0 = _mm512_loadu_pd(a);
            let a1 = _mm512_loadu_pd(a.add(8));
            for j in 0..NR {
                let bj = _mm512_set1_pd(*b.add(j));
                acc[2 * j] = _mm512_fmadd_pd(a0, bj, acc[2 * j]);
                acc[2 * j + 1] = _mm512_fmadd_pd(a1, bj, acc[2 * j + 1]);
            }
            a = a.add(MR);
            b = b.add(NR);
        }
    }
    let va = _mm512_set1_pd(alpha);
    if rs == 1 && mr == MR && nr == NR {
        let vb = _mm512_set1_pd(beta);
        for j in 0..NR {
            // SAFETY: a whole tile with contiguous columns: `c + j·cs + 0..16`
            // is the tile's column `j`, writable (readable when `β ≠ 0`).
            unsafe {
                let col = c.offset(j as isize * cs);
                let (mut lo, mut hi) = (_mm512_mul_pd(va, acc[2 * j]), _mm512_mul_pd(va, acc[2 * j + 1]));
                if beta != 0.0 {
                    lo = _mm512_fmadd_pd(vb, _mm512_loadu_pd(col), lo);
                    hi = _mm512_fmadd_pd(vb, _mm512_loadu_pd(col.add(8)), hi);
                }
                _mm512_storeu_pd(col, lo);
                _mm512_storeu_pd(col.add(8), hi);
            }
        }
        return;
    }
    let mut scratch = [0.0f64; MR * NR];
    for j in 0..NR {
        // SAFETY: `scratch` holds `MR·NR` values, column `j` at `j·MR`.
        unsafe {
            _mm512_storeu_pd(scratch.as_mut_ptr().add(j * MR), _mm512_mul_pd(va, acc[2 * j]));
            _mm512_storeu_pd(scratch.as_mut_ptr().add(j * MR + 8), _mm512_mul_pd(va, acc[2 * j + 1]));
        }
    }
    // SAFETY: the caller's contract on `c` for the `mr × nr` tile.
    unsafe { combine_scratch(&scratch, MR, beta, c, (rs, cs), (mr, nr)) };
}
