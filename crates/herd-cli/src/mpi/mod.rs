//! `herd mpi …`: experiments of herd-mpi, run under `mpirun` (rank 0 reports).

pub mod copy;
pub mod fft;

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
    /// Distributed 2-D FFT: herd overlapped and bulk-synchronous against FFTW-MPI.
    ///
    /// Run under mpirun (n divisible by the number of ranks). Times the three
    /// implementations of the forward n × n complex FFT (transposed output) in
    /// alternating rounds after one untimed warm-up round; a sample is the
    /// slowest rank's time from a barrier to its completion. Rank 0 prints the
    /// medians, GFLOP/s (5 n² log2(n²) flops) and ratios. The overlapped
    /// output must equal the bulk one and FFTW's must agree within
    /// 10 · n · log2(n) · ε · rms(x), else the command fails.
    Fft(fft::FftArgs),
}

/// Runs a `herd mpi` subcommand.
pub(crate) fn run(cmd: &MpiCommand) -> crate::CliResult {
    match cmd {
        MpiCommand::Copy(args) => copy::run(args),
        MpiCommand::Fft(args) => fft::run(args),
    }
}
