//! `herd`: inspect the topology herd sees, reproduce the ATLAS
//! thread-management experiment, and measure herd's own overheads.

mod error;
mod la;
mod monitor;
mod mpi;
mod overhead;
mod plot;
mod pmo;
mod pools;
mod progress;
mod run;
mod table;
mod timing;
mod topo;
mod trace_cmd;

use clap::{Parser, Subcommand};
use error::CliError;
use std::process::ExitCode;

/// herd: a hardware-aware parallel runtime with pinned persistent workers.
///
/// Every command builds its pools from the HERD_* environment
/// (HERD_NUM_THREADS, HERD_PLACES, HERD_BIND, HERD_DISPATCH, HERD_WAIT,
/// HERD_RESERVE, HERD_TOPOLOGY, HERD_DISPLAY_ENV, HERD_TRACE); an invalid
/// value is reported and the command exits with status 2. Every numeric
/// option is checked before any work starts, also against what the machine
/// has (threads, memory).
#[derive(Parser, Debug)]
#[command(name = "herd", version, about, long_about, after_long_help = error::EXIT_STATUS_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show the topology and where herd places its participants.
    ///
    /// Prints the tree of packages, caches, cores and PUs, the worker→PU map,
    /// the master's PU, the resolved configuration and any notes (synthetic
    /// topology, oversubscription, ...). Set HERD_TOPOLOGY to an hwloc
    /// synthetic description (e.g. "pack:2 l3:1 core:4 pu:2") to see how herd
    /// would lay out another machine.
    Topo {
        /// Print the pool information as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Reproduce the ATLAS thread-management experiment (rank-K update).
    ///
    /// For each problem size N, computes C += A·B (A is N×K, B is K×N) with
    /// C's columns split statically among the participants, each computing
    /// its block with faer's serial kernel, under each of the six dispatch
    /// strategies (LJ, LJA, LJAML, PW, PWA, PWAML). Caches are flushed before
    /// every timed trial and times are averaged (means, as the paper argues).
    /// Reports FST, FPT, max PCT, PMO = FPT − max PCT, PMO as % of FPT,
    /// PCE = mean PCT / mean PST and the speed relative to LJ.
    Pmo(pmo::PmoArgs),
    /// Micro-benchmarks of herd itself.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run an OpenMP program (gcc -fopenmp) on herd's OpenMP runtime.
    ///
    /// Preloads herd's OpenMP runtime built as libgomp.so.1 (the gomp/ folder
    /// beside the library, so the program's libgomp is never loaded; with
    /// --replace, LD_LIBRARY_PATH=<gomp dir> instead) and sets the HERD_*
    /// variables given as options, after checking them. The library is
    /// $HERD_OMP_LIB, else libherd_omp.so next to this executable (`make omp`
    /// builds both); only without its gomp/ folder is libherd_omp.so itself
    /// preloaded. The program replaces herd (exec): its signals and exit
    /// status are its own.
    Run(run::RunArgs),
    /// Publish per-socket contention meters for HERD_THROTTLE=auto pools.
    ///
    /// A daemon: every interval it measures each socket's busy fraction from
    /// /proc/stat and, where the kernel allows system-wide counting
    /// (perf_event_paranoid <= 0), cycles and LLC misses, and publishes them
    /// on the user's blackboard: $XDG_RUNTIME_DIR/herd-blackboard when that
    /// directory is private to the user, else /dev/shm/herd-blackboard-<uid>
    /// (mode 0600; a name held by another user is reported, never used). Pools built with
    /// HERD_THROTTLE=auto read it and keep fewer workers active on sockets
    /// that other processes keep busy. Prints what it publishes.
    Monitor(monitor::MonitorArgs),
    /// Timelines and critical-path analysis of trace files.
    ///
    /// Reads a herd-flow trace (one "X" event per executed step, with its
    /// dependencies) or a HERD_TRACE file (B/E spans per thread).
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Dense linear algebra on herd against faer and OpenBLAS in the same run.
    #[command(subcommand)]
    La(LaCommand),
    /// herd over MPI (run under mpirun): the distributed experiments of herd-mpi.
    #[command(subcommand)]
    Mpi(mpi::MpiCommand),
}

#[derive(Subcommand, Debug)]
enum LaCommand {
    /// Factor a random SPD matrix with the dataflow tiled Cholesky.
    ///
    /// Prints GFLOP/s (n³/3 flops) for herd (HERD_* pool) and, in the same
    /// run, faer's parallel Cholesky and OpenBLAS's threaded dpotrf with as
    /// many threads. Every factor is checked in O(n²): ‖A·x − L·(Lᵀ·x)‖ for
    /// a random x, scaled by the norms, n and ε. --tune picks the tile size
    /// first.
    Potrf(la::PotrfArgs),
    /// Multiply random matrices with herd's parallel GEMM.
    ///
    /// C ← A·B (n×n; 2n³ flops) or, with -k K, the rank-K update
    /// C ← C − A·Bᵀ (A, B n×K), with herd_la::gemm on the HERD_* pool, and
    /// in the same run faer's parallel matmul and OpenBLAS's threaded dgemm
    /// with as many threads. Every result is checked in O(n²): C·x against
    /// A·(op(B)·x) for a random x, scaled by the norms, the inner dimension
    /// and ε.
    Gemm(la::GemmArgs),
    /// Householder QR of a random n×n matrix with herd_la::geqrf.
    ///
    /// Prints GFLOP/s (LAPACK's 4n³/3 flops) for herd (HERD_* pool) and, in
    /// the same run, faer's parallel QR and OpenBLAS's threaded dgeqrf with as
    /// many threads. Every factorization is checked in O(n²): A·x against
    /// Q·(R·x) for a random x, Q applied from the reflectors, scaled by
    /// ‖A‖, ‖x‖, n and ε.
    Geqrf(la::GeqrfArgs),
    /// Factor a random matrix with herd's LU with partial pivoting.
    ///
    /// Prints GFLOP/s (LAPACK's count, 2n³/3) for herd_la::Getrf on the HERD_*
    /// pool and, in the same run, faer's parallel LU and OpenBLAS's threaded
    /// dgetrf with as many threads. Every factorization is checked in O(n²):
    /// A·x against P·L·(U·x) for a random x, scaled by ‖A‖, n and ε.
    Getrf(la::GetrfArgs),
    /// Solve a random generalized symmetric-definite eigenproblem A·x = λ·B·x.
    ///
    /// All eigenvalues and eigenvectors (LAPACK's dsygv, itype 1, jobz V,
    /// uplo L) with herd_la::sygv on the HERD_* pool, and in the same run
    /// faer's parallel Cholesky + self-adjoint EVD and OpenBLAS's threaded
    /// dsygv with as many threads; 17n³/3 flops. Every result is checked in
    /// O(n²) (A·(Z·x) against B·((Z·Λ)·x) for a random x) and the
    /// eigenvalues are compared with OpenBLAS's.
    Sygv(la::SygvArgs),
}

#[derive(Subcommand, Debug)]
enum TraceCommand {
    /// Draw a timeline chart (SVG or PNG) of a trace.
    ///
    /// One row per worker (HERD_TRACE: per thread), a bar per step coloured by
    /// step collection (HERD_TRACE: by span kind), idle time left grey, the
    /// critical path outlined. Time in ms from the first event.
    Show(trace_cmd::show::ShowArgs),
    /// Report work, critical path, parallelism and the lower bound on time.
    ///
    /// Work W is the sum of step times; the span S is the longest path of
    /// the executed DAG weighted by measured step times; parallelism is W/S;
    /// the lower bound for P workers is max(S, W/P), and the achieved makespan
    /// T is compared with it. A HERD_TRACE file has no dependencies: only its
    /// busy time and utilisation are reported.
    Analyze(trace_cmd::analyze::AnalyzeArgs),
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// Time herd's basic operations on this machine.
    ///
    /// An empty broadcast region per dispatch strategy (and the default pool),
    /// a join of two empty closures, a scope spawning one empty task, and a
    /// for_each over 10^6 trivial iterations per schedule. Each figure is the
    /// median over repetitions of many operations timed together.
    Overhead(overhead::OverheadArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Topo { json } => topo::run(json),
        Command::Pmo(args) => pmo::run(&args),
        Command::Bench(BenchCommand::Overhead(args)) => overhead::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Monitor(args) => monitor::run(&args),
        Command::Trace(TraceCommand::Show(args)) => trace_cmd::show::run(&args),
        Command::Trace(TraceCommand::Analyze(args)) => trace_cmd::analyze::run(&args),
        Command::La(LaCommand::Potrf(args)) => la::potrf(&args),
        Command::La(LaCommand::Gemm(args)) => la::gemm(&args),
        Command::La(LaCommand::Geqrf(args)) => la::geqrf(&args),
        Command::La(LaCommand::Getrf(args)) => la::getrf(&args),
        Command::La(LaCommand::Sygv(args)) => la::sygv(&args),
        Command::Mpi(cmd) => mpi::run(&cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("herd: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Result of a command.
pub(crate) type CliResult<T = ()> = Result<T, CliError>;
