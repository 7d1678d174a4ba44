use std::fmt::Write;

use attnlab_core::api::predict::PredictReport;
use attnlab_core::present::number::{format, Style};
use attnlab_core::present::prose::{course, index_list};
use ndarray::Array2;

use super::table::{matrix_table, table};

fn fixed6(x: f64) -> String {
    format(x, Style::Fixed(6))
}

pub fn render(p: &PredictReport) -> String {
    let mut out = String::new();
    let toks = &p.tokens;
    let _ = writeln!(
        out,
        "context {} → tokens {} → labels {} (vocabulary {})",
        course::quoted(&attnlab_core::present::text::shorten(&p.text)),
        course::quoted_list(toks),
        index_list(&p.ids),
        course::quoted_list(&p.vocab)
    );
    let mut show = |title: &str, a: &Array2<f64>, labels: Option<&[String]>| {
        let _ = writeln!(out, "\n{title}\n{}", matrix_table(a, labels));
    };
    let source = |name: &str| p.sources.get(name).map_or("", |o| o.name());
    show(
        &format!(
            "E, embedding table ({}×{}) [{}]",
            p.e.nrows(),
            p.e.ncols(),
            source("E")
        ),
        &p.e,
        Some(&p.vocab),
    );
    show("H = E[labels], the stacked embeddings", &p.h, Some(toks));
    for (name, m) in [("Wq", &p.wq), ("Wk", &p.wk), ("Wv", &p.wv)] {
        show(&format!("{name} [{}]", source(name)), m, None);
    }
    show("Q = H·Wq", &p.q, Some(toks));
    show("K = H·Wk", &p.k, Some(toks));
    show("V = H·Wv", &p.v, Some(toks));
    let mut header = vec![String::new()];
    header.extend(toks.iter().enumerate().map(|(j, t)| format!("{j} {t}")));
    let mut s = table(&header);
    for (i, row) in p.scores.iter().enumerate() {
        let mut cells = vec![format!("{i} {}", toks[i])];
        cells.extend(
            row.iter()
                .map(|x| x.map_or("−∞ (masked)".to_string(), fixed6)),
        );
        s.add_row(cells);
    }
    let _ = writeln!(
        out,
        "\nscores = Q·Kᵀ/√d_k, causal mask (row = query, column = key)\n{s}"
    );
    let mut show = |title: &str, a: &Array2<f64>, labels: Option<&[String]>| {
        let _ = writeln!(out, "\n{title}\n{}", matrix_table(a, labels));
    };
    show("weights = softmax_row(scores)", &p.weights, Some(toks));
    show("output = weights·V", &p.output, Some(toks));
    let mut r = table(&["", "value"]);
    for (j, &x) in p.readout.iter().enumerate() {
        r.add_row(vec![j.to_string(), fixed6(x)]);
    }
    let last = toks.len().saturating_sub(1);
    let _ = writeln!(
        out,
        "\nreadout = output row {last} (the last position, {})\n{r}",
        course::quoted(toks.get(last).map_or("", String::as_str))
    );
    let _ = writeln!(
        out,
        "\nU, unembedding [{}]\n{}",
        source("U"),
        matrix_table(&p.u, None)
    );
    let mut v = table(&["next token", "logit = readout·U", "probability = softmax"]);
    for (i, tok) in p.vocab.iter().enumerate() {
        let mark = if p.tied.contains(tok) { " ◀" } else { "" };
        v.add_row(vec![
            format!("{tok}{mark}"),
            fixed6(p.logits[i]),
            fixed6(p.probabilities[i]),
        ]);
    }
    let _ = writeln!(out, "\n{v}");
    let _ = writeln!(out, "\n{}", course::prediction_line(p));
    out
}
