//! What one [`Gemm`](super::Gemm) call packed: the test-visible measure of
//! packing traffic (issue 15).
//!
//! Each block adds up its own counts in locals and stores them once, in a
//! cache line of its own ([`BlockCounts`]); the call sums the lines after
//! the blocks are done. No shared counter is written on the packing path.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Values (`f64`s, padding included) packed by herd's packed product.
/// Blocks multiplied by faer's kernel pack inside faer and count nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PackCounts {
    /// Values of `A` packed.
    pub(crate) a: usize,
    /// Values of `B` packed, shared panels and private ones.
    pub(crate) b: usize,
    /// Of `b`, the values packed into a block's private buffer (no group to
    /// share with, or a member that came late or found the ring busy).
    pub(crate) b_private: usize,
}

impl core::ops::AddAssign for PackCounts {
    fn add_assign(&mut self, o: PackCounts) {
        self.a += o.a;
        self.b += o.b;
        self.b_private += o.b_private;
    }
}

/// One block's counts on a cache line of its own.
#[repr(align(128))]
#[derive(Default)]
struct Line([AtomicUsize; 3]);

/// The counts of every block of a call, one line per block.
pub(super) struct BlockCounts(Box<[Line]>);

impl BlockCounts {
    pub(super) fn new(blocks: usize) -> BlockCounts {
        BlockCounts((0..blocks).map(|_| Line::default()).collect())
    }

    /// Block `i`'s counts (each block stores once, at its end).
    pub(super) fn store(&self, i: usize, c: PackCounts) {
        let line = &self.0[i].0;
        line[0].store(c.a, Ordering::Relaxed);
        line[1].store(c.b, Ordering::Relaxed);
        line[2].store(c.b_private, Ordering::Relaxed);
    }

    /// The sum over the blocks (after they are done: the pool's join
    /// orders their stores before this).
    pub(super) fn total(&self) -> PackCounts {
        let mut sum = PackCounts::default();
        for line in self.0.iter() {
            let l = &line.0;
            sum += PackCounts {
                a: l[0].load(Ordering::Relaxed),
                b: l[1].load(Ordering::Relaxed),
                b_private: l[2].load(Ordering::Relaxed),
            };
        }
        sum
    }
}
