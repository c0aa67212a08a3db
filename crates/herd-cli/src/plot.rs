//! Line charts of experiment results, side by side in one SVG or PNG file.

use crate::error::CliError;
use crate::CliResult;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error;
use std::path::Path;

/// The font family charts lay text out with (`herd_plot_font`).
pub const FONT_FAMILY: &str = herd_plot_font::FAMILY;
const PANEL_SIZE: (u32, u32) = (620, 520);
/// Line colours, distinct and readable on white.
pub const COLORS: [RGBColor; 8] = [
    RGBColor(213, 94, 0),
    RGBColor(0, 114, 178),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(230, 159, 0),
    RGBColor(120, 120, 120),
];

/// One named line.
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
}

/// One chart of the figure.
pub struct Panel {
    /// Title above the chart.
    pub title: String,
    /// Y axis description.
    pub y_desc: String,
    /// Logarithmic y axis (non-positive values are clamped to the smallest positive one).
    pub log_y: bool,
    /// The lines.
    pub series: Vec<Series>,
}

/// Output file format, from the file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Scalable vector graphics.
    Svg,
    /// A bitmap.
    Png,
}

impl Format {
    /// The format for `path`'s extension, once the chart font is
    /// registered (both formats measure text with it).
    pub fn of(path: &Path) -> CliResult<Format> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        let format = match ext.as_deref() {
            Some("svg") => Format::Svg,
            Some("png") => Format::Png,
            _ => {
                return Err(CliError::Usage(format!(
                    "--plot {}: the file name must end in .svg or .png",
                    path.display()
                )))
            }
        };
        herd_plot_font::register().map_err(|message| CliError::Plot { path: path.to_path_buf(), message })?;
        Ok(format)
    }
}

/// Draws `panels` side by side under `caption` into `path`.
pub fn draw(path: &Path, format: Format, caption: &str, x_desc: &str, panels: &[Panel]) -> CliResult {
    let size = (PANEL_SIZE.0 * panels.len().max(1) as u32, PANEL_SIZE.1 + 40);
    crate::error::create_parent(path)?;
    let result = match format {
        Format::Svg => draw_on(SVGBackend::new(path, size).into_drawing_area(), caption, x_desc, panels),
        Format::Png => draw_on(BitMapBackend::new(path, size).into_drawing_area(), caption, x_desc, panels),
    };
    result.map_err(|e| CliError::Plot { path: path.to_path_buf(), message: e.to_string() })
}

fn draw_on<DB>(
    root: DrawingArea<DB, Shift>,
    caption: &str,
    x_desc: &str,
    panels: &[Panel],
) -> Result<(), Box<dyn Error>>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let root = root.titled(caption, (FONT_FAMILY, 24))?;
    let areas = root.split_evenly((1, panels.len().max(1)));
    for (area, panel) in areas.iter().zip(panels) {
        draw_panel(area, x_desc, panel)?;
    }
    root.present()?;
    Ok(())
}

/// The range of the finite values of `it`, widened when degenerate.
fn bounds(it: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = it
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        (0.0, 1.0)
    } else if lo == hi {
        (lo - lo.abs().max(1.0) * 0.5, hi + hi.abs().max(1.0) * 0.5)
    } else {
        (lo, hi)
    }
}

fn draw_panel<DB>(area: &DrawingArea<DB, Shift>, x_desc: &str, panel: &Panel) -> Result<(), Box<dyn Error>>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let all = || panel.series.iter().flat_map(|s| s.points.iter());
    let (x_lo, x_hi) = bounds(all().map(|p| p.0).filter(|&x| x > 0.0));
    let (x_lo, x_hi) = (x_lo.max(f64::MIN_POSITIVE), x_hi);
    let floor = all().map(|p| p.1).filter(|&y| y > 0.0 && y.is_finite()).fold(f64::INFINITY, f64::min);
    let floor = if floor.is_finite() { floor } else { 1e-3 };
    let y_of = |y: f64| if panel.log_y { y.max(floor) } else { y };
    let (y_lo, y_hi) = bounds(all().map(|p| y_of(p.1)));

    let mut builder = ChartBuilder::on(area);
    builder.caption(&panel.title, (FONT_FAMILY, 20)).margin(12).x_label_area_size(40).y_label_area_size(60);
    let x_range = (x_lo * 0.9..x_hi * 1.1).log_scale().with_key_points(x_ticks(x_lo, x_hi));
    if panel.log_y {
        let mut chart = builder.build_cartesian_2d(x_range, (y_lo * 0.8..y_hi * 1.25).log_scale())?;
        configure_mesh(&mut chart, x_desc, &panel.y_desc)?;
        let corner = legend_corner(panel, (x_lo, x_hi), (y_lo, y_hi), &|y| y_of(y).ln());
        draw_series(&mut chart, panel, &y_of, corner)
    } else {
        let pad = (y_hi - y_lo) * 0.08;
        let y_lo = if y_lo >= 0.0 { (y_lo - pad).max(0.0) } else { y_lo - pad };
        let mut chart = builder.build_cartesian_2d(x_range, y_lo..y_hi + pad)?;
        configure_mesh(&mut chart, x_desc, &panel.y_desc)?;
        let corner = legend_corner(panel, (x_lo, x_hi), (y_lo, y_hi + pad), &|y| y);
        draw_series(&mut chart, panel, &y_of, corner)
    }
}

/// Axis labels for a logarithmic x axis over `[lo, hi]`: the powers of two
/// inside it (with their midpoints ×1.5 when there are few), or the ends.
fn x_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let pow2: Vec<f64> =
        (0..64).map(|e| 2f64.powi(e)).filter(|&v| v >= lo * 0.999 && v <= hi * 1.001).collect();
    let mut ticks = if pow2.len() >= 4 {
        pow2
    } else {
        let mut t: Vec<f64> = pow2.iter().flat_map(|&v| [v, v * 1.5]).filter(|&v| v <= hi * 1.001).collect();
        t.extend([lo, hi]);
        t
    };
    ticks.sort_by(f64::total_cmp);
    ticks.dedup_by(|a, b| (*a / *b - 1.0).abs() < 0.2);
    ticks
}

/// The corner of the plot area with the fewest data points near it, for the legend.
fn legend_corner(
    panel: &Panel,
    (x_lo, x_hi): (f64, f64),
    (y_lo, y_hi): (f64, f64),
    y_scale: &dyn Fn(f64) -> f64,
) -> SeriesLabelPosition {
    let norm = |v: f64, lo: f64, hi: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let pts: Vec<(f64, f64)> = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|&(x, y)| (norm(x.ln(), x_lo.ln(), x_hi.ln()), norm(y_scale(y), y_scale(y_lo), y_scale(y_hi))))
        .collect();
    let crowd = |right: bool, top: bool| {
        pts.iter()
            .filter(|&&(x, y)| {
                (if right { x > 0.6 } else { x < 0.4 }) && (if top { y > 0.55 } else { y < 0.45 })
            })
            .count()
    };
    [
        (SeriesLabelPosition::UpperRight, crowd(true, true)),
        (SeriesLabelPosition::UpperLeft, crowd(false, true)),
        (SeriesLabelPosition::LowerRight, crowd(true, false)),
        (SeriesLabelPosition::LowerLeft, crowd(false, false)),
    ]
    .into_iter()
    .min_by_key(|&(_, n)| n)
    .map_or(SeriesLabelPosition::UpperRight, |(c, _)| c)
}

fn configure_mesh<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    x_desc: &str,
    y_desc: &str,
) -> Result<(), Box<dyn Error>>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .label_style((FONT_FAMILY, 13))
        .draw()?;
    Ok(())
}

/// An axis label: no needless decimals.
fn tick(v: &f64) -> String {
    let a = v.abs();
    if a == 0.0 || a >= 10.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn draw_series<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    panel: &Panel,
    y_of: &dyn Fn(f64) -> f64,
    corner: SeriesLabelPosition,
) -> Result<(), Box<dyn Error>>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (i, s) in panel.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<(f64, f64)> =
            s.points.iter().map(|&(x, y)| (x, y_of(y))).filter(|p| p.1.is_finite()).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(&s.name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(corner)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT_FAMILY, 14))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(Format::of(Path::new("a.svg")).unwrap(), Format::Svg);
        assert!(Format::of(Path::new("a.pdf")).is_err());
    }

    #[test]
    fn degenerate_bounds() {
        assert_eq!(bounds([2.0, 5.0, f64::NAN].into_iter()), (2.0, 5.0));
        assert_eq!(bounds(std::iter::empty()), (0.0, 1.0));
        assert_eq!(bounds([4.0].into_iter()), (2.0, 6.0));
    }

    #[test]
    fn log_ticks() {
        assert_eq!(x_ticks(64.0, 2048.0), vec![64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0]);
        assert_eq!(x_ticks(64.0, 128.0), vec![64.0, 96.0, 128.0]);
    }
}
