//! The local FFTs: every row of a row-major block transformed in place with rustfft, the
//! rows divided among the herd pool's participants. The rustfft plans (forward and inverse
//! of length `n`) are made once per [`super::Fft2d`] and shared by every call; each
//! participant keeps its scratch buffer in a thread-local.

use num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;

/// Complex double, the element type of every transform here.
pub type C64 = Complex<f64>;

/// Forward (`e^{-2πi jk/n}`) or inverse (`e^{+2πi jk/n}`, unnormalized) transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `Y[k] = Σ_j x[j] e^{-2πi jk/n}`.
    Forward,
    /// `x[j] = Σ_k Y[k] e^{+2πi jk/n}` (not divided by the length).
    Inverse,
}

/// The cached rustfft plans of one length.
#[derive(Clone)]
pub(crate) struct RowFft {
    forward: Arc<dyn Fft<f64>>,
    inverse: Arc<dyn Fft<f64>>,
}

impl RowFft {
    /// Plans both directions of length `n` once.
    pub(crate) fn new(n: usize) -> RowFft {
        let mut planner = FftPlanner::<f64>::new();
        RowFft { forward: planner.plan_fft_forward(n), inverse: planner.plan_fft_inverse(n) }
    }

    fn plan(&self, dir: Direction) -> &Arc<dyn Fft<f64>> {
        match dir {
            Direction::Forward => &self.forward,
            Direction::Inverse => &self.inverse,
        }
    }

    /// Transforms `rows` (a whole number of rows of length `n`) in place on this thread.
    pub(crate) fn rows_serial(&self, dir: Direction, rows: &mut [C64]) {
        if rows.is_empty() {
            return;
        }
        let fft = self.plan(dir);
        thread_local! {
            static SCRATCH: RefCell<Vec<C64>> = const { RefCell::new(Vec::new()) };
        }
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let need = fft.get_inplace_scratch_len();
            if s.len() < need {
                s.resize(need, C64::default());
            }
            fft.process_with_scratch(rows, &mut s[..need]);
        });
    }
}

/// A raw view of a buffer whose disjoint parts are written by different participants.
#[derive(Clone, Copy)]
pub(crate) struct SharedMut {
    ptr: *mut C64,
    len: usize,
}

// SAFETY: a SharedMut is only turned into slices through `slice`, whose callers guarantee
// that concurrently used ranges are disjoint (each participant gets its own rows/columns).
unsafe impl Send for SharedMut {}
// SAFETY: as above.
unsafe impl Sync for SharedMut {}

impl SharedMut {
    /// A view of `buf`, which must outlive every use of the view.
    pub(crate) fn new(buf: &mut [C64]) -> SharedMut {
        SharedMut { ptr: buf.as_mut_ptr(), len: buf.len() }
    }

    /// The elements `r`.
    ///
    /// # Safety
    /// `r` lies inside the buffer, the buffer is alive, and no other live slice obtained
    /// from this view overlaps `r`.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn slice(&self, r: Range<usize>) -> &mut [C64] {
        assert!(r.start <= r.end && r.end <= self.len, "{r:?} outside 0..{}", self.len);
        // SAFETY: in bounds (checked above); exclusive by the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(r.start), r.end - r.start) }
    }
}

/// Transforms rows `rows` of the row-major buffer `data` (rows of length `n`) in place, in
/// parallel on the herd pool; `after(row_range, rows_slice)` runs on the same participant
/// right after each group of rows is transformed (the overlapped FFT packs there, while the
/// rows are in cache).
pub(crate) fn fft_rows<F>(
    plan: &RowFft,
    dir: Direction,
    data: &mut [C64],
    n: usize,
    rows: Range<usize>,
    after: F,
) where
    F: Fn(Range<usize>, &[C64]) + Sync,
{
    assert!(rows.end * n <= data.len());
    let view = SharedMut::new(data);
    // Groups of rows small enough to stay in L2 while they are packed, large enough that
    // a group is many microseconds of work.
    let group = (16_384 / n.max(1)).clamp(1, 64);
    let groups = (rows.len()).div_ceil(group);
    let start = rows.start;
    herd::global().for_each(0..groups, herd::Schedule::Adaptive, |g| {
        let lo = start + g * group;
        let hi = (lo + group).min(rows.end);
        // SAFETY: group g covers rows lo..hi, disjoint from every other group's rows; `data`
        // is borrowed mutably for the whole loop.
        let block = unsafe { view.slice(lo * n..hi * n) };
        plan.rows_serial(dir, block);
        after(lo..hi, block);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_a_direct_dft() {
        let n = 12;
        let rows = 5;
        let x: Vec<C64> = (0..rows * n).map(|i| C64::new((i as f64).sin(), (i as f64 * 0.3).cos())).collect();
        let mut y = x.clone();
        let plan = RowFft::new(n);
        fft_rows(&plan, Direction::Forward, &mut y, n, 1..rows, |_, _| {});
        assert_eq!(&y[..n], &x[..n], "row 0 is outside the range");
        for r in 1..rows {
            for k in 0..n {
                let mut s = C64::default();
                for j in 0..n {
                    let a = -2.0 * std::f64::consts::PI * (j * k) as f64 / n as f64;
                    s += x[r * n + j] * C64::new(a.cos(), a.sin());
                }
                assert!((s - y[r * n + k]).norm() < 1e-12, "row {r} k {k}");
            }
        }
        fft_rows(&plan, Direction::Inverse, &mut y, n, 1..rows, |_, _| {});
        for i in n..rows * n {
            assert!((y[i] / n as f64 - x[i]).norm() < 1e-14);
        }
    }
}
