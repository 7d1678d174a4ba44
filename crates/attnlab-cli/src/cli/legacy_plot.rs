//! TRANSITIONAL (deleted once every command derives its charts in the core): the old
//! path-based plotting calls, implemented on the core's chart specification.

use std::path::Path;

pub use attnlab_core::chart::Series;
use attnlab_core::chart::{Chart, ChartKind, RefLine};

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
