//! Plots as SVG files (no system fonts or libraries needed): line charts and heat maps.
//!
//! The library produces the numbers; these functions only draw them. Every figure names its
//! axes and, where a convention matters (RoPE pairing, dtype), says which one in the title.

use std::path::Path;

use attnlab_core::chart::{Chart, ChartKind, ColourScale, Heatmap, LineChart};
use attnlab_core::{Error, Result};
use plotters::prelude::*;

/// The chart as an SVG document.
///
/// # Errors
/// Drawing fails (a chart that cannot be laid out).
pub fn render(chart: &Chart) -> Result<String> {
    let mut out = String::new();
    match &chart.kind {
        ChartKind::Line(l) => line_chart(&mut out, &chart.title, l)?,
        ChartKind::Heatmap(h) => heatmap(&mut out, &chart.title, h)?,
        ChartKind::Bar(b) => {
            // Until the bar renderer lands: one line per group over category indices.
            let l = LineChart {
                x_label: b.categories.join(" · "),
                y_label: b.y_label.clone(),
                series: b
                    .groups
                    .iter()
                    .map(|g| attnlab_core::chart::Series {
                        name: g.name.clone(),
                        points: g
                            .values
                            .iter()
                            .enumerate()
                            .map(|(i, &v)| (i as f64, v))
                            .collect(),
                        markers: true,
                    })
                    .collect(),
                log_y: b.log_y,
                h_lines: b.h_lines.clone(),
                ..Default::default()
            };
            line_chart(&mut out, &chart.title, &l)?
        }
    }
    Ok(out)
}

/// Writes the chart's SVG to `w`.
///
/// # Errors
/// Drawing or writing fails.
pub fn write(chart: &Chart, w: &mut dyn std::io::Write) -> Result<()> {
    let svg = render(chart)?;
    w.write_all(svg.as_bytes())
        .map_err(|e| Error::write_source(format!("chart {}", chart.name), e))
}

/// Writes the chart as an SVG file at `path` (parent folders are created).
///
/// # Errors
/// The file cannot be written.
pub fn write_file(path: &Path, chart: &Chart) -> Result<()> {
    ensure_parent(path)?;
    let svg = render(chart)?;
    std::fs::write(path, svg).map_err(|e| Error::write_source(path, e))
}

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(23, 190, 207),
];

fn plot_err(title: &str, e: impl std::fmt::Display) -> Error {
    Error::write(format!("chart {title:?}"), format!("cannot draw plot: {e}"))
}

fn ensure_parent(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| Error::write(dir, e))?;
        }
    }
    Ok(())
}

fn keep(chart: &LineChart, (x, y): (f64, f64)) -> bool {
    x.is_finite() && y.is_finite() && (!chart.log_x || x > 0.0) && (!chart.log_y || y > 0.0)
}

fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        if hi <= lo * 1.0001 {
            return (lo / 2.0, hi * 2.0);
        }
        (lo / 1.2, hi * 1.2)
    } else {
        let pad = if hi > lo {
            0.05 * (hi - lo)
        } else {
            lo.abs().max(1.0) * 0.5
        };
        (lo - pad, hi + pad)
    }
}

fn line_chart(out: &mut String, title: &str, chart: &LineChart) -> Result<()> {
    let path = title;
    let pts = || {
        chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|&p| keep(chart, p))
    };
    let (x0, x1) = range(pts().map(|p| p.0), chart.log_x);
    let (y0, y1) = range(
        pts().map(|p| p.1).chain(
            chart
                .h_lines
                .iter()
                .map(|h| h.at)
                .filter(|v| !chart.log_y || *v > 0.0),
        ),
        chart.log_y,
    );
    let root = SVGBackend::with_string(out, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    macro_rules! draw {
        ($xr:expr, $yr:expr) => {{
            let mut c = ChartBuilder::on(&root)
                .caption(title, ("sans-serif", 20))
                .margin(15)
                .x_label_area_size(45)
                .y_label_area_size(70)
                .build_cartesian_2d($xr, $yr)
                .map_err(|e| plot_err(path, e))?;
            c.configure_mesh()
                .x_desc(chart.x_label.as_str())
                .y_desc(chart.y_label.as_str())
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(|e| plot_err(path, e))?;
            for (i, s) in chart.series.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                let p: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|&p| keep(chart, p))
                    .collect();
                c.draw_series(LineSeries::new(p.clone(), color.stroke_width(2)))
                    .map_err(|e| plot_err(path, e))?
                    .label(s.name.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                    });
                if s.markers {
                    c.draw_series(p.iter().map(|&q| Circle::new(q, 3, color.filled())))
                        .map_err(|e| plot_err(path, e))?;
                }
            }
            for line in &chart.h_lines {
                let (v, label) = (line.at, &line.label);
                let color = RGBColor(120, 120, 120);
                c.draw_series(LineSeries::new(
                    vec![(x0, v), (x1, v)],
                    color.stroke_width(1),
                ))
                .map_err(|e| plot_err(path, e))?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(1))
                });
            }
            c.configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| plot_err(path, e))?;
        }};
    }
    match (chart.log_x, chart.log_y) {
        (false, false) => draw!(x0..x1, y0..y1),
        (true, false) => draw!((x0..x1).log_scale(), y0..y1),
        (false, true) => draw!(x0..x1, (y0..y1).log_scale()),
        (true, true) => draw!((x0..x1).log_scale(), (y0..y1).log_scale()),
    }
    root.present().map_err(|e| plot_err(path, e))?;
    Ok(())
}

fn heatmap(out: &mut String, title: &str, h: &Heatmap) -> Result<()> {
    let path = title;
    let values = ndarray::Array2::from_shape_fn(
        (h.values.len(), h.values.first().map_or(0, Vec::len)),
        |(r, c)| h.values[r].get(c).copied().unwrap_or(f64::NAN),
    );
    let (x_label, y_label) = (h.x_label.as_str(), h.y_label.as_str());
    let (rows, cols) = values.dim();
    let vmax = match h.scale {
        ColourScale::Diverging { max } | ColourScale::Sequential { max, .. } => max,
    }
    .max(f64::MIN_POSITIVE);
    let root = SVGBackend::with_string(out, (640, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let (rf, cf) = (rows.max(1) as f64, cols.max(1) as f64);
    let mut c = ChartBuilder::on(&root)
        .caption(format!("{title}  ({})", h.scale_note), ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..cf, 0.0..rf)
        .map_err(|e| plot_err(path, e))?;
    // Cell (r, col) covers x ∈ [col, col+1], y ∈ [rows−1−r, rows−r], so row 0 is at the top;
    // labels sit at cell centres and name the row/column index.
    let centre = |v: f64| (v - v.floor() - 0.5).abs() < 1e-9;
    // A cell's label: its entry in `labels` when the chart gives labels, else its index.
    let label = |labels: &[String], i: usize| labels.get(i).cloned().unwrap_or(i.to_string());
    let x_fmt = |v: &f64| {
        if centre(*v) {
            label(&h.col_labels, v.floor() as usize)
        } else {
            String::new()
        }
    };
    let y_fmt = |v: &f64| {
        if centre(*v) {
            label(&h.row_labels, rows - 1 - v.floor() as usize)
        } else {
            String::new()
        }
    };
    c.configure_mesh()
        .disable_mesh()
        .x_labels(2 * cols + 1)
        .y_labels(2 * rows + 1)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(|e| plot_err(path, e))?;
    let color = |v: f64| {
        let t = (v / vmax).clamp(-1.0, 1.0);
        let w = |a: f64| (255.0 * (1.0 - a)) as u8;
        if t >= 0.0 {
            RGBColor(255, w(t), w(t))
        } else {
            RGBColor(w(-t), w(-t), 255)
        }
    };
    c.draw_series(values.indexed_iter().map(|((r, col), &v)| {
        let y = (rows - 1 - r) as f64;
        Rectangle::new(
            [(col as f64, y), (col as f64 + 1.0, y + 1.0)],
            color(v).filled(),
        )
    }))
    .map_err(|e| plot_err(path, e))?;
    root.present().map_err(|e| plot_err(path, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_core::chart::{RefLine, Series};

    #[test]
    fn renders_an_svg_with_the_title_and_series() {
        let chart = Chart {
            name: "plot".into(),
            title: "cos(s·π/2)".into(),
            kind: ChartKind::Line(LineChart {
                x_label: "separation".into(),
                y_label: "score".into(),
                series: vec![Series {
                    name: "ω = π/2".into(),
                    points: (0..5)
                        .map(|s| (s as f64, (s as f64 * std::f64::consts::FRAC_PI_2).cos()))
                        .collect(),
                    markers: true,
                }],
                h_lines: vec![RefLine {
                    at: 0.0,
                    label: "zero".into(),
                }],
                ..Default::default()
            }),
        };
        let svg = render(&chart).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("separation") && svg.contains("ω = π/2"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/plot.svg");
        write_file(&path, &chart).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), svg);
        let hm = Chart {
            name: "hm".into(),
            title: "weights".into(),
            kind: ChartKind::Heatmap(Heatmap {
                values: vec![vec![1.0, -0.5], vec![0.0, 0.25]],
                row_labels: vec![],
                col_labels: vec![],
                x_label: "key".into(),
                y_label: "query".into(),
                scale: ColourScale::Diverging { max: 1.0 },
                scale_note: "|max| = 1".into(),
                highlight_rows: vec![],
            }),
        };
        assert!(render(&hm).unwrap().contains("<rect"));
    }
}
