//! Charts as SVG documents, written directly (no plotting library, no fonts, no system
//! libraries): line charts, grouped bar charts and heat maps with a colour bar.
//!
//! The library produces the numbers; these functions only draw the core's
//! [`Chart`] specifications. SVG cannot measure text, so every layout decision
//! (margins, title wrapping, tick density, label rotation, legend placement) is made from a
//! width model of the chart font ([`text`]): titles wrap onto two lines and shrink before they
//! would run past the canvas, margins grow to the widest tick label, labels never overlap.
//! Tick values are 1-2-5 steps or decades labelled through the core's number formatter
//! (`attnlab_core::present::number`).
//!
//! ```
//! use attnlab_core::chart::{Chart, ChartKind, LineChart, Series};
//! let chart = Chart {
//!     name: "demo".into(),
//!     title: "cos(s·π/2)".into(),
//!     kind: ChartKind::Line(LineChart {
//!         x_label: "separation s".into(),
//!         y_label: "score".into(),
//!         series: vec![Series {
//!             name: "ω = π/2".into(),
//!             points: (0..5).map(|s| (s as f64, (s as f64 * std::f64::consts::FRAC_PI_2).cos())).collect(),
//!             markers: true,
//!         }],
//!         ..Default::default()
//!     }),
//! };
//! let svg = attnlab_render::svg::render(&chart).unwrap();
//! assert!(svg.starts_with("<svg") && svg.contains("<title>cos(s·π/2)</title>"));
//! ```

use std::path::Path;

use attnlab_core::chart::{Chart, ChartKind};
use attnlab_core::{Error, Result};

mod axis;
mod bar;
mod colour;
mod geom;
mod heatmap;
mod legend;
mod line;
mod text;
mod ticks;
mod writer;

/// Canvas width of line and bar charts, px.
const WIDTH: f64 = 800.0;
/// Canvas height of line and bar charts, px.
const HEIGHT: f64 = 500.0;
/// Empty border kept around everything drawn.
const PAD: f64 = 14.0;
/// Chart title size (shrinks to [`TITLE_MIN`] before a third line is used).
const TITLE_SIZE: f64 = 17.0;
/// Smallest chart title size.
const TITLE_MIN: f64 = 11.0;
/// Axis titles.
const LABEL_SIZE: f64 = 13.0;
/// Tick labels and category labels.
const TICK_SIZE: f64 = 12.0;
/// Legend entries.
const LEGEND_SIZE: f64 = 12.0;
/// The note under a title (what a colour scale is relative to).
const NOTE_SIZE: f64 = 12.0;
/// Labels of reference lines and marks, values in cells and over bars.
const SMALL_SIZE: f64 = 11.0;
/// Length of a tick mark.
const TICK_LEN: f64 = 5.0;
/// Space between a label and what it labels.
const GAP: f64 = 4.0;
/// Text.
const INK: &str = "#222";
/// Secondary text and reference lines.
const MUTED: &str = "#555";
/// Axis lines and ticks.
const AXIS: &str = "#444";
/// Grid lines.
const GRID: &str = "#e6e6e6";

/// The chart as an SVG document.
///
/// # Errors
/// None today (every chart specification can be drawn; an empty one draws "no data"); the
/// `Result` leaves room for limits on absurd sizes.
pub fn render(chart: &Chart) -> Result<String> {
    Ok(match &chart.kind {
        ChartKind::Line(l) => line::render(chart, l),
        ChartKind::Heatmap(h) => heatmap::render(chart, h),
        ChartKind::Bar(b) => bar::render(chart, b),
    })
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
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| Error::write(dir, e))?;
        }
    }
    let svg = render(chart)?;
    std::fs::write(path, svg).map_err(|e| Error::write_source(path, e))
}

/// The chart title (and an optional note under it) fitted to a canvas `width` wide.
struct Heading {
    title: text::Block,
    note: text::Block,
}

impl Heading {
    fn new(title: &str, note: &str, width: f64) -> Self {
        let w = width - 2.0 * PAD;
        Heading {
            title: text::fit(title, w, TITLE_SIZE, TITLE_MIN, 2),
            note: text::fit(note, w, NOTE_SIZE, 10.0, 2),
        }
    }

    /// Where the drawing below the heading may start.
    fn bottom(&self) -> f64 {
        let note = if self.note.is_empty() {
            0.0
        } else {
            GAP + self.note.height()
        };
        PAD + self.title.height() + note + 12.0
    }

    fn draw(&self, svg: &mut writer::Svg, width: f64) {
        axis::centred_block(svg, &self.title, 0.5 * width, PAD, INK);
        let top = PAD + self.title.height() + GAP;
        axis::centred_block(svg, &self.note, 0.5 * width, top, MUTED);
    }
}

/// An id for the chart's clip path (letters, digits, `-` and `_` of its name), so several
/// charts can sit in one page.
fn clip_id(chart: &Chart) -> String {
    let name: String = chart
        .name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    format!("attnlab-plot-{name}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_core::chart::{ColourScale, Heatmap, LineChart, RefLine, Series};

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
        let mut buf = Vec::new();
        write(&chart, &mut buf).unwrap();
        assert_eq!(String::from_utf8(buf).unwrap(), svg);
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
        let svg = render(&hm).unwrap();
        assert!(svg.contains("<rect") && svg.contains("|max| = 1") && svg.contains(">-0.5<"));
    }

    #[test]
    fn clip_ids_keep_only_safe_characters() {
        let c = Chart {
            name: "a b\"<c>_1".into(),
            title: String::new(),
            kind: ChartKind::Line(LineChart::default()),
        };
        assert_eq!(clip_id(&c), "attnlab-plot-abc_1");
    }
}
