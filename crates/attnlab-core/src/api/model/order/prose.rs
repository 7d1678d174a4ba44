//! Sentences for the `model` commands' reports.

use crate::api::model::order::{Depth, ModelOrderReport};
use crate::api::model::PosChoice;
use crate::present::number::{format, Style};

fn sig(x: f64) -> String {
    format(x, Style::Significant(3))
}

fn setting(pos: PosChoice) -> &'static str {
    match pos {
        PosChoice::Rope => "with RoPE",
        PosChoice::None => "without RoPE",
    }
}

/// The sentence for one sweep of layers.
pub fn depth(d: &Depth) -> String {
    match (d.first_moved, d.layers.first()) {
        (Some(l), _) => {
            let m = &d.layers[l];
            format!(
                "{} (causal mask): the last position first moves after layer {l}, by {} relative \
                 to its size (round-off tolerance {}){}.",
                setting(d.pos),
                sig(m.relative_change),
                sig(m.tolerance),
                if l == 0 {
                    ""
                } else {
                    "; before it, every layer left it unchanged to round-off: one causal layer \
                     without rotation is blind to the order of the prefix, depth is not"
                }
            )
        }
        (None, Some(_)) => format!(
            "{} (causal mask): the last position never moved beyond round-off in {} layers.",
            setting(d.pos),
            d.layers.len()
        ),
        (None, None) => format!("{}: no layers.", setting(d.pos)),
    }
}

/// The summary sentences of `model order`.
pub fn order(r: &ModelOrderReport) -> Vec<String> {
    let mut out = Vec::new();
    let b = &r.bare_attention;
    out.push(format!(
        "Bare attention of layer {} (no mask, no rotation) is {}equivariant: max |Attn(ΠH) − Π·Attn(H)| = {} against the tolerance {}.",
        b.layer,
        if b.equivariant { "" } else { "NOT " },
        sig(b.max_error),
        sig(b.tolerance)
    ));
    for d in &r.depth {
        out.push(depth(d));
    }
    for d in &r.distributions {
        out.push(format!(
            "Next-token distributions {} of the text and its permutation differ by total variation {}.",
            setting(d.pos),
            sig(d.total_variation)
        ));
    }
    out
}
