//! The side-by-side driver: runs every contender of every benchmark once per
//! round, alternating them (the order rotates from round to round), for R
//! rounds; takes the median over rounds of each contender's value; computes
//! the ratios; prints markdown tables; writes `bench/results/<name>.json`
//! (and `.md`). It builds nothing: `bench/run.sh` builds, then calls it.
//!
//! usage: compare [--rounds 11] [--quick] [--only region,fib,loops]
//!                [--threads 2 | --threads 1,2,4,8] [--name NAME] [--c-dir DIR]
//!                [--out-dir DIR] [--libomp PATH] [--no-omp-fib]
//!
//! `--threads` takes one count or a list (a thread sweep): every contender
//! runs at every count, all of them in the same rounds (the order rotating
//! over every (contender, count) pair); an invocation that is the same at
//! two counts (`fib` on 1 thread, the sequential runs) runs once per round.
//! The report then has the tables for each count, a table per benchmark of
//! the medians against threads with herd ÷ each peer, and a chart per
//! benchmark, `<name>-{region,fib,loops}-threads.{svg,png}`. At 1 thread the
//! ping-pong floor (which needs 2) is left out. The JSON's `sweep` holds one
//! record per (benchmark, contender, threads) in every run.
//!
//! Each contender is one process invocation per round (a Rust binary next to
//! this one, or an OpenMP program from `bench/build/`), which warms up, takes
//! a few samples, verifies its result (exit status 1 otherwise), and prints
//! one JSON record ([`herd_bench::Record`]). The OpenMP programs run twice:
//! under libgomp, and under LLVM's libomp, loaded in place of libgomp by
//! `LD_LIBRARY_PATH` pointing at a directory where libomp is linked as
//! `libgomp.so.1`; each program reports which runtime it really ran on, and
//! the driver checks it.

use herd_bench::sweep::{self, Point};
use herd_bench::{
    fail, find_libomp, first_output_line, make_shim, omp_env, parse_records, read_trimmed, Args, Record,
    Summary,
};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Loop schedules measured on both sides (herd's names, which are also the
/// OpenMP `schedule(...)` clauses).
const LOOP_SCHEDULES: [&str; 5] = ["static", "static,1024", "dynamic,1024", "dynamic,64", "guided,1024"];

/// Settings of one run.
#[derive(Clone, Debug, Serialize)]
struct Settings {
    rounds: usize,
    /// The thread count of this part of the report (the largest of
    /// `sweep_threads` in the JSON).
    threads: usize,
    /// Every thread count run (`--threads`).
    sweep_threads: Vec<usize>,
    quick: bool,
    benches: Vec<String>,
    region_regions: u64,
    region_samples: usize,
    fib_n: u64,
    fib_samples: usize,
    fib_omp_samples: usize,
    omp_fib: bool,
    loop_n: usize,
    loop_reps: u64,
    loop_samples: usize,
}

/// One program invocation measured every round.
#[derive(Clone, Debug, Serialize)]
struct Contender {
    /// Unique key, e.g. `fib/herd/2`.
    id: String,
    bench: &'static str,
    /// What the table calls it.
    label: String,
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// The `impl` its record must report (catches libomp not really loaded).
    expect_impl: String,
    threads: usize,
}

/// Where the programs are.
struct Paths {
    rust_bin: PathBuf,
    c_dir: PathBuf,
    /// Directory holding `libgomp.so.1` → libomp, if libomp was found.
    libomp_shim: Option<PathBuf>,
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut args = Args::from_env();
    let quick = args.flag("quick");
    let rounds: usize = args.get("rounds", if quick { 3 } else { 11 });
    let threads_list = args.threads(2);
    let only: String = args.get("only", "region,fib,loops".to_string());
    let name: String = args.get("name", if quick { "quick".to_string() } else { "full".to_string() });
    let c_dir: PathBuf = args.get("c-dir", Path::new(MANIFEST_DIR).join("build"));
    let out_dir: PathBuf = args.get("out-dir", Path::new(MANIFEST_DIR).join("results"));
    let libomp: Option<PathBuf> = args.opt("libomp");
    let omp_fib = !args.flag("no-omp-fib");
    args.finish();

    let benches: Vec<String> = only.split(',').map(|s| s.trim().to_string()).collect();
    if let Some(b) = benches.iter().find(|b| !["region", "fib", "loops"].contains(&b.as_str())) {
        fail(&format!("--only: unknown benchmark {b:?} (region, fib, loops)"));
    }
    if rounds == 0 {
        fail("--rounds must be positive");
    }
    let threads = *threads_list.last().expect("at least one thread count");
    let settings = Settings {
        rounds,
        threads,
        sweep_threads: threads_list.clone(),
        quick,
        benches,
        region_regions: if quick { 5_000 } else { 20_000 },
        region_samples: if quick { 3 } else { 7 },
        fib_n: 30,
        fib_samples: if quick { 3 } else { 7 },
        fib_omp_samples: if quick { 1 } else { 3 },
        omp_fib,
        loop_n: 1_000_000,
        loop_reps: if quick { 5 } else { 20 },
        loop_samples: if quick { 3 } else { 5 },
    };

    let rust_bin = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| fail("cannot locate the benchmark binaries"));
    let libomp_shim = match libomp.or_else(find_libomp) {
        Some(lib) => Some(make_shim(&c_dir, &lib)),
        None => {
            eprintln!("compare: warning: LLVM libomp not found (apt-get install libomp-dev, or --libomp PATH); libomp contenders skipped");
            None
        }
    };
    let paths = Paths { rust_bin, c_dir, libomp_shim };
    // The contenders at each thread count, and every distinct invocation
    // among them (run once per round, whatever the counts it serves).
    let at = |t: usize| Settings { threads: t, ..settings.clone() };
    let blocks: Vec<(Settings, Vec<Contender>)> =
        threads_list.iter().map(|&t| (at(t), contenders(&at(t), &paths))).collect();
    let mut contenders: Vec<Contender> = Vec::new();
    for c in blocks.iter().flat_map(|(_, cs)| cs) {
        if !contenders.iter().any(|u| command_line(u) == command_line(c)) {
            contenders.push(c.clone());
        }
    }
    for c in &contenders {
        if !c.program.is_file() {
            fail(&format!(
                "{} is missing: build first with ./bench/run.sh, or `make -C bench c-programs` and `cargo build --release -p herd-bench`",
                c.program.display()
            ));
        }
    }

    let machine = machine_info(&paths);
    eprintln!(
        "compare: {} invocations (contenders x thread counts) x {} rounds on {} ({} CPUs), load average {}",
        contenders.len(),
        rounds,
        machine["cpu"].as_str().unwrap_or("?"),
        machine["cpus"],
        machine["loadavg_start"].as_str().unwrap_or("?")
    );

    // Round by round, every invocation once, the order rotating. Values are
    // kept by command line (an id names a contender at one thread count).
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut last: BTreeMap<String, Record> = BTreeMap::new();
    for round in 0..rounds {
        let start = std::time::Instant::now();
        for c in rotated(&contenders, round) {
            let rec = run_contender(c);
            values.entry(command_line(c)).or_default().push(rec.value);
            last.insert(command_line(c), rec);
        }
        eprintln!("compare: round {}/{} done in {:.1} s", round + 1, rounds, start.elapsed().as_secs_f64());
    }
    let loadavg_end = read_trimmed("/proc/loadavg");

    let mut md = String::new();
    let mut targets = Vec::new();
    let mut ratios_by_threads = serde_json::Map::new();
    let mut ratios = serde_json::Map::new();
    for (st, cs) in &blocks {
        // This thread count's measurements, by contender id.
        let values: BTreeMap<String, Vec<f64>> = by_id(cs, &values);
        let last: BTreeMap<String, Record> = by_id(cs, &last);
        let results = Results { contenders: cs, values: &values, last: &last };
        ratios = serde_json::Map::new();
        for b in &st.benches {
            let section = match b.as_str() {
                "region" => region_report(&results, st),
                "fib" => fib_report(&results, st),
                _ => loops_report(&results, st),
            };
            md.push_str(&section.markdown);
            // A target of a 1-thread measurement is the same at every count: listed once.
            for t in section.targets {
                if !targets.iter().any(|u: &Target| u.name == t.name && u.value == t.value) {
                    targets.push(Target { threads: st.threads, ..t });
                }
            }
            ratios.insert(b.clone(), serde_json::Value::Object(section.ratios));
        }
        ratios_by_threads.insert(st.threads.to_string(), serde_json::Value::Object(ratios.clone()));
    }
    let points: Vec<Point> = contenders
        .iter()
        .filter_map(|c| {
            let (bench, name) = sweep_key(&c.id)?;
            let key = command_line(c);
            Some(Point::new(&bench, &name, c.threads, &last[&key].unit, &values[&key], false))
        })
        .collect();
    let sweeping = threads_list.len() > 1;
    if sweeping {
        md.push_str(&sweep::section(&points));
    }
    if !targets.is_empty() {
        md.push_str(
            "### Targets\n\n| target | threads | measured | required | met |\n|---|---|---|---|---|\n",
        );
        for t in &targets {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} {} | {} |",
                t.name,
                t.threads,
                fmt(t.value),
                t.cmp,
                fmt(t.threshold),
                if t.met { "yes" } else { "**no**" }
            );
        }
        md.push('\n');
    }
    let reproduce = format!("./bench/run.sh {}", argv.join(" ")).trim_end().to_string();
    let unbound: Vec<String> = contenders
        .iter()
        .filter(|c| last.get(&command_line(c)).is_some_and(|r| !r.bound && r.threads > 1))
        .map(|c| format!("{} ({} threads)", c.id, c.threads))
        .collect();
    if !unbound.is_empty() {
        let _ = writeln!(md, "Warning: not bound to distinct CPUs: {}\n", unbound.join(", "));
    }
    let _ = writeln!(
        md,
        "Median over {rounds} rounds (each round runs every contender once, order rotating); load average {} at start, {} at end.\n\nReproduce: `{reproduce}`",
        machine["loadavg_start"].as_str().unwrap_or("?"),
        loadavg_end
    );
    println!("{md}");

    let report = json!({
        "name": name,
        "reproduce": reproduce,
        "machine": machine,
        "loadavg_end": loadavg_end,
        "settings": settings,
        "contenders": contenders.iter().map(|c| {
            let key = command_line(c);
            let v = &values[&key];
            json!({
                "id": c.id, "label": c.label, "program": c.program, "args": c.args, "env": c.env,
                "impl": c.expect_impl, "threads": c.threads, "unit": last[&key].unit,
                "summary": Summary::of(v), "rounds": v, "last_record": last[&key],
            })
        }).collect::<Vec<_>>(),
        "ratios": ratios,
        "ratios_by_threads": ratios_by_threads,
        "targets": targets,
        "sweep": points,
    });
    if let Err(e) = std::fs::create_dir_all(&out_dir) {
        fail(&format!("cannot create {}: {e}", out_dir.display()));
    }
    let json_path = out_dir.join(format!("{name}.json"));
    let md_path = out_dir.join(format!("{name}.md"));
    let text = serde_json::to_string_pretty(&report).expect("report serialises");
    for (path, content) in [(&json_path, text), (&md_path, md)] {
        if let Err(e) = std::fs::write(path, content + "\n") {
            fail(&format!("cannot write {}: {e}", path.display()));
        }
    }
    eprintln!("compare: wrote {} and {}", json_path.display(), md_path.display());
    if sweeping {
        sweep::write_charts_and_say("compare", &out_dir, &name, "Time against threads", &points);
    }
}

/// The entries of `m` (keyed by command line) of the contenders `cs`, keyed by their ids.
fn by_id<T: Clone>(cs: &[Contender], m: &BTreeMap<String, T>) -> BTreeMap<String, T> {
    cs.iter().filter_map(|c| Some((c.id.clone(), m.get(&command_line(c))?.clone()))).collect()
}

/// The sweep benchmark and contender name of a contender id (see
/// [`contenders`]), or `None` for one not charted against threads
/// (`fib/seq`: the sequential runs are shown by `fib/seq-calls`).
fn sweep_key(id: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = id.split('/').collect();
    let (bench, name) = match parts.as_slice() {
        ["region", "omp", lib] => ("region".to_string(), lib.to_string()),
        ["region", "pingpong"] => ("region".into(), "floor (ping-pong)".into()),
        ["region", imp] => ("region".into(), imp.to_string()),
        ["fib", "seq-calls"] => ("fib".into(), "sequential".into()),
        ["fib", imp, lib] if imp.starts_with("omp") => ("fib".into(), lib.to_string()),
        ["fib", imp, _] => ("fib".into(), imp.to_string()),
        ["loops", "herd", "adaptive"] => ("loops/auto".into(), "herd adaptive".into()),
        ["loops", "rayon", _] => ("loops/auto".into(), "rayon par_iter".into()),
        ["loops", "herd", sched] => (format!("loops/{sched}"), "herd".into()),
        ["loops", "omp", sched, lib] => (format!("loops/{sched}"), lib.to_string()),
        _ => return None,
    };
    Some((bench, name))
}

/// Every contender of the selected benchmarks.
fn contenders(s: &Settings, p: &Paths) -> Vec<Contender> {
    let t = s.threads;
    let mut v = Vec::new();
    let rust = |bench: &'static str,
                id: &str,
                label: &str,
                bin: &str,
                imp: &str,
                threads: usize,
                args: Vec<String>| {
        Contender {
            id: id.into(),
            bench,
            label: label.into(),
            program: p.rust_bin.join(bin),
            args,
            env: omp_env(threads, None),
            expect_impl: imp.into(),
            threads,
        }
    };
    // The OpenMP program `prog` under libgomp and (when found) libomp.
    let omp = |bench: &'static str, id: &str, label: &str, prog: &str, threads: usize, args: Vec<String>| {
        let mut out = vec![Contender {
            id: format!("{id}/libgomp"),
            bench,
            label: format!("{label} (libgomp)"),
            program: p.c_dir.join(prog),
            args: args.clone(),
            env: omp_env(threads, None),
            expect_impl: "libgomp".into(),
            threads,
        }];
        if let Some(shim) = &p.libomp_shim {
            out.push(Contender {
                id: format!("{id}/libomp"),
                bench,
                label: format!("{label} (libomp)"),
                program: p.c_dir.join(prog),
                args,
                env: omp_env(threads, Some(shim)),
                expect_impl: "libomp".into(),
                threads,
            });
        }
        out
    };
    let a = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    if s.benches.iter().any(|b| b == "region") {
        let (r, n) = (s.region_regions.to_string(), s.region_samples.to_string());
        for (imp, label) in [
            ("herd", "herd `pool.broadcast(|_| ())`"),
            ("herd-install", "herd `pool.broadcast` inside `pool.install`"),
            ("rayon", "Rayon `ThreadPool::broadcast` (caller outside the pool)"),
            ("rayon-install", "Rayon `ThreadPool::broadcast` inside `pool.install`"),
            ("pingpong", "floor: one cache-line round trip between 2 bound spinning threads"),
        ] {
            if imp == "pingpong" && t < 2 {
                continue; // the floor needs two threads
            }
            let base = imp.split('-').next().unwrap_or(imp);
            let args = a(&["--impl", imp, "--threads", &t.to_string(), "--regions", &r, "--samples", &n]);
            v.push(rust("region", &format!("region/{imp}"), label, "bench-region", base, t, args));
        }
        v.extend(omp("region", "region/omp", "OpenMP empty `parallel`", "region_omp", t, a(&[&r, &n])));
    }
    if s.benches.iter().any(|b| b == "fib") {
        let (n, k) = (s.fib_n.to_string(), s.fib_samples.to_string());
        for (imp, label) in [
            ("seq", "sequential, plain recursion (compiler turns one call into a loop)"),
            ("seq-calls", "sequential, every call kept (`black_box` on results)"),
        ] {
            let args = a(&["--impl", imp, "--n", &n, "--samples", &k]);
            v.push(rust("fib", &format!("fib/{imp}"), label, "bench-fib", "seq", 1, args));
        }
        let counts: &[usize] = if t == 1 { &[1] } else { &[1, t] };
        for imp in ["herd", "rayon"] {
            for &threads in counts {
                let args = a(&["--impl", imp, "--threads", &threads.to_string(), "--n", &n, "--samples", &k]);
                let label = format!("{} `join`", if imp == "herd" { "herd" } else { "Rayon" });
                v.push(rust("fib", &format!("fib/{imp}/{threads}"), &label, "bench-fib", imp, threads, args));
            }
        }
        if s.omp_fib {
            let k = s.fib_omp_samples.to_string();
            for &threads in counts {
                let id = format!("fib/omp{threads}");
                v.extend(omp("fib", &id, "OpenMP `task`", "fib_omp", threads, a(&[&n, &k])));
            }
        }
    }
    if s.benches.iter().any(|b| b == "loops") {
        let (n, r, k) = (s.loop_n.to_string(), s.loop_reps.to_string(), s.loop_samples.to_string());
        for sched in LOOP_SCHEDULES.iter().copied().chain(["adaptive"]) {
            let args = a(&[
                "--impl",
                "herd",
                "--schedule",
                sched,
                "--threads",
                &t.to_string(),
                "--n",
                &n,
                "--reps",
                &r,
                "--samples",
                &k,
            ]);
            v.push(rust(
                "loops",
                &format!("loops/herd/{sched}"),
                "herd `for_each`",
                "bench-loops",
                "herd",
                t,
                args,
            ));
            if sched != "adaptive" {
                let id = format!("loops/omp/{sched}");
                v.extend(omp("loops", &id, "OpenMP `parallel for`", "loops_omp", t, a(&[sched, &n, &r, &k])));
            }
        }
        let args = a(&[
            "--impl",
            "rayon",
            "--schedule",
            "par_iter",
            "--threads",
            &t.to_string(),
            "--n",
            &n,
            "--reps",
            &r,
            "--samples",
            &k,
        ]);
        v.push(rust(
            "loops",
            "loops/rayon/par_iter",
            "Rayon `par_iter_mut().enumerate().for_each`",
            "bench-loops",
            "rayon",
            t,
            args,
        ));
    }
    v
}

/// The contenders in round `round`'s order: rotated by the round number, so
/// that no contender always runs first or right after the same neighbour.
fn rotated(v: &[Contender], round: usize) -> impl Iterator<Item = &Contender> {
    let k = if v.is_empty() { 0 } else { round % v.len() };
    v[k..].iter().chain(&v[..k])
}

/// Runs one invocation and checks its record.
fn run_contender(c: &Contender) -> Record {
    let out = Command::new(&c.program)
        .args(&c.args)
        .envs(c.env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap_or_else(|e| fail(&format!("cannot run {}: {e}", c.program.display())));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cmd = command_line(c);
    if !out.status.success() {
        fail(&format!("{} FAILED ({}): {cmd}\n{stderr}{stdout}", c.id, out.status));
    }
    let recs = parse_records(&stdout).unwrap_or_else(|e| fail(&format!("{}: {e}", c.id)));
    let [rec] = <[Record; 1]>::try_from(recs)
        .unwrap_or_else(|r| fail(&format!("{}: expected one record, got {}: {cmd}", c.id, r.len())));
    if !rec.ok || rec.bench != c.bench || rec.imp != c.expect_impl || rec.threads != c.threads {
        fail(&format!(
            "{}: unexpected record (wanted bench {}, impl {}, {} threads, ok): {rec:?}\n{cmd}",
            c.id, c.bench, c.expect_impl, c.threads
        ));
    }
    rec
}

/// The shell command that reproduces one invocation.
fn command_line(c: &Contender) -> String {
    let env: Vec<String> = c.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{} {} {}", env.join(" "), c.program.display(), c.args.join(" "))
}

/// The machine, the runtimes, and how we know libomp is really loaded.
fn machine_info(p: &Paths) -> serde_json::Value {
    let region_omp = p.c_dir.join("region_omp");
    let (banner, ldd) = match &p.libomp_shim {
        Some(shim) if region_omp.is_file() => {
            let ld = shim.display().to_string();
            // libomp prints its banner on standard error under KMP_VERSION=1.
            let banner = Command::new(&region_omp)
                .args(["10", "1"])
                .env("KMP_VERSION", "1")
                .env("LD_LIBRARY_PATH", &ld)
                .env("OMP_NUM_THREADS", "2")
                .output()
                .ok()
                .and_then(|o| {
                    String::from_utf8_lossy(&o.stderr)
                        .lines()
                        .find(|l| l.contains("version"))
                        .map(|l| l.trim().to_string())
                })
                .unwrap_or_default();
            let ldd = Command::new("ldd")
                .arg(&region_omp)
                .env("LD_LIBRARY_PATH", &ld)
                .output()
                .ok()
                .and_then(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .lines()
                        .find(|l| l.contains("libgomp"))
                        .map(|l| l.trim().to_string())
                })
                .unwrap_or_default();
            (banner, ldd)
        }
        _ => (String::new(), String::new()),
    };
    let mut m = herd_bench::host_info();
    m.insert("rustc".into(), first_output_line(Command::new("rustc").arg("--version")).into());
    m.insert("libomp_shim".into(), json!(p.libomp_shim));
    m.insert("libomp_banner".into(), banner.into());
    m.insert("libomp_ldd".into(), ldd.into());
    serde_json::Value::Object(m)
}

// ---------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------

/// The measurements, by contender id.
struct Results<'a> {
    contenders: &'a [Contender],
    values: &'a BTreeMap<String, Vec<f64>>,
    last: &'a BTreeMap<String, Record>,
}

impl Results<'_> {
    fn summary(&self, id: &str) -> Option<Summary> {
        self.values.get(id).map(|v| Summary::of(v))
    }
    fn median(&self, id: &str) -> Option<f64> {
        self.summary(id).map(|s| s.median)
    }
    /// The contender's label, escaped for a markdown table cell.
    fn label(&self, id: &str) -> String {
        self.contenders.iter().find(|c| c.id == id).map_or(id, |c| c.label.as_str()).replace('|', "\\|")
    }
}

/// A target and whether it is met.
#[derive(Clone, Debug, Serialize)]
struct Target {
    name: String,
    /// The thread count it was measured at.
    threads: usize,
    value: f64,
    cmp: &'static str,
    threshold: f64,
    met: bool,
}

impl Target {
    fn at_most(name: &str, value: f64, threshold: f64) -> Target {
        Target { name: name.into(), threads: 0, value, cmp: "≤", threshold, met: value <= threshold }
    }
    fn at_least(name: &str, value: f64, threshold: f64) -> Target {
        Target { name: name.into(), threads: 0, value, cmp: "≥", threshold, met: value >= threshold }
    }
}

/// One benchmark's part of the report.
struct Section {
    markdown: String,
    targets: Vec<Target>,
    ratios: serde_json::Map<String, serde_json::Value>,
}

/// Three significant digits, without exponent for ordinary magnitudes.
fn fmt(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    let a = x.abs();
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    format!("{x:.decimals$}")
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map_or_else(|| "–".into(), fmt)
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? / b?)
}

fn region_report(r: &Results, s: &Settings) -> Section {
    let mut md = format!(
        "### Empty fork-join region, {} participants (µs per region, EPCC: (t_regions − t_reference) / regions)\n\n\
         | contender | median | min – max over rounds | × libgomp | × libomp |\n|---|---|---|---|---|\n",
        s.threads
    );
    let gomp = r.median("region/omp/libgomp");
    let lomp = r.median("region/omp/libomp");
    let mut ratios = serde_json::Map::new();
    for id in [
        "region/herd",
        "region/herd-install",
        "region/rayon-install",
        "region/rayon",
        "region/omp/libgomp",
        "region/omp/libomp",
        "region/pingpong",
    ] {
        let Some(sm) = r.summary(id) else { continue };
        let (g, l) = (ratio(Some(sm.median), gomp), ratio(Some(sm.median), lomp));
        let _ = writeln!(
            md,
            "| {} | {} | {} – {} | {} | {} |",
            r.label(id),
            fmt(sm.median),
            fmt(sm.min),
            fmt(sm.max),
            fmt_opt(g),
            fmt_opt(l)
        );
        ratios.insert(id.into(), json!({"median_us": sm.median, "vs_libgomp": g, "vs_libomp": l}));
    }
    md.push('\n');
    let mut targets = Vec::new();
    if let Some(h) = r.median("region/herd") {
        targets.push(Target::at_most("herd empty region (µs)", h, 0.4));
        if let Some(g) = gomp {
            targets.push(Target::at_most("herd region / libgomp region", h / g, 0.5));
        }
    }
    Section { markdown: md, targets, ratios }
}

fn fib_report(r: &Results, s: &Settings) -> Section {
    let t = s.threads;
    let mut md = format!(
        "### fib({}) with a join (task) at every level, no cutoff (ms per fib)\n\n\
         | contender | threads | median | min – max over rounds | ns per call | × sequential (every call) | speedup 1 → {t} threads |\n\
         |---|---|---|---|---|---|---|\n",
        s.fib_n
    );
    let seq = r.median("fib/seq-calls");
    let mut ratios = serde_json::Map::new();
    let mut ids: Vec<(String, Option<String>)> =
        vec![("fib/seq".into(), None), ("fib/seq-calls".into(), None)];
    for (one, at_t) in ["herd", "rayon"]
        .map(|imp| (format!("fib/{imp}/1"), format!("fib/{imp}/{t}")))
        .into_iter()
        .chain(["libgomp", "libomp"].map(|lib| (format!("fib/omp1/{lib}"), format!("fib/omp{t}/{lib}"))))
    {
        ids.push((one.clone(), None));
        if t > 1 {
            ids.push((at_t, Some(one)));
        }
    }
    for (id, one) in &ids {
        let Some(sm) = r.summary(id) else { continue };
        let rec = &r.last[id];
        let vs_seq = ratio(Some(sm.median), seq);
        let speedup = one.as_ref().and_then(|o| ratio(r.median(o), Some(sm.median)));
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} – {} | {} | {} | {} |",
            r.label(id),
            rec.threads,
            fmt(sm.median),
            fmt(sm.min),
            fmt(sm.max),
            fmt(sm.median * 1e6 / herd_bench::fib_calls(s.fib_n) as f64),
            fmt_opt(vs_seq),
            fmt_opt(speedup)
        );
        ratios
            .insert(id.clone(), json!({"median_ms": sm.median, "vs_seq_calls": vs_seq, "speedup": speedup}));
    }
    md.push('\n');
    let mut targets = Vec::new();
    if let (Some(h1), Some(sq)) = (r.median("fib/herd/1"), seq) {
        targets.push(Target::at_most("herd 1 worker / sequential (every call)", h1 / sq, 1.5));
    }
    if let (true, Some(h1), Some(h2)) = (t > 1, r.median("fib/herd/1"), r.median(&format!("fib/herd/{t}"))) {
        targets.push(Target::at_least(&format!("herd speedup 1 → {t} workers"), h1 / h2, 1.7));
    }
    Section { markdown: md, targets, ratios }
}

fn loops_report(r: &Results, s: &Settings) -> Section {
    let mut md = format!(
        "### for_each over {} iterations `a[i] = i + rep`, {} threads (µs per loop)\n\n\
         | schedule | herd | libgomp | libomp | herd ÷ libgomp | herd ÷ libomp |\n|---|---|---|---|---|---|\n",
        s.loop_n, s.threads
    );
    let mut ratios = serde_json::Map::new();
    for sched in LOOP_SCHEDULES {
        let h = r.median(&format!("loops/herd/{sched}"));
        let g = r.median(&format!("loops/omp/{sched}/libgomp"));
        let l = r.median(&format!("loops/omp/{sched}/libomp"));
        let _ = writeln!(
            md,
            "| `{sched}` | {} | {} | {} | {} | {} |",
            fmt_opt(h),
            fmt_opt(g),
            fmt_opt(l),
            fmt_opt(ratio(h, g)),
            fmt_opt(ratio(h, l))
        );
        ratios.insert(
            sched.into(),
            json!({"herd_us": h, "libgomp_us": g, "libomp_us": l, "herd_vs_libgomp": ratio(h, g), "herd_vs_libomp": ratio(h, l)}),
        );
    }
    for (id, name) in
        [("loops/herd/adaptive", "herd `adaptive`"), ("loops/rayon/par_iter", "Rayon `par_iter_mut`")]
    {
        if let Some(v) = r.median(id) {
            let _ = writeln!(md, "| {name} | {} | | | | |", fmt(v));
            ratios.insert(id.into(), json!({"median_us": v}));
        }
    }
    md.push('\n');
    Section { markdown: md, targets: Vec::new(), ratios }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contender(id: &str) -> Contender {
        Contender {
            id: id.into(),
            bench: "region",
            label: id.into(),
            program: PathBuf::new(),
            args: vec![],
            env: vec![],
            expect_impl: "herd".into(),
            threads: 2,
        }
    }

    #[test]
    fn rotation_visits_everyone_once_and_shifts() {
        let v: Vec<_> = ["a", "b", "c"].iter().map(|s| contender(s)).collect();
        let ids = |r| rotated(&v, r).map(|c| c.id.as_str()).collect::<Vec<_>>();
        assert_eq!(ids(0), ["a", "b", "c"]);
        assert_eq!(ids(1), ["b", "c", "a"]);
        assert_eq!(ids(4), ["b", "c", "a"]);
    }

    #[test]
    fn sweep_keys_name_benchmark_and_contender() {
        let k = |id| sweep_key(id).map(|(b, c)| format!("{b} {c}"));
        assert_eq!(k("region/herd-install").as_deref(), Some("region herd-install"));
        assert_eq!(k("region/omp/libomp").as_deref(), Some("region libomp"));
        assert_eq!(k("fib/herd/4").as_deref(), Some("fib herd"));
        assert_eq!(k("fib/omp4/libgomp").as_deref(), Some("fib libgomp"));
        assert_eq!(k("fib/seq-calls").as_deref(), Some("fib sequential"));
        assert_eq!(k("fib/seq"), None);
        assert_eq!(k("loops/omp/dynamic,64/libomp").as_deref(), Some("loops/dynamic,64 libomp"));
        assert_eq!(k("loops/herd/static").as_deref(), Some("loops/static herd"));
        assert_eq!(k("loops/herd/adaptive").as_deref(), Some("loops/auto herd adaptive"));
    }

    #[test]
    fn formatting_and_targets() {
        assert_eq!(fmt(0.31234), "0.312");
        assert_eq!(fmt(2.5), "2.50");
        assert_eq!(fmt(12.34), "12.3");
        assert_eq!(fmt(1234.6), "1235");
        assert!(Target::at_most("x", 0.4, 0.4).met);
        assert!(!Target::at_least("y", 1.69, 1.7).met);
    }

    #[test]
    fn region_section_computes_ratios() {
        let cs: Vec<_> = ["region/herd", "region/omp/libgomp"].iter().map(|s| contender(s)).collect();
        let values: BTreeMap<String, Vec<f64>> =
            [("region/herd".to_string(), vec![0.3, 0.2, 0.4]), ("region/omp/libgomp".to_string(), vec![1.0])]
                .into_iter()
                .collect();
        let last = BTreeMap::new();
        let r = Results { contenders: &cs, values: &values, last: &last };
        let s = Settings {
            rounds: 1,
            threads: 2,
            sweep_threads: vec![2],
            quick: true,
            benches: vec!["region".into()],
            region_regions: 1,
            region_samples: 1,
            fib_n: 30,
            fib_samples: 1,
            fib_omp_samples: 1,
            omp_fib: false,
            loop_n: 1,
            loop_reps: 1,
            loop_samples: 1,
        };
        let sec = region_report(&r, &s);
        assert!(sec.targets.iter().all(|t| t.met), "{:?}", sec.targets);
        assert!((sec.ratios["region/herd"]["vs_libgomp"].as_f64().unwrap() - 0.3).abs() < 1e-12);
    }
}
