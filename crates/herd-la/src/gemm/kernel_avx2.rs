//! The AVX2 micro-kernel: an `MR × NR` = `8 × 6` tile of `C` from a packed
//! `MR`-row sliver of `A` and `NR`-column sliver of `B`, for x86-64 CPUs
//! without AVX-512 (AMD Zen 1–3, Intel Haswell to Comet Lake: most of the
//! 64- and 128-core nodes in service).
//!
//! The tile lives in 12 `ymm` accumulators (two vectors of 4 `f64` per
//! column); each step of the depth loads the sliver's 8 values of `A`
//! (two vectors) and issues 12 fused multiply–adds against 6 values of
//! `B`, each broadcast once: 12 + 2 + 1 registers of the 16, no spills,
//! and 6 independent FMA pairs for the two FMA pipes (the shape of BLIS's
//! Haswell kernel, transposed for column-major `C`). Two loads of `A` and
//! six broadcasts per 12 FMAs leave the load ports spare (a `4 × 14` tile,
//! which would have kept `NR` equal to the AVX-512 kernel's, needs 15
//! loads per 14 FMAs). The write-back is the AVX-512 kernel's, 4 wide.
//!
//! Everything here requires AVX2 and FMA; [`Avx2`] is the proof that the
//! running CPU has them, so only code holding one calls the kernel.

use core::arch::x86_64::*;
use core::mem::MaybeUninit;

use faer::MatRef;

use super::micro::{check, combine_scratch, MicroKernel};
use super::pack::pack;

/// Rows of the micro-tile (two 4-wide vectors).
const MR: usize = 8;
/// Columns of the micro-tile.
const NR: usize = 6;
/// Steps of the depth ahead that the kernel prefetches its sliver of `A`
/// (one line per step): one thread, n = 3000, two batches of 5–6
/// alternating runs on a Zen 3 EPYC: 44.6 and 44.8 GFLOP/s median against
/// 41.6 and 43.8 without (8 and 16 steps: no better than none).
const PF: usize = 4;

/// Evidence that the running CPU supports AVX2 and FMA: only
/// [`Avx2::detect`] makes one, after checking at run time.
#[derive(Clone, Copy, Debug)]
pub(super) struct Avx2(());

impl Avx2 {
    /// `Some` when the CPU (and OS) support AVX2 and FMA.
    pub(super) fn detect() -> Option<Avx2> {
        (is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")).then_some(Avx2(()))
    }
}

const _: () = check::<Avx2>();

impl MicroKernel for Avx2 {
    const MR: usize = MR;
    const NR: usize = NR;
    /// A `256 × 6` sliver of `B` is 12 KiB of a 32 KiB L1.
    const KC: usize = 256;
    /// A `96 × 256` block of `A` is 192 KiB: under half of Zen 2/3's
    /// 512 KiB L2, three quarters of Haswell's 256 KiB.
    const MC: usize = 96;

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
        // SAFETY: `self` proves AVX2 and FMA; the pointer contract is the caller's.
        unsafe { tile(kc, a, b, alpha, beta, c, strides, size) }
    }

    fn pack_a<'d>(dst: &'d mut [MaybeUninit<f64>], x: MatRef<'_, f64>) -> &'d [f64] {
        pack::<MR>(dst, x)
    }

    fn pack_b<'d>(dst: &'d mut [MaybeUninit<f64>], x: MatRef<'_, f64>) -> &'d [f64] {
        pack::<NR>(dst, x)
    }
}

/// [`Avx2::tile`] (same contract), compiled for AVX2 and FMA.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2,fma")]
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
    let mut acc = [_mm256_setzero_pd(); 2 * NR];
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
            // (A hint: `wrapping_add` past the sliver's end reads nothing.)
            _mm_prefetch::<_MM_HINT_T0>(a.wrapping_add(PF * MR) as *const i8);
            let a0 = _mm256_loadu_pd(a);
            let a1 = _mm256_loadu_pd(a.add(4));
            for j in 0..NR {
                let bj = _mm256_broadcast_sd(&*b.add(j));
                acc[2 * j] = _mm256_fmadd_pd(a0, bj, acc[2 * j]);
                acc[2 * j + 1] = _mm256_fmadd_pd(a1, bj, acc[2 * j + 1]);
            }
            a = a.add(MR);
            b = b.add(NR);
        }
    }
    let va = _mm256_set1_pd(alpha);
    if rs == 1 && mr == MR && nr == NR {
        let vb = _mm256_set1_pd(beta);
        for j in 0..NR {
            // SAFETY: a whole tile with contiguous columns: `c + j·cs + 0..8`
            // is the tile's column `j`, writable (readable when `β ≠ 0`).
            unsafe {
                let col = c.offset(j as isize * cs);
                let (mut lo, mut hi) = (_mm256_mul_pd(va, acc[2 * j]), _mm256_mul_pd(va, acc[2 * j + 1]));
                if beta != 0.0 {
                    lo = _mm256_fmadd_pd(vb, _mm256_loadu_pd(col), lo);
                    hi = _mm256_fmadd_pd(vb, _mm256_loadu_pd(col.add(4)), hi);
                }
                _mm256_storeu_pd(col, lo);
                _mm256_storeu_pd(col.add(4), hi);
            }
        }
        return;
    }
    let mut scratch = [0.0f64; MR * NR];
    for j in 0..NR {
        // SAFETY: `scratch` holds `MR·NR` values, column `j` at `j·MR`.
        unsafe {
            _mm256_storeu_pd(scratch.as_mut_ptr().add(j * MR), _mm256_mul_pd(va, acc[2 * j]));
            _mm256_storeu_pd(scratch.as_mut_ptr().add(j * MR + 4), _mm256_mul_pd(va, acc[2 * j + 1]));
        }
    }
    // SAFETY: the caller's contract on `c` for the `mr × nr` tile.
    unsafe { combine_scratch(&scratch, MR, beta, c, (rs, cs), (mr, nr)) };
}
