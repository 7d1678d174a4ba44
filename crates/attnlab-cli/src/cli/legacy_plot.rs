//! TRANSITIONAL (deleted once every command derives its charts in the core): the old
//! path-based plotting calls, implemented on the core's chart specification.

use std::path::Path;

pub use attnlab_core::chart::Series;
use attnlab_core::chart::{Chart, ChartKind, ColourScale, Heatmap, RefLine};

/// The old line-chart description (title inside).
#[derive(Debug, Clone, Default)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub log_x: bool,
    pub log_y: bool,
    pub h_lines: Vec<(f64, String)>,
}

pub fn line_chart(path: &Path, c: &LineChart) -> attnlab_core::Result<()> {
    let chart = Chart {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        title: c.title.clone(),
        kind: ChartKind::Line(attnlab_core::chart::LineChart {
            x_label: c.x_label.clone(),
            y_label: c.y_label.clone(),
            series: c.series.clone(),
            log_x: c.log_x,
            log_y: c.log_y,
            h_lines: c
                .h_lines
                .iter()
                .map(|(at, label)| RefLine {
                    at: *at,
                    label: label.clone(),
                })
                .collect(),
            ..Default::default()
        }),
    };
    attnlab_render::svg::write_file(path, &chart)
}

pub fn heatmap(
    path: &Path,
    title: &str,
    values: &ndarray::Array2<f64>,
    x_label: &str,
    y_label: &str,
) -> attnlab_core::Result<()> {
    let max = values
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let chart = Chart {
        name: String::new(),
        title: title.into(),
        kind: ChartKind::Heatmap(Heatmap {
            values: values.rows().into_iter().map(|r| r.to_vec()).collect(),
            row_labels: vec![],
            col_labels: vec![],
            x_label: x_label.into(),
            y_label: y_label.into(),
            scale: ColourScale::Diverging { max },
            scale_note: format!("|max| = {}", attnlab_core::present::number::sci(max)),
            highlight_rows: vec![],
        }),
    };
    attnlab_render::svg::write_file(path, &chart)
}
