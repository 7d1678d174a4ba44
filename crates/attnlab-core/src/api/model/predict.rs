//! `attnlab model predict`: the next-token distribution of a real model at the last position.

use serde::{Deserialize, Serialize};

use super::{PosChoice, TopEntry};
use crate::api::value::List;
use crate::api::{Context, Outcome};
use crate::chart::Chart;
use crate::limits::Budget;
use crate::model::llama::ForwardOptions;
use crate::{Error, Result};

/// The request of `attnlab model predict`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelPredictRequest {
    /// The checkpoint: a GGUF file, `smollm2-135m`, or a Hugging Face directory.
    pub model: String,
    /// The text (needs the tokenizer).
    pub text: Option<String>,
    /// Token ids instead of a text.
    pub ids: Option<List>,
    /// How many of the most likely tokens to list.
    pub top: usize,
    /// RoPE as trained, or removed.
    pub pos: PosChoice,
}

impl Default for ModelPredictRequest {
    fn default() -> Self {
        ModelPredictRequest {
            model: super::DEFAULT_MODEL.into(),
            text: None,
            ids: None,
            top: 10,
            pos: PosChoice::Rope,
        }
    }
}

/// What `attnlab model predict` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelPredictReport {
    /// The checkpoint.
    pub model: String,
    /// Its architecture.
    pub architecture: String,
    /// The token ids run.
    pub ids: Vec<u32>,
    /// Their vocabulary entries, when the checkpoint has a tokenizer.
    pub pieces: Option<Vec<String>>,
    /// Rotation on or off.
    pub pos: PosChoice,
    /// The most likely next tokens, most likely first.
    pub top: Vec<TopEntry>,
}

impl ModelPredictReport {
    /// A prediction is not a check.
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// No charts: the table says it.
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// The request alone fixes little (the model's size is in its files): the loader and the
/// forward check their own budgets against the limits once the config is read.
pub fn budget(_r: &ModelPredictRequest) -> Budget {
    Budget::new(0, 0)
}

/// Runs the forward and lists the top tokens at the last position.
///
/// # Errors
/// Bad model path or ids, a text beyond the trained context, `top` outside 1 … vocabulary,
/// the forward's budget over the limits.
pub fn run(r: &ModelPredictRequest, ctx: &Context) -> Result<ModelPredictReport> {
    if r.top == 0 {
        return Err(Error::invalid("--top", 0, "at least 1"));
    }
    let m = super::load(&r.model, ctx)?;
    let ids = m.ids(&r.text, &r.ids, ctx)?;
    let w = &m.weights;
    if r.top > w.config.vocab {
        return Err(Error::invalid(
            "--top",
            r.top,
            format!("at most the vocabulary size {}", w.config.vocab),
        ));
    }
    super::check_length(w, ids.len())?;
    w.config
        .forward_budget(ids.len(), 1, 4)
        .check("the forward pass", &ctx.limits)?;
    let out = w.forward(
        &ids,
        &ForwardOptions {
            positions: r.pos.positions(),
            logits_at: vec![ids.len() - 1],
            ..ForwardOptions::default()
        },
    )?;
    Ok(ModelPredictReport {
        model: r.model.clone(),
        architecture: w.config.arch.name().into(),
        top: m.top(out.logits.row(0), r.top),
        pieces: m.tokenizer.as_ref().map(|_| {
            ids.iter()
                .map(|&i| m.piece(i).unwrap_or_default())
                .collect()
        }),
        ids,
        pos: r.pos,
    })
}
