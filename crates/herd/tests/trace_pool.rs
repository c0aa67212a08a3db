//! `HERD_TRACE` end to end: a pool built with tracing writes a Chrome
//! trace-event file with regions, shares and tasks.

use herd::Pool;

mod common;
use common::fib;

#[test]
fn pool_writes_perfetto_trace() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("herd-pool-trace.json");
    let _ = std::fs::remove_file(&path);
    let pool = Pool::builder().num_threads(2).trace(&path).build().unwrap();
    for _ in 0..3 {
        pool.broadcast(|_| std::hint::black_box(fib(15)));
    }
    assert_eq!(pool.install(|| fib(20)), 6765);
    drop(pool);
    herd::trace::flush().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    // The pool's per-worker counters are in the trace's metadata.
    let pools = v["otherData"]["worker_stats"].as_array().unwrap();
    assert_eq!(pools.len(), 1);
    let workers = pools[0]["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2);
    let tasks: u64 = workers.iter().map(|w| w["tasks"].as_u64().unwrap()).sum();
    assert!(tasks > 0, "fib(20) ran jobs: {workers:?}");
    let events = v["traceEvents"].as_array().unwrap();
    let count = |name: &str, ph: &str| events.iter().filter(|e| e["name"] == name && e["ph"] == ph).count();
    assert_eq!(count("region", "B"), 3);
    assert_eq!(count("region", "E"), 3);
    assert_eq!(count("share", "B"), 6, "two shares per region");
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("worker 1 (PU")), "{names:?}");
}
