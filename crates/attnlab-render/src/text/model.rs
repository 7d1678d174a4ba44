//! `attnlab model predict` and `attnlab model order`.

use std::fmt::Write;

use attnlab_core::api::model::order::ModelOrderReport;
use attnlab_core::api::model::predict::ModelPredictReport;
use attnlab_core::api::model::TopEntry;
use attnlab_core::present::number::{format, Style};
use attnlab_core::present::prose;

use super::table::table;

fn sig(x: f64) -> String {
    format(x, Style::Significant(4))
}

fn top_table(top: &[TopEntry]) -> String {
    let mut t = table(&["rank", "id", "piece", "logit", "prob"]);
    for (i, e) in top.iter().enumerate() {
        t.add_row(vec![
            (i + 1).to_string(),
            e.id.to_string(),
            e.piece
                .as_deref()
                .map_or("—".into(), attnlab_core::present::text::shorten),
            sig(e.logit),
            sig(e.prob),
        ]);
    }
    t.to_string()
}

pub fn predict(r: &ModelPredictReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}), {} tokens, pos {}: the next token at the last position",
        attnlab_core::present::text::shorten(&r.model),
        r.architecture,
        r.ids.len(),
        r.pos.name()
    );
    let _ = writeln!(out, "{}", top_table(&r.top));
    out
}

pub fn order(r: &ModelOrderReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} tokens; permutation {:?}, prefix permutation {:?}",
        attnlab_core::present::text::shorten(&r.model),
        r.ids.len(),
        r.perm,
        r.prefix_perm
    );
    for s in prose::model::order(r) {
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
