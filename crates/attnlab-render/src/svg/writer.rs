//! A small SVG writer: elements appended to a string, every piece of user text escaped.
//!
//! Coordinates are written with at most two decimals (hundredths of a pixel); they are geometry,
//! not numbers a reader sees, so they do not go through the number formatter.

use std::fmt::{self, Write as _};

use super::geom::Rect;
use super::text::{self, ASCENT, DESCENT, FONT_FAMILY};

/// A coordinate or length, written with at most two decimals and no trailing zeros.
#[derive(Debug, Clone, Copy)]
pub struct P(pub f64);

impl fmt::Display for P {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = (self.0 * 100.0).round() / 100.0;
        let r = if r == 0.0 { 0.0 } else { r };
        let s = format!("{r:.2}");
        f.write_str(s.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// `s` escaped for XML text and attribute values; characters XML 1.0 forbids are dropped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || matches!(c, '\u{FFFE}' | '\u{FFFF}') => {}
            c => out.push(c),
        }
    }
    out
}

/// Which point of the text its `x` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The start (left end) of the text.
    Start,
    /// Its middle.
    Middle,
    /// Its end.
    End,
}

impl Anchor {
    fn svg(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// One line of text at a position.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// x of the anchor point.
    pub x: f64,
    /// y of the baseline.
    pub y: f64,
    /// The text.
    pub text: String,
    /// Font size in px.
    pub size: f64,
    /// Horizontal alignment about `x`.
    pub anchor: Anchor,
    /// Turned 90° anticlockwise about (x, y), reading upwards (y-axis titles, long categories).
    pub vertical: bool,
    /// Fill colour.
    pub fill: &'static str,
    /// A white outline behind the glyphs, for labels drawn over data.
    pub halo: bool,
    /// A tooltip (the full text of a shortened label).
    pub tooltip: Option<String>,
}

impl Label {
    /// A horizontal, dark, unadorned label.
    pub fn new(x: f64, y: f64, text: impl Into<String>, size: f64, anchor: Anchor) -> Self {
        Label {
            x,
            y,
            text: text.into(),
            size,
            anchor,
            vertical: false,
            fill: "#222",
            halo: false,
            tooltip: None,
        }
    }

    /// The box the text occupies by the width model: advance × (ascent + descent).
    pub fn bbox(&self) -> Rect {
        let w = text::width(&self.text, self.size);
        let (a, b) = match self.anchor {
            Anchor::Start => (0.0, w),
            Anchor::Middle => (-0.5 * w, 0.5 * w),
            Anchor::End => (-w, 0.0),
        };
        let (up, down) = (ASCENT * self.size, DESCENT * self.size);
        if self.vertical {
            // Text direction is screen −y; the glyphs' "up" is screen −x.
            Rect::ltrb(self.x - up, self.y - b, self.x + down, self.y - a)
        } else {
            Rect::ltrb(self.x + a, self.y - up, self.x + b, self.y + down)
        }
    }
}

/// An SVG document being written.
pub struct Svg {
    out: String,
}

impl Svg {
    /// Opens a `width` × `height` document: `role="img"`, the chart title as its `<title>`
    /// (the accessible name), the chart font, a white background.
    pub fn new(width: f64, height: f64, title: &str) -> Self {
        let mut out = String::new();
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" role=\"img\" font-family=\"{FONT_FAMILY}\">\n\
             <title>{}</title>\n<rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>\n",
            escape(title),
            w = P(width),
            h = P(height),
        );
        Svg { out }
    }

    /// Closes the document.
    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }

    /// Appends markup written by this module's callers (constant attribute text only).
    fn raw(&mut self, s: fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(s);
    }

    /// `<rect>` with the given presentation attributes (e.g. `fill="#0072B2"`).
    pub fn rect(&mut self, r: &Rect, attrs: &str) {
        self.raw(format_args!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {attrs}/>\n",
            P(r.x),
            P(r.y),
            P(r.w),
            P(r.h)
        ));
    }

    /// `<rect>` with a tooltip.
    pub fn rect_titled(&mut self, r: &Rect, attrs: &str, tooltip: &str) {
        self.raw(format_args!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {attrs}><title>{}</title></rect>\n",
            P(r.x),
            P(r.y),
            P(r.w),
            P(r.h),
            escape(tooltip)
        ));
    }

    /// A straight `<line>`.
    pub fn line(&mut self, a: (f64, f64), b: (f64, f64), attrs: &str) {
        self.raw(format_args!(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {attrs}/>\n",
            P(a.0),
            P(a.1),
            P(b.0),
            P(b.1)
        ));
    }

    /// A `<path>` through runs of points (each run a separate sub-path), unfilled.
    pub fn polyline(&mut self, runs: &[Vec<(f64, f64)>], attrs: &str) {
        let mut d = String::new();
        for run in runs.iter().filter(|r| !r.is_empty()) {
            for (i, (x, y)) in run.iter().enumerate() {
                let _ = write!(d, "{}{},{}", if i == 0 { "M" } else { "L" }, P(*x), P(*y));
            }
        }
        if !d.is_empty() {
            self.raw(format_args!("<path d=\"{d}\" fill=\"none\" {attrs}/>\n"));
        }
    }

    /// A closed, filled polygon.
    pub fn polygon(&mut self, pts: &[(f64, f64)], attrs: &str) {
        let mut p = String::new();
        for (x, y) in pts {
            let _ = write!(p, "{},{} ", P(*x), P(*y));
        }
        self.raw(format_args!(
            "<polygon points=\"{}\" {attrs}/>\n",
            p.trim_end()
        ));
    }

    /// A `<circle>`.
    pub fn circle(&mut self, c: (f64, f64), r: f64, attrs: &str) {
        self.raw(format_args!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {attrs}/>\n",
            P(c.0),
            P(c.1),
            P(r)
        ));
    }

    /// Opens a `<g>` with the given attributes.
    pub fn open_group(&mut self, attrs: &str) {
        self.raw(format_args!("<g {attrs}>\n"));
    }

    /// Closes a `<g>`.
    pub fn close_group(&mut self) {
        self.out.push_str("</g>\n");
    }

    /// A rectangular clip path named `id`.
    pub fn clip_rect(&mut self, id: &str, r: &Rect) {
        self.raw(format_args!(
            "<clipPath id=\"{id}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>\n",
            P(r.x),
            P(r.y),
            P(r.w),
            P(r.h)
        ));
    }

    /// A vertical linear gradient named `id`, `stops` from the bottom (offset 0) to the top.
    pub fn vertical_gradient(&mut self, id: &str, stops: &[(f64, String)]) {
        self.raw(format_args!(
            "<linearGradient id=\"{id}\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">"
        ));
        for (offset, colour) in stops {
            self.raw(format_args!(
                "<stop offset=\"{}\" stop-color=\"{colour}\"/>",
                P(*offset)
            ));
        }
        self.out.push_str("</linearGradient>\n");
    }

    /// A `<text>` element for `label`.
    pub fn text(&mut self, label: &Label) {
        if label.text.is_empty() {
            return;
        }
        let (x, y) = (P(label.x), P(label.y));
        self.raw(format_args!(
            "<text x=\"{x}\" y=\"{y}\" font-size=\"{}\" fill=\"{}\"",
            P(label.size),
            label.fill
        ));
        if label.anchor != Anchor::Start {
            self.raw(format_args!(" text-anchor=\"{}\"", label.anchor.svg()));
        }
        if label.vertical {
            self.raw(format_args!(" transform=\"rotate(-90 {x} {y})\""));
        }
        if label.halo {
            self.out.push_str(
                " stroke=\"#fff\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\"",
            );
        }
        self.out.push('>');
        if let Some(t) = &label.tooltip {
            self.raw(format_args!("<title>{}</title>", escape(t)));
        }
        self.raw(format_args!("{}</text>\n", escape(&label.text)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_short() {
        assert_eq!(P(12.0).to_string(), "12");
        assert_eq!(P(12.345).to_string(), "12.35");
        assert_eq!(P(-0.001).to_string(), "0");
        assert_eq!(P(0.5).to_string(), "0.5");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a<b & \"c\"\u{7}"), "a&lt;b &amp; &quot;c&quot;");
        let mut s = Svg::new(100.0, 50.0, "x < y");
        s.text(&Label::new(1.0, 2.0, "<script>", 12.0, Anchor::Middle));
        let out = s.finish();
        assert!(out.starts_with("<svg") && out.contains("<title>x &lt; y</title>"));
        assert!(out.contains("&lt;script&gt;</text>") && !out.contains("<script>"));
    }

    #[test]
    fn vertical_boxes_turn_with_the_text() {
        let mut l = Label::new(50.0, 100.0, "abc", 12.0, Anchor::Middle);
        let h = l.bbox();
        l.vertical = true;
        let v = l.bbox();
        assert!((h.w - v.h).abs() < 1e-9 && (h.h - v.w).abs() < 1e-9);
        assert!((v.cy() - 100.0).abs() < 1e-9 && v.right() > 50.0 && v.x < 50.0);
    }
}
