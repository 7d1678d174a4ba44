use std::fmt::Write;

use attnlab_core::api::rope::audit::AuditReport;
use attnlab_core::present::number::{sci, short, sig};

use super::rope_common::notes;
use super::table;

fn or_dash(x: Option<u64>) -> String {
    x.map_or("-".into(), |v| v.to_string())
}

pub fn render(report: &AuditReport) -> String {
    let r = &report.audit;
    let mut out = String::new();
    // Config and base/dim sources already name their dimensions; explicit lists (no base) do not.
    let dims = if r.base.is_none() {
        format!(" (rotary dim {}, head dim {})", r.rotary_dim, r.head_dim)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "RoPE audit — {}{dims}, context {}",
        r.source, r.context
    );
    if let (Some(b), Some(e)) = (r.base, r.effective_base) {
        if b != e {
            let _ = writeln!(
                out,
                "base {} as configured; effective base {} at sequence length {} (dynamic scaling)",
                short(b),
                short(e),
                r.context
            );
        }
    }
    let _ = writeln!(out, "\n{}", report.verdict);
    notes(&mut out, &report.config_notes);
    let mut t = table(&[
        "plane",
        "inv_freq",
        "wavelength",
        "turns in context",
        "full turn",
    ]);
    for p in &r.planes {
        t.add_row(vec![
            p.index.to_string(),
            sci(p.inv_freq),
            sig(p.wavelength, 6),
            sig(p.turns_in_context, 6),
            if p.full_turn_in_context { "yes" } else { "no" }.into(),
        ]);
    }
    let _ = writeln!(out, "\n{t}");
    let _ = writeln!(
        out,
        "planes with a full turn: {} ({} dims); attention factor {}",
        r.planes_full_turn,
        r.dims_full_turn,
        sig(r.attention_factor, 6)
    );
    let res = &r.resolution;
    let resolution = match (res.first_alias, res.min_margin, res.margin_at) {
        (Some(a), _, _) => format!("does not resolve, first alias at separation {a}"),
        (None, Some(m), Some(at)) => format!(
            "resolves, smallest margin {} rad at separation {at}",
            sig(m, 4)
        ),
        (None, None, _) | (None, Some(_), None) => {
            "no separation in a context of 1 position".into()
        }
    };
    let _ = writeln!(out, "resolution: {resolution}");
    let first = match r.decay_first_negative {
        Some(m) => format!("B(m) < 0 first at m = {m}"),
        None => format!("B(m) ≥ 0 for every m < {}", r.context),
    };
    let min_base = match (&r.min_base_search, r.min_base_for_context) {
        (None, _) => "not searched".to_string(),
        (Some(_), Some(b)) => sig(b, 6),
        (Some(_), None) => "none up to 1e15".to_string(),
    };
    let _ = writeln!(
        out,
        "decay: {first}, min mean {} at m = {}; smallest base for this context: {min_base}",
        sig(r.decay_min_mean, 6),
        r.decay_min_mean_at
    );
    let mut t = table(&[
        "dtype",
        "distinct positions",
        "first inexact",
        "overflow from",
        "distinct rows",
        "first duplicate row",
    ]);
    for (dtype, p) in &r.precision {
        let dup = match (p.first_duplicate_row, p.first_duplicate_of) {
            (Some(d), Some(of)) => format!("{d} (repeats {of})"),
            (Some(d), None) => d.to_string(),
            (None, _) => "-".into(),
        };
        t.add_row(vec![
            dtype.to_string(),
            p.distinct_positions.to_string(),
            or_dash(p.first_inexact_position),
            or_dash(p.first_overflow_position),
            p.distinct_rows.to_string(),
            dup,
        ]);
    }
    let _ = writeln!(out, "{t}");
    out
}
