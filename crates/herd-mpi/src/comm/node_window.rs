//! A shared-memory window between this rank and one peer rank, when the two share a node
//! (MPI-3 shared memory): the pair's own communicator (`MPI_Comm_create_group`, collective
//! over the two ranks only), `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)` of it to learn
//! whether they share a node, and `MPI_Win_allocate_shared` with a segment for each, which
//! both map. The [`Mpi`] handle keeps one [`PeerLink`] per peer and frees its window and
//! communicator when it is dropped, before `MPI_Finalize` (allocating a window costs a
//! shared file, two mappings and synchronization, so it is made once and reused).
//!
//! Every MPI call here runs on the communicator thread ([`Mpi::run`]). What the ranks
//! store in the segments, and when, is the caller's protocol (`copy::shared_window`):
//! this file only hands out the two base addresses. Both ranks of a pair must call
//! [`PeerLink::window`] together with the same size (it may be collective over the pair),
//! which holds when both make the same sequence of exchanges with each other.

use super::Mpi;
use crate::error::{check, Result};
use mpi::ffi;
use mpi::raw::AsRaw;

/// The tag of `MPI_Comm_create_group` for a pair (a tag of herd-mpi's own; the all-to-all
/// splits use 32 700).
const PAIR_TAG: i32 = 32_701;

/// The two segments of a pair's window, as this rank maps them: `mine` is written by this
/// rank, `theirs` by the peer, each `bytes` long and starting on a cache line of this
/// rank's segment (the peer's on a line of its own mapping, at least 8-byte aligned here).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segments {
    pub(crate) mine: *mut u8,
    pub(crate) theirs: *mut u8,
    pub(crate) bytes: usize,
}

// SAFETY: the addresses are of shared memory that stays mapped until the window is freed
// (which needs the `PeerLink` they came from `&mut`); what may be read or written there,
// and when, is the protocol of the code that uses them.
unsafe impl Send for Segments {}

/// What this rank knows of its link to one peer.
#[derive(Default)]
pub(crate) struct PeerLink {
    /// The pair's communicator (this rank and the peer, by world rank), once made.
    pair: Option<ffi::MPI_Comm>,
    /// Whether the peer shares this rank's node (known once `pair` is made).
    same_node: bool,
    /// The window, its segments and the caller's key for their layout, once allocated.
    window: Option<(ffi::MPI_Win, Segments, u64)>,
    /// Sizes from this one up are not tried again: a window of this size could not be
    /// allocated on one of the two ranks.
    refused_from: Option<usize>,
}

// SAFETY: the MPI handles in a link are only passed to MPI inside closures run on the
// communicator thread (`Mpi::run` / `Mpi::drop`), whatever thread holds the link; the
// segment addresses are plain shared memory, valid until `MPI_Win_free`, which needs the
// link `&mut` (a larger window, or `Mpi`'s drop).
unsafe impl Send for PeerLink {}

impl PeerLink {
    /// Whether the peer was found to share this rank's node (false until the first
    /// [`PeerLink::window`]).
    pub(crate) fn same_node(&self) -> bool {
        self.same_node
    }

    /// The pair's window with segments of at least `bytes` each, laid out by the caller as
    /// `key` says, whose first `clear` bytes (at most `bytes`) are zero if it was allocated
    /// by this call; `None` when the peer is on another node, or a window this large cannot
    /// be had (allocation failed on either rank, now or before). Collective over the pair
    /// the first time (the pair's communicator) and whenever the window must be replaced
    /// because it is too small or has another `key` (the old one is freed after a barrier of
    /// the two, a new one allocated, and a barrier ends the call after `clear`).
    pub(crate) fn window(
        &mut self,
        mpi: &Mpi,
        peer: usize,
        bytes: usize,
        clear: usize,
        key: u64,
    ) -> Result<Option<Segments>> {
        if self.pair.is_some() && !self.same_node {
            return Ok(None);
        }
        let fits = |w: &Option<(ffi::MPI_Win, Segments, u64)>| {
            w.as_ref().filter(|(_, s, k)| s.bytes >= bytes && *k == key).map(|&(_, s, _)| s)
        };
        if let Some(s) = fits(&self.window) {
            return Ok(Some(s));
        }
        if self.pair.is_some() && self.refused_from.is_some_and(|r| bytes >= r) {
            return Ok(None);
        }
        let rank = mpi.rank();
        // `move` takes the `&mut` whole (a plain closure would capture its MPI handles,
        // which are not `Send`, field by field)
        let link = self;
        mpi.run(move |w| -> Result<Option<Segments>> {
            // SAFETY: on the communicator thread, with the world communicator it made.
            unsafe {
                if link.pair.is_none() {
                    let (pair, same) = make_pair(w.as_raw(), rank, peer)?;
                    link.pair = Some(pair);
                    link.same_node = same;
                    if !same {
                        return Ok(None);
                    }
                }
                let pair = link.pair.expect("made above");
                if let Some((win, _, _)) = link.window.take() {
                    // The peer is here too (it asked for the same window), so it has
                    // finished its previous exchanges; the barrier makes sure that it has,
                    // before either segment goes.
                    check("MPI_Barrier", rank, ffi::MPI_Barrier(pair))?;
                    free_window(rank, win)?;
                }
                match allocate(rank, pair, peer, bytes, clear)? {
                    Some((win, s)) => {
                        link.window = Some((win, s, key));
                        Ok(Some(s))
                    }
                    None => {
                        link.refused_from = Some(link.refused_from.map_or(bytes, |r| r.min(bytes)));
                        Ok(None)
                    }
                }
            }
        })
    }

    /// Frees the window and the pair's communicator (collective over the pair). Call on
    /// the communicator thread, in the same order of pairs on every rank.
    pub(crate) fn free(&mut self, rank: usize) -> Result<()> {
        // SAFETY: the handles were made by this link's calls on the communicator thread
        // (where this runs) and are freed once: `take` leaves `None` behind.
        unsafe {
            if let Some((win, _, _)) = self.window.take() {
                free_window(rank, win)?;
            }
            if let Some(mut pair) = self.pair.take() {
                check("MPI_Comm_free", rank, ffi::MPI_Comm_free(&mut pair))?;
            }
        }
        Ok(())
    }
}

/// The communicator of this rank and `peer` (ordered by world rank) and whether they share
/// a node. Errors of MPI calls on it are returned, not fatal.
///
/// # Safety
/// On the communicator thread; `world` is `MPI_COMM_WORLD`; the peer makes the same call.
unsafe fn make_pair(world: ffi::MPI_Comm, rank: usize, peer: usize) -> Result<(ffi::MPI_Comm, bool)> {
    let mut all = ffi::RSMPI_GROUP_NULL;
    check("MPI_Comm_group", rank, ffi::MPI_Comm_group(world, &mut all))?;
    let ranks = [rank.min(peer) as i32, rank.max(peer) as i32];
    let mut two = ffi::RSMPI_GROUP_NULL;
    let rc = ffi::MPI_Group_incl(all, 2, ranks.as_ptr(), &mut two);
    ffi::MPI_Group_free(&mut all);
    check("MPI_Group_incl", rank, rc)?;
    let mut pair = ffi::RSMPI_COMM_NULL;
    let rc = ffi::MPI_Comm_create_group(world, two, PAIR_TAG, &mut pair);
    ffi::MPI_Group_free(&mut two);
    check("MPI_Comm_create_group", rank, rc)?;
    // a failed allocation must come back as an error code that both ranks can agree on
    check("MPI_Comm_set_errhandler", rank, ffi::MPI_Comm_set_errhandler(pair, ffi::RSMPI_ERRORS_RETURN))?;
    let mut node = ffi::RSMPI_COMM_NULL;
    check(
        "MPI_Comm_split_type",
        rank,
        ffi::MPI_Comm_split_type(pair, ffi::RSMPI_COMM_TYPE_SHARED, 0, ffi::RSMPI_INFO_NULL, &mut node),
    )?;
    let mut size = 0;
    check("MPI_Comm_size", rank, ffi::MPI_Comm_size(node, &mut size))?;
    check("MPI_Comm_free", rank, ffi::MPI_Comm_free(&mut node))?;
    Ok((pair, size == 2))
}

/// `MPI_Win_allocate_shared` of `bytes` for each of the pair (segments page-aligned, each
/// near its owner: `alloc_shared_noncontig`), then `MPI_Win_lock_all` (a passive-target
/// epoch for the window's life, as the unified memory model's load/store use needs), the
/// peer's segment from `MPI_Win_shared_query`, this rank's first `clear` bytes zeroed, and a
/// barrier so that the peer sees them zero. `None` (on both ranks) when either rank's
/// allocation failed. A window that one rank got while the other did not is left to
/// `MPI_Finalize`: freeing it is collective over a window the peer does not have.
///
/// # Safety
/// On the communicator thread; `pair` is the pair's communicator (errors returned); the
/// peer makes the same call with the same `bytes`.
unsafe fn allocate(
    rank: usize,
    pair: ffi::MPI_Comm,
    peer: usize,
    bytes: usize,
    clear: usize,
) -> Result<Option<(ffi::MPI_Win, Segments)>> {
    // 64 bytes more, to start each segment on a cache line (osc/sm puts a segment only
    // 8-byte aligned)
    let size = bytes.checked_add(64).and_then(|b| ffi::MPI_Aint::try_from(b).ok());
    let mut info = ffi::RSMPI_INFO_NULL;
    check("MPI_Info_create", rank, ffi::MPI_Info_create(&mut info))?;
    let rc = ffi::MPI_Info_set(info, c"alloc_shared_noncontig".as_ptr(), c"true".as_ptr());
    if rc != ffi::MPI_SUCCESS as i32 {
        ffi::MPI_Info_free(&mut info);
        return Err(crate::MpiError::Call { call: "MPI_Info_set", rank, code: rc });
    }
    let mut base: *mut u8 = std::ptr::null_mut();
    let mut win = ffi::RSMPI_WIN_NULL;
    let rc = match size {
        Some(s) => {
            ffi::MPI_Win_allocate_shared(s, 1, info, pair, (&mut base as *mut *mut u8).cast(), &mut win)
        }
        None => -1,
    };
    ffi::MPI_Info_free(&mut info);
    // [allocated here, bytes from this rank's base to its first line] of both ranks (the
    // peer's base in this process's mapping may lie at another address modulo 64)
    let mine = [
        (rc == ffi::MPI_SUCCESS as i32 && !base.is_null()) as i32,
        (base as usize).wrapping_neg() as i32 & 63,
    ];
    let mut both = [0i32; 4];
    check(
        "MPI_Allgather",
        rank,
        ffi::MPI_Allgather(
            mine.as_ptr().cast(),
            2,
            ffi::RSMPI_INT32_T,
            both.as_mut_ptr().cast(),
            2,
            ffi::RSMPI_INT32_T,
            pair,
        ),
    )?;
    if both[0] == 0 || both[2] == 0 {
        return Ok(None);
    }
    check("MPI_Win_lock_all", rank, ffi::MPI_Win_lock_all(ffi::MPI_MODE_NOCHECK as i32, win))?;
    // in the pair's communicator the lower world rank is 0
    let their_rank = (peer > rank) as usize;
    let (mut their_size, mut unit): (ffi::MPI_Aint, i32) = (0, 0);
    let mut theirs: *mut u8 = std::ptr::null_mut();
    check(
        "MPI_Win_shared_query",
        rank,
        ffi::MPI_Win_shared_query(
            win,
            their_rank as i32,
            &mut their_size,
            &mut unit,
            (&mut theirs as *mut *mut u8).cast(),
        ),
    )?;
    let their_pad = both[2 * their_rank + 1] as usize;
    let theirs = theirs.wrapping_add(their_pad);
    if (their_size as usize) < bytes + their_pad || !(theirs as usize).is_multiple_of(8) {
        return Err(crate::MpiError::Invalid(format!(
            "MPI_Win_shared_query on rank {rank}: the peer's segment has {their_size} bytes and starts at {theirs:p} after {their_pad} bytes of padding; {bytes} bytes 8-byte aligned are needed"
        )));
    }
    let mine = base.add(mine[1] as usize);
    // SAFETY (of the write): `mine` starts `bytes` bytes of this rank's segment, which
    // nobody reads before the barrier below.
    std::ptr::write_bytes(mine, 0, clear.min(bytes));
    check("MPI_Barrier", rank, ffi::MPI_Barrier(pair))?;
    Ok(Some((win, Segments { mine, theirs, bytes })))
}

/// `MPI_Win_unlock_all` and `MPI_Win_free` (collective over the pair).
///
/// # Safety
/// On the communicator thread; `win` is a live window locked by [`allocate`].
unsafe fn free_window(rank: usize, mut win: ffi::MPI_Win) -> Result<()> {
    check("MPI_Win_unlock_all", rank, ffi::MPI_Win_unlock_all(win))?;
    check("MPI_Win_free", rank, ffi::MPI_Win_free(&mut win))
}
