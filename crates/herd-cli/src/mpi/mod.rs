//! `herd mpi …`: experiments run under `mpirun`; rank 0 prints.

pub mod copy;

/// The `herd mpi` subcommands.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum MpiCommand {
    /// Copy and pack on every rank, and a strided block exchanged between ranks 0 and 1.
    ///
    /// Each rank measures herd's parallel copy against memcpy and herd's pack against
    /// MPI_Pack with a vector datatype; ranks 0 and 1 then exchange a column block of a
    /// row-major matrix both ways, (a) herd pack + contiguous isend/irecv + herd unpack,
    /// (b) MPI_Sendrecv_replace with the MPI_Type_vector. Every result is checked. Rank 0
    /// prints the tables (one JSON line with --json). Run under mpirun, with
    /// HERD_NUM_THREADS set per rank.
    Copy(copy::MpiCopyArgs),
}

/// Runs a `herd mpi` subcommand.
pub(crate) fn run(cmd: &MpiCommand) -> crate::CliResult {
    match cmd {
        MpiCommand::Copy(args) => copy::run(args),
    }
}
