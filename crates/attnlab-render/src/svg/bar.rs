//! Bar charts: one bar per category and group, grouped side by side, categories labelled
//! horizontally, on two lines, or turned upright (shortened) when they are long or many.

use attnlab_core::chart::{BarChart, Chart};
use attnlab_core::present::number;

use super::axis::{self, Scale};
use super::colour;
use super::geom::Rect;
use super::legend::{h_line_candidates, spots, Legend, Placer, Swatch};
use super::text::{self, Block, ASCENT, DESCENT, LINE};
use super::ticks::{self, Tick};
use super::writer::{Anchor, Label, Svg};
use super::{clip_id, Heading, AXIS, GAP, HEIGHT, INK, MUTED, PAD, SMALL_SIZE, TICK_LEN};
use super::{TICK_SIZE, WIDTH};

/// How the category names are set under the axis.
#[derive(Debug, Clone, PartialEq)]
struct Categories {
    /// Lines of each category's label (one line when upright).
    lines: Vec<Vec<String>>,
    /// Full names of shortened labels, for tooltips.
    full: Vec<Option<String>>,
    size: f64,
    /// Turned 90° (reading upwards).
    upright: bool,
    /// Label every `stride`-th category (the others would overlap).
    stride: usize,
    /// Height the labels take below the ticks.
    extent: f64,
}

/// Category labels for bands `band` px wide: horizontal if every name fits its band on up to
/// two lines broken between words (never inside one), at the tick size or up to 3 px smaller;
/// else upright, shortened to at most 25 % of the canvas height, at a size that fits the band
/// (every `stride`-th one when even 8 px is too tall for a band).
fn categories(names: &[String], band: f64) -> Categories {
    let max_w = band - 6.0;
    for size in [TICK_SIZE, TICK_SIZE - 1.0, TICK_SIZE - 2.0, TICK_SIZE - 3.0] {
        let wrapped: Vec<Vec<String>> = names.iter().map(|n| text::wrap(n, size, max_w)).collect();
        let whole_words = |name: &str, lines: &[String]| {
            lines
                .iter()
                .flat_map(|l| l.split_whitespace())
                .eq(name.split_whitespace())
        };
        let ok = wrapped.iter().zip(names).all(|(l, name)| {
            l.len() <= 2 && l.iter().all(|l| text::width(l, size) <= max_w) && whole_words(name, l)
        });
        if ok {
            let most = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
            return Categories {
                full: vec![None; names.len()],
                lines: wrapped,
                size,
                upright: false,
                stride: 1,
                extent: (most as f64 - 1.0) * size * LINE + (ASCENT + DESCENT) * size,
            };
        }
    }
    let glyph_h = ASCENT + DESCENT;
    let size = ((band - 3.0) / glyph_h).clamp(8.0, TICK_SIZE);
    let stride = ((size * glyph_h + 3.0) / band).ceil().max(1.0) as usize;
    let max_len = 0.25 * HEIGHT;
    let shown: Vec<String> = names
        .iter()
        .map(|n| text::truncate(n, size, max_len))
        .collect();
    let extent = shown
        .iter()
        .step_by(stride)
        .map(|s| text::width(s, size))
        .fold(0.0, f64::max);
    Categories {
        full: names
            .iter()
            .zip(&shown)
            .map(|(n, s)| (n != s).then(|| n.clone()))
            .collect(),
        lines: shown.into_iter().map(|s| vec![s]).collect(),
        size,
        upright: true,
        stride,
        extent,
    }
}

struct Layout {
    plot: Rect,
    y: Scale,
    yt: Vec<Tick>,
    y_title: Block,
    cats: Categories,
}

fn layout(b: &BarChart, top: f64, yd: (f64, f64), reserve: f64) -> Layout {
    let n = b.categories.len().max(1) as f64;
    let mut plot = Rect::ltrb(PAD + 60.0, top, WIDTH - PAD - reserve, HEIGHT - PAD - 40.0);
    let mut best = None;
    for _ in 0..6 {
        let y_title = axis::title_block(&b.y_label, plot.h);
        let y = Scale {
            lo: yd.0,
            hi: yd.1,
            log: b.log_y,
            a: plot.bottom(),
            b: plot.y,
        };
        let yt = axis::y_ticks(&y);
        let cats = categories(&b.categories, plot.w / n);
        let left = PAD + axis::y_axis_width(&yt, &y_title);
        let bottom = PAD + TICK_LEN + GAP + cats.extent;
        let want = Rect::ltrb(left, top, WIDTH - PAD - reserve, HEIGHT - bottom);
        let settled = (want.x - plot.x).abs() < 0.5 && (want.bottom() - plot.bottom()).abs() < 0.5;
        best = Some(Layout {
            plot,
            y,
            yt,
            y_title,
            cats,
        });
        if settled {
            break;
        }
        plot = want;
    }
    // Cannot fail: the loop body runs at least once and sets best.
    best.expect("at least one round")
}

/// A bar: its box, colour, value, and whether it grows downwards.
struct Bar {
    rect: Rect,
    colour: &'static str,
    value: f64,
    down: bool,
}

fn bars(b: &BarChart, lay: &Layout) -> Vec<Bar> {
    let p = lay.plot;
    let band = p.w / b.categories.len().max(1) as f64;
    let groups = b.groups.len().max(1) as f64;
    let bar_w = 0.8 * band / groups;
    let base = if lay.y.log {
        p.bottom()
    } else {
        lay.y.map(0.0).clamp(p.y, p.bottom())
    };
    let mut out = Vec::new();
    for (g, group) in b.groups.iter().enumerate() {
        for (i, &v) in group.values.iter().enumerate().take(b.categories.len()) {
            if !lay.y.accepts(v) {
                continue;
            }
            let x = p.x + i as f64 * band + 0.1 * band + g as f64 * bar_w;
            let top = lay.y.map(v).clamp(p.y, p.bottom());
            let inner = if bar_w > 4.0 { 1.0 } else { 0.0 };
            out.push(Bar {
                rect: Rect::ltrb(
                    x + 0.5 * inner,
                    top.min(base),
                    x + bar_w - 0.5 * inner,
                    top.max(base),
                ),
                colour: colour::series(g),
                value: v,
                down: top > base,
            });
        }
    }
    out
}

pub(super) fn render(chart: &Chart, b: &BarChart) -> String {
    let heading = Heading::new(&chart.title, "", WIDTH);
    let top = heading.bottom();
    let log = b.log_y;
    let values = || {
        b.groups
            .iter()
            .flat_map(|g| g.values.iter().copied().take(b.categories.len()))
    };
    let has_data = values().any(|v| v.is_finite() && (!log || v > 0.0));
    let yd = axis::domain(values().chain(b.h_lines.iter().map(|h| h.at)), log, !log);
    let mut legend = Legend::new(
        b.groups
            .iter()
            .enumerate()
            .map(|(g, s)| {
                (
                    Swatch::Box {
                        colour: colour::series(g),
                    },
                    s.name.as_str(),
                )
            })
            .collect(),
        0.28 * WIDTH,
    );

    let mut lay = layout(b, top, yd, 0.0);
    let mut drawn = bars(b, &lay);
    // Bars plus room above (or below) them for their value labels.
    let zone = |bars: &[Bar]| -> Vec<Rect> {
        bars.iter()
            .map(|bar| {
                let r = bar.rect;
                let extra = SMALL_SIZE * LINE + 4.0;
                if bar.down {
                    Rect::ltrb(r.x, r.y, r.right(), r.bottom() + extra)
                } else {
                    Rect::ltrb(r.x, r.y - extra, r.right(), r.bottom())
                }
            })
            .collect()
    };
    let mut legend_at = None;
    if !legend.is_empty() {
        let p = lay.plot;
        let zones = zone(&drawn);
        legend_at = spots(&p, legend.size(), 8.0).into_iter().find(|c| {
            let r = legend.rect_at(c.0, c.1);
            !zones.iter().any(|z| z.intersects(&r))
        });
        if legend_at.is_none() {
            lay = layout(b, top, yd, legend.size().0 + 14.0);
            drawn = bars(b, &lay);
            legend.limit_height(lay.plot.h);
            legend_at = Some((WIDTH - PAD - legend.size().0, lay.plot.y));
        }
    }

    let p = lay.plot;
    let mut svg = Svg::new(WIDTH, HEIGHT, &chart.title);
    axis::grid(&mut svg, &p, None, Some((&lay.y, &lay.yt)));
    let clip = clip_id(chart);
    svg.clip_rect(&clip, &p);
    svg.open_group(&format!("clip-path=\"url(#{clip})\""));
    for bar in &drawn {
        let tip = number::sig(bar.value, 6);
        svg.rect_titled(&bar.rect, &format!("fill=\"{}\"", bar.colour), &tip);
    }
    for h in b.h_lines.iter().filter(|h| lay.y.accepts(h.at)) {
        let y = lay.y.map(h.at);
        svg.line(
            (p.x, y),
            (p.right(), y),
            &format!("stroke=\"{MUTED}\" stroke-width=\"1.2\" stroke-dasharray=\"6 4\""),
        );
    }
    svg.close_group();
    if !lay.y.log && lay.y.lo < 0.0 && lay.y.hi > 0.0 {
        let y0 = lay.y.map(0.0);
        svg.line(
            (p.x, y0),
            (p.right(), y0),
            &format!("stroke=\"{AXIS}\" stroke-width=\"1\""),
        );
    }
    axis::draw_y(&mut svg, &p, &lay.y, &lay.yt, &lay.y_title, PAD);
    draw_categories(&mut svg, &p, &lay.cats);

    let mut placer = Placer::new(p.inflate(-1.0));
    if let Some((x, y)) = legend_at {
        placer.take(legend.draw(&mut svg, x, y));
    }
    value_labels(&mut svg, &mut placer, &drawn);
    let rects: Vec<Rect> = drawn.iter().map(|b| b.rect).collect();
    let cover = |r: &Rect| rects.iter().filter(|b| b.intersects(r)).count();
    for h in b
        .h_lines
        .iter()
        .filter(|h| lay.y.accepts(h.at) && !h.label.is_empty())
    {
        if let Some(l) = placer.place(h_line_candidates(lay.y.map(h.at), &h.label, &p), &cover) {
            svg.text(&l);
        }
    }
    if !has_data {
        let mut l = Label::new(p.cx(), p.cy(), "no data", SMALL_SIZE, Anchor::Middle);
        l.fill = MUTED;
        svg.text(&l);
    }
    heading.draw(&mut svg, WIDTH);
    svg.finish()
}

/// The axis line, a tick per category and its label.
fn draw_categories(svg: &mut Svg, p: &Rect, cats: &Categories) {
    let attrs = format!("stroke=\"{AXIS}\" stroke-width=\"1\"");
    svg.line((p.x, p.bottom()), (p.right(), p.bottom()), &attrs);
    let n = cats.lines.len().max(1);
    let band = p.w / n as f64;
    let s = cats.size;
    for (i, lines) in cats.lines.iter().enumerate() {
        let cx = p.x + (i as f64 + 0.5) * band;
        let labelled = i % cats.stride == 0;
        let len = if labelled { TICK_LEN } else { 0.6 * TICK_LEN };
        svg.line((cx, p.bottom()), (cx, p.bottom() + len), &attrs);
        if !labelled {
            continue;
        }
        let top = p.bottom() + TICK_LEN + GAP;
        for (k, line) in lines.iter().enumerate() {
            let mut l = if cats.upright {
                let mut l = Label::new(
                    cx + 0.5 * (ASCENT - DESCENT) * s,
                    top,
                    line.clone(),
                    s,
                    Anchor::End,
                );
                l.vertical = true;
                l
            } else {
                Label::new(
                    cx,
                    top + ASCENT * s + k as f64 * s * LINE,
                    line.clone(),
                    s,
                    Anchor::Middle,
                )
            };
            l.fill = INK;
            l.tooltip = cats.full[i].clone();
            svg.text(&l);
        }
    }
}

/// Each bar's value over its end, when every label fits its bar's width; inside the bar's end
/// (in a contrasting colour) when there is no room outside.
fn value_labels(svg: &mut Svg, placer: &mut Placer, bars: &[Bar]) {
    let max_abs = bars.iter().fold(0.0f64, |m, b| m.max(b.value.abs()));
    let style = ticks::axis_style(max_abs, 3);
    let labels: Vec<String> = bars
        .iter()
        .map(|b| number::format(b.value, style))
        .collect();
    let fits = bars
        .iter()
        .zip(&labels)
        .all(|(b, l)| text::width(l, SMALL_SIZE) <= b.rect.w - 2.0);
    if !fits || bars.len() > 60 {
        return;
    }
    let s = SMALL_SIZE;
    for (bar, text) in bars.iter().zip(labels) {
        let r = bar.rect;
        let (outside, inside) = if bar.down {
            (
                r.bottom() + 3.0 + ASCENT * s,
                r.bottom() - 3.0 - DESCENT * s,
            )
        } else {
            (r.y - 3.0 - DESCENT * s, r.y + 3.0 + ASCENT * s)
        };
        let mut out = Label::new(r.cx(), outside, text.clone(), s, Anchor::Middle);
        out.fill = INK;
        let mut inn = Label::new(r.cx(), inside, text, s, Anchor::Middle);
        inn.fill = colour::text_on(hex(bar.colour));
        let mut candidates = vec![out];
        if r.h >= (ASCENT + DESCENT) * s + 6.0 {
            candidates.push(inn);
        }
        if let Some(l) = placer.place(candidates, &|_| 0) {
            svg.text(&l);
        }
    }
}

/// The colour `#rrggbb` as RGB.
fn hex(c: &str) -> colour::Rgb {
    let v = |i: usize| u8::from_str_radix(c.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
    colour::Rgb(v(1), v(3), v(5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_labels_turn_when_they_do_not_fit() {
        let short: Vec<String> = ["f64", "f32", "bf16", "f16"].map(String::from).into();
        let c = categories(&short, 150.0);
        assert!(!c.upright && c.stride == 1 && c.lines.iter().all(|l| l.len() == 1));
        let two: Vec<String> = ["f64 bare", "f32 bare", "RNN", "sinusoidal position"]
            .map(String::from)
            .into();
        let c = categories(&two, 80.0);
        assert!(!c.upright && c.lines[3].len() == 2, "{c:?}");
        let many: Vec<String> = (0..40)
            .map(|i| format!("configuration number {i}"))
            .collect();
        let c = categories(&many, 17.0);
        assert!(c.upright && c.stride == 1 && c.size <= TICK_SIZE);
        assert!(c.size * (ASCENT + DESCENT) <= 17.0 - 2.0);
        let c = categories(&many, 5.0);
        assert!(c.upright && c.stride > 1 && c.size == 8.0);
        let long = vec!["x".repeat(400)];
        let c = categories(&long, 10.0);
        assert!(c.extent <= 0.25 * HEIGHT && c.full[0].is_some());
    }

    #[test]
    fn a_label_is_never_broken_inside_a_word() {
        // "sinusoidal" is a little wider than the band at the tick size: it is drawn whole at
        // a smaller size (it was "sinusoida" over "l"), and where no size fits, upright.
        let names: Vec<String> = ["f64 bare", "RNN", "sinusoidal", "RoPE"]
            .map(String::from)
            .into();
        let word = text::width("sinusoidal", TICK_SIZE);
        let c = categories(&names, word + 6.0 - 1.0);
        assert!(!c.upright && c.size < TICK_SIZE, "{c:?}");
        assert_eq!(c.lines[2], vec!["sinusoidal".to_string()]);
        let c = categories(
            &names,
            text::width("sinusoidal", TICK_SIZE - 3.0) + 6.0 - 1.0,
        );
        assert!(c.upright, "{c:?}");
    }

    #[test]
    fn hex_colours_parse() {
        assert_eq!(hex("#0072B2"), colour::Rgb(0, 0x72, 0xB2));
    }
}
