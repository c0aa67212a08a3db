//! Pack and unpack of strided blocks (an `MPI_Type_vector` layout): `count` blocks of
//! `blocklen` elements whose starts are `stride` elements apart, to and from a contiguous
//! buffer of `count × blocklen` elements.
//!
//! Large layouts are split over herd participants by the copy rule of [`super::parallel`]
//! applied to the packed bytes (boundaries on the contiguous buffer's cache lines, which
//! may fall inside a block); small ones run on the caller.

use super::parallel::{global_copier, Copier, LINE};
use crate::{MpiError, Result};
use serde::Serialize;
use std::ops::Range;

/// `count` blocks of `blocklen` elements, block `k` starting at element `k × stride`
/// (MPI_Type_vector's arguments, in elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Vector {
    /// Number of blocks.
    pub count: usize,
    /// Elements per block.
    pub blocklen: usize,
    /// Elements between the starts of consecutive blocks.
    pub stride: usize,
}

impl Vector {
    /// Elements of the packed (contiguous) form: `count × blocklen`.
    pub fn packed_len(&self) -> Result<usize> {
        self.count.checked_mul(self.blocklen).ok_or_else(|| {
            MpiError::Invalid(format!("vector layout {self:?}: count × blocklen overflows usize"))
        })
    }

    /// Elements the strided form spans: `(count − 1) × stride + blocklen` (0 when `count` is 0).
    pub fn extent(&self) -> Result<usize> {
        if self.count == 0 {
            return Ok(0);
        }
        (self.count - 1).checked_mul(self.stride).and_then(|x| x.checked_add(self.blocklen)).ok_or_else(
            || {
                MpiError::Invalid(format!(
                    "vector layout {self:?}: (count − 1) × stride + blocklen overflows usize"
                ))
            },
        )
    }

    /// Checks the layout against a strided buffer of `strided` elements and a packed one
    /// of `packed` elements; returns the packed length.
    pub fn check(&self, what: &str, strided: usize, packed: usize) -> Result<usize> {
        if self.count > 1 && self.blocklen > self.stride {
            return Err(MpiError::Invalid(format!(
                "{what}: blocklen {} > stride {} with count {}: blocks would overlap; a vector layout needs blocklen ≤ stride",
                self.blocklen, self.stride, self.count
            )));
        }
        let (need_packed, extent) = (self.packed_len()?, self.extent()?);
        if strided < extent {
            return Err(MpiError::Invalid(format!(
                "{what}: the strided buffer has {strided} elements, the layout {self:?} spans {extent} ((count − 1) × stride + blocklen)"
            )));
        }
        if packed < need_packed {
            return Err(MpiError::Invalid(format!(
                "{what}: the packed buffer has {packed} elements, the layout {self:?} packs {need_packed} (count × blocklen)"
            )));
        }
        Ok(need_packed)
    }
}

/// Copies the strided blocks of `src` into the first `count × blocklen` elements of `dst`,
/// in parallel on herd's global pool when large.
pub fn pack<T: Copy + Send + Sync>(dst: &mut [T], src: &[T], layout: Vector) -> Result<()> {
    pack_with(global_copier(), dst, src, layout)
}

/// Copies the first `count × blocklen` elements of `src` into the strided blocks of `dst`
/// (the inverse of [`pack`]); elements between the blocks are left as they are.
pub fn unpack<T: Copy + Send + Sync>(dst: &mut [T], src: &[T], layout: Vector) -> Result<()> {
    unpack_with(global_copier(), dst, src, layout)
}

/// [`pack`] on `copier`'s pool.
pub fn pack_with<T: Copy + Send + Sync>(
    copier: &Copier<'_>,
    dst: &mut [T],
    src: &[T],
    layout: Vector,
) -> Result<()> {
    let n = layout.check("pack", src.len(), dst.len())?;
    pack_part_with(copier, dst, src, layout, 0..n)
}

/// Packs only the elements `part` of the packed form (a range of `0..count × blocklen`,
/// which may start or end inside a block) into the first `part.len()` elements of `dst`:
/// one chunk of a pipelined exchange ([`super::pipelined`]).
pub fn pack_part_with<T: Copy + Send + Sync>(
    copier: &Copier<'_>,
    dst: &mut [T],
    src: &[T],
    layout: Vector,
    part: Range<usize>,
) -> Result<()> {
    move_part(copier, Sides::Pack { strided: src, packed: dst }, layout, part)
}

/// [`unpack`] on `copier`'s pool.
pub fn unpack_with<T: Copy + Send + Sync>(
    copier: &Copier<'_>,
    dst: &mut [T],
    src: &[T],
    layout: Vector,
) -> Result<()> {
    let n = layout.check("unpack", dst.len(), src.len())?;
    unpack_part_with(copier, dst, src, layout, 0..n)
}

/// The inverse of [`pack_part_with`]: the first `part.len()` elements of `src` are the
/// packed elements `part` of the layout and go to their places in `dst`.
pub fn unpack_part_with<T: Copy + Send + Sync>(
    copier: &Copier<'_>,
    dst: &mut [T],
    src: &[T],
    layout: Vector,
    part: Range<usize>,
) -> Result<()> {
    move_part(copier, Sides::Unpack { strided: dst, packed: src }, layout, part)
}

/// The buffers of a pack (strided → packed) or an unpack (packed → strided): the one
/// written is the `&mut`.
enum Sides<'a, T> {
    Pack { strided: &'a [T], packed: &'a mut [T] },
    Unpack { strided: &'a mut [T], packed: &'a [T] },
}

/// Moves the packed elements `part` of `layout` between the strided buffer and the packed
/// one (which holds packed index k at `k − part.start`), in parallel by the copy plan.
fn move_part<T: Copy + Send + Sync>(
    copier: &Copier<'_>,
    sides: Sides<'_, T>,
    layout: Vector,
    part: Range<usize>,
) -> Result<()> {
    let (what, to_packed, strided, strided_len, packed, packed_len) = match sides {
        Sides::Pack { strided, packed } => (
            "pack",
            true,
            strided.as_ptr() as usize,
            strided.len(),
            packed.as_mut_ptr() as usize,
            packed.len(),
        ),
        Sides::Unpack { strided, packed } => (
            "unpack",
            false,
            strided.as_mut_ptr() as usize,
            strided.len(),
            packed.as_ptr() as usize,
            packed.len(),
        ),
    };
    let n = layout.check(what, strided_len, usize::MAX)?;
    check_part(what, &part, n, packed_len)?;
    run::<T>(copier, part.clone(), packed, |r| {
        // SAFETY: `check` proved the strided buffer spans the layout, `check_part` that
        // `part` lies in 0..n and the packed buffer holds part.len() elements (packed index
        // k at k − part.start); the side written is the one `sides` borrowed `&mut`; the
        // participants get disjoint subranges of `part`, which address disjoint packed
        // elements and (blocklen ≤ stride, checked) disjoint strided ones, so no element is
        // written twice; the two buffers (one `&mut`, one `&`) do not overlap.
        unsafe { blocks::<T>(r, part.start, layout, strided as *mut T, packed as *mut T, to_packed) }
    });
    Ok(())
}

/// `part` must lie in the packed range `0..n`, and the contiguous buffer (of `packed`
/// elements) must hold it.
fn check_part(what: &str, part: &Range<usize>, n: usize, packed: usize) -> Result<()> {
    if part.start > part.end || part.end > n {
        return Err(MpiError::Invalid(format!(
            "{what}: the part {}..{} is not a range inside the layout's {n} packed elements",
            part.start, part.end
        )));
    }
    if packed < part.len() {
        return Err(MpiError::Invalid(format!(
            "{what}: the packed buffer has {packed} elements, the part {}..{} has {}",
            part.start,
            part.end,
            part.len()
        )));
    }
    Ok(())
}

/// Splits the packed range `part` (elements of `T`, held from address `packed_addr`) by
/// the copy plan for its bytes, boundaries on the cache lines of the packed buffer, and runs
/// `work` on each share (packed indices, within `part`).
fn run<T>(copier: &Copier<'_>, part: Range<usize>, packed_addr: usize, work: impl Fn(Range<usize>) + Sync) {
    let size = std::mem::size_of::<T>();
    let head = (LINE - packed_addr % LINE) % LINE;
    let plan = copier.plan(part.len() * size, head);
    let base = part.start;
    copier.run_ranges(&plan, part.len(), size, |r| work(r.start + base..r.end + base));
}

/// Moves packed elements `r` between the strided buffer at `strided` and the packed one
/// at `packed`, which holds packed index `k` at `packed + (k − base)` (`to_packed`:
/// strided → packed, else packed → strided).
///
/// # Safety
/// Both buffers must hold the elements `layout` and `r` address (`r.start ≥ base`), the
/// side written must be writable (it came from a `&mut`), and no other thread may access
/// the elements written.
unsafe fn blocks<T: Copy>(
    r: Range<usize>,
    base: usize,
    layout: Vector,
    strided: *mut T,
    packed: *mut T,
    to_packed: bool,
) {
    let (bl, stride) = (layout.blocklen, layout.stride);
    if bl == 0 || r.is_empty() {
        return;
    }
    // one run of `len` elements at packed index `k`
    let piece = |k: usize, len: usize| {
        let s = strided.add(k / bl * stride + k % bl);
        let p = packed.add(k - base);
        if to_packed {
            std::ptr::copy_nonoverlapping(s, p, len)
        } else {
            std::ptr::copy_nonoverlapping(p, s, len)
        }
    };
    let mut k = r.start;
    if !k.is_multiple_of(bl) {
        let take = (bl - k % bl).min(r.end - k);
        piece(k, take);
        k += take;
    }
    let full = (r.end - k) / bl;
    if full > 0 {
        let (s, p) = (strided.add(k / bl * stride), packed.add(k - base));
        match bl {
            1 => whole::<T, 1>(s, p, stride, full, to_packed),
            2 => whole::<T, 2>(s, p, stride, full, to_packed),
            3 => whole::<T, 3>(s, p, stride, full, to_packed),
            4 => whole::<T, 4>(s, p, stride, full, to_packed),
            8 => whole::<T, 8>(s, p, stride, full, to_packed),
            16 => whole::<T, 16>(s, p, stride, full, to_packed),
            _ => {
                for b in 0..full {
                    let (sb, pb) = (s.add(b * stride), p.add(b * bl));
                    if to_packed {
                        std::ptr::copy_nonoverlapping(sb, pb, bl)
                    } else {
                        std::ptr::copy_nonoverlapping(pb, sb, bl)
                    }
                }
            }
        }
        k += full * bl;
    }
    if k < r.end {
        piece(k, r.end - k);
    }
}

/// `full` whole blocks of the constant length `B` (so that each block is a fixed-size move
/// the compiler inlines instead of a `memcpy` call).
///
/// # Safety
/// As [`blocks`]: `s` addresses `full` blocks `stride` apart and `p` `full × B` elements.
#[inline(always)]
unsafe fn whole<T: Copy, const B: usize>(s: *mut T, p: *mut T, stride: usize, full: usize, to_packed: bool) {
    let (s, p) = (s, p as *mut [T; B]);
    if to_packed {
        for b in 0..full {
            p.add(b).write_unaligned((s.add(b * stride) as *const [T; B]).read_unaligned());
        }
    } else {
        for b in 0..full {
            (s.add(b * stride) as *mut [T; B]).write_unaligned(p.add(b).read_unaligned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference<T: Copy>(src: &[T], l: Vector) -> Vec<T> {
        (0..l.count).flat_map(|k| src[k * l.stride..k * l.stride + l.blocklen].iter().copied()).collect()
    }

    fn round_trip<T: Copy + Send + Sync + PartialEq + std::fmt::Debug>(
        copier: &Copier<'_>,
        l: Vector,
        make: impl Fn(usize) -> T,
        fill: T,
    ) {
        let ext = l.extent().unwrap();
        let src: Vec<T> = (0..ext + 3).map(&make).collect();
        let want = reference(&src, l);
        // a packed buffer one element longer than needed, starting misaligned
        let mut packed = vec![fill; want.len() + 2];
        pack_with(copier, &mut packed[1..], &src, l).unwrap();
        assert_eq!(&packed[1..=want.len()], &want[..], "pack {l:?}");
        assert_eq!(packed[want.len() + 1], fill, "pack wrote past count × blocklen");
        let mut back = vec![fill; ext + 3];
        unpack_with(copier, &mut back, &packed[1..], l).unwrap();
        for (i, (b, s)) in back.iter().zip(&src).enumerate() {
            let inside =
                l.stride > 0 && i < ext && i % l.stride.max(1) < l.blocklen || l.count == 1 && i < l.blocklen;
            if inside && l.count > 0 {
                assert_eq!(b, s, "unpack {l:?} at {i}");
            } else {
                assert_eq!(*b, fill, "unpack {l:?} touched the gap at {i}");
            }
        }
    }

    #[test]
    fn pack_unpack_match_the_reference() {
        let pool = herd::Pool::builder().num_threads(2).build().unwrap();
        let c = Copier::new(&pool);
        let layouts = [
            Vector { count: 0, blocklen: 5, stride: 9 },
            Vector { count: 3, blocklen: 0, stride: 4 },
            Vector { count: 1, blocklen: 7, stride: 0 },
            Vector { count: 5, blocklen: 4, stride: 4 },
            Vector { count: 17, blocklen: 3, stride: 5 },
            Vector { count: 1000, blocklen: 1, stride: 3 },
            Vector { count: 999, blocklen: 2, stride: 2 },
            Vector { count: 40_000, blocklen: 8, stride: 11 },
            Vector { count: 333, blocklen: 16, stride: 17 },
            Vector { count: 3000, blocklen: 129, stride: 300 },
            Vector { count: 7, blocklen: 100_001, stride: 100_003 },
        ];
        for l in layouts {
            round_trip(&c, l, |i| i as f64 + 0.5, -1.0);
            round_trip(&c, l, |i| i as u8 | 1, 0u8);
            round_trip(&c, l, |i| [i as u16, 3, 9], [0u16; 3]);
            round_trip(&c, l, |i| (i as u128) << 70 | 1, 0u128);
        }
    }

    #[test]
    fn parts_pack_and_unpack_like_the_whole() {
        let pool = herd::Pool::builder().num_threads(2).build().unwrap();
        let c = Copier::new(&pool);
        let layouts = [
            Vector { count: 1, blocklen: 100_000, stride: 0 },
            Vector { count: 17, blocklen: 3, stride: 5 },
            Vector { count: 999, blocklen: 2, stride: 2 },
            Vector { count: 3000, blocklen: 129, stride: 300 },
            Vector { count: 40_000, blocklen: 8, stride: 11 },
        ];
        for l in layouts {
            let (ext, n) = (l.extent().unwrap(), l.packed_len().unwrap());
            let src: Vec<f64> = (0..ext).map(|i| i as f64 + 0.25).collect();
            let want = reference(&src, l);
            // parts that start and end inside blocks, of a single element, and the whole
            for len in [1usize, 7, 64, 1000, 65_537, n] {
                let mut back = vec![-1.0f64; ext];
                let mut at = 0;
                while at < n {
                    let part = at..(at + len).min(n);
                    let mut buf = vec![-2.0f64; part.len() + 1];
                    pack_part_with(&c, &mut buf, &src, l, part.clone()).unwrap();
                    assert_eq!(&buf[..part.len()], &want[part.clone()], "pack part {part:?} of {l:?}");
                    assert_eq!(buf[part.len()], -2.0, "pack part {part:?} wrote past its length");
                    unpack_part_with(&c, &mut back, &buf, l, part.clone()).unwrap();
                    at = part.end;
                }
                let mut whole = vec![-1.0f64; ext];
                unpack_with(&c, &mut whole, &want, l).unwrap();
                assert_eq!(back, whole, "unpack in parts of {len} of {l:?}");
            }
        }
        let l = Vector { count: 4, blocklen: 2, stride: 3 };
        let (mut d, s) = (vec![0.0f64; 8], vec![1.0f64; 11]);
        let e = pack_part_with(&c, &mut d, &s, l, 3..9).unwrap_err().to_string();
        assert!(e.contains("3..9") && e.contains("8 packed"), "{e}");
        let e = pack_part_with(&c, &mut d[..2], &s, l, 1..4).unwrap_err().to_string();
        assert!(e.contains("packed buffer has 2") && e.contains("1..4 has 3"), "{e}");
        let mut t = vec![0.0f64; 11];
        let e = unpack_part_with(&c, &mut t, &d[..1], l, 6..8).unwrap_err().to_string();
        assert!(e.starts_with("unpack") && e.contains("6..8 has 2"), "{e}");
    }

    #[test]
    fn bad_layouts_are_refused_by_name() {
        let mut d = vec![0.0f64; 100];
        let s = vec![1.0f64; 100];
        let e = pack(&mut d, &s, Vector { count: 2, blocklen: 5, stride: 4 }).unwrap_err().to_string();
        assert!(e.contains("blocklen 5 > stride 4"), "{e}");
        let e = pack(&mut d, &s, Vector { count: 11, blocklen: 5, stride: 10 }).unwrap_err().to_string();
        assert!(e.contains("strided buffer has 100") && e.contains("105"), "{e}");
        let e = pack(&mut d[..10], &s, Vector { count: 3, blocklen: 5, stride: 10 }).unwrap_err().to_string();
        assert!(e.contains("packed buffer has 10") && e.contains("15"), "{e}");
        let e =
            unpack(&mut d[..20], &s, Vector { count: 3, blocklen: 5, stride: 10 }).unwrap_err().to_string();
        assert!(e.starts_with("unpack") && e.contains("strided buffer has 20"), "{e}");
        let e = Vector { count: usize::MAX, blocklen: 2, stride: 2 }.packed_len().unwrap_err().to_string();
        assert!(e.contains("overflows"), "{e}");
    }
}
