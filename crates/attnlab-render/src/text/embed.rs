use std::fmt::Write;

use attnlab_core::api::embed::{prose, EmbedReport};
use attnlab_core::present::number::sci;
use attnlab_core::present::prose::course;

use super::table::{matrix_table, table};

pub fn render(r: &EmbedReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "vocabulary {} (size {}), representation dimension {} — independent of the vocabulary size",
        course::quoted_list(&r.vocab),
        r.vocab_size,
        r.dim
    );
    let _ = writeln!(
        out,
        "\nembedding table E ({}×{})\n{}",
        r.vocab_size,
        r.dim,
        matrix_table(&r.e, Some(&r.vocab))
    );
    let mut t = table(&["token", "label", "one-hot e", "e·E", "E[label]", "equal"]);
    for (i, (tok, &id)) in r.tokens.iter().zip(&r.ids).enumerate() {
        t.add_row(vec![
            tok.clone(),
            id.to_string(),
            course::number_list(&r.one_hot[i]),
            course::number_list(&r.one_hot_products[i]),
            course::number_list(&r.h.row(i).to_vec()),
            if r.one_hot_rows_equal[i] {
                "exactly"
            } else {
                "NO"
            }
            .to_string(),
        ]);
    }
    let _ = writeln!(out, "\n{t}");
    let _ = writeln!(
        out,
        "\nH = stacked rows for {}{}\n{}",
        course::quoted(&r.text),
        if r.h_is_identity {
            " (the identity matrix)"
        } else {
            ""
        },
        matrix_table(&r.h, Some(&r.tokens))
    );
    if let Some(l) = &r.labels_are_addresses {
        let _ = writeln!(out, "\n{}", prose::labels_are_addresses(l));
    }
    if let Some(c) = &r.contextual {
        let _ = writeln!(out, "{}", prose::contextual(c));
    }
    if let Some(b) = &r.basis_change {
        let _ = writeln!(
            out,
            "\nbasis change: H → H·S, next linear map W → S⁻¹·W, for three kinds of S (random ones drawn with seed {}; κ∞(S) enters the tolerance)",
            b.seed
        );
        for k in &b.by_kind {
            let _ = writeln!(out, "S, {} =\n{}", k.kind, matrix_table(&k.s, None));
        }
        let mut header = vec!["interface".to_string()];
        header.extend(
            b.by_kind
                .iter()
                .map(|k| format!("{}: margin, unchanged?", k.kind)),
        );
        let mut t = table(&header);
        if let Some(first) = b.by_kind.first() {
            for (i, c) in first.cases.iter().enumerate() {
                let mut row = vec![c.interface.name().to_string()];
                for k in &b.by_kind {
                    let c = &k.cases[i];
                    row.push(format!(
                        "{}, {}",
                        sci(c.margin),
                        if c.unchanged {
                            "yes (absorbed)"
                        } else {
                            "no (not a symmetry)"
                        }
                    ));
                }
                t.add_row(row);
            }
        }
        let _ = writeln!(out, "{t}");
        for line in prose::basis_change_verdicts(&b.by_kind) {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}
