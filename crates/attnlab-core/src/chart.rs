//! Chart specifications derived from reports: what to draw (series, matrices, reference lines,
//! labels), never how. `attnlab-render` turns a [`Chart`] into SVG; the web page can draw the
//! same specification (it serialises to JSON).

use serde::Serialize;

/// One chart, with the file stem front ends save it under (`wavelengths` → `wavelengths.svg`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chart {
    /// File stem, unique within one report's charts.
    pub name: String,
    /// Title above the plot (conventions such as the dtype or the pairing layout belong here).
    pub title: String,
    /// What is drawn.
    pub kind: ChartKind,
}

/// The kinds of chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChartKind {
    /// Curves over shared numeric axes.
    Line(LineChart),
    /// A matrix as coloured cells.
    Heatmap(Heatmap),
    /// Values for named categories (a comparison, not a curve).
    Bar(BarChart),
}

/// One named curve of a [`LineChart`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// (x, y) points, drawn in order. Non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
    /// Draw markers at the points as well as the line.
    pub markers: bool,
}

/// A labelled reference line at a value (a tolerance, a context length, zero).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefLine {
    /// Where: a y value for horizontal lines, an x value for vertical ones.
    pub at: f64,
    /// Its label.
    pub label: String,
}

/// Curves over shared axes.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct LineChart {
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// The curves.
    pub series: Vec<Series>,
    /// Logarithmic x axis (points with x ≤ 0 are skipped).
    pub log_x: bool,
    /// Logarithmic y axis (points with y ≤ 0 are skipped).
    pub log_y: bool,
    /// Horizontal reference lines.
    pub h_lines: Vec<RefLine>,
    /// Vertical reference lines.
    pub v_lines: Vec<RefLine>,
    /// Points to mark individually (e.g. the first repeat), with labels.
    pub marks: Vec<Mark>,
}

/// A labelled point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mark {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// Label drawn next to it.
    pub label: String,
}

/// How the colours of a heat map map to values.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "scale", rename_all = "snake_case")]
pub enum ColourScale {
    /// Diverging blue–white–red, symmetric about 0, saturating at ±`max`.
    Diverging {
        /// The magnitude drawn at full colour.
        max: f64,
    },
    /// Sequential white → blue from `min` to `max` (weights in [0, 1]).
    Sequential {
        /// Lowest value.
        min: f64,
        /// Highest value.
        max: f64,
    },
}

/// A matrix as coloured cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Heatmap {
    /// Row-major values.
    pub values: Vec<Vec<f64>>,
    /// Row labels (top to bottom); empty for indices.
    pub row_labels: Vec<String>,
    /// Column labels; empty for indices.
    pub col_labels: Vec<String>,
    /// x-axis (column) label.
    pub x_label: String,
    /// y-axis (row) label.
    pub y_label: String,
    /// The colour scale, and what it is relative to.
    pub scale: ColourScale,
    /// What the colour scale is relative to, said on the chart (e.g. "colour saturates at the
    /// tolerance 5.4e-14").
    pub scale_note: String,
    /// Rows to highlight (e.g. the rows a permutation moved).
    pub highlight_rows: Vec<usize>,
}

impl Heatmap {
    /// Cells are small enough to print their values (n ≤ 12 rows and columns).
    pub fn shows_values(&self) -> bool {
        self.values.len() <= 12 && self.values.first().is_none_or(|r| r.len() <= 12)
    }
}

/// Values for named categories, in groups (one bar per category and group).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BarChart {
    /// The categories along x.
    pub categories: Vec<String>,
    /// One named group of values per legend entry (each as long as `categories`).
    pub groups: Vec<Series1>,
    /// y-axis label.
    pub y_label: String,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Horizontal reference lines.
    pub h_lines: Vec<RefLine>,
}

/// A named list of values (one per category of a [`BarChart`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series1 {
    /// Legend entry.
    pub name: String,
    /// One value per category.
    pub values: Vec<f64>,
}
