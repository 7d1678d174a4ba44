//! `attnlab model tokenize`.

use std::fmt::Write;

use attnlab_core::api::model::tokenize::TokenizeReport;
use attnlab_core::present::number::{short, short_f32};
use attnlab_core::present::text::shorten;

use super::table::table;

pub fn render(r: &TokenizeReport) -> String {
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
