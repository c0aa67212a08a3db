//! Thread sweeps, shared by the drivers (`compare`, `omp-compare`, `tasks`):
//! the `--threads 1,2,4,8` list, one [`Point`] per (benchmark, contender,
//! thread count) — the median over rounds — and what is made of them: a
//! table per benchmark (time at each thread count, herd ÷ each peer) and a
//! chart per benchmark of time against threads, one line per contender.
//!
//! A benchmark is named `figure` or `figure/panel`: the points of one
//! figure go into one chart file (`<prefix>-<figure>-threads.svg`), one
//! panel per benchmark (e.g. `loops/static`, `loops/dynamic,64` share the
//! `loops` chart).

use crate::chart::{self, Lines, Panel, PALETTE};
use crate::{fmt_opt, ratio, Summary};
use plotters::style::RGBColor;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What `--threads` accepts, for error messages.
const THREADS_FORM: &str = "a comma-separated list of positive integers, e.g. --threads 1,2,4,8,16";

/// Parses a `--threads` value: `2` or `1,2,4,8`, sorted, duplicates
/// removed. Rejects an empty list or entry, `0`, and anything not a number.
pub fn parse_threads(s: &str) -> Result<Vec<usize>, String> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim) {
        match part.parse::<usize>() {
            _ if part.is_empty() => {
                return Err(format!("--threads: empty entry in {s:?}; expected {THREADS_FORM}"))
            }
            Ok(0) => return Err(format!("--threads: 0 is not a thread count; expected {THREADS_FORM}")),
            Ok(n) => v.push(n),
            Err(_) => return Err(format!("--threads: {part:?} is not a number; expected {THREADS_FORM}")),
        }
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// One (benchmark, contender, thread count) of a run: its values over the
/// rounds and their median. One JSON record each in the drivers' `sweep`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Point {
    /// `figure` or `figure/panel` (see the module's documentation).
    pub bench: String,
    /// Runtime or variant; a name starting with `herd` is herd's (the
    /// first such in a benchmark is the one the tables compare with the
    /// others).
    pub contender: String,
    /// Participants.
    pub threads: usize,
    /// Unit of the values (`s`, `ms`, `us`).
    pub unit: String,
    /// Median over rounds; `None` when a round failed or none ran.
    pub median: Option<f64>,
    /// Median, min and max over rounds, when there are values.
    pub summary: Option<Summary>,
    /// The value of every round that gave one.
    pub rounds: Vec<f64>,
    /// A round failed (then there is no median).
    pub failed: bool,
}

impl Point {
    /// The point of `values` (one per round).
    pub fn new(
        bench: &str,
        contender: &str,
        threads: usize,
        unit: &str,
        values: &[f64],
        failed: bool,
    ) -> Point {
        let summary = (!values.is_empty()).then(|| Summary::of(values));
        Point {
            bench: bench.into(),
            contender: contender.into(),
            threads,
            unit: unit.into(),
            median: summary.filter(|_| !failed).map(|s| s.median),
            summary,
            rounds: values.to_vec(),
            failed,
        }
    }
}

/// One benchmark's lines: per contender (first-seen order), its medians by
/// thread count (ascending; failed points left out).
#[derive(Clone, Debug, PartialEq)]
pub struct Curves {
    /// The benchmark (`figure/panel` or `figure`).
    pub bench: String,
    /// Unit of the values.
    pub unit: String,
    /// (contender, [(threads, median)]).
    pub lines: Vec<(String, Vec<(usize, f64)>)>,
}

impl Curves {
    /// The median of `contender` at `threads`.
    pub fn at(&self, contender: &str, threads: usize) -> Option<f64> {
        let (_, pts) = self.lines.iter().find(|(c, _)| c == contender)?;
        pts.iter().find(|(t, _)| *t == threads).map(|(_, v)| *v)
    }

    /// Every thread count of any line, ascending.
    pub fn threads(&self) -> Vec<usize> {
        let mut t: Vec<usize> = self.lines.iter().flat_map(|(_, p)| p.iter().map(|(t, _)| *t)).collect();
        t.sort_unstable();
        t.dedup();
        t
    }

    /// herd's contender (the first whose name starts with `herd`) and the
    /// others, its peers.
    pub fn herd_and_peers(&self) -> (Option<&str>, Vec<&str>) {
        let herd = self.lines.iter().map(|(c, _)| c.as_str()).find(|c| c.starts_with("herd"));
        let peers = self.lines.iter().map(|(c, _)| c.as_str()).filter(|c| !c.starts_with("herd")).collect();
        (herd, peers)
    }
}

/// The figure a benchmark belongs to: its name up to the first `/`.
pub fn figure_of(bench: &str) -> &str {
    bench.split('/').next().unwrap_or(bench)
}

/// Reshapes points into figures (first-seen order), each a list of
/// benchmarks' [`Curves`] (first-seen order).
pub fn figures(points: &[Point]) -> Vec<(String, Vec<Curves>)> {
    let mut out: Vec<(String, Vec<Curves>)> = Vec::new();
    for p in points {
        let fig = figure_of(&p.bench);
        let fi = match out.iter().position(|(f, _)| f == fig) {
            Some(i) => i,
            None => {
                out.push((fig.to_string(), Vec::new()));
                out.len() - 1
            }
        };
        let benches = &mut out[fi].1;
        let bi = match benches.iter().position(|c| c.bench == p.bench) {
            Some(i) => i,
            None => {
                benches.push(Curves { bench: p.bench.clone(), unit: p.unit.clone(), lines: Vec::new() });
                benches.len() - 1
            }
        };
        let lines = &mut benches[bi].lines;
        let li = match lines.iter().position(|(c, _)| *c == p.contender) {
            Some(i) => i,
            None => {
                lines.push((p.contender.clone(), Vec::new()));
                lines.len() - 1
            }
        };
        if let Some(m) = p.median {
            let pts = &mut lines[li].1;
            pts.push((p.threads, m));
            pts.sort_by_key(|(t, _)| *t);
        }
    }
    out
}

/// `us` → `µs`.
fn unit_text(unit: &str) -> &str {
    if unit == "us" {
        "µs"
    } else {
        unit
    }
}

/// One markdown table per benchmark: a row per thread count, the median of
/// every contender, then herd ÷ each peer (below 1: herd is faster).
pub fn markdown(points: &[Point]) -> String {
    let mut md = String::new();
    for (_, benches) in figures(points) {
        for c in &benches {
            let (herd, peers) = c.herd_and_peers();
            let names: Vec<&str> = c.lines.iter().map(|(n, _)| n.as_str()).collect();
            let _ = writeln!(md, "#### `{}` ({} by threads)\n", c.bench, unit_text(&c.unit));
            let mut head = format!("| threads | {} |", names.join(" | "));
            let mut sep = format!("|---|{}", "---|".repeat(names.len()));
            if let Some(h) = herd {
                for p in &peers {
                    let _ = write!(head, " {h} ÷ {p} |");
                    sep.push_str("---|");
                }
            }
            let _ = writeln!(md, "{head}\n{sep}");
            for t in c.threads() {
                let mut row = format!("| {t} |");
                for n in &names {
                    let _ = write!(row, " {} |", fmt_opt(c.at(n, t)));
                }
                if let Some(h) = herd {
                    for p in &peers {
                        let _ = write!(row, " {} |", fmt_opt(ratio(c.at(h, t), c.at(p, t))));
                    }
                }
                let _ = writeln!(md, "{row}");
            }
            md.push('\n');
        }
    }
    md
}

/// The thread-sweep section of a driver's markdown report: a heading and
/// the [`markdown`] tables.
pub fn section(points: &[Point]) -> String {
    format!(
        "### Thread sweep: median against threads (herd ÷ peer below 1: herd faster)\n\n{}",
        markdown(points)
    )
}

/// [`write_charts`], then a line on standard error, `<prog>: wrote ...`
/// or why it failed (a chart is not worth losing the measurements for).
pub fn write_charts_and_say(prog: &str, dir: &Path, prefix: &str, caption: &str, points: &[Point]) {
    match write_charts(dir, prefix, caption, points) {
        Ok(files) => {
            let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            eprintln!("{prog}: wrote {}", names.join(", "));
        }
        Err(e) => eprintln!("{prog}: thread-sweep charts failed: {e}"),
    }
}

/// A file-name-safe form of a figure's name.
fn file_part(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    s.trim_matches('-').to_string()
}

/// The chart panel of one benchmark: time against threads, a line per
/// contender (`colour` gives each its colour), log x when the thread
/// counts span 8× or more, log y when the values are positive and span
/// more than 10×.
pub fn panel(c: &Curves, colour: impl Fn(&str) -> RGBColor) -> Lines<'static> {
    let t = c.threads();
    let (t_lo, t_hi) = (t.first().copied().unwrap_or(1), t.last().copied().unwrap_or(1));
    let vals: Vec<f64> = c.lines.iter().flat_map(|(_, p)| p.iter().map(|(_, v)| *v)).collect();
    let positive = !vals.is_empty() && vals.iter().all(|v| *v > 0.0);
    let (lo, hi) = vals.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    let log_y = positive && hi / lo > 10.0;
    let unit = unit_text(&c.unit);
    Lines {
        title: format!("{} ({unit}{}; lower is better)", c.bench, if log_y { ", log scale" } else { "" }),
        x_desc: "threads",
        y_desc: if unit == "µs" {
            "µs"
        } else if unit == "ms" {
            "ms"
        } else {
            "s"
        },
        log_x: t_hi >= 8 * t_lo,
        log_y,
        series: c
            .lines
            .iter()
            .map(|(n, pts)| (n.clone(), colour(n), pts.iter().map(|&(t, v)| (t as f64, v)).collect()))
            .collect(),
        marks: Vec::new(),
    }
}

/// Draws one chart per figure into `dir`: `<prefix>-<figure>-threads.svg`
/// and the same as `.png`; returns the files written. Within a figure each
/// contender has its own colour, by rank in the order of first appearance
/// over all points (so herd's first contender is the first colour wherever
/// it is the first to appear).
pub fn write_charts(
    dir: &Path,
    prefix: &str,
    caption: &str,
    points: &[Point],
) -> Result<Vec<PathBuf>, String> {
    let mut names: Vec<&str> = Vec::new();
    for p in points {
        if !names.contains(&p.contender.as_str()) {
            names.push(&p.contender);
        }
    }
    let mut written = Vec::new();
    for (fig, benches) in figures(points) {
        let here: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| benches.iter().any(|c| c.lines.iter().any(|(m, _)| m == n)))
            .collect();
        let colour = |n: &str| PALETTE[here.iter().position(|m| *m == n).unwrap_or(0) % PALETTE.len()];
        let panels: Vec<Panel> = benches.iter().map(|c| Panel::Lines(panel(c, colour))).collect();
        let columns = if panels.len() > 1 { 2 } else { 1 };
        let width = if columns > 1 { 1400 } else { 900 };
        let stem = format!("{prefix}-{}-threads", file_part(&fig));
        for ext in ["svg", "png"] {
            let path = dir.join(format!("{stem}.{ext}"));
            chart::draw_grid(&path, &format!("{caption}: {fig}"), width, 420, columns, &panels)?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_lists() {
        assert_eq!(parse_threads("2"), Ok(vec![2]));
        assert_eq!(parse_threads("16, 1,2,4,8,2"), Ok(vec![1, 2, 4, 8, 16]));
        for bad in ["", "1,,2", "0", "1,0", "x", "1,two", "-1", "2.5", "1,"] {
            let e = parse_threads(bad).unwrap_err();
            assert!(
                e.starts_with("--threads: ") && e.contains("comma-separated list of positive integers"),
                "{bad:?}: {e}"
            );
        }
        assert!(parse_threads("0").unwrap_err().contains("0 is not a thread count"));
        assert!(parse_threads("x").unwrap_err().contains("\"x\" is not a number"));
        assert!(parse_threads("").unwrap_err().contains("empty entry"));
    }

    fn points() -> Vec<Point> {
        vec![
            Point::new("loops/static", "herd", 2, "us", &[2.0, 4.0, 3.0], false),
            Point::new("loops/static", "herd", 1, "us", &[5.0], false),
            Point::new("loops/static", "libgomp", 1, "us", &[10.0], false),
            Point::new("loops/static", "libgomp", 2, "us", &[6.0, 1.0], true),
            Point::new("loops/dynamic,64", "herd", 1, "us", &[1.0], false),
            Point::new("fib", "rayon", 4, "ms", &[8.0], false),
        ]
    }

    #[test]
    fn reshaping_into_figures_and_curves() {
        let f = figures(&points());
        assert_eq!(f.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["loops", "fib"]);
        let loops = &f[0].1;
        assert_eq!(
            loops.iter().map(|c| c.bench.as_str()).collect::<Vec<_>>(),
            ["loops/static", "loops/dynamic,64"]
        );
        let st = &loops[0];
        // Sorted by threads; the failed libgomp point is left out.
        assert_eq!(
            st.lines,
            vec![("herd".into(), vec![(1, 5.0), (2, 3.0)]), ("libgomp".into(), vec![(1, 10.0)])]
        );
        assert_eq!(st.threads(), [1, 2]);
        assert_eq!(st.herd_and_peers(), (Some("herd"), vec!["libgomp"]));
        assert_eq!(f[1].1[0].unit, "ms");
    }

    #[test]
    fn tables_show_values_and_herd_over_peers() {
        let md = section(&points());
        assert!(md.starts_with("### Thread sweep"));
        assert!(md.contains("#### `loops/static` (µs by threads)"), "{md}");
        assert!(md.contains("| threads | herd | libgomp | herd ÷ libgomp |"), "{md}");
        assert!(md.contains("| 1 | 5.00 | 10.0 | 0.500 |"), "{md}");
        assert!(md.contains("| 2 | 3.00 | – | – |"), "{md}");
        // No herd contender: no ratio column.
        assert!(md.contains("| threads | rayon |\n|---|---|\n| 4 | 8.00 |"), "{md}");
    }

    #[test]
    fn panels_choose_log_axes_and_charts_are_written() {
        let c = Curves {
            bench: "fib".into(),
            unit: "ms".into(),
            lines: vec![("herd".into(), vec![(1, 100.0), (16, 5.0)]), ("libgomp".into(), vec![(1, 400.0)])],
        };
        let l = panel(&c, |_| PALETTE[0]);
        assert!(l.log_x && l.log_y);
        let flat = Curves { lines: vec![("herd".into(), vec![(1, 1.0), (2, -0.5)])], ..c };
        let l = panel(&flat, |_| PALETTE[0]);
        assert!(!l.log_x && !l.log_y);
        let dir = std::env::temp_dir().join(format!("herd-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = write_charts(&dir, "t", "test", &points()).unwrap();
        let names: Vec<String> =
            files.iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect();
        assert_eq!(
            names,
            ["t-loops-threads.svg", "t-loops-threads.png", "t-fib-threads.svg", "t-fib-threads.png"]
        );
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(svg.contains("loops/dynamic,64") && svg.contains("libgomp"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
