use std::fmt::Write;

use attnlab_core::api::lab::LabReport;
use attnlab_core::present::number::{sci, sig};
use attnlab_core::present::prose::{self, course};

use super::table::{matrix_table, matrix_table_with, table};

/// Table (b) shows the set's frequencies one column each up to this many (the JSON has all).
const MAX_SET_COLUMNS: usize = 8;

pub fn render(r: &LabReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "attnlab lab — the practical session (seed 002) and seed 000's exercises, computed now\n"
    );
    let s = &r.setup;
    let a = &r.a_permutation;
    let rep = &a.check.report;
    let what = if s.blocks.is_empty() {
        format!(
            "the course program (np.random.seed({}), n = {}, d = {})",
            s.seed, s.n, s.dim
        )
    } else {
        format!(
            "the course layer with the provided blocks (n = {}, d = {})",
            s.n, s.dim
        )
    };
    let _ = writeln!(
        out,
        "(a) Shuffle the tokens of {what} with perm = {}.",
        prose::index_list(&a.perm)
    );
    let _ = writeln!(out, "{}", course::blocks_used(&s.blocks));
    let _ = writeln!(out, "Attn(ΠH):\n{}", matrix_table(&a.out_perm, None));
    let _ = writeln!(
        out,
        "Π Attn(H) (= out[perm]):\n{}",
        matrix_table(&a.permuted_out, None)
    );
    let _ = writeln!(
        out,
        "difference, entry by entry:\n{}",
        matrix_table_with(&a.difference, None, sci)
    );
    let _ = writeln!(
        out,
        "→ {}\n",
        course::permutation_verdict(
            rep.holds,
            rep.max_abs_error,
            rep.max_ulps,
            rep.tolerance,
            &a.check.diagnosis.explanation()
        )
    );

    let b = &r.b_scores;
    let _ = writeln!(
        out,
        "(b) Positional contribution to the score of aligned unit vectors vs separation s:"
    );
    // One column per frequency of the set (a frequency equal to ω, same expression and the
    // same cosines, is ω's column already), then their mean.
    let repeats_single =
        |k: usize| b.omegas[k] == b.omega && b.rows.iter().all(|r| r.set.get(k) == Some(&r.single));
    let columns: Vec<usize> = (0..b.omegas.len())
        .filter(|&k| !repeats_single(k))
        .collect();
    let per_column = columns.len() <= MAX_SET_COLUMNS;
    let mut header = vec!["s".to_string(), format!("cos(s·{})", b.omega)];
    if per_column {
        header.extend(columns.iter().map(|&k| format!("cos(s·{})", b.omegas[k])));
    }
    header.push(format!("mean over {}", course::frequency_set(&b.omegas)));
    let mut t = table(&header);
    for row in &b.rows {
        let mut cells = vec![row.separation.to_string(), sig(row.single, 6)];
        if per_column {
            cells.extend(
                columns
                    .iter()
                    .map(|&k| row.set.get(k).map_or_else(String::new, |&v| sig(v, 6))),
            );
        }
        cells.push(sig(row.set_mean, 6));
        t.add_row(cells);
    }
    let _ = writeln!(out, "{t}");
    if !per_column {
        let _ = writeln!(
            out,
            "({} frequencies in the set: per-frequency columns omitted; --json lists them all.)",
            b.omegas.len()
        );
    }
    let _ = writeln!(out, "→ {}\n", course::like_zero(b));

    let _ = writeln!(
        out,
        "(c) {}\n",
        course::first_repeat(&b.omega, &r.c_first_repeat)
    );

    let d = &r.d_resolution;
    let _ = writeln!(out, "(d) {}", d.statement);
    let _ = writeln!(
        out,
        "    {}",
        attnlab_core::present::prose::rope::resolution_criterion()
    );
    if let Some(p) = &d.pairwise {
        let _ = writeln!(
            out,
            "    {}",
            attnlab_core::present::prose::rope::pairwise(p, d.result.context)
        );
    }
    if let Some(cn) = &d.contrast {
        let _ = writeln!(out, "    Contrast: {}", course::resolution_contrast(cn));
    }

    let _ = writeln!(
        out,
        "\nSeed 000's exercises (all permutations of the course input):"
    );
    let mut t = table(&[
        "exercise",
        "expected",
        "measured",
        "max abs error",
        "margin",
        "perms",
        "confirmed",
    ]);
    for e in &r.exercises {
        t.add_row(vec![
            e.name.clone(),
            e.expected.name().to_string(),
            e.verdict.name().to_string(),
            sci(e.max_abs_error),
            sci(e.margin),
            e.permutations_checked.to_string(),
            yes_no(e.confirmed).to_string(),
        ]);
    }
    let _ = writeln!(out, "{t}");
    let _ = writeln!(out, "{}", attnlab_core::present::prose::margin_explained());

    let _ = writeln!(
        out,
        "\nSeed 000's reference table, filled in by measurement:"
    );
    let mut t = table(&["property", "seed says", "measured", "evidence"]);
    for c in &r.reference_table {
        t.add_row(vec![
            c.plain.clone(),
            c.seed_status.clone(),
            c.measured_status.clone(),
            c.evidence.details.clone(),
        ]);
    }
    let _ = writeln!(out, "{t}");

    let _ = writeln!(out, "\nBeyond the tables:");
    for f in &r.facts {
        let _ = writeln!(
            out,
            "  [{}] {} ({})",
            if f.confirmed {
                "confirmed"
            } else {
                "NOT CONFIRMED"
            },
            f.statement,
            f.evidence
        );
    }
    out
}

fn yes_no(ok: bool) -> &'static str {
    if ok {
        "yes"
    } else {
        "NO"
    }
}
