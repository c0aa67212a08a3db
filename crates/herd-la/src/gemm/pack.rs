//! Packing a block of an operand into the contiguous slivers the
//! micro-kernel reads (GotoBLAS/BLIS style).
//!
//! [`pack`] copies an `rows × depth` view `x` (any strides, negative
//! included) into slivers of `R` rows: sliver `s` holds rows
//! `s·R .. s·R + R` of `x`, stored depth-major (`R` consecutive values per
//! step of the depth), rows past the end of `x` zero. `A`'s `mc × kc`
//! block is packed as is with `R = MR`; `B`'s `kc × nc` panel is packed as
//! `Bᵀ` with `R = NR`, which is the layout the kernel wants for `B`
//! (`NR` consecutive values of a row of `B` per step of the depth). The
//! zero padding lets the micro-kernel always run full `R`-wide tiles: the
//! padded rows only contribute to entries of `C` it never writes back.

use core::mem::MaybeUninit;

use faer::MatRef;

/// The length [`pack`] fills for slivers of `r` rows: `rows` rounded up to
/// `r`, times `depth`.
pub(super) fn packed_len(r: usize, rows: usize, depth: usize) -> usize {
    rows.next_multiple_of(r) * depth
}

/// Packs `x` (`rows × depth`) into `dst` as slivers of `R` rows (see the
/// module's documentation) and returns the packed values: the first
/// [`packed_len`]`(R, rows, depth)` of `dst`, all written
/// (`dst` may start uninitialised; it must be at least that long).
pub(super) fn pack<'d, const R: usize>(dst: &'d mut [MaybeUninit<f64>], x: MatRef<'_, f64>) -> &'d [f64] {
    let (rows, depth) = (x.nrows(), x.ncols());
    let (rs, cs) = (x.row_stride(), x.col_stride());
    if rows == 0 || depth == 0 {
        return &[];
    }
    let len = packed_len(R, rows, depth);
    let dst = &mut dst[..len];
    let src = x.as_ptr();
    for (s, sliver) in dst.chunks_exact_mut(R * depth).enumerate() {
        let row0 = s * R;
        let live = R.min(rows - row0);
        if live < R {
            sliver.iter_mut().for_each(|v| {
                v.write(0.0);
            });
        }
        // Element (i, p) of the view is at `src + i·rs + p·cs`.
        if rs == 1 {
            // Column-major rows: `live` contiguous values per depth step.
            for (p, step) in sliver.chunks_exact_mut(R).enumerate() {
                // SAFETY: rows `row0..row0 + live` and column `p` are inside
                // the `rows × depth` view, whose elements are readable; with
                // a row stride of 1 they are `live` consecutive values, and
                // `step` (a slice of our buffer, not of the view) has `R ≥ live`.
                unsafe {
                    let col = src.offset(row0 as isize + p as isize * cs);
                    if live == R {
                        // A constant length: inlined as vector moves, no call.
                        core::ptr::copy_nonoverlapping(col, step.as_mut_ptr().cast::<f64>(), R);
                    } else {
                        core::ptr::copy_nonoverlapping(col, step.as_mut_ptr().cast::<f64>(), live);
                    }
                }
            }
        } else {
            // Any other layout (a transposed operand, or `B` packed as
            // `Bᵀ`, has `cs == 1`): the sliver is written in order, reading
            // `live` rows of `x` side by side, each contiguous when
            // `cs == 1` — concurrent streams the prefetchers follow. Row
            // after row (a short run each, then a jump of the leading
            // dimension) was slower: in a `perf` profile of 2-thread
            // n = 2000 products (herd's and faer's alternating) packing
            // fell from 5.4 % to 4.5 % of the samples with this order.
            for p in 0..depth {
                let step = &mut sliver[p * R..p * R + live];
                for (i, v) in step.iter_mut().enumerate() {
                    // SAFETY: `row0 + i < rows` and `p < depth`: inside the view.
                    v.write(unsafe { *src.offset((row0 + i) as isize * rs + p as isize * cs) });
                }
            }
        }
    }
    // SAFETY: every sliver was written whole above: rows `0..live` of each
    // depth step by the copies, and all of it first when `live < R`.
    unsafe { core::slice::from_raw_parts(dst.as_ptr().cast::<f64>(), len) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random_matrix;

    /// Every packed value is the view's element or a padding zero, for
    /// column-major, transposed and strided sub-views with ragged edges.
    #[test]
    fn slivers_hold_the_view_and_zero_padding() {
        let big = random_matrix(40, 50, 3);
        let views = [
            big.as_ref().submatrix(1, 2, 23, 17),
            big.as_ref().submatrix(1, 2, 23, 17).transpose(),
            big.as_ref().submatrix(0, 0, 16, 9),
            big.as_ref().subrows(3, 1),
            big.as_ref().submatrix(5, 5, 30, 30).reverse_rows(),
        ];
        for x in views {
            let (rows, depth) = (x.nrows(), x.ncols());
            let len = packed_len(16, rows, depth);
            let mut dst = vec![MaybeUninit::new(f64::NAN); len + 3];
            let packed = pack::<16>(&mut dst, x).to_vec();
            assert_eq!(packed.len(), len);
            // SAFETY: `dst` was initialised with NaN and `pack` only writes values.
            let dst: Vec<f64> = dst.iter().map(|v| unsafe { v.assume_init() }).collect();
            assert_eq!(
                dst[..len].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                packed.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            for s in 0..rows.div_ceil(16) {
                for p in 0..depth {
                    for i in 0..16 {
                        let got = dst[s * 16 * depth + p * 16 + i];
                        let want = if s * 16 + i < rows { x[(s * 16 + i, p)] } else { 0.0 };
                        assert_eq!(got.to_bits(), want.to_bits(), "{rows}x{depth} s={s} p={p} i={i}");
                    }
                }
            }
            assert!(dst[len..].iter().all(|v| v.is_nan()), "wrote past packed_len");
        }
    }
}
