//! How wide a string is, so the layout can make room for it before writing it.
//!
//! SVG cannot measure text, and the viewer picks the font, so the layout uses a model of the
//! fonts of the stack the charts name ([`FONT_FAMILY`]): for printable ASCII the larger of the
//! DejaVu Sans and Arial advance widths is tabulated below (font units, 2048 per em). Outside
//! ASCII each Unicode block is given the advance of its widest DejaVu Sans glyph (a few common
//! operators their own), and any other character 1.76 em, so the model never underestimates
//! DejaVu Sans (a test checks every glyph of the bundled copy). [`SAFETY`] adds 4 % for
//! renderers that round advances up at small sizes.

/// The font stack every chart names (the width model covers its first two members).
pub const FONT_FAMILY: &str = "DejaVu Sans, Arial, Helvetica, sans-serif";

/// Height above the baseline of the font's ascender, in em (DejaVu Sans: 1901/2048).
pub const ASCENT: f64 = 0.93;
/// Depth below the baseline of the font's descender, in em (DejaVu Sans: 483/2048).
pub const DESCENT: f64 = 0.24;
/// Distance between the baselines of consecutive lines, in em.
pub const LINE: f64 = 1.25;
/// Factor applied to every estimated width.
pub const SAFETY: f64 = 1.04;

/// Advance widths of U+0020 ' ' … U+007E '~' in units of 1/2048 em: DejaVu Sans's, or Arial's
/// (Liberation Sans, metric-compatible) where Arial's is wider (`?@CEFGJKPRSY_`).
#[rustfmt::skip]
const ASCII: [u16; 95] = [
    651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690, // ␠ … /
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303,                           // 0 … 9
    690, 690, 1716, 1716, 1716, 1139, 2079,                                               // : … @
    1401, 1405, 1479, 1577, 1366, 1251, 1593, 1540, 604, 1024, 1366, 1141, 1767,          // A … M
    1532, 1612, 1366, 1612, 1479, 1366, 1251, 1499, 1401, 2025, 1403, 1366, 1403,         // N … Z
    799, 690, 799, 1716, 1139, 1024,                                                      // [ … `
    1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995,             // a … m
    1298, 1253, 1300, 1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075,           // n … z
    1303, 690, 1303, 1716,                                                                // { … ~
];

/// The modelled advance of `c` in em (before [`SAFETY`]).
pub fn advance_em(c: char) -> f64 {
    let units: u16 = match c {
        ' '..='~' => ASCII[c as usize - 0x20],
        // The operators charts use, at their own width rather than the block's widest.
        '\u{2212}' | '\u{00D7}' | '\u{00B1}' | '\u{2264}' | '\u{2265}' | '\u{2248}'
        | '\u{2260}' | '\u{221E}' | '\u{2208}' | '\u{2211}' | '\u{221A}' => 1784,
        '\u{00B7}' | '\u{22C5}' => 651,
        '\u{2219}' => 1282,
        '\u{00A0}'..='\u{00FF}' => 2048,
        '\u{0100}'..='\u{017F}' => 2191,
        '\u{0370}'..='\u{03FF}' => 1912,
        '\u{2010}'..='\u{2027}' => 2048,
        '\u{2070}'..='\u{209F}' => 1276,
        '\u{2190}'..='\u{21FF}' => 1716,
        '\u{2200}'..='\u{22FF}' => 2913,
        '\u{2300}'..='\u{23FF}' => 2956,
        '\u{25A0}'..='\u{25FF}' => 2292,
        _ => 3600,
    };
    f64::from(units) / 2048.0
}

/// The baseline of text centred in a line box of height `size` × [`LINE`], below its top.
pub fn first_baseline(size: f64) -> f64 {
    (0.5 * (LINE - ASCENT - DESCENT) + ASCENT) * size
}

/// Estimated width of `s` set in the chart font at `size` px: Σ advance × size × [`SAFETY`].
pub fn width(s: &str, size: f64) -> f64 {
    px(s.chars().map(advance_em).sum::<f64>(), size)
}

/// A sum of advances `em` in px at `size`.
fn px(em: f64, size: f64) -> f64 {
    em * size * SAFETY
}

/// Lines of text set at one size.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The lines, top to bottom.
    pub lines: Vec<String>,
    /// Font size in px.
    pub size: f64,
}

impl Block {
    /// A block of one line at `size`.
    pub fn single(s: &str, size: f64) -> Self {
        Block {
            lines: if s.is_empty() {
                vec![]
            } else {
                vec![s.to_string()]
            },
            size,
        }
    }

    /// Height of the block: lines × size × [`LINE`] (0 when empty).
    pub fn height(&self) -> f64 {
        self.lines.len() as f64 * self.size * LINE
    }

    /// Width of the widest line.
    pub fn width(&self) -> f64 {
        self.lines
            .iter()
            .map(|l| width(l, self.size))
            .fold(0.0, f64::max)
    }

    /// Whether there is nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// Greedy word wrap of `s` into lines no wider than `max_w` at `size`; a word wider than
/// `max_w` on its own is broken between characters.
pub fn wrap(s: &str, size: f64, max_w: f64) -> Vec<String> {
    // Advances are summed left to right exactly as `width` sums them, so `width(line)` of
    // every line returned is the very value compared here.
    let fits = |em: f64| px(em, size) <= max_w;
    let mut lines = Vec::new();
    let (mut line, mut em) = (String::new(), 0.0f64);
    for word in s.split_whitespace() {
        if !line.is_empty() {
            let mut with = em + advance_em(' ');
            for c in word.chars() {
                with += advance_em(c);
            }
            if fits(with) {
                line.push(' ');
                line.push_str(word);
                em = with;
                continue;
            }
            lines.push(std::mem::take(&mut line));
            em = 0.0;
        }
        // The word starts a line: whole if it fits, else broken between characters.
        let whole = word.chars().map(advance_em).sum::<f64>();
        if fits(whole) {
            line.push_str(word);
            em = whole;
            continue;
        }
        for c in word.chars() {
            let next = em + advance_em(c);
            if !line.is_empty() && !fits(next) {
                lines.push(std::mem::take(&mut line));
                em = advance_em(c);
            } else {
                em = next;
            }
            line.push(c);
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Wraps `s` into lines of similar length: the narrowest width ≤ `max_w` that needs no more
/// lines than a greedy wrap at `max_w` (so a two-line title is not one full line and a word).
pub fn wrap_balanced(s: &str, size: f64, max_w: f64) -> Vec<String> {
    let greedy = wrap(s, size, max_w);
    if greedy.len() < 2 {
        return greedy;
    }
    let (mut lo, mut hi) = (max_w / greedy.len() as f64, max_w);
    for _ in 0..14 {
        let mid = 0.5 * (lo + hi);
        if wrap(s, size, mid).len() <= greedy.len() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    wrap(s, size, hi)
}

/// `s` at the largest size in `max_size` down to `min_size` (1 px steps) at which it wraps into
/// at most `max_lines` lines of width ≤ `max_w`; failing that, at `min_size` in at most
/// `max_lines + 1` lines, the last shortened with "…" if the text is longer still.
pub fn fit(s: &str, max_w: f64, max_size: f64, min_size: f64, max_lines: usize) -> Block {
    let mut size = max_size;
    loop {
        let lines = wrap_balanced(s, size, max_w);
        if lines.len() <= max_lines.max(1) {
            return Block { lines, size };
        }
        if size - 1.0 < min_size {
            break;
        }
        size -= 1.0;
    }
    let mut lines = wrap(s, min_size, max_w);
    let keep = max_lines.max(1) + 1;
    if lines.len() > keep {
        let rest = lines[keep - 1..].join(" ");
        lines.truncate(keep - 1);
        lines.push(truncate(&rest, min_size, max_w));
    }
    Block {
        lines,
        size: min_size,
    }
}

/// `s`, shortened with a trailing "…" if needed so it is no wider than `max_w` at `size`.
pub fn truncate(s: &str, size: f64, max_w: f64) -> String {
    if width(s, size) <= max_w {
        return s.to_string();
    }
    let (mut out, mut em) = (String::new(), 0.0);
    for c in s.chars() {
        let next = em + advance_em(c);
        if px(next + advance_em('…'), size) > max_w {
            break;
        }
        out.push(c);
        em = next;
    }
    format!("{}…", out.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test font: DejaVu Sans cut to the characters charts use (see `tests/fonts/`).
    const FONT: &[u8] = include_bytes!("../../tests/fonts/DejaVuSans-subset.ttf");

    #[test]
    fn the_model_never_underestimates_dejavu_sans() {
        let face = ttf_parser::Face::parse(FONT, 0).unwrap();
        let em = f64::from(face.units_per_em());
        let mut checked = 0;
        for c in (0x20..0x2600).filter_map(char::from_u32) {
            let Some(g) = face.glyph_index(c) else {
                continue;
            };
            let advance = f64::from(face.glyph_hor_advance(g).unwrap()) / em;
            assert!(
                advance_em(c) >= advance,
                "{c:?} U+{:04X}: {advance} em",
                c as u32
            );
            if c.is_ascii() {
                // ASCII is tabulated: DejaVu's own advance or Arial's wider one, no slack.
                assert!(advance_em(c) - advance < 0.21, "{c:?}");
            }
            checked += 1;
        }
        assert!(checked > 1000, "{checked} glyphs");
        assert!(ASCENT >= f64::from(face.ascender()) / em);
        assert!(DESCENT >= -f64::from(face.descender()) / em);
    }

    #[test]
    fn widths_add_up_per_character() {
        assert_eq!(width("", 12.0), 0.0);
        let w = width("ab", 12.0);
        assert!((w - width("a", 12.0) - width("b", 12.0)).abs() < 1e-12);
        assert!(width("W", 12.0) > width("i", 12.0));
        assert!((width("0", 10.0) / width("0", 20.0) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn wrapping_keeps_every_line_inside_the_width() {
        let s = "error / tolerance per variant (0: f64 bare, 1: f32 bare, 2: RNN, 3: index, \
                 4: sinusoidal, 5: RoPE, 6: causal)";
        for max_w in [80.0, 200.0, 400.0, 760.0] {
            let lines = wrap(s, 16.0, max_w);
            assert!(lines.iter().all(|l| width(l, 16.0) <= max_w), "{lines:?}");
            let squeeze = |t: &str| t.split_whitespace().collect::<String>();
            assert_eq!(squeeze(&lines.join(" ")), squeeze(s));
            if max_w >= 200.0 {
                // Every word fits a line: words are kept whole.
                assert_eq!(
                    lines.join(" "),
                    s.split_whitespace().collect::<Vec<_>>().join(" ")
                );
            }
        }
        // A word longer than the line is broken between characters, nothing lost.
        let long = "{π/2,π/3,π/4,π/5,π/6,π/7,π/8,π/9,π/10,π/11}";
        let lines = wrap(long, 12.0, 60.0);
        assert!(lines.len() > 1 && lines.iter().all(|l| width(l, 12.0) <= 60.0));
        assert_eq!(lines.concat(), long);
    }

    #[test]
    fn balanced_wrap_has_the_same_line_count_and_evener_lines() {
        let s = "Translation-invariance error vs position per dtype (HF pipeline) with a tail";
        let greedy = wrap(s, 17.0, 500.0);
        let balanced = wrap_balanced(s, 17.0, 500.0);
        assert_eq!(greedy.len(), balanced.len());
        let spread = |l: &[String]| {
            let w: Vec<f64> = l.iter().map(|x| width(x, 17.0)).collect();
            w.iter().cloned().fold(0.0, f64::max) - w.iter().cloned().fold(f64::MAX, f64::min)
        };
        assert!(spread(&balanced) <= spread(&greedy));
    }

    #[test]
    fn fit_shrinks_then_shortens() {
        let b = fit("short", 500.0, 17.0, 11.0, 2);
        assert_eq!((b.lines.len(), b.size), (1, 17.0));
        let long = "word ".repeat(60);
        let b = fit(&long, 300.0, 17.0, 11.0, 2);
        assert_eq!(b.size, 11.0);
        assert_eq!(b.lines.len(), 3);
        assert!(b.lines[2].ends_with('…'));
        assert!(b.lines.iter().all(|l| width(l, 11.0) <= 300.0));
    }

    #[test]
    fn truncation_marks_what_it_cut() {
        assert_eq!(truncate("abc", 12.0, 100.0), "abc");
        let t = truncate("a rather long category name", 12.0, 60.0);
        assert!(t.ends_with('…') && width(&t, 12.0) <= 60.0, "{t}");
    }
}
