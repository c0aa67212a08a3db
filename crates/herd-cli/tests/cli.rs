//! End-to-end tests of the `herd` binary.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::{herd, ok, run, stderr, stdout, tmp};

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json written")).expect("valid JSON")
}

#[test]
fn version_and_help() {
    let o = ok(&mut herd(&["--version"]));
    assert!(stdout(&o).starts_with("herd "), "{}", stdout(&o));
    let o = ok(&mut herd(&["--help"]));
    for cmd in ["topo", "pmo", "bench"] {
        assert!(stdout(&o).contains(cmd), "{}", stdout(&o));
    }
    let o = ok(&mut herd(&["pmo", "--help"]));
    assert!(stdout(&o).contains("--quick") && stdout(&o).contains("--plot"));
}

#[test]
fn topo_json_has_pus_workers_master() {
    let o = ok(&mut herd(&["topo", "--json"]));
    let v: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    let pus = v["pus"].as_array().expect("pus");
    let workers = v["workers"].as_array().expect("workers");
    assert!(!pus.is_empty() && !workers.is_empty());
    assert!(workers.iter().all(|w| w["pu"].is_u64()));
    assert!(v["master_pu"].is_u64());
}

#[test]
fn topo_text_shows_tree_and_map() {
    let o = ok(&mut herd(&["topo"]));
    let s = stdout(&o);
    assert!(s.contains("Machine") && s.contains("PU L#0") && s.contains("master on PU"), "{s}");
    let kernel = s.lines().find_map(|l| l.strip_prefix("herd: dense kernels (herd-la GEMM): ")).expect(&s);
    assert!(["avx512 16x14", "avx2 8x6", "faer"].contains(&kernel), "{s}");
}

const SYNTHETIC: &str = "pack:4 l3:1 core:8 pu:1";

#[test]
fn topo_synthetic_32_pus() {
    let o = ok(herd(&["topo", "--json"]).env("HERD_TOPOLOGY", SYNTHETIC));
    let v: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["pus"].as_array().unwrap().len(), 32);
    assert_eq!(v["workers"].as_array().unwrap().len(), 32);
    assert_eq!(v["master_pu"], 0);
    let o = ok(herd(&["topo"]).env("HERD_TOPOLOGY", SYNTHETIC));
    let s = stdout(&o);
    assert!(s.contains("32 usable PU(s)") && s.contains("master on PU 0"), "{s}");
    assert!(s.contains("Package L#3"), "{s}");
    assert!(s.contains("not bound"), "{s}");
    assert!(s.contains("scheduler mts, 4 shepherd(s) at level l3"), "{s}");
    assert!(s.contains("shepherd   3: participants [24, 25, 26, 27, 28, 29, 30, 31]"), "{s}");
}

#[test]
fn topo_shows_shepherds_and_scheduler() {
    let o = ok(herd(&["topo", "--json"])
        .env("HERD_TOPOLOGY", SYNTHETIC)
        .env("HERD_SCHED", "fifo")
        .env("HERD_SHEPHERD", "package")
        .env("HERD_WORKERS_PER_SHEPHERD", "4"));
    let v: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["scheduler"], "fifo");
    assert_eq!(v["shepherd_level"], "package");
    let sh = v["shepherds"].as_array().unwrap();
    assert_eq!(sh.len(), 8);
    assert_eq!(sh[1]["workers"], serde_json::json!([4, 5, 6, 7]));
    assert_eq!(sh[1]["pus"], serde_json::json!([4, 5, 6, 7]));
}

#[test]
fn verbose_display_prints_counters_at_exit() {
    let o = ok(herd(&["topo"]).env("HERD_DISPLAY_ENV", "verbose"));
    let e = stderr(&o);
    assert!(e.contains("per-worker counters") && e.contains("remote st."), "{e}");
}

#[test]
fn invalid_scheduler_settings_are_errors() {
    for (var, value) in [
        ("HERD_SCHED", "stack"),
        ("HERD_SHEPHERD", "socket"),
        ("HERD_WORKERS_PER_SHEPHERD", "0"),
        ("HERD_STEAL_CHUNK", "x"),
        ("HERD_THROTTLE", "on"),
        ("HERD_STACK_SIZE", "1K"),
    ] {
        assert_config_error(var, value);
    }
}

fn assert_config_error(var: &str, value: &str) {
    let o = run(herd(&["topo"]).env(var, value));
    assert_eq!(o.status.code(), Some(2), "{var}={value}: {}", stderr(&o));
    let e = stderr(&o);
    assert!(e.starts_with("herd: "), "{e}");
    assert!(e.contains(var) && e.contains(&format!("{value:?}")), "{e}");
    assert!(!e.contains("panicked") && !e.contains("backtrace"), "{e}");
}

#[test]
fn invalid_num_threads_is_an_error() {
    assert_config_error("HERD_NUM_THREADS", "0");
}

#[test]
fn invalid_dispatch_is_an_error() {
    assert_config_error("HERD_DISPATCH", "bogus");
}

fn check_pmo_json(path: &Path) {
    let v = json_file(path);
    assert!(v["machine"]["pus"].is_array() && v["machine"]["master_pu"].is_u64());
    assert_eq!(v["k"], 56);
    assert_eq!(v["trials"], 3);
    let points = v["points"].as_array().expect("points");
    assert_eq!(points.len(), 12);
    for s in ["lj", "lja", "ljaml", "pw", "pwa", "pwaml"] {
        for n in [64, 128] {
            let p = points.iter().find(|p| p["strategy"] == s && p["n"] == n).expect("every point");
            assert!(p["fpt_us"].as_f64().unwrap() > 0.0);
            assert!(p["pmo_us"].as_f64().unwrap() >= 0.0);
            assert!(p["max_abs_diff"].as_f64().unwrap() < 1e-9);
            assert_eq!(p["pct_us"].as_array().unwrap().len() as u64, v["threads"].as_u64().unwrap());
        }
    }
}

#[test]
fn pmo_quick_writes_json_and_svg() {
    let (json, svg) = (tmp("pmo.json"), tmp("pmo.svg"));
    let o = ok(herd(&["pmo", "--quick", "--sizes", "64,128", "--trials", "3", "--json"])
        .arg(&json)
        .arg("--plot")
        .arg(&svg));
    let table = stdout(&o);
    assert!(table.contains("PWAML") && table.contains("PMO µs"), "{table}");
    check_pmo_json(&json);
    let chart = std::fs::read_to_string(&svg).expect("svg written");
    assert!(chart.contains("<svg") && chart.contains("PWAML"), "not an SVG chart");
}

#[test]
fn pmo_quick_writes_png() {
    let (json, png) = (tmp("pmo-png.json"), tmp("pmo.png"));
    let mut cmd = herd(&["pmo", "--quick", "--sizes", "64,128", "--trials", "3", "--threads", "2", "--json"]);
    cmd.arg(&json).arg("--plot").arg(&png);
    // The font is built in when the build machine had it (`make deps`
    // installs it), else read at run time.
    if Path::new("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf").exists() {
        ok(&mut cmd);
        check_pmo_json(&json);
        let bytes = std::fs::read(&png).expect("png written");
        assert!(bytes.len() > 1000 && bytes.starts_with(b"\x89PNG"), "not a PNG");
    } else {
        // Without it here, a build that had it still draws.
        let o = run(&mut cmd);
        let drawn = std::fs::read(&png).is_ok_and(|b| b.starts_with(b"\x89PNG"));
        assert!(
            (o.status.success() && drawn) || (!o.status.success() && stderr(&o).contains("DejaVuSans.ttf")),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn pmo_rejects_unknown_chart_format() {
    let o = run(&mut herd(&["pmo", "--quick", "--sizes", "64", "--plot", "chart.pdf"]));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(".svg or .png"), "{}", stderr(&o));
}

#[test]
fn bench_overhead_runs() {
    let json = tmp("overhead.json");
    let o = ok(herd(&["bench", "overhead", "--iters", "200", "--reps", "3", "--json"]).arg(&json));
    let table = stdout(&o);
    for row in ["broadcast PWAML", "broadcast LJ", "join", "scope", "for_each", "adaptive", "guided"] {
        assert!(table.contains(row), "{row} missing:\n{table}");
    }
    let v = json_file(&json);
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 6 + 1 + 2 + 5);
    assert!(results.iter().all(|r| r["ns_per_op"].as_f64().unwrap() > 0.0));
    // Pools built after the master has been pinned still see the whole machine.
    let threads = &v["machine"]["num_threads"];
    assert!(results.iter().all(|r| &r["threads"] == threads), "{results:?}");
}

// ---- herd run ----

/// `herd run ARGS` with `HERD_OMP_LIB=lib` and no inherited `LD_PRELOAD` /
/// `LD_LIBRARY_PATH`.
fn herd_run(lib: &Path, args: &[&str]) -> Command {
    let mut cmd = herd(&["run"]);
    cmd.args(args).env("HERD_OMP_LIB", lib).env_remove("LD_PRELOAD").env_remove("LD_LIBRARY_PATH");
    cmd
}

/// A real shared library to preload (preloading a file that is not one makes
/// ld.so print a warning); `None` where none of the usual ones exists.
fn real_shared_library() -> Option<PathBuf> {
    let found = [
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/aarch64-linux-gnu/libm.so.6",
        "/usr/lib64/libm.so.6",
        "/lib64/libm.so.6",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("no libm.so.6 found: skipping");
    }
    found
}

fn assert_usage_error(o: &Output, needles: &[&str]) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    let e = stderr(o);
    assert!(e.starts_with("herd: "), "{e}");
    for n in needles {
        assert!(e.contains(n), "{n:?} missing: {e}");
    }
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn run_help_lists_options() {
    let o = ok(&mut herd(&["--help"]));
    assert!(stdout(&o).contains("run"), "{}", stdout(&o));
    let o = ok(&mut herd(&["run", "--help"]));
    for opt in
        ["--threads", "--places", "--bind", "--wait", "--dispatch", "--display-env", "--trace", "--replace"]
    {
        assert!(stdout(&o).contains(opt), "{opt} missing: {}", stdout(&o));
    }
    assert!(stdout(&o).contains("herd run [OPTIONS] [--] CMD [ARGS]..."), "{}", stdout(&o));
}

#[test]
fn run_missing_library_is_a_clear_error() {
    let lib = tmp("no-such-libherd_omp.so");
    let o = run(&mut herd_run(&lib, &["true"]));
    assert_usage_error(&o, &["HERD_OMP_LIB", &lib.display().to_string(), "make omp"]);
}

#[test]
fn run_replace_without_gomp_dir_is_a_clear_error() {
    let dir = tmp("no-gomp-dir");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let o = run(&mut herd_run(&dir.join("libherd_omp.so"), &["--replace", "true"]));
    let expected = dir.join("gomp").join("libgomp.so.1");
    assert_usage_error(&o, &["--replace", &expected.display().to_string(), "make omp"]);
}

#[test]
fn run_bad_option_values_are_errors() {
    let Some(lib) = real_shared_library() else { return };
    for (opt, value, var) in [
        ("--threads", "0", "HERD_NUM_THREADS"),
        ("--bind", "sideways", "HERD_BIND"),
        ("--wait", "spin:x", "HERD_WAIT"),
        ("--dispatch", "fast", "HERD_DISPATCH"),
        ("--places", "cores(0)", "HERD_PLACES"),
        ("--reserve", "-1", "HERD_RESERVE"),
        ("--trace", "/no/such/dir/t.json", "HERD_TRACE"),
    ] {
        let arg = format!("{opt}={value}");
        let o = run(&mut herd_run(&lib, &[&arg, "true"]));
        assert_usage_error(&o, &[opt, var, &format!("{value:?}")]);
    }
    let o = run(&mut herd_run(&lib, &["--display-env=loud", "true"]));
    assert_usage_error(&o, &["--display-env", "HERD_DISPLAY_ENV", "\"loud\"", "verbose"]);
    let o = run(&mut herd_run(&lib, &["--topology", "pack:2 core:x", "true"]));
    assert_usage_error(&o, &["--topology", "pack:2 core:x"]);
}

#[test]
fn run_checks_inherited_settings() {
    let Some(lib) = real_shared_library() else { return };
    let o = run(herd_run(&lib, &["true"]).env("HERD_DISPATCH", "bogus"));
    assert_usage_error(&o, &["HERD_DISPATCH", "\"bogus\""]);
    // An option overrides (and so hides) a bad inherited value.
    ok(herd_run(&lib, &["--dispatch", "lj", "true"]).env("HERD_DISPATCH", "bogus"));
}

#[test]
fn run_preloads_and_sets_variables() {
    let Some(lib) = real_shared_library() else { return };
    let script = r#"echo "$LD_PRELOAD|$LD_LIBRARY_PATH|$HERD_NUM_THREADS|$HERD_BIND|$HERD_WAIT|$HERD_DISPLAY_ENV|$HERD_OMP_LIB|$1""#;
    let o = ok(&mut herd_run(
        &lib,
        &[
            "--threads",
            "3",
            "--bind",
            "spread",
            "--wait",
            "passive",
            "--display-env",
            "sh",
            "-c",
            script,
            "sh",
            "-x",
        ],
    ));
    let lib = lib.display();
    assert_eq!(stdout(&o), format!("{lib}||3|spread|passive|true||-x\n"));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn run_prepends_to_existing_preload() {
    let Some(lib) = real_shared_library() else { return };
    let o = ok(herd_run(
        &lib,
        &["--display-env=verbose", "--", "sh", "-c", "echo $LD_PRELOAD $HERD_DISPLAY_ENV"],
    )
    .env("LD_PRELOAD", &lib));
    assert_eq!(stdout(&o), format!("{0}:{0} verbose\n", lib.display()));
}

#[test]
fn run_replace_sets_library_path() {
    let dir = tmp("gomp-replace");
    std::fs::create_dir_all(dir.join("gomp")).expect("temp dir");
    std::fs::write(dir.join("gomp").join("libgomp.so.1"), b"").expect("stand-in library");
    let o = ok(herd_run(
        &dir.join("libherd_omp.so"),
        &["--replace", "sh", "-c", "echo \"$LD_PRELOAD|$LD_LIBRARY_PATH\""],
    )
    .env("LD_LIBRARY_PATH", "/opt/x"));
    assert_eq!(stdout(&o), format!("|{}:/opt/x\n", dir.join("gomp").display()));
}

#[test]
fn run_passes_exit_status_through() {
    let Some(lib) = real_shared_library() else { return };
    let o = run(&mut herd_run(&lib, &["sh", "-c", "exit 3"]));
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let o = run(&mut herd_run(&lib, &["sh", "-c", "kill -TERM $$"]));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(o.status.signal(), Some(15), "{:?}", o.status);
}

#[test]
fn run_unknown_command_is_named() {
    let Some(lib) = real_shared_library() else { return };
    let o = run(&mut herd_run(&lib, &["herd-no-such-command", "arg"]));
    assert_eq!(o.status.code(), Some(127), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.starts_with("herd: cannot run \"herd-no-such-command\""), "{e}");
}

#[test]
fn la_potrf_factors_and_compares() {
    let o = ok(&mut herd(&["la", "potrf", "-n", "200", "--nb", "32", "--reps", "1", "--json"]));
    let v: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["n"], 200);
    assert_eq!(v["nb"], 32);
    assert!(v["herd"]["residual"].as_f64().unwrap() < 100.0, "{v}");
    assert!(v["herd"]["gflops"].as_f64().unwrap() > 0.0);
    assert!(v["faer"]["residual"].as_f64().unwrap() < 100.0);
    assert_eq!(v["herd"]["requeued"][0], 0, "dependency counting never requeues");
    assert_eq!(v["kernels"], "Herd", "{v}");
    // faer's four tile kernels on request; tiles of 300 reach herd's packed product.
    let o = ok(&mut herd(&[
        "la",
        "potrf",
        "-n",
        "640",
        "--nb",
        "300",
        "--reps",
        "1",
        "--json",
        "--kernels",
        "faer",
    ]));
    let v: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["kernels"], "Faer", "{v}");
    assert!(v["herd"]["residual"].as_f64().unwrap() < 100.0, "{v}");
    let o = ok(&mut herd(&["la", "potrf", "-n", "640", "--nb", "300", "--reps", "1", "--json"]));
    let v: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert!(v["herd"]["residual"].as_f64().unwrap() < 100.0, "{v}");
    let o = run(&mut herd(&["la", "potrf", "-n", "100", "--kernels", "mkl"]));
    assert!(!o.status.success() && stderr(&o).contains("--kernels"), "{}", stderr(&o));
    for d in ["requeue", "onthefly"] {
        let o = ok(&mut herd(&["la", "potrf", "-n", "100", "--nb", "16", "--reps", "1", "--discipline", d]));
        assert!(stdout(&o).contains("GFLOP/s"), "{d}");
    }
    let path = tmp("chol-timeline.json");
    ok(&mut herd(&[
        "la",
        "potrf",
        "-n",
        "96",
        "--nb",
        "32",
        "--reps",
        "1",
        "--timeline",
        path.to_str().unwrap(),
    ]));
    let o = ok(&mut herd(&["trace", "analyze", path.to_str().unwrap(), "--json"]));
    let a: Value = serde_json::from_slice(&o.stdout).expect("analyze JSON");
    assert!(a.to_string().contains("potrf"), "{a}");
}

#[test]
fn la_potrf_plots_several_orders() {
    let svg = tmp("potrf.svg");
    let o = ok(&mut herd(&[
        "la",
        "potrf",
        "-n",
        "64,96",
        "--nb",
        "32",
        "--reps",
        "1",
        "--json",
        "--plot",
        svg.to_str().unwrap(),
    ]));
    let v: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v.as_array().map(Vec::len), Some(2), "{v}");
    assert_eq!(v[1]["n"], 96);
    assert!(std::fs::read_to_string(&svg).expect("the chart").contains("<svg"));
}

/// The keys `herd la gemm --json` promises, for one order.
fn check_gemm_json(v: &Value, n: u64, k: u64) {
    assert_eq!(v["n"], n, "{v}");
    assert_eq!(v["k"], k, "{v}");
    for key in ["herd", "faer", "openblas"] {
        if key == "openblas" && v[key].is_null() {
            continue; // not installed
        }
        assert!(v[key]["residual"].as_f64().unwrap() < 30.0, "{key}: {v}");
        assert!(v[key]["gflops"].as_f64().unwrap() > 0.0, "{key}: {v}");
        assert!(v[key]["median"].as_f64().unwrap() > 0.0, "{key}: {v}");
    }
    assert!(v["herd_over_faer"].as_f64().unwrap() > 0.0, "{v}");
}

#[test]
fn la_gemm_multiplies_and_compares() {
    let o = ok(&mut herd(&["la", "gemm", "-n", "130", "--reps", "2", "--json"]));
    check_gemm_json(&serde_json::from_slice(&o.stdout).expect("valid JSON"), 130, 130);
    // The rank-K update, with fixed blocks that do not divide n.
    let o =
        ok(&mut herd(&["la", "gemm", "-n", "150", "-k", "16", "--block", "64x40", "--reps", "1", "--json"]));
    let v: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    check_gemm_json(&v, 150, 16);
    assert_eq!(v["beta"], 1.0);
    // Several orders: an array, a table, a chart.
    let svg = tmp("gemm.svg");
    let o = ok(&mut herd(&["la", "gemm", "-n", "64,100", "--reps", "1", "--plot", svg.to_str().unwrap()]));
    assert_eq!(stdout(&o).matches("GFLOP/s").count(), 2, "{}", stdout(&o));
    assert!(stdout(&o).contains("herd ÷ faer speed"), "{}", stdout(&o));
    assert!(std::fs::read_to_string(&svg).expect("the chart").contains("<svg"));
}

#[test]
fn la_gemm_rejects_bad_options() {
    for args in [
        &["la", "gemm", "-n", "100", "--block", "0x5"][..],
        &["la", "gemm", "-n", "100", "--block", "12"],
        &["la", "gemm", "-n", "100", "-k", "0"],
        &["la", "gemm", "-n", "31"],
        &["la", "gemm", "-n", "100", "--plot", "out.pdf"],
    ] {
        let o = run(&mut herd(args));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn la_potrf_rejects_a_zero_tile() {
    let o = run(&mut herd(&["la", "potrf", "-n", "100", "--nb", "0"]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--nb"), "{}", stderr(&o));
}
