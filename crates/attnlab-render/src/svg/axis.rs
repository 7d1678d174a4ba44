//! Scales (data → pixels), their domains, ticks that fit the space, and drawing the axes.

use super::geom::Rect;
use super::text::{self, Block, ASCENT, DESCENT, LINE};
use super::ticks::{self, Tick};
use super::writer::{Anchor, Label, Svg};
use super::{AXIS, GAP, GRID, INK, LABEL_SIZE, TICK_LEN, TICK_SIZE};

/// A linear or logarithmic map from the data interval [`lo`, `hi`] to pixels [`a`, `b`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// Low end of the domain.
    pub lo: f64,
    /// High end of the domain.
    pub hi: f64,
    /// Logarithmic (lo > 0).
    pub log: bool,
    /// Pixel of `lo`.
    pub a: f64,
    /// Pixel of `hi`.
    pub b: f64,
}

impl Scale {
    /// The pixel of `v`: a + (b − a)·t with t = (v − lo)/(hi − lo), or the same in log10 v.
    pub fn map(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.a + t * (self.b - self.a)
    }

    /// `v` can be drawn on this scale (finite, and positive on a log scale).
    pub fn accepts(&self, v: f64) -> bool {
        v.is_finite() && (!self.log || v > 0.0)
    }
}

/// The domain drawn for `values` (non-finite ones, and non-positive ones on a log axis,
/// ignored): their range widened by 5 % of its span on each side (on a log axis 5 % of the
/// decades spanned, at least 0.05 decade). With `zero`, the domain starts (or ends) exactly at 0
/// and is widened only away from it (bars grow from 0). An empty or one-value range gets a
/// span of its own.
pub fn domain(values: impl Iterator<Item = f64>, log: bool, zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if log {
        if !lo.is_finite() {
            return (1.0, 10.0);
        }
        if hi <= lo * (1.0 + 1e-12) {
            return (lo / 3.0, hi * 3.0);
        }
        let pad = 0.05 * (hi / lo).log10().max(1.0);
        let f = 10f64.powf(pad);
        return (lo / f, hi * f);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi <= lo {
        let half = if lo == 0.0 { 1.0 } else { 0.5 * lo.abs() };
        return if zero && lo == 0.0 {
            (0.0, 1.0)
        } else {
            (lo - half, hi + half)
        };
    }
    let pad = 0.05 * (hi - lo);
    let lo2 = if zero && lo == 0.0 { 0.0 } else { lo - pad };
    let hi2 = if zero && hi == 0.0 { 0.0 } else { hi + pad };
    (lo2, hi2)
}

/// The densest ticks (at most `start` intervals, fewer while `fits` says no) for `scale`.
fn fitted(scale: &Scale, start: usize, fits: impl Fn(&[Tick]) -> bool) -> Vec<Tick> {
    let mut last = Vec::new();
    for max in (2..=start.max(2)).rev() {
        let t = if scale.log {
            ticks::log(scale.lo, scale.hi, max)
        } else {
            ticks::linear(scale.lo, scale.hi, max)
        };
        if fits(&t) {
            return t;
        }
        last = t;
    }
    // Even two labels collide: keep the ticks, label only the first and last.
    let n = last.iter().filter(|t| t.label.is_some()).count();
    let mut seen = 0;
    for t in &mut last {
        if t.label.is_some() {
            seen += 1;
            if seen != 1 && seen != n {
                t.label = None;
            }
        }
    }
    last
}

/// Ticks of a vertical axis: labels at least 1.8 lines apart.
pub fn y_ticks(scale: &Scale) -> Vec<Tick> {
    let span = (scale.a - scale.b).abs();
    let min_gap = 1.8 * TICK_SIZE * LINE;
    fitted(scale, (span / 45.0) as usize, |t| {
        let px: Vec<f64> = t
            .iter()
            .filter(|t| t.label.is_some())
            .map(|t| scale.map(t.value))
            .collect();
        px.windows(2).all(|w| (w[1] - w[0]).abs() >= min_gap)
    })
}

/// Ticks of a horizontal axis: neighbouring labels at least 14 px apart.
pub fn x_ticks(scale: &Scale) -> Vec<Tick> {
    let span = (scale.b - scale.a).abs();
    fitted(scale, (span / 55.0) as usize, |t| {
        let boxes: Vec<(f64, f64)> = t
            .iter()
            .filter_map(|t| {
                let w = text::width(t.label.as_deref()?, TICK_SIZE);
                let x = scale.map(t.value);
                Some((x - 0.5 * w, x + 0.5 * w))
            })
            .collect();
        boxes.windows(2).all(|w| w[1].0 - w[0].1 >= 14.0)
    })
}

/// Width of the widest tick label.
pub fn widest(t: &[Tick]) -> f64 {
    t.iter()
        .filter_map(|t| t.label.as_deref())
        .map(|l| text::width(l, TICK_SIZE))
        .fold(0.0, f64::max)
}

/// Width a vertical axis needs left of the plot: its rotated title, tick labels and ticks.
pub fn y_axis_width(t: &[Tick], title: &Block) -> f64 {
    let title_w = if title.is_empty() {
        0.0
    } else {
        title.height() + GAP
    };
    title_w + widest(t) + TICK_LEN + GAP
}

/// Height a horizontal numeric axis needs below the plot: ticks, one line of labels, its title.
pub fn x_axis_height(title: &Block) -> f64 {
    let title_h = if title.is_empty() {
        0.0
    } else {
        title.height() + GAP
    };
    TICK_LEN + GAP + (ASCENT + DESCENT) * TICK_SIZE + title_h
}

/// A title (axis or chart) fitted to `len` px: `LABEL_SIZE` down to 10 px, at most 2 lines.
pub fn title_block(s: &str, len: f64) -> Block {
    text::fit(s, len.max(40.0), LABEL_SIZE, 10.0, 2)
}

/// Light grid lines at the labelled ticks, inside `plot`.
pub fn grid(
    svg: &mut Svg,
    plot: &Rect,
    x: Option<(&Scale, &[Tick])>,
    y: Option<(&Scale, &[Tick])>,
) {
    let attrs = format!("stroke=\"{GRID}\" stroke-width=\"1\"");
    if let Some((s, t)) = x {
        for t in t.iter().filter(|t| t.label.is_some()) {
            let px = s.map(t.value);
            svg.line((px, plot.y), (px, plot.bottom()), &attrs);
        }
    }
    if let Some((s, t)) = y {
        for t in t.iter().filter(|t| t.label.is_some()) {
            let py = s.map(t.value);
            svg.line((plot.x, py), (plot.right(), py), &attrs);
        }
    }
}

/// The left axis: line, ticks (minor ones shorter), right-aligned labels, rotated title.
pub fn draw_y(svg: &mut Svg, plot: &Rect, scale: &Scale, t: &[Tick], title: &Block, x0: f64) {
    let attrs = format!("stroke=\"{AXIS}\" stroke-width=\"1\"");
    svg.line((plot.x, plot.y), (plot.x, plot.bottom()), &attrs);
    for t in t {
        let py = scale.map(t.value);
        let len = if t.label.is_some() {
            TICK_LEN
        } else {
            0.6 * TICK_LEN
        };
        svg.line((plot.x - len, py), (plot.x, py), &attrs);
        if let Some(l) = &t.label {
            let baseline = py + 0.5 * (ASCENT - DESCENT) * TICK_SIZE;
            svg.text(&Label::new(
                plot.x - TICK_LEN - GAP,
                baseline,
                l.clone(),
                TICK_SIZE,
                Anchor::End,
            ));
        }
    }
    vertical_title(svg, title, x0, plot.cy());
}

/// A rotated axis title whose lines start (leftmost ascender) at `x0`, centred on `cy`.
pub fn vertical_title(svg: &mut Svg, title: &Block, x0: f64, cy: f64) {
    for (i, line) in title.lines.iter().enumerate() {
        let x = x0 + ASCENT * title.size + i as f64 * title.size * LINE;
        let mut l = Label::new(x, cy, line.clone(), title.size, Anchor::Middle);
        l.vertical = true;
        l.fill = INK;
        svg.text(&l);
    }
}

/// Lines of `block` centred on `cx`, the first line's ascender at `top`.
pub fn centred_block(svg: &mut Svg, block: &Block, cx: f64, top: f64, fill: &'static str) {
    for (i, line) in block.lines.iter().enumerate() {
        let y = top + ASCENT * block.size + i as f64 * block.size * LINE;
        let mut l = Label::new(cx, y, line.clone(), block.size, Anchor::Middle);
        l.fill = fill;
        svg.text(&l);
    }
}

/// The bottom axis of numbers: line, ticks, centred labels, title below.
pub fn draw_x(svg: &mut Svg, plot: &Rect, scale: &Scale, t: &[Tick], title: &Block) {
    let attrs = format!("stroke=\"{AXIS}\" stroke-width=\"1\"");
    svg.line(
        (plot.x, plot.bottom()),
        (plot.right(), plot.bottom()),
        &attrs,
    );
    let base = plot.bottom() + TICK_LEN + GAP + ASCENT * TICK_SIZE;
    for t in t {
        let px = scale.map(t.value);
        let len = if t.label.is_some() {
            TICK_LEN
        } else {
            0.6 * TICK_LEN
        };
        svg.line((px, plot.bottom()), (px, plot.bottom() + len), &attrs);
        if let Some(l) = &t.label {
            svg.text(&Label::new(px, base, l.clone(), TICK_SIZE, Anchor::Middle));
        }
    }
    let top = plot.bottom() + TICK_LEN + GAP + (ASCENT + DESCENT) * TICK_SIZE + GAP;
    centred_block(svg, title, plot.cx(), top, INK);
}

/// How far the first and last labels of a horizontal axis reach past the plot's left and right
/// edges (0 when they stay inside).
pub fn x_overhang(scale: &Scale, t: &[Tick]) -> (f64, f64) {
    let (mut left, mut right) = (0.0f64, 0.0f64);
    let (x0, x1) = (scale.a.min(scale.b), scale.a.max(scale.b));
    for t in t {
        if let Some(l) = &t.label {
            let half = 0.5 * text::width(l, TICK_SIZE);
            let px = scale.map(t.value);
            left = left.max(x0 - (px - half));
            right = right.max(px + half - x1);
        }
    }
    (left, right)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_pad_and_respect_zero() {
        assert_eq!(domain([0.0, 10.0].into_iter(), false, false), (-0.5, 10.5));
        assert_eq!(domain([2.0, 10.0].into_iter(), false, true), (0.0, 10.5));
        assert_eq!(domain([-4.0, -2.0].into_iter(), false, true), (-4.2, 0.0));
        assert_eq!(domain([3.0].into_iter(), false, false), (1.5, 4.5));
        assert_eq!(domain(std::iter::empty(), false, false), (0.0, 1.0));
        assert_eq!(
            domain([f64::NAN, -1.0, 0.0].into_iter(), true, false),
            (1.0, 10.0)
        );
        let (lo, hi) = domain([1e-16, 1e-4, -3.0].into_iter(), true, false);
        assert!(lo < 1e-16 && lo > 1e-17 && hi > 1e-4 && hi < 1e-3);
    }

    #[test]
    fn scales_map_ends_to_pixels() {
        let s = Scale {
            lo: 1.0,
            hi: 1000.0,
            log: true,
            a: 100.0,
            b: 400.0,
        };
        assert!((s.map(1.0) - 100.0).abs() < 1e-9);
        assert!((s.map(10.0) - 200.0).abs() < 1e-9);
        assert!(!s.accepts(0.0) && s.accepts(0.5));
        let y = Scale {
            lo: -1.0,
            hi: 1.0,
            log: false,
            a: 300.0,
            b: 100.0,
        };
        assert!((y.map(0.0) - 200.0).abs() < 1e-9);
    }

    #[test]
    fn fitted_ticks_never_collide() {
        for width in [120.0, 300.0, 700.0] {
            for (lo, hi, log) in [
                (0.0, 1.234e6, false),
                (1e-17, 1.0, true),
                (-3e-16, 5e-16, false),
            ] {
                let s = Scale {
                    lo,
                    hi,
                    log,
                    a: 0.0,
                    b: width,
                };
                let t = x_ticks(&s);
                let mut prev = f64::NEG_INFINITY;
                for t in t.iter().filter(|t| t.label.is_some()) {
                    let w = text::width(t.label.as_deref().unwrap(), TICK_SIZE);
                    let x = s.map(t.value);
                    assert!(x - 0.5 * w >= prev, "{lo}..{hi} in {width}px: {t:?}");
                    prev = x + 0.5 * w;
                }
            }
        }
    }
}
