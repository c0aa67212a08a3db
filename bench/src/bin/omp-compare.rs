//! The OpenMP side-by-side driver: runs the `bench/c/omp_*.c` programs
//! (built with `gcc -O2 -fopenmp`, and without `-fopenmp` as `*_serial`)
//! under every runtime — GNU libgomp, LLVM libomp, herd's `libgomp.so.1`, and
//! the serial build — in alternating rounds, and reports medians over rounds
//! as `bench/results/omp-<name>.{json,md,svg}`. It builds nothing:
//! `bench/omp.sh` builds, then calls it.
//!
//! usage: omp-compare [--rounds 7] [--quick] [--name NAME] [--threads 2 | --threads 1,2,4,8]
//!                    [--only epcc,fib,nqueens,msort,sparselu]
//!                    [--condition warm,idle] [--idle-ms 50] [--idle-reps 1]
//!                    [--epcc-delay-us 0.1] [--constructs parallel,barrier,..]
//!                    [--runtimes libgomp,libomp,herd,serial]
//!                    [--herd-gomp-dir DIR | --herd-preload LIB] [--libomp PATH]
//!                    [--timeout SECONDS] [--c-dir DIR] [--out-dir DIR]
//!                    [--epcc-samples 20] [--epcc-target-ms 2] [--samples 3]
//!                    [--fib-n 30] [--nqueens-n 12] [--msort-n N]
//!                    [--sparselu-nb NB] [--sparselu-bs BS] [--min-seconds S]
//!                    [--png FILE.png] [--wait-idle 30] [--busy-cpus 0.25] [--retries 2]
//!
//! Runtimes. The same gcc-built binaries run under
//! * `libgomp`: as built (the system's `libgomp.so.1`);
//! * `libomp`: `LD_LIBRARY_PATH` = a directory where `libgomp.so.1` is a
//!   symlink to LLVM's `libomp.so.5` (which implements the GOMP ABI);
//! * `herd`: `LD_LIBRARY_PATH` = `--herd-gomp-dir` (default: `gomp/` next to
//!   this binary, i.e. `target/release/gomp`), which must hold herd's
//!   `libgomp.so.1`; or, with `--herd-preload LIB`, `LD_PRELOAD=LIB`. When
//!   the library is missing, herd is skipped with a message;
//! * `serial`: the `*_serial` builds, no OpenMP runtime at all.
//!
//! Thread sweep. `--threads` takes one count or a list: every parallel
//! runtime runs every program at every count, in the same rounds (the
//! order rotating over every (runtime, count) pair; the serial build runs
//! once per round). The report has the tables for each count, a table per
//! benchmark (each EPCC construct, each task program) of the medians
//! against threads with herd ÷ each peer, and a chart per benchmark,
//! `omp-<name>-{epcc,epcc-idle,fib,..}-threads.{svg,png}`; the bar chart
//! `omp-<name>.svg` shows the largest count. The JSON's `sweep` holds one
//! record per (benchmark, runtime, threads); `results` and `targets` are
//! those of the largest count, `results_by_threads` has every count.
//!
//! EPCC conditions. `--condition warm` (the default) measures the
//! constructs back to back (EPCC's method); `idle` runs `omp_epcc
//! --idle-ms M --idle-reps R` (see bench/c/omp_epcc.c): each sample first
//! leaves the team idle for M ms (`--idle-ms`, default 50), then times R
//! constructs (default 1). `--condition warm,idle` runs both (as the
//! programs `epcc` and `epcc-idle`) and adds a side-by-side table. The
//! per-thread work inside each construct is EPCC's delay, `--epcc-delay-us`
//! (default 0.1 µs); `--constructs` restricts the EPCC constructs. Besides
//! syncbench's and schedbench's constructs they include taskbench's
//! (`parallel-task`, `master-task`, `taskwait`, `task-barrier`,
//! `nested-task`, `nested-master-task`, `branch-tree`, `leaf-tree`: µs per
//! task and thread, see bench/c/omp_epcc.c).
//!
//! Every run gets `OMP_NUM_THREADS=<threads> OMP_PROC_BIND=true
//! OMP_PLACES=cores` (the serial builds ignore them); `OMP_*`, `GOMP_*`,
//! `KMP_*` and `LD_PRELOAD` inherited from the caller are removed. Each
//! program reports which shared object really serves `GOMP_parallel` and
//! the driver checks it against the runtime it meant to run.
//!
//! Rounds. A round runs every program once under every runtime, the
//! runtimes' order rotating from round to round (libgomp, libomp, herd,
//! serial; then libomp, herd, serial, libgomp; ...). Each run has a timeout.
//! A run that exits non-zero (a program exits 1 when its result is wrong),
//! times out, prints something that is not a record, reports another
//! runtime, or a result that differs from the serial build's, marks its
//! cells FAILED — never silently dropped. For every run the driver also
//! records the CPU time used by other processes during the run (from
//! `/proc/stat` and the child's rusage) and the hypervisor's steal time, so
//! that runs disturbed by a busy machine can be recognised; before each run
//! it waits (at most `--wait-idle` seconds) until other processes use less
//! than `--busy-cpus` CPUs, and it repeats (at most `--retries` times) a run
//! during which they used more, keeping the least disturbed attempt.

use herd_bench::chart::{self, Bars, Panel, PALETTE};
use herd_bench::sweep::{self, Point};
use herd_bench::{
    fail, find_libomp, fmt, fmt_opt, make_shim, omp_env, parse_records, ratio, read_trimmed, Args, Record,
    Summary,
};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// The runtimes, in the order of the first round and of the tables.
const RUNTIMES: [&str; 4] = ["libgomp", "libomp", "herd", "serial"];
/// The parallel runtimes, compared in ratios and targets.
const PARALLEL: [&str; 3] = ["libgomp", "libomp", "herd"];

/// EPCC constructs: the case name `omp_epcc` prints, and the table's label.
const EPCC: [(&str, &str); 24] = [
    ("parallel", "`parallel`"),
    ("nested_parallel", "nested `parallel num_threads(2)` in every member of an outer team (2n threads)"),
    ("for", "`for` (static, 1 iteration per thread)"),
    ("parallel_for", "`parallel for`"),
    ("barrier", "`barrier`"),
    ("single", "`single`"),
    ("critical", "`critical`"),
    ("lock", "`omp_set_lock`/`omp_unset_lock`"),
    ("atomic", "`atomic` (inline CAS, no runtime call)"),
    ("reduction", "`parallel reduction(+)`"),
    ("sched_static", "`for schedule(static)`, 128 it./thread"),
    ("sched_static_1", "`for schedule(static,1)`, 128 it./thread"),
    ("sched_dynamic_1", "`for schedule(dynamic,1)`, 128 it./thread"),
    ("sched_dynamic_16", "`for schedule(dynamic,16)`, 128 it./thread"),
    ("sched_guided_1", "`for schedule(guided,1)`, 128 it./thread"),
    ("pingpong", "floor: one cache-line round trip between the 2 threads (no runtime call)"),
    ("parallel-task", "`task`: every thread creates tasks (per task per thread)"),
    ("master-task", "`task`: the master creates them all, inside `master`"),
    ("taskwait", "`task` then `taskwait`, every thread"),
    ("task-barrier", "`task` then `barrier`, every thread"),
    ("nested-task", "nested: every thread's tasks each create n `untied` tasks + `taskwait`"),
    ("nested-master-task", "nested: the master's tasks each create n tasks + `taskwait`"),
    ("branch-tree", "binary task tree, depth 8, a delay in every task"),
    ("leaf-tree", "binary task tree, depth 8, delays in the leaves only"),
];

/// Short names for the chart's axis.
fn epcc_short(case: &str) -> &str {
    match case {
        "parallel_for" => "par. for",
        "nested_parallel" => "nested par.",
        "reduction" => "reduction",
        "sched_static" => "static",
        "sched_static_1" => "static,1",
        "sched_dynamic_1" => "dynamic,1",
        "sched_dynamic_16" => "dynamic,16",
        "sched_guided_1" => "guided,1",
        "pingpong" => "floor",
        "parallel-task" => "par. task",
        "master-task" => "master task",
        "task-barrier" => "task barrier",
        "nested-task" => "nested",
        "nested-master-task" => "nested master",
        "branch-tree" => "branch tree",
        "leaf-tree" => "leaf tree",
        c => c,
    }
}

/// The task programs, in table order.
const TASK_PROGRAMS: [&str; 4] = ["fib", "nqueens", "msort", "sparselu"];

/// Targets for herd (issue 3), also shown for libgomp and libomp.
const TARGET_PARALLEL_US: f64 = 0.4;
const TARGET_BARRIER_US: f64 = 0.15;
const TARGET_SPEEDUP: f64 = 1.6;

/// Settings of one run of the driver.
#[derive(Clone, Debug, Serialize)]
struct Settings {
    name: String,
    rounds: usize,
    /// The largest thread count (that of the bar chart and of `results`).
    threads: usize,
    /// Every thread count run (`--threads`).
    sweep_threads: Vec<usize>,
    quick: bool,
    programs: Vec<String>,
    /// EPCC conditions: `warm` and/or `idle`.
    conditions: Vec<String>,
    /// `idle`: milliseconds the team is left idle before each sample.
    idle_ms: f64,
    /// `idle`: constructs timed after each idle phase.
    idle_reps: u32,
    /// EPCC's per-thread delay inside each construct, µs.
    epcc_delay_us: f64,
    /// The EPCC constructs measured.
    constructs: Vec<String>,
    runtimes: Vec<String>,
    timeout_s: f64,
    /// Before each run, wait up to this long for the other processes' load
    /// to drop below `busy_cpus`.
    wait_idle_s: f64,
    /// A run during which other processes used more than this many CPUs
    /// (on average) is repeated, up to `retries` times; the attempt with the
    /// least background load is kept.
    busy_cpus: f64,
    retries: usize,
    epcc_samples: usize,
    epcc_target_ms: f64,
    samples: usize,
    min_seconds: f64,
    fib_n: u32,
    nqueens_n: u32,
    msort_n: u64,
    sparselu_nb: u32,
    sparselu_bs: u32,
}

/// One runtime the programs run under.
#[derive(Clone, Debug, Serialize)]
struct Runtime {
    name: &'static str,
    /// What the tables call it.
    label: String,
    /// Environment added to every run (on top of the cleaned inherited one).
    env: Vec<(String, String)>,
    /// Runs the `*_serial` builds.
    serial: bool,
    /// `OMP_NUM_THREADS` (1 for the serial builds).
    threads: usize,
    /// herd: the real path of the library that must serve `GOMP_parallel`.
    expect_lib: Option<PathBuf>,
    /// `ldd` line of `libgomp.so.1` for this runtime (informational).
    ldd: String,
}

/// One program.
#[derive(Clone, Debug, Serialize)]
struct Program {
    /// `epcc`, `fib`, ...
    key: &'static str,
    /// The `bench` member of its records, and its binary's name.
    bench: &'static str,
    /// What it computes (for the tables).
    title: String,
    args: Vec<String>,
    /// The cases every run must report (EPCC: the constructs; the task
    /// programs: one record, whatever its case).
    cases: Vec<String>,
}

/// One invocation.
#[derive(Clone, Debug, Serialize)]
struct RunLog {
    round: usize,
    program: &'static str,
    runtime: &'static str,
    /// `OMP_NUM_THREADS` of the run (1 for the serial build).
    threads: usize,
    command: String,
    wall_s: f64,
    /// `exit 0`, `exit 1`, `signal 9`, `timeout`, ...
    status: String,
    ok: bool,
    error: Option<String>,
    /// CPUs' worth of time used by other processes while it ran (0 = idle machine).
    background_cpus: Option<f64>,
    /// CPUs' worth of time stolen by the hypervisor while it ran.
    steal_cpus: Option<f64>,
    records: Vec<Record>,
    stderr_tail: String,
    /// Attempts made (1 + repeats because the machine was busy).
    attempts: usize,
    /// Seconds waited for the machine to become idle before the kept attempt.
    waited_s: f64,
}

/// Where things are.
struct Paths {
    c_dir: PathBuf,
    out_dir: PathBuf,
    run_dir: PathBuf,
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut args = Args::from_env();
    let quick = args.flag("quick");
    let rounds: usize = args.get("rounds", if quick { 3 } else { 7 });
    let threads_list = args.threads(2);
    let threads = *threads_list.last().expect("at least one thread count");
    let name: String = args.get("name", if quick { "quick".to_string() } else { "full".to_string() });
    let only: String = args.get("only", "epcc,fib,nqueens,msort,sparselu".to_string());
    let runtimes_arg: String = args.get("runtimes", RUNTIMES.join(","));
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| fail("cannot locate this binary's directory"));
    let herd_dir: PathBuf = args.get("herd-gomp-dir", exe_dir.join("gomp"));
    let herd_preload: Option<PathBuf> = args.opt("herd-preload");
    let libomp: Option<PathBuf> = args.opt("libomp");
    let timeout_s: f64 = args.get("timeout", 300.0);
    let wait_idle_s: f64 = args.get("wait-idle", 30.0);
    let busy_cpus: f64 = args.get("busy-cpus", 0.25);
    let retries: usize = args.get("retries", 2);
    let c_dir: PathBuf = args.get("c-dir", Path::new(MANIFEST_DIR).join("build"));
    let out_dir: PathBuf = args.get("out-dir", Path::new(MANIFEST_DIR).join("results"));
    let png: Option<PathBuf> = args.opt("png");
    let idle_ms: Option<f64> = args.opt("idle-ms");
    let idle_reps: Option<u32> = args.opt("idle-reps");
    let list = |s: String| -> Vec<String> {
        s.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
    };
    let settings = Settings {
        name,
        rounds,
        threads,
        sweep_threads: threads_list.clone(),
        quick,
        programs: list(only),
        conditions: list(args.get("condition", "warm".to_string())),
        idle_ms: idle_ms.unwrap_or(50.0),
        idle_reps: idle_reps.unwrap_or(1),
        epcc_delay_us: args.get("epcc-delay-us", 0.1),
        constructs: list(args.get("constructs", EPCC.map(|(c, _)| c).join(","))),
        runtimes: runtimes_arg.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
        timeout_s,
        wait_idle_s,
        busy_cpus,
        retries,
        epcc_samples: args.get("epcc-samples", if quick { 10 } else { 20 }),
        epcc_target_ms: args.get("epcc-target-ms", if quick { 1.0 } else { 2.0 }),
        samples: args.get("samples", if quick { 1 } else { 3 }),
        min_seconds: args.get("min-seconds", if quick { 0.1 } else { 0.25 }),
        fib_n: args.get("fib-n", 30),
        nqueens_n: args.get("nqueens-n", 12),
        msort_n: args.get("msort-n", 16_000_000),
        sparselu_nb: args.get("sparselu-nb", 32),
        sparselu_bs: args.get("sparselu-bs", 64),
    };
    args.finish();

    for p in &settings.programs {
        if p != "epcc" && !TASK_PROGRAMS.contains(&p.as_str()) {
            fail(&format!("--only: unknown program {p:?} (epcc, fib, nqueens, msort, sparselu)"));
        }
    }
    for r in &settings.runtimes {
        if !RUNTIMES.contains(&r.as_str()) {
            fail(&format!("--runtimes: unknown runtime {r:?} (libgomp, libomp, herd, serial)"));
        }
    }
    if let Some(c) = settings.conditions.iter().find(|c| !["warm", "idle"].contains(&c.as_str())) {
        fail(&format!("--condition: unknown condition {c:?} (warm, idle, or both: warm,idle)"));
    }
    if let Some(c) = settings.constructs.iter().find(|c| !EPCC.iter().any(|(e, _)| e == c)) {
        let all: Vec<&str> = EPCC.iter().map(|(e, _)| *e).collect();
        fail(&format!("--constructs: unknown construct {c:?} ({})", all.join(", ")));
    }
    if (idle_ms.is_some() || idle_reps.is_some()) && !settings.conditions.iter().any(|c| c == "idle") {
        fail("--idle-ms and --idle-reps apply to --condition idle (e.g. --condition warm,idle)");
    }
    if settings.conditions.is_empty() || settings.constructs.is_empty() {
        fail("--condition and --constructs need at least one entry");
    }
    let idle_ok = settings.idle_ms > 0.0 && settings.idle_ms <= 60_000.0;
    let delay_ok = settings.epcc_delay_us > 0.0 && settings.epcc_delay_us.is_finite();
    if !idle_ok || settings.idle_reps == 0 || !delay_ok {
        fail("--idle-ms must be in (0, 60000], --idle-reps positive, --epcc-delay-us positive");
    }
    if rounds == 0 || timeout_s.is_nan() || timeout_s <= 0.0 {
        fail("--rounds must be positive, --timeout positive");
    }

    let run_dir = std::env::temp_dir().join(format!("herd-omp-compare-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&run_dir) {
        fail(&format!("cannot create {}: {e}", run_dir.display()));
    }
    let paths = Paths { c_dir, out_dir, run_dir };
    let programs = programs(&settings);
    for p in &programs {
        for suffix in ["", "_serial"] {
            let bin = paths.c_dir.join(format!("{}{suffix}", p.bench));
            if !bin.is_file() {
                fail(&format!(
                    "{} is missing: build first with ./bench/omp.sh, or `make -C bench c-programs`",
                    bin.display()
                ));
            }
        }
    }
    let mut notes: Vec<String> = Vec::new();
    let runtimes = runtimes(&settings, &paths, libomp, &herd_dir, herd_preload.as_deref(), &mut notes);
    for n in &notes {
        eprintln!("omp-compare: {n}");
    }
    if runtimes.is_empty() {
        fail("no runtime to run");
    }

    let machine = machine_info();
    // Every round runs each program under every (runtime, thread count),
    // the serial build once.
    let schedule: Vec<Runtime> = threads_list
        .iter()
        .enumerate()
        .flat_map(|(i, &t)| runtimes.iter().filter(move |rt| !rt.serial || i == 0).map(move |rt| rt.at(t)))
        .collect();
    let total_runs = rounds * programs.len() * schedule.len();
    eprintln!(
        "omp-compare: {} program(s) x {} runtime(s) at {} thread count(s) x {} round(s) = {total_runs} runs, threads {:?}, on {} ({} CPUs), load average {}",
        programs.len(),
        runtimes.len(),
        threads_list.len(),
        rounds,
        threads_list,
        machine["cpu"].as_str().unwrap_or("?"),
        machine["cpus"],
        machine["loadavg_start"].as_str().unwrap_or("?")
    );

    // Round by round: every program under every runtime, runtimes rotating.
    let mut logs: Vec<RunLog> = Vec::new();
    let started = Instant::now();
    for round in 0..rounds {
        let t_round = Instant::now();
        for p in &programs {
            let k = round % schedule.len();
            for rt in schedule[k..].iter().chain(&schedule[..k]) {
                let log = run_when_idle(round, p, rt, &settings, &paths);
                let n = logs.len() + 1;
                let what = if log.ok {
                    summary_of_run(&log)
                } else {
                    format!("FAILED: {}", log.error.as_deref().unwrap_or("?"))
                };
                let retried =
                    if log.attempts > 1 { format!(" (attempt {})", log.attempts) } else { String::new() };
                eprintln!(
                    "[{n:>3}/{total_runs}] round {}/{rounds} {:<9} {:<7} {:>3}t {:>6.1} s  bg {:>4}{retried}  {what}",
                    round + 1,
                    p.key,
                    rt.name,
                    rt.threads,
                    log.wall_s,
                    log.background_cpus.map_or("?".into(), |b| format!("{b:.2}")),
                );
                logs.push(log);
            }
        }
        eprintln!(
            "omp-compare: round {}/{rounds} done in {:.0} s ({:.0} s so far)",
            round + 1,
            t_round.elapsed().as_secs_f64(),
            started.elapsed().as_secs_f64()
        );
    }
    cross_check_results(&mut logs, &programs);
    let loadavg_end = read_trimmed("/proc/loadavg");

    let by_threads: Vec<(usize, Results)> =
        threads_list.iter().map(|&t| (t, Results::collect(&logs, &programs, &runtimes, rounds, t))).collect();
    let results = &by_threads.last().expect("at least one thread count").1;
    let points = sweep_points(&by_threads, &programs, &runtimes);
    let reproduce = format!("./bench/omp.sh {}", argv.join(" ")).trim_end().to_string();
    let md = markdown(
        &by_threads,
        &points,
        &programs,
        &runtimes,
        &settings,
        &machine,
        &loadavg_end,
        &reproduce,
        &notes,
        &logs,
    );
    println!("{md}");

    if let Err(e) = std::fs::create_dir_all(&paths.out_dir) {
        fail(&format!("cannot create {}: {e}", paths.out_dir.display()));
    }
    let base = paths.out_dir.join(format!("omp-{}", settings.name));
    let json_path = base.with_extension("json");
    let md_path = base.with_extension("md");
    let svg_path = base.with_extension("svg");
    let report = json!({
        "name": settings.name,
        "reproduce": reproduce,
        "machine": machine,
        "loadavg_end": loadavg_end,
        "settings": settings,
        "notes": notes,
        "runtimes": runtimes,
        "programs": programs,
        "results": results.to_json(&programs, &runtimes),
        "results_by_threads": by_threads
            .iter()
            .map(|(t, r)| (t.to_string(), r.to_json(&programs, &runtimes)))
            .collect::<serde_json::Map<_, _>>(),
        "targets": targets(results, &runtimes).iter().map(|t| t.to_json()).collect::<Vec<_>>(),
        "sweep": points,
        "runs": logs,
    });
    let text = serde_json::to_string_pretty(&report).expect("the report serialises");
    for (path, content) in [(&json_path, text), (&md_path, md)] {
        if let Err(e) = std::fs::write(path, content + "\n") {
            fail(&format!("cannot write {}: {e}", path.display()));
        }
    }
    match chart(&svg_path, results, &programs, &runtimes, &settings) {
        Ok(()) => eprintln!(
            "omp-compare: wrote {}, {} and {}",
            json_path.display(),
            md_path.display(),
            svg_path.display()
        ),
        Err(e) => eprintln!(
            "omp-compare: wrote {} and {}; chart {} failed: {e}",
            json_path.display(),
            md_path.display(),
            svg_path.display()
        ),
    }
    if let Some(png) = png {
        match chart(&png, results, &programs, &runtimes, &settings) {
            Ok(()) => eprintln!("omp-compare: wrote {}", png.display()),
            Err(e) => eprintln!("omp-compare: chart {} failed: {e}", png.display()),
        }
    }
    if by_threads.len() > 1 {
        let prefix = format!("omp-{}", settings.name);
        let caption = "OpenMP runtimes against threads";
        sweep::write_charts_and_say("omp-compare", &paths.out_dir, &prefix, caption, &points);
    }
    let _ = std::fs::remove_dir_all(&paths.run_dir);
}

/// One sweep point per (benchmark, parallel runtime, thread count) — an EPCC
/// benchmark is `<program>/<construct>` — and the serial build's time of
/// each task program (at 1 thread).
fn sweep_points(by_threads: &[(usize, Results)], programs: &[Program], runtimes: &[Runtime]) -> Vec<Point> {
    let mut v = Vec::new();
    for p in programs {
        let cases: Vec<&str> =
            if p.cases.is_empty() { vec![""] } else { p.cases.iter().map(String::as_str).collect() };
        for case in cases {
            let bench = if case.is_empty() { p.key.to_string() } else { format!("{}/{case}", p.key) };
            for rt in runtimes {
                // The serial build: no threads to sweep; its EPCC values are the method's floor.
                let at: Vec<&(usize, Results)> = match (rt.serial, case.is_empty()) {
                    (false, _) => by_threads.iter().collect(),
                    (true, true) => by_threads.iter().take(1).collect(),
                    (true, false) => Vec::new(),
                };
                for (t, r) in at {
                    if let Some(c) = r.cell(p.key, rt.name, case) {
                        let t = if rt.serial { 1 } else { *t };
                        v.push(Point::new(&bench, rt.name, t, &c.unit, &c.values, c.failed()));
                    }
                }
            }
        }
    }
    v
}

/// The programs selected, with their arguments.
fn programs(s: &Settings) -> Vec<Program> {
    let k = s.samples.to_string();
    let m = s.min_seconds.to_string();
    let mut v = Vec::new();
    for key in &s.programs {
        if key == "epcc" {
            for condition in &s.conditions {
                let idle = condition == "idle";
                let mut args: Vec<String> = vec![
                    "--samples".into(),
                    s.epcc_samples.to_string(),
                    "--target-ms".into(),
                    s.epcc_target_ms.to_string(),
                    "--delay-us".into(),
                    s.epcc_delay_us.to_string(),
                ];
                if s.constructs.len() < EPCC.len() {
                    args.extend(["--only".into(), s.constructs.join(",")]);
                }
                let mut title = "EPCC syncbench/schedbench/taskbench overheads".to_string();
                if idle {
                    args.extend([
                        "--idle-ms".into(),
                        s.idle_ms.to_string(),
                        "--idle-reps".into(),
                        s.idle_reps.to_string(),
                    ]);
                    let _ =
                        write!(title, " after {} ms idle ({} construct(s) timed)", s.idle_ms, s.idle_reps);
                }
                v.push(Program {
                    key: if idle { "epcc-idle" } else { "epcc" },
                    bench: "omp_epcc",
                    title,
                    args,
                    cases: EPCC
                        .iter()
                        .filter(|(c, _)| s.constructs.iter().any(|k| k == c))
                        .map(|(c, _)| c.to_string())
                        .collect(),
                });
            }
            continue;
        }
        let p = match key.as_str() {
            "fib" => Program {
                key: "fib",
                bench: "omp_fib",
                title: format!("fib({}), a task per call, no cutoff", s.fib_n),
                args: vec![s.fib_n.to_string(), k.clone(), m.clone()],
                cases: vec![],
            },
            "nqueens" => Program {
                key: "nqueens",
                bench: "omp_nqueens",
                title: format!("{0}-queens, a task per placement, no cutoff", s.nqueens_n),
                args: vec![s.nqueens_n.to_string(), k.clone(), m.clone()],
                cases: vec![],
            },
            "msort" => Program {
                key: "msort",
                bench: "omp_msort",
                title: format!("merge sort of {} ints, tasks, cutoff 16384, parallel merge", s.msort_n),
                args: vec![s.msort_n.to_string(), k.clone(), m.clone()],
                cases: vec![],
            },
            _ => Program {
                key: "sparselu",
                bench: "omp_sparselu",
                title: format!(
                    "sparse LU, {0}x{0} blocks of {1}x{1} floats, a task per block operation",
                    s.sparselu_nb, s.sparselu_bs
                ),
                args: vec![s.sparselu_nb.to_string(), s.sparselu_bs.to_string(), k.clone(), m.clone()],
                cases: vec![],
            },
        };
        v.push(p);
    }
    v
}

/// The runtimes selected and available; `notes` receives why one is skipped.
fn runtimes(
    s: &Settings,
    paths: &Paths,
    libomp: Option<PathBuf>,
    herd_dir: &Path,
    herd_preload: Option<&Path>,
    notes: &mut Vec<String>,
) -> Vec<Runtime> {
    let omp = omp_env(s.threads, None);
    let with_ld_path = |dir: &Path| omp_env(s.threads, Some(dir));
    let probe = paths.c_dir.join("omp_fib");
    let mut v = Vec::new();
    for name in RUNTIMES {
        if !s.runtimes.iter().any(|r| r == name) {
            continue;
        }
        let rt = match name {
            "libgomp" => Some(Runtime {
                name,
                label: "libgomp".into(),
                env: omp.clone(),
                serial: false,
                threads: s.threads,
                expect_lib: None,
                ldd: String::new(),
            }),
            "libomp" => match libomp.clone().or_else(find_libomp) {
                Some(lib) => {
                    let shim = make_shim(&paths.c_dir, &lib);
                    Some(Runtime {
                        name,
                        label: format!("LLVM libomp ({})", lib.display()),
                        env: with_ld_path(&shim),
                        serial: false,
                        threads: s.threads,
                        expect_lib: None,
                        ldd: String::new(),
                    })
                }
                None => {
                    notes.push("libomp skipped: LLVM libomp not found (apt-get install libomp-dev, or --libomp PATH)".into());
                    None
                }
            },
            "herd" => match herd_preload {
                Some(lib) => match lib.canonicalize() {
                    Ok(real) => {
                        let mut env = omp.clone();
                        env.push(("LD_PRELOAD".to_string(), real.display().to_string()));
                        Some(Runtime {
                            name,
                            label: format!("herd (LD_PRELOAD={}, {})", real.display(), modified(&real)),
                            env,
                            serial: false,
                            threads: s.threads,
                            expect_lib: Some(real),
                            ldd: String::new(),
                        })
                    }
                    Err(e) => {
                        notes.push(format!("herd skipped: --herd-preload {}: {e}", lib.display()));
                        None
                    }
                },
                None => {
                    let lib = herd_dir.join("libgomp.so.1");
                    match lib.canonicalize() {
                        Ok(real) => Some(Runtime {
                            name,
                            label: format!(
                                "herd ({} → {}, {})",
                                lib.display(),
                                real.display(),
                                modified(&real)
                            ),
                            env: with_ld_path(
                                &herd_dir.canonicalize().unwrap_or_else(|_| herd_dir.to_path_buf()),
                            ),
                            serial: false,
                            threads: s.threads,
                            expect_lib: Some(real),
                            ldd: String::new(),
                        }),
                        Err(_) => {
                            notes.push(format!(
                                "herd skipped: {} not found (build herd's libgomp.so.1 first — crates/herd-omp — or pass --herd-gomp-dir DIR / --herd-preload LIB)",
                                lib.display()
                            ));
                            None
                        }
                    }
                }
            },
            _ => Some(Runtime {
                name,
                label: "serial build (no OpenMP runtime)".into(),
                env: omp.clone(),
                serial: true,
                threads: 1,
                expect_lib: None,
                ldd: String::new(),
            }),
        };
        if let Some(mut rt) = rt {
            if !rt.serial {
                rt.ldd = ldd_gomp(&probe, &rt.env);
            }
            v.push(rt);
        }
    }
    v
}

impl Runtime {
    /// The same runtime with `OMP_NUM_THREADS=threads` (the serial build unchanged).
    fn at(&self, threads: usize) -> Runtime {
        let mut rt = self.clone();
        if !rt.serial {
            rt.threads = threads;
            for (k, v) in &mut rt.env {
                if k == "OMP_NUM_THREADS" {
                    *v = threads.to_string();
                }
            }
        }
        rt
    }
}

/// When `path` was last modified (UTC), to tell a stale library.
fn modified(path: &Path) -> String {
    let secs = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64);
    let Some(secs) = secs else { return "modification time unknown".into() };
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("built {y:04}-{m:02}-{d:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}

/// The `libgomp.so.1 => ...` line of `ldd program` under `env` (or the
/// LD_PRELOAD line).
fn ldd_gomp(program: &Path, env: &[(String, String)]) -> String {
    let mut cmd = Command::new("ldd");
    cmd.arg(program);
    clean_env(&mut cmd);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    cmd.output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.contains("libgomp") || l.contains("herd") || l.contains("libomp"))
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default()
}

/// Removes the inherited variables that would change what runs.
fn clean_env(cmd: &mut Command) {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().to_string();
        if k.starts_with("OMP_") || k.starts_with("GOMP_") || k.starts_with("KMP_") || k == "LD_PRELOAD" {
            cmd.env_remove(&k);
        }
    }
}

/// The shell command that reproduces one run.
/// (Paths inside the workspace are written relative to its root, from
/// where the command reproduces the run.)
fn command_line(program: &Path, p: &Program, rt: &Runtime) -> String {
    let env: Vec<String> = rt.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    rel(&format!("{} {} {}", env.join(" "), program.display(), p.args.join(" ")))
}

/// `text` with the workspace root's path (and the `/` after it) removed,
/// for display: commands then read `bench/build/omp_fib ...`.
fn rel(text: &str) -> String {
    match Path::new(MANIFEST_DIR).parent() {
        Some(root) if root.as_os_str().len() > 1 => text.replace(&format!("{}/", root.display()), ""),
        _ => text.to_string(),
    }
}

/// `/proc/stat` totals: (busy jiffies excluding steal, steal jiffies).
fn cpu_jiffies() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal guest guest_nice
    if f.len() < 8 {
        return None;
    }
    Some((f[0] + f[1] + f[2] + f[5] + f[6], f[7]))
}

/// CPUs' worth of time used by all processes over the next `window`
/// (this driver sleeps meanwhile, so it is other processes' load).
fn load_over(window: Duration) -> Option<f64> {
    let (b0, _) = cpu_jiffies()?;
    let t0 = Instant::now();
    std::thread::sleep(window);
    let (b1, _) = cpu_jiffies()?;
    // SAFETY: no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some(b1.saturating_sub(b0) as f64 / hz / t0.elapsed().as_secs_f64())
}

/// Runs `p` under `rt` (see [`run`]) once the machine is idle (waiting at
/// most `wait_idle_s`), and again, up to `retries` times, while other
/// processes used more than `busy_cpus` during the run; keeps the attempt
/// with the least background load. Failed runs are not repeated.
fn run_when_idle(round: usize, p: &Program, rt: &Runtime, s: &Settings, paths: &Paths) -> RunLog {
    let mut best: Option<RunLog> = None;
    for attempt in 1..=s.retries + 1 {
        let t_wait = Instant::now();
        if s.wait_idle_s > 0.0 {
            let mut said = false;
            while t_wait.elapsed().as_secs_f64() < s.wait_idle_s {
                match load_over(Duration::from_millis(500)) {
                    Some(l) if l > s.busy_cpus => {
                        if !said {
                            eprintln!(
                                "omp-compare: other processes use {l:.2} CPUs; waiting up to {} s for an idle machine",
                                s.wait_idle_s
                            );
                            said = true;
                        }
                    }
                    _ => break,
                }
            }
        }
        let waited = t_wait.elapsed().as_secs_f64();
        let mut log = run(round, p, rt, s, paths);
        log.attempts = attempt;
        log.waited_s = waited;
        let busy = log.background_cpus.is_some_and(|b| b > s.busy_cpus);
        let done = !log.ok || !busy;
        if best.as_ref().is_none_or(|b| {
            !log.ok || log.background_cpus.unwrap_or(f64::MAX) < b.background_cpus.unwrap_or(f64::MAX)
        }) {
            best = Some(log);
        }
        if done {
            break;
        }
        if attempt <= s.retries {
            eprintln!(
                "omp-compare: {} under {}: other processes used {:.2} CPUs during the run; repeating it",
                p.key,
                rt.name,
                best.as_ref().and_then(|b| b.background_cpus).unwrap_or(0.0)
            );
        }
    }
    let mut log = best.expect("at least one attempt");
    log.attempts = log.attempts.max(1);
    log
}

/// Runs program `p` under `rt` once, with the timeout, and checks its records.
fn run(round: usize, p: &Program, rt: &Runtime, s: &Settings, paths: &Paths) -> RunLog {
    let program =
        paths.c_dir.join(if rt.serial { format!("{}_serial", p.bench) } else { p.bench.to_string() });
    let command = command_line(&program, p, rt);
    let mut log = RunLog {
        round,
        program: p.key,
        runtime: rt.name,
        threads: rt.threads,
        command,
        wall_s: 0.0,
        status: String::new(),
        ok: false,
        error: None,
        background_cpus: None,
        steal_cpus: None,
        records: Vec::new(),
        stderr_tail: String::new(),
        attempts: 1,
        waited_s: 0.0,
    };
    let out_path = paths.run_dir.join("stdout");
    let err_path = paths.run_dir.join("stderr");
    let files = std::fs::File::create(&out_path).and_then(|o| Ok((o, std::fs::File::create(&err_path)?)));
    let (out_file, err_file) = match files {
        Ok(f) => f,
        Err(e) => fail(&format!("cannot create files in {}: {e}", paths.run_dir.display())),
    };
    let mut cmd = Command::new(&program);
    cmd.args(&p.args).stdin(Stdio::null()).stdout(out_file).stderr(err_file);
    clean_env(&mut cmd);
    cmd.envs(rt.env.iter().map(|(k, v)| (k, v)));

    let j0 = cpu_jiffies();
    let t0 = Instant::now();
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            log.status = "not started".into();
            log.error = Some(format!("cannot run {}: {e}", program.display()));
            return log;
        }
    };
    let pid = child.id() as libc::pid_t;
    // Watchdog: kills the child at the timeout. The child is waited for
    // without being reaped (WNOWAIT) until the watchdog has stopped, so the
    // pid cannot be reused under it.
    let (tx, rx) = mpsc::channel::<()>();
    let timed_out = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&timed_out);
    let timeout = Duration::from_secs_f64(s.timeout_s);
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(timeout) {
            flag.store(true, Ordering::SeqCst);
            // SAFETY: plain syscall; the child is not reaped yet (see above).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    loop {
        // SAFETY: `info` is plain data written by the kernel.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r =
            unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
    }
    let _ = tx.send(());
    let _ = watchdog.join();
    let mut status: libc::c_int = 0;
    // SAFETY: `usage` is plain data written by the kernel.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    drop(child); // already reaped; dropping a Child neither waits nor kills
    log.wall_s = t0.elapsed().as_secs_f64();
    if let (Some((b0, s0)), Some((b1, s1))) = (j0, cpu_jiffies()) {
        // SAFETY: no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        let child_cpu = tv(usage.ru_utime) + tv(usage.ru_stime);
        let busy = (b1.saturating_sub(b0)) as f64 / hz;
        if log.wall_s > 0.0 {
            log.background_cpus = Some(((busy - child_cpu) / log.wall_s).max(0.0));
            log.steal_cpus = Some((s1.saturating_sub(s0)) as f64 / hz / log.wall_s);
        }
    }
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    log.stderr_tail = tail(&stderr, 2000);

    log.status = if timed_out.load(Ordering::SeqCst) {
        format!("timeout after {} s", s.timeout_s)
    } else if reaped != pid {
        "lost".into()
    } else if libc::WIFEXITED(status) {
        format!("exit {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("signal {}", libc::WTERMSIG(status))
    } else {
        format!("status {status}")
    };
    // Records printed before a failure are kept: they passed their checks.
    let mut bad_lines = Vec::new();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        match parse_records(line) {
            Ok(mut r) => log.records.append(&mut r),
            Err(e) => bad_lines.push(e),
        }
    }
    let mut errors: Vec<String> = Vec::new();
    if log.status != "exit 0" {
        let why = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        errors.push(if why.is_empty() { log.status.clone() } else { format!("{}: {why}", log.status) });
    }
    errors.extend(bad_lines);
    let threads = rt.threads;
    let mut good = Vec::new();
    for rec in std::mem::take(&mut log.records) {
        match check_record(&rec, p, rt, threads) {
            Ok(()) => good.push(rec),
            Err(e) => errors.push(e),
        }
    }
    log.records = good;
    if p.cases.is_empty() {
        if log.records.len() != 1 && errors.is_empty() {
            errors.push(format!("expected one record, got {}", log.records.len()));
        }
    } else {
        let missing: Vec<&str> = p
            .cases
            .iter()
            .filter(|c| !log.records.iter().any(|r| &r.case == *c))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() && errors.is_empty() {
            errors.push(format!("missing record(s): {}", missing.join(", ")));
        }
    }
    log.ok = errors.is_empty();
    if !log.ok {
        log.error = Some(errors.join("; "));
    }
    log
}

/// Checks that a record is what this run must produce.
fn check_record(rec: &Record, p: &Program, rt: &Runtime, threads: usize) -> Result<(), String> {
    if !rec.ok || rec.bench != p.bench || rec.threads != threads {
        return Err(format!(
            "unexpected record (wanted bench {}, {threads} threads, ok): bench {}, {} threads, ok {}",
            p.bench, rec.bench, rec.threads, rec.ok
        ));
    }
    if !p.cases.is_empty() && !p.cases.contains(&rec.case) {
        return Err(format!("unknown case {:?}", rec.case));
    }
    if !rec.value.is_finite() {
        return Err(format!("{}: value is not finite", rec.case));
    }
    let lib = rec.extra.get("lib").and_then(Value::as_str).unwrap_or("");
    let real = || Path::new(lib).canonicalize().unwrap_or_else(|_| PathBuf::from(lib));
    match rt.name {
        "serial" if rec.imp != "serial" => Err(format!("the serial build reports runtime {:?}", rec.imp)),
        "libgomp" | "libomp" if rec.imp != rt.name => Err(format!(
            "ran on {:?} ({lib}), not {} — is LD_LIBRARY_PATH or LD_PRELOAD interfering?",
            rec.imp, rt.name
        )),
        "herd" => match &rt.expect_lib {
            Some(want) if &real() == want => Ok(()),
            Some(want) => {
                Err(format!("GOMP_parallel came from {lib} ({}), not herd's {}", rec.imp, want.display()))
            }
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Marks runs whose "result" differs from the serial build's (same input,
/// same arithmetic in the same order: they must be equal).
fn cross_check_results(logs: &mut [RunLog], programs: &[Program]) {
    for p in programs.iter().filter(|p| p.cases.is_empty()) {
        let reference = logs
            .iter()
            .filter(|l| l.program == p.key && l.runtime == "serial" && l.ok)
            .find_map(|l| l.records.first().and_then(|r| r.extra.get("result").cloned()));
        let Some(reference) = reference else { continue };
        for l in logs.iter_mut().filter(|l| l.program == p.key && l.ok) {
            let got = l.records.first().and_then(|r| r.extra.get("result").cloned());
            if got.as_ref() != Some(&reference) {
                l.ok = false;
                l.error = Some(format!(
                    "result {} differs from the serial build's {reference}",
                    got.map_or("none".into(), |g| g.to_string())
                ));
            }
        }
    }
}

/// One line about a successful run.
fn summary_of_run(log: &RunLog) -> String {
    match log.records.as_slice() {
        [r] => format!(
            "ok {} {} ({} samples)",
            fmt(r.value),
            r.unit,
            r.extra.get("samples").map_or("?".into(), |v| v.to_string())
        ),
        recs => {
            let pick = |c: &str| recs.iter().find(|r| r.case == c).map_or("–".into(), |r| fmt(r.value));
            format!(
                "ok {} constructs; parallel {} µs, barrier {} µs",
                recs.len(),
                pick("parallel"),
                pick("barrier")
            )
        }
    }
}

fn tail(s: &str, n: usize) -> String {
    let start = s.len().saturating_sub(n);
    let start = (start..=s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(s.len());
    s[start..].to_string()
}

// ---------------------------------------------------------------------------
// Runtimes' libraries and the machine
// ---------------------------------------------------------------------------

fn machine_info() -> Value {
    Value::Object(herd_bench::host_info())
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

/// One (program, runtime, case) cell: its values over the rounds, or why it failed.
#[derive(Clone, Debug, Default)]
struct Cell {
    values: Vec<f64>,
    unit: String,
    /// (round, reason) of every round without a valid value.
    failures: Vec<(usize, String)>,
    /// A round's record said the team was not bound to distinct CPUs.
    unbound: bool,
}

impl Cell {
    /// The median over rounds, unless any round failed.
    fn median(&self) -> Option<f64> {
        if self.failures.is_empty() && !self.values.is_empty() {
            Some(herd_bench::median(&self.values))
        } else {
            None
        }
    }
    fn failed(&self) -> bool {
        !self.failures.is_empty()
    }
}

struct Results {
    /// (program key, runtime, case) → cell. Task programs use case "".
    cells: BTreeMap<(String, String, String), Cell>,
}

impl Results {
    /// The cells of the runs at `threads` (and of the serial build's runs).
    fn collect(
        logs: &[RunLog],
        programs: &[Program],
        runtimes: &[Runtime],
        rounds: usize,
        threads: usize,
    ) -> Results {
        let mut cells: BTreeMap<(String, String, String), Cell> = BTreeMap::new();
        for p in programs {
            let cases: Vec<String> = if p.cases.is_empty() { vec![String::new()] } else { p.cases.clone() };
            for rt in runtimes {
                let runs: Vec<&RunLog> = logs
                    .iter()
                    .filter(|l| {
                        l.program == p.key && l.runtime == rt.name && (rt.serial || l.threads == threads)
                    })
                    .collect();
                for case in &cases {
                    let mut cell = Cell::default();
                    for round in 0..rounds {
                        let Some(l) = runs.iter().find(|l| l.round == round) else { continue };
                        let rec = l.records.iter().find(|r| case.is_empty() || &r.case == case);
                        match rec {
                            Some(r) if l.ok || !case.is_empty() => {
                                // EPCC: a construct measured before the program failed
                                // later is valid; a task program's only record is valid
                                // only when the run is.
                                cell.values.push(r.value);
                                cell.unit = r.unit.clone();
                                cell.unbound |= !r.bound && !rt.serial;
                            }
                            _ => cell
                                .failures
                                .push((round, l.error.clone().unwrap_or_else(|| "no record".into()))),
                        }
                    }
                    cells.insert((p.key.to_string(), rt.name.to_string(), case.clone()), cell);
                }
            }
        }
        Results { cells }
    }

    fn cell(&self, program: &str, runtime: &str, case: &str) -> Option<&Cell> {
        self.cells.get(&(program.to_string(), runtime.to_string(), case.to_string()))
    }
    fn median(&self, program: &str, runtime: &str, case: &str) -> Option<f64> {
        self.cell(program, runtime, case).and_then(Cell::median)
    }
    /// Speed-up of `runtime` over the serial build for a task program.
    fn speedup(&self, program: &str, runtime: &str) -> Option<f64> {
        Some(self.median(program, "serial", "")? / self.median(program, runtime, "")?)
    }

    fn to_json(&self, programs: &[Program], runtimes: &[Runtime]) -> Value {
        let mut out = serde_json::Map::new();
        for p in programs {
            let mut by_rt = serde_json::Map::new();
            for rt in runtimes {
                let mut by_case = serde_json::Map::new();
                for ((pk, rn, case), cell) in &self.cells {
                    if pk != p.key || rn != rt.name {
                        continue;
                    }
                    let summary = (!cell.values.is_empty()).then(|| Summary::of(&cell.values));
                    by_case.insert(
                        if case.is_empty() { "time".into() } else { case.clone() },
                        json!({
                            "median": cell.median(),
                            "unit": cell.unit,
                            "failed": cell.failed(),
                            "failures": cell.failures.iter().map(|(r, e)| json!({"round": r, "error": e})).collect::<Vec<_>>(),
                            "summary": summary,
                            "rounds": cell.values,
                            "unbound": cell.unbound,
                        }),
                    );
                }
                if p.cases.is_empty() && rt.name != "serial" {
                    by_case.insert("speedup_vs_serial".into(), json!(self.speedup(p.key, rt.name)));
                }
                by_rt.insert(rt.name.into(), Value::Object(by_case));
            }
            let mut ratios = serde_json::Map::new();
            let cases: Vec<String> = if p.cases.is_empty() { vec![String::new()] } else { p.cases.clone() };
            for case in &cases {
                let h = self.median(p.key, "herd", case);
                let g = self.median(p.key, "libgomp", case);
                let l = self.median(p.key, "libomp", case);
                ratios.insert(
                    if case.is_empty() { "time".into() } else { case.clone() },
                    json!({"herd_vs_libgomp": ratio(h, g), "herd_vs_libomp": ratio(h, l), "libomp_vs_libgomp": ratio(l, g)}),
                );
            }
            by_rt.insert("ratios".into(), Value::Object(ratios));
            out.insert(p.key.into(), Value::Object(by_rt));
        }
        Value::Object(out)
    }
}

/// Microseconds: 1 ns resolution below 1 µs (EPCC values near zero are
/// noise, not digits), else three significant digits.
fn fmt_us(x: f64) -> String {
    if x.is_finite() && x.abs() < 1.0 {
        format!("{x:.3}")
    } else {
        fmt(x)
    }
}

/// A table cell: the median, FAILED (with the count), or – when not run.
fn cell_text(r: &Results, program: &str, runtime: &str, case: &str, rounds: usize) -> String {
    match r.cell(program, runtime, case) {
        None => "–".into(),
        Some(c) if c.failed() => format!("**FAILED** ({}/{rounds})", c.failures.len()),
        Some(c) => {
            let f = if c.unit == "us" { fmt_us } else { fmt };
            let m = c.median().map_or("–".into(), f);
            if c.unbound {
                format!("{m} (unbound)")
            } else {
                m
            }
        }
    }
}

/// A target and, per runtime, the measured value.
struct Target {
    name: String,
    cmp: &'static str,
    threshold: f64,
    /// runtime → measured value (None: failed or not run)
    values: Vec<(&'static str, Option<f64>)>,
}

impl Target {
    fn met(&self, v: f64) -> bool {
        if self.cmp == "≤" {
            v <= self.threshold
        } else {
            v >= self.threshold
        }
    }
    fn to_json(&self) -> Value {
        json!({
            "target": self.name, "cmp": self.cmp, "threshold": self.threshold,
            "values": self.values.iter().map(|(rt, v)| json!({"runtime": rt, "value": v, "met": v.map(|v| self.met(v))})).collect::<Vec<_>>(),
        })
    }
}

fn targets(r: &Results, runtimes: &[Runtime]) -> Vec<Target> {
    let rts: Vec<&'static str> = runtimes.iter().map(|rt| rt.name).filter(|n| PARALLEL.contains(n)).collect();
    let mut v = Vec::new();
    if r.cells.keys().any(|(p, _, _)| p == "epcc") {
        for (case, name, thr) in [
            ("parallel", "EPCC `parallel` overhead (µs)", TARGET_PARALLEL_US),
            ("barrier", "EPCC `barrier` overhead (µs)", TARGET_BARRIER_US),
        ] {
            v.push(Target {
                name: name.into(),
                cmp: "≤",
                threshold: thr,
                values: rts.iter().map(|rt| (*rt, r.median("epcc", rt, case))).collect(),
            });
        }
    }
    for p in TASK_PROGRAMS {
        if r.cells.keys().any(|(k, _, _)| k == p) {
            v.push(Target {
                name: format!("{p}: speed-up over the serial build"),
                cmp: "≥",
                threshold: TARGET_SPEEDUP,
                values: rts.iter().map(|rt| (*rt, r.speedup(p, rt))).collect(),
            });
        }
    }
    v
}

/// The tables of one thread count: EPCC (each condition, and both side
/// by side), task programs, targets.
fn tables(r: &Results, programs: &[Program], runtimes: &[Runtime], s: &Settings, t: usize) -> String {
    let rounds = s.rounds;
    let has = |name: &str| runtimes.iter().any(|rt| rt.name == name);
    let mut md = String::new();
    let epcc: Vec<&Program> = programs.iter().filter(|p| !p.cases.is_empty()).collect();
    let constructs = |p: &Program| -> Vec<(&'static str, &'static str)> {
        EPCC.iter().copied().filter(|(c, _)| p.cases.iter().any(|k| k == c)).collect()
    };
    for p in &epcc {
        let _ = writeln!(
            md,
            "### {}, {t} threads (µs per construct, median over {rounds} rounds; each round: median over {} samples of test − reference)\n",
            p.title, s.epcc_samples
        );
        let mut head = "| construct |".to_string();
        let mut sep = "|---|".to_string();
        for rt in runtimes {
            let _ = write!(head, " {} |", if rt.serial { "serial (method floor)" } else { rt.name });
            sep.push_str("---|");
        }
        if has("herd") {
            head.push_str(" herd ÷ libgomp | herd ÷ libomp |");
            sep.push_str("---|---|");
        }
        if has("libomp") && has("libgomp") {
            head.push_str(" libomp ÷ libgomp |");
            sep.push_str("---|");
        }
        let _ = writeln!(md, "{head}\n{sep}");
        for (case, label) in constructs(p) {
            let mut row = format!("| {label} |");
            for rt in runtimes {
                let _ = write!(row, " {} |", cell_text(r, p.key, rt.name, case, rounds));
            }
            let h = r.median(p.key, "herd", case);
            let g = r.median(p.key, "libgomp", case);
            let l = r.median(p.key, "libomp", case);
            if has("herd") {
                let _ = write!(row, " {} | {} |", fmt_opt(ratio(h, g)), fmt_opt(ratio(h, l)));
            }
            if has("libomp") && has("libgomp") {
                let _ = write!(row, " {} |", fmt_opt(ratio(l, g)));
            }
            let _ = writeln!(md, "{row}");
        }
        md.push('\n');
        // Spread over rounds.
        let _ = writeln!(md, "Spread of the per-round values (min – max over {rounds} rounds, µs):\n");
        let mut head = "| construct |".to_string();
        let mut sep = "|---|".to_string();
        for rt in runtimes {
            let _ = write!(head, " {} |", rt.name);
            sep.push_str("---|");
        }
        let _ = writeln!(md, "{head}\n{sep}");
        for (case, _) in constructs(p) {
            let mut row = format!("| {case} |");
            for rt in runtimes {
                let text = match r.cell(p.key, rt.name, case) {
                    Some(c) if !c.values.is_empty() => {
                        let sm = Summary::of(&c.values);
                        format!("{} – {}", fmt_us(sm.min), fmt_us(sm.max))
                    }
                    _ => "–".into(),
                };
                let _ = write!(row, " {text} |");
            }
            let _ = writeln!(md, "{row}");
        }
        md.push('\n');
    }
    let by_key = |k: &str| epcc.iter().find(|p| p.key == k);
    if let (Some(warm), Some(idle)) = (by_key("epcc"), by_key("epcc-idle")) {
        let _ = writeln!(
            md,
            "### EPCC warm vs after {} ms idle, {t} threads (µs per construct, medians)\n",
            s.idle_ms
        );
        let rts: Vec<&Runtime> = runtimes.iter().filter(|rt| !rt.serial).collect();
        let mut head = "| construct |".to_string();
        for rt in &rts {
            let _ = write!(head, " {0} warm | {0} idle | {0} idle ÷ warm |", rt.name);
        }
        let _ = writeln!(md, "{head}\n|---|{}", "---|---|---|".repeat(rts.len()));
        for (case, _) in constructs(warm) {
            let mut row = format!("| {case} |");
            for rt in &rts {
                let (w, i) = (r.median(warm.key, rt.name, case), r.median(idle.key, rt.name, case));
                let _ = write!(row, " {} | {} | {} |", fmt_opt(w), fmt_opt(i), fmt_opt(ratio(i, w)));
            }
            let _ = writeln!(md, "{row}");
        }
        md.push('\n');
    }

    let tasks: Vec<&Program> = programs.iter().filter(|p| p.cases.is_empty()).collect();
    if !tasks.is_empty() {
        let _ = writeln!(
            md,
            "### Task programs, {t} threads (seconds per computation, median over {rounds} rounds; each round: median over its samples)\n"
        );
        let mut head = "| program |".to_string();
        let mut sep = "|---|".to_string();
        for rt in runtimes {
            let _ = write!(head, " {} (s) |", rt.name);
            sep.push_str("---|");
        }
        if has("herd") {
            head.push_str(" herd ÷ libgomp | herd ÷ libomp |");
            sep.push_str("---|---|");
        }
        if has("serial") {
            for rt in runtimes.iter().filter(|rt| !rt.serial) {
                let _ = write!(head, " speed-up {} |", rt.name);
                sep.push_str("---|");
            }
        }
        let _ = writeln!(md, "{head}\n{sep}");
        for p in &tasks {
            let mut row = format!("| {} |", p.title);
            for rt in runtimes {
                let _ = write!(row, " {} |", cell_text(r, p.key, rt.name, "", rounds));
            }
            if has("herd") {
                let h = r.median(p.key, "herd", "");
                let _ = write!(
                    row,
                    " {} | {} |",
                    fmt_opt(ratio(h, r.median(p.key, "libgomp", ""))),
                    fmt_opt(ratio(h, r.median(p.key, "libomp", "")))
                );
            }
            if has("serial") {
                for rt in runtimes.iter().filter(|rt| !rt.serial) {
                    let _ = write!(
                        row,
                        " {} |",
                        r.speedup(p.key, rt.name).map_or("–".into(), |x| format!("{}×", fmt(x)))
                    );
                }
            }
            let _ = writeln!(md, "{row}");
        }
        md.push('\n');
        let _ = writeln!(
            md,
            "Speed-up = the serial build's median time ÷ the runtime's median time. Spread of the per-round values (min – max over {rounds} rounds, s):\n"
        );
        let mut head = "| program |".to_string();
        let mut sep = "|---|".to_string();
        for rt in runtimes {
            let _ = write!(head, " {} |", rt.name);
            sep.push_str("---|");
        }
        let _ = writeln!(md, "{head}\n{sep}");
        for p in &tasks {
            let mut row = format!("| {} |", p.key);
            for rt in runtimes {
                let text = match r.cell(p.key, rt.name, "") {
                    Some(c) if !c.values.is_empty() => {
                        let sm = Summary::of(&c.values);
                        format!("{} – {}", fmt(sm.min), fmt(sm.max))
                    }
                    _ => "–".into(),
                };
                let _ = write!(row, " {text} |");
            }
            let _ = writeln!(md, "{row}");
        }
        md.push('\n');
    }

    let ts = targets(r, runtimes);
    if !ts.is_empty() {
        let rts: Vec<&str> = runtimes.iter().map(|rt| rt.name).filter(|n| PARALLEL.contains(n)).collect();
        let _ = writeln!(md, "### Targets, {t} threads (for herd; libgomp and libomp for reference)\n");
        let mut head = "| target | required |".to_string();
        let mut sep = "|---|---|".to_string();
        for rt in &rts {
            let _ = write!(head, " {rt} |");
            sep.push_str("---|");
        }
        let _ = writeln!(md, "{head}\n{sep}");
        for tg in &ts {
            let mut row = format!("| {} | {} {} |", tg.name, tg.cmp, fmt(tg.threshold));
            for (_, v) in &tg.values {
                let text = match v {
                    Some(v) => format!("{} {}", fmt(*v), if tg.met(*v) { "(met)" } else { "(**not met**)" }),
                    None => "–".into(),
                };
                let _ = write!(row, " {text} |");
            }
            let _ = writeln!(md, "{row}");
        }
        if !has("herd") {
            md.push_str("\nherd was not measured in this run (see the note above).\n");
        }
        md.push('\n');
    }

    md
}

#[allow(clippy::too_many_arguments)]
fn markdown(
    by_threads: &[(usize, Results)],
    points: &[Point],
    programs: &[Program],
    runtimes: &[Runtime],
    s: &Settings,
    machine: &Value,
    loadavg_end: &str,
    reproduce: &str,
    notes: &[String],
    logs: &[RunLog],
) -> String {
    let has = |name: &str| runtimes.iter().any(|rt| rt.name == name);
    let mut md = String::new();
    let counts: Vec<String> = s.sweep_threads.iter().map(usize::to_string).collect();
    let _ = writeln!(
        md,
        "## OpenMP programs under libgomp, LLVM libomp{} and the serial build ({} threads, bound)\n",
        if has("herd") { ", herd" } else { "" },
        counts.join(", ")
    );
    for n in notes {
        let _ = writeln!(md, "*Note: {}*\n", rel(n));
    }
    if s.programs.iter().any(|p| p == "epcc") && s.conditions.iter().any(|c| c == "idle") {
        let _ = writeln!(
            md,
            "*Note: after-idle EPCC runs leave the team idle {} ms before each sample. libgomp's workers spin GOMP_SPINCOUNT iterations before sleeping; LLVM libomp's spin for KMP_BLOCKTIME (200 ms by default), so an idle phase shorter than that finds them still spinning.*\n",
            s.idle_ms
        );
    }
    for (t, r) in by_threads {
        md.push_str(&tables(r, programs, runtimes, s, *t));
    }
    if by_threads.len() > 1 {
        md.push_str(&sweep::section(points));
    }

    // Failures, in full.
    let failed: Vec<&RunLog> = logs.iter().filter(|l| !l.ok).collect();
    if !failed.is_empty() {
        let _ = writeln!(md, "### Failed runs\n");
        for l in failed {
            let _ = writeln!(
                md,
                "* round {} {} under {}: {} — `{}`",
                l.round + 1,
                l.program,
                l.runtime,
                l.error.as_deref().unwrap_or("?"),
                l.command
            );
        }
        md.push('\n');
    }

    // Load during the runs.
    let bg: Vec<f64> = logs.iter().filter_map(|l| l.background_cpus).collect();
    let steal: Vec<f64> = logs.iter().filter_map(|l| l.steal_cpus).collect();
    if !bg.is_empty() {
        let busy = bg.iter().filter(|&&b| b > s.busy_cpus).count();
        let repeated = logs.iter().filter(|l| l.attempts > 1).count();
        let waited: f64 = logs.iter().map(|l| l.waited_s).sum();
        let _ = writeln!(
            md,
            "Other processes used a median of {:.2} CPUs (max {:.2}) while the programs ran; {busy} of {} kept runs saw more than {} CPUs of other load ({repeated} runs were repeated because of it, {waited:.0} s were spent waiting for an idle machine). Hypervisor steal: median {:.3}, max {:.3} CPUs.\n",
            herd_bench::median(&bg),
            bg.iter().copied().fold(0.0, f64::max),
            bg.len(),
            s.busy_cpus,
            if steal.is_empty() { 0.0 } else { herd_bench::median(&steal) },
            steal.iter().copied().fold(0.0, f64::max),
        );
    }
    let _ = writeln!(md, "Runtimes:\n");
    for rt in runtimes {
        let env: Vec<String> = rt.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let line = format!(
            "* **{}** — {}: `{}`{}",
            rt.name,
            rt.label,
            env.join(" "),
            if rt.ldd.is_empty() { String::new() } else { format!(" (ldd: `{}`)", rt.ldd) }
        );
        let _ = writeln!(md, "{}", rel(&line));
    }
    let _ = writeln!(
        md,
        "\n{} on {} ({} CPUs), {}; load average {} at start, {} at end. Rounds alternate the runtimes (order rotating every round).\n\nReproduce: `{reproduce}`",
        machine["gcc"].as_str().unwrap_or("gcc"),
        machine["cpu"].as_str().unwrap_or("?"),
        machine["cpus"],
        machine["kernel"].as_str().unwrap_or("?"),
        machine["loadavg_start"].as_str().unwrap_or("?"),
        loadavg_end
    );
    md
}

// ---------------------------------------------------------------------------
// Chart
// ---------------------------------------------------------------------------

/// Draws the chart into `path`: SVG, or PNG when the name ends in `.png`.
fn chart(
    path: &Path,
    r: &Results,
    programs: &[Program],
    runtimes: &[Runtime],
    s: &Settings,
) -> Result<(), String> {
    let colour = |name: &str| PALETTE[RUNTIMES.iter().position(|n| *n == name).unwrap_or(3)];
    let mut panels = Vec::new();
    for p in programs.iter().filter(|p| !p.cases.is_empty()) {
        let rts: Vec<&Runtime> = runtimes.iter().filter(|rt| !rt.serial).collect();
        let idle = p.key == "epcc-idle";
        panels.push(Panel::Bars(Bars {
            title: format!(
                "EPCC overheads{}, {} threads (µs per construct, log scale; lower is better)",
                if idle { format!(" after {} ms idle", s.idle_ms) } else { String::new() },
                s.threads
            ),
            y_desc: "µs",
            groups: p.cases.iter().map(|c| epcc_short(c).to_string()).collect(),
            series: rts
                .iter()
                .map(|rt| {
                    (rt.name, colour(rt.name), p.cases.iter().map(|c| r.median(p.key, rt.name, c)).collect())
                })
                .collect(),
            lines: if idle {
                Vec::new()
            } else {
                vec![
                    (TARGET_PARALLEL_US, format!("target parallel {TARGET_PARALLEL_US} µs")),
                    (TARGET_BARRIER_US, format!("target barrier {TARGET_BARRIER_US} µs")),
                ]
            },
        }));
    }
    let tasks: Vec<&Program> = programs.iter().filter(|p| p.cases.is_empty()).collect();
    if !tasks.is_empty() && runtimes.iter().any(|rt| rt.serial) {
        let rts: Vec<&Runtime> = runtimes.iter().filter(|rt| !rt.serial).collect();
        panels.push(Panel::Bars(Bars {
            title: format!(
                "Task programs: speed-up over the serial build, {} threads (log scale; higher is better)",
                s.threads
            ),
            y_desc: "× serial",
            groups: tasks.iter().map(|p| p.key.to_string()).collect(),
            series: rts
                .iter()
                .map(|rt| {
                    (rt.name, colour(rt.name), tasks.iter().map(|p| r.speedup(p.key, rt.name)).collect())
                })
                .collect(),
            lines: vec![(1.0, "serial".into()), (TARGET_SPEEDUP, format!("target {TARGET_SPEEDUP}×"))],
        }));
    }
    if panels.is_empty() {
        return Ok(());
    }
    let caption = format!("OpenMP runtimes side by side ({})", s.name);
    chart::draw(path, &caption, 1300, 460, &panels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(case: &str, value: f64) -> Record {
        Record::new("omp_epcc", "libgomp", case, 2, value, "us").bound(true)
    }

    #[test]
    fn epcc_constructs_are_omp_epccs() {
        let src = include_str!("../../c/omp_epcc.c");
        let table = src.split("CONSTRUCTS[] = {").nth(1).and_then(|t| t.split("};").next()).unwrap();
        let names: Vec<&str> = table
            .lines()
            .filter_map(|l| l.trim().strip_prefix("{\""))
            .filter_map(|l| l.split('"').next())
            .collect();
        assert_eq!(names, EPCC.map(|(c, _)| c));
        let mut short: Vec<&str> = names.iter().map(|c| epcc_short(c)).collect();
        short.sort();
        short.dedup();
        assert_eq!(short.len(), names.len(), "two constructs share a chart label");
    }

    #[test]
    fn cells_fail_but_keep_earlier_constructs() {
        let p = Program {
            key: "epcc",
            bench: "omp_epcc",
            title: String::new(),
            args: vec![],
            cases: vec!["parallel".into(), "barrier".into()],
        };
        let rt = Runtime {
            name: "libgomp",
            label: String::new(),
            env: vec![],
            serial: false,
            threads: 2,
            expect_lib: None,
            ldd: String::new(),
        };
        let log = |round, ok, recs: Vec<Record>| RunLog {
            round,
            program: "epcc",
            runtime: "libgomp",
            threads: 2,
            command: String::new(),
            wall_s: 1.0,
            status: String::new(),
            ok,
            error: (!ok).then(|| "barrier: broken".to_string()),
            background_cpus: Some(0.0),
            steal_cpus: Some(0.0),
            records: recs,
            stderr_tail: String::new(),
            attempts: 1,
            waited_s: 0.0,
        };
        let logs = vec![
            log(0, true, vec![record("parallel", 1.0), record("barrier", 0.3)]),
            log(1, false, vec![record("parallel", 2.0)]),
            log(2, true, vec![record("parallel", 3.0), record("barrier", 0.5)]),
        ];
        let r = Results::collect(&logs, &[p], &[rt], 3, 2);
        assert_eq!(r.median("epcc", "libgomp", "parallel"), Some(2.0));
        let c = r.cell("epcc", "libgomp", "barrier").unwrap();
        assert!(c.failed() && c.median().is_none());
        assert_eq!(cell_text(&r, "epcc", "libgomp", "barrier", 3), "**FAILED** (1/3)");
    }

    #[test]
    fn herd_record_must_come_from_herds_library() {
        let p = Program { key: "fib", bench: "omp_fib", title: String::new(), args: vec![], cases: vec![] };
        let rt = Runtime {
            name: "herd",
            label: String::new(),
            env: vec![],
            serial: false,
            threads: 2,
            expect_lib: Some(PathBuf::from("/nonexistent/herd/libgomp.so.1")),
            ldd: String::new(),
        };
        let mut rec = Record::new("omp_fib", "libgomp", "n=30", 2, 1.0, "s");
        rec.extra.insert("lib".into(), json!("/usr/lib/x86_64-linux-gnu/libgomp.so.1"));
        assert!(check_record(&rec, &p, &rt, 2).is_err());
        rec.extra.insert("lib".into(), json!("/nonexistent/herd/libgomp.so.1"));
        assert!(check_record(&rec, &p, &rt, 2).is_ok());
        assert!(check_record(&rec, &p, &rt, 1).is_err());
    }
}
