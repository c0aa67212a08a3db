//! End-to-end tests of `herd trace show` and `herd trace analyze`.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

mod common;

use common::{herd, ok, stderr, stdout, tmp};

/// Runs `herd args`, expecting exit status 2 and a `herd: ` message containing `needle`.
fn fails(args: &[&str], needle: &str) {
    let o = herd(args).output().expect("herd runs");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert!(e.starts_with("herd: ") && e.contains(needle), "{args:?}: {e}");
    assert!(!e.contains("panicked"), "{e}");
}

fn write(name: &str, v: &Value) -> PathBuf {
    let p = tmp(name);
    std::fs::write(&p, v.to_string()).expect("trace written");
    p
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// A step event: (id, collection, tag, worker, start µs, duration µs, deps, requeues).
type StepSpec = (u64, &'static str, &'static str, u64, f64, f64, &'static [u64], u32);

fn flow_trace(steps: &[StepSpec], workers: usize) -> Value {
    let events: Vec<Value> = steps
        .iter()
        .map(|&(id, name, tag, tid, ts, dur, deps, requeues)| {
            json!({"name": name, "cat": "step", "ph": "X", "ts": ts, "dur": dur, "pid": 1, "tid": tid,
                   "args": {"id": id, "tag": tag, "deps": deps, "requeues": requeues}})
        })
        .collect();
    json!({"traceEvents": events, "otherData": {"producer": "herd-flow", "graph": "cholesky", "workers": workers}})
}

/// Tiled Cholesky on 3×3 tiles, run on 2 workers from t = 500 µs, with a
/// 200 µs idle gap before the last step. Critical path: potrf 0 → trsm 2,0 →
/// gemm 2,1,0 → trsm 2,1 → syrk 2,2,1 → potrf 2 = 1+2.5+3+2+1.5+1 = 11 ms;
/// work 17 ms; makespan 11.2 ms.
const CHOLESKY: &[StepSpec] = &[
    (1, "potrf", "0", 0, 500.0, 1000.0, &[], 0),
    (2, "trsm", "1,0", 1, 1500.0, 2000.0, &[1], 0),
    (3, "trsm", "2,0", 0, 1500.0, 2500.0, &[1], 0),
    (4, "syrk", "1,1,0", 1, 3500.0, 1500.0, &[2], 0),
    (5, "gemm", "2,1,0", 0, 4000.0, 3000.0, &[3, 2], 0),
    (6, "syrk", "2,2,0", 1, 5000.0, 1500.0, &[3], 0),
    (7, "potrf", "1", 1, 6500.0, 1000.0, &[4], 1),
    (8, "trsm", "2,1", 0, 7000.0, 2000.0, &[7, 5], 2),
    (9, "syrk", "2,2,1", 0, 9000.0, 1500.0, &[8, 6], 0),
    (10, "potrf", "2", 0, 10700.0, 1000.0, &[9], 0),
];

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9 * b.abs().max(1.0))
}

fn analyze_json(file: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["trace", "analyze", s(file), "--json"];
    args.extend(extra);
    serde_json::from_slice(&ok(&mut herd(&args)).stdout).expect("valid JSON")
}

#[test]
fn cholesky_work_span_and_bound() {
    let file = write("cholesky.json", &flow_trace(CHOLESKY, 2));
    let v = analyze_json(&file, &[]);
    assert_eq!(v["source"], "herd-flow");
    assert_eq!(v["graph"], "cholesky");
    assert_eq!(v["workers"], 2);
    assert_eq!(v["events"], 10);
    for (key, want) in [
        ("work_ms", 17.0),
        ("span_ms", 11.0),
        ("parallelism", 17.0 / 11.0),
        ("bound_ms", 11.0),
        ("makespan_ms", 11.2),
        ("ratio", 11.2 / 11.0),
        ("excess_pct", 0.2 / 11.0 * 100.0),
        ("utilisation_pct", 17.0 / 22.4 * 100.0),
    ] {
        assert!(close(&v[key], want), "{key}: {} != {want}", v[key]);
    }
    assert_eq!(v["requeues"], 3);
    let path: Vec<(u64, &str, &str)> = v["critical_path"]
        .as_array()
        .expect("path")
        .iter()
        .map(|s| (s["id"].as_u64().unwrap(), s["collection"].as_str().unwrap(), s["tag"].as_str().unwrap()))
        .collect();
    assert_eq!(
        path,
        vec![
            (1, "potrf", "0"),
            (3, "trsm", "2,0"),
            (5, "gemm", "2,1,0"),
            (8, "trsm", "2,1"),
            (9, "syrk", "2,2,1"),
            (10, "potrf", "2")
        ]
    );
    let groups: Vec<(String, u64, f64, f64, u64)> = v["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| {
            let f = |k: &str| g[k].as_f64().unwrap();
            (
                g["name"].as_str().unwrap().into(),
                g["count"].as_u64().unwrap(),
                f("total_ms"),
                f("mean_ms"),
                g["requeues"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        vec![
            ("gemm".into(), 1, 3.0, 3.0, 0),
            ("potrf".into(), 3, 3.0, 1.0, 1),
            ("syrk".into(), 3, 4.5, 1.5, 0),
            ("trsm".into(), 3, 6.5, 6.5 / 3.0, 2)
        ]
    );
}

#[test]
fn workers_option_changes_the_bound() {
    let file = write("cholesky-p1.json", &flow_trace(CHOLESKY, 2));
    let v = analyze_json(&file, &["--workers", "1"]);
    assert_eq!(v["workers"], 1);
    assert!(close(&v["bound_ms"], 17.0) && close(&v["ratio"], 11.2 / 17.0), "{v}");
    let v = analyze_json(&file, &["--workers", "4"]);
    assert!(close(&v["bound_ms"], 11.0), "{v}");
    // clap rejects P = 0 (exit status 2, its own message).
    let o = herd(&["trace", "analyze", s(&file), "--workers", "0"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--workers"), "{}", stderr(&o));
}

#[test]
fn text_report_names_the_path_and_collections() {
    let file = write("cholesky-text.json", &flow_trace(CHOLESKY, 2));
    let out = stdout(&ok(&mut herd(&["trace", "analyze", s(&file)])));
    for needle in [
        "work W                    17.000 ms",
        "span S (critical path)    11.000 ms, 6 steps",
        "bound max(S, W/P)         11.000 ms",
        "makespan T                11.200 ms",
        "T / bound                 1.018 (+1.8% over the bound)",
        "requeues                  3",
        "critical path: potrf 0 → trsm 2,0 → gemm 2,1,0 → trsm 2,1 → syrk 2,2,1 → potrf 2",
        "trsm",
    ] {
        assert!(out.contains(needle), "{needle:?} missing in\n{out}");
    }
}

#[test]
fn long_critical_path_is_shortened_in_text() {
    let chain: Vec<StepSpec> = (0..10u64)
        .map(|i| -> StepSpec {
            let deps: &'static [u64] = if i == 0 { &[] } else { Box::leak(vec![i - 1].into_boxed_slice()) };
            (i, "step", "t", 0, i as f64 * 10.0, 10.0, deps, 0)
        })
        .collect();
    let file = write("chain.json", &flow_trace(&chain, 1));
    let out = stdout(&ok(&mut herd(&["trace", "analyze", s(&file)])));
    assert!(out.contains("critical path: step t → step t → step t → (4 more) → step t"), "{out}");
    let v = analyze_json(&file, &[]);
    assert!(close(&v["span_ms"], 0.1) && close(&v["parallelism"], 1.0), "{v}");
    assert_eq!(v["critical_path"].as_array().map(Vec::len), Some(10));
}

#[test]
fn zero_durations_have_no_ratios() {
    let file = write("zero.json", &flow_trace(&[(1, "a", "0", 0, 5.0, 0.0, &[], 0)], 1));
    let v = analyze_json(&file, &[]);
    assert!(close(&v["span_ms"], 0.0) && close(&v["bound_ms"], 0.0), "{v}");
    assert!(v["parallelism"].is_null() && v["ratio"].is_null() && v["utilisation_pct"].is_null(), "{v}");
    let out = stdout(&ok(&mut herd(&["trace", "analyze", s(&file)])));
    assert!(out.contains("n/a (S = 0)"), "{out}");
}

fn assert_svg(path: &Path, needles: &[&str]) {
    let svg = std::fs::read_to_string(path).expect("svg written");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{}", &svg[..svg.len().min(200)]);
    for n in needles {
        assert!(svg.contains(n), "{n:?} missing from {}", path.display());
    }
}

#[test]
fn show_writes_svg_next_to_the_trace_and_png() {
    let file = write("show.json", &flow_trace(CHOLESKY, 3));
    let default = PathBuf::from(format!("{}.svg", s(&file)));
    let _ = std::fs::remove_file(&default);
    let o = ok(&mut herd(&["trace", "show", s(&file)]));
    assert!(stdout(&o).contains(s(&default)), "{}", stdout(&o));
    // One row per worker, the idle worker 2 included; a legend entry per collection.
    assert_svg(
        &default,
        &["worker 0", "worker 1", "worker 2", "potrf", "trsm", "syrk", "gemm", "time (ms)", "critical path"],
    );

    let png = tmp("show.png");
    ok(&mut herd(&["trace", "show", s(&file), "-o", s(&png), "--width", "640"]));
    let bytes = std::fs::read(&png).expect("png written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // The width is in the IHDR chunk, big-endian, at byte 16.
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 640);
}

/// A hand-written HERD_TRACE file: the master opens a region and runs its
/// share, a worker runs its share with a task inside and sleeps.
fn herd_trace() -> Value {
    let ev = |ph: &str, name: &str, ts: f64, tid: u64| json!({"name": name, "ph": ph, "ts": ts, "pid": 7, "tid": tid, "args": {"arg": 0}});
    let meta = |tid: u64, name: &str| json!({"name": "thread_name", "ph": "M", "ts": 0.0, "pid": 7, "tid": tid, "args": {"name": name}});
    json!({"traceEvents": [
        meta(1, "master"), meta(2, "worker 1 (PU 1)"),
        ev("B", "region", 0.0, 1), ev("B", "share", 100.0, 1), ev("E", "share", 600.0, 1), ev("E", "region", 1000.0, 1),
        ev("B", "share", 200.0, 2), ev("B", "task", 300.0, 2), ev("i", "steal", 300.0, 2), ev("E", "task", 500.0, 2),
        ev("E", "share", 800.0, 2), ev("B", "sleep", 800.0, 2), ev("E", "sleep", 1000.0, 2),
    ], "displayTimeUnit": "ns", "otherData": {"producer": "herd 0.1.0"}})
}

#[test]
fn herd_trace_analyze_gives_busy_time_only() {
    let file = write("herd.json", &herd_trace());
    let v = analyze_json(&file, &[]);
    assert_eq!(v["source"], "herd");
    assert_eq!(v["workers"], 2);
    // Busy: master's share 0.5 ms, the worker's share 0.6 ms (its task inside counted once).
    assert!(close(&v["work_ms"], 1.1) && close(&v["makespan_ms"], 1.0), "{v}");
    assert!(close(&v["utilisation_pct"], 55.0), "{v}");
    assert!(v.get("span_ms").is_none() && v["note"].as_str().unwrap().contains("herd-flow"), "{v}");
    let out = stdout(&ok(&mut herd(&["trace", "analyze", s(&file)])));
    assert!(out.contains("critical path needs a herd-flow trace") && out.contains("sleep"), "{out}");
}

#[test]
fn herd_trace_show() {
    let file = write("herd-show.json", &herd_trace());
    let out = tmp("herd-show.svg");
    ok(&mut herd(&["trace", "show", s(&file), "-o", s(&out)]));
    assert_svg(&out, &["master", "worker 1 (PU 1)", "region", "share", "task", "sleep"]);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(!svg.contains("critical path"), "a HERD_TRACE file has no critical path");
}

#[test]
fn real_herd_trace_works() {
    let file = tmp("real-herd-trace.json");
    let mut cmd = herd(&["bench", "overhead", "--iters", "10", "--reps", "1"]);
    ok(cmd.env("HERD_TRACE", &file).env("HERD_NUM_THREADS", "2"));
    let v = analyze_json(&file, &[]);
    assert_eq!(v["source"], "herd");
    assert!(v["work_ms"].as_f64().unwrap() > 0.0, "{v}");
    let names: Vec<&str> =
        v["groups"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"region") && names.contains(&"share"), "{names:?}");
    let svg = tmp("real-herd-trace.svg");
    ok(&mut herd(&["trace", "show", s(&file), "-o", s(&svg)]));
    assert_svg(&svg, &["region", "share"]);
}

#[test]
fn errors_exit_2_and_say_why() {
    let missing = tmp("missing.json");
    for cmd in ["show", "analyze"] {
        fails(&["trace", cmd, s(&missing)], "cannot read");
    }
    let junk = tmp("junk.json");
    std::fs::write(&junk, "not json at all").unwrap();
    fails(&["trace", "analyze", s(&junk)], "not JSON");
    fails(&["trace", "show", s(&junk)], "not JSON");

    let no_events =
        write("no-steps.json", &json!({"traceEvents": [{"ph": "M", "name": "thread_name", "tid": 1}]}));
    fails(&["trace", "analyze", s(&no_events)], "no step events");
    fails(&["trace", "show", s(&no_events)], "no step events");
    let no_array = write("no-array.json", &json!({"events": []}));
    fails(&["trace", "analyze", s(&no_array)], "traceEvents");

    let dangling: &[StepSpec] = &[(1, "a", "x", 0, 0.0, 1.0, &[], 0), (2, "b", "y", 0, 1.0, 1.0, &[99], 0)];
    let dangling = write("dangling.json", &flow_trace(dangling, 1));
    fails(&["trace", "analyze", s(&dangling)], "step 2 (b y) depends on step 99, which is not in the trace");

    let cycle: &[StepSpec] = &[
        (1, "a", "0", 0, 0.0, 1.0, &[], 0),
        (2, "b", "1", 0, 1.0, 1.0, &[1, 3], 0),
        (3, "c", "2", 0, 2.0, 1.0, &[2], 0),
    ];
    let file = write("cycle.json", &flow_trace(cycle, 1));
    let o = herd(&["trace", "analyze", s(&file)]).output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("cycle through step 2 (b 1)") || e.contains("cycle through step 3 (c 2)"), "{e}");

    let twice = write("twice.json", &flow_trace(&[cycle[0], cycle[0]], 1));
    fails(&["trace", "analyze", s(&twice)], "step id 1 appears twice");

    let file = write("ok.json", &flow_trace(CHOLESKY, 2));
    fails(
        &["trace", "show", s(&file), "-o", "chart.pdf"],
        "-o chart.pdf: the file name must end in .svg or .png",
    );
}
