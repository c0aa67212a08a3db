//! A trace file read into a timeline (rows of spans) and, for herd-flow
//! traces, the DAG of executed steps.

use crate::error::CliError;
use crate::CliResult;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// Where a trace comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// herd-flow steps (`"ph":"X","cat":"step"`, with ids and deps).
    Flow,
    /// herd's own `HERD_TRACE` (`B`/`E` spans per thread, no deps).
    Herd,
}

/// One bar of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// Index into [`Trace::rows`].
    pub row: usize,
    /// Step collection or span kind (the colour).
    pub name: String,
    /// Start, µs.
    pub start: f64,
    /// Duration, µs.
    pub dur: f64,
    /// Nesting depth on its row (0 = outermost).
    pub depth: usize,
}

impl Span {
    /// End, µs.
    pub fn end(&self) -> f64 {
        self.start + self.dur
    }
}

/// One executed step of a herd-flow graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Step id, unique in the trace.
    pub id: u64,
    /// Step collection.
    pub collection: String,
    /// The step's tag, as text.
    pub tag: String,
    /// Start, µs.
    pub start: f64,
    /// Duration, µs.
    pub dur: f64,
    /// Indices into [`Trace::steps`] of the steps this one got items from.
    pub deps: Vec<usize>,
    /// Times the step was requeued before it ran to completion.
    pub requeues: u64,
}

/// A parsed trace.
#[derive(Debug)]
pub struct Trace {
    /// What wrote it.
    pub source: Source,
    /// The graph's name (herd-flow), if given.
    pub graph: Option<String>,
    /// Worker count recorded by the producer, if given.
    pub workers: Option<usize>,
    /// Row labels, one per worker or thread.
    pub rows: Vec<String>,
    /// The bars.
    pub spans: Vec<Span>,
    /// The steps (herd-flow traces only), in file order: `spans[i]` is `steps[i]`.
    pub steps: Vec<Step>,
}

impl Trace {
    /// The longest path through the steps; on a cycle, `Err` holds a step on it.
    pub fn critical_path(&self) -> Result<CriticalPath, usize> {
        let dur: Vec<f64> = self.steps.iter().map(|s| s.dur).collect();
        let deps: Vec<Vec<usize>> = self.steps.iter().map(|s| s.deps.clone()).collect();
        critical_path(&dur, &deps)
    }

    /// Earliest start and latest end of all spans, µs (0, 0 when empty).
    pub fn extent(&self) -> (f64, f64) {
        let lo = self.spans.iter().map(|s| s.start).fold(f64::INFINITY, f64::min);
        let hi = self.spans.iter().map(Span::end).fold(f64::NEG_INFINITY, f64::max);
        if lo <= hi {
            (lo, hi)
        } else {
            (0.0, 0.0)
        }
    }
}

fn bad(path: &Path, what: impl std::fmt::Display) -> CliError {
    CliError::Usage(format!("{}: {what}", path.display()))
}

/// Reads and parses `path`.
pub fn load(path: &Path) -> CliResult<Trace> {
    let bytes = std::fs::read(path).map_err(|e| bad(path, format_args!("cannot read: {e}")))?;
    parse_bytes(&bytes).map_err(|e| bad(path, e))
}

/// Parses the bytes of a trace file; errors are plain messages.
pub fn parse_bytes(bytes: &[u8]) -> Result<Trace, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    parse(&v)
}

/// The most workers `otherData.workers` may give (each gets a row).
pub const MAX_WORKERS: u64 = 1 << 20;

/// The largest timestamp or duration accepted, in µs (about 31,700 years):
/// far past any clock, small enough that sums of them stay finite.
pub const MAX_TIME_US: f64 = 1e18;

/// An event as JSON for an error message, cut to a readable length.
fn show(e: &Value) -> String {
    const MAX: usize = 160;
    let text = e.to_string();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Parses a trace document; errors are plain messages.
pub fn parse(v: &Value) -> Result<Trace, String> {
    let events = v["traceEvents"].as_array().ok_or("no \"traceEvents\" array")?;
    let is_step = |e: &&Value| e["ph"] == "X" && e["cat"] == "step";
    let steps: Vec<&Value> = events.iter().filter(is_step).collect();
    let other = &v["otherData"];
    let workers = match &other["workers"] {
        Value::Null => None,
        w => match w.as_u64() {
            Some(n @ 1..=MAX_WORKERS) => Some(n as usize),
            _ => {
                return Err(format!(
                    "otherData.workers is {}: expected the number of workers that ran the trace, \
                     an integer from 1 to {MAX_WORKERS}",
                    show(w)
                ))
            }
        },
    };
    if !steps.is_empty() {
        let mut trace = parse_flow(&steps, workers)?;
        trace.graph = other["graph"].as_str().map(str::to_string);
        return Ok(trace);
    }
    let trace = parse_herd(events)?;
    if trace.spans.is_empty() {
        return Err("no step events (\"ph\":\"X\",\"cat\":\"step\") and no herd spans (B/E)".into());
    }
    Ok(Trace { workers, ..trace })
}

/// A time of `e` in µs: a number no larger than [`MAX_TIME_US`] in size.
fn num(e: &Value, key: &str) -> Result<f64, String> {
    match e[key].as_f64() {
        Some(x) if x.abs() <= MAX_TIME_US => Ok(x),
        Some(_) => {
            Err(format!("event with \"{key}\" out of range (at most {MAX_TIME_US:e} µs): {}", show(e)))
        }
        None => Err(format!("event without a numeric \"{key}\": {}", show(e))),
    }
}

fn parse_flow(events: &[&Value], workers: Option<usize>) -> Result<Trace, String> {
    let mut tids = BTreeSet::new();
    let mut steps = Vec::with_capacity(events.len());
    let mut raw_deps = Vec::with_capacity(events.len());
    let mut index = HashMap::new();
    for e in events {
        let args = &e["args"];
        let id = args["id"].as_u64().ok_or_else(|| format!("step without a numeric args.id: {}", show(e)))?;
        let dur = num(e, "dur")?;
        if dur < 0.0 {
            return Err(format!("step {id} has a negative duration"));
        }
        let step = Step {
            id,
            collection: e["name"].as_str().unwrap_or("?").to_string(),
            tag: match &args["tag"] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            },
            start: num(e, "ts")?,
            dur,
            deps: Vec::new(),
            requeues: args["requeues"].as_u64().unwrap_or(0),
        };
        let deps: Vec<u64> = match &args["deps"] {
            Value::Null => Vec::new(),
            Value::Array(a) => a
                .iter()
                .map(|d| d.as_u64().ok_or_else(|| format!("step {id}: dep {} is not a step id", show(d))))
                .collect::<Result<_, _>>()?,
            d => return Err(format!("step {id}: deps {} is not an array", show(d))),
        };
        if index.insert(id, steps.len()).is_some() {
            return Err(format!("step id {id} appears twice"));
        }
        tids.insert(e["tid"].as_u64().unwrap_or(0));
        steps.push(step);
        raw_deps.push(deps);
    }
    for (i, deps) in raw_deps.iter().enumerate() {
        for d in deps {
            let &j = index.get(d).ok_or_else(|| {
                let s = &steps[i];
                format!(
                    "step {} ({} {}) depends on step {d}, which is not in the trace",
                    s.id, s.collection, s.tag
                )
            })?;
            steps[i].deps.push(j);
        }
    }
    // Workers that ran nothing still get a row.
    tids.extend(0..workers.unwrap_or(0) as u64);
    let row_of: BTreeMap<u64, usize> = tids.iter().enumerate().map(|(r, &t)| (t, r)).collect();
    let spans = events
        .iter()
        .zip(&steps)
        .map(|(e, s)| Span {
            row: row_of[&e["tid"].as_u64().unwrap_or(0)],
            name: s.collection.clone(),
            start: s.start,
            dur: s.dur,
            depth: 0,
        })
        .collect();
    Ok(Trace {
        source: Source::Flow,
        graph: None,
        workers,
        rows: tids.iter().map(|t| format!("worker {t}")).collect(),
        spans,
        steps,
    })
}

/// `B`/`E` pairs per thread: an `E` closes the innermost open span of its
/// name; an unmatched `E` is dropped; a span still open ends at the last
/// timestamp of the trace. An `E` earlier than its `B` is an error.
fn parse_herd(events: &[Value]) -> Result<Trace, String> {
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    let mut open: BTreeMap<u64, Vec<(String, f64)>> = BTreeMap::new();
    let mut closed: Vec<(u64, String, f64, f64, usize)> = Vec::new();
    let mut last = f64::NEG_INFINITY;
    for e in events {
        let tid = e["tid"].as_u64().unwrap_or(0);
        let name = e["name"].as_str().unwrap_or("?");
        match e["ph"].as_str() {
            Some("M") if name == "thread_name" => {
                if let Some(n) = e["args"]["name"].as_str() {
                    names.insert(tid, n.to_string());
                }
            }
            Some("B") => {
                let ts = num(e, "ts")?;
                last = last.max(ts);
                open.entry(tid).or_default().push((name.to_string(), ts));
            }
            Some("E") => {
                let ts = num(e, "ts")?;
                last = last.max(ts);
                let stack = open.entry(tid).or_default();
                if let Some(k) = stack.iter().rposition(|(n, _)| n == name) {
                    if let Some((n, start)) = stack[k..].iter().find(|(_, start)| *start > ts) {
                        return Err(format!(
                            "thread {tid}: span {n:?} begins at {start} µs but the \"E\" of {name:?} \
                             that closes it is at {ts} µs, earlier"
                        ));
                    }
                    // Spans opened inside it end with it.
                    for (depth, (n, start)) in stack.drain(k..).enumerate().rev() {
                        closed.push((tid, n, start, ts, k + depth));
                    }
                }
            }
            _ => {}
        }
    }
    for (&tid, stack) in &mut open {
        for (depth, (n, start)) in stack.drain(..).enumerate() {
            closed.push((tid, n, start, last, depth));
        }
    }
    let tids: BTreeSet<u64> = closed.iter().map(|c| c.0).collect();
    let row_of: BTreeMap<u64, usize> = tids.iter().enumerate().map(|(r, &t)| (t, r)).collect();
    let rows = tids.iter().map(|t| names.get(t).cloned().unwrap_or_else(|| format!("thread {t}"))).collect();
    let mut spans: Vec<Span> = closed
        .into_iter()
        .map(|(tid, name, start, end, depth)| Span {
            row: row_of[&tid],
            name,
            start,
            dur: end - start,
            depth,
        })
        .collect();
    spans.sort_by(|a, b| (a.row, a.depth).cmp(&(b.row, b.depth)).then(a.start.total_cmp(&b.start)));
    Ok(Trace { source: Source::Herd, graph: None, workers: None, rows, spans, steps: Vec::new() })
}

/// The longest path through a DAG.
#[derive(Debug, PartialEq)]
pub struct CriticalPath {
    /// Sum of the durations along it.
    pub length: f64,
    /// Its nodes, first to last.
    pub nodes: Vec<usize>,
}

/// The longest path of the DAG where node `i` weighs `dur[i]` and must follow
/// every node of `deps[i]`; on a cycle, `Err` holds one node on it. Ties go to
/// the lower index.
pub fn critical_path(dur: &[f64], deps: &[Vec<usize>]) -> Result<CriticalPath, usize> {
    let n = dur.len();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            users[d].push(i);
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| waiting[i] == 0).rev().collect();
    let mut finish = vec![0.0; n];
    let mut pred: Vec<Option<usize>> = vec![None; n];
    let mut done = 0;
    while let Some(i) = ready.pop() {
        done += 1;
        let best = deps[i].iter().copied().fold(None, |b: Option<usize>, d| match b {
            Some(b) if finish[b] > finish[d] || (finish[b] == finish[d] && b < d) => Some(b),
            _ => Some(d),
        });
        pred[i] = best;
        finish[i] = dur[i] + best.map_or(0.0, |b| finish[b]);
        for &u in &users[i] {
            waiting[u] -= 1;
            if waiting[u] == 0 {
                ready.push(u);
            }
        }
    }
    if done < n {
        // Walk back through unfinished deps until a node repeats: it is on a cycle.
        let mut seen = vec![false; n];
        let mut i = (0..n).find(|&i| waiting[i] > 0).expect("an unfinished node");
        while !seen[i] {
            seen[i] = true;
            i = *deps[i].iter().find(|&&d| waiting[d] > 0).expect("an unfinished dep");
        }
        return Err(i);
    }
    let Some(mut last) = (0..n).reduce(|a, b| if finish[b] > finish[a] { b } else { a }) else {
        return Ok(CriticalPath { length: 0.0, nodes: Vec::new() });
    };
    let length = finish[last];
    let mut nodes = vec![last];
    while let Some(p) = pred[last] {
        nodes.push(p);
        last = p;
    }
    nodes.reverse();
    Ok(CriticalPath { length, nodes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_graph() {
        assert_eq!(critical_path(&[], &[]), Ok(CriticalPath { length: 0.0, nodes: vec![] }));
    }

    #[test]
    fn chain() {
        let cp = critical_path(&[1.0, 2.0, 3.0], &[vec![], vec![0], vec![1]]).unwrap();
        assert_eq!(cp, CriticalPath { length: 6.0, nodes: vec![0, 1, 2] });
    }

    #[test]
    fn chain_listed_backwards() {
        let cp = critical_path(&[3.0, 2.0, 1.0], &[vec![1], vec![2], vec![]]).unwrap();
        assert_eq!(cp, CriticalPath { length: 6.0, nodes: vec![2, 1, 0] });
    }

    #[test]
    fn diamond_takes_the_heavier_branch() {
        // 0 -> {1 (5), 2 (2)} -> 3
        let deps = [vec![], vec![0], vec![0], vec![1, 2]];
        assert_eq!(critical_path(&[1.0, 5.0, 2.0, 1.0], &deps).unwrap().nodes, vec![0, 1, 3]);
        assert_eq!(critical_path(&[1.0, 2.0, 5.0, 1.0], &deps).unwrap().nodes, vec![0, 2, 3]);
        assert_eq!(critical_path(&[1.0, 2.0, 5.0, 1.0], &deps).unwrap().length, 7.0);
    }

    #[test]
    fn independent_steps() {
        let cp = critical_path(&[2.0, 7.0, 3.0], &[vec![], vec![], vec![]]).unwrap();
        assert_eq!(cp, CriticalPath { length: 7.0, nodes: vec![1] });
    }

    #[test]
    fn cycle_names_a_node_on_it() {
        // 0 -> 1 -> 2 -> 1, and 3 after 2.
        let deps = [vec![], vec![0, 2], vec![1], vec![2]];
        let node = critical_path(&[1.0; 4], &deps).unwrap_err();
        assert!(node == 1 || node == 2, "{node}");
        assert_eq!(critical_path(&[1.0], &[vec![0]]), Err(0));
    }

    #[test]
    fn herd_spans_nest_and_close() {
        let ev =
            |ph: &str, name: &str, ts: f64, tid: u64| json!({"ph": ph, "name": name, "ts": ts, "tid": tid});
        let v = json!({"traceEvents": [
            {"ph": "M", "name": "thread_name", "tid": 1, "args": {"name": "master"}},
            ev("B", "region", 0.0, 1), ev("B", "share", 1.0, 1), ev("E", "region", 5.0, 1),
            ev("E", "share", 6.0, 1), ev("B", "task", 2.0, 2), ev("i", "steal", 2.5, 2),
        ]});
        let t = parse(&v).unwrap();
        assert_eq!(t.source, Source::Herd);
        assert_eq!(t.rows, vec!["master", "thread 2"]);
        let got: Vec<(usize, &str, f64, f64, usize)> =
            t.spans.iter().map(|s| (s.row, s.name.as_str(), s.start, s.end(), s.depth)).collect();
        // The region's end closes the share inside it; the unmatched E is dropped;
        // the open task ends at the last timestamp.
        assert_eq!(
            got,
            vec![(0, "region", 0.0, 5.0, 0), (0, "share", 1.0, 5.0, 1), (1, "task", 2.0, 6.0, 0)]
        );
    }
}
