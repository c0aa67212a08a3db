//! Which code multiplies a block of `C`, chosen once per product from the
//! CPU's features at run time.
//!
//! On x86-64 CPUs with AVX-512F, herd's own packed product
//! ([`packed`](super::packed) with the 16 × 14 kernel of
//! [`kernel_avx512`](super::kernel_avx512)), measured faster than faer's on
//! such a CPU. Everywhere else (AVX2 machines, other architectures) faer's
//! sequential `matmul`, which dispatches among its own AVX-512, AVX2+FMA
//! and portable kernels: no kernel the CPU cannot run is ever called.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

use super::counts::PackCounts;
#[cfg(target_arch = "x86_64")]
use super::kernel_avx512::Avx512;
#[cfg(target_arch = "x86_64")]
pub(super) use super::shared_panels::SharedPanels;

/// Shared panels of `B` exist only with herd's packed product.
#[cfg(not(target_arch = "x86_64"))]
pub(super) enum SharedPanels {}

/// Blocks of `C` with fewer rows or columns than this go to faer even on
/// AVX-512 CPUs. On the 2-core Xeon measured (blocks of square products
/// with 1 and 2 participants, alternating with faer's path): herd's packed
/// product ran at 0.84× faer's for 100 × 100 blocks, 0.93× for 200 × 200
/// (100 × 200: 0.94×), 0.96× for 150 × 300, 1.01× for 300 × 300 and
/// 1.08× for 200 × 400, its 16 × 14 tiles wasting more of a small block's
/// edges; rank-K blocks (300 × 600 × 64: 1.18×, 500 × 1000 × 32: 1.11×)
/// are wide enough. (The 200 × 400 and rank-K figures were measured before
/// `packed.rs` kept its small scratch buffers, with their page faults.)
const PACKED_MIN_SIDE: usize = 256;

/// The multiply of one block of `C`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Kernel {
    /// herd's packed product with the AVX-512 micro-kernel (the CPU has
    /// AVX-512F: the variant holds the proof).
    #[cfg(target_arch = "x86_64")]
    Avx512(Avx512),
    /// faer's sequential matrix multiply (its own run-time dispatch).
    Faer,
}

impl Kernel {
    /// The fastest kernel this CPU can run.
    pub(super) fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        if let Some(cpu) = Avx512::detect() {
            return Kernel::Avx512(cpu);
        }
        Kernel::Faer
    }

    /// The kernel for a `rows × cols` block of `C`: `self`, except that
    /// herd's packed product leaves blocks narrower than
    /// [`PACKED_MIN_SIDE`] to faer, whose edge kernels fit small shapes.
    pub(super) fn for_block(self, rows: usize, cols: usize) -> Kernel {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(_) if rows.min(cols) < PACKED_MIN_SIDE => Kernel::Faer,
            kernel => kernel,
        }
    }

    /// The shared panels of `B` for a column group of `members` blocks of
    /// `cols` columns and inner dimension `k`, where this kernel packs `B`
    /// (herd's packed product), in a ring of at most `ring_slots` panels; `None`
    /// for faer's.
    pub(super) fn shared_panels(
        self,
        k: usize,
        cols: usize,
        members: usize,
        ring_slots: usize,
    ) -> Option<SharedPanels> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(_) => {
                Some(SharedPanels::new(k, cols, super::packed::panel_steps(cols, k), members, ring_slots))
            }
            Kernel::Faer => {
                let _ = (k, cols, members, ring_slots);
                None
            }
        }
    }

    /// `c ← α·a·b + β·c` on the calling thread (`k ≥ 1`, `α ≠ 0`; `β = 0`
    /// writes `c` without reading it), the panels of `B` from `shared` (the
    /// block's column group and its index there) where the kernel packs
    /// them. Returns what herd's packed product packed (nothing for faer's).
    pub(super) fn multiply(
        self,
        alpha: f64,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        beta: f64,
        mut c: MatMut<'_, f64>,
        shared: Option<(&SharedPanels, usize)>,
    ) -> PackCounts {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(cpu) => super::packed::gemm(cpu, alpha, a, b, beta, c, shared),
            Kernel::Faer => {
                let _ = shared;
                let accum = if beta == 0.0 {
                    Accum::Replace
                } else {
                    if beta != 1.0 {
                        super::scale(c.as_mut(), beta);
                    }
                    Accum::Add
                };
                matmul(c, accum, a, b, alpha, Par::Seq);
                PackCounts::default()
            }
        }
    }
}
