//! Shared rendering helpers: JSON on stdout, tables, number formatting.

use std::io::Write;

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

/// Prints one JSON value on stdout, pretty-printed, followed by a newline.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// A table with the house style and the given header.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    if t.width().is_none() {
        // Not a terminal (a pipe or a file): wrap at a readable width instead of not at all.
        t.set_width(120);
    }
    t
}

/// Formats a number for a table: fixed for moderate magnitudes, scientific otherwise.
pub fn num(x: f64) -> String {
    if x == 0.0 {
        "0".to_string()
    } else if !x.is_finite() {
        format!("{x}")
    } else if (1e-3..1e6).contains(&x.abs()) {
        let s = format!("{x:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
        if s == "-0" {
            "0".into()
        } else {
            s
        }
    } else {
        format!("{x:.3e}")
    }
}

/// Formats an error-like quantity (always scientific, 3 significant digits).
pub fn sci(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else {
        format!("{x:.3e}")
    }
}
