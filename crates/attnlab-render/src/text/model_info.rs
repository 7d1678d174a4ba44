//! `attnlab model info`.

use std::fmt::Write;

use attnlab_core::api::model::info::InfoReport;
use attnlab_core::present::number::{bytes, short};
use attnlab_core::present::text::shorten;

use super::table::table;

pub fn render(r: &InfoReport) -> String {
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
