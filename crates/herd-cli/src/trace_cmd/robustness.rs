//! The trace reader against hostile input: property tests over arbitrary
//! bytes, byte-level and structural mutations of valid herd-flow and
//! `HERD_TRACE` files (no panic; an error is a message), consistent traces
//! generated at random (analysed without error, utilisation within 0–100 %,
//! makespan at least the bound), and one test per inconsistency the reader
//! rejects.
//!
//! The runs are deterministic (a fixed seed, no regression files); set
//! `HERD_FUZZ_SEED` to explore other inputs.

use super::analyze::analyze;
use super::model::{self, parse_bytes, Trace};
use super::show;
use crate::error::CliError;
use crate::plot::Format;
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, RngSeed};
use serde_json::{json, Value};
use std::path::PathBuf;

fn config(cases: u32) -> PtConfig {
    let seed = std::env::var("HERD_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5452_4143_0013);
    PtConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        max_shrink_iters: 1024,
        ..PtConfig::default()
    }
}

/// A herd-flow trace: tiled Cholesky on 2×2 tiles, on 2 workers.
fn flow() -> Value {
    let step = |id: u64, name: &str, tag: &str, tid: u64, ts: f64, dur: f64, deps: &[u64]| {
        json!({"name": name, "cat": "step", "ph": "X", "ts": ts, "dur": dur, "pid": 1, "tid": tid,
               "args": {"id": id, "tag": tag, "deps": deps, "requeues": 0}})
    };
    json!({"traceEvents": [
        step(1, "potrf", "0", 0, 0.0, 10.0, &[]),
        step(2, "trsm", "1,0", 1, 10.0, 20.0, &[1]),
        step(3, "syrk", "1,1,0", 1, 30.0, 15.0, &[2]),
        step(4, "potrf", "1", 0, 45.0, 10.0, &[3]),
    ], "otherData": {"producer": "herd-flow", "graph": "cholesky", "workers": 2}})
}

/// A `HERD_TRACE` file: a region with shares on two threads, a task, a sleep.
fn herd() -> Value {
    let ev = |ph: &str, name: &str, ts: f64, tid: u64| json!({"name": name, "ph": ph, "ts": ts, "pid": 7, "tid": tid, "args": {"arg": 0}});
    json!({"traceEvents": [
        {"name": "thread_name", "ph": "M", "ts": 0.0, "pid": 7, "tid": 1, "args": {"name": "master"}},
        ev("B", "region", 0.0, 1), ev("B", "share", 100.0, 1), ev("E", "share", 600.0, 1),
        ev("E", "region", 1000.0, 1), ev("B", "share", 200.0, 2), ev("B", "task", 300.0, 2),
        ev("i", "steal", 300.0, 2), ev("E", "task", 500.0, 2), ev("E", "share", 800.0, 2),
        ev("B", "sleep", 800.0, 2), ev("E", "sleep", 1000.0, 2),
    ], "displayTimeUnit": "ns", "otherData": {"producer": "herd 0.1.0"}})
}

/// A JSON value of any kind, favouring the troublesome: integers at the
/// limits, huge and tiny floats, negative times, small ids, odd strings.
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (0u64..8).prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(-1.0),
            Just(1e308),
            Just(-1e308),
            Just(1e18),
            Just(1.0000001e18),
            Just(5e-324),
            -1e6..1e6f64
        ]
        .prop_map(|x| json!(x)),
        "\\PC{0,12}".prop_map(Value::from),
        Just(json!("B")),
        Just(json!("E")),
        Just(json!("X")),
        Just(json!("step")),
        Just(json!([])),
        Just(json!({})),
        proptest::collection::vec(0u64..8, 0..4).prop_map(|v| json!(v)),
    ]
}

/// One structural change to a trace document.
#[derive(Clone, Debug)]
enum Mutation {
    /// Sets `key` (`a.b` for a nested one) of event `i` (modulo their count).
    Set(usize, &'static str, Value),
    /// Removes `key` of event `i`.
    Remove(usize, &'static str),
    /// Appends a copy of event `i`.
    Duplicate(usize),
    /// Deletes event `i`.
    Delete(usize),
    /// Sets `otherData.key`.
    Other(&'static str, Value),
    /// Replaces a top-level member.
    Top(&'static str, Value),
}

const KEYS: &[&str] = &[
    "ph",
    "name",
    "cat",
    "ts",
    "dur",
    "tid",
    "args",
    "args.id",
    "args.deps",
    "args.tag",
    "args.requeues",
    "args.name",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let i = 0usize..64;
    let key = proptest::sample::select(KEYS);
    prop_oneof![
        8 => (i.clone(), key.clone(), leaf()).prop_map(|(i, k, v)| Mutation::Set(i, k, v)),
        2 => (i.clone(), key).prop_map(|(i, k)| Mutation::Remove(i, k)),
        2 => i.clone().prop_map(Mutation::Duplicate),
        2 => i.prop_map(Mutation::Delete),
        2 => (proptest::sample::select(&["workers", "graph", "producer"][..]), leaf())
            .prop_map(|(k, v)| Mutation::Other(k, v)),
        1 => (proptest::sample::select(&["traceEvents", "otherData"][..]), leaf())
            .prop_map(|(k, v)| Mutation::Top(k, v)),
    ]
}

/// The object holding `key` (`a.b`: member `b` of member `a`) in `e`, and
/// the last part of the key; `None` where that is not an object (indexing
/// one to write would panic).
fn member<'v, 'k>(e: &'v mut Value, key: &'k str) -> Option<(&'v mut Value, &'k str)> {
    let (outer, last) = match key.split_once('.') {
        Some((a, b)) if e.is_object() => (&mut e[a], b),
        Some(_) => return None,
        None => (e, key),
    };
    if outer.is_null() {
        *outer = json!({});
    }
    outer.is_object().then_some((outer, last))
}

fn apply(doc: &mut Value, m: &Mutation) {
    let events = doc["traceEvents"].as_array_mut();
    let Some(events) = events.filter(|e| !e.is_empty()) else { return };
    let n = events.len();
    match m {
        Mutation::Set(i, key, v) => {
            if let Some((outer, last)) = member(&mut events[i % n], key) {
                outer[last] = v.clone();
            }
        }
        Mutation::Remove(i, key) => {
            if let Some((outer, last)) = member(&mut events[i % n], key) {
                outer.as_object_mut().map(|o| o.remove(last));
            }
        }
        Mutation::Duplicate(i) => {
            let e = events[i % n].clone();
            events.push(e);
        }
        Mutation::Delete(i) => {
            events.remove(i % n);
        }
        Mutation::Other(key, v) => {
            if doc["otherData"].is_object() {
                doc["otherData"][*key] = v.clone();
            }
        }
        Mutation::Top(key, v) => doc[*key] = v.clone(),
    }
}

/// A byte-level edit of a file: at `pos` (modulo the length), flip a bit,
/// insert a byte, delete a run, or cut the file there.
#[derive(Clone, Debug)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(p, b)| Edit::Flip(p, b)),
        (any::<usize>(), proptest::sample::select(&b"{}[],:\"0123456789-.eE \\\xff"[..]))
            .prop_map(|(p, b)| Edit::Insert(p, b)),
        (any::<usize>(), 1usize..8).prop_map(|(p, n)| Edit::Delete(p, n)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn edit_bytes(bytes: &mut Vec<u8>, e: &Edit) {
    let n = bytes.len().max(1);
    match *e {
        Edit::Flip(p, bit) if !bytes.is_empty() => bytes[p % n] ^= 1 << bit,
        Edit::Insert(p, b) => bytes.insert(p % (bytes.len() + 1), b),
        Edit::Delete(p, k) if !bytes.is_empty() => {
            let at = p % n;
            bytes.drain(at..(at + k).min(bytes.len()));
        }
        Edit::Truncate(p) => bytes.truncate(p % n),
        _ => {}
    }
}

/// Everything the commands do with a parsed trace: no panic; a report's
/// numbers are finite and its utilisation within 0–100 %; an error names
/// the file.
fn exercise(trace: &Trace) -> Result<(), TestCaseError> {
    for workers in [None, Some(1), Some(3)] {
        match analyze(trace, "t.json", workers) {
            Ok(report) => {
                let v = serde_json::to_value(&report).expect("a report encodes");
                let u = &v["utilisation_pct"];
                prop_assert!(u.is_null() || u.as_f64().is_some_and(|u| (0.0..=100.0).contains(&u)), "{v}");
                for key in ["work_ms", "makespan_ms"] {
                    prop_assert!(v[key].as_f64().is_some_and(f64::is_finite), "{key}: {v}");
                }
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("t.json: "), "{msg}");
                prop_assert!(workers.is_none() || !msg.contains("utilisation"), "{msg}");
            }
        }
    }
    let _ = trace.critical_path();
    let _ = trace.extent();
    Ok(())
}

/// Parses `bytes` and exercises the result; a parse error must say something.
fn check_bytes(bytes: &[u8]) -> Result<(), TestCaseError> {
    match parse_bytes(bytes) {
        Ok(trace) => exercise(&trace),
        Err(msg) => {
            prop_assert!(!msg.trim().is_empty());
            Ok(())
        }
    }
}

/// A consistent herd-flow trace: `n` steps on `p` workers, each after its
/// deps and after the previous step of its worker, with idle gaps.
fn consistent() -> impl Strategy<Value = (Value, usize)> {
    (1usize..5, proptest::collection::vec((0usize..8, any::<u64>(), 0.0..100.0f64, 0.0..20.0f64), 1..40))
        .prop_map(|(p, specs)| {
            let mut clock = vec![0.0f64; p];
            let mut ends: Vec<f64> = Vec::new();
            let mut events = Vec::new();
            for (i, &(w, dep_bits, dur, gap)) in specs.iter().enumerate() {
                let w = w % p;
                let deps: Vec<usize> =
                    (0..i.min(64)).filter(|d| dep_bits >> d & 1 == 1 && d % 3 == 0).collect();
                let ready = deps.iter().map(|&d| ends[d]).fold(clock[w], f64::max);
                let start = ready + gap;
                ends.push(start + dur);
                clock[w] = start + dur;
                events.push(json!({"name": format!("c{}", i % 3), "cat": "step", "ph": "X", "ts": start,
                    "dur": dur, "pid": 1, "tid": w, "args": {"id": i, "tag": i.to_string(), "deps": deps}}));
            }
            (json!({"traceEvents": events, "otherData": {"producer": "herd-flow", "workers": p}}), p)
        })
}

proptest! {
    #![proptest_config(config(8000))]

    /// Arbitrary bytes, and arbitrary text wrapped as a trace.
    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256), text in "\\PC{0,40}") {
        check_bytes(&bytes)?;
        check_bytes(format!("{{\"traceEvents\":[{text}]}}").as_bytes())?;
    }

    /// Byte-level edits of valid files.
    #[test]
    fn edited_bytes(herd_file in any::<bool>(), edits in proptest::collection::vec(edit(), 1..6)) {
        let mut bytes = if herd_file { herd() } else { flow() }.to_string().into_bytes();
        for e in &edits {
            edit_bytes(&mut bytes, e);
        }
        check_bytes(&bytes)?;
    }

    /// Structural mutations of valid documents.
    #[test]
    fn mutated_documents(herd_file in any::<bool>(), muts in proptest::collection::vec(mutation(), 1..6)) {
        let mut doc = if herd_file { herd() } else { flow() };
        for m in &muts {
            apply(&mut doc, m);
        }
        check_bytes(doc.to_string().as_bytes())?;
    }
}

proptest! {
    #![proptest_config(config(2000))]

    /// A consistent trace is analysed without error: utilisation within
    /// 0–100 %, and the makespan at least the bound max(S, W/P).
    #[test]
    fn consistent_traces_analyse((doc, p) in consistent()) {
        let trace = parse_bytes(doc.to_string().as_bytes()).map_err(TestCaseError::fail)?;
        let v = serde_json::to_value(analyze(&trace, "t.json", None).map_err(|e| TestCaseError::fail(e.to_string()))?).unwrap();
        prop_assert_eq!(v["workers"].as_u64(), Some(p as u64));
        let u = &v["utilisation_pct"];
        prop_assert!(u.is_null() || u.as_f64().is_some_and(|u| (0.0..=100.0).contains(&u)), "{v}");
        let (t, bound) = (v["makespan_ms"].as_f64().unwrap(), v["bound_ms"].as_f64().unwrap());
        prop_assert!(t >= bound * (1.0 - 1e-9) - 1e-9, "makespan {t} below the bound {bound}: {v}");
    }
}

proptest! {
    #![proptest_config(config(200))]

    /// Drawing mutated traces: no panic (an error is a message).
    #[test]
    fn mutated_documents_draw(herd_file in any::<bool>(), muts in proptest::collection::vec(mutation(), 0..4)) {
        let mut doc = if herd_file { herd() } else { flow() };
        for m in &muts {
            apply(&mut doc, m);
        }
        if let Ok(trace) = parse_bytes(doc.to_string().as_bytes()) {
            let out = svg_path("fuzz");
            let _ = show::draw(&trace, "fuzz", &out, Format::Svg, 400);
        }
    }
}

/// A chart path in this process's temporary folder; the format's font is
/// registered (as the command does).
fn svg_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("herd-trace-robustness-{}", std::process::id()));
    let path = dir.join(format!("{name}.svg"));
    Format::of(&path).expect("svg format");
    path
}

fn parse_value(v: &Value) -> Result<Trace, String> {
    parse_bytes(v.to_string().as_bytes())
}

fn with_workers(mut v: Value, workers: Value) -> Value {
    v["otherData"]["workers"] = workers;
    v
}

/// `otherData.workers = 0` made P = 1 (`max(1)`) and reported 110 %
/// utilisation for a two-row trace; it is an invalid trace now.
#[test]
fn zero_workers_is_invalid() {
    let herd0 = with_workers(herd(), json!(0));
    let e = parse_value(&herd0).unwrap_err();
    assert!(e.contains("otherData.workers is 0") && e.contains("an integer from 1 to"), "{e}");
    assert!(parse_value(&with_workers(flow(), json!(0))).unwrap_err().contains("otherData.workers is 0"));
    for bad in [json!(-1), json!(2.5), json!("2"), json!(model::MAX_WORKERS + 1), json!(u64::MAX)] {
        let e = parse_value(&with_workers(flow(), bad.clone())).unwrap_err();
        assert!(e.contains(&format!("otherData.workers is {bad}")), "{e}");
    }
    // The limit itself is accepted (idle workers get rows).
    let t = parse_value(&with_workers(flow(), json!(4))).unwrap();
    assert_eq!(t.rows.len(), 4);
}

/// Utilisation above 100 % with the trace's own worker count means an
/// inconsistent trace: an error. With `--workers` it means P is too small:
/// no utilisation, and a note says why.
#[test]
fn utilisation_over_100_percent() {
    // Both shares of the herd trace (1.1 ms busy in 1 ms) on a trace that says 1 worker.
    let t = parse_value(&with_workers(herd(), json!(1))).unwrap();
    let e = analyze(&t, "h.json", None).unwrap_err().to_string();
    assert!(
        e.starts_with("h.json: invalid trace: its work W = 1.100 ms is more than P × T = 1 × 1.000 ms"),
        "{e}"
    );
    assert!(e.contains("(utilisation 110.0%)"), "{e}");
    // Two steps overlapping on worker 0 of a one-worker trace.
    let mut overlap = with_workers(flow(), json!(1));
    for e in overlap["traceEvents"].as_array_mut().unwrap() {
        e["tid"] = json!(0);
    }
    overlap["traceEvents"][3]["ts"] = json!(0.0); // work 55 µs in 45 µs
    let t = parse_value(&overlap).unwrap();
    assert!(analyze(&t, "o.json", None).unwrap_err().to_string().contains("invalid trace"));
    // --workers 1 on the two-worker herd trace: a bound, no utilisation.
    let t = parse_value(&herd()).unwrap();
    let r = serde_json::to_value(analyze(&t, "h.json", Some(1)).unwrap()).unwrap();
    assert!(r["utilisation_pct"].is_null(), "{r}");
    assert!(r["note"].as_str().unwrap().contains("no utilisation: --workers is fewer"), "{r}");
    let r = serde_json::to_value(analyze(&t, "h.json", None).unwrap()).unwrap();
    assert!(r["utilisation_pct"].as_f64().is_some_and(|u| (u - 55.0).abs() < 1e-9), "{r}");
}

/// Times out of range, and an `E` before its `B`, are errors naming the event.
#[test]
fn bad_times_are_errors() {
    let mut v = flow();
    v["traceEvents"][2]["ts"] = json!(1e300);
    let e = parse_value(&v).unwrap_err();
    assert!(e.contains("\"ts\" out of range (at most 1e18 µs)") && e.contains("syrk"), "{e}");
    let mut v = flow();
    v["traceEvents"][0]["dur"] = json!(-1e300);
    assert!(parse_value(&v).unwrap_err().contains("\"dur\" out of range"));
    let mut v = herd();
    v["traceEvents"][3]["ts"] = json!(50.0); // the master's share ends before it begins
    let e = parse_value(&v).unwrap_err();
    assert!(
        e.contains("thread 1: span \"share\" begins at 100 µs") && e.contains("at 50 µs, earlier"),
        "{e}"
    );
    // A long event is cut in the message.
    let mut v = flow();
    v["traceEvents"][0]["ts"] = json!("x".repeat(10_000));
    let e = parse_value(&v).unwrap_err();
    assert!(e.len() < 400 && e.ends_with('…'), "{e}");
}

/// A trace with more rows than a chart can hold is refused by `show`, read by `analyze`.
#[test]
fn too_many_rows_to_draw() {
    let t = parse_value(&with_workers(flow(), json!(show::MAX_ROWS + 1))).unwrap();
    assert!(analyze(&t, "w.json", None).is_ok());
    match show::draw(&t, "t", &svg_path("rows"), Format::Svg, 400) {
        Err(CliError::Usage(m)) => {
            assert!(m.contains("2049 rows (threads or workers) are too many to draw"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

/// Arbitrary bytes that are not UTF-8, or not JSON, say so.
#[test]
fn not_json() {
    assert!(parse_bytes(b"\xff\xfe{").unwrap_err().starts_with("not JSON: "));
    assert!(parse_bytes(b"{\"traceEvents\": [\"\xff\"]}").unwrap_err().starts_with("not JSON: "));
    assert!(parse_bytes(b"").unwrap_err().starts_with("not JSON: "));
    assert!(parse_bytes(&[b'['; 100_000]).unwrap_err().starts_with("not JSON: "));
}
