//! The packed `kc × nc` panels of `B` that the blocks of one column group
//! of `C` share (issue 15: the BLIS/GotoBLAS multithreaded scheme, where
//! the threads that own the same columns of `C` pack each panel of `B`
//! once, each a slice of it, and each packs its own blocks of `A`).
//!
//! Without it, every block packs its own copy of every panel of its
//! columns: with a grid of `br` block rows, `B` is packed `br` times per
//! call (for `P = 128` in a 16 × 8 grid, 16 times). Here the group's
//! members pack each panel once into a ring of shared buffers, through the
//! claim protocol of [`claims`](super::claims), which never waits for a
//! member that is not there: a member that cannot enter a panel's slot packs
//! that panel privately, as before.

use core::mem::MaybeUninit;

use faer::MatRef;

use super::claims::{Claims, Entered};
use super::micro::{panel_steps, MicroKernel};
use super::pack::packed_len;

/// Slots in a group's ring (fewer when the group has fewer panels). Three
/// let members run up to two panels apart before one is turned away (the
/// members of a group meet at every panel: each waits for the slices the
/// others claimed), and the buffers stay few and warm in cache. A ring of
/// every panel (tried first: 64 MiB a group) wrote each panel into fresh
/// memory — page faults and cache misses the private path, reusing one
/// buffer, does not pay — and measured slower at n = 2000 on 2 cores.
pub(super) const RING_SLOTS: usize = 3;

/// One ring slot's buffer: 64-byte aligned, uninitialised until packed.
/// Written through raw pointers by the packers of disjoint slices.
struct Buffer {
    /// From `Box::into_raw`, `len` values.
    store: *mut [MaybeUninit<f64>],
    /// Offset of the first 64-byte aligned value.
    start: usize,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: `store` came from `Box::into_raw` and is dropped once, here.
        drop(unsafe { Box::from_raw(self.store) });
    }
}

/// The shared panels of one column group: the group's `k × cols` slice of
/// `op(B)` walked in the packed product's `kc × nc` panels.
pub(super) struct SharedPanels {
    claims: Claims,
    buffers: Box<[Buffer]>,
    /// The packed product's depth and width steps for this group.
    kc_step: usize,
    nc_step: usize,
    /// Panels along the depth (`ceil(k / kc_step)`).
    depth_panels: usize,
    /// The kernel's sliver width (`NR`) the panels are packed in.
    nr: usize,
    /// `NR`-column slivers per slice.
    slivers_per_slice: usize,
    /// Members of the group (block rows).
    members: usize,
}

// SAFETY: the buffers are written only through the claim protocol (a
// slice by the one member that won its claim, while it holds the slot) and
// read only by members that hold the slot and saw every slice published;
// the raw pointers are owned by the struct and freed on drop.
unsafe impl Sync for SharedPanels {}
// SAFETY: as above; nothing in it is tied to a thread.
unsafe impl Send for SharedPanels {}

/// A member's packed panel, held until dropped.
pub(super) struct Panel<'s> {
    _held: Entered<'s>,
    ptr: *const f64,
    /// Values this member packed into it.
    pub(super) packed: usize,
}

impl Panel<'_> {
    /// The packed panel (`packed_len(NR, nc, kc)` values), valid while
    /// `self` is held.
    pub(super) fn as_ptr(&self) -> *const f64 {
        self.ptr
    }
}

impl SharedPanels {
    /// The panels of a `k × cols` group of `op(B)` walked in the packed
    /// product's steps for the kernel `K` ([`panel_steps`]), packed for it,
    /// for `members` members, in a ring of at most `ring_slots` panels (see
    /// [`RING_SLOTS`]; `usize::MAX`: a slot for every panel, never reused).
    pub(super) fn new<K: MicroKernel>(
        k: usize,
        cols: usize,
        members: usize,
        ring_slots: usize,
    ) -> SharedPanels {
        let (kc_step, nc_step) = panel_steps::<K>(cols, k);
        let depth_panels = k.div_ceil(kc_step).max(1);
        let panels = depth_panels * cols.div_ceil(nc_step).max(1);
        let nr = K::NR;
        let panel_len = packed_len(nr, nc_step, kc_step);
        let slots = panels.min(ring_slots).max(1);
        let slivers = nc_step.div_ceil(nr);
        // Two slices per member: a slow member's share is taken up by the
        // others in halves.
        let per_panel = (2 * members).clamp(1, slivers.max(1));
        let slivers_per_slice = slivers.div_ceil(per_panel);
        let buffers = (0..slots)
            .map(|_| {
                let store = Box::into_raw(Box::<[f64]>::new_uninit_slice(panel_len + 8));
                let start = store.cast::<f64>().align_offset(64).min(8);
                Buffer { store, start }
            })
            .collect();
        SharedPanels {
            claims: Claims::new(slots, slivers.div_ceil(slivers_per_slice)),
            buffers,
            kc_step,
            nc_step,
            depth_panels,
            nr,
            slivers_per_slice,
            members,
        }
    }

    /// Slots in the ring.
    #[cfg(test)]
    pub(super) fn slots(&self) -> usize {
        self.claims.slots()
    }

    /// Member `member`'s hold on the packed `kc × nc` panel at `(pc, jc)` of
    /// `b` (the group's `op(B)`), packing its share with the kernel `K`
    /// the panels were made for; `None` when it must pack the panel
    /// privately (see [`Claims::enter`]).
    pub(super) fn panel<K: MicroKernel>(
        &self,
        member: usize,
        (pc, jc): (usize, usize),
        (kc, nc): (usize, usize),
        b: MatRef<'_, f64>,
    ) -> Option<Panel<'_>> {
        debug_assert!(pc.is_multiple_of(self.kc_step) && jc.is_multiple_of(self.nc_step));
        debug_assert!(kc <= self.kc_step && nc <= self.nc_step);
        assert_eq!(K::NR, self.nr, "panels packed for another kernel");
        let t = (jc / self.nc_step) * self.depth_panels + pc / self.kc_step;
        let held = self.claims.enter(t)?;
        let buffer = &self.buffers[held.slot()];
        // SAFETY: `start + packed_len(nc_step, kc_step)` is within the
        // allocation (`start ≤ 8`, 8 values spare).
        let base = unsafe { buffer.store.cast::<MaybeUninit<f64>>().add(buffer.start) };
        let slices = self.claims.per_panel();
        let first = member * slices / self.members.max(1);
        let nr = K::NR;
        let slivers = nc.div_ceil(nr);
        let mut packed = 0;
        held.fill(first, |slice| {
            let s0 = (slice * self.slivers_per_slice).min(slivers);
            let s1 = ((slice + 1) * self.slivers_per_slice).min(slivers);
            if s0 == s1 {
                return;
            }
            let (col0, cols) = (s0 * nr, (s1 * nr).min(nc) - s0 * nr);
            let len = packed_len(nr, cols, kc);
            // SAFETY: slivers `s0..s1` of the panel are values
            // `s0·NR·kc .. s0·NR·kc + len` of the slot's buffer (the packed
            // layout is sliver after sliver of `NR·kc` values), inside it
            // (`nc ≤ nc_step`, `kc ≤ kc_step`); this member won the claim of
            // this slice for this panel, so no one else writes or reads
            // these values until it publishes the slice.
            let dst = unsafe { core::slice::from_raw_parts_mut(base.add(s0 * nr * kc), len) };
            K::pack_b(dst, b.submatrix(pc, jc + col0, kc, cols).transpose());
            packed += len;
        });
        Some(Panel { _held: held, ptr: base.cast::<f64>().cast_const(), packed })
    }
}

#[cfg(test)]
mod tests {
    use super::super::kernel_avx512::Avx512;
    use super::*;

    /// A slot per panel up to the ring's size; slices: two per member, at
    /// most one per sliver.
    #[test]
    fn ring_slots_and_slices() {
        let (k, cols) = (3000, 500);
        let steps = panel_steps::<Avx512>(cols, k);
        assert_eq!(steps, (375, 504));
        assert_eq!(SharedPanels::new::<Avx512>(k, cols, 4, usize::MAX).slots(), 8);
        assert_eq!(SharedPanels::new::<Avx512>(k, cols, 4, RING_SLOTS).slots(), 3);
        assert_eq!(SharedPanels::new::<Avx512>(k, cols, 4, 2).slots(), 2);
        assert_eq!(SharedPanels::new::<Avx512>(k, 20, 4, RING_SLOTS).claims.per_panel(), 2);
        let one = SharedPanels::new::<Avx512>(64, 4000, 16, RING_SLOTS);
        assert_eq!((one.slots(), one.claims.per_panel()), (1, 32));
    }
}
