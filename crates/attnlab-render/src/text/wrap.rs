//! Prose wrapped at word boundaries to a terminal's width.
//!
//! The text renderings are written without line breaks inside a sentence; a terminal that
//! folds a long line itself cuts words at its edge ("dime" / "nsions"). [`wrap`] breaks each
//! long prose line between words instead, continuing under the line's indent and its marker
//! (`· `, `→ `, `(d) `, `why: `). It changes nothing but whitespace: the words, in order, are the
//! input's. Table lines (comfy-table's box drawing) are left as they are — the tables are laid
//! out to the width already — and a word wider than the width stays whole on its own line.
//! The CLI wraps only when standard output is a terminal; files, pipes and every other front
//! end get the unwrapped text.

use unicode_width::UnicodeWidthStr;

/// The narrowest width wrapping is attempted at; below it lines are left alone (a terminal
/// that reports a nonsense width should not get one word per line).
pub const MIN_WIDTH: usize = 20;

/// `text` with every prose line wider than `width` columns broken at spaces (see the module
/// documentation). Line breaks already in `text`, including a final one or its absence (a
/// prompt), are kept.
pub fn wrap(text: &str, width: usize) -> String {
    if width < MIN_WIDTH {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.width() <= width || is_table_line(line) {
            out.push_str(line);
        } else {
            wrap_line(line, width, &mut out);
        }
    }
    out
}

/// A line of a table: its first visible character draws a border or a cell separator.
fn is_table_line(line: &str) -> bool {
    line.trim_start().chars().next().is_some_and(|c| {
        matches!(
            c,
            '┌' | '│' | '╞' | '├' | '└' | '╭' | '╰' | '┆' | '═' | '─' | '+' | '|'
        )
    })
}

/// The width continuation lines are indented by: the leading spaces, and after them a list
/// marker (`· `, `→ `, `- `, `* `, `• `), a part label (`(d) `, `a) `) or a short label ending
/// in a colon (`why: `, `Q: `), so a wrapped item reads as one block. At most half the width.
fn hanging_indent(line: &str, width: usize) -> usize {
    let body = line.trim_start_matches(' ');
    let indent = line.len() - body.len();
    let first = body.split(' ').next().unwrap_or("");
    let marker = matches!(first, "·" | "→" | "-" | "*" | "•")
        || (first.ends_with(')') && first.chars().count() <= 4)
        || (first.ends_with(':')
            && first.chars().count() <= 10
            && first[..first.len() - 1]
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_'));
    let hang = if marker && body.len() > first.len() {
        indent + first.width() + 1
    } else {
        indent
    };
    if hang <= width / 2 {
        hang
    } else if indent <= width / 2 {
        indent
    } else {
        0
    }
}

/// Greedy wrap of one line into `out`: the words with the spacing between them kept, broken
/// at a space when the next word would pass `width`.
fn wrap_line(line: &str, width: usize, out: &mut String) {
    let hang = hanging_indent(line, width);
    let body = line.trim_start_matches(' ');
    let indent = &line[..line.len() - body.len()];
    out.push_str(indent);
    let mut used = indent.width();
    let mut at_line_start = true;
    let mut rest = body;
    while !rest.is_empty() {
        // The spaces before the next word, and the word.
        let word_at = rest.find(|c| c != ' ').unwrap_or(rest.len());
        let (spaces, after) = rest.split_at(word_at);
        let word_end = after.find(' ').unwrap_or(after.len());
        let (word, next) = after.split_at(word_end);
        if word.is_empty() {
            // Trailing spaces (a prompt's): kept as they are.
            out.push_str(spaces);
            break;
        }
        let w = word.width();
        if at_line_start {
            out.push_str(spaces);
            out.push_str(word);
            used += spaces.width() + w;
            at_line_start = false;
        } else if used + spaces.width() + w <= width {
            out.push_str(spaces);
            out.push_str(word);
            used += spaces.width() + w;
        } else {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', hang));
            out.push_str(word);
            used = hang + w;
        }
        rest = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of `s` in order (what wrapping must not change).
    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    const PROSE: &str = "   why: A label only selects a row, so the table needs one row per token and any number of columns: this 3×4 table embeds 3 tokens in 4 dimensions. Doubling E changes nothing a linear layer can see.";

    #[test]
    fn long_lines_break_between_words_within_the_width() {
        for width in [20, 37, 40, 64, 80, 100, 140] {
            let wrapped = wrap(PROSE, width);
            assert_eq!(words(&wrapped), words(PROSE), "width {width}");
            for l in wrapped.lines() {
                assert!(l.width() <= width, "width {width}: {l:?}");
            }
            assert!(wrapped.lines().count() > 1 || PROSE.width() <= width);
        }
    }

    #[test]
    fn continuations_hang_under_the_marker() {
        let wrapped = wrap(PROSE, 40);
        let mut lines = wrapped.lines();
        assert!(lines.next().unwrap().starts_with("   why: A label"));
        for l in lines {
            // Aligned with the text after "   why: ".
            assert!(
                l.starts_with("        ") && !l.starts_with("         "),
                "{l:?}"
            );
        }
        let d =
            "(d) {pi/2, pi/3} distinguishes every separation 1..11 from 0 within a context of 12";
        let w = wrap(d, 30);
        assert!(
            w.lines()
                .skip(1)
                .all(|l| l.starts_with("    ") && !l.starts_with("     ")),
            "{w}"
        );
        let arrow = "→ HOLDS: max |difference| = 4.441e-16 (1 ulp) ≤ tolerance 5.44e-14";
        let w = wrap(arrow, 30);
        assert!(
            w.lines()
                .skip(1)
                .all(|l| l.starts_with("  ") && !l.starts_with("   ")),
            "{w}"
        );
    }

    #[test]
    fn short_lines_tables_and_line_breaks_are_kept() {
        let text = "short line\n┌───┬───┐\n│ a very long cell that is wider than the width ┆ b │\n└───┴───┘\n\nend";
        assert_eq!(wrap(text, 24), text);
        // A prompt without a final newline keeps its trailing space and no newline.
        assert_eq!(wrap("   your prediction: ", 40), "   your prediction: ");
        assert_eq!(wrap("a\n", 40), "a\n");
    }

    #[test]
    fn a_word_wider_than_the_width_stays_whole() {
        let long =
            "see /a/very/long/path/that/does/not/fit/into/the/width/at/all/anywhere.json now";
        let wrapped = wrap(long, 24);
        assert_eq!(words(&wrapped), words(long));
        assert!(wrapped.lines().any(|l| l.trim()
            == "/a/very/long/path/that/does/not/fit/into/the/width/at/all/anywhere.json"));
    }

    #[test]
    fn wrapping_is_idempotent_and_needs_a_sensible_width() {
        let once = wrap(PROSE, 50);
        assert_eq!(wrap(&once, 50), once);
        assert_eq!(wrap(PROSE, MIN_WIDTH - 1), PROSE);
    }

    #[test]
    fn widths_count_columns_not_bytes() {
        // "·", "→", "≤", "Π" are one column each though several bytes in UTF-8.
        let s = "· Π·x ≤ y → z · Π·x ≤ y → z · Π·x ≤ y → z · Π·x ≤ y → z";
        let w = wrap(s, 24);
        assert!(w.lines().all(|l| l.width() <= 24), "{w}");
        assert!(w.lines().any(|l| l.width() >= 20), "{w}");
    }
}
