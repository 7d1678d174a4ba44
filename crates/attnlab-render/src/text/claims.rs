use std::fmt::Write;

use attnlab_core::api::claims::ClaimsReport;
use attnlab_core::present::number::sci;
use attnlab_core::present::prose::course;

use super::table::table;

pub fn render(r: &ClaimsReport) -> String {
    let mut out = String::new();
    let mut t = table(&[
        "#",
        "claim (source)",
        "seed says",
        "measured",
        "error",
        "tolerance",
    ]);
    for (i, c) in r.claims.iter().enumerate() {
        t.add_row(vec![
            (i + 1).to_string(),
            format!("{} ({})", c.plain, c.source),
            c.seed_status.clone(),
            c.measured_status.clone(),
            sci(c.evidence.max_abs_error),
            sci(c.evidence.tolerance),
        ]);
    }
    let _ = writeln!(out, "{t}");
    let _ = writeln!(out, "evidence and how to reproduce:");
    for (i, c) in r.claims.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {}. {}\n     $ {}",
            i + 1,
            c.evidence.details,
            c.command
        );
    }
    let _ = writeln!(out, "{}", course::ledger_summary(&r.claims));
    out
}
