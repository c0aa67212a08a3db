//! Distributed termination detection: rounds of a non-blocking all-reduce of each rank's
//! (messages sent, messages received) counters, ended by two consecutive rounds with the
//! same totals and sent = received (argument in README.md beside this file).

use super::route::State;
use crate::Mpi;
use mpi::ffi;
use std::sync::Arc;

/// Decides termination from the totals of successive rounds.
#[derive(Debug, Default)]
pub(crate) struct Detector {
    prev: Option<[u64; 2]>,
    /// Rounds completed.
    pub(crate) rounds: u64,
}

impl Detector {
    /// Takes the `[sent, received]` totals of the round just completed (the same on every
    /// rank); `true` when the graph has terminated everywhere: the previous round had the
    /// same totals and every message sent was received.
    pub(crate) fn observe(&mut self, totals: [u64; 2]) -> bool {
        self.rounds += 1;
        let done = self.prev == Some(totals) && totals[0] == totals[1];
        self.prev = Some(totals);
        done
    }
}

/// Posts one round: `MPI_Iallreduce(SUM)` of this rank's `[sent, received]`, progressed by
/// the communicator thread like any request; its completion hands the totals to
/// [`State::round_done`]. Every rank must post the same sequence of rounds.
pub(crate) fn post_round(mpi: &Mpi, counts: [u64; 2], state: Arc<State>) {
    let rank = mpi.rank();
    mpi.submit(move |eng| {
        let send = Box::new(counts);
        let mut recv = Box::new([0u64; 2]);
        // SAFETY: a request handle MPI fills in.
        let mut req: ffi::MPI_Request = unsafe { std::mem::zeroed() };
        // SAFETY: `send` and `recv` hold 2 u64 each on the heap and are moved into the
        // finish closure below, which the engine keeps until the request has completed;
        // RSMPI_UINT64_T and RSMPI_SUM are constants of the MPI shim; called on the
        // communicator thread, the one that initialized MPI.
        let rc = unsafe {
            ffi::MPI_Iallreduce(
                send.as_ptr().cast(),
                recv.as_mut_ptr().cast(),
                2,
                ffi::RSMPI_UINT64_T,
                ffi::RSMPI_SUM,
                eng.comm(),
                &mut req,
            )
        };
        assert_eq!(rc, ffi::MPI_SUCCESS as i32, "MPI_Iallreduce failed on rank {rank}");
        eng.track(
            vec![req],
            Box::new(move || {
                drop(send);
                state.round_done(*recv);
            }),
        );
    });
}

#[cfg(test)]
mod tests {
    use super::Detector;

    #[test]
    fn two_equal_balanced_rounds_terminate() {
        let mut d = Detector::default();
        assert!(!d.observe([3, 3]), "one round is never enough");
        assert!(d.observe([3, 3]));
        let mut d = Detector::default();
        assert!(!d.observe([5, 4]));
        assert!(!d.observe([5, 4]), "a message in flight in both rounds");
        assert!(!d.observe([5, 5]), "received since the last round");
        assert!(!d.observe([6, 6]), "sent and received since the last round");
        assert!(d.observe([6, 6]));
        assert_eq!(d.rounds, 5);
    }
}
