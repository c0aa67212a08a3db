//! `herd trace analyze`: work, span, parallelism and the lower bound on time.

use super::model::{self, Source, Trace};
use crate::error::CliError;
use crate::table::Table;
use crate::CliResult;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Arguments of `herd trace analyze`.
#[derive(clap::Args, Debug)]
pub struct AnalyzeArgs {
    /// The trace file (herd-flow or HERD_TRACE JSON).
    file: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Worker count P of the bound max(S, W/P) (default: the trace's
    /// otherData.workers, else its number of rows).
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u64).range(1..))]
    workers: Option<u64>,
}

/// Steps shown at each end of the critical path in the text report.
const PATH_ENDS: usize = 3;

/// A step, as reported.
#[derive(Debug, Serialize)]
pub struct StepRef {
    id: u64,
    collection: String,
    tag: String,
    dur_ms: f64,
}

/// Count and time of one step collection or span kind.
#[derive(Debug, Default, Serialize)]
pub struct Group {
    name: String,
    count: usize,
    total_ms: f64,
    mean_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    requeues: Option<u64>,
}

/// The longest path and what follows from it (herd-flow traces only).
#[derive(Debug, Serialize)]
pub struct Bound {
    /// S, the critical path's length.
    span_ms: f64,
    /// Every step on the critical path, first to last.
    critical_path: Vec<StepRef>,
    /// W / S (absent when S is 0).
    parallelism: Option<f64>,
    /// max(S, W/P).
    bound_ms: f64,
    /// T / bound (absent when the bound is 0).
    ratio: Option<f64>,
    /// (T − bound) / bound in %.
    excess_pct: Option<f64>,
    requeues: u64,
}

/// The report.
#[derive(Debug, Serialize)]
pub struct Report {
    file: String,
    /// "herd-flow" or "herd".
    source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    graph: Option<String>,
    /// P.
    workers: usize,
    /// Steps (herd-flow) or spans (herd).
    events: usize,
    /// W: sum of step durations (herd: busy time in share and task spans).
    work_ms: f64,
    /// T: latest end − earliest start.
    makespan_ms: f64,
    /// W / (P · T) in %, within 0–100 (absent when T is 0, or when
    /// `--workers` gives fewer workers than were busy at once).
    utilisation_pct: Option<f64>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    bound: Option<Bound>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    groups: Vec<Group>,
}

/// Runs `herd trace analyze`.
pub fn run(args: &AnalyzeArgs) -> CliResult {
    let trace = model::load(&args.file)?;
    let report = analyze(&trace, &args.file.display().to_string(), args.workers.map(|p| p as usize))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", text(&report));
    }
    Ok(())
}

const MS: f64 = 1e-3;

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// Utilisations above 100 % by less than this are rounding.
const ROUNDING: f64 = 1e-9;

/// Analyses `trace`; `workers` overrides the trace's worker count.
///
/// Utilisation W / (P · T) is at most 100 % for a consistent trace. When it
/// would be more with the trace's own P (`otherData.workers`, else its row
/// count), the trace is invalid (steps overlapping on a worker, or fewer
/// workers recorded than ran steps): an error. When it would be more with P
/// from `--workers`, that P is smaller than the workers busy at once: the
/// utilisation is left out, with a note.
pub fn analyze(trace: &Trace, file: &str, workers: Option<usize>) -> CliResult<Report> {
    let p = workers.or(trace.workers).unwrap_or(trace.rows.len());
    if p == 0 {
        return Err(CliError::Usage(format!("{file}: the trace has no worker and no row")));
    }
    let (lo, hi) = trace.extent();
    let makespan = hi - lo;
    let mut groups: BTreeMap<&str, Group> = BTreeMap::new();
    for s in &trace.spans {
        let g = groups.entry(&s.name).or_default();
        g.count += 1;
        g.total_ms += s.dur * MS;
    }
    let (work, bound, note) = match trace.source {
        Source::Flow => {
            for s in &trace.steps {
                let g = groups.get_mut(s.collection.as_str()).expect("every step has a span");
                *g.requeues.get_or_insert(0) += s.requeues;
            }
            let work: f64 = trace.steps.iter().map(|s| s.dur).sum();
            (work, Some(bound(trace, file, work, makespan, p)?), None)
        }
        Source::Herd => (
            busy_time(trace),
            None,
            Some(
                "a HERD_TRACE file has no dependencies: the critical path needs a herd-flow trace"
                    .to_string(),
            ),
        ),
    };
    let mut note = note;
    let utilisation = ratio(work, p as f64 * makespan);
    let utilisation = match utilisation {
        Some(u) if u > 1.0 + ROUNDING => {
            if workers.is_none() {
                return Err(CliError::Usage(format!(
                    "{file}: invalid trace: its work W = {} is more than P × T = {p} × {} \
                     (utilisation {:.1}%): events overlap on one worker, or the trace records \
                     fewer workers ({p}) than were busy ({} rows)",
                    ms(work * MS),
                    ms(makespan * MS),
                    u * 100.0,
                    trace.rows.len()
                )));
            }
            const NO_UTILISATION: &str =
                "no utilisation: --workers is fewer than the workers busy at once in the trace";
            note = Some(note.map_or(NO_UTILISATION.to_string(), |n| format!("{n}; {NO_UTILISATION}")));
            None
        }
        u => u.map(|u| u.min(1.0)),
    };
    let groups = groups
        .into_iter()
        .map(|(name, g)| Group { name: name.to_string(), mean_ms: g.total_ms / g.count as f64, ..g })
        .collect();
    Ok(Report {
        file: file.to_string(),
        source: match trace.source {
            Source::Flow => "herd-flow",
            Source::Herd => "herd",
        },
        graph: trace.graph.clone(),
        workers: p,
        events: trace.spans.len(),
        work_ms: work * MS,
        makespan_ms: makespan * MS,
        utilisation_pct: utilisation.map(|u| u * 100.0),
        bound,
        note,
        groups,
    })
}

fn bound(trace: &Trace, file: &str, work: f64, makespan: f64, p: usize) -> CliResult<Bound> {
    let cp = trace.critical_path().map_err(|i| {
        let s = &trace.steps[i];
        CliError::Usage(format!(
            "{file}: the steps form a cycle through step {} ({} {})",
            s.id, s.collection, s.tag
        ))
    })?;
    let bound = cp.length.max(work / p as f64);
    Ok(Bound {
        span_ms: cp.length * MS,
        critical_path: cp
            .nodes
            .iter()
            .map(|&i| {
                let s = &trace.steps[i];
                StepRef { id: s.id, collection: s.collection.clone(), tag: s.tag.clone(), dur_ms: s.dur * MS }
            })
            .collect(),
        parallelism: ratio(work, cp.length),
        bound_ms: bound * MS,
        ratio: ratio(makespan, bound),
        excess_pct: ratio(makespan - bound, bound).map(|x| x * 100.0),
        requeues: trace.steps.iter().map(|s| s.requeues).sum(),
    })
}

/// Time each row spends inside share or task spans (nested ones counted once).
fn busy_time(trace: &Trace) -> f64 {
    // (row, start, end), sorted by row then start: one pass per row.
    let mut iv: Vec<(usize, f64, f64)> = trace
        .spans
        .iter()
        .filter(|s| s.name == "share" || s.name == "task")
        .map(|s| (s.row, s.start, s.end()))
        .collect();
    iv.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut total = 0.0;
    let mut row = usize::MAX;
    let mut reach = f64::NEG_INFINITY;
    for (r, a, b) in iv {
        if r != row {
            (row, reach) = (r, f64::NEG_INFINITY);
        }
        total += (b - a.max(reach)).max(0.0);
        reach = reach.max(b);
    }
    total
}

fn ms(x: f64) -> String {
    format!("{x:.3} ms")
}

fn step_name(s: &StepRef) -> String {
    format!("{} {}", s.collection, s.tag).trim_end().to_string()
}

/// The text report.
fn text(r: &Report) -> String {
    let mut out = format!("trace {} ({}", r.file, r.source);
    if let Some(g) = &r.graph {
        out += &format!(", graph {g}");
    }
    out += &format!(", P = {} workers)\n", r.workers);
    let mut line = |k: &str, v: String| out += &format!("  {k:<26}{v}\n");
    line(if r.bound.is_some() { "steps" } else { "spans" }, r.events.to_string());
    line("work W", ms(r.work_ms));
    if let Some(b) = &r.bound {
        line("span S (critical path)", format!("{}, {} steps", ms(b.span_ms), b.critical_path.len()));
        line("parallelism W/S", b.parallelism.map_or("n/a (S = 0)".into(), |x| format!("{x:.2}")));
        line("bound max(S, W/P)", ms(b.bound_ms));
    }
    line("makespan T", ms(r.makespan_ms));
    if let Some(b) = &r.bound {
        if let (Some(q), Some(x)) = (b.ratio, b.excess_pct) {
            line("T / bound", format!("{q:.3} ({x:+.1}% over the bound)"));
        }
    }
    if let Some(u) = r.utilisation_pct {
        line("utilisation W/(P·T)", format!("{u:.1}%"));
    }
    if let Some(b) = &r.bound {
        line("requeues", b.requeues.to_string());
        let path = &b.critical_path;
        let names: Vec<String> = if path.len() <= 2 * PATH_ENDS {
            path.iter().map(step_name).collect()
        } else {
            let head = path[..PATH_ENDS].iter().map(step_name);
            let tail = path[path.len() - PATH_ENDS..].iter().map(step_name);
            head.chain([format!("({} more)", path.len() - 2 * PATH_ENDS)]).chain(tail).collect()
        };
        out += &format!("critical path: {}\n", names.join(" → "));
    }
    if let Some(n) = &r.note {
        out += &format!("note: {n}\n");
    }
    out.push('\n');
    let flow = r.bound.is_some();
    let mut t = Table::new(if flow {
        &["collection", "steps", "total ms", "mean ms", "requeues"]
    } else {
        &["span kind", "spans", "total ms", "mean ms"]
    });
    for g in &r.groups {
        let mut cells = vec![
            g.name.clone(),
            g.count.to_string(),
            format!("{:.3}", g.total_ms),
            format!("{:.3}", g.mean_ms),
        ];
        cells.extend(g.requeues.map(|q| q.to_string()));
        t.row(cells);
    }
    out + &t.render()
}
