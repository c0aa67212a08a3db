//! The drivers' charts (plotters): grouped bars on a log axis ([`Bars`],
//! used by `omp-compare` and `tasks`) and lines ([`Lines`], used by
//! `arraywalk` and the thread sweeps of [`crate::sweep`]), as panels in one
//! SVG — stacked ([`draw`]) or in a grid ([`draw_grid`]) — or PNG when the
//! file name ends in `.png`.

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

const FONT: &str = herd_plot_font::FAMILY;

/// Series colours, distinct and readable on white (Okabe–Ito).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(213, 94, 0),
    RGBColor(120, 120, 120),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// Grouped bars on a log y axis: groups (x labels) × series.
pub struct Bars<'a> {
    /// Title above the panel.
    pub title: String,
    /// Y axis description.
    pub y_desc: &'a str,
    /// One x label per group.
    pub groups: Vec<String>,
    /// (series name, colour, one value per group; `None`: no bar).
    pub series: Vec<(&'a str, RGBColor, Vec<Option<f64>>)>,
    /// Horizontal reference lines: (y, label); the first is drawn thin and black, the others red.
    pub lines: Vec<(f64, String)>,
}

/// A line: name, colour, (x, y) points in x order.
pub type Series = (String, RGBColor, Vec<(f64, f64)>);

/// Lines over a numeric x axis.
pub struct Lines<'a> {
    /// Title above the panel.
    pub title: String,
    /// X axis description.
    pub x_desc: &'a str,
    /// Y axis description.
    pub y_desc: &'a str,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis (only the positive values are drawn); otherwise
    /// linear from 0.
    pub log_y: bool,
    /// The lines.
    pub series: Vec<Series>,
    /// Vertical reference lines: (x, label).
    pub marks: Vec<(f64, String)>,
}

/// One panel of a figure.
pub enum Panel<'a> {
    /// Grouped bars.
    Bars(Bars<'a>),
    /// Lines.
    Lines(Lines<'a>),
}

/// Draws `panels`, stacked, under `caption` into `path` (`width` pixels
/// wide, `panel_height` per panel): SVG, or PNG when the name ends in `.png`.
pub fn draw(
    path: &Path,
    caption: &str,
    width: u32,
    panel_height: u32,
    panels: &[Panel],
) -> Result<(), String> {
    draw_grid(path, caption, width, panel_height, 1, panels)
}

/// [`draw`] with the panels in `columns` columns, row by row (`width` is the
/// whole figure's).
pub fn draw_grid(
    path: &Path,
    caption: &str,
    width: u32,
    panel_height: u32,
    columns: usize,
    panels: &[Panel],
) -> Result<(), String> {
    herd_plot_font::register()?;
    let columns = columns.clamp(1, panels.len().max(1));
    let rows = panels.len().max(1).div_ceil(columns);
    let size = (width, panel_height * rows as u32 + 40);
    let result = if path.extension().is_some_and(|e| e == "png") {
        draw_panels(&BitMapBackend::new(path, size).into_drawing_area(), panels, caption, (rows, columns))
    } else {
        draw_panels(&SVGBackend::new(path, size).into_drawing_area(), panels, caption, (rows, columns))
    };
    result.map_err(|e| format!("{}: {e}", path.display()))
}

fn draw_panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    panels: &[Panel],
    caption: &str,
    grid: (usize, usize),
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let root = root.titled(caption, (FONT, 22))?;
    let areas = root.split_evenly(grid);
    for (area, panel) in areas.iter().zip(panels) {
        match panel {
            Panel::Bars(b) => draw_bars(area, b)?,
            Panel::Lines(l) => draw_lines(area, l)?,
        }
    }
    root.present()?;
    Ok(())
}

/// Axis labels: no exponent for ordinary magnitudes.
fn axis_label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 10.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else if a >= 0.01 {
        format!("{v:.2}")
    } else {
        format!("{v:.0e}")
    }
}

/// The positive finite values' range.
fn positive_range(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = vals
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    (lo <= hi).then_some((lo, hi))
}

fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    b: &Bars,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let vals = b.series.iter().flat_map(|(_, _, v)| v.iter().flatten().copied());
    // Headroom above the bars for the legend.
    let (lo, hi) = positive_range(vals.chain(b.lines.iter().map(|(y, _)| *y)))
        .map_or((0.01, 10.0), |(lo, hi)| (lo / 2.0, hi * 12.0));
    // Group i is centred on x = i; the axis's key points are the integers
    // (at most n + 1 labels over a range of length n: plotters steps by 1).
    let n = b.groups.len().max(1);
    let groups = b.groups.clone();
    let label = move |x: &f64| {
        let i = x.round();
        if i >= 0.0 && (i as usize) < groups.len() && (x - i).abs() < 1e-6 {
            groups[i as usize].clone()
        } else {
            String::new()
        }
    };
    let mut chart = ChartBuilder::on(area)
        .caption(&b.title, (FONT, 17))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5f64..n as f64 - 0.5, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&label)
        .y_desc(b.y_desc)
        .y_label_formatter(&|v| axis_label(*v))
        .label_style((FONT, 13))
        .draw()?;
    let k = b.series.len().max(1) as f64;
    let w = 0.8 / k;
    for (si, (name, colour, values)) in b.series.iter().enumerate() {
        let colour = *colour;
        let bars = values.iter().enumerate().filter_map(|(gi, v)| {
            v.filter(|v| *v > 0.0 && v.is_finite()).map(|v| {
                let x0 = gi as f64 - 0.4 + si as f64 * w;
                Rectangle::new([(x0, lo), (x0 + w * 0.92, v)], colour.filled())
            })
        });
        chart
            .draw_series(bars)?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    for (i, (y, text)) in b.lines.iter().enumerate() {
        let style = if i == 0 { BLACK.stroke_width(1) } else { RGBColor(200, 0, 0).stroke_width(2) };
        chart
            .draw_series(LineSeries::new([(-0.5, *y), (n as f64 - 0.5, *y)], style))?
            .label(text.clone())
            .legend(move |(x, yy)| PathElement::new([(x, yy), (x + 12, yy)], style));
    }
    legend(&mut chart)
}

/// The legend box of every chart here: upper right, on a translucent white background.
fn legend<'a, DB, CT>(chart: &mut ChartContext<'a, DB, CT>) -> Result<(), Box<dyn std::error::Error>>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 13))
        .draw()?;
    Ok(())
}

fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    l: &Lines,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let points = || l.series.iter().flat_map(|(_, _, p)| p.iter().copied());
    let (x_lo, x_hi) =
        positive_range(points().map(|p| p.0).chain(l.marks.iter().map(|m| m.0))).unwrap_or((1.0, 10.0));
    let finite_y = || points().map(|p| p.1).filter(|y| y.is_finite());
    let y_hi = finite_y().fold(0.0f64, f64::max);
    // Linear y: from 0, or below it when a value is negative (e.g. an overhead within noise).
    let y_range = finite_y().fold(0.0f64, f64::min) * 1.25..(y_hi * 1.25).max(1e-9);
    // Log y: the positive values' range with some room (the legend goes above).
    let (y_lo_log, y_hi_log) =
        positive_range(points().map(|p| p.1)).map_or((0.1, 10.0), |(lo, hi)| (lo / 1.6, hi * 2.5));
    let drawable = |p: &(f64, f64)| p.1.is_finite() && (!l.log_y || p.1 > 0.0);
    // Whole-number x values (thread counts): whole-number ticks only.
    let integer_x = points().all(|p| p.0.fract() == 0.0);
    let x_label = |v: &f64| match integer_x {
        true if (v - v.round()).abs() < 1e-9 => format!("{}", v.round()),
        true => String::new(),
        false => axis_label(*v),
    };
    let x_ticks = if integer_x && !l.log_x { (x_hi - x_lo) as usize + 1 } else { 10 }.clamp(2, 16);
    let mut builder = ChartBuilder::on(area);
    builder.caption(&l.title, (FONT, 17)).margin(12).x_label_area_size(40).y_label_area_size(64);
    // Every branch draws the same way; only the coordinate types differ.
    macro_rules! plot {
        ($chart:expr, $y_lo:expr, $y_hi:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(l.x_desc)
                .y_desc(l.y_desc)
                .x_labels(x_ticks)
                .y_labels(if l.log_y { 16 } else { 10 })
                .x_label_formatter(&x_label)
                .y_label_formatter(&|v| axis_label(*v))
                .label_style((FONT, 13))
                .draw()?;
            for (name, colour, pts) in &l.series {
                let colour = *colour;
                let pts: Vec<(f64, f64)> = pts.iter().copied().filter(drawable).collect();
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(2)))?
                    .label(name.clone())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], colour.stroke_width(2)));
                chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
            }
            for (x, text) in &l.marks {
                let style = RGBColor(200, 0, 0).stroke_width(1);
                chart
                    .draw_series(LineSeries::new([(*x, $y_lo), (*x, $y_hi)], style))?
                    .label(text.clone())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], style));
            }
            legend(&mut chart)?;
        }};
    }
    let log_y = (y_lo_log..y_hi_log).log_scale();
    // Linear x: a margin so that the end points are not on the frame.
    let pad = ((x_hi - x_lo) * 0.05).max(0.05);
    let x_lin = x_lo - pad..x_hi + pad;
    match (l.log_x, l.log_y) {
        (true, true) => plot!(
            builder.build_cartesian_2d((x_lo / 1.2..x_hi * 1.2).log_scale(), log_y)?,
            y_lo_log,
            y_hi_log
        ),
        (true, false) => plot!(
            builder.build_cartesian_2d((x_lo / 1.2..x_hi * 1.2).log_scale(), y_range.clone())?,
            y_range.start,
            y_range.end
        ),
        (false, true) => plot!(builder.build_cartesian_2d(x_lin, log_y)?, y_lo_log, y_hi_log),
        (false, false) => {
            plot!(builder.build_cartesian_2d(x_lin, y_range.clone())?, y_range.start, y_range.end)
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_bars_and_lines() {
        let dir = std::env::temp_dir().join(format!("herd-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.svg");
        let panels = [
            Panel::Bars(Bars {
                title: "bars".into(),
                y_desc: "x",
                groups: vec!["a".into(), "b".into()],
                series: vec![("s", PALETTE[0], vec![Some(1.5), None])],
                lines: vec![(1.0, "one".into())],
            }),
            Panel::Lines(Lines {
                title: "lines".into(),
                x_desc: "MiB",
                y_desc: "GB/s",
                log_x: true,
                log_y: false,
                series: vec![("t".into(), PALETTE[1], vec![(1.0, 2.0), (4.0, 3.0)])],
                marks: vec![(2.0, "LLC".into())],
            }),
        ];
        draw(&path, "test", 600, 300, &panels).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("<svg") && svg.contains("LLC"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
