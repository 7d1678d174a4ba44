//! Heat maps: square cells coloured on the chart's scale, a colour bar with ticks, the values
//! printed in the cells of small matrices, highlighted rows outlined.

use attnlab_core::chart::{Chart, ColourScale, Heatmap};
use attnlab_core::present::number;

use super::axis::{self, Scale};
use super::colour::{self, Rgb};
use super::geom::Rect;
use super::text::{self, ASCENT, DESCENT, LINE};
use super::ticks::{self, Tick};
use super::writer::{Anchor, Label, Svg};
use super::{Heading, AXIS, GAP, INK, MUTED, PAD, SMALL_SIZE, TICK_LEN, TICK_SIZE};

/// Colour of cells holding NaN.
const MISSING: Rgb = Rgb(189, 189, 189);
/// Width of the colour bar.
const BAR_W: f64 = 14.0;
/// Space between the matrix and the colour bar.
const BAR_GAP: f64 = 20.0;
/// Smallest canvas width (room for the title).
const MIN_WIDTH: f64 = 560.0;
/// Row and column labels.
const SIDE_SIZE: f64 = 11.0;
/// Cells get a tooltip with their value up to this many cells.
const TOOLTIP_CELLS: usize = 4096;

/// The colour scale made safe to draw with: a positive `max`, and `min < max`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scaled {
    Diverging(f64),
    Sequential(f64, f64),
}

impl Scaled {
    fn new(scale: &ColourScale, values: &[Vec<f64>]) -> Self {
        let finite = || values.iter().flatten().copied().filter(|v| v.is_finite());
        match *scale {
            ColourScale::Diverging { max } => {
                let max = if max.is_finite() && max > 0.0 {
                    max
                } else {
                    let m = finite().fold(0.0f64, |m, v| m.max(v.abs()));
                    if m > 0.0 {
                        m
                    } else {
                        1.0
                    }
                };
                Scaled::Diverging(max)
            }
            ColourScale::Sequential { min, max } => {
                if min.is_finite() && max.is_finite() && max > min {
                    Scaled::Sequential(min, max)
                } else {
                    let lo = finite().fold(f64::INFINITY, f64::min);
                    let hi = finite().fold(f64::NEG_INFINITY, f64::max);
                    if lo.is_finite() && hi > lo {
                        Scaled::Sequential(lo, hi)
                    } else {
                        let lo = if lo.is_finite() { lo } else { 0.0 };
                        Scaled::Sequential(lo, lo + 1.0)
                    }
                }
            }
        }
    }

    fn range(self) -> (f64, f64) {
        match self {
            Scaled::Diverging(m) => (-m, m),
            Scaled::Sequential(lo, hi) => (lo, hi),
        }
    }

    fn colour(self, v: f64) -> Rgb {
        if v.is_nan() {
            return MISSING;
        }
        match self {
            Scaled::Diverging(m) => colour::diverging(v, m),
            Scaled::Sequential(lo, hi) => colour::sequential(v, lo, hi),
        }
    }

    fn stops(self) -> Vec<(f64, String)> {
        match self {
            Scaled::Diverging(_) => colour::diverging_stops(),
            Scaled::Sequential(..) => colour::sequential_stops(),
        }
    }
}

/// The size of a cell, px.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cell {
    w: f64,
    h: f64,
}

/// Labels along one side of the matrix.
#[derive(Debug, Clone, PartialEq)]
struct Side {
    labels: Vec<String>,
    full: Vec<Option<String>>,
    size: f64,
    upright: bool,
    stride: usize,
}

impl Side {
    /// Row labels for cells `cell` px tall: 11 px, shrunk to fit a row down to 9 px, and every
    /// `stride`-th one when even that is too tall (a 1-2-5 stride for indices).
    fn rows(labels: Vec<String>, cell: f64, indices: bool) -> Self {
        let (size, stride) = fit_across(cell, indices);
        let shown: Vec<String> = labels
            .iter()
            .map(|l| text::truncate(l, size, 140.0))
            .collect();
        Side::new(labels, shown, size, false, stride)
    }

    /// Column labels for cells `cell` px wide: horizontal when each fits its column (indices:
    /// when every 1st, 2nd, 5th, 10th … fits), else upright, shortened to 120 px.
    fn cols(labels: Vec<String>, cell: f64, indices: bool) -> Self {
        let size = SIDE_SIZE;
        let widest = labels
            .iter()
            .map(|l| text::width(l, size))
            .fold(0.0, f64::max);
        if widest <= cell - 4.0 {
            let shown = labels.clone();
            return Side::new(labels, shown, size, false, 1);
        }
        if indices {
            let stride = nice_stride(((widest + 6.0) / cell).ceil() as usize);
            let shown = labels.clone();
            return Side::new(labels, shown, size, false, stride);
        }
        let (size, stride) = fit_across(cell, indices);
        let shown: Vec<String> = labels
            .iter()
            .map(|l| text::truncate(l, size, 120.0))
            .collect();
        Side::new(labels, shown, size, true, stride)
    }

    fn new(
        labels: Vec<String>,
        shown: Vec<String>,
        size: f64,
        upright: bool,
        stride: usize,
    ) -> Self {
        Side {
            full: labels
                .iter()
                .zip(&shown)
                .map(|(l, s)| (l != s).then(|| l.clone()))
                .collect(),
            labels: shown,
            size,
            upright,
            stride,
        }
    }

    /// Width of the widest label shown.
    fn widest(&self) -> f64 {
        self.labels
            .iter()
            .step_by(self.stride)
            .map(|l| text::width(l, self.size))
            .fold(0.0, f64::max)
    }
}

/// Font size and stride for labels stacked across cells `cell` px apart.
fn fit_across(cell: f64, indices: bool) -> (f64, usize) {
    let glyph = ASCENT + DESCENT;
    let size = ((cell - 2.0) / glyph).clamp(9.0, SIDE_SIZE);
    let stride = ((size * glyph + 2.0) / cell).ceil().max(1.0) as usize;
    (size, if indices { nice_stride(stride) } else { stride })
}

/// The smallest of 1, 2, 5, 10, 20, 50, … that is at least `k`.
fn nice_stride(k: usize) -> usize {
    let mut base = 1;
    loop {
        for m in [1, 2, 5] {
            if m * base >= k {
                return m * base;
            }
        }
        base *= 10;
    }
}

/// Cell text: 3 significant digits, or 2 when that keeps cells narrower.
fn cell_texts(values: &[Vec<f64>], cols: usize) -> (Vec<Vec<String>>, f64) {
    let make = |d: u8| -> Vec<Vec<String>> {
        values
            .iter()
            .map(|r| {
                (0..cols)
                    .map(|c| {
                        r.get(c)
                            .map_or_else(|| "NaN".into(), |&v| number::sig(v, d))
                    })
                    .collect()
            })
            .collect()
    };
    let widest = |t: &Vec<Vec<String>>| {
        t.iter()
            .flatten()
            .map(|s| text::width(s, SMALL_SIZE))
            .fold(0.0, f64::max)
    };
    let three = make(3);
    let w3 = widest(&three);
    if w3 <= 44.0 {
        return (three, w3);
    }
    let two = make(2);
    let w2 = widest(&two);
    (two, w2)
}

pub(super) fn render(chart: &Chart, h: &Heatmap) -> String {
    let rows = h.values.len();
    let cols = h.values.iter().map(Vec::len).max().unwrap_or(0);
    let value = |r: usize, c: usize| h.values[r].get(c).copied().unwrap_or(f64::NAN);
    let scale = Scaled::new(&h.scale, &h.values);
    let n = rows.max(cols).max(1) as f64;
    let shows = h.shows_values() && rows > 0;
    let (texts, text_w) = if shows {
        cell_texts(&h.values, cols)
    } else {
        (Vec::new(), 0.0)
    };
    // Square cells sized for their values when shown; otherwise the matrix spans about
    // 480 px each way (cells at most 40 px), so a long, thin matrix stays readable.
    let cell = if shows {
        let need = (text_w + 10.0).max(30.0);
        let s = (420.0 / n).clamp(need, need.max(64.0));
        Cell { w: s, h: s }
    } else {
        Cell {
            w: (480.0 / cols.max(1) as f64).min(40.0),
            h: (480.0 / rows.max(1) as f64).min(40.0),
        }
    };
    let names = |given: &[String], k: usize| -> Vec<String> {
        if given.is_empty() {
            (0..k).map(|i| i.to_string()).collect()
        } else {
            (0..k)
                .map(|i| given.get(i).cloned().unwrap_or_default())
                .collect()
        }
    };
    let row_side = Side::rows(names(&h.row_labels, rows), cell.h, h.row_labels.is_empty());
    let col_side = Side::cols(names(&h.col_labels, cols), cell.w, h.col_labels.is_empty());
    let (mw, mh) = (cols as f64 * cell.w, rows as f64 * cell.h);
    let bar_h = mh.max(140.0);

    let (lo, hi) = scale.range();
    let bar_scale = |top: f64| Scale {
        lo,
        hi,
        log: false,
        a: top + bar_h,
        b: top,
    };
    let bar_ticks = colour_bar_ticks(&bar_scale(0.0));
    let bar_label_w = axis::widest(&bar_ticks);

    let y_title = axis::title_block(&h.y_label, mh.max(60.0));
    let y_title_w = if y_title.is_empty() {
        0.0
    } else {
        y_title.height() + GAP
    };
    let left = PAD + y_title_w + row_side.widest() + GAP;
    let right = BAR_GAP + BAR_W + TICK_LEN + GAP + bar_label_w + PAD;
    let content = left + mw + right;
    let width = content.max(MIN_WIDTH);
    let shift = 0.5 * (width - content);

    let heading = Heading::new(&chart.title, &h.scale_note, width);
    let top = heading.bottom();
    let plot = Rect {
        x: shift + left,
        y: top,
        w: mw,
        h: mh,
    };
    let reach = 2.0 * (plot.cx() - PAD).min(width - PAD - plot.cx());
    let x_title = axis::title_block(&h.x_label, reach.min(mw.max(200.0)));
    let col_depth = if col_side.labels.is_empty() {
        0.0
    } else if col_side.upright {
        col_side.widest()
    } else {
        (ASCENT + DESCENT) * col_side.size
    };
    let below = GAP
        + col_depth
        + if x_title.is_empty() {
            0.0
        } else {
            GAP + x_title.height()
        };
    let height = (plot.bottom() + below).max(top + bar_h) + PAD;

    let mut svg = Svg::new(width, height, &chart.title);
    if rows == 0 || cols == 0 {
        let mut l = Label::new(
            0.5 * width,
            top + 0.5 * bar_h,
            "no data",
            SMALL_SIZE,
            Anchor::Middle,
        );
        l.fill = MUTED;
        svg.text(&l);
    }
    draw_cells(
        &mut svg, &plot, rows, cols, cell, scale, &value, &row_side, &col_side,
    );
    if rows > 0 && cols > 0 {
        svg.rect(
            &plot,
            &format!("fill=\"none\" stroke=\"{AXIS}\" stroke-width=\"1\""),
        );
    }
    for &r in h.highlight_rows.iter().filter(|&&r| r < rows) {
        let row = Rect {
            x: plot.x,
            y: plot.y + r as f64 * cell.h,
            w: mw,
            h: cell.h,
        };
        svg.rect(&row, "fill=\"none\" stroke=\"#000\" stroke-width=\"2.5\"");
    }
    if shows {
        for (r, line) in texts.iter().enumerate() {
            for (c, t) in line.iter().enumerate() {
                let cx = plot.x + (c as f64 + 0.5) * cell.w;
                let cy = plot.y + (r as f64 + 0.5) * cell.h;
                let mut l = Label::new(
                    cx,
                    cy + 0.5 * (ASCENT - DESCENT) * SMALL_SIZE,
                    t.clone(),
                    SMALL_SIZE,
                    Anchor::Middle,
                );
                l.fill = colour::text_on(scale.colour(value(r, c)));
                svg.text(&l);
            }
        }
    }
    draw_side_labels(&mut svg, &plot, cell, &row_side, &col_side);
    axis::vertical_title(&mut svg, &y_title, shift + PAD, plot.cy());
    let x_top = plot.bottom() + GAP + col_depth + GAP;
    axis::centred_block(&mut svg, &x_title, plot.cx(), x_top, INK);
    let bar = Rect {
        x: plot.right() + BAR_GAP,
        y: top,
        w: BAR_W,
        h: bar_h,
    };
    draw_colour_bar(
        &mut svg,
        chart,
        &bar,
        scale,
        &bar_scale(top),
        &bar_ticks,
        &h.values,
    );
    heading.draw(&mut svg, width);
    svg.finish()
}

/// The cells: one rect per cell with a tooltip for small matrices, else one rect per run of
/// equal colour in a row. Cells overlap their right and lower neighbours by half a pixel so
/// anti-aliasing leaves no seams.
#[allow(clippy::too_many_arguments)]
fn draw_cells(
    svg: &mut Svg,
    plot: &Rect,
    rows: usize,
    cols: usize,
    cell: Cell,
    scale: Scaled,
    value: &dyn Fn(usize, usize) -> f64,
    row_side: &Side,
    col_side: &Side,
) {
    let tooltips = rows * cols <= TOOLTIP_CELLS;
    for r in 0..rows {
        let y = plot.y + r as f64 * cell.h;
        let h = cell.h + if r + 1 < rows { 0.5 } else { 0.0 };
        let mut c = 0;
        while c < cols {
            let colour = scale.colour(value(r, c));
            let mut end = c + 1;
            if !tooltips {
                while end < cols && scale.colour(value(r, end)) == colour {
                    end += 1;
                }
            }
            let x = plot.x + c as f64 * cell.w;
            let w = (end - c) as f64 * cell.w + if end < cols { 0.5 } else { 0.0 };
            let rect = Rect { x, y, w, h };
            let fill = format!("fill=\"{colour}\"");
            if tooltips {
                let name =
                    |s: &Side, i: usize| s.full[i].clone().unwrap_or_else(|| s.labels[i].clone());
                let tip = format!(
                    "{}, {}: {}",
                    name(row_side, r),
                    name(col_side, c),
                    number::short(value(r, c))
                );
                svg.rect_titled(&rect, &fill, &tip);
            } else {
                svg.rect(&rect, &fill);
            }
            c = end;
        }
    }
}

fn draw_side_labels(svg: &mut Svg, plot: &Rect, cell: Cell, rows: &Side, cols: &Side) {
    for (i, t) in rows.labels.iter().enumerate().step_by(rows.stride) {
        let cy = plot.y + (i as f64 + 0.5) * cell.h;
        let mut l = Label::new(
            plot.x - GAP,
            cy + 0.5 * (ASCENT - DESCENT) * rows.size,
            t.clone(),
            rows.size,
            Anchor::End,
        );
        l.tooltip = rows.full[i].clone();
        svg.text(&l);
    }
    for (i, t) in cols.labels.iter().enumerate().step_by(cols.stride) {
        let cx = plot.x + (i as f64 + 0.5) * cell.w;
        let top = plot.bottom() + GAP;
        let mut l = if cols.upright {
            let mut l = Label::new(
                cx + 0.5 * (ASCENT - DESCENT) * cols.size,
                top,
                t.clone(),
                cols.size,
                Anchor::End,
            );
            l.vertical = true;
            l
        } else {
            Label::new(
                cx,
                top + ASCENT * cols.size,
                t.clone(),
                cols.size,
                Anchor::Middle,
            )
        };
        l.tooltip = cols.full[i].clone();
        svg.text(&l);
    }
}

/// Ticks of the colour bar: 1-2-5 ticks of its range, plus its ends (the saturation values)
/// when no tick is near them, all in the axis's one style.
fn colour_bar_ticks(s: &Scale) -> Vec<Tick> {
    let mut t = axis::y_ticks(s);
    let labelled: Vec<f64> = t
        .iter()
        .filter(|t| t.label.is_some())
        .map(|t| s.map(t.value))
        .collect();
    let min_gap = 1.8 * TICK_SIZE * LINE;
    let max_abs = s.lo.abs().max(s.hi.abs());
    let style = ticks::axis_style(max_abs, 3);
    for end in [s.lo, s.hi] {
        let px = s.map(end);
        if labelled.iter().all(|&p| (p - px).abs() >= min_gap) {
            t.retain(|t| t.label.is_some() || (s.map(t.value) - px).abs() >= 1.0);
            t.push(Tick {
                value: end,
                label: Some(number::format(end, style)),
            });
        } else if let Some(near) = t.iter_mut().filter(|t| t.label.is_some()).min_by(|a, b| {
            (s.map(a.value) - px)
                .abs()
                .total_cmp(&(s.map(b.value) - px).abs())
        }) {
            // A tick within a label's height of the end: the end is what saturates, so it is
            // the one labelled.
            if (s.map(near.value) - px).abs() > 1.0 {
                near.value = end;
                near.label = Some(number::format(end, style));
            }
        }
    }
    t.sort_by(|a, b| a.value.total_cmp(&b.value));
    t
}

/// The colour bar: the ramp as a gradient, ticks and labels, and a triangle at an end beyond
/// which some values lie (drawn in the saturated colour).
#[allow(clippy::too_many_arguments)]
fn draw_colour_bar(
    svg: &mut Svg,
    chart: &Chart,
    bar: &Rect,
    scale: Scaled,
    s: &Scale,
    ticks: &[Tick],
    values: &[Vec<f64>],
) {
    let id = format!("{}-ramp", super::clip_id(chart));
    svg.vertical_gradient(&id, &scale.stops());
    svg.rect(
        bar,
        &format!("fill=\"url(#{id})\" stroke=\"{AXIS}\" stroke-width=\"1\""),
    );
    let (lo, hi) = scale.range();
    let above = values.iter().flatten().any(|&v| v > hi);
    let below = values.iter().flatten().any(|&v| v < lo);
    let tri = 0.7 * BAR_W;
    let attrs = |c: Rgb| format!("fill=\"{c}\" stroke=\"{AXIS}\" stroke-width=\"1\"");
    if above {
        let (x, y) = (bar.x, bar.y);
        svg.polygon(
            &[(x, y), (x + BAR_W, y), (x + 0.5 * BAR_W, y - tri)],
            &attrs(scale.colour(hi)),
        );
    }
    if below {
        let (x, y) = (bar.x, bar.bottom());
        svg.polygon(
            &[(x, y), (x + BAR_W, y), (x + 0.5 * BAR_W, y + tri)],
            &attrs(scale.colour(lo)),
        );
    }
    let tick_attrs = format!("stroke=\"{AXIS}\" stroke-width=\"1\"");
    for t in ticks {
        let y = s.map(t.value);
        let len = if t.label.is_some() {
            TICK_LEN
        } else {
            0.6 * TICK_LEN
        };
        svg.line((bar.right(), y), (bar.right() + len, y), &tick_attrs);
        if let Some(l) = &t.label {
            svg.text(&Label::new(
                bar.right() + TICK_LEN + GAP,
                y + 0.5 * (ASCENT - DESCENT) * TICK_SIZE,
                l.clone(),
                TICK_SIZE,
                Anchor::Start,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_bar_labels_its_saturation_ends() {
        let s = Scale {
            lo: -5.4e-14,
            hi: 5.4e-14,
            log: false,
            a: 400.0,
            b: 0.0,
        };
        let t = colour_bar_ticks(&s);
        let labels: Vec<&str> = t.iter().filter_map(|t| t.label.as_deref()).collect();
        assert_eq!(labels.first(), Some(&"-5.4e-14"));
        assert_eq!(labels.last(), Some(&"5.4e-14"));
        assert!(labels.contains(&"0"));
        // Sorted, and labels never closer than the fitted minimum.
        let px: Vec<f64> = t
            .iter()
            .filter(|t| t.label.is_some())
            .map(|t| s.map(t.value))
            .collect();
        assert!(px
            .windows(2)
            .all(|w| (w[0] - w[1]).abs() >= 1.8 * TICK_SIZE * LINE - 1e-9));
        let s = Scale {
            lo: 0.0,
            hi: 1.0,
            log: false,
            a: 200.0,
            b: 0.0,
        };
        let labels: Vec<String> = colour_bar_ticks(&s)
            .into_iter()
            .filter_map(|t| t.label)
            .collect();
        assert_eq!(labels.first().map(String::as_str), Some("0"));
        assert_eq!(labels.last().map(String::as_str), Some("1"));
    }

    #[test]
    fn side_labels_thin_out_in_nice_steps() {
        assert_eq!(
            [1, 2, 3, 5, 6, 11, 40].map(nice_stride),
            [1, 2, 5, 5, 10, 20, 50]
        );
        let idx: Vec<String> = (0..64).map(|i| i.to_string()).collect();
        let cols = Side::cols(idx.clone(), 7.5, true);
        assert!(!cols.upright && cols.stride == 5, "{cols:?}");
        let rows = Side::rows(idx, 7.5, true);
        assert_eq!((rows.size, rows.stride), (9.0, 2));
        let words: Vec<String> = ["alpha", "beta"].map(String::from).into();
        assert!(Side::cols(words.clone(), 20.0, false).upright);
        assert!(!Side::cols(words, 60.0, false).upright);
    }

    #[test]
    fn unusable_scales_fall_back_to_the_data() {
        let v = vec![vec![-2.0, 1.0], vec![f64::NAN, 0.5]];
        assert_eq!(
            Scaled::new(&ColourScale::Diverging { max: 0.0 }, &v),
            Scaled::Diverging(2.0)
        );
        assert_eq!(
            Scaled::new(&ColourScale::Sequential { min: 1.0, max: 1.0 }, &v),
            Scaled::Sequential(-2.0, 1.0)
        );
        assert_eq!(
            Scaled::new(&ColourScale::Diverging { max: f64::NAN }, &[]),
            Scaled::Diverging(1.0)
        );
    }

    #[test]
    fn cell_text_uses_fewer_digits_when_wide() {
        let (t, _) = cell_texts(&[vec![0.123456, -4.4408920985e-16]], 2);
        assert_eq!(t[0][0], "0.12");
        assert_eq!(t[0][1], "-4.4e-16");
        let (t, _) = cell_texts(&[vec![0.123456, 0.5]], 2);
        assert_eq!(t[0], ["0.123", "0.5"]);
    }
}
