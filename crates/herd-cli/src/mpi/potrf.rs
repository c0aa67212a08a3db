//! `herd mpi potrf`: herd's distributed tiled Cholesky (herd-flow across ranks) against
//! ScaLAPACK's `pdpotrf` on the same matrix, grid and threads, under mpirun. Rank 0 prints
//! a table (or one JSON line) and draws a bar chart of the medians.

use super::{bar_chart, mpi_err};
use crate::error::{usize_in, CliError};
use crate::plot;
use crate::table::Table;
use crate::timing::median;
use crate::CliResult;
use herd_mpi::potrf::{factor, RESIDUAL_LIMIT};
use herd_mpi::scalapack::pdpotrf;
use herd_mpi::{Mpi, Options, ProcessGrid};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

/// Options of `herd mpi potrf`.
#[derive(clap::Args, Debug)]
pub struct PotrfArgs {
    /// The matrix order.
    #[arg(short = 'n', long, default_value_t = 8000, value_parser = usize_in(1..=1 << 20))]
    n: usize,
    /// The tile (block) size of both factorizations.
    #[arg(long, default_value_t = 256, value_parser = usize_in(1..=1 << 16))]
    nb: usize,
    /// The process grid ROWSxCOLS (default: the most square one with rows ≤ cols).
    #[arg(long, value_name = "ROWSxCOLS")]
    grid: Option<String>,
    /// Timed rounds (each factors with herd and with ScaLAPACK, the first rotating).
    #[arg(long, default_value_t = 3, value_parser = usize_in(1..=10_000))]
    reps: usize,
    /// Rank 0 prints one JSON object on one line: `n`, `nb`, `ranks`, `grid`, `threads`,
    /// and `herd` and `scalapack`, each with `median` seconds, `samples`, `gflops` and
    /// `residuals`.
    #[arg(long)]
    json: bool,
    /// Draw a bar chart of the two medians to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    chart: Option<PathBuf>,
}

const NAMES: [&str; 2] = ["herd", "scalapack"];

fn parse_grid(s: &str, ranks: usize) -> CliResult<ProcessGrid> {
    let bad = || {
        CliError::Usage(format!(
            "--grid {s}: expected ROWSxCOLS with ROWS·COLS = {ranks} ranks, e.g. 1x{ranks}"
        ))
    };
    let (r, c) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (r, c) = (r.trim().parse().map_err(|_| bad())?, c.trim().parse().map_err(|_| bad())?);
    ProcessGrid::new(r, c, ranks).map_err(|_| bad())
}

/// Runs `herd mpi potrf`.
pub fn run(args: &PotrfArgs) -> CliResult {
    let format = args.chart.as_deref().map(plot::Format::of).transpose()?;
    let mpi = Arc::new(Mpi::init(Options::default()).map_err(mpi_err)?);
    let (rank, ranks, n, nb) = (mpi.rank(), mpi.size(), args.n, args.nb);
    let grid = match &args.grid {
        Some(g) => parse_grid(g, ranks)?,
        None => ProcessGrid::square(ranks).map_err(mpi_err)?,
    };
    // herd: the rank's tiles and the received copies; ScaLAPACK: its local array. Counted
    // for all ranks as if on this node.
    let need = 3u128 * (n as u128).pow(2) * 8;
    herd::limits::check_memory(&format!("herd mpi potrf -n {n} on {ranks} ranks"), need)?;
    let threads = herd::current_num_threads();
    let mut samples: [Vec<f64>; 2] = Default::default();
    let mut residuals: [Vec<f64>; 2] = Default::default();
    let mut messages = (0u64, 0u64);
    for round in 0..args.reps {
        if rank == 0 && !args.json {
            eprintln!("round {}/{}", round + 1, args.reps);
        }
        for i in 0..2 {
            let which = (i + round) % 2;
            let seed = round as u64 + 1;
            let (s, r) = if which == 0 {
                let run = factor(&mpi, n, nb, grid, seed).map_err(mpi_err)?;
                messages = (run.messages, run.bytes);
                (run.seconds, run.residual)
            } else {
                let run = pdpotrf(&mpi, n, nb, grid, seed).map_err(mpi_err)?;
                (run.seconds, run.residual)
            };
            samples[which].push(s);
            residuals[which].push(r);
        }
    }
    let mpi = Arc::try_unwrap(mpi).map_err(|_| CliError::Failed("the MPI handle is still shared".into()))?;
    drop(mpi);
    let worst = residuals.iter().flatten().copied().fold(0.0, f64::max);
    let verdict = if worst <= RESIDUAL_LIMIT {
        Ok(())
    } else {
        Err(CliError::Verify(format!(
            "a factor's scaled residual is {worst:.3e} (at most {RESIDUAL_LIMIT} accepted)"
        )))
    };
    if rank != 0 {
        return verdict;
    }
    let medians: Vec<f64> = samples.iter().map(|s| median(s)).collect();
    let gflops = |s: f64| (n as f64).powi(3) / 3.0 / s / 1e9;
    if args.json {
        let entry = |i: usize| json!({"median": medians[i], "samples": samples[i], "gflops": gflops(medians[i]), "residuals": residuals[i]});
        let v = json!({
            "n": n, "nb": nb, "ranks": ranks, "grid": [grid.rows, grid.cols], "threads": threads,
            "herd": entry(0), "scalapack": entry(1),
            "herd_messages": messages.0, "herd_bytes": messages.1,
        });
        println!("{}", serde_json::to_string(&v)?);
    } else {
        println!(
            "Cholesky n = {n}, nb = {nb}, {ranks} ranks ({}×{} grid) × {threads} threads, {} rounds; \
             herd sent {} messages ({:.1} MiB) per run",
            grid.rows,
            grid.cols,
            args.reps,
            messages.0,
            messages.1 as f64 / (1u64 << 20) as f64
        );
        let mut t = Table::new(&[
            "implementation",
            "median s",
            "min s",
            "GFLOP/s",
            "scalapack/this",
            "worst residual",
        ]);
        for i in 0..2 {
            let min = samples[i].iter().copied().fold(f64::INFINITY, f64::min);
            let worst = residuals[i].iter().copied().fold(0.0, f64::max);
            t.row(vec![
                NAMES[i].into(),
                format!("{:.4}", medians[i]),
                format!("{min:.4}"),
                format!("{:.2}", gflops(medians[i])),
                format!("{:.2}", medians[1] / medians[i]),
                format!("{worst:.2e}"),
            ]);
        }
        print!("{}", t.render());
    }
    if let (Some(path), Some(format)) = (&args.chart, format) {
        let caption = format!("Cholesky n = {n}, {ranks} ranks × {threads} threads");
        bar_chart(path, format, &caption, &NAMES, &medians)?;
    }
    verdict
}
