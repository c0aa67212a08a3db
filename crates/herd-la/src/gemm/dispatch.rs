//! Which code multiplies a block of `C`, chosen once per product from the
//! CPU's features at run time.
//!
//! On x86-64 CPUs with AVX-512F, herd's own packed product
//! ([`packed`](super::packed) with the 16 × 14 kernel of
//! [`kernel_avx512`](super::kernel_avx512)), measured faster than faer's on
//! such a CPU; on x86-64 CPUs with AVX2 and FMA but not AVX-512F, the same
//! packed product with the 8 × 6 kernel of
//! [`kernel_avx2`](super::kernel_avx2) (1.18–1.21× faer's on a Zen 3 EPYC,
//! one thread, n = 3000). Everywhere else (other architectures) faer's
//! sequential `matmul`, which dispatches among its own kernels: no kernel
//! the CPU cannot run is ever called.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

use super::counts::PackCounts;
#[cfg(target_arch = "x86_64")]
use super::kernel_avx2::Avx2;
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
    /// herd's packed product with the AVX2 micro-kernel (the CPU has AVX2
    /// and FMA, not AVX-512F).
    #[cfg(target_arch = "x86_64")]
    Avx2(Avx2),
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
        #[cfg(target_arch = "x86_64")]
        if let Some(cpu) = Avx2::detect() {
            return Kernel::Avx2(cpu);
        }
        Kernel::Faer
    }

    /// Every packed kernel this CPU can run, widest first (tests: the AVX2
    /// kernel is checked on AVX-512 machines too).
    #[cfg(test)]
    pub(super) fn packed_kernels() -> Vec<Kernel> {
        let mut all = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            all.extend(Avx512::detect().map(Kernel::Avx512));
            all.extend(Avx2::detect().map(Kernel::Avx2));
        }
        all
    }

    /// The packed product's sliver width (`NR`) and panel steps for a
    /// group of `cols` columns and inner dimension `k` (tests; `None` for
    /// faer's).
    #[cfg(test)]
    pub(super) fn packing(self, cols: usize, k: usize) -> Option<(usize, (usize, usize))> {
        use super::micro::MicroKernel;
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(_) => Some((Avx512::NR, super::micro::panel_steps::<Avx512>(cols, k))),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(_) => Some((Avx2::NR, super::micro::panel_steps::<Avx2>(cols, k))),
            Kernel::Faer => {
                let _ = (cols, k);
                None
            }
        }
    }

    /// The packed product's cache blocks `(KC, MC, NC)` with this kernel
    /// (tests; `None` for faer's).
    #[cfg(test)]
    pub(super) fn cache_blocks(self) -> Option<(usize, usize, usize)> {
        use super::micro::{MicroKernel, NC};
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(_) => Some((Avx512::KC, Avx512::MC, NC)),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(_) => Some((Avx2::KC, Avx2::MC, NC)),
            Kernel::Faer => None,
        }
    }

    /// What this kernel is, for people: `"avx512 16x14"`, `"avx2 8x6"`
    /// (herd's packed product with that micro-kernel) or `"faer"`.
    pub(super) fn name(self) -> &'static str {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(_) => "avx512 16x14",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(_) => "avx2 8x6",
            Kernel::Faer => "faer",
        }
    }

    /// The kernel for a `rows × cols` block of `C`: `self`, except that
    /// herd's packed product leaves blocks narrower than
    /// [`PACKED_MIN_SIDE`] to faer, whose edge kernels fit small shapes.
    pub(super) fn for_block(self, rows: usize, cols: usize) -> Kernel {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(_) | Kernel::Avx2(_) if rows.min(cols) < PACKED_MIN_SIDE => Kernel::Faer,
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
            Kernel::Avx512(_) => Some(SharedPanels::new::<Avx512>(k, cols, members, ring_slots)),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(_) => Some(SharedPanels::new::<Avx2>(k, cols, members, ring_slots)),
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
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(cpu) => super::packed::gemm(cpu, alpha, a, b, beta, c, shared),
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
