//! `herd la`: dense linear algebra on herd against faer and OpenBLAS in the
//! same run — `potrf` (tiled Cholesky on herd-flow) and `gemm` (matrix
//! multiply on the herd pool). What the routines share: the options
//! ([`CommonArgs`]), the rounds ([`contest`]), the OpenBLAS contender
//! ([`openblas`]), the residual probe (`herd_la::probe_residual`, `O(n²)`)
//! and the report ([`report`]).

pub mod contest;
mod gemm;
mod geqrf;
mod getrf;
mod openblas;
mod potrf;
pub mod report;
mod sygv;

pub use gemm::{gemm, GemmArgs};
pub use geqrf::{geqrf, GeqrfArgs};
pub use getrf::{getrf, GetrfArgs};
pub use potrf::{potrf, PotrfArgs};
pub use sygv::{sygv, SygvArgs};

use crate::error::{usize_in, CliError};
use crate::plot;
use crate::CliResult;
use herd::limits::check_memory;
use indicatif::ProgressBar;
use openblas::OpenBlas;
use report::Measured;
use std::path::PathBuf;

/// The smallest matrix order: below it a run takes microseconds and the
/// timings (and the speed ratios) measure nothing but overhead.
const MIN_N: u64 = 32;
/// The largest matrix order: LAPACK's (OpenBLAS's) `n` is a 32-bit integer.
const MAX_N: u64 = i32::MAX as u64;

/// Options every `herd la` routine takes.
#[derive(clap::Args, Debug)]
pub struct CommonArgs {
    /// Matrix orders, comma-separated, each at least 32 (what a run needs is
    /// checked against MemAvailable first).
    #[arg(short = 'n', long, value_name = "N,...", value_delimiter = ',', default_value = "2000",
          value_parser = usize_in(MIN_N..=MAX_N))]
    n: Vec<usize>,
    /// Timed runs per contender and order (rounds of one run each, the first
    /// contender rotating; the median is reported).
    #[arg(long, default_value_t = 3, value_parser = usize_in(1..=1_000_000))]
    reps: usize,
    /// Print JSON instead of a table: for one order an object with an object
    /// per implementation (`herd`, `faer`, `openblas`, each with `seconds`,
    /// `median`, `gflops`, `residual`), for several an array of them.
    #[arg(long)]
    json: bool,
    /// Draw GFLOP/s and seconds against n, one line per implementation, to
    /// FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

impl CommonArgs {
    /// Checks what clap cannot, and that `bytes(n)` for the largest order fits
    /// in MemAvailable (`what(n)` says what it is for).
    fn check(
        &self,
        what: impl Fn(usize) -> String,
        bytes: impl Fn(u128) -> u128,
    ) -> CliResult<Option<plot::Format>> {
        if self.reps == 0 || self.n.is_empty() || self.n.iter().any(|&n| (n as u64) < MIN_N) {
            return Err(CliError::Usage(format!("-n must be at least {MIN_N}, --reps at least 1")));
        }
        let largest = self.n.iter().copied().max().unwrap_or(0);
        check_memory(&what(largest), bytes(largest as u128))?;
        self.plot.as_deref().map(plot::Format::of).transpose()
    }

    /// A progress bar over `runs_per_order` runs for every order.
    fn bar(&self, runs_per_order: usize) -> ProgressBar {
        crate::progress::bar((self.n.len() * runs_per_order) as u64)
    }

    /// Prints the results (JSON or `describe`d tables) and draws the chart.
    fn finish(
        &self,
        results: &[Measured],
        (threads, plot_format): (usize, Option<plot::Format>),
        caption: &str,
        describe: impl Fn(&Measured) -> String,
    ) -> CliResult {
        if self.json {
            report::print_json(results, threads, self.reps)?;
        } else {
            for m in results {
                print!("{}", describe(m));
            }
        }
        match (&self.plot, plot_format) {
            (Some(path), Some(format)) => report::draw(path, format, caption, results),
            _ => Ok(()),
        }
    }
}

/// Starts the peers' threads, before herd's pool exists: OpenBLAS's (loaded
/// here; `None`, after saying on stderr why, when it cannot be) and those of
/// Rayon's global pool, which faer's `Par::rayon` runs on.
///
/// The order matters. A herd pool binds the thread that enters it as master
/// to the master's place and leaves it bound between calls, and a new thread
/// inherits its creator's CPU mask: Rayon's threads, started lazily by
/// faer's first parallel call from this (then bound) thread, would all share
/// the master's core, and faer's "parallel" runs would use one core.
/// OpenBLAS may also set `OPENBLAS_CORETYPE`, which must happen before other
/// threads exist.
fn start_peers(routine: &str) -> Option<OpenBlas> {
    let openblas =
        OpenBlas::load().map_err(|why| eprintln!("herd la {routine}: OpenBLAS skipped: {why}")).ok();
    rayon::current_num_threads();
    openblas
}
