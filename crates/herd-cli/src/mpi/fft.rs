//! `herd mpi fft`: herd's overlapped and bulk-synchronous distributed 2-D FFTs against
//! FFTW-MPI in the same run, under mpirun. Rank 0 prints a table (or one JSON line) and
//! draws a bar chart of the medians.

use super::{bar_chart, max_all, mpi_err};
use crate::error::{usize_in, CliError};
use crate::plot;
use crate::table::Table;
use crate::timing::median;
use crate::CliResult;
use herd_mpi::fft::fftw::{Fftw2d, Planning};
use herd_mpi::fft::{flops, Algorithm, Direction, Fft2d, Slab, C64, DEFAULT_CHUNKS};
use herd_mpi::{Mpi, Options};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// Options of `herd mpi fft`.
#[derive(clap::Args, Debug)]
pub struct FftArgs {
    /// The matrix order (n × n complex doubles, distributed by rows; a multiple of the
    /// number of ranks).
    #[arg(short = 'n', long, default_value_t = 4096, value_parser = usize_in(2..=1 << 20))]
    n: usize,
    /// Timed runs of each implementation (rounds of one run each, the first rotating; the
    /// medians are reported).
    #[arg(long, default_value_t = 5, value_parser = usize_in(1..=100_000))]
    reps: usize,
    /// Chunks K of the overlapped transform (more than n/P is taken as n/P).
    #[arg(long, default_value_t = DEFAULT_CHUNKS, value_parser = usize_in(1..=1 << 20))]
    chunks: usize,
    /// How FFTW plans: `measure` (FFTW_MEASURE, the default: FFTW times candidate plans
    /// before the run) or `estimate` (FFTW_ESTIMATE).
    #[arg(long, value_parser = ["measure", "estimate"], default_value = "measure")]
    fftw_plan: String,
    /// Rank 0 prints one JSON object on one line instead of the table: `n`, `ranks`,
    /// `threads`, `chunks`, `fftw_planning`, and `overlapped`, `bulk`, `fftw` each with
    /// `median` seconds, `samples` and `gflops`, and the checks.
    #[arg(long)]
    json: bool,
    /// Draw a bar chart of the three medians to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    chart: Option<PathBuf>,
}

const NAMES: [&str; 3] = ["overlapped", "bulk", "fftw"];

/// The benchmark input, element (i, j): a hash of (i, j) in [-0.5, 0.5)² (no dominant
/// frequency, so FFT errors compare to rms(x)).
fn input(i: usize, j: usize) -> C64 {
    let mut h = (i as u64) << 32 ^ j as u64;
    h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    h = (h ^ (h >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    let unit = |bits: u64| (bits & 0xffff_ffff) as f64 / 4_294_967_296.0 - 0.5;
    C64::new(unit(h), unit(h >> 32))
}

fn max_abs_diff(a: &[C64], b: &[C64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).norm()).fold(0.0, f64::max)
}

/// Runs `herd mpi fft`.
pub fn run(args: &FftArgs) -> CliResult {
    let format = args.chart.as_deref().map(plot::Format::of).transpose()?;
    let mpi = Mpi::init(Options::default()).map_err(mpi_err)?;
    let (rank, ranks, n) = (mpi.rank(), mpi.size(), args.n);
    let slab = Slab::new(n, ranks, rank).map_err(mpi_err)?;
    // per rank: x, the work copy, two outputs, bulk and chunk send/receive buffers, FFTW's
    // two; all ranks are counted as if on this node
    let need = 10u128 * slab.local_len() as u128 * 16 * ranks as u128;
    herd::limits::check_memory(&format!("herd mpi fft -n {n} on {ranks} ranks"), need)?;
    let threads = herd::global().num_threads();
    let planning = if args.fftw_plan == "estimate" { Planning::Estimate } else { Planning::Measure };
    let mut fft = Fft2d::new(&mpi, n).and_then(|f| f.with_chunks(args.chunks)).map_err(mpi_err)?;
    let say = |s: &str| {
        if rank == 0 && !args.json {
            eprintln!("{s}");
        }
    };
    say(&format!("planning FFTW-MPI ({})…", args.fftw_plan));
    let t = Instant::now();
    let mut fftw = Fftw2d::new(&mpi, n, threads, planning).map_err(mpi_err)?;
    let plan_s = max_all(&mpi, t.elapsed().as_secs_f64())?;

    let x: Vec<C64> = slab.range().flat_map(|i| (0..n).map(move |j| input(i, j))).collect();
    let mut work = x.clone();
    let mut out = [vec![C64::default(); slab.local_len()], vec![C64::default(); slab.local_len()]];
    let mut samples: [Vec<f64>; 3] = Default::default();
    // round 0 is an untimed warm-up (herd's buffers are allocated on first use, FFTW's at
    // planning)
    for round in 0..=args.reps {
        if round > 0 {
            say(&format!("round {round}/{}", args.reps));
        }
        for i in 0..3 {
            let which = (i + round) % 3;
            if which == 2 {
                fftw.input_mut().copy_from_slice(&x);
            } else {
                work.copy_from_slice(&x);
            }
            mpi.barrier();
            let t = Instant::now();
            match which {
                0 => fft.transform_into(Algorithm::Overlapped, Direction::Forward, &mut work, &mut out[0]),
                1 => fft.transform_into(Algorithm::Bulk, Direction::Forward, &mut work, &mut out[1]),
                _ => {
                    fftw.execute();
                    Ok(())
                }
            }
            .map_err(mpi_err)?;
            let s = max_all(&mpi, t.elapsed().as_secs_f64())?;
            if round > 0 {
                samples[which].push(s);
            }
        }
    }

    // checks: overlapped = bulk; FFTW within 10 · n log2 n · ε · rms(x) of bulk
    let over_vs_bulk = max_all(&mpi, max_abs_diff(&out[0], &out[1]))?;
    let sq: f64 = x.iter().map(|z| z.norm_sqr()).sum();
    let rms = max_all(&mpi, sq / x.len() as f64)?.sqrt(); // every rank's slab has the same statistics; the max is a safe scale
    let fftw_diff = max_all(&mpi, max_abs_diff(fftw.output(), &out[1]))?;
    let fftw_scaled = fftw_diff / (n as f64 * (n as f64).log2() * f64::EPSILON * rms);
    drop(fftw);
    drop(fft);
    drop(mpi);
    if rank != 0 {
        return check(over_vs_bulk, fftw_scaled);
    }

    let medians: Vec<f64> = samples.iter().map(|s| median(s)).collect();
    let gflops = |s: f64| flops(n) / s / 1e9;
    if args.json {
        let entry =
            |i: usize| json!({"median": medians[i], "samples": samples[i], "gflops": gflops(medians[i])});
        let v = json!({
            "n": n, "ranks": ranks, "threads": threads, "chunks": args.chunks.min(n / ranks),
            "fftw_planning": args.fftw_plan, "fftw_plan_seconds": plan_s,
            "overlapped": entry(0), "bulk": entry(1), "fftw": entry(2),
            "check": {"overlapped_vs_bulk_max_abs": over_vs_bulk, "fftw_vs_bulk_scaled": fftw_scaled},
        });
        println!("{}", serde_json::to_string(&v)?);
    } else {
        println!(
            "2-D FFT n = {n} ({:.3} GFLOP), {ranks} ranks × {threads} threads, K = {} chunks, FFTW {} \
             (planned in {plan_s:.2} s), {} timed rounds",
            flops(n) / 1e9,
            args.chunks.min(n / ranks),
            args.fftw_plan,
            args.reps
        );
        let mut t = Table::new(&["implementation", "median s", "min s", "GFLOP/s", "bulk/this", "fftw/this"]);
        for i in 0..3 {
            let min = samples[i].iter().copied().fold(f64::INFINITY, f64::min);
            t.row(vec![
                NAMES[i].into(),
                format!("{:.4}", medians[i]),
                format!("{min:.4}"),
                format!("{:.2}", gflops(medians[i])),
                format!("{:.2}", medians[1] / medians[i]),
                format!("{:.2}", medians[2] / medians[i]),
            ]);
        }
        print!("{}", t.render());
        println!(
            "check: overlapped vs bulk max |Δ| = {over_vs_bulk:e}; FFTW vs bulk max |Δ| = {fftw_diff:.3e} \
             = {fftw_scaled:.2} · n·log2(n)·ε·rms(x)"
        );
    }
    if let (Some(path), Some(format)) = (&args.chart, format) {
        let caption = format!("2-D FFT n = {n}, {ranks} ranks × {threads} threads");
        bar_chart(path, format, &caption, &NAMES, &medians)?;
    }
    check(over_vs_bulk, fftw_scaled)
}

fn check(over_vs_bulk: f64, fftw_scaled: f64) -> CliResult {
    if over_vs_bulk != 0.0 {
        return Err(CliError::Verify(format!(
            "the overlapped output differs from the bulk one by {over_vs_bulk:e}"
        )));
    }
    // Negated so that a NaN difference fails too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    if !(fftw_scaled < 10.0) {
        return Err(CliError::Verify(format!(
            "FFTW's output differs from herd's by {fftw_scaled:.2} · n·log2(n)·ε·rms(x) (at most 10 accepted)"
        )));
    }
    Ok(())
}
