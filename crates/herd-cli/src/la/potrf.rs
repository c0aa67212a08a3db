//! `herd la potrf`: tiled Cholesky on herd-flow against faer's parallel
//! Cholesky and OpenBLAS's threaded `dpotrf` in the same run, each factor
//! checked in `O(n²)` (`A·x` against `L·(Lᵀ·x)`).

use super::contest::{self, Contender, Sample};
use super::report::Measured;
use super::{start_peers, CommonArgs};
use crate::error::{usize_in, CliError};
use crate::timing::median;
use crate::CliResult;
use faer::{Mat, Par};
use herd_la::{potrf_flops, potrf_flow, random_spd, residual_probe, Backend, TiledMatrix};
use indicatif::ProgressBar;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Tile sizes tried by `--tune`.
const TUNE_NB: [usize; 7] = [128, 160, 192, 256, 320, 336, 384];
/// n×n matrices alive at once at the peak of a run: the input, a tiled (or
/// column-major) working copy, and the factor read back from the tiles.
const MATRICES_AT_PEAK: u128 = 3;
/// The residual probe's random vector.
const PROBE_SEED: u64 = 1;

/// `herd la potrf` options.
#[derive(clap::Args, Debug)]
pub struct PotrfArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Tile size (at least 1). 320 was measured fastest with herd's kernels
    /// at n = 4000 on two cores (BENCHMARKS.md, session 34).
    #[arg(long, default_value_t = 320, value_parser = usize_in(1..=super::MAX_N))]
    nb: usize,
    /// Try several tile sizes first (one run each) and use the fastest.
    #[arg(long)]
    tune: bool,
    /// Write herd-flow's timeline of the last herd run (for `herd trace show/analyze`).
    #[arg(long)]
    timeline: Option<PathBuf>,
    /// herd-flow scheduling discipline of the graph.
    #[arg(long, value_enum, default_value_t = DisciplineArg::Counted)]
    discipline: DisciplineArg,
    /// The tile kernels of herd's runs.
    #[arg(long, value_enum, default_value_t = KernelsArg::Herd)]
    kernels: KernelsArg,
}

/// `--kernels`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum KernelsArg {
    /// faer's POTRF and TRSM with herd's packed GEMM and SYRK (`Backend::Herd`).
    Herd,
    /// faer's four sequential kernels (`Backend::Faer`).
    Faer,
}

impl KernelsArg {
    fn label(self) -> &'static str {
        match self {
            KernelsArg::Herd => "herd",
            KernelsArg::Faer => "faer",
        }
    }

    fn backend(self) -> Backend {
        match self {
            KernelsArg::Herd => Backend::Herd,
            KernelsArg::Faer => Backend::Faer,
        }
    }
}

/// `--discipline`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum DisciplineArg {
    /// Dependency-counted from the steps' `depends` tuners (no requeue).
    Counted,
    /// All tags up front; a step missing an input is requeued (Intel CnC's default).
    Requeue,
    /// Tags put by the steps producing the data.
    Onthefly,
}

impl DisciplineArg {
    fn flow(self) -> herd_flow::Discipline {
        match self {
            DisciplineArg::Counted => herd_flow::Discipline::DependencyCounted,
            DisciplineArg::Requeue => herd_flow::Discipline::Requeue,
            DisciplineArg::Onthefly => herd_flow::Discipline::OnTheFly,
        }
    }
}

/// The `O(n²)` residual of the factor `l` of `a`.
fn check(a: &Mat<f64>, l: &Mat<f64>) -> CliResult<f64> {
    residual_probe(a.as_ref(), l.as_ref(), PROBE_SEED).map_err(|e| CliError::Verify(e.to_string()))
}

/// One herd run: seconds, residual, steps requeued, seconds lost to requeues, timeline.
struct HerdRun {
    secs: f64,
    residual: f64,
    requeued: u64,
    requeue_secs: f64,
    timeline: Option<serde_json::Value>,
}

/// One herd-flow factorization of `a` with tile size `nb`.
fn herd_run(
    pool: &herd::Pool,
    a: &Mat<f64>,
    nb: usize,
    (discipline, backend): (herd_flow::Discipline, Backend),
    timeline: bool,
) -> CliResult<HerdRun> {
    let t = Arc::new(TiledMatrix::from_faer(a.as_ref(), nb).map_err(|e| CliError::Usage(e.to_string()))?);
    let start = Instant::now();
    let report = pool
        .install(|| potrf_flow(&t, backend, discipline, timeline))
        .map_err(|e| CliError::Verify(format!("herd-flow Cholesky: {e}")))?;
    let secs = start.elapsed().as_secs_f64();
    let residual = check(a, &t.to_faer())?;
    Ok(HerdRun {
        secs,
        residual,
        requeued: report.stats.requeued,
        requeue_secs: report.stats.requeue_time.as_secs_f64(),
        timeline: report.timeline,
    })
}

/// faer's own Cholesky of the whole matrix with `threads` threads.
fn faer_run(a: &Mat<f64>, threads: usize) -> CliResult<Sample> {
    let mut l = a.clone();
    let par = if threads > 1 { Par::rayon(threads) } else { Par::Seq };
    let start = Instant::now();
    herd_la::kernels::faer_potrf_par(l.as_mut(), par)
        .map_err(|j| CliError::Verify(format!("faer Cholesky failed at column {j}")))?;
    let secs = start.elapsed().as_secs_f64();
    Ok(Sample { secs, residual: check(a, &l)? })
}

/// `--tune`: one herd run per candidate tile size; the fastest.
fn tune(
    args: &PotrfArgs,
    pool: &herd::Pool,
    a: &Mat<f64>,
    bar: &ProgressBar,
) -> CliResult<(usize, serde_json::Value)> {
    let n = a.nrows();
    let mut tuning = Vec::new();
    for cand in TUNE_NB.into_iter().filter(|&c| c <= n.max(1)) {
        let s = herd_run(pool, a, cand, (args.discipline.flow(), args.kernels.backend()), false)?.secs;
        let gflops = potrf_flops(n) / s / 1e9;
        bar.println(format!("herd la potrf: n={n} tune nb={cand}: {gflops:.1} GFLOP/s"));
        tuning.push((cand, s, gflops));
    }
    let best = tuning.iter().min_by(|x, y| x.1.total_cmp(&y.1)).map_or(args.nb, |t| t.0);
    let json = tuning.iter().map(|&(nb, s, g)| json!({"nb": nb, "seconds": s, "gflops": g})).collect();
    Ok((best, serde_json::Value::Array(json)))
}

/// The median of counts (the upper middle one for an even number).
fn median_count(v: &[u64]) -> u64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Runs `herd la potrf`.
pub fn potrf(args: &PotrfArgs) -> CliResult {
    if args.nb == 0 {
        return Err(CliError::Usage("--nb must be at least 1".into()));
    }
    let plot_format = args.common.check(
        |n| {
            format!(
                "herd la potrf -n {n} ({MATRICES_AT_PEAK} {n}×{n} f64 matrices at once: input, working copy, factor)"
            )
        },
        |n| MATRICES_AT_PEAK * n * n * 8,
    )?;
    let openblas = start_peers("potrf");
    let pool = herd::PoolBuilder::from_env()?.build()?;
    let threads = pool.num_threads();
    let tuning_runs = if args.tune { TUNE_NB.len() } else { 0 };
    let bar = args.common.bar(args.common.reps * (2 + usize::from(openblas.is_some())) + tuning_runs);
    let mut results = Vec::new();
    let mut timeline = None;
    for &n in &args.common.n {
        let a = random_spd(n, 42);
        let (nb, tuning) = if args.tune { tune(args, &pool, &a, &bar)? } else { (args.nb, json!([])) };
        let (mut requeued, mut requeue_s) = (Vec::new(), Vec::new());
        let discipline = args.discipline.flow();
        let mut contenders = vec![
            Contender::new(
                "herd",
                format!("herd-flow tiled, nb = {nb} ({} kernels)", args.kernels.label()),
                |last| {
                    let run = herd_run(
                        &pool,
                        &a,
                        nb,
                        (discipline, args.kernels.backend()),
                        last && args.timeline.is_some(),
                    )?;
                    requeued.push(run.requeued);
                    requeue_s.push(run.requeue_secs);
                    timeline = run.timeline.or(timeline.take());
                    Ok(Sample { secs: run.secs, residual: run.residual })
                },
            ),
            Contender::new("faer", format!("faer llt, Par::rayon({threads})"), |_| faer_run(&a, threads)),
        ];
        if let Some(ob) = &openblas {
            contenders.push(
                Contender::new("openblas", format!("OpenBLAS dpotrf, {threads} threads"), |_| {
                    let (l, secs) = ob.potrf(&a, threads)?;
                    Ok(Sample { secs, residual: check(&a, &l)? })
                })
                .info("library", json!(ob.path))
                .info("coretype", json!(ob.core)),
            );
        }
        let mut outcomes = contest::rounds(contenders, args.common.reps, &bar)?;
        let extra = json!({"nb": nb, "tuning": tuning, "discipline": format!("{discipline:?}"), "kernels": format!("{:?}", args.kernels.backend())});
        let note = format!(
            "herd-flow discipline {discipline:?}: {} step(s) requeued, {:.1} ms lost to requeues (median per run)\n",
            median_count(&requeued),
            median(&requeue_s) * 1e3
        );
        if let Some(h) = outcomes.iter_mut().find(|o| o.key == "herd") {
            h.info.insert("requeued".into(), json!(requeued));
            h.info.insert("requeue_seconds".into(), json!(requeue_s));
        }
        let extra = extra.as_object().cloned().unwrap_or_default();
        results.push(Measured { n, flops: potrf_flops(n), outcomes, extra, note });
    }
    bar.finish_and_clear();
    if let (Some(path), Some(tl)) = (&args.timeline, &timeline) {
        crate::error::write_file(path, serde_json::to_vec(tl)?)?;
        eprintln!("herd la potrf: wrote timeline {}", path.display());
    }
    let describe = |m: &Measured| {
        format!(
            "Cholesky n = {}, {threads} thread(s), median of {} run(s), n³/3 flops, residual: probe of A·x − L·(Lᵀ·x)\n{}",
            m.n,
            args.common.reps,
            m.text()
        )
    };
    args.common.finish(&results, (threads, plot_format), &format!("Cholesky, {threads} threads"), describe)
}
