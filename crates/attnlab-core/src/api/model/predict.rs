//! `attnlab model predict`: the next-token distribution of a real model at the last position.

use serde::{Deserialize, Serialize};

use super::{PosChoice, TopEntry};
use crate::api::value::List;
use crate::api::{Context, Outcome};
use crate::chart::{BarChart, Chart, ChartKind, Series1};
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

    /// `top`: one bar per listed token, its softmax probability (the next-token distribution's
    /// head).
    pub fn charts(&self) -> Vec<Chart> {
        let categories = self
            .top
            .iter()
            .map(|e| match &e.piece {
                Some(p) => format!("{p} ({})", e.id),
                None => e.id.to_string(),
            })
            .collect();
        vec![Chart {
            name: "top".into(),
            title: format!(
                "{}: the next token after {} tokens (pos {}), the {} most likely",
                self.model,
                self.ids.len(),
                self.pos.name(),
                self.top.len()
            ),
            kind: ChartKind::Bar(BarChart {
                categories,
                groups: vec![Series1 {
                    name: "probability".into(),
                    values: self.top.iter().map(|e| e.prob).collect(),
                }],
                y_label: "probability".into(),
                log_y: false,
                h_lines: Vec::new(),
            }),
        }]
    }
}

/// From the request alone: tokenizing the text. The model's part (its weights in f32 and the
/// forward over the text's tokens, [`super::Opened::budget`]) is in its file: [`run`] checks
/// the whole estimate once the header (or `config.json`) and the tokenizer are read, before
/// any weight is allocated.
pub fn budget(r: &ModelPredictRequest) -> Budget {
    super::request_budget(&r.text)
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
    let opened = super::open_checkpoint(&r.model, ctx)?;
    let ids = opened.ids(&r.text, &r.ids, ctx)?;
    if r.top > opened.config.vocab {
        return Err(Error::invalid(
            "--top",
            r.top,
            format!("at most the vocabulary size {}", opened.config.vocab),
        ));
    }
    super::check_length(&opened.config, ids.len())?;
    opened.check_budget("model predict", ids.len(), 1, 0, ctx)?;
    let m = opened.load(ctx)?;
    let w = &m.weights;
    let out = w.forward(
        &ids,
        &ForwardOptions {
            positions: r.pos.positions(),
            logits_at: vec![ids.len() - 1],
            last_row_only: true,
            ..ForwardOptions::default()
        },
    )?;
    Ok(ModelPredictReport {
        model: r.model.clone(),
        architecture: w.config.arch.name().into(),
        top: m.top(out.logits.row(0), r.top),
        pieces: m.pieces(&ids),
        ids,
        pos: r.pos,
    })
}
