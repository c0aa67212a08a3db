//! The baseline herd's pack is measured against: MPI's derived datatypes,
//! `MPI_Type_vector` + `MPI_Pack` / `MPI_Unpack` (through rsmpi). Every function here
//! makes MPI calls and so must run on the communicator thread, inside [`crate::Mpi::run`].

use super::pack::Vector;
use crate::{MpiError, Result};
use mpi::datatype::{Equivalence, UserDatatype, View};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Count;

fn count(layout: Vector, what: &str, v: usize) -> Result<Count> {
    Count::try_from(v).map_err(|_| {
        MpiError::Invalid(format!(
            "MPI_Type_vector for {layout:?}: {what} {v} exceeds MPI's int count (at most {})",
            Count::MAX
        ))
    })
}

/// The committed `MPI_Type_vector(count, blocklen, stride, T)` for `layout`
/// (freed when dropped). Call on the communicator thread.
pub fn vector_type<T: Equivalence>(layout: Vector) -> Result<UserDatatype> {
    let (c, b, s) = (
        count(layout, "count", layout.count)?,
        count(layout, "blocklen", layout.blocklen)?,
        count(layout, "stride", layout.stride)?,
    );
    Ok(UserDatatype::vector(c, b, s, &T::equivalent_datatype()))
}

/// `MPI_Pack` of one `datatype` (a [`vector_type`] for `layout`) from `src` into `out`;
/// returns the packed bytes. Call on the communicator thread.
pub fn mpi_pack<T: Equivalence>(
    world: &SimpleCommunicator,
    datatype: &UserDatatype,
    layout: Vector,
    src: &[T],
    out: &mut [u8],
) -> Result<usize> {
    let n = layout.check("MPI_Pack", src.len(), usize::MAX)?;
    let need = world.pack_size(1, datatype) as usize;
    if out.len() < need {
        return Err(MpiError::Invalid(format!(
            "MPI_Pack: the output has {} bytes, MPI_Pack_size asks {need} for {layout:?}",
            out.len()
        )));
    }
    if n == 0 {
        return Ok(0);
    }
    // SAFETY: `check` proved `src` spans the layout's extent, so one `datatype` (a vector
    // of `T` for that layout) maps only elements of `src`, none of them padding.
    let view = unsafe { View::with_count_and_datatype(src, 1, datatype) };
    Ok(world.pack_into(&view, out, 0) as usize)
}

/// `MPI_Unpack` of one `datatype` (a [`vector_type`] for `layout`) from `packed` into the
/// strided `dst`. Call on the communicator thread.
pub fn mpi_unpack<T: Equivalence>(
    world: &SimpleCommunicator,
    datatype: &UserDatatype,
    layout: Vector,
    packed: &[u8],
    dst: &mut [T],
) -> Result<()> {
    let n = layout.check("MPI_Unpack", dst.len(), usize::MAX)?;
    let need = n * std::mem::size_of::<T>();
    if packed.len() < need {
        return Err(MpiError::Invalid(format!(
            "MPI_Unpack: the packed input has {} bytes, {layout:?} needs {need}",
            packed.len()
        )));
    }
    if n == 0 {
        return Ok(());
    }
    // SAFETY: `check` proved `dst` spans the layout's extent, so one `datatype` maps only
    // elements of `dst`; `packed` holds at least the layout's packed bytes, which MPI_Unpack
    // reads (the homogeneous "native" pack format is the raw element bytes).
    unsafe {
        let mut view = mpi::datatype::MutView::with_count_and_datatype(dst, 1, datatype);
        world.unpack_into(packed, &mut view, 0);
    }
    Ok(())
}
