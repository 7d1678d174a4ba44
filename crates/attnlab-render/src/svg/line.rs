//! Line charts: series over numeric (optionally logarithmic) axes, reference lines, marks.

use attnlab_core::chart::{Chart, LineChart};

use super::axis::{self, Scale};
use super::colour;
use super::geom::Rect;
use super::legend::{
    annotation, h_line_candidates, spots, with_clamped, Legend, Marker, Placer, Swatch,
};
use super::text::{Block, ASCENT, LINE};
use super::ticks::Tick;
use super::writer::{Anchor, Label, Svg};
use super::{clip_id, Heading, HEIGHT, MUTED, PAD, SMALL_SIZE, WIDTH};

/// Marker radius, px.
const MARKER_R: f64 = 3.5;

/// Where everything goes.
struct Layout {
    plot: Rect,
    x: Scale,
    y: Scale,
    xt: Vec<Tick>,
    yt: Vec<Tick>,
    x_title: Block,
    y_title: Block,
}

/// Lays out the axes for a plot below `top`, keeping `reserve` px free on the right (for a
/// legend outside the plot): the margins are grown until the tick labels and axis titles of
/// the final plot size fit (a few rounds, since the ticks depend on the size).
fn layout(l: &LineChart, top: f64, xd: (f64, f64), yd: (f64, f64), reserve: f64) -> Layout {
    let mut plot = Rect::ltrb(PAD + 60.0, top, WIDTH - PAD - reserve, HEIGHT - PAD - 50.0);
    let mut best = None;
    for _ in 0..6 {
        let x_title = axis::title_block(&l.x_label, plot.w);
        let y_title = axis::title_block(&l.y_label, plot.h);
        let x = Scale {
            lo: xd.0,
            hi: xd.1,
            log: l.log_x,
            a: plot.x,
            b: plot.right(),
        };
        let y = Scale {
            lo: yd.0,
            hi: yd.1,
            log: l.log_y,
            a: plot.bottom(),
            b: plot.y,
        };
        let xt = axis::x_ticks(&x);
        let yt = axis::y_ticks(&y);
        let (over_l, over_r) = axis::x_overhang(&x, &xt);
        let left = (PAD + axis::y_axis_width(&yt, &y_title)).max(PAD + over_l);
        let right = (PAD + reserve).max(PAD + over_r);
        let bottom = PAD + axis::x_axis_height(&x_title);
        let want = Rect::ltrb(left, top, WIDTH - right, HEIGHT - bottom);
        let settled = (want.x - plot.x).abs() < 0.5
            && (want.right() - plot.right()).abs() < 0.5
            && (want.bottom() - plot.bottom()).abs() < 0.5;
        best = Some(Layout {
            plot,
            x,
            y,
            xt,
            yt,
            x_title,
            y_title,
        });
        if settled {
            break;
        }
        plot = want;
    }
    // Cannot fail: the loop body runs at least once and sets best.
    best.expect("at least one round")
}

/// The drawable points of each series in pixels, split into runs at points that cannot be
/// drawn (non-finite, or non-positive on a log axis).
fn runs(l: &LineChart, lay: &Layout) -> Vec<Vec<Vec<(f64, f64)>>> {
    l.series
        .iter()
        .map(|s| {
            // runs starts with one run and only grows: its last element always exists.
            let mut runs = vec![Vec::new()];
            for &(x, y) in &s.points {
                if lay.x.accepts(x) && lay.y.accepts(y) {
                    runs.last_mut()
                        .expect("non-empty")
                        .push((lay.x.map(x), lay.y.map(y)));
                } else if !runs.last().expect("non-empty").is_empty() {
                    runs.push(Vec::new());
                }
            }
            runs
        })
        .collect()
}

/// How much of the data a box covers: line segments crossing it plus markers inside it.
fn covered(runs: &[Vec<Vec<(f64, f64)>>], r: &Rect) -> usize {
    let mut n = 0;
    for series in runs {
        for run in series {
            for p in run {
                if r.inflate(MARKER_R).contains(&Rect {
                    x: p.0,
                    y: p.1,
                    w: 0.0,
                    h: 0.0,
                }) {
                    n += 1;
                }
            }
            n += run
                .windows(2)
                .filter(|w| r.hits_segment(w[0], w[1]))
                .count();
        }
    }
    n
}

pub(super) fn render(chart: &Chart, l: &LineChart) -> String {
    let heading = Heading::new(&chart.title, "", WIDTH);
    let top = heading.bottom();
    let keep = |x: f64, y: f64| {
        x.is_finite() && y.is_finite() && (!l.log_x || x > 0.0) && (!l.log_y || y > 0.0)
    };
    let points = || {
        l.series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|&(x, y)| keep(x, y))
    };
    let marks = || l.marks.iter().filter(|m| keep(m.x, m.y));
    let has_data = points().next().is_some();
    let xd = axis::domain(
        points()
            .map(|p| p.0)
            .chain(l.v_lines.iter().map(|v| v.at))
            .chain(marks().map(|m| m.x)),
        l.log_x,
        false,
    );
    let yd = axis::domain(
        points()
            .map(|p| p.1)
            .chain(l.h_lines.iter().map(|h| h.at))
            .chain(marks().map(|m| m.y)),
        l.log_y,
        false,
    );

    let mut legend = Legend::new(
        l.series
            .iter()
            .enumerate()
            .map(|(i, s)| {
                (
                    Swatch::Line {
                        colour: colour::series(i),
                        dash: dash(i),
                        marker: s.markers.then(|| Marker::nth(i)),
                    },
                    s.name.as_str(),
                )
            })
            .collect(),
        0.28 * WIDTH,
    );

    let mut lay = layout(l, top, xd, yd, 0.0);
    let mut data = runs(l, &lay);
    let mut legend_at = None;
    if !legend.is_empty() {
        let refs = ref_segments(l, &lay);
        let spots = spots(&lay.plot, legend.size(), 8.0);
        let fits = |c: &(f64, f64)| covered(&data, &legend.rect_at(c.0, c.1)) == 0;
        let clear_of_refs = |c: &(f64, f64)| {
            let r = legend.rect_at(c.0, c.1);
            !refs.iter().any(|s| r.hits_segment(s.0, s.1))
        };
        legend_at = spots
            .iter()
            .find(|c| fits(c) && clear_of_refs(c))
            .or_else(|| spots.iter().find(|c| fits(c)))
            .copied();
        if legend_at.is_none() {
            lay = layout(l, top, xd, yd, legend.size().0 + 14.0);
            data = runs(l, &lay);
            legend.limit_height(lay.plot.h);
            legend_at = Some((WIDTH - PAD - legend.size().0, lay.plot.y));
        }
    }

    let mut svg = Svg::new(WIDTH, HEIGHT, &chart.title);
    let plot = lay.plot;
    axis::grid(
        &mut svg,
        &plot,
        Some((&lay.x, &lay.xt)),
        Some((&lay.y, &lay.yt)),
    );
    let clip = clip_id(chart);
    svg.clip_rect(&clip, &plot.inflate(MARKER_R + 1.0));
    svg.open_group(&format!("clip-path=\"url(#{clip})\""));
    for r in ref_segments(l, &lay) {
        svg.line(
            r.0,
            r.1,
            &format!("stroke=\"{MUTED}\" stroke-width=\"1.2\" stroke-dasharray=\"6 4\""),
        );
    }
    for (i, (s, runs)) in l.series.iter().zip(&data).enumerate() {
        let c = colour::series(i);
        let dash = dash(i)
            .map(|d| format!(" stroke-dasharray=\"{d}\""))
            .unwrap_or_default();
        svg.polyline(
            runs,
            &format!("stroke=\"{c}\" stroke-width=\"2\" stroke-linejoin=\"round\"{dash}"),
        );
        if s.markers {
            for p in runs.iter().flatten() {
                Marker::nth(i).draw(&mut svg, *p, MARKER_R, c);
            }
        }
    }
    for m in marks() {
        svg.circle(
            (lay.x.map(m.x), lay.y.map(m.y)),
            5.5,
            "fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\"",
        );
    }
    svg.close_group();
    axis::draw_y(&mut svg, &plot, &lay.y, &lay.yt, &lay.y_title, PAD);
    axis::draw_x(&mut svg, &plot, &lay.x, &lay.xt, &lay.x_title);

    let mut placer = Placer::new(plot.inflate(-2.0));
    if let Some((x, y)) = legend_at {
        let frame = legend.draw(&mut svg, x, y);
        placer.take(frame);
    }
    // Labels avoid data, and (more strongly) crossing a reference line, so that a label
    // is not read as belonging to the neighbouring line.
    let refs = ref_segments(l, &lay);
    let cover = |r: &Rect| {
        covered(&data, r) + 10 * refs.iter().filter(|s| r.hits_segment(s.0, s.1)).count()
    };
    for label in annotation_labels(l, &lay) {
        if let Some(placed) = placer.place(label, &cover) {
            svg.text(&placed);
        }
    }
    if !has_data {
        let mut l = Label::new(plot.cx(), plot.cy(), "no data", SMALL_SIZE, Anchor::Middle);
        l.fill = MUTED;
        svg.text(&l);
    }
    heading.draw(&mut svg, WIDTH);
    svg.finish()
}

/// Dash pattern of series `i`: solid for the first palette round, then dashed.
fn dash(i: usize) -> Option<&'static str> {
    (i >= colour::PALETTE.len()).then_some("7 3")
}

/// The reference lines as pixel segments across the plot.
fn ref_segments(l: &LineChart, lay: &Layout) -> Vec<((f64, f64), (f64, f64))> {
    let p = lay.plot;
    let h = l
        .h_lines
        .iter()
        .filter(|r| lay.y.accepts(r.at))
        .map(|r| lay.y.map(r.at))
        .map(|y| ((p.x, y), (p.right(), y)));
    let v = l
        .v_lines
        .iter()
        .filter(|r| lay.x.accepts(r.at))
        .map(|r| lay.x.map(r.at))
        .map(|x| ((x, p.y), (x, p.bottom())));
    h.chain(v).collect()
}

/// Candidate positions for every reference-line and mark label, best first.
fn annotation_labels(l: &LineChart, lay: &Layout) -> Vec<Vec<Label>> {
    let p = lay.plot;
    let s = SMALL_SIZE;
    let up = ASCENT * s;
    let mk = |x: f64, y: f64, text: &str, anchor: Anchor, fill: &'static str| {
        annotation(x, y, text, anchor, fill, p.w - 12.0)
    };
    let mut out = Vec::new();
    for r in l
        .h_lines
        .iter()
        .filter(|r| lay.y.accepts(r.at) && !r.label.is_empty())
    {
        out.push(h_line_candidates(lay.y.map(r.at), &r.label, &p));
    }
    for r in l
        .v_lines
        .iter()
        .filter(|r| lay.x.accepts(r.at) && !r.label.is_empty())
    {
        let x = lay.x.map(r.at);
        let mut c = Vec::new();
        for k in 0..8 {
            let y = p.y + 6.0 + up + k as f64 * s * LINE;
            c.push(mk(x + 5.0, y, &r.label, Anchor::Start, MUTED));
            c.push(mk(x - 5.0, y, &r.label, Anchor::End, MUTED));
        }
        for k in 0..4 {
            let y = p.bottom() - 6.0 - k as f64 * s * LINE;
            c.push(mk(x + 5.0, y, &r.label, Anchor::Start, MUTED));
            c.push(mk(x - 5.0, y, &r.label, Anchor::End, MUTED));
        }
        out.push(with_clamped(c, &p));
    }
    for m in l
        .marks
        .iter()
        .filter(|m| lay.x.accepts(m.x) && lay.y.accepts(m.y) && !m.label.is_empty())
    {
        let (x, y) = (lay.x.map(m.x), lay.y.map(m.y));
        let d = 8.0;
        let c = vec![
            mk(x + d, y - d, &m.label, Anchor::Start, "#000"),
            mk(x - d, y - d, &m.label, Anchor::End, "#000"),
            mk(x + d, y + d + up, &m.label, Anchor::Start, "#000"),
            mk(x - d, y + d + up, &m.label, Anchor::End, "#000"),
            mk(x, y - d - 2.0, &m.label, Anchor::Middle, "#000"),
            mk(x, y + d + 2.0 + up, &m.label, Anchor::Middle, "#000"),
        ];
        out.push(with_clamped(c, &p));
    }
    out
}
