//! `herd bench overhead`: what herd's basic operations cost on this machine.
//!
//! Every figure is the median, over repetitions, of the time per operation of
//! one repetition, in which many operations run back to back.

use crate::error::{usize_in, write_file, CliError};
use crate::table::Table;
use crate::timing::{human_ns, median, time};
use crate::CliResult;
use herd::{Dispatch, Pool, PoolInfo, Schedule};
use serde::Serialize;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Options of `herd bench overhead`.
#[derive(clap::Args, Debug)]
pub struct OverheadArgs {
    /// Operations per repetition for regions, joins and scopes; launch-and-join
    /// regions run a tenth as many, loops a thousandth (at least one); 1 to 10⁹.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = usize_in(1..=1_000_000_000))]
    iters: usize,
    /// Repetitions per operation, 1 to 1000000; the median is reported.
    #[arg(long, value_name = "N", default_value_t = 7, value_parser = usize_in(1..=1_000_000))]
    reps: usize,
    /// Also write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Iterations of each measured loop.
const LOOP_LEN: usize = 1_000_000;
/// Chunk of the chunked static and dynamic schedules.
const CHUNK: usize = 1024;
/// Smallest chunk of the guided schedule.
const MIN_CHUNK: usize = 64;

/// One measured operation.
#[derive(Debug, Serialize)]
struct Measurement {
    group: &'static str,
    name: String,
    /// Participants of the pool measured.
    threads: usize,
    /// Median time per operation.
    ns_per_op: f64,
    /// Time per operation of every repetition.
    samples_ns: Vec<f64>,
    ops_per_rep: usize,
    /// Loop iterations per operation, for loops.
    items_per_op: Option<usize>,
}

#[derive(Serialize)]
struct Report {
    machine: PoolInfo,
    iters: usize,
    reps: usize,
    results: Vec<Measurement>,
}

/// Runs every measurement, one after another, with one progress bar.
struct Bench {
    reps: usize,
    progress: indicatif::ProgressBar,
    results: Vec<Measurement>,
}

impl Bench {
    /// Measures `run(ops)`, which performs `ops` operations and returns how
    /// long they took: one warm-up, then `reps` repetitions.
    fn case(
        &mut self,
        group: &'static str,
        name: impl Into<String>,
        threads: usize,
        ops: usize,
        items_per_op: Option<usize>,
        run: impl Fn(usize) -> Duration,
    ) {
        let name = name.into();
        self.progress.set_message(format!("{group}: {name}"));
        let ops = ops.max(1);
        run(ops.div_ceil(10));
        let samples_ns: Vec<f64> =
            (0..self.reps).map(|_| run(ops).as_secs_f64() * 1e9 / ops as f64).collect();
        self.results.push(Measurement {
            group,
            name,
            threads,
            ns_per_op: median(&samples_ns),
            samples_ns,
            ops_per_rep: ops,
            items_per_op,
        });
        self.progress.inc(1);
    }
}

fn schedules() -> [Schedule; 5] {
    [
        Schedule::Static { chunk: 0 },
        Schedule::Static { chunk: CHUNK },
        Schedule::Dynamic { chunk: CHUNK },
        Schedule::Guided { min_chunk: MIN_CHUNK },
        Schedule::Adaptive,
    ]
}

fn schedule_name(s: Schedule) -> String {
    match s {
        Schedule::Static { chunk: 0 } => "static".into(),
        Schedule::Static { chunk } => format!("static,{chunk}"),
        Schedule::Dynamic { chunk } => format!("dynamic,{chunk}"),
        Schedule::Guided { min_chunk } => format!("guided,{min_chunk}"),
        Schedule::Adaptive => "adaptive".into(),
    }
}

/// `ops` empty regions on `pool`.
fn empty_regions(pool: &Pool, ops: usize) -> Duration {
    time(|| {
        for _ in 0..ops {
            pool.broadcast(|ctx| black_box(ctx.index()));
        }
    })
}

/// Runs the benchmark.
pub fn run(args: &OverheadArgs) -> CliResult {
    if args.iters == 0 || args.reps == 0 {
        return Err(CliError::Usage("--iters and --reps must be positive".into()));
    }
    let base = crate::pools::base_builder()?;
    let pool = base.clone().build()?;
    let machine = pool.info();
    let iters = args.iters;
    let cases = Dispatch::ALL.len() + 3 + schedules().len();
    let mut bench =
        Bench { reps: args.reps, progress: crate::progress::bar(cases as u64), results: Vec::new() };

    // The default pool first; then one pool per strategy, each built and
    // dropped in turn, so that idle workers of other pools never compete.
    bench.case(
        "default",
        format!("broadcast (default, {})", machine.dispatch),
        machine.num_threads,
        iters,
        None,
        |ops| empty_regions(&pool, ops),
    );
    bench.case("default", "join of two empty closures", machine.num_threads, iters, None, |ops| {
        pool.install(|| {
            time(|| {
                for _ in 0..ops {
                    black_box(herd::join(|| black_box(1), || black_box(2)));
                }
            })
        })
    });
    bench.case("default", "scope spawning one empty task", machine.num_threads, iters, None, |ops| {
        pool.install(|| {
            time(|| {
                for _ in 0..ops {
                    herd::scope(|s| s.spawn(|_| black_box(())));
                }
            })
        })
    });
    let slots: Vec<AtomicU64> = (0..LOOP_LEN).map(|_| AtomicU64::new(0)).collect();
    for s in schedules() {
        let name = format!("for_each 10^6 ({})", schedule_name(s));
        bench.case("loop", name, machine.num_threads, iters / 1000, Some(LOOP_LEN), |ops| {
            time(|| {
                for _ in 0..ops {
                    pool.for_each(0..LOOP_LEN, s, |i| slots[i].store(i as u64, Ordering::Relaxed));
                }
            })
        });
    }
    drop(pool);

    for d in Dispatch::ALL {
        let p = base.clone().dispatch(d).build()?;
        let ops = if d.persistent() { iters } else { iters / 10 };
        bench.case("strategy", format!("broadcast {d}"), p.num_threads(), ops, None, |ops| {
            empty_regions(&p, ops)
        });
    }
    bench.progress.finish_and_clear();

    println!(
        "herd overheads: {} participant(s), dispatch {}, wait {}; median of {} repetition(s)",
        machine.num_threads, machine.dispatch, machine.wait, args.reps
    );
    let mut t = Table::new(&["operation", "time/op", "per item", "ops/rep", "min", "max"]);
    for (i, m) in bench.results.iter().enumerate() {
        if i > 0 && bench.results[i - 1].group != m.group {
            t.gap();
        }
        let (lo, hi) =
            m.samples_ns.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        t.row(vec![
            m.name.clone(),
            human_ns(m.ns_per_op),
            m.items_per_op.map(|n| human_ns(m.ns_per_op / n as f64)).unwrap_or_default(),
            m.ops_per_rep.to_string(),
            human_ns(lo),
            human_ns(hi),
        ]);
    }
    print!("{}", t.render());

    if let Some(path) = &args.json {
        let report = Report { machine, iters, reps: args.reps, results: bench.results };
        write_file(path, serde_json::to_string_pretty(&report)? + "\n")?;
        eprintln!("herd: wrote {}", path.display());
    }
    Ok(())
}
