use std::fmt::Write;

use attnlab_core::api::attend::AttendReport;

use super::matrix_table;

pub fn render(r: &AttendReport) -> String {
    let mut out = String::new();
    let labels = r.tokens.as_deref();
    let _ = writeln!(
        out,
        "self-attention: n = {} tokens, d = {}, {} head(s), mask {}, positions {}, {} (seed {}, rng {})",
        r.n, r.dim, r.heads, r.mask, r.pos, r.dtype, r.seed, r.rng
    );
    let _ = writeln!(out, "\nX (input rows)\n{}", matrix_table(&r.x, labels));
    let all = match &r.weights_per_head {
        Some(list) => list.iter().collect::<Vec<_>>(),
        None => vec![&r.weights],
    };
    for (h, w) in all.iter().enumerate() {
        let title = if r.heads > 1 {
            format!("weights of head {h}")
        } else {
            "weights A = softmax(Q·Kᵀ/√d_k) (row = query, column = key)".into()
        };
        let _ = writeln!(out, "\n{title}\n{}", matrix_table(w, labels));
    }
    let _ = writeln!(
        out,
        "\noutput (A·V{})\n{}",
        if r.heads > 1 {
            " per head, concatenated, ·Wo"
        } else {
            ""
        },
        matrix_table(&r.output, labels)
    );
    out
}
