//! The cache-blocked product of one block of `C` on the calling thread
//! (GotoBLAS/BLIS's five loops around the micro-kernel).
//!
//! For each `nc`-column slab of `C` and each `kc`-deep slice of the inner
//! dimension, the `kc × nc` panel of `op(B)` is packed once (it stays in
//! L3/L2 and is read once per `mc`-row block of `A`); for each `mc`-row
//! block, the `mc × kc` block of `op(A)` is packed (it stays in L2); then
//! for each `NR`-column sliver of the packed panel (it stays in L1 across
//! the inner loop) and each `MR`-row sliver of the packed block, the
//! micro-kernel updates one `MR × NR` tile of `C`. The first `kc` slice
//! applies the caller's `β` (`β = 0` writes without reading `C`), the
//! following ones add (`β = 1`).
//!
//! The participants of a parallel [`Gemm`](super::Gemm) each run this on
//! their own block of `C` and pack their own blocks of `A`. The panels of
//! `B` are either packed privately (each block its own copy of every panel
//! of its columns) or, when the block belongs to a column group
//! ([`SharedPanels`]), taken from the group's shared ring, which its members
//! pack once between them (issue 15).

use core::mem::MaybeUninit;

use faer::{MatMut, MatRef};

use super::counts::PackCounts;
use super::micro::{balanced_step, panel_steps, MicroKernel, MAX_TILE};
use super::pack::packed_len;
use super::shared_panels::SharedPanels;

/// Scratch buffers up to this many values (1 MiB) are kept by their thread
/// for its next product (two at most: `A`'s and `B`'s), so that small
/// products do not pay the allocation's page faults each call (8 % of a
/// one-thread n = 200 profile without it); larger ones are freed, their
/// page faults small against the product that needed them.
const KEEP_AT_MOST: usize = 1 << 17;

thread_local! {
    /// The buffers this thread kept (at most two, each at most
    /// `KEEP_AT_MOST + 8` values).
    static KEPT: core::cell::RefCell<Vec<Box<[MaybeUninit<f64>]>>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// A scratch buffer of `len` values starting on a 64-byte boundary (a
/// whole `zmm` load per sliver step), left uninitialised: [`pack`] writes
/// what the kernel reads, and a fresh buffer costs no zeroing pass.
struct Aligned {
    store: Box<[MaybeUninit<f64>]>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let kept = KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            let at = kept.iter().position(|b| b.len() >= len + 8)?;
            Some(kept.swap_remove(at))
        });
        let store = kept.unwrap_or_else(|| Box::new_uninit_slice(len + 8));
        let start = store.as_ptr().align_offset(64).min(8);
        Aligned { store, start, len }
    }

    fn slice(&mut self) -> &mut [MaybeUninit<f64>] {
        &mut self.store[self.start..self.start + self.len]
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        if self.store.len() <= KEEP_AT_MOST + 8 {
            let store = core::mem::take(&mut self.store);
            // `try_with`: during the thread's exit the buffer is just freed.
            let _ = KEPT.try_with(|kept| {
                let mut kept = kept.borrow_mut();
                if kept.len() < 2 {
                    kept.push(store);
                }
            });
        }
    }
}

/// Which part of `C` a product writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// Every element.
    Full,
    /// The lower triangle with the diagonal (`C` square); the strict upper
    /// triangle is neither read nor written.
    Lower,
}

/// `C ← α·A·B + β·C` on the calling thread with the micro-kernel `cpu`
/// (`A` `m × k`, `B` `k × n`, `C` `m × n`, any strides, `k ≥ 1`); the
/// panels of `B` from `shared` (the block's column group and its member
/// index there, the group's panels being of this `B`) where it lets this
/// member in, else packed privately. Returns what this call packed.
pub(super) fn gemm<K: MicroKernel>(
    cpu: K,
    alpha: f64,
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    beta: f64,
    c: MatMut<'_, f64>,
    shared: Option<(&SharedPanels, usize)>,
) -> PackCounts {
    product(cpu, (alpha, beta), a, b, c, shared, Part::Full)
}

/// BLAS's `dsyrk` on the lower triangle: `C ← α·A·Aᵀ + β·C` for the lower
/// triangle (with the diagonal) of the square `C` (`A` `n × k`, any
/// strides, `k ≥ 1`), on the calling thread. The micro-tiles above the
/// diagonal are skipped (about half the work of the full product); those
/// the diagonal crosses are computed whole into a scratch tile, of which
/// only the lower part is added to `C`, so the strict upper triangle of `C`
/// is neither read nor written.
pub(super) fn syrk_lower<K: MicroKernel>(
    cpu: K,
    alpha: f64,
    a: MatRef<'_, f64>,
    beta: f64,
    c: MatMut<'_, f64>,
) {
    debug_assert!(c.nrows() == c.ncols() && a.nrows() == c.nrows());
    product(cpu, (alpha, beta), a, a.transpose(), c, None, Part::Lower);
}

/// [`gemm`] on `part` of `C`.
fn product<K: MicroKernel>(
    cpu: K,
    (alpha, beta): (f64, f64),
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    c: MatMut<'_, f64>,
    shared: Option<(&SharedPanels, usize)>,
    part: Part,
) -> PackCounts {
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    debug_assert!(a.nrows() == m && b.nrows() == k && b.ncols() == n);
    debug_assert!(part == Part::Full || (m == n && shared.is_none()));
    let mut counts = PackCounts::default();
    if m == 0 || n == 0 || k == 0 {
        return counts;
    }
    let (mr_max, nr_max) = (K::MR, K::NR);
    let ((kc_step, nc_step), mc_step) = (panel_steps::<K>(n, k), balanced_step(m, K::MC, mr_max));
    let mut a_pack = Aligned::new(packed_len(mr_max, mc_step, kc_step));
    // Allocated on the first panel this block packs privately.
    let mut b_pack: Option<Aligned> = None;
    let (rs, cs) = (c.row_stride(), c.col_stride());
    let c_ptr = c.as_ptr_mut();
    for jc in (0..n).step_by(nc_step) {
        let nc = nc_step.min(n - jc);
        for pc in (0..k).step_by(kc_step) {
            let kc = kc_step.min(k - pc);
            // Held (the slot kept from reuse) until this panel's products are done.
            let panel = shared.and_then(|(group, member)| group.panel::<K>(member, (pc, jc), (kc, nc), b));
            let b_ptr = match &panel {
                Some(panel) => {
                    counts.b += panel.packed;
                    panel.as_ptr()
                }
                None => {
                    let len = packed_len(nr_max, nc, kc);
                    counts.b += len;
                    counts.b_private += len;
                    let buffer =
                        b_pack.get_or_insert_with(|| Aligned::new(packed_len(nr_max, nc_step, kc_step)));
                    K::pack_b(buffer.slice(), b.submatrix(pc, jc, kc, nc).transpose()).as_ptr()
                }
            };
            let beta = if pc == 0 { beta } else { 1.0 };
            for ic in (0..m).step_by(mc_step) {
                let mc = mc_step.min(m - ic);
                if part == Part::Lower && ic + mc <= jc {
                    continue; // the whole block of rows lies above the diagonal
                }
                counts.a += packed_len(mr_max, mc, kc);
                let a_ptr = K::pack_a(a_pack.slice(), a.submatrix(ic, pc, mc, kc)).as_ptr();
                for jr in (0..nc).step_by(nr_max) {
                    let nr = nr_max.min(nc - jr);
                    for ir in (0..mc).step_by(mr_max) {
                        let mr = mr_max.min(mc - ir);
                        let (row, col) = ((ic + ir) as isize, (jc + jr) as isize);
                        if part == Part::Lower && row + (mr as isize) <= col {
                            continue; // every element above the diagonal
                        }
                        if part == Part::Lower && row < col + nr as isize - 1 {
                            // SAFETY: as for the whole tiles below; the
                            // scratch tile is a local of `MR × NR` values.
                            unsafe {
                                diagonal_tile(
                                    cpu,
                                    kc,
                                    (a_ptr.add(ir * kc), b_ptr.add(jr * kc)),
                                    (alpha, beta),
                                    c_ptr.offset(row * rs + col * cs),
                                    (rs, cs),
                                    (mr, nr),
                                    row - col,
                                )
                            };
                            continue;
                        }
                        // SAFETY: the packed block holds `ceil(mc/MR)` slivers
                        // of `MR·kc` values and the panel `ceil(nc/NR)` of
                        // `NR·kc` (`ir/MR`-th and `jr/NR`-th start at
                        // `ir·kc`, `jr·kc`), a shared panel held (`panel`)
                        // and fully published until the end of this `pc`
                        // step; the tile `row..row+mr`, `col..col+nr` lies
                        // inside `C`, a `MatMut` we hold exclusively, which
                        // the packed buffers do not alias.
                        unsafe {
                            cpu.tile(
                                kc,
                                a_ptr.add(ir * kc),
                                b_ptr.add(jr * kc),
                                alpha,
                                beta,
                                c_ptr.offset(row * rs + col * cs),
                                (rs, cs),
                                (mr, nr),
                            );
                        }
                    }
                }
            }
        }
    }
    counts
}

/// The micro-tile at `c` (`mr × nr`, strides `(rs, cs)`) that the diagonal
/// of `C` crosses, its row `i` being `C`'s row `col + offset + i` when its
/// column `j` is `C`'s column `col + j`: the product goes to a scratch tile
/// (`β = 0`) and only the elements with `offset + i ≥ j` (on or below the
/// diagonal) are combined into `C` as `α·AB + β·C`.
///
/// # Safety
/// As [`MicroKernel::tile`] for the slivers `a` and `b` and for the elements of
/// `c` on or below the diagonal; the others are not touched.
#[allow(clippy::too_many_arguments)]
unsafe fn diagonal_tile<K: MicroKernel>(
    cpu: K,
    kc: usize,
    (a, b): (*const f64, *const f64),
    (alpha, beta): (f64, f64),
    c: *mut f64,
    (rs, cs): (isize, isize),
    (mr, nr): (usize, usize),
    offset: isize,
) {
    let mut scratch = [0.0f64; MAX_TILE];
    // SAFETY: the slivers are the caller's; the scratch tile is `MR × NR`
    // column-major (`rs = 1`, `cs = MR`; `MR·NR ≤ MAX_TILE`, `micro::check`),
    // written whole (`β = 0`).
    unsafe { cpu.tile(kc, a, b, alpha, 0.0, scratch.as_mut_ptr(), (1, K::MR as isize), (mr, nr)) };
    for j in 0..nr {
        for i in (0..mr).filter(|&i| offset + i as isize >= j as isize) {
            // SAFETY: (i, j) is on or below the diagonal, inside the tile.
            let e = unsafe { &mut *c.offset(i as isize * rs + j as isize * cs) };
            let ab = scratch[i + j * K::MR];
            *e = if beta == 0.0 { ab } else { ab + beta * *e };
        }
    }
}
