//! `HERD_TRACE` end to end, through `herd::trace::testing` (the crate-internal
//! recording API, re-exported for tests only).
//!
//! Tracing is process-wide state that can only be turned on, so this binary
//! holds exactly one test, which walks through the whole life cycle in order:
//! off before `start`, `start` (twice, then with another path), events from
//! three threads, `flush`, and a second, cumulative `flush`.

use herd::trace::{flush, testing as t};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn read_trace(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("trace file written");
    serde_json::from_str(&text).expect("trace is valid JSON")
}

fn events(trace: &Value) -> &Vec<Value> {
    trace["traceEvents"].as_array().expect("traceEvents array")
}

/// Checks the per-thread structure: every `E` closes the innermost open `B`
/// (same name), timestamps never go back, nothing stays open. Returns, per
/// tid, the sequence of `(ph, name)` of duration and instant events.
fn check_structure(trace: &Value) -> HashMap<u64, Vec<(String, String)>> {
    assert_eq!(trace["displayTimeUnit"], "ns");
    let pid = u64::from(std::process::id());
    let mut open: HashMap<u64, Vec<String>> = HashMap::new();
    let mut last_ts: HashMap<u64, f64> = HashMap::new();
    let mut seq: HashMap<u64, Vec<(String, String)>> = HashMap::new();
    for e in events(trace) {
        assert_eq!(e["pid"].as_u64(), Some(pid), "{e}");
        let tid = e["tid"].as_u64().expect("tid");
        let ph = e["ph"].as_str().expect("ph");
        let name = e["name"].as_str().expect("name").to_string();
        let ts = e["ts"].as_f64().expect("ts");
        if ph == "M" {
            continue;
        }
        assert!(["region", "share", "task", "steal", "sleep", "wake"].contains(&name.as_str()), "{e}");
        assert!(e["args"]["arg"].is_u64(), "{e}");
        let last = last_ts.entry(tid).or_insert(0.0);
        assert!(ts >= *last, "time goes back on tid {tid}: {e}");
        *last = ts;
        let stack = open.entry(tid).or_default();
        match ph {
            "B" => stack.push(name.clone()),
            "E" => assert_eq!(stack.pop().as_deref(), Some(name.as_str()), "{e}"),
            "i" => assert_eq!(e["s"], "t", "{e}"),
            _ => panic!("unexpected phase: {e}"),
        }
        seq.entry(tid).or_default().push((ph.to_string(), name));
    }
    for (tid, stack) in open {
        assert!(stack.is_empty(), "tid {tid} left {stack:?} open");
    }
    seq
}

/// tid -> thread name, from the `thread_name` metadata events.
fn thread_names(trace: &Value) -> HashMap<u64, String> {
    events(trace)
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            let name = e["args"]["name"].as_str().expect("thread name");
            (e["tid"].as_u64().unwrap(), name.to_string())
        })
        .collect()
}

/// What each of the three threads records: nested spans, instants, one
/// unmatched end (dropped) and one span left open when the thread exits
/// (closed at flush).
fn worker(i: u64) {
    t::name_thread(&format!("test worker {i}"));
    t::end("task", 99); // nothing open: dropped
    t::begin("region", i);
    for share in 0..3 {
        t::begin("share", share);
        t::begin("task", 10 * i + share);
        t::instant("steal", share);
        t::end("task", 10 * i + share);
        t::end("share", share);
    }
    t::instant("wake", i);
    t::end("region", i);
    t::begin("share", 7);
    t::begin("task", 8);
    t::end("share", 7); // closes the task first
    t::begin("sleep", i); // still open at exit
}

#[test]
fn trace_life_cycle() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("herd-trace-test.json");
    let other = dir.join("herd-trace-test-other.json");
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&other);

    // Off until started: nothing is recorded, flush writes nothing.
    assert!(!t::enabled());
    t::name_thread("never shown");
    t::begin("region", 12345);
    t::instant("steal", 12345);
    flush().unwrap();
    assert!(!path.exists());

    t::start(path.clone());
    assert!(t::enabled());
    t::start(path.clone()); // same path: no-op
    t::start(other.clone()); // another path: ignored (warns on stderr)
    assert!(t::enabled());

    std::thread::scope(|s| {
        for i in 1..=3 {
            s.spawn(move || worker(i));
        }
    });
    // The main thread records too, unnamed.
    t::begin("region", 0);
    t::end("region", 0);
    flush().unwrap();
    assert!(!other.exists());

    let trace = read_trace(&path);
    let seq = check_structure(&trace);
    let names = thread_names(&trace);
    assert!(names.values().all(|n| n != "never shown"));
    assert!(!events(&trace).iter().any(|e| e["args"]["arg"] == 12345));

    // The three exited workers, by name, each with the full sequence.
    let expected: Vec<(String, String)> = {
        let mut v = vec![("B", "region")];
        for _ in 0..3 {
            v.extend([("B", "share"), ("B", "task"), ("i", "steal"), ("E", "task"), ("E", "share")]);
        }
        v.extend([("i", "wake"), ("E", "region")]);
        v.extend([("B", "share"), ("B", "task"), ("E", "task"), ("E", "share")]);
        v.extend([("B", "sleep"), ("E", "sleep")]);
        v.into_iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    };
    for i in 1..=3u64 {
        let name = format!("test worker {i}");
        let (&tid, _) = names.iter().find(|(_, n)| **n == name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(seq[&tid], expected, "{name}");
        let wake =
            events(&trace).iter().find(|e| e["tid"] == tid && e["name"] == "wake").expect("wake instant");
        assert_eq!(wake["args"]["arg"], i);
    }
    let steals = events(&trace).iter().filter(|e| e["ph"] == "i" && e["name"] == "steal").count();
    assert_eq!(steals, 9);
    // The unnamed main thread gets "thread N", N its tid.
    let (&main_tid, main_name) = names.iter().find(|(_, n)| n.starts_with("thread ")).expect("main thread");
    assert_eq!(main_name, &format!("thread {main_tid}"));
    assert_eq!(seq[&main_tid], [("B".into(), "region".into()), ("E".into(), "region".into())]);
    assert_eq!(trace["otherData"]["dropped_events"], 0);

    // A second flush rewrites the file with everything so far.
    t::instant("wake", 4242);
    flush().unwrap();
    let again = read_trace(&path);
    check_structure(&again);
    assert_eq!(events(&again).len(), events(&trace).len() + 1);
    assert!(events(&again).iter().any(|e| e["args"]["arg"] == 4242 && e["tid"] == main_tid));
}
