//! What herd's packed product (`packed.rs`) needs of a micro-kernel: the
//! shape of its tile of `C`, the cache blocking that suits it, the packing
//! of its slivers, and the tile update itself. One implementation per
//! instruction set, each behind a proof that the running CPU has it:
//! [`Avx512`](super::kernel_avx512::Avx512) (16 × 14) and
//! [`Avx2`](super::kernel_avx2::Avx2) (8 × 6).

use core::mem::MaybeUninit;

use faer::MatRef;

/// Columns of a packed panel of `B` at most, for every kernel (a multiple
/// of each kernel's `NR`): 12 MiB with `kc = 384`, held in L3.
pub(super) const NC: usize = 4032;

/// The largest `MR × NR` of any kernel: the scratch tiles are this long.
pub(super) const MAX_TILE: usize = 16 * 14;

/// A micro-kernel of herd's packed product; see the module documentation.
pub(super) trait MicroKernel: Copy + core::fmt::Debug {
    /// Rows of the micro-tile: the height of a packed sliver of `A`.
    const MR: usize;
    /// Columns of the micro-tile: the width of a packed sliver of `B`.
    const NR: usize;
    /// Depth of a packed slice at most (a `KC × NR` sliver of `B` stays in
    /// L1 across the inner loop).
    const KC: usize;
    /// Rows of a packed block of `A` at most (a multiple of `MR`; the
    /// `MC × KC` block stays in L2).
    const MC: usize;

    /// `C[0..mr, 0..nr] ← α·(Ā·B̄) + β·C[0..mr, 0..nr]` for a packed
    /// `MR × kc` sliver `a` of `A` and `kc × NR` sliver `b` of `B` (the
    /// layouts of [`pack`](super::pack)); `C`'s element `(i, j)` is at
    /// `c + i·rs + j·cs`; `β = 0` never reads `C`.
    ///
    /// # Safety
    /// `a` and `b` are readable for `kc·MR` and `kc·NR` values;
    /// `mr ≤ MR`, `nr ≤ NR`; every `c + i·rs + j·cs` with `i < mr`,
    /// `j < nr` is writable, readable when `β ≠ 0`, and aliases neither
    /// sliver.
    #[allow(clippy::too_many_arguments)]
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
    );

    /// [`pack`](super::pack::pack) in slivers of `MR` rows (a block of `A`).
    fn pack_a<'d>(dst: &'d mut [MaybeUninit<f64>], x: MatRef<'_, f64>) -> &'d [f64];

    /// [`pack`](super::pack::pack) in slivers of `NR` rows (a panel of `B`,
    /// passed transposed).
    fn pack_b<'d>(dst: &'d mut [MaybeUninit<f64>], x: MatRef<'_, f64>) -> &'d [f64];
}

/// `C[i, j] ← ab(i, j) + β·C[i, j]` (`β = 0`: without reading `C`) for
/// `i < mr`, `j < nr`, where `ab(i, j) = scratch[j·ld + i]` is a kernel's
/// tile of `α·A·B` stored column-major: the write-back of edge tiles and
/// of row-major or strided `C`.
///
/// # Safety
/// Every `c + i·rs + j·cs` with `i < mr`, `j < nr` is writable (readable
/// when `β ≠ 0`) and does not alias `scratch`; `scratch` holds `nr` columns of
/// `ld ≥ mr` values.
pub(super) unsafe fn combine_scratch(
    scratch: &[f64],
    ld: usize,
    beta: f64,
    c: *mut f64,
    (rs, cs): (isize, isize),
    (mr, nr): (usize, usize),
) {
    for j in 0..nr {
        for i in 0..mr {
            // SAFETY: `i < mr`, `j < nr`: an element of the tile.
            unsafe {
                let dst = c.offset(i as isize * rs + j as isize * cs);
                let ab = scratch[j * ld + i];
                *dst = if beta == 0.0 { ab } else { ab + beta * *dst };
            }
        }
    }
}

/// The step that cuts `len` into `ceil(len / max)` nearly equal chunks,
/// rounded up to a multiple of `align` (`max` is one): no thin last chunk.
pub(super) fn balanced_step(len: usize, max: usize, align: usize) -> usize {
    let parts = len.div_ceil(max).max(1);
    len.div_ceil(parts).next_multiple_of(align).min((max / align).max(1) * align)
}

/// The depth and width steps `(kc, nc)` of the panels of `B` for a block
/// of `n` columns and inner dimension `k` with the kernel `K`: the packed
/// product (`packed.rs`) walks `B` in these, and a column group's shared
/// panels (`shared_panels.rs`) are cut the same way.
pub(super) fn panel_steps<K: MicroKernel>(n: usize, k: usize) -> (usize, usize) {
    (balanced_step(k, K::KC, 1), balanced_step(n, NC, K::NR))
}

/// Checks at compile time that a kernel's constants fit the packed
/// product: whole slivers in a block and a panel, a tile in the scratch.
pub(super) const fn check<K: MicroKernel>() {
    assert!(K::MC.is_multiple_of(K::MR) && NC.is_multiple_of(K::NR) && K::MR * K::NR <= MAX_TILE);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_steps_cover_without_thin_chunks() {
        assert_eq!(balanced_step(4000, 256, 1), 250);
        assert_eq!(balanced_step(4000, 384, 1), 364);
        assert_eq!(balanced_step(2000, 480, 16), 400);
        assert_eq!(balanced_step(2000, 320, 16), 288);
        assert_eq!(balanced_step(4000, 4032, 14), 4004);
        assert_eq!(balanced_step(4000, 4032, 6), 4002);
        assert_eq!(balanced_step(5, 480, 16), 16);
        assert_eq!(balanced_step(1, 256, 1), 1);
        for len in 1..2000 {
            for (max, align) in [(384, 1), (192, 16), (96, 8), (NC, 14), (NC, 6), (28, 14), (7, 1)] {
                let step = balanced_step(len, max, align);
                assert!(
                    step >= 1 && step <= max.max(align) && step.is_multiple_of(align),
                    "{len} {max} {align}"
                );
                assert!(len.div_ceil(step) <= len.div_ceil(max).max(1) + 1, "{len} {max} {align}: {step}");
            }
        }
    }
}
