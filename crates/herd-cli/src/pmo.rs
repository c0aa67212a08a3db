//! `herd pmo`: the rank-K update experiment of the ATLAS thread-management
//! paper (thread-management-overhead-atlas.txt §I–III, Figures 1–3).
//!
//! C += A·B with A N×K and B K×N; C's columns are split statically among the
//! participants, each computing its block with faer's serial kernel. For each
//! N and each of the six dispatch strategies we measure FST, PST, FPT and PCT,
//! averaged over trials with every cache flushed before each timed trial, and
//! derive PMO, PCE and the speed relative to LJ.

use crate::error::{usize_in, write_file, CliError};
use crate::plot::{self, Panel, Series};
use crate::table::Table;
use crate::timing::{mean, micros, time};
use crate::CliResult;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use herd::limits::{bytes, check_memory};
use herd::measure::{mean_timing, Measures};
use herd::{Dispatch, Pool, PoolInfo};
use serde::Serialize;
use std::hint::black_box;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// Options of `herd pmo`.
#[derive(clap::Args, Debug)]
pub struct PmoArgs {
    /// Fewer and smaller problems (N up to 768) and 10 trials: well under a minute.
    #[arg(long)]
    quick: bool,
    /// Write every point, with the machine description, as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Draw the paper's Figures 1–3 (PMO, PMO % of runtime, speed relative to
    /// LJ) to FILE; .svg or .png.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// The rank K of the update (ATLAS: 56 on Core2, 40 on Opteron).
    #[arg(short = 'k', long = "rank", value_name = "K", default_value_t = 56, value_parser = usize_in(1..=MAX_COUNT))]
    k: usize,
    /// Timed trials per point, averaged, 1 to 1000000 [default: 50, or 10 with --quick].
    #[arg(long, value_name = "N", value_parser = usize_in(1..=MAX_TRIALS))]
    trials: Option<usize>,
    /// Participants per region [default: the size of the default pool]; each
    /// has a cache-flush buffer (up to 64 MiB): all of them, with the
    /// matrices, must fit in MemAvailable, and the pools' threads within the
    /// process's limits.
    #[arg(long, value_name = "N", value_parser = usize_in(1..=MAX_COUNT))]
    threads: Option<usize>,
    /// Problem sizes N, comma-separated, each at least 8 [default: 10 sizes
    /// from 64 to 2048, or 64,128,256,512,768 with --quick].
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = usize_in(MIN_SIZE..=MAX_COUNT))]
    sizes: Option<Vec<usize>>,
}

/// The smallest problem size N: below it a rank-K update is a few hundred
/// flops and every strategy measures only its overhead.
const MIN_SIZE: u64 = 8;
/// The most trials per point (the samples of every trial are kept).
const MAX_TRIALS: u64 = 1_000_000;
/// The largest rank, participant count and size accepted by clap (memory
/// and the process's limits on threads bound them further).
const MAX_COUNT: u64 = 1_000_000;

/// Largest flush buffer per participant: VMs report absurd L3 sizes.
const FLUSH_CAP: u64 = 64 << 20;
/// Flush buffer when the topology reports no cache at all.
const FLUSH_DEFAULT: u64 = 32 << 20;
/// Largest accepted |parallel − serial| (entries are sums of K products of
/// numbers in [-1, 1]).
const TOLERANCE: f64 = 1e-9;

/// One (N, strategy) point.
#[derive(Debug, Serialize)]
struct Point {
    n: usize,
    strategy: &'static str,
    fst_us: f64,
    pst_us: Vec<f64>,
    fpt_us: f64,
    pct_us: Vec<f64>,
    max_pct_us: f64,
    pmo_us: f64,
    pmo_percent: f64,
    pce: f64,
    speedup: f64,
    /// FPT of LJ / FPT of this strategy, in percent (LJ = 100).
    speed_vs_lj_percent: f64,
    /// Largest |parallel − serial| entry of C in the verification run.
    max_abs_diff: f64,
}

/// The `--json` file.
#[derive(Serialize)]
struct Report {
    /// The default pool built from the environment.
    machine: PoolInfo,
    k: usize,
    trials: usize,
    threads: usize,
    sizes: Vec<usize>,
    llc_bytes: Option<u64>,
    flush_bytes_per_participant: u64,
    timestamp_unix: u64,
    timestamp: String,
    points: Vec<Point>,
}

/// Runs the experiment.
pub fn run(args: &PmoArgs) -> CliResult {
    let trials = args.trials.unwrap_or(if args.quick { 10 } else { 50 });
    let sizes = match &args.sizes {
        Some(s) => s.clone(),
        None if args.quick => vec![64, 128, 256, 512, 768],
        None => geometric(64, 2048, 10),
    };
    if trials == 0
        || args.k == 0
        || sizes.is_empty()
        || sizes.iter().any(|&n| n < MIN_SIZE as usize)
        || args.threads == Some(0)
    {
        return Err(CliError::Usage(format!(
            "--trials, -k and --threads must be positive, every --sizes value at least {MIN_SIZE}"
        )));
    }
    let plot_format = args.plot.as_deref().map(plot::Format::of).transpose()?;

    let (base, llc) = crate::pools::base_builder_and_llc()?;
    let machine = base.clone().build()?.info();
    let threads = args.threads.unwrap_or(machine.num_threads);
    let flush_bytes = llc.map_or(FLUSH_DEFAULT, |b| (2 * b).min(FLUSH_CAP));
    check_memory(
        &memory_what(threads, flush_bytes, &sizes, args.k),
        memory_need(threads, flush_bytes, &sizes, args.k, trials),
    )?;
    // Each pool checks its threads against the process's limits as it is
    // built, counting the pools built before it.
    let base = base.num_threads(threads);
    let pools = Dispatch::ALL
        .iter()
        .map(|&d| Ok((d, base.clone().dispatch(d).build()?)))
        .collect::<CliResult<Vec<(Dispatch, Pool)>>>()?;
    // What the pools really run with (a place list may cap the request).
    let threads = pools[0].1.num_threads();
    let flusher = Flusher::new(threads, flush_bytes as usize);

    println!(
        "rank-K update C += A·B: K = {}, {} participant(s), {} trial(s) per point (means), \
         caches flushed before every trial ({} MiB per participant)",
        args.k,
        threads,
        trials,
        flush_bytes >> 20
    );
    let progress = crate::progress::bar((sizes.len() * (2 + pools.len())) as u64);
    let mut points = Vec::new();
    for &n in &sizes {
        progress.set_message(format!("N = {n}"));
        let at = points.len();
        points.extend(measure_size(n, args.k, trials, &pools, &flusher, &progress)?);
        let lj_fpt =
            points[at..].iter().find(|p| p.strategy == Dispatch::Lj.name()).map_or(f64::NAN, |p| p.fpt_us);
        for p in &mut points[at..] {
            p.speed_vs_lj_percent = 100.0 * lj_fpt / p.fpt_us;
        }
    }
    progress.finish_and_clear();
    print!("{}", render_table(&points));

    if let (Some(path), Some(format)) = (&args.plot, plot_format) {
        draw(path, format, &points, args.k, threads)?;
    }
    if let Some(path) = &args.json {
        let secs =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs();
        let report = Report {
            machine,
            k: args.k,
            trials,
            threads,
            sizes,
            llc_bytes: llc,
            flush_bytes_per_participant: flush_bytes,
            timestamp_unix: secs,
            timestamp: utc_timestamp(secs),
            points,
        };
        write_file(path, serde_json::to_string_pretty(&report)? + "\n")?;
        eprintln!("herd: wrote {}", path.display());
    }
    Ok(())
}

/// Bytes a run needs at its peak: every participant's flush buffer, the
/// matrices of the largest size (A N×K, B K×N, C and the serial reference
/// N×N) and the kept samples (per trial, one time per participant).
fn memory_need(threads: usize, flush: u64, sizes: &[usize], k: usize, trials: usize) -> u128 {
    let (t, k) = (threads as u128, k as u128);
    let n = sizes.iter().copied().max().unwrap_or(0) as u128;
    t * u128::from(flush) + (2 * n * n + 2 * n * k) * 8 + trials as u128 * (t + 4) * 16
}

/// What [`memory_need`] counts, for the error message.
fn memory_what(threads: usize, flush: u64, sizes: &[usize], k: usize) -> String {
    let n = sizes.iter().copied().max().unwrap_or(0);
    format!(
        "herd pmo with {threads} participant(s) ({threads} cache-flush buffer(s) of {}) and N up to {n}, K = {k}",
        bytes(flush)
    )
}

/// `count` sizes from `lo` to `hi`, geometrically spaced, rounded to multiples of 8.
fn geometric(lo: usize, hi: usize, count: usize) -> Vec<usize> {
    let ratio = (hi as f64 / lo as f64).powf(1.0 / (count - 1) as f64);
    let mut v: Vec<usize> = (0..count)
        .map(|i| ((lo as f64 * ratio.powi(i as i32) / 8.0).round() as usize * 8).clamp(lo, hi))
        .collect();
    v.dedup();
    v
}

/// Every participant reads a private buffer larger than the last-level cache.
struct Flusher {
    bytes: usize,
    /// One buffer per participant index, allocated (first-touched) by its
    /// participant on the first flush.
    buffers: Vec<Mutex<Vec<u8>>>,
}

impl Flusher {
    fn new(participants: usize, bytes: usize) -> Flusher {
        Flusher { bytes, buffers: (0..participants).map(|_| Mutex::new(Vec::new())).collect() }
    }

    /// Evicts A, B and C from every participant's caches.
    fn flush(&self, pool: &Pool) {
        pool.broadcast(|ctx| {
            let mut buf = lock(&self.buffers[ctx.index()]);
            if buf.is_empty() {
                *buf = vec![1u8; self.bytes];
            }
            let sum = buf.iter().step_by(64).fold(0u64, |s, &b| s.wrapping_add(u64::from(b)));
            black_box(sum);
        });
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The serial kernel: `c += a · b` with faer, sequentially.
fn rank_k(c: MatMut<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    matmul(c, Accum::Add, a, b, 1.0, Par::Seq);
}

/// A deterministic matrix with entries in [-1, 1].
fn filled(rows: usize, cols: usize, seed: u64) -> Mat<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    let mut m = Mat::zeros(rows, cols);
    for j in 0..cols {
        for i in 0..rows {
            m[(i, j)] = next();
        }
    }
    m
}

/// Splits `c` into the column blocks `ranges` (consecutive, covering all columns).
fn column_blocks<'a>(mut c: MatMut<'a, f64>, ranges: &[Range<usize>]) -> Vec<Mutex<MatMut<'a, f64>>> {
    let mut blocks = Vec::with_capacity(ranges.len());
    for r in ranges {
        let (left, right) = c.split_at_col_mut(r.len());
        blocks.push(Mutex::new(left));
        c = right;
    }
    blocks
}

/// All six strategies at one problem size.
fn measure_size(
    n: usize,
    k: usize,
    trials: usize,
    pools: &[(Dispatch, Pool)],
    flusher: &Flusher,
    progress: &indicatif::ProgressBar,
) -> CliResult<Vec<Point>> {
    let a = filled(n, k, n as u64);
    let b = filled(k, n, n as u64 + 1);
    let mut c = Mat::<f64>::zeros(n, n);
    let reference_pool = &pools.last().expect("six pools").1;
    // The same static partition every pool uses.
    let ranges: Vec<Range<usize>> = reference_pool.broadcast(|ctx| ctx.block(n));

    // The serial reference, also warming up faer.
    let mut reference = Mat::<f64>::zeros(n, n);
    rank_k(reference.as_mut(), a.as_ref(), b.as_ref());

    // FST and PST, on the master's thread (bound by the broadcasts above).
    let fst = mean(
        &(0..trials)
            .map(|_| {
                flusher.flush(reference_pool);
                time(|| rank_k(c.as_mut(), a.as_ref(), b.as_ref()))
            })
            .collect::<Vec<_>>(),
    );
    progress.inc(1);
    let pst: Vec<Duration> = ranges
        .iter()
        .map(|r| {
            let samples: Vec<Duration> = (0..trials)
                .map(|_| {
                    flusher.flush(reference_pool);
                    let block = c.as_mut().subcols_mut(r.start, r.len());
                    time(|| rank_k(block, a.as_ref(), b.as_ref().subcols(r.start, r.len())))
                })
                .collect();
            mean(&samples)
        })
        .collect();
    progress.inc(1);

    let mut points = Vec::with_capacity(pools.len());
    for (dispatch, pool) in pools {
        let blocks = column_blocks(c.as_mut(), &ranges);
        let share = |ctx: herd::BroadcastContext| {
            let r = ctx.block(n);
            let mut block = lock(&blocks[ctx.index()]);
            rank_k(block.as_mut(), a.as_ref(), b.as_ref().subcols(r.start, r.len()));
        };
        // Verification (also the warm-up): one update from zero.
        for blk in &blocks {
            lock(blk).fill(0.0);
        }
        pool.broadcast(share);
        let diff = blocks
            .iter()
            .zip(&ranges)
            .map(|(blk, r)| max_abs_diff(lock(blk).as_ref(), reference.as_ref().subcols(r.start, r.len())))
            .fold(0.0, |worst: f64, d| if worst.is_nan() || d.is_nan() { f64::NAN } else { worst.max(d) });
        if diff.is_nan() || diff > TOLERANCE {
            return Err(CliError::Verify(format!(
                "{dispatch} at N = {n}: parallel C differs from serial C by {diff:e}"
            )));
        }

        let samples: Vec<herd::RegionTiming> = (0..trials)
            .map(|_| {
                flusher.flush(pool);
                pool.broadcast_timed(share).1
            })
            .collect();
        let timing = mean_timing(&samples);
        let m = Measures { fst, pst: pst.clone(), fpt: timing.fpt, pct: timing.pct };
        points.push(point(n, *dispatch, &m, diff));
        progress.inc(1);
    }
    Ok(points)
}

/// The largest |x − y| entry (NaN if any entry is NaN).
fn max_abs_diff(x: MatRef<'_, f64>, y: MatRef<'_, f64>) -> f64 {
    let mut worst = 0.0f64;
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            let d = (x[(i, j)] - y[(i, j)]).abs();
            if d.is_nan() {
                return f64::NAN;
            }
            worst = worst.max(d);
        }
    }
    worst
}

fn point(n: usize, dispatch: Dispatch, m: &Measures, max_abs_diff: f64) -> Point {
    Point {
        n,
        strategy: dispatch.name(),
        fst_us: micros(m.fst),
        pst_us: m.pst.iter().copied().map(micros).collect(),
        fpt_us: micros(m.fpt),
        pct_us: m.pct.iter().copied().map(micros).collect(),
        max_pct_us: micros(m.pct.iter().max().copied().unwrap_or_default()),
        pmo_us: micros(m.pmo()),
        pmo_percent: 100.0 * m.pmo_fraction(),
        pce: m.pce(),
        speedup: m.speedup(),
        speed_vs_lj_percent: f64::NAN,
        max_abs_diff,
    }
}

fn render_table(points: &[Point]) -> String {
    let mut t = Table::new(&[
        "N",
        "strategy",
        "FST µs",
        "FPT µs",
        "max PCT µs",
        "PMO µs",
        "PMO %",
        "PCE",
        "speedup",
        "vs LJ",
    ]);
    for (i, p) in points.iter().enumerate() {
        if i > 0 && points[i - 1].n != p.n {
            t.gap();
        }
        t.row(vec![
            p.n.to_string(),
            p.strategy.to_uppercase(),
            format!("{:.1}", p.fst_us),
            format!("{:.1}", p.fpt_us),
            format!("{:.1}", p.max_pct_us),
            format!("{:.1}", p.pmo_us),
            format!("{:.1}", p.pmo_percent),
            format!("{:.3}", p.pce),
            format!("{:.2}", p.speedup),
            format!("{:.1}%", p.speed_vs_lj_percent),
        ]);
    }
    t.render()
}

/// The three panels of the paper's Figures 1–3.
fn draw(
    path: &std::path::Path,
    format: plot::Format,
    points: &[Point],
    k: usize,
    threads: usize,
) -> CliResult {
    let series = |f: &dyn Fn(&Point) -> f64| -> Vec<Series> {
        Dispatch::ALL
            .iter()
            .map(|d| Series {
                name: d.to_string(),
                points: points
                    .iter()
                    .filter(|p| p.strategy == d.name())
                    .map(|p| (p.n as f64, f(p)))
                    .collect(),
            })
            .collect()
    };
    let panels = [
        Panel {
            title: "Parallel management overhead (Fig. 1)".into(),
            y_desc: "PMO (µs)".into(),
            log_y: true,
            series: series(&|p| p.pmo_us),
        },
        Panel {
            title: "PMO as % of runtime (Fig. 2)".into(),
            y_desc: "PMO / FPT (%)".into(),
            log_y: false,
            series: series(&|p| p.pmo_percent),
        },
        Panel {
            title: "Speed relative to LJ (Fig. 3)".into(),
            y_desc: "FPT(LJ) / FPT (%)".into(),
            log_y: false,
            series: series(&|p| p.speed_vs_lj_percent),
        },
    ];
    let caption = format!("rank-K update, K = {k}, {threads} participant(s)");
    plot::draw(path, format, &caption, "N", &panels)?;
    eprintln!("herd: wrote {}", path.display());
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the Unix epoch.
fn utc_timestamp(secs: u64) -> String {
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizes() {
        let s = geometric(64, 2048, 10);
        assert_eq!(s.len(), 10);
        assert_eq!((s[0], s[9]), (64, 2048));
        assert!(s.windows(2).all(|w| w[0] < w[1] && w[1] % 8 == 0));
    }

    #[test]
    fn timestamps() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn blocks_partition_columns() {
        let mut c = Mat::<f64>::zeros(3, 5);
        let blocks = column_blocks(c.as_mut(), &[0..3, 3..5]);
        assert_eq!(lock(&blocks[0]).ncols(), 3);
        assert_eq!(lock(&blocks[1]).ncols(), 2);
    }
}
