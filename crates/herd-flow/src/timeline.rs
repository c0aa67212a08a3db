//! Step timeline: one record per executed step, written as Chrome trace-event JSON.
//!
//! Format (read by `herd trace show/analyze`):
//! `{"traceEvents":[{"name":<collection>,"cat":"step","ph":"X","ts":<start µs>,"dur":<µs>,
//! "pid":1,"tid":<worker>,"args":{"id":<step id>,"tag":<tag>,"deps":[<producer step ids>],
//! "requeues":<n>}}, ...],"otherData":{"producer":"herd-flow","graph":<name>,"workers":<n>}}`.
//! `deps` are the ids of the steps that put the items the step got (items put by the
//! environment have no producer), so the records form the executed DAG.

use serde_json::{json, Value};

/// One executed step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRecord {
    /// Step instance id (unique in the graph, from 1).
    pub id: u64,
    /// Step collection name.
    pub collection: String,
    /// Tag, `Debug`-formatted.
    pub tag: String,
    /// Participant index of the worker that ran it (`herd::current_thread_index`).
    pub worker: usize,
    /// Start, ns since the graph was created.
    pub start_ns: u64,
    /// End, ns since the graph was created.
    pub end_ns: u64,
    /// Times the step was suspended on a missing item before this execution.
    pub requeues: u32,
    /// Ids of the steps that produced the items it got (sorted, deduplicated).
    pub deps: Vec<u64>,
}

/// The timeline as Chrome trace-event JSON (see the module documentation).
pub fn to_json(graph: &str, workers: usize, records: &[StepRecord]) -> Value {
    let events: Vec<Value> = records
        .iter()
        .map(|r| {
            json!({
                "name": r.collection,
                "cat": "step",
                "ph": "X",
                "ts": r.start_ns as f64 / 1000.0,
                "dur": r.end_ns.saturating_sub(r.start_ns) as f64 / 1000.0,
                "pid": 1,
                "tid": r.worker,
                "args": { "id": r.id, "tag": r.tag, "deps": r.deps, "requeues": r.requeues },
            })
        })
        .collect();
    json!({
        "traceEvents": events,
        "otherData": { "producer": "herd-flow", "graph": graph, "workers": workers },
    })
}
