//! The machine's copy bandwidth as STREAM measures it: STREAM's copy kernel `c[i] = a[i]`
//! over `f64` arrays, on every participant of a herd pool with a static block partition
//! (OpenMP's `schedule(static)`), the arrays first touched in parallel by the same
//! partition, and 2 × 8 × N bytes counted per pass. The kernel is written in Rust (rustc
//! turns the loop into a `memcpy` call, as gcc -O3 does with STREAM's C loop).

use herd::Pool;
use serde::Serialize;
use std::time::Instant;

/// One STREAM-copy measurement.
#[derive(Clone, Debug, Serialize)]
pub struct StreamCopy {
    /// Elements per array.
    pub n: usize,
    /// Participants.
    pub threads: usize,
    /// GB/s (10⁹ bytes) of every timed pass, in order.
    pub samples_gbs: Vec<f64>,
    /// The best pass (STREAM's own figure).
    pub best_gbs: f64,
    /// The median pass.
    pub median_gbs: f64,
}

/// Arrays for the kernel, first touched by the participants that copy them.
pub struct StreamArrays {
    a: Vec<f64>,
    c: Vec<f64>,
}

/// Address of an array that participants write disjoint blocks of.
#[derive(Clone, Copy)]
struct Shared(usize);

impl StreamArrays {
    /// `a` and `c` of `n` elements on `pool`, `a[i] = 1 + i mod 7`, `c = 0`.
    pub fn new(pool: &Pool, n: usize) -> StreamArrays {
        // zeroed pages are mapped lazily: the first write below touches them
        let mut a = vec![0.0f64; n];
        let mut c = vec![0.0f64; n];
        let (pa, pc) = (Shared(a.as_mut_ptr() as usize), Shared(c.as_mut_ptr() as usize));
        pool.broadcast(|ctx| {
            let r = ctx.block(n);
            // SAFETY: a and c hold n elements and outlive the region; participants write
            // the disjoint blocks `ctx.block(n)`.
            let (a, c) = unsafe {
                (
                    std::slice::from_raw_parts_mut((pa.0 as *mut f64).add(r.start), r.len()),
                    std::slice::from_raw_parts_mut((pc.0 as *mut f64).add(r.start), r.len()),
                )
            };
            for (k, (x, y)) in a.iter_mut().zip(c.iter_mut()).enumerate() {
                *x = 1.0 + ((r.start + k) % 7) as f64;
                *y = 0.0;
            }
        });
        StreamArrays { a, c }
    }

    /// One pass of `c[i] = a[i]` on every participant of `pool`.
    pub fn copy(&mut self, pool: &Pool) {
        let n = self.a.len();
        let (pa, pc) = (Shared(self.a.as_ptr() as usize), Shared(self.c.as_mut_ptr() as usize));
        pool.broadcast(|ctx| {
            let r = ctx.block(n);
            // SAFETY: as in `new`: disjoint blocks of two live arrays of n elements; a is
            // only read.
            let (a, c) = unsafe {
                (
                    std::slice::from_raw_parts((pa.0 as *const f64).add(r.start), r.len()),
                    std::slice::from_raw_parts_mut((pc.0 as *mut f64).add(r.start), r.len()),
                )
            };
            // STREAM's copy kernel as STREAM writes it (`c[j] = a[j]`), not
            // `copy_from_slice` (memcpy): this is the baseline herd's copy
            // is measured against.
            #[allow(clippy::manual_memcpy)]
            for i in 0..a.len() {
                c[i] = a[i];
            }
        });
    }

    /// Whether `c` equals `a`.
    pub fn verify(&self) -> bool {
        self.a == self.c
    }
}

/// STREAM copy with `n`-element arrays on `pool`: one untimed pass, then `reps` timed.
/// Returns `None` if the copy is wrong.
pub fn stream_copy(pool: &Pool, n: usize, reps: usize) -> Option<StreamCopy> {
    let mut arrays = StreamArrays::new(pool, n);
    arrays.copy(pool);
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        arrays.copy(pool);
        samples.push(2.0 * 8.0 * n as f64 / t.elapsed().as_secs_f64() / 1e9);
    }
    if !arrays.verify() {
        return None;
    }
    let mut sorted = samples.clone();
    sorted.sort_by(f64::total_cmp);
    Some(StreamCopy {
        n,
        threads: pool.num_threads(),
        best_gbs: *sorted.last().unwrap_or(&0.0),
        median_gbs: crate::measure::median(&sorted),
        samples_gbs: samples,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn stream_copy_copies_and_counts() {
        let pool = herd::Pool::builder().num_threads(2).build().unwrap();
        let s = super::stream_copy(&pool, 100_001, 3).unwrap();
        assert_eq!(s.samples_gbs.len(), 3);
        assert!(s.best_gbs >= s.median_gbs && s.median_gbs > 0.0);
    }
}
