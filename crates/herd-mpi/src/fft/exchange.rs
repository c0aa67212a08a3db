//! The all-to-all of one chunk, handed to the communicator thread with buffers the caller
//! owns and gets back: like [`crate::Mpi::ialltoall`], but the receive buffer is passed in
//! rather than allocated, so repeated transforms reuse their (already faulted-in) memory.

use super::local::C64;
use crate::comm::pending;
use crate::error::{MpiError, Result};
use crate::{Mpi, Pending};
use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::AsRaw;

/// Starts `MPI_Ialltoall` of `send` into `recv` (both `P · count` elements; block `j` of
/// `send` goes to rank `j`) on the communicator thread and returns at once; the pending
/// result gives both buffers back once MPI is done with them.
pub(crate) fn ialltoall_into(
    mpi: &Mpi,
    send: Vec<C64>,
    mut recv: Vec<C64>,
) -> Result<Pending<(Vec<C64>, Vec<C64>)>> {
    let p = mpi.size();
    if send.len() != recv.len() || send.len() % p != 0 {
        return Err(MpiError::Invalid(format!(
            "2-D FFT all-to-all: send {} and receive {} elements must be equal and split into {p} blocks",
            send.len(),
            recv.len()
        )));
    }
    let count = send.len() / p;
    if count > i32::MAX as usize {
        return Err(MpiError::Invalid(format!(
            "2-D FFT all-to-all: a block of {count} elements exceeds MPI's int count; use more chunks"
        )));
    }
    let rank = mpi.rank();
    let (pend, done) = pending(rank);
    mpi.submit(move |eng| {
        let dt = C64::equivalent_datatype().as_raw();
        // SAFETY: a request handle MPI fills in.
        let mut req: ffi::MPI_Request = unsafe { std::mem::zeroed() };
        // SAFETY: both buffers hold P · count elements of the datatype, and they are moved
        // into the finish closure below, which the engine keeps until the request completes.
        let rc = unsafe {
            ffi::MPI_Ialltoall(
                send.as_ptr().cast(),
                count as i32,
                dt,
                recv.as_mut_ptr().cast(),
                count as i32,
                dt,
                eng.comm(),
                &mut req,
            )
        };
        if rc != ffi::MPI_SUCCESS as i32 {
            done.complete(Err(MpiError::Call { call: "MPI_Ialltoall", rank, code: rc }));
            return;
        }
        eng.track(vec![req], Box::new(move || done.complete(Ok((send, recv)))));
    });
    Ok(pend)
}
