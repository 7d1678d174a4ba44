//! What the `model` commands' renderings share: the next-token table.

use attnlab_core::api::model::TopEntry;
use attnlab_core::present::number::{format, Style};

use super::table::table;

/// Four significant digits.
pub fn sig(x: f64) -> String {
    format(x, Style::Significant(4))
}

/// The most likely tokens: rank, id, piece, logit, probability.
pub fn top_table(top: &[TopEntry]) -> String {
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
