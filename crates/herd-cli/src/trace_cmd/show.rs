//! `herd trace show`: a timeline, one row per worker, a bar per step or span.

use super::model::{self, Source, Trace};
use crate::error::CliError;
use crate::plot::{Format, COLORS, FONT_FAMILY};
use crate::CliResult;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error;
use std::path::{Path, PathBuf};

/// Arguments of `herd trace show`.
#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// The trace file (herd-flow or HERD_TRACE JSON).
    file: PathBuf,
    /// The chart, .svg or .png [default: FILE.svg].
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Chart width in pixels.
    #[arg(long, value_name = "PX", default_value_t = 1200, value_parser = clap::value_parser!(u32).range(200..=20000))]
    width: u32,
}

/// Height of one row, pixels.
const ROW_PX: u32 = 26;
/// Room for the title, the time axis and the legend, pixels.
const FRAME_PX: u32 = 130;
/// Lane colour: what shows through where a worker is idle.
const LANE: RGBColor = RGBColor(235, 235, 235);
/// The most rows drawn (a chart about 53,000 pixels high); a trace with more
/// is refused rather than drawn on gigabytes.
pub const MAX_ROWS: usize = 2048;
/// Row labels and legend entries longer than this many characters are cut.
const MAX_LABEL: usize = 40;

/// `s`, cut to [`MAX_LABEL`] characters.
fn label(s: &str) -> String {
    match s.char_indices().nth(MAX_LABEL) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// Runs `herd trace show`.
pub fn run(args: &ShowArgs) -> CliResult {
    let trace = model::load(&args.file)?;
    let out = args.output.clone().unwrap_or_else(|| {
        let mut name = args.file.clone().into_os_string();
        name.push(".svg");
        PathBuf::from(name)
    });
    let format = Format::of(&out).map_err(|e| match e {
        CliError::Usage(_) => {
            CliError::Usage(format!("-o {}: the file name must end in .svg or .png", out.display()))
        }
        e => e,
    })?;
    let title = title(&trace, &args.file);
    draw(&trace, &title, &out, format, args.width).map_err(|e| match e {
        CliError::Usage(m) => CliError::Usage(format!("{}: {m}", args.file.display())),
        e => e,
    })?;
    println!("wrote {}", out.display());
    Ok(())
}

fn title(trace: &Trace, file: &Path) -> String {
    let name = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into());
    let (lo, hi) = trace.extent();
    let what = match (&trace.source, &trace.graph) {
        (Source::Flow, Some(g)) => format!("graph {}, {} steps", label(g), trace.steps.len()),
        (Source::Flow, None) => format!("{} steps", trace.steps.len()),
        (Source::Herd, _) => format!("{} spans", trace.spans.len()),
    };
    format!("{name}: {what}, {} rows, {:.3} ms", trace.rows.len(), (hi - lo) * 1e-3)
}

/// The span names in legend order, each with its colour.
fn legend(trace: &Trace) -> Vec<(&str, RGBColor)> {
    let mut names: Vec<&str> = trace.spans.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter().enumerate().map(|(i, n)| (n, COLORS[i % COLORS.len()])).collect()
}

/// The steps on the critical path (none for a HERD_TRACE file or a cyclic graph).
fn critical_steps(trace: &Trace) -> Vec<usize> {
    trace.critical_path().map(|cp| cp.nodes).unwrap_or_default()
}

/// Draws the timeline of `trace` into `path`.
pub(super) fn draw(trace: &Trace, title: &str, path: &Path, format: Format, width: u32) -> CliResult {
    if trace.rows.is_empty() {
        return Err(CliError::Usage("the trace has no row to draw".into()));
    }
    if trace.rows.len() > MAX_ROWS {
        return Err(CliError::Usage(format!(
            "{} rows (threads or workers) are too many to draw, at most {MAX_ROWS}; \
             herd trace analyze reads any number",
            trace.rows.len()
        )));
    }
    let size = (width, FRAME_PX + ROW_PX * trace.rows.len() as u32);
    crate::error::create_parent(path)?;
    let result = match format {
        Format::Svg => draw_on(SVGBackend::new(path, size).into_drawing_area(), trace, title),
        Format::Png => draw_on(BitMapBackend::new(path, size).into_drawing_area(), trace, title),
    };
    result.map_err(|e| CliError::Plot { path: path.to_path_buf(), message: e.to_string() })
}

fn draw_on<DB>(root: DrawingArea<DB, Shift>, trace: &Trace, title: &str) -> Result<(), Box<dyn Error>>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let root = root.titled(title, (FONT_FAMILY, 18))?;
    let (chart_area, legend_area) = root.split_vertically(root.dim_in_pixel().1.saturating_sub(34));
    let n = trace.rows.len();
    let (lo, hi) = trace.extent();
    let t_max = ((hi - lo) * 1e-3).max(1e-6);
    // Row r spans y in [n-1-r, n-r] (in hundredths, as integers so that the
    // labels can sit at the row centres), so that row 0 is on top.
    const H: i32 = 100;
    let y_of = |r: usize, frac: f64| (n - 1 - r) as i32 * H + (frac * H as f64).round() as i32;
    let centres: Vec<i32> = (0..n).map(|r| y_of(r, 0.5)).collect();
    let label_px =
        trace.rows.iter().map(|r| r.chars().count().min(MAX_LABEL + 1)).max().unwrap_or(0) as u32 * 7 + 12;
    let mut chart = ChartBuilder::on(&chart_area)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(label_px)
        .build_cartesian_2d(0.0..t_max, (0..n as i32 * H).with_key_points(centres))?;
    let row_label =
        |y: &i32| trace.rows.get(n - 1 - (*y / H).clamp(0, n as i32 - 1) as usize).map(|r| label(r));
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("time (ms)")
        .y_label_formatter(&|y| row_label(y).unwrap_or_default())
        .label_style((FONT_FAMILY, 13))
        .draw()?;
    chart.draw_series(
        (0..n).map(|r| Rectangle::new([(0.0, y_of(r, 0.1)), (t_max, y_of(r, 0.9))], LANE.filled())),
    )?;
    let colours = legend(trace);
    let colour = |name: &str| colours.iter().find(|c| c.0 == name).map_or(BLACK, |c| c.1);
    let corners = |s: &model::Span| {
        let inset = (0.12 + 0.1 * s.depth as f64).min(0.4);
        let (x0, x1) = ((s.start - lo) * 1e-3, (s.end() - lo) * 1e-3);
        [(x0, y_of(s.row, inset)), (x1, y_of(s.row, 1.0 - inset))]
    };
    chart.draw_series(trace.spans.iter().map(|s| Rectangle::new(corners(s), colour(&s.name).filled())))?;
    // Thin white edges keep neighbouring steps of one collection apart.
    chart.draw_series(trace.spans.iter().map(|s| Rectangle::new(corners(s), WHITE.stroke_width(1))))?;
    // The critical path, outlined (herd-flow spans are the steps, in order).
    let on_path = critical_steps(trace);
    chart.draw_series(
        on_path.iter().map(|&i| Rectangle::new(corners(&trace.spans[i]), BLACK.stroke_width(2))),
    )?;
    let mut x = 20;
    for (name, c) in &colours {
        legend_area.draw(&Rectangle::new([(x, 8), (x + 14, 22)], c.filled()))?;
        let name = label(name);
        legend_area.draw(&Text::new(name.clone(), (x + 20, 8), (FONT_FAMILY, 14)))?;
        x = x.saturating_add(40 + 8 * name.chars().count() as i32);
    }
    if !on_path.is_empty() {
        legend_area.draw(&Rectangle::new([(x, 8), (x + 14, 22)], BLACK.stroke_width(2)))?;
        legend_area.draw(&Text::new("critical path", (x + 20, 8), (FONT_FAMILY, 14)))?;
    }
    root.present()?;
    Ok(())
}
