//! `attnlab attend`: the forward pass, part by part ([`AttendPart`]): the inputs, the
//! positional table that was added, the projections, Q/K/V, the scaled scores, the weights and
//! the output.

use std::fmt::Write;

use attnlab_core::api::attend::{AttendPart, AttendReport};
use attnlab_core::layer::PosKind;
use attnlab_core::present::number::{format, Style};
use attnlab_core::present::prose::session::count;
use ndarray::Array2;

use super::{matrix_table, matrix_table_with};

/// The default parts: the input, the weights and the output.
pub fn render(r: &AttendReport) -> String {
    render_parts(r, &AttendPart::DEFAULT)
}

/// The given parts, in the order of the computation (whatever order they were asked in).
pub fn render_parts(r: &AttendReport, parts: &[AttendPart]) -> String {
    let mut out = String::new();
    let labels = r.tokens.as_deref();
    let _ = writeln!(
        out,
        "self-attention: n = {}, d = {}, {}, mask {}, positions {}, {} (seed {}, rng {})",
        count(r.n as u64, "token"),
        r.dim,
        count(r.heads as u64, "head"),
        r.mask,
        r.pos,
        r.dtype,
        r.seed,
        r.rng
    );
    let want = |p: AttendPart| parts.contains(&p);
    if want(AttendPart::Inputs) {
        show(&mut out, "X (input rows)", &r.x, labels);
    }
    if want(AttendPart::Positions) {
        match (&r.positions, &r.h) {
            (Some(p), Some(h)) => {
                show(
                    &mut out,
                    &format!("positional table added ({})", r.pos),
                    p,
                    labels,
                );
                show(
                    &mut out,
                    "H = X + positional table (what the projections see)",
                    h,
                    labels,
                );
            }
            _ => {
                let line = if r.pos == PosKind::Rope {
                    "positions: no table is added (H = X); RoPE rotates each head's queries and keys by position inside attention (see Q, K rotated)"
                } else {
                    "positions: none (H = X): the layer has no information about order"
                };
                let _ = writeln!(out, "\n{line}");
            }
        }
    }
    if want(AttendPart::Projections) {
        for (name, m) in [("Wq", &r.wq), ("Wk", &r.wk), ("Wv", &r.wv)] {
            show(
                &mut out,
                &format!("{name} ({}×{})", m.nrows(), m.ncols()),
                m,
                None,
            );
        }
        if let Some(wo) = &r.wo {
            show(&mut out, "Wo (output projection)", wo, None);
        }
    }
    if want(AttendPart::Qkv) {
        show(&mut out, "Q = H·Wq", &r.q, labels);
        show(&mut out, "K = H·Wk", &r.k, labels);
        show(&mut out, "V = H·Wv", &r.v, labels);
        if let (Some(q), Some(k)) = (&r.q_rotated, &r.k_rotated) {
            show(
                &mut out,
                "Q rotated: row p of each head turned by p·ω (what enters the scores)",
                q,
                labels,
            );
            show(&mut out, "K rotated", k, labels);
        }
    }
    if !r.weights_formed() && (want(AttendPart::Scores) || want(AttendPart::Weights)) {
        let _ = writeln!(
            out,
            "\nscores and weights: not formed for n = {} (more than {} tokens: an n×n table no one can read); the output comes from the fused kernel, which never forms them",
            r.n,
            attnlab_core::api::attend::MAX_READABLE_TOKENS
        );
    }
    if want(AttendPart::Scores) && r.weights_formed() {
        let all: Vec<&Vec<Vec<Option<f64>>>> = match &r.scores_per_head {
            Some(list) => list.iter().collect(),
            None => vec![&r.scores],
        };
        for (h, sc) in all.iter().enumerate() {
            let head = if r.heads > 1 {
                format!(" of head {h}")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "\nscores{head} = Q·Kᵀ/√d_k, before softmax (row = query, column = key)\n{}",
                scores_table(sc, labels)
            );
        }
    }
    if want(AttendPart::Weights) && r.weights_formed() {
        let all = match &r.weights_per_head {
            Some(list) => list.iter().collect::<Vec<_>>(),
            None => vec![&r.weights],
        };
        for (h, w) in all.iter().enumerate() {
            let title = if r.heads > 1 {
                format!("weights of head {h} = softmax(scores) (each row sums to 1)")
            } else {
                "weights A = softmax(Q·Kᵀ/√d_k) (row = query, column = key; each row sums to 1)"
                    .into()
            };
            let _ = writeln!(out, "\n{title}\n{}", matrix_table(w, labels));
        }
    }
    if want(AttendPart::Output) {
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
    }
    out
}

fn show(out: &mut String, title: &str, a: &Array2<f64>, rows: Option<&[String]>) {
    let _ = writeln!(out, "\n{title}\n{}", matrix_table(a, rows));
}

/// A score matrix with masked entries shown as `−∞ (masked)` (large ones truncated like every
/// matrix table).
fn scores_table(s: &[Vec<Option<f64>>], labels: Option<&[String]>) -> String {
    let cols = s.first().map_or(0, Vec::len);
    let flat: Vec<f64> = s
        .iter()
        .flat_map(|r| r.iter().map(|x| x.unwrap_or(f64::NEG_INFINITY)))
        .collect();
    let a = Array2::from_shape_vec((s.len(), cols), flat).unwrap_or_else(|_| Array2::zeros((0, 0)));
    matrix_table_with(&a, labels, |v| {
        if v == f64::NEG_INFINITY {
            "−∞ (masked)".to_string()
        } else {
            format(v, Style::Fixed(6))
        }
    })
}
