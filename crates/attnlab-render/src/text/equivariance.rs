use std::fmt::Write;

use attnlab_core::api::equivariance::{
    EquivarianceReport, EquivarianceTimings, PermutationMode, PermutationSet,
};
use attnlab_core::experiment::{Control, Diagnosis};
use attnlab_core::present::number::{sci, sig};
use attnlab_core::present::prose;
use attnlab_core::symmetry::{CheckReport, Worst};

use super::table;

pub fn render(r: &EquivarianceReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} — layer {}, positions {}, mask {}, readout {}, {} (n = {}, d = {}, seed {}, rng {})",
        r.equation,
        r.verdict.name().to_uppercase(),
        r.layer,
        r.pos,
        r.mask,
        r.readout.name(),
        r.dtype,
        r.n,
        r.dim,
        r.seed,
        r.rng
    );
    if let Some(m) = &r.model {
        let _ = writeln!(
            out,
            "model {}: layer {} of {} — its attention ({} query heads, {} key/value heads, head_dim {}, W_o) on the hidden states entering it for {} {} tokens{}",
            m.model,
            m.layer,
            m.layers,
            m.heads,
            m.kv_heads,
            m.head_dim,
            r.n,
            if m.from_text { "text" } else { "drawn" },
            if r.move_positions {
                "; rotary positions moved with the tokens"
            } else {
                ""
            }
        );
    } else if r.move_positions {
        let _ = writeln!(out, "rotary positions moved with the tokens");
    }
    let mut t = table(&[
        "check",
        "verdict",
        "max abs error",
        "max rel error",
        "max ulps",
        "tolerance",
        "margin",
        "perms",
        "worst (perm, row, col)",
    ]);
    t.add_row(row(
        &r.equation,
        r.verdict.name(),
        [r.max_abs_error, r.max_rel_error],
        r.max_ulps,
        [r.tolerance, r.margin],
        r.permutations_checked,
        &r.worst,
    ));
    if let Some(w) = &r.weight_form {
        t.add_row(check_row(w));
    }
    let _ = writeln!(out, "{t}");
    let _ = writeln!(
        out,
        "permutations: {}; tolerance: {}",
        permutations(&r.permutations, r.seed),
        r.tolerance_derivation
    );
    let _ = writeln!(out, "{}", controls(&r.controls));
    let _ = writeln!(out, "{}", prose::margin_explained());
    let _ = writeln!(out, "{}", diagnosis(&r.diagnosis));
    if let Some(note) = &r.note {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// The `--timings` line: seconds per part, the total and the rate, e.g. `time: inputs 0.02 s,
/// check forwards 0.8 s, …; total 2.2 s; 1.1 permutations/s`. Not part of [`render`]: timings
/// vary from run to run, the rest of the text does not.
pub fn timings(t: &EquivarianceTimings) -> String {
    let s = |x: f64| format!("{} s", sig(x, 3));
    format!(
        "time: inputs {}, check forwards {}, comparisons {}, weight form {}, controls {}, diagnosis {}; total {}; {} permutations/s",
        s(t.inputs_s),
        s(t.forwards_s),
        s(t.comparisons_s),
        s(t.weight_form_s),
        s(t.controls_s),
        s(t.diagnosis_s),
        s(t.total_s),
        sig(t.permutations_per_second, 3)
    )
}

/// How the permutations were chosen: `given`, `exhaustive (24)`, `100 random (seed 0)`.
pub(super) fn permutations(p: &PermutationSet, default_seed: u64) -> String {
    match p.mode {
        PermutationMode::Given if p.count == 1 => "given".to_string(),
        PermutationMode::Given => format!("{} given", p.count),
        PermutationMode::Exhaustive => format!("exhaustive ({})", p.count),
        PermutationMode::Random => format!(
            "{} random (seed {})",
            p.count,
            p.seed.unwrap_or(default_seed)
        ),
    }
}

/// The controls' table.
pub(super) fn controls(controls: &[Control]) -> comfy_table::Table {
    let mut c = table(&["control", "must show", "max abs error", "margin", "ok"]);
    for ctl in controls {
        let name = match ctl.sampled_rows {
            Some(r) => format!("{} (on {} of the {} rows)", ctl.name, r.rows, r.of),
            None => ctl.name.clone(),
        };
        c.add_row(vec![
            name,
            ctl.expectation.clone(),
            sci(ctl.max_abs_error),
            sci(ctl.margin),
            if ctl.ok { "yes" } else { "NO" }.to_string(),
        ]);
    }
    c
}

/// The round-off-or-structure line.
pub(super) fn diagnosis(dg: &Diagnosis) -> String {
    format!(
        "round-off or structure? {} — f32 error {}, f64 error {}: {}",
        dg.conclusion,
        sci(dg.f32_error),
        sci(dg.f64_error),
        dg.explanation()
    )
}

fn check_row(c: &CheckReport) -> Vec<String> {
    row(
        &c.equation,
        c.verdict.name(),
        [c.max_abs_error, c.max_rel_error],
        c.max_ulps,
        [c.tolerance, c.margin],
        c.permutations_checked,
        &c.worst,
    )
}

pub(super) fn row(
    equation: &str,
    verdict: &str,
    [abs, rel]: [f64; 2],
    ulps: u64,
    [tolerance, margin]: [f64; 2],
    perms: usize,
    worst: &Worst,
) -> Vec<String> {
    vec![
        equation.to_string(),
        verdict.to_string(),
        sci(abs),
        sci(rel),
        prose::ulps(ulps),
        sci(tolerance),
        sci(margin),
        perms.to_string(),
        format!(
            "{}, {}, {}",
            prose::index_list(&worst.perm),
            worst.row,
            worst.col
        ),
    ]
}
