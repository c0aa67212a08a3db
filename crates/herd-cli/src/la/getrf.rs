//! `herd la getrf`: herd's LU with partial pivoting (`herd_la::Getrf`,
//! blocked with look-ahead, tile tasks on the herd pool) against faer's parallel LU and
//! OpenBLAS's threaded `dgetrf` in the same run, each factorization checked
//! in `O(n²)` (`A·x` against `P·L·(U·x)`, `herd_la::getrf_probe`).

use super::contest::{self, Contender, Sample};
use super::report::Measured;
use super::{start_peers, CommonArgs};
use crate::error::{usize_in, CliError};
use crate::CliResult;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::{Mat, Par};
use herd_la::{getrf_flops, getrf_probe, random_matrix, Getrf, LuSchedule};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// The residual probe's random vector.
const PROBE_SEED: u64 = 1;
/// n×n matrices alive at once at the peak of a run: the input and the factors.
const MATRICES_AT_PEAK: u128 = 2;

/// `herd la getrf` options.
#[derive(clap::Args, Debug)]
pub struct GetrfArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// herd's panel width [default: herd_la::Getrf's, 256 columns].
    #[arg(long, value_parser = usize_in(1..=super::MAX_N))]
    nb: Option<usize>,
    /// herd's schedule: column-tile tasks on a herd::scope, or depth-one
    /// look-ahead with herd::join.
    #[arg(long, value_enum, default_value_t = ScheduleArg::Dataflow)]
    schedule: ScheduleArg,
    /// Write the timeline of one more herd run at the last n (after the
    /// measured ones; every panel factorization and tile update with its
    /// participant, times and dependencies), for `herd trace show/analyze`.
    /// Needs the dataflow schedule.
    #[arg(long, value_name = "PATH")]
    timeline: Option<PathBuf>,
}

/// `--schedule`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum ScheduleArg {
    /// Tile tasks spawned when their inputs are ready (no barrier between steps).
    Dataflow,
    /// Depth-one look-ahead, a join per step.
    Join,
}

impl ScheduleArg {
    fn lu(self) -> LuSchedule {
        match self {
            ScheduleArg::Dataflow => LuSchedule::Dataflow,
            ScheduleArg::Join => LuSchedule::Join,
        }
    }
}

/// The `O(n²)` residual of the factors `lu`, `ipiv` of `a`.
fn check(a: &Mat<f64>, lu: &Mat<f64>, ipiv: &[usize]) -> CliResult<f64> {
    getrf_probe(a.as_ref(), lu.as_ref(), ipiv, PROBE_SEED).map_err(|e| CliError::Verify(e.to_string()))
}

/// One herd factorization of a copy of `a`.
fn herd_run(pool: &herd::Pool, a: &Mat<f64>, settings: Getrf) -> CliResult<Sample> {
    let mut lu = a.clone();
    let mut ipiv = vec![0; a.nrows().min(a.ncols())];
    let start = Instant::now();
    let info = pool
        .install(|| settings.run(lu.as_mut(), &mut ipiv))
        .map_err(|e| CliError::Verify(format!("herd getrf: {e}")))?;
    let secs = start.elapsed().as_secs_f64();
    if let Some(j) = info {
        return Err(CliError::Verify(format!("herd getrf: zero pivot at {j} in a random matrix")));
    }
    Ok(Sample { secs, residual: check(a, &lu, &ipiv)? })
}

/// faer's own LU with partial pivoting of a copy of `a`, `threads` threads.
fn faer_run(a: &Mat<f64>, threads: usize) -> CliResult<Sample> {
    let mut lu = a.clone();
    let (m, n) = (a.nrows(), a.ncols());
    let par = if threads > 1 { Par::rayon(threads) } else { Par::Seq };
    let (mut perm, mut perm_inv) = (vec![0usize; m], vec![0usize; m]);
    let mut mem = MemBuffer::new(lu_in_place_scratch::<usize, f64>(m, n, par, Default::default()));
    let start = Instant::now();
    lu_in_place(lu.as_mut(), &mut perm, &mut perm_inv, par, MemStack::new(&mut mem), Default::default());
    let secs = start.elapsed().as_secs_f64();
    let ipiv = interchanges(&perm, m.min(n));
    Ok(Sample { secs, residual: check(a, &lu, &ipiv)? })
}

/// LAPACK's interchanges (`ipiv`, 0-based, the first `k`) that produce the
/// row permutation `perm` (row `i` of `P·A` is row `perm[i]` of `A`).
fn interchanges(perm: &[usize], k: usize) -> Vec<usize> {
    // `at[r]`: where original row `r` is now; `row[i]`: which row is at `i`.
    let mut at: Vec<usize> = (0..perm.len()).collect();
    let mut row: Vec<usize> = (0..perm.len()).collect();
    (0..k)
        .map(|i| {
            let p = at[perm[i]];
            let (ri, rp) = (row[i], row[p]);
            row.swap(i, p);
            at[ri] = p;
            at[rp] = i;
            p
        })
        .collect()
}

/// Runs `herd la getrf`.
pub fn getrf(args: &GetrfArgs) -> CliResult {
    let plot_format = args.common.check(
        |n| format!("herd la getrf -n {n} ({MATRICES_AT_PEAK} {n}×{n} f64 matrices at once: input, factors)"),
        |n| MATRICES_AT_PEAK * n * n * 8,
    )?;
    if args.timeline.is_some() && matches!(args.schedule, ScheduleArg::Join) {
        return Err(CliError::Usage(
            "herd la getrf --timeline needs --schedule dataflow (the join schedule has no task graph)".into(),
        ));
    }
    let openblas = start_peers("getrf");
    let pool = herd::PoolBuilder::from_env()?.build()?;
    let threads = pool.num_threads();
    let settings = args.nb.map_or(Getrf::new(), |nb| Getrf::new().block(nb)).schedule(args.schedule.lu());
    let bar = args.common.bar(args.common.reps * (2 + usize::from(openblas.is_some())));
    let mut results = Vec::new();
    for &n in &args.common.n {
        let a = random_matrix(n, n, 42);
        let mut contenders = vec![
            Contender::new(
                "herd",
                format!("herd getrf, {:?} schedule, nb = {}", args.schedule.lu(), settings.block_size(n, n)),
                |_| herd_run(&pool, &a, settings),
            ),
            Contender::new("faer", format!("faer partial-pivoting LU, Par::rayon({threads})"), |_| {
                faer_run(&a, threads)
            }),
        ];
        if let Some(ob) = &openblas {
            contenders.push(
                Contender::new("openblas", format!("OpenBLAS dgetrf, {threads} threads"), |_| {
                    let (lu, ipiv, info, secs) = ob.getrf(&a, threads)?;
                    if info != 0 {
                        return Err(CliError::Verify(format!("OpenBLAS dgetrf: info = {info}")));
                    }
                    Ok(Sample { secs, residual: check(&a, &lu, &ipiv)? })
                })
                .info("library", json!(ob.path))
                .info("coretype", json!(ob.core)),
            );
        }
        let outcomes = contest::rounds(contenders, args.common.reps, &bar)?;
        let extra = json!({"nb": settings.block_size(n, n), "schedule": format!("{:?}", args.schedule.lu())});
        let extra = extra.as_object().cloned().unwrap_or_default();
        results.push(Measured { n, flops: getrf_flops(n, n), outcomes, extra, note: String::new() });
    }
    bar.finish_and_clear();
    if let (Some(path), Some(&n)) = (&args.timeline, args.common.n.last()) {
        let mut lu = random_matrix(n, n, 42);
        let mut ipiv = vec![0; n];
        let (_, tl) = pool
            .install(|| settings.run_with_timeline(lu.as_mut(), &mut ipiv))
            .map_err(|e| CliError::Verify(format!("herd getrf: {e}")))?;
        let tl = tl.ok_or_else(|| CliError::Verify("herd getrf recorded no timeline".into()))?;
        crate::error::write_file(path, serde_json::to_vec(&tl)?)?;
        eprintln!(
            "herd la getrf: wrote timeline {} (n = {n}; `herd trace analyze` bounds it)",
            path.display()
        );
    }
    let describe = |m: &Measured| {
        format!(
            "LU with partial pivoting n = {}, {threads} thread(s), median of {} run(s), 2n³/3 flops, \
             residual: probe of A·x − P·L·(U·x)\n{}",
            m.n,
            args.common.reps,
            m.text()
        )
    };
    args.common.finish(&results, (threads, plot_format), &format!("LU (getrf), {threads} threads"), describe)
}

#[cfg(test)]
mod tests {
    use super::interchanges;

    #[test]
    fn interchanges_reproduce_the_permutation() {
        for perm in [vec![2, 0, 1], vec![0, 1, 2, 3], vec![3, 2, 1, 0], vec![1, 3, 0, 2, 4]] {
            let ipiv = interchanges(&perm, perm.len());
            let mut rows: Vec<usize> = (0..perm.len()).collect();
            for (i, &p) in ipiv.iter().enumerate() {
                assert!(p >= i);
                rows.swap(i, p);
            }
            assert_eq!(rows, perm);
        }
    }
}
