//! `attnlab model info`, `model tokenize`, `model predict` and `model order`.

use std::fmt::Write;

use attnlab_core::api::model::attention::ModelAttentionReport;
use attnlab_core::api::model::info::InfoReport;
use attnlab_core::api::model::order::prose;
use attnlab_core::api::model::order::ModelOrderReport;
use attnlab_core::api::model::predict::ModelPredictReport;
use attnlab_core::api::model::tokenize::TokenizeReport;
use attnlab_core::api::model::TopEntry;
use attnlab_core::present::number::{bytes, format, short, short_f32, Style};
use attnlab_core::present::text::shorten;

use super::table::table;

pub fn info(r: &InfoReport) -> String {
    let i = &r.info;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} — GGUF v{}, {}, {} tensors, {} parameters",
        r.path,
        r.gguf_version,
        bytes(r.file_bytes),
        i.tensors.len(),
        short(i.parameters as f64)
    );
    let mut t = table(&["", "value"]);
    let mut row = |k: &str, v: String| {
        t.add_row(vec![k.to_string(), v]);
    };
    let support = if i.supported {
        "(supported)".to_string()
    } else {
        format!(
            "(not supported; the forward builds {})",
            r.supported_architectures.join(", ")
        )
    };
    row("architecture", format!("{} {support}", i.architecture));
    if let Some(n) = &i.name {
        row("name", shorten(n));
    }
    row("layers", i.layers.to_string());
    row(
        "heads (query / key-value)",
        format!("{} / {}", i.heads, i.kv_heads),
    );
    row("head_dim", i.head_dim.to_string());
    row("embedding", i.embedding.to_string());
    row("feed-forward", i.feed_forward.to_string());
    row("vocabulary", i.vocab.to_string());
    row("trained context", i.context_length.to_string());
    row(
        "RMSNorm ε",
        i.rms_norm_eps
            .map_or_else(|| "not in the file".into(), short),
    );
    row(
        "rope base",
        format!(
            "{}{}",
            short(i.rope.freq_base),
            if i.rope.freq_base_in_file {
                ""
            } else {
                " (not in the file: the default)"
            }
        ),
    );
    row(
        "rope dims",
        format!("{} of {}", i.rope.dimension_count, i.head_dim),
    );
    row(
        "rope scaling",
        if i.rope.scaling.is_empty() {
            "none".into()
        } else {
            i.rope
                .scaling
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        },
    );
    row(
        "rope_freqs tensor",
        if i.rope.rope_freqs_tensor {
            "present"
        } else {
            "absent"
        }
        .into(),
    );
    row(
        "output projection",
        if i.tied_embeddings {
            "tied to token_embd"
        } else {
            "output.weight"
        }
        .into(),
    );
    row(
        "tokenizer",
        format!(
            "{} (pre-tokenizer {}){}",
            i.tokenizer_model.as_deref().unwrap_or("none"),
            i.tokenizer_pre.as_deref().unwrap_or("none"),
            match (&r.tokenizer_vocab, &r.tokenizer_error) {
                (Some(v), _) => format!(", {v} tokens"),
                (None, Some(e)) => format!("; not built: {e}"),
                _ => String::new(),
            }
        ),
    );
    let _ = writeln!(out, "{t}");
    let mut t = table(&["tensor type", "tensors", "elements", "bytes"]);
    for c in &i.tensor_types {
        t.add_row(vec![
            c.ggml_type.to_string(),
            c.tensors.to_string(),
            c.elements.to_string(),
            bytes(c.bytes),
        ]);
    }
    let _ = writeln!(out, "{t}");
    let _ = writeln!(
        out,
        "{} metadata entries and every tensor's dims are in --json.",
        r.metadata.len()
    );
    out
}

pub fn tokenize(r: &TokenizeReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} tokens ({} bytes of text) by {}'s {} tokenizer{}; ids are rows of {} ({}, {} values each):",
        r.tokens.len(),
        r.text_bytes,
        r.path,
        r.tokenizer.model,
        r.tokenizer
            .pre
            .as_ref()
            .map_or(String::new(), |p| format!(" (pre-tokenizer {p})")),
        r.embedding_tensor,
        r.embedding_type,
        r.embedding_width
    );
    let rows: std::collections::HashMap<u32, &attnlab_core::api::model::tokenize::EmbeddingRow> =
        r.rows.iter().map(|x| (x.id, x)).collect();
    let shown = r.tokens.len().min(200);
    let mut t = table(&[
        "#",
        "id",
        "piece",
        "text",
        "row id of E (first values)",
        "‖row‖",
    ]);
    for (i, tok) in r.tokens.iter().take(shown).enumerate() {
        let (first, norm) = rows
            .get(&tok.id)
            .map_or((String::new(), String::new()), |e| {
                (
                    e.first
                        .iter()
                        .map(|&x| short_f32(x))
                        .collect::<Vec<_>>()
                        .join(", "),
                    short(e.norm),
                )
            });
        t.add_row(vec![
            i.to_string(),
            tok.id.to_string(),
            shorten(&tok.piece),
            format!("{:?}", tok.text),
            format!("[{first}{}]", if e_more(r) { ", …" } else { "" }),
            norm,
        ]);
    }
    let _ = writeln!(out, "{t}");
    if shown < r.tokens.len() {
        let _ = writeln!(out, "… {} more tokens in --json.", r.tokens.len() - shown);
    }
    if r.beyond_context {
        let _ = writeln!(
            out,
            "The text is {} tokens, beyond the model's trained context of {}.",
            r.tokens.len(),
            r.context_length
        );
    }
    let _ = writeln!(
        out,
        "An id is an address, not a magnitude: the lookup onehot(id)·E selects row id of the table."
    );
    out
}

fn e_more(r: &TokenizeReport) -> bool {
    r.rows
        .first()
        .is_some_and(|e| (e.first.len() as u64) < r.embedding_width)
}

fn sig(x: f64) -> String {
    format(x, Style::Significant(4))
}

fn top_table(top: &[TopEntry]) -> String {
    let mut t = table(&["rank", "id", "piece", "logit", "prob"]);
    for (i, e) in top.iter().enumerate() {
        t.add_row(vec![
            (i + 1).to_string(),
            e.id.to_string(),
            e.piece
                .as_deref()
                .map_or("—".into(), attnlab_core::present::text::shorten),
            sig(e.logit),
            sig(e.prob),
        ]);
    }
    t.to_string()
}

pub fn predict(r: &ModelPredictReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}), {} tokens, pos {}: the next token at the last position",
        attnlab_core::present::text::shorten(&r.model),
        r.architecture,
        r.ids.len(),
        r.pos.name()
    );
    let _ = writeln!(out, "{}", top_table(&r.top));
    out
}

pub fn order(r: &ModelOrderReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} tokens; permutation {:?}, prefix permutation {:?}",
        attnlab_core::present::text::shorten(&r.model),
        r.ids.len(),
        r.perm,
        r.prefix_perm
    );
    for s in prose::order(r) {
        let _ = writeln!(out, "{s}");
    }
    let mut t = table(&["layer", "change, no RoPE", "change, RoPE", "tolerance"]);
    if let [a, b] = &r.depth[..] {
        for (x, y) in a.layers.iter().zip(&b.layers) {
            t.add_row(vec![
                x.layer.to_string(),
                format!(
                    "{}{}",
                    sig(x.relative_change),
                    if x.moved { " moved" } else { "" }
                ),
                format!(
                    "{}{}",
                    sig(y.relative_change),
                    if y.moved { " moved" } else { "" }
                ),
                sig(x.tolerance),
            ]);
        }
    }
    let _ = writeln!(
        out,
        "\nlast position, relative change of its hidden state when the prefix is permuted\n{t}"
    );
    for d in &r.distributions {
        let _ = writeln!(
            out,
            "\n{} — text:\n{}",
            d.pos.name(),
            top_table(&d.text_top)
        );
        let _ = writeln!(
            out,
            "{} — permuted text:\n{}",
            d.pos.name(),
            top_table(&d.permuted_top)
        );
    }
    out
}

/// The head's weights as a table (rows = queries), then the computed shares.
pub fn attention(r: &ModelAttentionReport) -> String {
    let mut out = String::new();
    let label = |i: usize| -> String {
        match &r.pieces {
            Some(p) => format!(
                "{i} {}",
                attnlab_core::present::text::shorten(p[i].as_str())
            ),
            None => format!("{i} ({})", r.ids[i]),
        }
    };
    let _ = writeln!(
        out,
        "{}: layer {} head {} of {} (K/V head {} of {}), pos {}, {} tokens; row = query, column = key",
        attnlab_core::present::text::shorten(&r.model),
        r.layer,
        r.head,
        r.heads,
        r.kv_head,
        r.kv_heads,
        r.pos.name(),
        r.ids.len()
    );
    const SHOWN: usize = 16;
    let n = r.weights.len();
    let cols = n.min(SHOWN);
    let mut head: Vec<String> = vec!["query \\ key".into()];
    head.extend((0..cols).map(|j| j.to_string()));
    head.push("strongest".into());
    let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = table(&head_refs);
    for (i, row) in r.weights.iter().enumerate().take(SHOWN) {
        let mut cells = vec![label(i)];
        cells.extend(row.iter().take(cols).map(|&x| format(x, Style::Fixed(3))));
        cells.push(label(r.strongest[i]));
        t.add_row(cells);
    }
    let _ = writeln!(out, "{t}");
    if n > SHOWN {
        let _ = writeln!(
            out,
            "(the first {SHOWN} of {n} rows and columns; --json has them all)"
        );
    }
    if let (Some(f), Some(p), Some(s)) = (r.first_token_share, r.previous_token_share, r.self_share)
    {
        let _ = writeln!(
            out,
            "Mean weight over queries 1 … {}: on the first token {}, on the previous token {}, on itself {}.",
            n - 1,
            format(f, Style::Fixed(3)),
            format(p, Style::Fixed(3)),
            format(s, Style::Fixed(3))
        );
    }
    out
}
