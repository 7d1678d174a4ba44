//! `attnlab model predict`.

use std::fmt::Write;

use attnlab_core::api::model::predict::ModelPredictReport;

use super::model::top_table;

pub fn render(r: &ModelPredictReport) -> String {
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
