//! End-to-end tests of the `herd` binary.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `herd` with every inherited `HERD_*` variable removed.
fn herd(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_herd"));
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("HERD_") {
            cmd.env_remove(k);
        }
    }
    cmd.args(args);
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("herd runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(cmd: &mut Command) -> Output {
    let o = run(cmd);
    assert!(o.status.success(), "{:?} failed: {}\n{}", cmd, stderr(&o), stdout(&o));
    o
}

fn tmp(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("herd-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

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
    if Path::new("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf").exists() {
        ok(&mut cmd);
        check_pmo_json(&json);
        let bytes = std::fs::read(&png).expect("png written");
        assert!(bytes.len() > 1000 && bytes.starts_with(b"\x89PNG"), "not a PNG");
    } else {
        let o = run(&mut cmd);
        assert!(!o.status.success() && stderr(&o).contains("DejaVuSans.ttf"), "{}", stderr(&o));
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
