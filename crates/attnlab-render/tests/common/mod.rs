//! Small charts of each kind, shared by the snapshot and rasterising tests.

use attnlab_core::chart::{
    BarChart, Chart, ChartKind, ColourScale, Heatmap, LineChart, Mark, RefLine, Series, Series1,
};

/// A small line chart: two series, a reference line each way, a mark.
pub fn line_chart() -> Chart {
    Chart {
        name: "scores".into(),
        title: "RoPE positional score vs separation (aligned unit vectors)".into(),
        kind: ChartKind::Line(LineChart {
            x_label: "separation s = j − i".into(),
            y_label: "score".into(),
            series: vec![
                Series {
                    name: "ω = π/2".into(),
                    points: (0..=4)
                        .map(|s| (s as f64, (s as f64 * std::f64::consts::FRAC_PI_2).cos()))
                        .collect(),
                    markers: true,
                },
                Series {
                    name: "ω = 1".into(),
                    points: (0..=4).map(|s| (s as f64, (s as f64).cos())).collect(),
                    markers: false,
                },
            ],
            h_lines: vec![RefLine {
                at: 1.0,
                label: "score at s = 0".into(),
            }],
            v_lines: vec![RefLine {
                at: 3.0,
                label: "context 3".into(),
            }],
            marks: vec![Mark {
                x: 4.0,
                y: 1.0,
                label: "first repeat".into(),
            }],
            ..Default::default()
        }),
    }
}

/// A small grouped bar chart on a log axis with a reference line.
pub fn bar_chart() -> Chart {
    Chart {
        name: "symmetry_breakers".into(),
        title: "error / tolerance per variant".into(),
        kind: ChartKind::Bar(BarChart {
            categories: vec!["f64 bare".into(), "RNN".into(), "RoPE".into()],
            groups: vec![
                Series1 {
                    name: "n = 4".into(),
                    values: vec![0.01, 300.0, 2e5],
                },
                Series1 {
                    name: "n = 8".into(),
                    values: vec![0.02, 500.0, 1e6],
                },
            ],
            y_label: "margin (log; < 1 holds)".into(),
            log_y: true,
            h_lines: vec![RefLine {
                at: 1.0,
                label: "tolerance".into(),
            }],
        }),
    }
}

/// A small heat map of round-off differences on a scale saturating at a tolerance.
pub fn heatmap() -> Chart {
    Chart {
        name: "difference".into(),
        title: "Attn(ΠH) − Π Attn(H), entry by entry".into(),
        kind: ChartKind::Heatmap(Heatmap {
            values: vec![vec![0.0, 1.1e-16, -2.2e-16], vec![5.6e-17, 0.0, 4e-14]],
            row_labels: vec![],
            col_labels: vec![],
            x_label: "column".into(),
            y_label: "row".into(),
            scale: ColourScale::Diverging { max: 5.4e-14 },
            scale_note: "colour saturates at the tolerance 5.4e-14".into(),
            highlight_rows: vec![1],
        }),
    }
}
