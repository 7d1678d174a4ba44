use std::fmt::Write;

use attnlab_core::api::rope::score::ScoreReport;
use attnlab_core::present::number::sig;
use attnlab_core::present::prose::rope as prose;

use super::table;

/// Per-frequency columns are shown up to this many frequencies (JSON has all).
const MAX_TABLE_COLUMNS: usize = 8;

pub fn render(r: &ScoreReport) -> String {
    let mut out = String::new();
    let n = r.omegas.len();
    let per_column = n <= MAX_TABLE_COLUMNS;
    let mut header: Vec<String> = vec!["s".into()];
    if per_column {
        header.extend(r.omegas.iter().map(|o| format!("cos(s·{})", o.label)));
    }
    if n > 1 {
        header.push("mean".into());
    }
    let mut t = table(&header);
    for row in &r.separations {
        let mut cells = vec![row.separation.to_string()];
        if per_column {
            cells.extend(row.scores.iter().map(|&v| sig(v, 6)));
        }
        if n > 1 {
            cells.push(sig(row.mean, 6));
        }
        t.add_row(cells);
    }
    let _ = writeln!(
        out,
        "Positional score of aligned unit vectors: cos(s·ω) per frequency{}.",
        if n > 1 { ", and their mean" } else { "" }
    );
    let _ = writeln!(out, "{t}");
    if !per_column {
        let _ = writeln!(
            out,
            "({n} frequencies: per-frequency columns omitted; --json lists them all.)"
        );
    }
    if r.omegas.iter().any(|o| o.exact) {
        let _ = writeln!(out, "Exact frequencies (rational multiples of π) use exactly reduced phases: quarter turns give exactly 1, 0, −1.");
    }
    let max_sep = r.separations.last().map_or(0, |s| s.separation);
    let _ = writeln!(
        out,
        "{}",
        prose::score_like_zero(&r.equal_to_zero_separation, max_sep, r.tolerance)
    );
    out
}
