//! Shared helpers of the benchmark programs: the JSON-line [`Record`] every
//! program prints (the C programs in `bench/c/` print the same format),
//! statistics, timing, command-line arguments, CPU binding, and pool
//! construction for herd and Rayon.
//!
//! The binaries: `bench-region`, `bench-fib`, `bench-loops` (one measurement
//! per invocation, one JSON line each) and `compare`, the driver that runs
//! every contender round by round and reports medians.

pub mod chart;
pub mod sweep;
pub mod tasks;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::str::FromStr;
use std::time::Instant;

// ---------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------

/// One measurement: one JSON line on standard output.
///
/// `impl` names the runtime that really ran (the C programs detect libgomp or
/// libomp themselves), `value` is the median over the invocation's samples in
/// `unit`, `ok` says the result was verified (a wrong result exits non-zero
/// instead), `bound` that the participants ran on distinct CPUs with binding
/// on. Further members (`min`, `samples`, ...) are kept in `extra`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// Benchmark: `region`, `fib` or `loops`.
    pub bench: String,
    /// Implementation: `herd`, `rayon`, `seq`, `libgomp`, `libomp`, ...
    #[serde(rename = "impl")]
    pub imp: String,
    /// Variant within the benchmark (schedule, API used, ...).
    pub case: String,
    /// Participants.
    pub threads: usize,
    /// The measured value, in `unit`.
    pub value: f64,
    /// `us` or `ms`.
    pub unit: String,
    /// The result was verified.
    pub ok: bool,
    /// Participants were bound to distinct CPUs.
    #[serde(default)]
    pub bound: bool,
    /// Other members.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Record {
    /// A verified record with no extra members.
    pub fn new(bench: &str, imp: &str, case: &str, threads: usize, value: f64, unit: &str) -> Record {
        Record {
            bench: bench.into(),
            imp: imp.into(),
            case: case.into(),
            threads,
            value,
            unit: unit.into(),
            ok: true,
            bound: false,
            extra: serde_json::Map::new(),
        }
    }

    /// Sets the `bound` flag.
    pub fn bound(mut self, bound: bool) -> Record {
        self.bound = bound;
        self
    }

    /// Adds an extra member.
    pub fn with(mut self, key: &str, value: impl Into<serde_json::Value>) -> Record {
        self.extra.insert(key.into(), value.into());
        self
    }

    /// Adds the usual summary of an invocation's samples (`min`, `samples`)
    /// and takes their median as the value.
    pub fn from_samples(
        bench: &str,
        imp: &str,
        case: &str,
        threads: usize,
        samples: &[f64],
        unit: &str,
    ) -> Record {
        let s = Summary::of(samples);
        Record::new(bench, imp, case, threads, s.median, unit)
            .with("min", s.min)
            .with("samples", samples.len())
    }

    /// Prints the record as one JSON line and flushes.
    pub fn emit(&self) {
        use std::io::Write;
        let line = serde_json::to_string(self).expect("a record serialises");
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// Parses the JSON lines of a program's output; other lines are errors.
pub fn parse_records(output: &str) -> Result<Vec<Record>, String> {
    output
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| format!("not a record: {l:?} ({e})")))
        .collect()
}

// ---------------------------------------------------------------------------
// Statistics and timing
// ---------------------------------------------------------------------------

/// Median of `v` (mean of the two middle values for an even count).
///
/// # Panics
/// If `v` is empty or holds a NaN.
pub fn median(v: &[f64]) -> f64 {
    assert!(!v.is_empty(), "median of nothing");
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        0.5 * (s[m - 1] + s[m])
    }
}

/// Median, minimum and maximum of a set of samples.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Summary {
    /// Median.
    pub median: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
}

impl Summary {
    /// Summarises `v` (non-empty).
    pub fn of(v: &[f64]) -> Summary {
        Summary {
            median: median(v),
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// Three significant digits, without exponent for ordinary magnitudes.
pub fn fmt(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    let a = x.abs();
    let decimals = if a == 0.0 { 3 } else { (2 - a.log10().floor() as i32).clamp(0, 9) as usize };
    format!("{x:.decimals$}")
}

/// [`fmt`], or "–" for no value.
pub fn fmt_opt(x: Option<f64>) -> String {
    x.map_or_else(|| "–".into(), fmt)
}

/// a / b when both are known.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? / b?)
}

/// Seconds taken by `f`.
#[inline]
pub fn seconds(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// EPCC-style overhead of `region`, in microseconds per call, one value per
/// sample: each sample times `regions` calls of `region` and the same loop
/// without them (the reference), and takes (t_regions − t_reference) / regions.
pub fn epcc_overhead_us(regions: u64, samples: usize, mut region: impl FnMut()) -> Vec<f64> {
    // Warm-up: threads awake, caches and predictors primed.
    for _ in 0..regions / 10 + 100 {
        region();
    }
    (0..samples)
        .map(|_| {
            let reference = seconds(|| {
                for i in 0..regions {
                    black_box(i);
                }
            });
            let test = seconds(|| {
                for i in 0..regions {
                    black_box(i);
                    region();
                }
            });
            (test - reference) / regions as f64 * 1e6
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

/// `--key value` and `--flag` arguments. Every key must be read (with
/// [`Args::get`] or [`Args::flag`]) before [`Args::finish`], which rejects
/// unknown ones, so a typo is an error rather than a silent default.
#[derive(Debug, Default)]
pub struct Args {
    given: BTreeMap<String, Option<String>>,
    read: std::collections::BTreeSet<String>,
}

impl Args {
    /// The process's arguments.
    pub fn from_env() -> Args {
        Args::parse(std::env::args().skip(1)).unwrap_or_else(|e| fail(&e))
    }

    /// Parses `--key value` / `--key=value` / `--flag` (a key followed by
    /// another `--key`, or last, is a flag).
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
        let mut given = BTreeMap::new();
        let mut it = args.into_iter().peekable();
        while let Some(a) = it.next() {
            let Some(key) = a.strip_prefix("--") else {
                return Err(format!("unexpected argument {a:?} (arguments are --key value)"));
            };
            let (key, value) = match key.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => {
                    let v = match it.peek() {
                        Some(next) if !next.starts_with("--") => it.next(),
                        _ => None,
                    };
                    (key.to_string(), v)
                }
            };
            given.insert(key, value);
        }
        Ok(Args { given, read: Default::default() })
    }

    /// The value of `--key`, or `default` when absent.
    pub fn get<T: FromStr>(&mut self, key: &str, default: T) -> T {
        self.opt(key).unwrap_or(default)
    }

    /// The value of `--key`, if given.
    pub fn opt<T: FromStr>(&mut self, key: &str) -> Option<T> {
        self.read.insert(key.into());
        match self.given.get(key)? {
            None => fail(&format!("--{key} needs a value")),
            Some(v) => Some(v.parse().unwrap_or_else(|_| fail(&format!("--{key}: invalid value {v:?}")))),
        }
    }

    /// The thread counts of `--threads` (`2`, or a list `1,2,4,8`: see
    /// [`sweep::parse_threads`]), or `[default]` when absent; exits via
    /// [`fail`] on a bad list.
    pub fn threads(&mut self, default: usize) -> Vec<usize> {
        match self.opt::<String>("threads") {
            None => vec![default],
            Some(s) => sweep::parse_threads(&s).unwrap_or_else(|e| fail(&e)),
        }
    }

    /// Whether `--key` was given (as a flag).
    pub fn flag(&mut self, key: &str) -> bool {
        self.read.insert(key.into());
        match self.given.get(key) {
            None => false,
            Some(None) => true,
            Some(Some(v)) => fail(&format!("--{key} takes no value (got {v:?})")),
        }
    }

    /// Fails on any argument that was not read.
    pub fn finish(self) {
        let unknown: Vec<_> = self.given.keys().filter(|k| !self.read.contains(*k)).collect();
        if !unknown.is_empty() {
            fail(&format!(
                "unknown argument(s): {}",
                unknown.iter().map(|k| format!("--{k}")).collect::<Vec<_>>().join(" ")
            ));
        }
    }
}

/// A file's contents, trimmed ("" if unreadable).
pub fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_default()
}

/// The first line a command prints (standard output, then error; "" if it
/// cannot run), e.g. a compiler's version.
pub fn first_output_line(cmd: &mut std::process::Command) -> String {
    cmd.output()
        .ok()
        .map(|o| {
            let text =
                format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            text.lines().next().unwrap_or("").trim().to_string()
        })
        .unwrap_or_default()
}

/// The machine a run happens on, for the drivers' JSON: CPU model and
/// count, kernel, OS, gcc version, load average at the start.
pub fn host_info() -> serde_json::Map<String, serde_json::Value> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let os = std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME=").map(|v| v.trim_matches('"').to_string()))
        .unwrap_or_default();
    let mut m = serde_json::Map::new();
    m.insert("cpu".into(), cpu.into());
    m.insert("cpus".into(), std::thread::available_parallelism().map_or(0, |n| n.get()).into());
    m.insert("kernel".into(), read_trimmed("/proc/sys/kernel/osrelease").into());
    m.insert("os".into(), os.into());
    m.insert("gcc".into(), first_output_line(std::process::Command::new("gcc").arg("--version")).into());
    m.insert("loadavg_start".into(), read_trimmed("/proc/loadavg").into());
    m
}

/// LLVM's libomp, at the usual Debian/Ubuntu and other places.
pub fn find_libomp() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let mut candidates: Vec<PathBuf> = [
        "/usr/lib/x86_64-linux-gnu/libomp.so.5",
        "/usr/lib/aarch64-linux-gnu/libomp.so.5",
        "/usr/lib64/libomp.so",
        "/usr/local/lib/libomp.so",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    if let Ok(dir) = std::fs::read_dir("/usr/lib") {
        let mut llvm: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("llvm-")))
            .map(|p| p.join("lib/libomp.so.5"))
            .collect();
        llvm.sort();
        candidates.extend(llvm.into_iter().rev());
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// The OpenMP environment of a benchmark child (`threads` threads, bound to cores; harmless for
/// programs that are not OpenMP), with `lib_dir` put first on `LD_LIBRARY_PATH` when given (to
/// load another `libgomp.so.1`).
pub fn omp_env(threads: usize, lib_dir: Option<&std::path::Path>) -> Vec<(String, String)> {
    let mut env = vec![
        ("OMP_NUM_THREADS".to_string(), threads.to_string()),
        ("OMP_PROC_BIND".to_string(), "true".to_string()),
        ("OMP_PLACES".to_string(), "cores".to_string()),
    ];
    if let Some(dir) = lib_dir {
        let mut path = dir.display().to_string();
        if let Ok(old) = std::env::var("LD_LIBRARY_PATH") {
            if !old.is_empty() {
                path = format!("{path}:{old}");
            }
        }
        env.push(("LD_LIBRARY_PATH".to_string(), path));
    }
    env
}

/// A directory (`<c_dir>/libomp-as-libgomp`, absolute) in which
/// `libgomp.so.1` is a symlink to `lib` (LLVM's libomp implements libgomp's
/// ABI), for `LD_LIBRARY_PATH`. Exits via [`fail`] if it cannot be made.
pub fn make_shim(c_dir: &std::path::Path, lib: &std::path::Path) -> std::path::PathBuf {
    let dir = c_dir.join("libomp-as-libgomp");
    let link = dir.join("libgomp.so.1");
    let lib = lib.canonicalize().unwrap_or_else(|e| fail(&format!("libomp {}: {e}", lib.display())));
    let result = std::fs::create_dir_all(&dir).and_then(|_| {
        if std::fs::read_link(&link).ok().as_deref() == Some(lib.as_path()) {
            return Ok(());
        }
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&lib, &link)
    });
    if let Err(e) = result {
        fail(&format!("cannot link {} to {}: {e}", link.display(), lib.display()));
    }
    dir.canonicalize().unwrap_or(dir)
}

/// Prints `msg` on standard error and exits with status 2.
pub fn fail(msg: &str) -> ! {
    let prog = std::env::args().next().unwrap_or_default();
    eprintln!("{prog}: {msg}");
    std::process::exit(2)
}

/// Prints `msg` on standard error and exits with status 1: a wrong result.
pub fn wrong(bench: &str, msg: &str) -> ! {
    eprintln!("{bench}: FAILED: {msg}");
    std::process::exit(1)
}

// ---------------------------------------------------------------------------
// Binding and pools
// ---------------------------------------------------------------------------

/// The CPU the calling thread runs on.
pub fn current_cpu() -> i32 {
    // SAFETY: no preconditions.
    unsafe { libc::sched_getcpu() }
}

/// Binds the calling thread to `cpu`.
pub fn bind_current_thread(cpu: usize) -> std::io::Result<()> {
    // SAFETY: `set` is a plain bit set, initialised by CPU_ZERO.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// True when every value differs from the others (participants on distinct CPUs).
pub fn all_distinct(cpus: &[i32]) -> bool {
    cpus.iter().enumerate().all(|(i, c)| !cpus[..i].contains(c))
}

/// A herd pool of `threads` participants with herd's defaults (bound,
/// master-last persistent workers), and whether its participants are bound
/// to distinct CPUs.
pub fn herd_pool(threads: usize) -> (herd::Pool, bool) {
    let pool = herd::Pool::builder()
        .num_threads(threads)
        .build()
        .unwrap_or_else(|e| fail(&format!("cannot build the herd pool: {e}")));
    if pool.num_threads() != threads {
        fail(&format!("herd pool has {} participants, not {threads}", pool.num_threads()));
    }
    let cpus = pool.broadcast(|_| current_cpu());
    let bound = pool.info().bound && all_distinct(&cpus);
    (pool, bound)
}

/// A Rayon pool of `threads` workers, worker `i` bound to CPU `i` (modulo the
/// CPUs available), and whether they really run on distinct CPUs.
pub fn rayon_pool(threads: usize) -> (rayon::ThreadPool, bool) {
    let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .start_handler(move |i| {
            if let Err(e) = bind_current_thread(i % ncpu) {
                eprintln!("rayon worker {i}: cannot bind: {e}");
            }
        })
        .build()
        .unwrap_or_else(|e| fail(&format!("cannot build the Rayon pool: {e}")));
    let cpus = pool.broadcast(|_| current_cpu());
    let bound = threads <= ncpu && all_distinct(&cpus);
    (pool, bound)
}

/// Parses a loop schedule as the benchmarks name it: `static` (one block per
/// participant), `static,C`, `dynamic,C`, `guided,C` (C = minimum chunk), or
/// `adaptive`.
pub fn parse_schedule(s: &str) -> Result<herd::Schedule, String> {
    let (name, chunk) = match s.split_once(',') {
        Some((n, c)) => {
            let c: usize = c.trim().parse().map_err(|_| format!("bad chunk in schedule {s:?}"))?;
            if c == 0 {
                return Err(format!("chunk must be positive in {s:?}"));
            }
            (n.trim(), Some(c))
        }
        None => (s.trim(), None),
    };
    use herd::Schedule::*;
    match (name, chunk) {
        ("static", None) => Ok(Static { chunk: 0 }),
        ("static", Some(chunk)) => Ok(Static { chunk }),
        ("dynamic", Some(chunk)) => Ok(Dynamic { chunk }),
        ("guided", Some(min_chunk)) => Ok(Guided { min_chunk }),
        ("adaptive", None) => Ok(Adaptive),
        _ => Err(format!("unknown schedule {s:?} (static, static,C, dynamic,C, guided,C, adaptive)")),
    }
}

/// fib(n) computed iteratively, to check the recursive versions.
pub fn fib_iter(n: u64) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// Calls made by the plain doubly recursive fib(n): 2·fib(n+1) − 1.
pub fn fib_calls(n: u64) -> u64 {
    2 * fib_iter(n + 1) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(Summary::of(&[5.0, 1.0, 3.0]), Summary { median: 3.0, min: 1.0, max: 5.0 });
    }

    #[test]
    fn fmt_three_digits() {
        assert_eq!(fmt(1.2345), "1.23");
        assert_eq!(fmt(0.3612), "0.361");
        assert_eq!(fmt(0.04621), "0.0462");
        assert_eq!(fmt(123.4), "123");
        assert_eq!(fmt(-0.0021), "-0.00210");
        assert_eq!(fmt(0.0000123), "0.0000123");
        assert_eq!(fmt(0.0), "0.000");
        assert_eq!(fmt_opt(ratio(Some(1.0), None)), "–");
    }

    #[test]
    fn record_roundtrip_and_c_format() {
        let r = Record::new("loops", "herd", "dynamic,1024", 2, 12.5, "us").bound(true).with("min", 11.0);
        let line = serde_json::to_string(&r).unwrap();
        assert_eq!(parse_records(&line).unwrap(), vec![r]);
        // What bench/c/bench.h prints.
        let c = r#"{"bench":"region","impl":"libomp","case":"empty","threads":2,"value":1.5,"unit":"us","ok":true,"bound":true,"min":1.1,"samples":7,"regions":20000}"#;
        let got = &parse_records(c).unwrap()[0];
        assert_eq!((got.imp.as_str(), got.value, got.bound), ("libomp", 1.5, true));
        assert_eq!(got.extra["regions"], 20000);
        assert!(parse_records("hello").is_err());
    }

    #[test]
    fn args() {
        let v = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let mut a = Args::parse(v("--n 30 --quick --impl=herd")).unwrap();
        assert_eq!(a.get("n", 0u64), 30);
        assert!(a.flag("quick"));
        assert_eq!(a.get("impl", String::new()), "herd");
        assert_eq!(a.get("threads", 2usize), 2);
        assert_eq!(a.opt::<u32>("absent"), None);
        a.finish();
        assert_eq!(Args::parse(v("--threads 4,1,2")).unwrap().threads(2), [1, 2, 4]);
        assert_eq!(Args::default().threads(2), [2]);
        assert!(Args::parse(v("positional")).is_err());
    }

    #[test]
    fn schedules() {
        use herd::Schedule::*;
        assert_eq!(parse_schedule("static"), Ok(Static { chunk: 0 }));
        assert_eq!(parse_schedule("static,1024"), Ok(Static { chunk: 1024 }));
        assert_eq!(parse_schedule("dynamic,64"), Ok(Dynamic { chunk: 64 }));
        assert_eq!(parse_schedule("guided,1024"), Ok(Guided { min_chunk: 1024 }));
        assert_eq!(parse_schedule("adaptive"), Ok(Adaptive));
        assert!(parse_schedule("dynamic").is_err());
        assert!(parse_schedule("static,0").is_err());
    }

    #[test]
    fn fib_helpers() {
        assert_eq!(fib_iter(30), 832_040);
        assert_eq!(fib_calls(30), 2_692_537);
        assert_eq!(fib_calls(1), 1);
    }

    #[test]
    fn epcc_reports_one_value_per_sample() {
        let v = epcc_overhead_us(100, 3, || {
            black_box(0);
        });
        assert_eq!(v.len(), 3);
    }

    #[test]
    fn distinct() {
        assert!(all_distinct(&[0, 1]));
        assert!(!all_distinct(&[1, 1]));
    }
}
