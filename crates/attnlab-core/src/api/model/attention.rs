//! `attnlab model attention`: one head's attention weights in one layer of a real model, on the
//! hidden states that enter that layer for a text — the heat map the course draws for a drawn
//! matrix, here for a trained one.
//!
//! Row `i` of the map is `softmax(q_i·k_jᵀ/√d)` over the keys `j ≤ i` (the model is causal);
//! with `pos = none` the same weights with the rotation removed. The summary shares are means
//! over the queries that have a choice (`i ≥ 1`): how much attention goes to the first token
//! (the "attention sink" trained models develop), to the previous token, and to the query's
//! own token.

use serde::{Deserialize, Serialize};

use super::PosChoice;
use crate::api::value::List;
use crate::api::{Context, Outcome};
use crate::attention::Mask;
use crate::chart::{Chart, ChartKind, ColourScale, Heatmap};
use crate::limits::{self, Budget};
use crate::model::llama::ForwardOptions;
use crate::{Error, Result};

/// The request of `attnlab model attention`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelAttentionRequest {
    /// The checkpoint: a GGUF file, `smollm2-135m`, or a Hugging Face directory.
    pub model: String,
    /// The text (needs the tokenizer).
    pub text: Option<String>,
    /// Token ids instead of a text.
    pub ids: Option<List>,
    /// The layer (0-based).
    pub layer: usize,
    /// The query head (0-based).
    pub head: usize,
    /// RoPE as trained, or removed.
    pub pos: PosChoice,
}

impl Default for ModelAttentionRequest {
    fn default() -> Self {
        ModelAttentionRequest {
            model: super::DEFAULT_MODEL.into(),
            text: None,
            ids: None,
            layer: 0,
            head: 0,
            pos: PosChoice::Rope,
        }
    }
}

/// What `attnlab model attention` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelAttentionReport {
    /// The checkpoint.
    pub model: String,
    /// The token ids.
    pub ids: Vec<u32>,
    /// Their vocabulary entries, when the checkpoint has a tokenizer.
    pub pieces: Option<Vec<String>>,
    /// The layer.
    pub layer: usize,
    /// The query head.
    pub head: usize,
    /// The key/value head it shares (grouped-query attention).
    pub kv_head: usize,
    /// The model's query heads.
    pub heads: usize,
    /// The model's key/value heads.
    pub kv_heads: usize,
    /// Rotation on or off.
    pub pos: PosChoice,
    /// `n × n` weights, row = query, column = key (0 above the diagonal: causal).
    pub weights: Vec<Vec<f64>>,
    /// Per query, the key it gives the most weight.
    pub strongest: Vec<usize>,
    /// Mean weight on the first token, over queries `i ≥ 1` (`None` for one token).
    pub first_token_share: Option<f64>,
    /// Mean weight on the previous token, over queries `i ≥ 1`.
    pub previous_token_share: Option<f64>,
    /// Mean weight on the query's own token, over queries `i ≥ 1`.
    pub self_share: Option<f64>,
}

impl ModelAttentionReport {
    /// Weights are a measurement, not a check.
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// The heat map of the weights, rows and columns labelled by the tokens.
    pub fn charts(&self) -> Vec<Chart> {
        let labels: Vec<String> = match &self.pieces {
            Some(p) => p
                .iter()
                .enumerate()
                .map(|(i, s)| format!("{i} {}", crate::present::text::shorten(s)))
                .collect(),
            None => self.ids.iter().map(|i| i.to_string()).collect(),
        };
        vec![Chart {
            name: "attention".into(),
            title: format!(
                "layer {} head {} (K/V head {}), pos {}: attention weights",
                self.layer,
                self.head,
                self.kv_head,
                self.pos.name()
            ),
            kind: ChartKind::Heatmap(Heatmap {
                values: self.weights.clone(),
                row_labels: labels.clone(),
                col_labels: labels,
                x_label: "key".into(),
                y_label: "query".into(),
                scale: ColourScale::Sequential { min: 0.0, max: 1.0 },
                scale_note: "each row sums to 1; causal: keys after the query get 0".into(),
                highlight_rows: Vec::new(),
            }),
        }]
    }
}

/// The model's size is in its file: the request alone fixes only tokenizing its text; the
/// weights, the forward and the `n × n` map are checked once the header is read.
pub fn budget(r: &ModelAttentionRequest) -> Budget {
    super::request_budget(&r.text)
}

/// Runs the layers before `layer` on the text and returns the head's weights there.
///
/// # Errors
/// Bad model path, ids, layer or head; a text beyond the trained context; the forward's budget
/// over the limits.
pub fn run(r: &ModelAttentionRequest, ctx: &Context) -> Result<ModelAttentionReport> {
    let opened = super::open_checkpoint(&r.model, ctx)?;
    let ids = opened.ids(&r.text, &r.ids, ctx)?;
    let c = opened.config.clone();
    if r.layer >= c.layers {
        return Err(Error::invalid(
            "--layer",
            r.layer,
            format!("0 … {} (the model has {} layers)", c.layers - 1, c.layers),
        ));
    }
    if r.head >= c.heads {
        return Err(Error::invalid(
            "--head",
            r.head,
            format!(
                "0 … {} (the model has {} query heads)",
                c.heads - 1,
                c.heads
            ),
        ));
    }
    super::check_length(&c, ids.len())?;
    let n = ids.len();
    let cells = limits::u(n).saturating_mul(limits::u(n));
    opened
        .budget(n, 1, 0)
        .plus(Budget::new(cells.saturating_mul(4 + 8), cells))
        .check(
            format!(
                "model attention on {n} tokens ({} parameters in f32, the forward to layer {} and its {n}×{n} map)",
                c.parameters(),
                r.layer
            ),
            &ctx.limits,
        )?;
    let m = opened.load(ctx)?;
    let w = &m.weights;
    let positions = r.pos.positions();
    let entering = w.forward(
        &ids,
        &ForwardOptions {
            positions: positions.clone(),
            layers: Some(r.layer),
            ..ForwardOptions::default()
        },
    )?;
    let rope = w.rope_table(n, &positions)?;
    let a = w.attention_weights(
        r.layer,
        entering.last.view(),
        rope.as_ref(),
        r.head,
        Mask::Causal,
    )?;
    let weights: Vec<Vec<f64>> = a
        .rows()
        .into_iter()
        .map(|row| row.iter().map(|&x| f64::from(x)).collect())
        .collect();
    let strongest = weights
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .fold((0, f64::NEG_INFINITY), |best, (j, &x)| {
                    if x > best.1 {
                        (j, x)
                    } else {
                        best
                    }
                })
                .0
        })
        .collect();
    let mean = |f: &dyn Fn(usize) -> f64| -> Option<f64> {
        (n > 1).then(|| (1..n).map(f).sum::<f64>() / (n - 1) as f64)
    };
    Ok(ModelAttentionReport {
        model: r.model.clone(),
        pieces: m.pieces(&ids),
        layer: r.layer,
        head: r.head,
        kv_head: r.head / (c.heads / c.kv_heads),
        heads: c.heads,
        kv_heads: c.kv_heads,
        pos: r.pos,
        first_token_share: mean(&|i| weights[i][0]),
        previous_token_share: mean(&|i| weights[i][i - 1]),
        self_share: mean(&|i| weights[i][i]),
        strongest,
        weights,
        ids,
    })
}
