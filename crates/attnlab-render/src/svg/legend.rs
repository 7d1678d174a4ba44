//! Markers, the legend, and placing labels where they cover neither other text nor data.

use super::geom::Rect;
use super::text::{self, Block, ASCENT, LINE};
use super::writer::{Anchor, Label, Svg};
use super::{GAP, LEGEND_SIZE, MUTED, SMALL_SIZE};

/// Marker shapes, cycled per series so series differ by more than colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// ●
    Circle,
    /// ■
    Square,
    /// ▲
    Triangle,
    /// ◆
    Diamond,
    /// ▼
    TriangleDown,
}

impl Marker {
    /// The marker of series `i`.
    pub fn nth(i: usize) -> Self {
        [
            Marker::Circle,
            Marker::Square,
            Marker::Triangle,
            Marker::Diamond,
            Marker::TriangleDown,
        ][i % 5]
    }

    /// Draws the marker centred at `c` with "radius" `r`, filled with `colour`.
    pub fn draw(self, svg: &mut Svg, c: (f64, f64), r: f64, colour: &str) {
        let attrs = format!("fill=\"{colour}\" stroke=\"#fff\" stroke-width=\"0.8\"");
        let (x, y) = c;
        match self {
            Marker::Circle => svg.circle(c, r, &attrs),
            Marker::Square => {
                let s = 0.9 * r;
                svg.rect(&Rect::ltrb(x - s, y - s, x + s, y + s), &attrs);
            }
            Marker::Triangle => {
                let s = 1.2 * r;
                svg.polygon(
                    &[(x, y - s), (x + s, y + 0.8 * s), (x - s, y + 0.8 * s)],
                    &attrs,
                );
            }
            Marker::TriangleDown => {
                let s = 1.2 * r;
                svg.polygon(
                    &[(x, y + s), (x + s, y - 0.8 * s), (x - s, y - 0.8 * s)],
                    &attrs,
                );
            }
            Marker::Diamond => {
                let s = 1.25 * r;
                svg.polygon(&[(x, y - s), (x + s, y), (x, y + s), (x - s, y)], &attrs);
            }
        }
    }
}

/// What a legend entry shows next to its name.
#[derive(Debug, Clone, PartialEq)]
pub enum Swatch {
    /// A line in the series colour, with the series marker if it has markers.
    Line {
        /// Colour.
        colour: &'static str,
        /// Dash pattern (`stroke-dasharray`), if any.
        dash: Option<&'static str>,
        /// Marker, if drawn.
        marker: Option<Marker>,
    },
    /// A filled box (bar groups).
    Box {
        /// Colour.
        colour: &'static str,
    },
    /// Nothing (the "… n more" line).
    None,
}

/// A legend: entries with swatches, names wrapped to a maximum width.
#[derive(Debug, Clone, PartialEq)]
pub struct Legend {
    entries: Vec<(Swatch, Block)>,
}

const SWATCH_W: f64 = 22.0;
const INNER: f64 = 6.0;

impl Legend {
    /// A legend of `entries` whose names wrap at `max_text_w`, at [`LEGEND_SIZE`]; empty names
    /// are left out, so a legend of only unnamed series is empty.
    pub fn new(entries: Vec<(Swatch, &str)>, max_text_w: f64) -> Self {
        let entries = entries
            .into_iter()
            .filter(|(_, name)| !name.trim().is_empty())
            .map(|(s, name)| {
                let lines = text::wrap(name, LEGEND_SIZE, max_text_w);
                (
                    s,
                    Block {
                        lines,
                        size: LEGEND_SIZE,
                    },
                )
            })
            .collect();
        Legend { entries }
    }

    /// Nothing to show.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Keeps the first entries that fit in `max_h` and replaces the rest by one "… n more" line.
    pub fn limit_height(&mut self, max_h: f64) {
        if self.size().1 <= max_h {
            return;
        }
        let total = self.entries.len();
        let line = LEGEND_SIZE * LINE;
        while self.entries.len() > 1 && self.size().1 + line > max_h {
            self.entries.pop();
        }
        let more = total - self.entries.len();
        self.entries.push((
            Swatch::None,
            Block::single(&format!("… {more} more"), LEGEND_SIZE),
        ));
    }

    /// (width, height) of the framed legend.
    pub fn size(&self) -> (f64, f64) {
        let text_w = self
            .entries
            .iter()
            .map(|(_, b)| b.width())
            .fold(0.0, f64::max);
        let h: f64 = self.entries.iter().map(|(_, b)| b.height()).sum();
        (2.0 * INNER + SWATCH_W + GAP + text_w, 2.0 * INNER + h)
    }

    /// The legend's frame if its top-left corner is at (x, y).
    pub fn rect_at(&self, x: f64, y: f64) -> Rect {
        let (w, h) = self.size();
        Rect { x, y, w, h }
    }

    /// Draws the legend with its top-left corner at (x, y); returns its frame.
    pub fn draw(&self, svg: &mut Svg, x: f64, y: f64) -> Rect {
        let frame = self.rect_at(x, y);
        svg.rect(
            &frame,
            "fill=\"#fff\" fill-opacity=\"0.92\" stroke=\"#bbb\" stroke-width=\"1\" rx=\"3\"",
        );
        let mut top = y + INNER;
        for (swatch, name) in &self.entries {
            let size = name.size;
            let mid = top + 0.5 * size * LINE;
            let sx = x + INNER;
            match swatch {
                Swatch::Line {
                    colour,
                    dash,
                    marker,
                } => {
                    let dash = dash
                        .map(|d| format!(" stroke-dasharray=\"{d}\""))
                        .unwrap_or_default();
                    svg.line(
                        (sx, mid),
                        (sx + SWATCH_W, mid),
                        &format!("stroke=\"{colour}\" stroke-width=\"2\"{dash}"),
                    );
                    if let Some(m) = marker {
                        m.draw(svg, (sx + 0.5 * SWATCH_W, mid), 3.5, colour);
                    }
                }
                Swatch::None => {}
                Swatch::Box { colour } => {
                    let s = 0.4 * size;
                    let c = sx + 0.5 * SWATCH_W;
                    svg.rect(
                        &Rect::ltrb(c - s, mid - s, c + s, mid + s),
                        &format!("fill=\"{colour}\""),
                    );
                }
            }
            for (i, line) in name.lines.iter().enumerate() {
                svg.text(&Label::new(
                    sx + SWATCH_W + GAP,
                    top + text::first_baseline(size) + i as f64 * size * LINE,
                    line.clone(),
                    size,
                    Anchor::Start,
                ));
            }
            top += name.height();
        }
        frame
    }
}

/// Places labels so that they overlap no text already placed, preferring spots that cover
/// no data.
#[derive(Debug, Clone)]
pub struct Placer {
    /// Where labels may go.
    pub bounds: Rect,
    taken: Vec<Rect>,
}

impl Placer {
    /// A placer for labels inside `bounds`.
    pub fn new(bounds: Rect) -> Self {
        Placer {
            bounds,
            taken: Vec::new(),
        }
    }

    /// Marks `r` as occupied (a legend, a label placed elsewhere).
    pub fn take(&mut self, r: Rect) {
        self.taken.push(r);
    }

    /// The first of `candidates` inside the bounds that overlaps no occupied box and covers the
    /// least data (`covers` counts what a box covers); if every candidate overlaps text, the
    /// one overlapping the fewest boxes. The chosen label's box becomes occupied. `None` when no
    /// candidate lies inside the bounds.
    pub fn place(
        &mut self,
        candidates: Vec<Label>,
        covers: &dyn Fn(&Rect) -> usize,
    ) -> Option<Label> {
        let mut best: Option<((usize, usize), Label)> = None;
        for c in candidates {
            let b = c.bbox();
            if !self.bounds.contains(&b) {
                continue;
            }
            let clash = self
                .taken
                .iter()
                .filter(|t| t.intersects(&b.inflate(1.0)))
                .count();
            let score = (clash, covers(&b));
            if best.as_ref().is_none_or(|(s, _)| score < *s) {
                let done = score == (0, 0);
                best = Some((score, c));
                if done {
                    break;
                }
            }
        }
        let (_, label) = best?;
        self.taken.push(label.bbox());
        Some(label)
    }
}

/// Top-left corners to try for a legend of size `(w, h)` inside `plot`, best first: the four
/// corners, then the middles of the right and left edges, then the middles of the top and
/// bottom edges; each `inset` px from the edges.
pub fn spots(plot: &Rect, (w, h): (f64, f64), inset: f64) -> Vec<(f64, f64)> {
    let (l, r) = (plot.x + inset, plot.right() - inset - w);
    let (t, b) = (plot.y + inset, plot.bottom() - inset - h);
    let (cx, cy) = (plot.cx() - 0.5 * w, plot.cy() - 0.5 * h);
    if w + 2.0 * inset > plot.w || h + 2.0 * inset > plot.h {
        return Vec::new();
    }
    vec![
        (r, t),
        (l, t),
        (r, b),
        (l, b),
        (r, cy),
        (l, cy),
        (cx, t),
        (cx, b),
    ]
}

/// A small label with a white halo, for drawing over a plot: `text` shortened to `max_w` (the
/// full text as its tooltip).
pub fn annotation(
    x: f64,
    y: f64,
    text: &str,
    anchor: Anchor,
    fill: &'static str,
    max_w: f64,
) -> Label {
    let shown = text::truncate(text, SMALL_SIZE, max_w);
    let mut l = Label::new(x, y, shown.clone(), SMALL_SIZE, anchor);
    l.halo = true;
    l.fill = fill;
    l.tooltip = (shown != text).then(|| text.to_string());
    l
}

/// Candidate places for the label of a horizontal reference line at pixel `y` in `plot`:
/// above or below the line, at its right end, left end or middle.
pub fn h_line_candidates(y: f64, label: &str, plot: &Rect) -> Vec<Label> {
    let up = ASCENT * SMALL_SIZE;
    let (above, below) = (y - 4.0, y + 4.0 + up);
    let mut c = Vec::new();
    for (x, a) in [
        (plot.right() - 6.0, Anchor::End),
        (plot.x + 6.0, Anchor::Start),
        (plot.cx(), Anchor::Middle),
    ] {
        c.push(annotation(x, above, label, a, MUTED, plot.w - 12.0));
        c.push(annotation(x, below, label, a, MUTED, plot.w - 12.0));
    }
    with_clamped(c, plot)
}

/// `candidates` followed by copies shifted just enough to lie inside `bounds` (inset 3 px), so
/// a label near an edge still finds a place.
pub fn with_clamped(mut candidates: Vec<Label>, bounds: &Rect) -> Vec<Label> {
    let b = bounds.inflate(-3.0);
    let extra: Vec<Label> = candidates
        .iter()
        .map(|c| {
            let r = c.bbox();
            let mut c = c.clone();
            if r.x < b.x {
                c.x += b.x - r.x;
            } else if r.right() > b.right() {
                c.x -= r.right() - b.right();
            }
            if r.y < b.y {
                c.y += b.y - r.y;
            } else if r.bottom() > b.bottom() {
                c.y -= r.bottom() - b.bottom();
            }
            c
        })
        .collect();
    candidates.extend(extra);
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tall_legend_ends_with_how_many_it_hides() {
        let names: Vec<String> = (0..40).map(|i| format!("series {i}")).collect();
        let mut l = Legend::new(
            names.iter().map(|n| (Swatch::None, n.as_str())).collect(),
            200.0,
        );
        l.limit_height(200.0);
        assert!(l.size().1 <= 200.0);
        let (_, last) = l.entries.last().unwrap();
        let shown = l.entries.len() - 1;
        assert_eq!(last.lines, [format!("… {} more", 40 - shown)]);
        let mut short = Legend::new(vec![(Swatch::None, "a"), (Swatch::None, "")], 200.0);
        short.limit_height(200.0);
        assert_eq!(short.entries.len(), 1);
    }

    #[test]
    fn the_placer_avoids_taken_boxes_then_data() {
        let mut p = Placer::new(Rect::ltrb(0.0, 0.0, 200.0, 100.0));
        p.take(Rect::ltrb(0.0, 0.0, 100.0, 30.0));
        let at = |x: f64| Label::new(x, 20.0, "label", 11.0, Anchor::Start);
        // The first candidate overlaps the taken box; the third covers no data.
        let covers = |r: &Rect| usize::from(r.x < 150.0);
        let chosen = p
            .place(vec![at(10.0), at(110.0), at(155.0)], &covers)
            .unwrap();
        assert_eq!(chosen.x, 155.0);
        // Outside the bounds: nothing.
        assert!(p.place(vec![at(190.0)], &|_| 0).is_none());
    }
}
