//! The charts, rasterised: every text run lies inside the canvas and overlaps no other.
//!
//! The SVGs are laid out by a text-width model (`svg::text`); this test checks the model's
//! decisions against real glyphs. `usvg` shapes every `<text>` with a bundled copy of the
//! chart font (DejaVu Sans, cut to the characters charts use; `tests/fonts/`) — and only that
//! font, so the result is the same on a machine with no fonts installed — and converts it to
//! outlines; each text's layout box (advances × ascent + descent, turned with the text) must
//! lie inside the view box and must not intersect another text's box. `resvg` then draws each
//! chart, so a chart that does not render fails too. Set `ATTNLAB_SVG_PNG_DIR` to keep the
//! PNGs for a look.

use std::f64::consts::PI;
use std::sync::Arc;

use attnlab_core::chart::{
    BarChart, Chart, ChartKind, ColourScale, Heatmap, LineChart, Mark, RefLine, Series, Series1,
};
use resvg::{tiny_skia, usvg};

mod common;

const FONT: &[u8] = include_bytes!("fonts/DejaVuSans-subset.ttf");

/// A text's layout box as a quadrilateral in canvas pixels, with its text.
#[derive(Debug)]
struct Run {
    text: String,
    corners: [(f32, f32); 4],
}

impl Run {
    fn bounds(&self) -> (f32, f32, f32, f32) {
        let xs = self.corners.map(|c| c.0);
        let ys = self.corners.map(|c| c.1);
        let min = |v: [f32; 4]| v.iter().cloned().fold(f32::INFINITY, f32::min);
        let max = |v: [f32; 4]| v.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        (min(xs), min(ys), max(xs), max(ys))
    }

    /// Separating-axis test of two convex quadrilaterals, each shrunk by `eps` px so that boxes
    /// that only touch do not count.
    fn overlaps(&self, o: &Run, eps: f32) -> bool {
        let a = shrink(&self.corners, eps);
        let b = shrink(&o.corners, eps);
        for poly in [&a, &b] {
            for i in 0..4 {
                let (p, q) = (poly[i], poly[(i + 1) % 4]);
                let axis = (q.1 - p.1, p.0 - q.0);
                let proj = |v: &[(f32, f32); 4]| {
                    let d: Vec<f32> = v.iter().map(|c| c.0 * axis.0 + c.1 * axis.1).collect();
                    (
                        d.iter().cloned().fold(f32::INFINITY, f32::min),
                        d.iter().cloned().fold(f32::NEG_INFINITY, f32::max),
                    )
                };
                let (a0, a1) = proj(&a);
                let (b0, b1) = proj(&b);
                if a1 <= b0 || b1 <= a0 {
                    return false;
                }
            }
        }
        true
    }
}

fn shrink(c: &[(f32, f32); 4], eps: f32) -> [(f32, f32); 4] {
    let cx = c.iter().map(|p| p.0).sum::<f32>() / 4.0;
    let cy = c.iter().map(|p| p.1).sum::<f32>() / 4.0;
    c.map(|(x, y)| {
        let (dx, dy) = (x - cx, y - cy);
        let (sx, sy) = (dx.signum() * eps, dy.signum() * eps);
        (
            x - sx.clamp(-dx.abs(), dx.abs()),
            y - sy.clamp(-dy.abs(), dy.abs()),
        )
    })
}

fn collect(group: &usvg::Group, out: &mut Vec<Run>) {
    for node in group.children() {
        match node {
            usvg::Node::Group(g) => collect(g, out),
            usvg::Node::Text(t) => {
                let b = t.bounding_box();
                let mut pts = [
                    tiny_skia::Point::from_xy(b.left(), b.top()),
                    tiny_skia::Point::from_xy(b.right(), b.top()),
                    tiny_skia::Point::from_xy(b.right(), b.bottom()),
                    tiny_skia::Point::from_xy(b.left(), b.bottom()),
                ];
                t.abs_transform().map_points(&mut pts);
                out.push(Run {
                    text: t.chunks().iter().map(|c| c.text()).collect(),
                    corners: pts.map(|p| (p.x, p.y)),
                });
            }
            _ => {}
        }
    }
}

fn options() -> usvg::Options<'static> {
    let mut db = usvg::fontdb::Database::new();
    db.load_font_data(FONT.to_vec());
    usvg::Options {
        fontdb: Arc::new(db),
        ..Default::default()
    }
}

/// Renders `chart`, checks its text, and returns the number of text runs.
fn check(chart: &Chart) -> usize {
    let svg = attnlab_render::svg::render(chart).unwrap();
    let face = ttf_parser::Face::parse(FONT, 0).unwrap();
    let tree = usvg::Tree::from_str(&svg, &options()).unwrap();
    let size = tree.size();
    let (w, h) = (size.width(), size.height());
    let mut runs = Vec::new();
    collect(tree.root(), &mut runs);
    let name = &chart.name;
    for r in &runs {
        for c in r.text.chars() {
            assert!(
                face.glyph_index(c).is_some(),
                "{name}: {c:?} of {:?} is not in the test font, so it could not be measured",
                r.text
            );
        }
        let (x0, y0, x1, y1) = r.bounds();
        let tol = 0.01;
        assert!(
            x0 >= -tol && y0 >= -tol && x1 <= w + tol && y1 <= h + tol,
            "{name}: {:?} runs past the {w}×{h} canvas: x {x0}..{x1}, y {y0}..{y1}",
            r.text
        );
    }
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            assert!(
                !a.overlaps(b, 0.25),
                "{name}: {:?} overlaps {:?}\n{:?}\n{:?}",
                a.text,
                b.text,
                a.bounds(),
                b.bounds()
            );
        }
    }
    let mut pixmap = tiny_skia::Pixmap::new(w.ceil() as u32, h.ceil() as u32).unwrap();
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    let inked = pixmap
        .pixels()
        .iter()
        .filter(|p| p.red() < 200 || p.green() < 200 || p.blue() < 200)
        .count();
    assert!(inked > 1000, "{name}: almost nothing drawn ({inked} px)");
    if let Some(dir) = std::env::var_os("ATTNLAB_SVG_PNG_DIR") {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).unwrap();
        pixmap.save_png(dir.join(format!("{name}.png"))).unwrap();
        std::fs::write(dir.join(format!("{name}.svg")), &svg).unwrap();
    }
    runs.len()
}

fn line(name: &str, title: &str, l: LineChart) -> Chart {
    Chart {
        name: name.into(),
        title: title.into(),
        kind: ChartKind::Line(l),
    }
}

fn series(name: &str, points: Vec<(f64, f64)>, markers: bool) -> Series {
    Series {
        name: name.into(),
        points,
        markers,
    }
}

fn refline(at: f64, label: &str) -> RefLine {
    RefLine {
        at,
        label: label.into(),
    }
}

/// Wavelengths 2π/ω_k of the default RoPE frequencies ω_k = 10000^(−2k/d), d = 64.
fn wavelengths() -> Vec<(f64, f64)> {
    (0..32)
        .map(|k| {
            let omega = 10000f64.powf(-2.0 * k as f64 / 64.0);
            (k as f64, 2.0 * PI / omega)
        })
        .collect()
}

#[test]
fn line_charts_keep_their_text_inside_and_apart() {
    let w = wavelengths();
    check(&line(
        "wavelengths",
        "Wavelength 2π/ω per plane — base 10000, head dim 64 (rotate_half pairing, Llama / \
         Hugging Face layout)",
        LineChart {
            x_label: "plane index k".into(),
            y_label: "wavelength (positions)".into(),
            series: vec![series("wavelength", w, true)],
            log_y: true,
            h_lines: vec![refline(4096.0, "context 4096")],
            ..Default::default()
        },
    ));
    // Round-off sized errors against a position shift, per dtype: eps × t, log–log.
    let dtypes = [
        ("f64", f64::EPSILON),
        ("f32", f64::from(f32::EPSILON)),
        ("bf16", 2f64.powi(-7)),
        ("f16", 2f64.powi(-10)),
    ];
    check(&line(
        "precision",
        "Translation-invariance error vs position per dtype (HF pipeline)",
        LineChart {
            x_label: "position shift t".into(),
            y_label: "max |S(i+t, j+t) − S(i, j)|".into(),
            series: dtypes
                .iter()
                .map(|(n, eps)| {
                    let pts = (0..21).map(|e| {
                        let t = 2f64.powi(e);
                        (t, eps * t.sqrt())
                    });
                    series(n, pts.collect(), true)
                })
                .collect(),
            log_x: true,
            log_y: true,
            ..Default::default()
        },
    ));
    // The decay criterion B(m)/planes = mean_k cos(m ω_k), on a log x axis.
    let omegas: Vec<f64> = (0..32)
        .map(|k| 10000f64.powf(-2.0 * k as f64 / 64.0))
        .collect();
    let decay: Vec<(f64, f64)> = (0..400)
        .map(|i| {
            let m = 1.03f64.powi(i).floor();
            (m, omegas.iter().map(|w| (m * w).cos()).sum::<f64>() / 32.0)
        })
        .collect();
    check(&line(
        "decay",
        "Decay criterion B(m)/planes = mean cos(m·ω_k) (Men et al. 2024)",
        LineChart {
            x_label: "relative distance m".into(),
            y_label: "B(m) / planes".into(),
            series: vec![series("B(m)/planes", decay, false)],
            log_x: true,
            h_lines: vec![refline(0.0, "0")],
            ..Default::default()
        },
    ));
    // The old symmetry-breakers plot: a long title, a log axis, a reference line.
    let margins: Vec<(f64, f64)> = (0..7)
        .map(|i| (i as f64, 10f64.powf(-3.0 + 2.5 * i as f64)))
        .collect();
    check(&line(
        "symmetry_breakers_line",
        "error / tolerance per variant (0: f64 bare, 1: f32 bare, 2: RNN, 3: index, \
         4: sinusoidal, 5: RoPE, 6: causal)",
        LineChart {
            x_label: "variant".into(),
            y_label: "margin (log; < 1 holds)".into(),
            series: vec![series("margin", margins, true)],
            log_y: true,
            h_lines: vec![refline(1.0, "tolerance")],
            ..Default::default()
        },
    ));
    // Tiny values on both linear axes: ticks like 2e-5 and 1e-16, never 9.999999999999999e-5.
    let tiny: Vec<(f64, f64)> = (0..=26)
        .map(|i| {
            let x = i as f64 * 5e-6;
            (x, 3e-16 * (x * 6e4).sin())
        })
        .collect();
    let svg = attnlab_render::svg::render(&line(
        "tiny",
        "round-off",
        LineChart {
            x_label: "x".into(),
            y_label: "difference".into(),
            series: vec![series("Attn(ΠH) − Π Attn(H)", tiny.clone(), true)],
            ..Default::default()
        },
    ))
    .unwrap();
    assert!(!svg.contains("9.99999") && !svg.contains("0000000001"));
    assert!(svg.contains(">1e-4<") || svg.contains(">1.2e-4<"), "{svg}");
    check(&line(
        "tiny",
        "round-off",
        LineChart {
            x_label: "x".into(),
            y_label: "difference".into(),
            series: vec![series("Attn(ΠH) − Π Attn(H)", tiny, true)],
            ..Default::default()
        },
    ));
    // Huge values, negative and positive, wide tick labels.
    let huge: Vec<(f64, f64)> = (0..50)
        .map(|i| (1e9 + i as f64 * 2e7, -3.3e12 + 1.4e11 * i as f64))
        .collect();
    check(&line(
        "huge",
        "huge values on both axes",
        LineChart {
            x_label: "position".into(),
            y_label: "score".into(),
            series: vec![series("s", huge, false)],
            ..Default::default()
        },
    ));
}

#[test]
fn crowded_line_charts_place_legend_and_annotations_apart() {
    // Nine series (the legend cannot sit inside without covering data), reference lines in
    // both directions, marks: the layout has to find room for every label.
    let omegas: Vec<f64> = (1..=9).map(|k| PI / k as f64).collect();
    let mut all: Vec<Series> = omegas
        .iter()
        .enumerate()
        .map(|(k, w)| {
            let pts = (0..=64).map(|s| (s as f64, (s as f64 * w).cos())).collect();
            series(&format!("ω = π/{}", k + 1), pts, k % 2 == 0)
        })
        .collect();
    all.push(series(
        "mean over {π/1, π/2, π/3, π/4, π/5, π/6, π/7, π/8, π/9}",
        (0..=64)
            .map(|s| {
                let m = omegas.iter().map(|w| (s as f64 * w).cos()).sum::<f64>() / 9.0;
                (s as f64, m)
            })
            .collect(),
        false,
    ));
    let n = check(&line(
        "scores",
        "largest per-plane phase distance from a full turn, {π/2, π/3, π/4, π/5, π/6, π/7, \
         π/8, π/9, π/10, π/11, π/12, π/13, π/14, π/15, π/16, π/17, π/18, π/19, π/20}",
        LineChart {
            x_label: "separation s = j − i".into(),
            y_label: "cos(sω) (mean over planes); a long axis title that has to wrap or shrink \
                      to fit the height of the plot area"
                .into(),
            series: all,
            h_lines: vec![
                refline(1.0, "score at s = 0"),
                refline(0.0, "zero"),
                refline(-1.0, "−1"),
            ],
            v_lines: vec![
                refline(12.0, "context 12"),
                refline(13.0, "context 13"),
                refline(48.0, "first alias"),
            ],
            marks: vec![
                Mark {
                    x: 2.0,
                    y: -1.0,
                    label: "first −1 (s = 2)".into(),
                },
                Mark {
                    x: 4.0,
                    y: 1.0,
                    label: "first repeat (s = 4)".into(),
                },
                Mark {
                    x: 6.0,
                    y: 1.0,
                    label: "second repeat".into(),
                },
            ],
            ..Default::default()
        },
    ));
    assert!(n > 30);
    // A title with no spaces must be broken, not run past the canvas.
    check(&line(
        "unbreakable",
        &"{π/2,π/3,π/4,π/5,π/6,π/7,π/8,π/9,π/10,π/11}".repeat(6),
        LineChart {
            series: vec![series("", vec![(0.0, 1.0), (1.0, 2.0)], true)],
            ..Default::default()
        },
    ));
    // Thirty series: the legend goes outside and ends with "… n more".
    let svg_many = attnlab_render::svg::render(&line(
        "thirty",
        "thirty frequencies",
        LineChart {
            x_label: "s".into(),
            y_label: "cos(sω)".into(),
            series: (1..=30)
                .map(|k| {
                    let w = 1.0 / k as f64;
                    let pts = (0..=40).map(|s| (s as f64, (s as f64 * w).cos())).collect();
                    series(&format!("ω = 1/{k}"), pts, false)
                })
                .collect(),
            ..Default::default()
        },
    ))
    .unwrap();
    assert!(svg_many.contains(" more</text>"));
    check(&line(
        "thirty",
        "thirty frequencies",
        LineChart {
            x_label: "s".into(),
            y_label: "cos(sω)".into(),
            series: (1..=30)
                .map(|k| {
                    let w = 1.0 / k as f64;
                    let pts = (0..=40).map(|s| (s as f64, (s as f64 * w).cos())).collect();
                    series(&format!("ω = 1/{k}"), pts, false)
                })
                .collect(),
            ..Default::default()
        },
    ));
    // One repeated value: the axis still gets a span and ticks.
    check(&line(
        "flat",
        "a constant",
        LineChart {
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![series("c", vec![(5.0, 0.25), (5.0, 0.25)], true)],
            log_x: true,
            ..Default::default()
        },
    ));
    // Nothing drawable: log axes with only non-positive values.
    let svg = attnlab_render::svg::render(&line(
        "empty",
        "nothing to draw",
        LineChart {
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![series("s", vec![(0.0, -1.0), (f64::NAN, 2.0)], true)],
            log_x: true,
            log_y: true,
            ..Default::default()
        },
    ))
    .unwrap();
    assert!(svg.contains("no data"));
}

fn bar(name: &str, title: &str, b: BarChart) -> Chart {
    Chart {
        name: name.into(),
        title: title.into(),
        kind: ChartKind::Bar(b),
    }
}

#[test]
fn bar_charts_keep_their_text_inside_and_apart() {
    let variants = [
        "f64 bare",
        "f32 bare",
        "RNN",
        "index",
        "sinusoidal",
        "RoPE",
        "causal",
    ];
    check(&bar(
        "symmetry_breakers",
        "error / tolerance per variant (< 1: the symmetry holds within round-off; > 1: the \
         variant breaks it)",
        BarChart {
            categories: variants.map(String::from).into(),
            groups: vec![Series1 {
                name: "margin".into(),
                values: (0..7).map(|i| 10f64.powf(-3.0 + 2.5 * i as f64)).collect(),
            }],
            y_label: "margin (log; < 1 holds)".into(),
            log_y: true,
            h_lines: vec![refline(1.0, "tolerance")],
        },
    ));
    // Forty long categories in three groups: the labels turn upright and are shortened.
    let cats: Vec<String> = (0..40)
        .map(|i| format!("config {i}: rope_type yarn, factor {}, base 500000", i + 1))
        .collect();
    let groups = ["f64", "f32", "bf16"]
        .iter()
        .enumerate()
        .map(|(g, n)| Series1 {
            name: (*n).into(),
            values: (0..40)
                .map(|i| ((i as f64 * 0.37 + g as f64).sin() + 1.2) * 10f64.powi(g as i32))
                .collect(),
        })
        .collect();
    check(&bar(
        "forty",
        "Forty configurations compared per dtype",
        BarChart {
            categories: cats,
            groups,
            y_label: "error".into(),
            log_y: false,
            h_lines: vec![refline(5.0, "budget")],
        },
    ));
    // Negative and positive bars, values printed over them.
    check(&bar(
        "signed",
        "signed differences",
        BarChart {
            categories: ["q", "k", "v", "o"].map(String::from).into(),
            groups: vec![
                Series1 {
                    name: "before".into(),
                    values: vec![0.25, -0.5, 1.5, -1.25],
                },
                Series1 {
                    name: "after".into(),
                    values: vec![0.125, -0.75, 1.0, 0.5],
                },
            ],
            y_label: "Δ".into(),
            log_y: false,
            h_lines: vec![refline(0.0, "no change")],
        },
    ));
}

fn heatmap(name: &str, title: &str, h: Heatmap) -> Chart {
    Chart {
        name: name.into(),
        title: title.into(),
        kind: ChartKind::Heatmap(h),
    }
}

/// Row-wise softmax of (i·j mod 7)/3: a matrix of attention weights.
fn weights(n: usize) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            let e: Vec<f64> = (0..n).map(|j| (((i * j) % 7) as f64 / 3.0).exp()).collect();
            let s: f64 = e.iter().sum();
            e.into_iter().map(|x| x / s).collect()
        })
        .collect()
}

#[test]
fn heat_maps_keep_their_text_inside_and_apart() {
    // 12 × 12 round-off differences on a scale saturating at the tolerance, values shown.
    let tol = 8.0 * f64::EPSILON * 24.0;
    let diff: Vec<Vec<f64>> = (0..12)
        .map(|i| {
            (0..12)
                .map(|j| {
                    let k = (i * 5 + j * 3) % 11;
                    if k == 0 {
                        0.0
                    } else {
                        (k as f64 - 5.0) * f64::EPSILON / 4.0
                    }
                })
                .collect()
        })
        .collect();
    let labels: Vec<String> = [
        "the", "cat", "sat", "on", "the", "mat", "and", "then", "it", "slept", "all", "day",
    ]
    .map(String::from)
    .into();
    let chart = heatmap(
        "permuted_difference",
        "Attn(ΠH) − Π Attn(H), entry by entry (f64; every entry within the tolerance)",
        Heatmap {
            values: diff,
            row_labels: labels.clone(),
            col_labels: (0..12).map(|j| format!("d{j}")).collect(),
            x_label: "column".into(),
            y_label: "row (token)".into(),
            scale: ColourScale::Diverging { max: tol },
            scale_note: format!(
                "colour saturates at the tolerance {}",
                attnlab_core::present::number::sci(tol)
            ),
            highlight_rows: vec![1, 4],
        },
    );
    let runs = check(&chart);
    assert!(runs >= 144 + 24, "values in all 144 cells, {runs} runs");
    // 6 × 6 attention weights on [0, 1], token labels.
    check(&heatmap(
        "attention_weights",
        "attention weights A of the course program (row = query)",
        Heatmap {
            values: weights(6),
            row_labels: labels[..6].to_vec(),
            col_labels: labels[..6].to_vec(),
            x_label: "key".into(),
            y_label: "query".into(),
            scale: ColourScale::Sequential { min: 0.0, max: 1.0 },
            scale_note: "weights in [0, 1]".into(),
            highlight_rows: vec![],
        },
    ));
    // 64 × 64 without values: thinned index labels; values beyond the scale saturate.
    let big: Vec<Vec<f64>> = (0..64)
        .map(|i| {
            (0..64)
                .map(|j| ((i as f64 - j as f64) / 9.0).sin() * 1.5)
                .collect()
        })
        .collect();
    check(&heatmap(
        "big",
        "a 64 × 64 matrix",
        Heatmap {
            values: big,
            row_labels: vec![],
            col_labels: vec![],
            x_label: "key position".into(),
            y_label: "query position".into(),
            scale: ColourScale::Diverging { max: 1.0 },
            scale_note: "colour saturates at ±1 (values beyond are drawn at full colour)".into(),
            highlight_rows: vec![10],
        },
    ));
    // Long column labels turn upright; a ragged row and a NaN are drawn, not dropped.
    check(&heatmap(
        "ragged",
        "two rows",
        Heatmap {
            values: vec![vec![1.0, f64::NAN, -3.0], vec![0.5]],
            row_labels: vec!["first row label".into(), "second".into()],
            col_labels: vec![
                "a long column label".into(),
                "another long one".into(),
                "c".into(),
            ],
            x_label: "column".into(),
            y_label: "row".into(),
            scale: ColourScale::Diverging { max: 2.0 },
            scale_note: String::new(),
            highlight_rows: vec![],
        },
    ));
    // A long, thin matrix and a single row.
    check(&heatmap(
        "thin",
        "four queries against two hundred keys",
        Heatmap {
            values: weights(200).into_iter().take(4).collect(),
            row_labels: vec![],
            col_labels: vec![],
            x_label: "key".into(),
            y_label: "query".into(),
            scale: ColourScale::Sequential {
                min: 0.0,
                max: 0.05,
            },
            scale_note: "weights; colour saturates at 0.05".into(),
            highlight_rows: vec![3],
        },
    ));
    check(&heatmap(
        "one_row",
        "one row",
        Heatmap {
            values: vec![vec![0.5, 0.25, 0.25]],
            row_labels: vec!["only query".into()],
            col_labels: vec![],
            x_label: "key".into(),
            y_label: "query position".into(),
            scale: ColourScale::Sequential { min: 0.0, max: 1.0 },
            scale_note: String::new(),
            highlight_rows: vec![],
        },
    ));
    let svg = attnlab_render::svg::render(&heatmap(
        "none",
        "empty",
        Heatmap {
            values: vec![],
            row_labels: vec![],
            col_labels: vec![],
            x_label: String::new(),
            y_label: String::new(),
            scale: ColourScale::Sequential { min: 0.0, max: 1.0 },
            scale_note: String::new(),
            highlight_rows: vec![],
        },
    ))
    .unwrap();
    assert!(svg.contains("no data"));
}

#[test]
fn the_snapshot_charts_pass_too() {
    for chart in [common::line_chart(), common::bar_chart(), common::heatmap()] {
        check(&chart);
    }
}

/// Every chart the commands derive (issue 11): the lab's five, the rope commands', attend's
/// and equivariance's — each rendered, its text inside the canvas and apart, something drawn.
#[test]
fn every_commands_charts_pass() {
    use attnlab_core::api::{self, Request};
    let requests = [
        serde_json::json!({"command": "lab"}),
        serde_json::json!({"command": "lab", "omegas": "pi", "context": 2}),
        serde_json::json!({"command": "attend"}),
        serde_json::json!({"command": "attend", "text": "A B .", "mask": "causal"}),
        serde_json::json!({"command": "attend", "heads": 2, "n": 12}),
        serde_json::json!({"command": "equivariance"}),
        serde_json::json!({"command": "equivariance", "pos": "index", "samples": 3}),
        serde_json::json!({"command": "rope score", "omega": "pi/2,pi/3", "max_sep": 12}),
        serde_json::json!({"command": "rope score", "base": 10000.0, "dim": 64, "max_sep": 100}),
        serde_json::json!({"command": "rope identity", "trials": 5, "max_shift": 1000000}),
        serde_json::json!({"command": "rope audit", "preset": "llama-3.1-8b", "skip_min_base": true, "context": 8192}),
        serde_json::json!({"command": "rope audit", "omega": "pi/2,pi/3", "skip_min_base": true, "context": 12}),
    ];
    let mut names = Vec::new();
    for body in requests {
        let req: Request =
            serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("{body}: {e}"));
        let report = api::run(&req).unwrap_or_else(|e| panic!("{body}: {e}"));
        for chart in report.charts() {
            assert!(check(&chart) > 0, "{}: no text", chart.name);
            names.push(chart.name);
        }
    }
    for want in [
        "scores_vs_separation",
        "resolution_margin",
        "permuted_difference",
        "attention_weights",
        "symmetry_breakers",
        "attention_weights_h1",
        "margins",
        "score",
        "invariance",
        "wavelengths",
        "decay",
        "precision",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "no chart {want} in {names:?}"
        );
    }
}
