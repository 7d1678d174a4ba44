use std::fmt::Write;

use attnlab_core::api::rope::resolve::ResolveReport;
use attnlab_core::present::prose::rope as prose;

use super::rope_common::{count, notes};

pub fn render(r: &ResolveReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}), context L = {}",
        r.source,
        count(r.planes, "plane", "planes"),
        r.resolution.context
    );
    let _ = writeln!(out, "{}", prose::resolution_criterion());
    for line in prose::resolution(&r.resolution) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(p) = &r.pairwise {
        let _ = writeln!(out, "{}", prose::pairwise(p, r.resolution.context));
    }
    notes(&mut out, &r.config_notes);
    out
}
