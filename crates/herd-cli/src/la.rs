//! `herd la potrf`: tiled Cholesky on herd-flow, against faer's parallel
//! Cholesky in the same run.

use crate::error::{usize_in, CliError};
use crate::table::Table;
use crate::timing::median;
use crate::CliResult;
use faer::{Mat, Par};
use herd::limits::check_memory;
use herd_la::{potrf_flops, potrf_flow, random_spd, residual, Backend, TiledMatrix};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Tile sizes tried by `--tune`.
const TUNE_NB: [usize; 6] = [128, 160, 192, 256, 320, 384];
/// The smallest matrix order: below it a factorization takes microseconds
/// and the timings (and the speed ratios) measure nothing but overhead.
const MIN_N: u64 = 32;
/// The largest matrix order: LAPACK's (OpenBLAS's) `n` is a 32-bit integer.
const MAX_N: u64 = i32::MAX as u64;
/// n×n matrices alive at once at the peak of a run: the input, a tiled (or
/// OpenBLAS column-major) working copy, the factor read back, and the
/// residual's lower triangle and `A − LLᵀ`.
const MATRICES_AT_PEAK: u128 = 5;

/// `herd la potrf` options.
#[derive(clap::Args, Debug)]
pub struct PotrfArgs {
    /// Matrix order (at least 32; the run needs about 5·n²·8 bytes, checked
    /// against MemAvailable).
    #[arg(short = 'n', long, default_value_t = 2000, value_parser = usize_in(MIN_N..=MAX_N))]
    n: usize,
    /// Tile size (at least 1).
    #[arg(long, default_value_t = 256, value_parser = usize_in(1..=MAX_N))]
    nb: usize,
    /// Try several tile sizes first (one run each) and use the fastest.
    #[arg(long)]
    tune: bool,
    /// Timed runs per contender (rounds of one run each, the first contender rotating; the median is reported).
    #[arg(long, default_value_t = 3, value_parser = usize_in(1..=1_000_000))]
    reps: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Write herd-flow's timeline of the last herd run (for `herd trace show/analyze`).
    #[arg(long)]
    timeline: Option<PathBuf>,
    /// herd-flow scheduling discipline of the graph.
    #[arg(long, value_enum, default_value_t = DisciplineArg::Counted)]
    discipline: DisciplineArg,
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
    discipline: herd_flow::Discipline,
    timeline: bool,
) -> CliResult<HerdRun> {
    let t = Arc::new(TiledMatrix::from_faer(a.as_ref(), nb).map_err(|e| CliError::Usage(e.to_string()))?);
    let start = Instant::now();
    let report = pool
        .install(|| potrf_flow(&t, Backend::Faer, discipline, timeline))
        .map_err(|e| CliError::Verify(format!("herd-flow Cholesky: {e}")))?;
    let secs = start.elapsed().as_secs_f64();
    let residual = residual(a.as_ref(), t.to_faer().as_ref()).map_err(|e| CliError::Verify(e.to_string()))?;
    Ok(HerdRun {
        secs,
        residual,
        requeued: report.stats.requeued,
        requeue_secs: report.stats.requeue_time.as_secs_f64(),
        timeline: report.timeline,
    })
}

/// faer's own Cholesky of the whole matrix with `threads` threads.
fn faer_run(a: &Mat<f64>, threads: usize) -> CliResult<(f64, f64)> {
    let mut l = a.clone();
    let par = if threads > 1 { Par::rayon(threads) } else { Par::Seq };
    let start = Instant::now();
    herd_la::kernels::faer_potrf_par(l.as_mut(), par)
        .map_err(|j| CliError::Verify(format!("faer Cholesky failed at column {j}")))?;
    let secs = start.elapsed().as_secs_f64();
    let r = residual(a.as_ref(), l.as_ref()).map_err(|e| CliError::Verify(e.to_string()))?;
    Ok((secs, r))
}

/// OpenBLAS's threaded LAPACK, loaded at run time (Debian's
/// `libopenblas0-pthread`), so that herd does not link it.
struct OpenBlas {
    dpotrf: unsafe extern "C" fn(*const u8, *const i32, *mut f64, *const i32, *mut i32),
    set_threads: unsafe extern "C" fn(i32),
    path: String,
}

impl OpenBlas {
    /// Loads it, or says why not. Sets `OPENBLAS_CORETYPE=SkylakeX` first
    /// unless the user chose a core type (Debian's 0.3.21 takes this CPU for a
    /// Haswell and would skip its AVX-512 kernels).
    fn load() -> Result<OpenBlas, String> {
        if std::env::var_os("OPENBLAS_CORETYPE").is_none() {
            std::env::set_var("OPENBLAS_CORETYPE", "SkylakeX");
        }
        let mut last = String::new();
        for path in ["/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "libopenblas.so.0"] {
            let c = std::ffi::CString::new(path).expect("no NUL in a constant");
            // SAFETY: dlopen with a valid C string; the handle is never closed,
            // so symbols taken from it stay valid for the process.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if h.is_null() {
                last = format!("cannot load {path}");
                continue;
            }
            // SAFETY: `h` is a live handle; the names are NUL-terminated.
            let (p, t) = unsafe {
                (libc::dlsym(h, c"dpotrf_".as_ptr()), libc::dlsym(h, c"openblas_set_num_threads".as_ptr()))
            };
            if p.is_null() || t.is_null() {
                last = format!("{path} has no dpotrf_/openblas_set_num_threads");
                continue;
            }
            // SAFETY: the symbols are LAPACK's dpotrf_ and OpenBLAS's
            // openblas_set_num_threads, whose C signatures these are.
            let (dpotrf, set_threads) = unsafe {
                (
                    std::mem::transmute::<
                        *mut libc::c_void,
                        unsafe extern "C" fn(*const u8, *const i32, *mut f64, *const i32, *mut i32),
                    >(p),
                    std::mem::transmute::<*mut libc::c_void, unsafe extern "C" fn(i32)>(t),
                )
            };
            return Ok(OpenBlas { dpotrf, set_threads, path: path.to_string() });
        }
        Err(format!("{last} (install libopenblas0-pthread)"))
    }

    /// `dpotrf('L')` of a copy of `a` on `threads` threads: seconds, residual.
    fn run(&self, a: &Mat<f64>, threads: usize) -> CliResult<(f64, f64)> {
        let n = a.nrows();
        let mut buf: Vec<f64> =
            (0..n).flat_map(|j| (0..n).map(move |i| (i, j))).map(|(i, j)| a[(i, j)]).collect();
        let (ni, mut info) = (n as i32, 0i32);
        // SAFETY: `buf` is n×n column-major with leading dimension n, as
        // dpotrf reads and writes it; the thread count is positive.
        let secs = unsafe {
            (self.set_threads)(threads as i32);
            let start = Instant::now();
            (self.dpotrf)(b"L".as_ptr(), &ni, buf.as_mut_ptr(), &ni.max(1), &mut info);
            start.elapsed().as_secs_f64()
        };
        if info != 0 {
            return Err(CliError::Verify(format!("OpenBLAS dpotrf: info = {info}")));
        }
        let l = Mat::from_fn(n, n, |i, j| if i >= j { buf[i + j * n] } else { 0.0 });
        let r = residual(a.as_ref(), l.as_ref()).map_err(|e| CliError::Verify(e.to_string()))?;
        Ok((secs, r))
    }
}

/// Runs `herd la potrf`.
pub fn potrf(args: &PotrfArgs) -> CliResult {
    if args.nb == 0 || args.reps == 0 || args.n < MIN_N as usize {
        return Err(CliError::Usage(format!("-n must be at least {MIN_N}, --nb and --reps at least 1")));
    }
    let n = args.n as u128;
    check_memory(
        &format!(
            "herd la potrf -n {} ({MATRICES_AT_PEAK} {}×{} f64 matrices at once: input, working copy, \
             factor, residual)",
            args.n, args.n, args.n
        ),
        MATRICES_AT_PEAK * n * n * 8,
    )?;
    let pool = herd::PoolBuilder::from_env()?.build()?;
    let threads = pool.num_threads();
    let a = random_spd(args.n, 42);
    let flops = potrf_flops(args.n);
    let gflops = |s: f64| flops / s / 1e9;
    let mut nb = args.nb;
    let mut tuning = Vec::new();
    if args.tune {
        for cand in TUNE_NB.into_iter().filter(|&c| c <= args.n.max(1)) {
            let s = herd_run(&pool, &a, cand, args.discipline.flow(), false)?.secs;
            eprintln!("herd la potrf: tune nb={cand}: {:.1} GFLOP/s", gflops(s));
            tuning.push((cand, s));
        }
        if let Some(&(best, _)) = tuning.iter().min_by(|x, y| x.1.total_cmp(&y.1)) {
            nb = best;
        }
    }
    let openblas = OpenBlas::load();
    if let Err(why) = &openblas {
        eprintln!("herd la potrf: OpenBLAS skipped: {why}");
    }
    let (mut herd_s, mut faer_s, mut ob_s) = (Vec::new(), Vec::new(), Vec::new());
    let (mut herd_r, mut faer_r, mut ob_r) = (0.0f64, 0.0f64, 0.0f64);
    let mut timeline = None;
    let (mut requeued, mut requeue_s) = (Vec::new(), Vec::new());
    // Each round runs every contender once, starting with a different one each round, so
    // that no contender always follows the same one (OpenBLAS's threads keep spinning for a
    // while after a call, and caches are warm from the previous run).
    for rep in 0..args.reps {
        let last = rep + 1 == args.reps;
        for turn in 0..3 {
            match (rep + turn) % 3 {
                0 => {
                    let run =
                        herd_run(&pool, &a, nb, args.discipline.flow(), last && args.timeline.is_some())?;
                    herd_s.push(run.secs);
                    herd_r = herd_r.max(run.residual);
                    requeued.push(run.requeued);
                    requeue_s.push(run.requeue_secs);
                    timeline = run.timeline.or(timeline);
                }
                1 => {
                    let (s, r) = faer_run(&a, threads)?;
                    faer_s.push(s);
                    faer_r = faer_r.max(r);
                }
                _ => {
                    if let Ok(ob) = &openblas {
                        let (s, r) = ob.run(&a, threads)?;
                        ob_s.push(s);
                        ob_r = ob_r.max(r);
                    }
                }
            }
        }
    }
    for (name, r) in [("herd", herd_r), ("faer", faer_r), ("OpenBLAS", ob_r)] {
        if r.is_nan() || r >= 100.0 {
            return Err(CliError::Verify(format!("{name}: residual {r} (>= 100)")));
        }
    }
    if let (Some(path), Some(tl)) = (&args.timeline, &timeline) {
        crate::error::write_file(path, serde_json::to_vec(tl)?)?;
        eprintln!("herd la potrf: wrote timeline {}", path.display());
    }
    let (hs, fs) = (median(&herd_s), median(&faer_s));
    let os = (!ob_s.is_empty()).then(|| median(&ob_s));
    if args.json {
        let v = serde_json::json!({
            "n": args.n, "nb": nb, "threads": threads, "reps": args.reps, "flops": flops,
            "tuning": tuning.iter().map(|&(nb, s)| serde_json::json!({"nb": nb, "seconds": s, "gflops": gflops(s)})).collect::<Vec<_>>(),
            "discipline": format!("{:?}", args.discipline.flow()),
            "herd": {"seconds": herd_s, "median": hs, "gflops": gflops(hs), "residual": herd_r,
                     "requeued": requeued, "requeue_seconds": requeue_s},
            "faer": {"seconds": faer_s, "median": fs, "gflops": gflops(fs), "residual": faer_r},
            "herd_over_faer": fs / hs,
            "openblas": os.map(|m| serde_json::json!({
                "library": openblas.as_ref().map(|o| o.path.clone()).ok(),
                "coretype": std::env::var("OPENBLAS_CORETYPE").ok(),
                "seconds": ob_s, "median": m, "gflops": gflops(m), "residual": ob_r})),
            "herd_over_openblas": os.map(|m| m / hs),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("Cholesky n = {}, {threads} thread(s), median of {} run(s), n³/3 flops", args.n, args.reps);
        let mut t = Table::new(&["implementation", "tile", "seconds", "GFLOP/s", "residual"]);
        t.row(vec![
            "herd-flow tiled (faer kernels)".into(),
            nb.to_string(),
            format!("{hs:.4}"),
            format!("{:.1}", gflops(hs)),
            format!("{herd_r:.3}"),
        ]);
        t.row(vec![
            format!("faer llt, Par::rayon({threads})"),
            "-".into(),
            format!("{fs:.4}"),
            format!("{:.1}", gflops(fs)),
            format!("{faer_r:.3}"),
        ]);
        if let Some(m) = os {
            t.row(vec![
                format!("OpenBLAS dpotrf, {threads} threads"),
                "-".into(),
                format!("{m:.4}"),
                format!("{:.1}", gflops(m)),
                format!("{ob_r:.3}"),
            ]);
        }
        print!("{}", t.render());
        println!("herd ÷ faer speed: {:.2}×", fs / hs);
        println!(
            "herd-flow discipline {:?}: {} step(s) requeued, {:.1} ms lost to requeues (median per run)",
            args.discipline.flow(),
            requeued[requeued.len() / 2],
            median(&requeue_s) * 1e3
        );
        if let Some(m) = os {
            println!("herd ÷ OpenBLAS speed: {:.2}×", m / hs);
        }
    }
    Ok(())
}
