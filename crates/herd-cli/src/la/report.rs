//! What `herd la` prints and draws: a JSON object per matrix order (an
//! object per implementation with its run times, `median` seconds, `gflops`
//! and residual, and herd's speed over each peer), a table, and an SVG/PNG
//! chart of GFLOP/s and seconds against the order.

use super::contest::Outcome;
use crate::plot::{self, Panel, Series};
use crate::table::Table;
use crate::CliResult;
use serde_json::{json, Map, Value};
use std::path::Path;

/// The implementations every report names, present or not (`null`).
const PEERS: [&str; 2] = ["faer", "openblas"];

/// The results for one matrix order.
pub struct Measured {
    /// The order.
    pub n: usize,
    /// Floating-point operations of one run.
    pub flops: f64,
    /// One per implementation; `herd` first.
    pub outcomes: Vec<Outcome>,
    /// Routine-specific top-level JSON fields.
    pub extra: Map<String, Value>,
    /// Lines printed under the table (empty for none).
    pub note: String,
}

impl Measured {
    fn gflops(&self, secs: f64) -> f64 {
        self.flops / secs / 1e9
    }

    fn outcome(&self, key: &str) -> Option<&Outcome> {
        self.outcomes.iter().find(|o| o.key == key)
    }

    /// herd's speed over `peer`'s (medians), if both ran.
    fn herd_over(&self, peer: &Outcome) -> Option<f64> {
        self.outcome("herd").map(|h| peer.median() / h.median())
    }

    /// The JSON object.
    pub fn json(&self, threads: usize, reps: usize) -> Value {
        let mut v = Map::new();
        v.insert("n".into(), json!(self.n));
        v.insert("threads".into(), json!(threads));
        v.insert("reps".into(), json!(reps));
        v.insert("flops".into(), json!(self.flops));
        v.extend(self.extra.clone());
        for key in PEERS {
            v.insert(key.into(), Value::Null);
            v.insert(format!("herd_over_{key}"), Value::Null);
        }
        for o in &self.outcomes {
            let m = o.median();
            let mut obj = Map::new();
            obj.insert("seconds".into(), json!(o.seconds));
            obj.insert("median".into(), json!(m));
            obj.insert("gflops".into(), json!(self.gflops(m)));
            obj.insert("residual".into(), json!(o.residual));
            obj.extend(o.info.clone());
            v.insert(o.key.into(), Value::Object(obj));
            if o.key != "herd" {
                v.insert(format!("herd_over_{}", o.key), json!(self.herd_over(o)));
            }
        }
        Value::Object(v)
    }

    /// The table and herd's speed over each peer, as text.
    pub fn text(&self) -> String {
        let mut t = Table::new(&["implementation", "median s", "GFLOP/s", "runs (s)", "residual"]);
        for o in &self.outcomes {
            let (lo, hi) = o.seconds.iter().fold((f64::INFINITY, 0.0f64), |(l, h), &s| (l.min(s), h.max(s)));
            t.row(vec![
                o.label.clone(),
                format!("{:.4}", o.median()),
                format!("{:.1}", self.gflops(o.median())),
                format!("{lo:.4}–{hi:.4}"),
                format!("{:.2e}", o.residual),
            ]);
        }
        let mut s = t.render();
        for o in self.outcomes.iter().filter(|o| o.key != "herd") {
            if let Some(r) = self.herd_over(o) {
                s.push_str(&format!("herd ÷ {} speed: {r:.2}×\n", o.key));
            }
        }
        s.push_str(&self.note);
        s
    }
}

/// Prints the JSON: one object for one order, an array for several.
pub fn print_json(results: &[Measured], threads: usize, reps: usize) -> CliResult {
    let mut all: Vec<Value> = results.iter().map(|m| m.json(threads, reps)).collect();
    let v = if all.len() == 1 { all.remove(0) } else { Value::Array(all) };
    println!("{}", serde_json::to_string_pretty(&v)?);
    Ok(())
}

/// Draws GFLOP/s (linear) and median seconds (logarithmic) against the
/// order, one line per implementation, to `path`.
pub fn draw(path: &Path, format: plot::Format, caption: &str, results: &[Measured]) -> CliResult {
    let keys: Vec<(&'static str, String)> = results
        .first()
        .map(|m| m.outcomes.iter().map(|o| (o.key, o.label.clone())).collect())
        .unwrap_or_default();
    let series = |value: &dyn Fn(&Measured, &Outcome) -> f64| {
        keys.iter()
            .map(|(key, label)| Series {
                name: label.clone(),
                points: results
                    .iter()
                    .filter_map(|m| m.outcome(key).map(|o| (m.n as f64, value(m, o))))
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let panels = [
        Panel {
            title: "GFLOP/s (median)".into(),
            y_desc: "GFLOP/s".into(),
            log_y: false,
            series: series(&|m, o| m.gflops(o.median())),
        },
        Panel {
            title: "time per run (median)".into(),
            y_desc: "seconds".into(),
            log_y: true,
            series: series(&|_, o| o.median()),
        },
    ];
    plot::draw(path, format, caption, "n", &panels)?;
    eprintln!("herd la: wrote {}", path.display());
    Ok(())
}
