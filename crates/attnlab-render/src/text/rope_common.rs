//! Pieces the rope renderings share.

use std::fmt::Write;

/// `n word` with the plural `words` unless n = 1.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The config reader's notes as a block (nothing for no notes).
pub fn notes(out: &mut String, notes: &[String]) {
    if !notes.is_empty() {
        let _ = writeln!(out, "\nconfig notes:");
        for n in notes {
            let _ = writeln!(out, "  - {n}");
        }
    }
}
