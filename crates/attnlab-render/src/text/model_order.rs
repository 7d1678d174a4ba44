//! `attnlab model order`.

use std::fmt::Write;

use attnlab_core::api::model::order::{prose, ModelOrderReport};

use super::model::{sig, top_table};
use super::table::table;

pub fn render(r: &ModelOrderReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} tokens; permutation {:?}, prefix permutation {:?}",
        attnlab_core::present::text::shorten(&r.model),
        r.ids.len(),
        r.perm,
        r.prefix_perm
    );
    for s in prose::order(r) {
        let _ = writeln!(out, "{s}");
    }
    let mut t = table(&["layer", "change, no RoPE", "change, RoPE", "tolerance"]);
    if let [a, b] = &r.depth[..] {
        for (x, y) in a.layers.iter().zip(&b.layers) {
            t.add_row(vec![
                x.layer.to_string(),
                format!(
                    "{}{}",
                    sig(x.relative_change),
                    if x.moved { " moved" } else { "" }
                ),
                format!(
                    "{}{}",
                    sig(y.relative_change),
                    if y.moved { " moved" } else { "" }
                ),
                sig(x.tolerance),
            ]);
        }
    }
    let _ = writeln!(
        out,
        "\nlast position, relative change of its hidden state when the prefix is permuted\n{t}"
    );
    for d in &r.distributions {
        let _ = writeln!(
            out,
            "\n{} — text:\n{}",
            d.pos.name(),
            top_table(&d.text_top)
        );
        let _ = writeln!(
            out,
            "{} — permuted text:\n{}",
            d.pos.name(),
            top_table(&d.permuted_top)
        );
    }
    out
}
