//! Exchanging a strided block (a vector layout, e.g. a column block of a row-major
//! matrix) with a peer rank, both ways at once, the two ways the blue-horizon paper §4
//! compares: (a) herd packs it on the compute participants, the communicator thread moves
//! one contiguous message each way, herd unpacks the reply; (b) MPI moves it with the
//! `MPI_Type_vector` datatype (`MPI_Sendrecv` on the communicator thread, MPI packing).
//! In both, this rank's block is sent and replaced by the peer's.

use super::mpi_pack::vector_type;
use super::pack::{pack, unpack, Vector};
use crate::{Mpi, MpiError, Result};
use mpi::datatype::MutView;
use mpi::topology::Communicator;

pub(super) fn check_peer(mpi: &Mpi, peer: usize) -> Result<()> {
    if peer >= mpi.size() || peer == mpi.rank() {
        return Err(MpiError::Invalid(format!(
            "block exchange: peer {peer} must be another rank of 0..{} (this is rank {})",
            mpi.size(),
            mpi.rank()
        )));
    }
    Ok(())
}

/// (a) herd pack, contiguous `isend`/`irecv` of `f64`s with `tag`, herd unpack.
pub fn exchange_packed(mpi: &Mpi, peer: usize, tag: i32, data: &mut [f64], layout: Vector) -> Result<()> {
    check_peer(mpi, peer)?;
    let n = layout.check("block exchange", data.len(), usize::MAX)?;
    let rx = mpi.irecv::<f64>(peer, tag, n)?;
    let mut out = vec![0.0f64; n];
    pack(&mut out, data, layout)?;
    let tx = mpi.isend(peer, tag, out)?;
    let got = rx.wait()?;
    unpack(data, &got, layout)?;
    tx.wait()?;
    Ok(())
}

/// (b) `MPI_Sendrecv_replace` of one vector datatype over `data`, on the communicator
/// thread (MPI packs and unpacks internally).
pub fn exchange_datatype(mpi: &Mpi, peer: usize, data: &mut [f64], layout: Vector) -> Result<()> {
    check_peer(mpi, peer)?;
    layout.check("block exchange", data.len(), usize::MAX)?;
    if layout.count == 0 || layout.blocklen == 0 {
        return Ok(());
    }
    mpi.run(|w| -> Result<()> {
        let dt = vector_type::<f64>(layout)?;
        // SAFETY: `check` proved `data` spans the layout's extent, so one vector datatype
        // maps only elements of `data`, none of them padding.
        let mut view = unsafe { MutView::with_count_and_datatype(data, 1, &dt) };
        let p = w.process_at_rank(peer as i32);
        mpi::point_to_point::send_receive_replace_into(&mut view, &p, &p);
        Ok(())
    })
}
