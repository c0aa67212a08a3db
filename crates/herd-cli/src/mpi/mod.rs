//! `herd mpi …`: experiments of herd-mpi, run under `mpirun` (rank 0 reports).

pub mod fft;

/// The `herd mpi` subcommands.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum MpiCommand {
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
        MpiCommand::Fft(args) => fft::run(args),
    }
}
