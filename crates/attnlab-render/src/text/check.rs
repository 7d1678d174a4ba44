//! A caller's layer checked from Python (`repr(attnlab.check_equivariance(f, X))`): the same
//! table, controls and diagnosis lines as `attnlab equivariance`.

use std::fmt::Write;

use attnlab_core::api::check::LayerCheckReport;
use attnlab_core::present::prose;

use super::equivariance::{controls, diagnosis, permutations, row};
use super::table;

/// The text rendering of a layer check (ends with a newline).
pub fn render(r: &LayerCheckReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(r));
    let mut t = table(&HEADER);
    t.add_row(cells(r));
    if let Some(f) = &r.future_independence {
        t.add_row(row(
            &f.equation,
            f.verdict.name(),
            [f.max_abs_error, f.max_rel_error],
            f.max_ulps,
            [f.tolerance, f.margin],
            f.permutations_checked,
            &f.worst,
        ));
    }
    let _ = writeln!(out, "{t}");
    let _ = writeln!(out, "{}", permutations_line(r));
    let _ = writeln!(out, "{}", controls(&r.controls));
    let _ = writeln!(out, "{}", prose::margin_explained());
    if let Some(line) = diagnosis_line(r) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(note) = &r.note {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// The columns of the check's table.
pub const HEADER: [&str; 9] = [
    "check",
    "verdict",
    "max abs error",
    "max rel error",
    "max ulps",
    "tolerance",
    "margin",
    "perms",
    "worst (perm, row, col)",
];

/// The check's row of the table, under [`HEADER`].
pub fn cells(r: &LayerCheckReport) -> Vec<String> {
    row(
        &r.equation,
        r.verdict.name(),
        [r.max_abs_error, r.max_rel_error],
        r.max_ulps,
        [r.tolerance, r.margin],
        r.permutations_checked,
        &r.worst,
    )
}

/// The permutations line: how they were chosen and how the tolerance was derived.
pub fn permutations_line(r: &LayerCheckReport) -> String {
    format!(
        "permutations: {}; tolerance: {}",
        permutations(&r.permutations, 0),
        r.tolerance_derivation
    )
}

/// The round-off-or-structure line, or why there is none.
pub fn diagnosis_line(r: &LayerCheckReport) -> Option<String> {
    match (&r.diagnosis, &r.diagnosis_unavailable) {
        (Some(d), _) => Some(diagnosis(d)),
        (None, Some(why)) => Some(format!("round-off or structure? not diagnosed: {why}")),
        (None, None) => None,
    }
}

/// The first line: the equation, the verdict and what was checked.
pub fn headline(r: &LayerCheckReport) -> String {
    let mut verdict = r.verdict.name().to_uppercase();
    if let Some(p) = r.diagnosis.as_ref().and_then(|d| d.internal) {
        let _ = write!(verdict, " to {} precision", prose::precision_name(p));
    }
    let mut what = format!(
        "{}: {} — f on X (n = {}, d = {} → d′ = {}, {})",
        r.equation, verdict, r.n, r.dim, r.output_dim, r.dtype
    );
    if let Some(t) = r.prefix {
        let _ = write!(what, ", causal prefix t = {t}");
    }
    if r.readout != attnlab_core::layer::Readout::None {
        let _ = write!(what, ", readout {}", r.readout.name());
    }
    let _ = write!(
        what,
        "; worst permutation {}",
        prose::index_list(&r.worst.perm)
    );
    what
}
