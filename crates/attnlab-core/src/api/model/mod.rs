//! The `model` commands: a real trained checkpoint (a Hugging Face directory) run by the
//! Llama-family forward ([`crate::model::llama`]).

pub mod order;
pub mod predict;

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::value::List;
use super::Context;
use crate::model::llama::{LlamaWeights, Positions};
use crate::{Error, Result};

crate::choice! {
    /// Whether the model rotates queries and keys.
    #[derive(Default)]
    pub enum PosChoice("pos") {
        #[default]
        /// RoPE as trained.
        Rope = "rope",
        /// The same model with the rotation removed (cos = 1, sin = 0 in every layer).
        None = "none",
    }
}

impl PosChoice {
    /// The forward's positions.
    pub fn positions(self) -> Positions {
        match self {
            PosChoice::Rope => Positions::Rope,
            PosChoice::None => Positions::None,
        }
    }
}

/// Loads the checkpoint a request names (files only when the context allows them).
///
/// # Errors
/// No path, files not allowed, a GGUF file (not read by this build yet), or the loader's errors.
pub(crate) fn load(model: &str, ctx: &Context) -> Result<LlamaWeights<f32>> {
    if model.trim().is_empty() {
        return Err(Error::invalid(
            "--model",
            "none",
            "a Hugging Face checkpoint directory (config.json, *.safetensors)",
        ));
    }
    if !ctx.allow_files {
        return Err(Error::invalid(
            "--model",
            crate::present::text::shorten(model),
            "no file path here (this front end does not read files)",
        ));
    }
    let path = Path::new(model);
    if crate::model::hf::is_checkpoint_dir(path) {
        return crate::model::hf::load(path, &ctx.limits);
    }
    Err(Error::invalid(
        "--model",
        crate::present::text::shorten(model),
        "a Hugging Face checkpoint directory holding config.json (GGUF files are read once the GGUF reader is merged)",
    ))
}

/// The token ids a request gives: `ids` (comma-separated or a list).
///
/// # Errors
/// Neither or both of text and ids; ids that are not whole numbers.
pub(crate) fn token_ids(text: &Option<String>, ids: &Option<List>) -> Result<Vec<u32>> {
    match (text, ids) {
        (Some(_), None) => Err(Error::invalid(
            "--text",
            "a text",
            "--ids (the tokenizer is not in this build yet; pass token ids)",
        )),
        (None, Some(l)) => {
            l.0.iter()
                .map(|s| {
                    s.trim().parse::<u32>().map_err(|_| {
                        Error::invalid(
                            "token id",
                            crate::present::text::shorten(s),
                            "a whole number ≥ 0",
                        )
                    })
                })
                .collect::<Result<Vec<u32>>>()
                .and_then(|v| {
                    if v.is_empty() {
                        Err(Error::invalid("--ids", "none", "at least one token id"))
                    } else {
                        Ok(v)
                    }
                })
        }
        (Some(_), Some(_)) => Err(Error::invalid(
            "input",
            "both --text and --ids",
            "one of them",
        )),
        (None, None) => Err(Error::invalid(
            "input",
            "none",
            "--ids (token ids of the text)",
        )),
    }
}

/// Refuses texts beyond the trained context (the model never saw such positions) and the
/// sliding window (not implemented: every key is attended).
///
/// # Errors
/// As described.
pub(crate) fn check_length(w: &LlamaWeights<f32>, n: usize) -> Result<()> {
    if let Some(ctx) = w.config.context_length {
        if n > ctx {
            return Err(Error::invalid(
                "text length",
                format!("{n} tokens"),
                format!("at most the trained context of {ctx} tokens"),
            ));
        }
    }
    if let Some(win) = w.config.sliding_window {
        if n > win {
            return Err(Error::invalid(
                "text length",
                format!("{n} tokens"),
                format!("at most the sliding window of {win} tokens (longer texts would need the window mask)"),
            ));
        }
    }
    Ok(())
}

/// One entry of a next-token distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopEntry {
    /// Token id.
    pub id: u32,
    /// The token's text, when a tokenizer is available.
    pub piece: Option<String>,
    /// Its logit.
    pub logit: f64,
    /// Its softmax probability.
    pub prob: f64,
}

/// The `k` most likely next tokens of a logits row.
pub(crate) fn top_entries(row: ndarray::ArrayView1<f32>, k: usize) -> Vec<TopEntry> {
    let probs = crate::model::llama::softmax_f64(row);
    crate::model::llama::top_k(row, k)
        .into_iter()
        .map(|(id, logit)| TopEntry {
            id: id as u32,
            piece: None,
            logit,
            prob: probs[id],
        })
        .collect()
}
