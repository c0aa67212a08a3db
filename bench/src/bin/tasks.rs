//! The task-parallel suite (`herd_bench::tasks`: fib, nqueens, cilksort,
//! sparselu, strassen, health, floorplan, uts) sequentially, on herd under
//! each of its schedulers, and on Rayon, side by side.
//!
//! usage: tasks [--rounds 5] [--size full|small] [--only fib,nqueens,..]
//!              [--name NAME] [--threads 2 | --threads 1,2,4,8]
//!              [--grain fib=0,cilksort=2048,..] [--no-rayon] [--out-dir DIR]
//!
//! Every round runs every kernel once on every contender — sequential, herd
//! with `--threads` participants under `mts`, `ws`, `central` and `fifo`,
//! Rayon with as many threads — the contenders' order rotating from round to
//! round, so that all of them see the same (noisy, shared) machine. Each run
//! builds its input untimed, is timed, and checks its result (a wrong result
//! stops the driver with exit status 1). Reported: the median over rounds,
//! the speed-up over the sequential run, the ratio to herd `ws`, and herd's
//! scheduling counters (`Pool::stats`, reset before each run) as medians over
//! rounds. Writes `bench/results/<name>.json` and `<name>.svg` (speed-up
//! bars per kernel and runtime). `bench/tasks.sh` builds, then calls it.
//!
//! Thread sweep: `--threads` takes a list; the herd pools and the Rayon pool
//! exist at every count, and each round runs every kernel on every
//! (contender, count), the order rotating over all of them (the sequential
//! run once). The report then has the tables for each count, a table per
//! kernel of the medians against threads (herd `mts`, the default
//! scheduler, ÷ each peer), and a chart per kernel,
//! `<name>-<kernel>-threads.{svg,png}`; `<name>.svg` shows the largest
//! count. The JSON's `sweep` holds one record per (kernel, contender,
//! threads); each contender of `kernels` has its `threads`.

use herd_bench::chart::{self, Bars, Panel, PALETTE};
use herd_bench::sweep::{self, Point};
use herd_bench::tasks::{self, Bench, Runtime, Size};
use herd_bench::{fail, first_output_line, fmt, fmt_opt, median, ratio, read_trimmed, wrong, Args, Summary};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// One way of running the kernels.
struct Contender<'a> {
    /// `seq`, `mts`, `ws`, `central`, `fifo` or `rayon`.
    id: String,
    /// Participants (1 for `seq`).
    threads: usize,
    runtime: Runtime<'a>,
    /// The herd pool, for its counters.
    herd: Option<&'a herd::Pool>,
}

/// herd's counters of one run, summed over the participants.
#[derive(Clone, Copy, Debug, Default, Serialize)]
struct Counts {
    tasks: u64,
    local_steals: u64,
    remote_steals: u64,
    failed_steals: u64,
    idle_ms: f64,
}

impl Counts {
    fn of(stats: &[herd::WorkerStats]) -> Counts {
        stats.iter().fold(Counts::default(), |c, s| Counts {
            tasks: c.tasks + s.tasks,
            local_steals: c.local_steals + s.local_steals,
            remote_steals: c.remote_steals + s.remote_steals,
            failed_steals: c.failed_steals + s.failed_steals,
            idle_ms: c.idle_ms + s.idle_ns as f64 * 1e-6,
        })
    }

    /// The median of each counter over rounds.
    fn median_of(v: &[Counts]) -> Counts {
        let m = |f: fn(&Counts) -> f64| median(&v.iter().map(f).collect::<Vec<_>>());
        Counts {
            tasks: m(|c| c.tasks as f64) as u64,
            local_steals: m(|c| c.local_steals as f64) as u64,
            remote_steals: m(|c| c.remote_steals as f64) as u64,
            failed_steals: m(|c| c.failed_steals as f64) as u64,
            idle_ms: m(|c| c.idle_ms),
        }
    }
}

/// The runs of one kernel on one contender.
#[derive(Default)]
struct Runs {
    seconds: Vec<f64>,
    counts: Vec<Counts>,
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut args = Args::from_env();
    let size: Size = args.get("size", Size::Full);
    let small = size == Size::Small;
    let rounds: usize = args.get("rounds", if small { 1 } else { 5 });
    let threads_list = args.threads(2);
    let threads = *threads_list.last().expect("at least one thread count");
    let only: String = args.get("only", tasks::NAMES.join(","));
    let name: String = args.get("name", format!("tasks-{}", if small { "small" } else { "full" }));
    let grains: String = args.get("grain", String::new());
    let with_rayon = !args.flag("no-rayon");
    let out_dir: PathBuf = args.get("out-dir", Path::new(MANIFEST_DIR).join("results"));
    args.finish();
    if rounds == 0 {
        fail("--rounds must be positive");
    }
    let grains = parse_grains(&grains).unwrap_or_else(|e| fail(&e));
    let benches: Vec<Box<dyn Bench>> = only
        .split(',')
        .map(str::trim)
        .map(|k| {
            tasks::kernel(k, size, grains.get(k).copied()).unwrap_or_else(|| {
                fail(&format!("--only: unknown kernel {k:?} ({})", tasks::NAMES.join(", ")))
            })
        })
        .collect();
    if let Some(k) = grains.keys().find(|k| !benches.iter().any(|b| b.name() == k.as_str())) {
        fail(&format!("--grain: {k:?} is not a selected kernel"));
    }

    // At every thread count: a herd pool per scheduler, and a Rayon pool.
    let pools: Vec<herd::Pool> = threads_list
        .iter()
        .flat_map(|&t| herd::Sched::ALL.iter().map(move |&s| (t, s)))
        .map(|(t, s)| {
            herd::Pool::builder()
                .num_threads(t)
                .scheduler(s)
                .build()
                .unwrap_or_else(|e| fail(&format!("cannot build the herd pool ({s}, {t} threads): {e}")))
        })
        .collect();
    let rayons: Vec<(rayon::ThreadPool, bool)> = if with_rayon {
        threads_list.iter().map(|&t| herd_bench::rayon_pool(t)).collect()
    } else {
        Vec::new()
    };
    let rayon_bound = rayons.iter().all(|(_, b)| *b);
    let mut contenders = vec![Contender { id: "seq".into(), threads: 1, runtime: Runtime::Seq, herd: None }];
    for (i, &t) in threads_list.iter().enumerate() {
        let n = herd::Sched::ALL.len();
        contenders.extend(pools[i * n..(i + 1) * n].iter().map(|p| Contender {
            id: p.scheduler().name().into(),
            threads: t,
            runtime: Runtime::Herd(p),
            herd: Some(p),
        }));
        if let Some((rayon, _)) = rayons.get(i) {
            contenders.push(Contender {
                id: "rayon".into(),
                threads: t,
                runtime: Runtime::Rayon(rayon),
                herd: None,
            });
        }
    }

    let mut machine = herd_bench::host_info();
    machine.insert(
        "rustc".into(),
        first_output_line(std::process::Command::new("rustc").arg("--version")).into(),
    );
    eprintln!(
        "tasks: {} kernel(s) × {} contenders × {rounds} round(s), size {size:?}, threads {threads_list:?}, on {} ({} CPUs), load average {}",
        benches.len(),
        contenders.len(),
        machine["cpu"].as_str().unwrap_or("?"),
        machine["cpus"],
        machine["loadavg_start"].as_str().unwrap_or("?")
    );
    for b in &benches {
        eprintln!("tasks:   {:<10} {}", b.name(), b.describe());
    }

    // runs[kernel][contender]
    let mut runs: Vec<Vec<Runs>> =
        benches.iter().map(|_| contenders.iter().map(|_| Runs::default()).collect()).collect();
    for round in 0..rounds {
        let start = std::time::Instant::now();
        for (bi, b) in benches.iter().enumerate() {
            let k = round % contenders.len();
            for ci in (k..contenders.len()).chain(0..k) {
                let c = &contenders[ci];
                if let Some(p) = c.herd {
                    p.reset_stats();
                }
                let secs =
                    b.measure(c.runtime).unwrap_or_else(|e| wrong(b.name(), &format!("{}: {e}", c.id)));
                let counts = c.herd.map(|p| Counts::of(&p.stats())).unwrap_or_default();
                eprintln!(
                    "tasks: round {}/{rounds} {:<10} {:<8} {:>3}t {:>9.4} s",
                    round + 1,
                    b.name(),
                    c.id,
                    c.threads,
                    secs
                );
                runs[bi][ci].seconds.push(secs);
                runs[bi][ci].counts.push(counts);
            }
        }
        eprintln!("tasks: round {}/{rounds} done in {:.1} s", round + 1, start.elapsed().as_secs_f64());
    }
    let loadavg_end = read_trimmed("/proc/loadavg");

    let reproduce = format!("./bench/tasks.sh {}", argv.join(" ")).trim_end().to_string();
    let report = Report { benches: &benches, contenders: &contenders, runs: &runs };
    let mut md: String = threads_list.iter().map(|&t| report.markdown(t)).collect();
    let points = report.sweep_points();
    let sweeping = threads_list.len() > 1;
    if sweeping {
        md.push_str(&sweep::section(&points));
    }
    let pools_bound = pools.iter().all(|p| p.info().bound);
    if !pools_bound || (with_rayon && !rayon_bound) {
        md.push_str("Warning: not every pool is bound to distinct CPUs.\n\n");
    }
    let _ = writeln!(
        md,
        "Median over {rounds} round(s) (each round runs every kernel on every contender, order rotating); load average {} at start, {loadavg_end} at end.\n\nReproduce: `{reproduce}`",
        machine["loadavg_start"].as_str().unwrap_or("?"),
    );
    println!("{md}");

    let json = json!({
        "name": name,
        "reproduce": reproduce,
        "machine": machine,
        "loadavg_end": loadavg_end,
        "settings": {
            "size": size, "rounds": rounds, "threads": threads, "sweep_threads": threads_list,
            "rayon": with_rayon, "herd_bound": pools_bound, "rayon_bound": rayon_bound,
        },
        "kernels": report.json(),
        "sweep": points,
    });
    if let Err(e) = std::fs::create_dir_all(&out_dir) {
        fail(&format!("cannot create {}: {e}", out_dir.display()));
    }
    let json_path = out_dir.join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(&json).expect("report serialises") + "\n";
    if let Err(e) = std::fs::write(&json_path, text) {
        fail(&format!("cannot write {}: {e}", json_path.display()));
    }
    let svg_path = out_dir.join(format!("{name}.svg"));
    let caption = format!("Task-parallel kernels on herd's schedulers and Rayon ({name})");
    if let Err(e) = chart::draw(&svg_path, &caption, 1300, 500, &[Panel::Bars(report.chart(threads))]) {
        fail(&format!("cannot draw the chart: {e}"));
    }
    eprintln!("tasks: wrote {} and {}", json_path.display(), svg_path.display());
    if sweeping {
        sweep::write_charts_and_say("tasks", &out_dir, &name, "Task kernels against threads", &points);
    }
}

/// `fib=0,cilksort=2048` → {fib: 0, cilksort: 2048}.
fn parse_grains(s: &str) -> Result<BTreeMap<String, usize>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').ok_or_else(|| format!("--grain: {p:?} is not KERNEL=N"))?;
            let v = v.trim().parse().map_err(|_| format!("--grain: {p:?}: not a number"))?;
            Ok((k.trim().to_string(), v))
        })
        .collect()
}

/// The measurements and what is derived from them.
struct Report<'a> {
    benches: &'a [Box<dyn Bench>],
    contenders: &'a [Contender<'a>],
    runs: &'a [Vec<Runs>],
}

impl Report<'_> {
    /// The median of contender `id` at `threads` (`seq`: whatever `threads`).
    fn median(&self, bench: usize, id: &str, threads: usize) -> Option<f64> {
        let ci = self.contenders.iter().position(|c| c.id == id && (c.threads == threads || id == "seq"))?;
        Some(median(&self.runs[bench][ci].seconds))
    }

    /// Speed-up of contender `ci` over the sequential run.
    fn speedup(&self, bench: usize, ci: usize) -> Option<f64> {
        ratio(self.median(bench, "seq", 1), Some(median(&self.runs[bench][ci].seconds)))
    }

    /// Contender `ci`'s median ÷ herd `ws`'s at the same thread count.
    fn vs_ws(&self, bench: usize, ci: usize) -> Option<f64> {
        let c = &self.contenders[ci];
        ratio(Some(median(&self.runs[bench][ci].seconds)), self.median(bench, "ws", c.threads))
    }

    /// The contenders shown at `threads`: the sequential run and those with `threads`.
    fn at(&self, threads: usize) -> impl Iterator<Item = (usize, &Contender<'_>)> {
        self.contenders.iter().enumerate().filter(move |(_, c)| c.id == "seq" || c.threads == threads)
    }

    /// One sweep point per (kernel, contender, threads).
    fn sweep_points(&self) -> Vec<Point> {
        let mut v = Vec::new();
        for (bi, b) in self.benches.iter().enumerate() {
            for (ci, c) in self.contenders.iter().enumerate() {
                let name = match c.id.as_str() {
                    "seq" => "sequential".to_string(),
                    "rayon" => "rayon".to_string(),
                    id => format!("herd {id}"),
                };
                v.push(Point::new(b.name(), &name, c.threads, "s", &self.runs[bi][ci].seconds, false));
            }
        }
        v
    }

    fn markdown(&self, threads: usize) -> String {
        let mut md = String::new();
        for (bi, b) in self.benches.iter().enumerate() {
            let _ = writeln!(
                md,
                "### {} — {}, {threads} threads\n\n| runtime | median (s) | min – max (s) | speed-up over sequential | × herd ws | tasks | local steals | remote steals | failed steals |\n|---|---|---|---|---|---|---|---|---|",
                b.name(),
                b.describe()
            );
            for (ci, c) in self.at(threads) {
                let r = &self.runs[bi][ci];
                let s = Summary::of(&r.seconds);
                let label = match c.id.as_str() {
                    "seq" => "sequential".to_string(),
                    "rayon" => format!("Rayon, {threads} threads"),
                    id => format!("herd `{id}`, {threads} workers"),
                };
                let counts = if c.herd.is_some() {
                    let m = Counts::median_of(&r.counts);
                    format!("{} | {} | {} | {}", m.tasks, m.local_steals, m.remote_steals, m.failed_steals)
                } else {
                    "| | |".to_string()
                };
                let _ = writeln!(
                    md,
                    "| {label} | {} | {} – {} | {} | {} | {counts} |",
                    fmt(s.median),
                    fmt(s.min),
                    fmt(s.max),
                    fmt_opt(self.speedup(bi, ci)),
                    fmt_opt(self.vs_ws(bi, ci)),
                );
            }
            md.push('\n');
        }
        let parallel: Vec<(usize, &Contender)> = self.at(threads).filter(|(_, c)| c.id != "seq").collect();
        let _ = writeln!(
            md,
            "### Speed-up over the sequential run, {threads} threads\n\n| kernel | {} |\n|---|{}",
            parallel.iter().map(|(_, c)| c.id.as_str()).collect::<Vec<_>>().join(" | "),
            "---|".repeat(parallel.len())
        );
        for (bi, b) in self.benches.iter().enumerate() {
            let cells: Vec<String> = parallel.iter().map(|(ci, _)| fmt_opt(self.speedup(bi, *ci))).collect();
            let _ = writeln!(md, "| {} | {} |", b.name(), cells.join(" | "));
        }
        md.push('\n');
        md
    }

    fn json(&self) -> serde_json::Value {
        self.benches
            .iter()
            .enumerate()
            .map(|(bi, b)| {
                let contenders: Vec<_> = self
                    .contenders
                    .iter()
                    .enumerate()
                    .map(|(ci, c)| {
                        let r = &self.runs[bi][ci];
                        json!({
                            "id": c.id,
                            "threads": c.threads,
                            "seconds": r.seconds,
                            "summary": Summary::of(&r.seconds),
                            "speedup": self.speedup(bi, ci),
                            "vs_ws": self.vs_ws(bi, ci),
                            "herd_counters": c.herd.map(|_| &r.counts),
                            "herd_counters_median": c.herd.map(|_| Counts::median_of(&r.counts)),
                        })
                    })
                    .collect();
                json!({
                    "name": b.name(), "describe": b.describe(), "params": b.params(), "verified": true,
                    "contenders": contenders,
                })
            })
            .collect()
    }

    fn chart(&self, threads: usize) -> Bars<'_> {
        Bars {
            title: format!(
                "Speed-up over the sequential run, {threads} threads (log scale; higher is better)"
            ),
            y_desc: "× sequential",
            groups: self.benches.iter().map(|b| b.name().to_string()).collect(),
            series: self
                .at(threads)
                .filter(|(_, c)| c.id != "seq")
                .enumerate()
                .map(|(k, (ci, c))| {
                    let name = if c.herd.is_some() { c.id.as_str() } else { "Rayon" };
                    let values = (0..self.benches.len()).map(|bi| self.speedup(bi, ci)).collect();
                    (name, PALETTE[k % PALETTE.len()], values)
                })
                .collect(),
            lines: vec![(1.0, "sequential".into()), (threads as f64, format!("{threads}× (ideal)"))],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grains() {
        let g = parse_grains("fib=0, cilksort=2048").unwrap();
        assert_eq!((g["fib"], g["cilksort"]), (0, 2048));
        assert!(parse_grains("").unwrap().is_empty());
        assert!(parse_grains("fib").is_err());
        assert!(parse_grains("fib=x").is_err());
    }

    #[test]
    fn counts_median() {
        let c = |t| Counts { tasks: t, ..Counts::default() };
        assert_eq!(Counts::median_of(&[c(1), c(5), c(3)]).tasks, 3);
    }
}
