//! `attnlab model attention`.

use std::fmt::Write;

use attnlab_core::api::model::attention::ModelAttentionReport;
use attnlab_core::present::number::{format, Style};

use super::table::table;

/// The head's weights as a table (rows = queries), then the computed shares.
pub fn render(r: &ModelAttentionReport) -> String {
    let mut out = String::new();
    let label = |i: usize| -> String {
        match &r.pieces {
            Some(p) => format!(
                "{i} {}",
                attnlab_core::present::text::shorten(p[i].as_str())
            ),
            None => format!("{i} ({})", r.ids[i]),
        }
    };
    let _ = writeln!(
        out,
        "{}: layer {} head {} of {} (K/V head {} of {}), pos {}, {} tokens; row = query, column = key",
        attnlab_core::present::text::shorten(&r.model),
        r.layer,
        r.head,
        r.heads,
        r.kv_head,
        r.kv_heads,
        r.pos.name(),
        r.ids.len()
    );
    const SHOWN: usize = 16;
    let n = r.weights.len();
    let cols = n.min(SHOWN);
    let mut head: Vec<String> = vec!["query \\ key".into()];
    head.extend((0..cols).map(|j| j.to_string()));
    head.push("strongest".into());
    let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = table(&head_refs);
    for (i, row) in r.weights.iter().enumerate().take(SHOWN) {
        let mut cells = vec![label(i)];
        cells.extend(row.iter().take(cols).map(|&x| format(x, Style::Fixed(3))));
        cells.push(label(r.strongest[i]));
        t.add_row(cells);
    }
    let _ = writeln!(out, "{t}");
    if n > SHOWN {
        let _ = writeln!(
            out,
            "(the first {SHOWN} of {n} rows and columns; --json has them all)"
        );
    }
    if let (Some(f), Some(p), Some(s)) = (r.first_token_share, r.previous_token_share, r.self_share)
    {
        let _ = writeln!(
            out,
            "Mean weight over queries 1 … {}: on the first token {}, on the previous token {}, on itself {}.",
            n - 1,
            format(f, Style::Fixed(3)),
            format(p, Style::Fixed(3)),
            format(s, Style::Fixed(3))
        );
    }
    out
}
