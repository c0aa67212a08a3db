//! General matrix multiply on herd: `C ← α·op(A)·op(B) + β·C` (BLAS's
//! `dgemm`) for whole column-major `f64` matrices.
//!
//! `C` is cut into a grid of blocks ([`Blocking`]; by default about one per
//! participant of the current herd pool, as square as the shape allows) and
//! every block is computed sequentially on the participant that takes it by
//! the kernel chosen from the CPU's features at run time (`dispatch.rs`): on
//! x86-64, herd's cache-blocked product (`packed.rs`: panels packed by
//! `pack.rs`, generic over the `micro.rs` interface) with the 16 × 14 FMA
//! micro-kernel of `kernel_avx512.rs` where the CPU has AVX-512F, the 8 × 6
//! one of `kernel_avx2.rs` where it has AVX2 and FMA only; elsewhere, faer's
//! sequential matrix multiply (`faer::linalg::matmul::matmul` with
//! `Par::Seq`), which picks among its own kernels. No kernel the CPU cannot
//! run is ever called. The blocks are disjoint `MatMut` views split off `C`,
//! handed out in halves in a `herd::scope` (see `blocks.rs`).
//!
//! The blocks of a grid column share its columns of `C`, so they need the
//! same packed panels of `B`: with the packed product, such a column group
//! (of at least [`SHARE_MIN_MEMBERS`] blocks) packs each `kc × nc` panel of
//! `B` once between its members, each packing a slice of it into a shared
//! ring (`shared_panels.rs`, by the wait-free-to-enter claim protocol of
//! `claims.rs`), instead of once per block; each block still packs its own
//! blocks of `A` (issue 15). What a call packed is counted per block
//! (`counts.rs`) for the tests.
//!
//! The rank-K update of the ATLAS paper, `C ← C − A·Bᵀ` with a small `K`, is
//! `gemm(Op::NoTrans, Op::Trans, -1.0, a, b, 1.0, c)`: the partition is over
//! `C`, so a small `K` costs no parallelism.
//!
//! BLAS semantics for the special values: `β = 0` sets `C` without reading
//! it (NaNs in `C` vanish); `α = 0` or `K = 0` scales `C` by `β` without
//! reading `A` or `B`. NaN and infinite entries are otherwise computed with,
//! as BLAS does (no check, no error).

mod blocks;
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
mod claims;
mod counts;
mod dispatch;
#[cfg(target_arch = "x86_64")]
mod kernel_avx2;
#[cfg(target_arch = "x86_64")]
mod kernel_avx512;
#[cfg(target_arch = "x86_64")]
mod micro;
#[cfg(target_arch = "x86_64")]
mod pack;
#[cfg(target_arch = "x86_64")]
mod packed;
#[cfg(target_arch = "x86_64")]
mod shared_panels;
#[cfg(test)]
mod tests;

pub use blocks::Blocking;

use faer::{MatMut, MatRef};

use crate::error::invalid;
use crate::LaError;
use blocks::{for_each_block, Grid};
use counts::{BlockCounts, PackCounts};
use dispatch::Kernel;

/// Column groups of at least this many blocks share their packed panels of
/// `B`; smaller ones pack per block. Not 2: on the 2-vCPU Xeon measured
/// (`herd la gemm -n 2000 --reps 5`, 5 alternating pairs, BENCHMARKS.md
/// "GEMM: shared packed B panels (session 30)") a group of 2 sharing its
/// panels ran 4–7 % slower than 2 private copies at n = 2000 (the two
/// members meet at every panel), though faster at n = 4000 and for the
/// rank-K update with K = 256; groups of 2 (2 participants) keep the
/// private path, groups of 3 or more (P ≥ 6 or so: 4 × 4 for 16) share.
const SHARE_MIN_MEMBERS: usize = 3;

/// Whether the blocks of a column group share packed panels of `B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sharing {
    /// When the group has at least [`SHARE_MIN_MEMBERS`] blocks.
    Auto,
    /// Never: every block packs its own panels (the path before issue 15,
    /// kept for the tests that compare the two).
    #[cfg(test)]
    Never,
    /// Groups of 2 blocks or more share, in a ring of at most this many
    /// panels per group (tests: `usize::MAX` never reuses a slot, 2 reuses
    /// them with small products).
    #[cfg(test)]
    Ring(usize),
}

impl Sharing {
    /// The ring size (panels) of a group of `members` blocks, `None` when
    /// its blocks pack their own panels.
    fn ring_slots(self, members: usize) -> Option<usize> {
        match self {
            Sharing::Auto => (members >= SHARE_MIN_MEMBERS).then_some(RING_SLOTS),
            #[cfg(test)]
            Sharing::Never => None,
            #[cfg(test)]
            Sharing::Ring(slots) => (members >= 2).then_some(slots),
        }
    }
}

/// Ring size per column group (the packed product's; unused elsewhere).
#[cfg(target_arch = "x86_64")]
const RING_SLOTS: usize = shared_panels::RING_SLOTS;
#[cfg(not(target_arch = "x86_64"))]
const RING_SLOTS: usize = 0;

/// Whether an operand is used as stored or transposed (BLAS's `TRANS`
/// argument, `'N'` or `'T'`; for real matrices `'C'` is `'T'`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Op {
    /// `op(X) = X`.
    #[default]
    NoTrans,
    /// `op(X) = Xᵀ`.
    Trans,
}

impl Op {
    /// `op(x)` as a view (transposing a faer view only swaps its strides).
    fn apply<'a>(self, x: MatRef<'a, f64>) -> MatRef<'a, f64> {
        match self {
            Op::NoTrans => x,
            Op::Trans => x.transpose(),
        }
    }
}

/// `C ← α·op(A)·op(B) + β·C` on the current herd pool, `C` cut by
/// [`Blocking::Auto`]: BLAS's `dgemm` (`op(A)` `m × k`, `op(B)` `k × n`,
/// `C` `m × n`, any strides). [`Gemm`] chooses the blocks.
///
/// # Errors
/// See [`Gemm::run`].
pub fn gemm(
    op_a: Op,
    op_b: Op,
    alpha: f64,
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    beta: f64,
    c: MatMut<'_, f64>,
) -> Result<(), LaError> {
    Gemm::new(op_a, op_b, alpha, beta).run(a, b, c)
}

/// The settings of a `C ← α·op(A)·op(B) + β·C`: transposes, scalars, and
/// how `C` is cut into blocks.
///
/// ```
/// use herd_la::{random_matrix, Blocking, Gemm, Op};
/// let (a, b) = (random_matrix(100, 8, 1), random_matrix(100, 8, 2));
/// let mut c = random_matrix(100, 100, 3);
/// // The rank-K update C ← C − A·Bᵀ in blocks of 64 × 50.
/// Gemm::new(Op::NoTrans, Op::Trans, -1.0, 1.0)
///     .blocking(Blocking::Fixed { rows: 64, cols: 50 })
///     .run(a.as_ref(), b.as_ref(), c.as_mut())
///     .unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gemm {
    op_a: Op,
    op_b: Op,
    alpha: f64,
    beta: f64,
    blocking: Blocking,
}

impl Gemm {
    /// `C ← α·op_a(A)·op_b(B) + β·C` with [`Blocking::Auto`].
    pub fn new(op_a: Op, op_b: Op, alpha: f64, beta: f64) -> Gemm {
        Gemm { op_a, op_b, alpha, beta, blocking: Blocking::Auto }
    }

    /// The same product with `C` cut by `blocking`.
    pub fn blocking(self, blocking: Blocking) -> Gemm {
        Gemm { blocking, ..self }
    }

    /// Computes the product into `c`, block by block of `C` on the
    /// participants of the current herd pool — the global pool when the
    /// caller is in none; `pool.install(|| ..run(..))` chooses one. Each block
    /// is one sequential product by the kernel the CPU's features select.
    ///
    /// # Errors
    /// Checked before anything is read or written, in BLAS's argument order:
    /// * [`LaError::InvalidArgument`] naming `a` when `op(A)` has not `C`'s
    ///   row count, and `b` when `op(B)` has not `op(A)`'s column count or
    ///   `C`'s column count;
    /// * [`LaError::InvalidTileSize`] for a [`Blocking::Fixed`] dimension of 0.
    pub fn run(&self, a: MatRef<'_, f64>, b: MatRef<'_, f64>, c: MatMut<'_, f64>) -> Result<(), LaError> {
        self.run_counted(Kernel::detect(), Kernel::for_block, Sharing::Auto, a, b, c).map(|_| ())
    }

    /// [`Gemm::run`] with a `rows × cols` block multiplied by
    /// `choose(kernel, rows, cols)`.
    #[cfg(test)]
    fn run_with(
        &self,
        kernel: Kernel,
        choose: fn(Kernel, usize, usize) -> Kernel,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        c: MatMut<'_, f64>,
    ) -> Result<(), LaError> {
        self.run_counted(kernel, choose, Sharing::Auto, a, b, c).map(|_| ())
    }

    /// [`Gemm::run`] with a `rows × cols` block multiplied by
    /// `choose(kernel, rows, cols)` and column groups sharing panels of `B`
    /// as `sharing` says; returns what the call packed.
    fn run_counted(
        &self,
        kernel: Kernel,
        choose: fn(Kernel, usize, usize) -> Kernel,
        sharing: Sharing,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        c: MatMut<'_, f64>,
    ) -> Result<PackCounts, LaError> {
        let Gemm { op_a, op_b, alpha, beta, blocking } = *self;
        let (a, b) = (op_a.apply(a), op_b.apply(b));
        let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
        if a.nrows() != m {
            return Err(invalid("a", format!("op(A) has {} rows but C has {m}", a.nrows())));
        }
        if b.nrows() != k {
            return Err(invalid("b", format!("op(B) has {} rows but op(A) has {k} columns", b.nrows())));
        }
        if b.ncols() != n {
            return Err(invalid("b", format!("op(B) has {} columns but C has {n}", b.ncols())));
        }
        let grid = Grid::new(blocking, (m, n, k), herd::current_num_threads())?;
        if m == 0 || n == 0 {
            return Ok(PackCounts::default());
        }
        let scale_only = alpha == 0.0 || k == 0;
        // One group per grid column whose blocks' kernel packs `B`, built
        // here (no page touched until packed) and shared by its blocks.
        let groups: Vec<_> = match sharing.ring_slots(grid.br) {
            Some(ring) if !scale_only => (0..grid.bc)
                .map(|g| {
                    let cols = grid.nb.min(n - g * grid.nb);
                    choose(kernel, grid.mb.min(m), cols).shared_panels(k, cols, grid.br, ring)
                })
                .collect(),
            _ => Vec::new(),
        };
        let counts = BlockCounts::new(grid.br * grid.bc);
        for_each_block(c, grid, &|block: MatMut<'_, f64>, row0, col0| {
            if scale_only {
                scale(block, beta);
                return;
            }
            let (rows, cols) = (block.nrows(), block.ncols());
            let (member, group) = (row0 / grid.mb, col0 / grid.nb);
            let shared = groups.get(group).and_then(Option::as_ref).map(|g| (g, member));
            let packed = choose(kernel, rows, cols).multiply(
                alpha,
                a.subrows(row0, rows),
                b.subcols(col0, cols),
                beta,
                block,
                shared,
            );
            counts.store(member * grid.bc + group, packed);
        });
        Ok(counts.total())
    }
}

/// `c ← β·c`; `β = 0` writes zeros without reading `c`.
fn scale(mut c: MatMut<'_, f64>, beta: f64) {
    if beta == 0.0 {
        c.fill(0.0);
    } else if beta != 1.0 {
        for j in 0..c.ncols() {
            c.as_mut().col_mut(j).iter_mut().for_each(|x| *x *= beta);
        }
    }
}

/// The kernel herd's GEMM (and the routines built on it) multiplies blocks
/// with on this CPU, for blocks at least 256 wide: `"avx512 16x14"` or
/// `"avx2 8x6"` (herd's packed product with that micro-kernel), or
/// `"faer"` (faer's sequential matmul, on CPUs with neither; narrower
/// blocks always go to faer's).
pub fn gemm_kernel() -> &'static str {
    Kernel::detect().name()
}

/// `c ← c − a·b` on the calling thread alone, by the kernel [`gemm`] gives
/// a block of `c`'s shape (herd's packed product where the CPU has AVX-512F
/// or AVX2 and the block is wide enough, else faer's): for routines that cut and
/// schedule their own pieces, as LU's trailing update does.
pub(crate) fn sub_product(c: MatMut<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    add_product(c, -1.0, a, b);
}

/// `c ← c − a·aᵀ` on the lower triangle (with the diagonal) of the square
/// `c`, on the calling thread, by herd's packed product where [`gemm`]
/// would give a block of `c`'s shape to it (an AVX-512F or AVX2 CPU and `c`
/// wide enough), skipping the micro-tiles above the diagonal: `true`. `false`,
/// with nothing done, elsewhere (the caller uses another kernel).
pub(crate) fn sub_syrk_lower_packed(c: MatMut<'_, f64>, a: MatRef<'_, f64>) -> bool {
    debug_assert!(c.nrows() == c.ncols() && a.nrows() == c.nrows());
    match Kernel::detect().for_block(c.nrows(), c.ncols()) {
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512(cpu) => {
            if a.ncols() > 0 {
                packed::syrk_lower(cpu, -1.0, a, 1.0, c);
            }
            true
        }
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2(cpu) => {
            if a.ncols() > 0 {
                packed::syrk_lower(cpu, -1.0, a, 1.0, c);
            }
            true
        }
        Kernel::Faer => false,
    }
}

/// `c ← c + α·a·b` on the calling thread, by the kernel [`gemm`] gives a
/// block of `c`'s shape (as [`sub_product`]).
pub(crate) fn add_product(c: MatMut<'_, f64>, alpha: f64, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    debug_assert!(a.nrows() == c.nrows() && b.ncols() == c.ncols() && a.ncols() == b.nrows());
    if c.nrows() == 0 || c.ncols() == 0 || a.ncols() == 0 || alpha == 0.0 {
        return;
    }
    Kernel::detect().for_block(c.nrows(), c.ncols()).multiply(alpha, a, b, 1.0, c, None);
}
