//! `attnlab model order`: seed 000's question on a real trained model — does the output for a
//! text differ from the output for a permutation of its tokens, and where does order enter?
//!
//! Computed, layer by layer (f32, the checkpoint's weights):
//! * **Bare attention** of layer 0 (its RMSNorm, projections, all heads and `W_o`; no mask, no
//!   rotation) on the embedded tokens: `Attn(ΠH) = Π·Attn(H)` to round-off (equivariance).
//! * **Causal mask, no rotation**: the prefix (every token but the last) is permuted and the last
//!   token kept; after ONE layer the last position is unchanged to round-off — it attends to the
//!   same set of (key, value) rows, and a softmax-weighted sum is blind to their order — but
//!   after two or more layers the earlier positions it attends to have themselves seen different
//!   prefixes, so order leaks through depth. Reported: the change of the last position's hidden
//!   state after each layer, relative to its size, against the round-off tolerance, and the
//!   first layer where it exceeds it.
//! * **With RoPE** (causal): the same, moving from the first layer (scores depend on positions).
//! * The next-token distributions of the text and of its permutation (default: the reversal), with
//!   and without RoPE, and their total-variation distance.

/// The sentences of this report (the report boundary writes them from the typed values).
pub mod prose;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::{PosChoice, TopEntry};
use crate::api::value::List;
use crate::api::{Context, Outcome};
use crate::attention::Mask;
use crate::chart::{Chart, ChartKind, LineChart, Mark, Series};
use crate::limits::Budget;
use crate::model::llama::{ForwardOptions, LlamaWeights};
use crate::symmetry::Permutation;
use crate::{Error, Result};

/// The request of `attnlab model order`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelOrderRequest {
    /// The checkpoint: a GGUF file, `smollm2-135m`, or a Hugging Face directory.
    pub model: String,
    /// The text (needs the tokenizer).
    pub text: Option<String>,
    /// Token ids instead of a text.
    pub ids: Option<List>,
    /// The permutation of the tokens (`2,0,1`: new position i holds old token perm[i]); default
    /// the reversal.
    pub perm: Option<List>,
    /// Tokens listed per distribution.
    pub top: usize,
}

impl Default for ModelOrderRequest {
    fn default() -> Self {
        ModelOrderRequest {
            model: super::DEFAULT_MODEL.into(),
            text: None,
            ids: None,
            perm: None,
            top: 5,
        }
    }
}

/// The two next-token distributions under one rotary setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distributions {
    /// RoPE on or off.
    pub pos: PosChoice,
    /// The text's most likely next tokens.
    pub text_top: Vec<TopEntry>,
    /// The permuted text's.
    pub permuted_top: Vec<TopEntry>,
    /// `½ Σ |p − p'|` over the whole vocabulary.
    pub total_variation: f64,
}

/// How much the last position moved after one layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerMove {
    /// The layer (0-based) after which the hidden state is compared.
    pub layer: usize,
    /// `max_j |h_j − h'_j| / max_j |h_j|` at the last position.
    pub relative_change: f64,
    /// The round-off tolerance for this depth (relative).
    pub tolerance: f64,
    /// Whether the change exceeds it.
    pub moved: bool,
}

/// The equivariance of one bare attention layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BareAttention {
    /// The layer.
    pub layer: usize,
    /// `max |Attn(ΠH) − Π·Attn(H)|`.
    pub max_error: f64,
    /// `k·eps·(n + d)·max|Attn(H)|`.
    pub tolerance: f64,
    /// Whether it holds.
    pub equivariant: bool,
}

/// One sweep of layers under one rotary setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Depth {
    /// RoPE on or off.
    pub pos: PosChoice,
    /// Per layer.
    pub layers: Vec<LayerMove>,
    /// The first layer whose output at the last position moved, if any.
    pub first_moved: Option<usize>,
}

/// What `attnlab model order` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelOrderReport {
    /// The checkpoint.
    pub model: String,
    /// The token ids.
    pub ids: Vec<u32>,
    /// The permutation of the whole text compared in the distributions.
    pub perm: Vec<usize>,
    /// The permutation of the prefix (last token fixed) used layer by layer.
    pub prefix_perm: Vec<usize>,
    /// The distributions with and without RoPE.
    pub distributions: Vec<Distributions>,
    /// Bare attention of layer 0.
    pub bare_attention: BareAttention,
    /// Causal mask, no rotation, then with RoPE.
    pub depth: Vec<Depth>,
}

impl ModelOrderReport {
    /// Fails when a theorem does not hold on the real weights (bare attention equivariant; the
    /// last position after one causal layer without RoPE invariant): that would be a bug.
    pub fn outcome(&self) -> Outcome {
        let first = self
            .depth
            .iter()
            .find(|d| d.pos == PosChoice::None)
            .and_then(|d| d.layers.first())
            .is_some_and(|l| !l.moved);
        if self.bare_attention.equivariant && first {
            Outcome::Holds
        } else {
            Outcome::Fails
        }
    }

    /// `depth`: the last position's relative change after each layer, without and with RoPE
    /// (log scale), against the round-off tolerance of that depth; the first layer where each
    /// moved is marked.
    pub fn charts(&self) -> Vec<Chart> {
        let mut series = Vec::new();
        let mut marks = Vec::new();
        for d in &self.depth {
            let name = match d.pos {
                PosChoice::None => "without RoPE (causal)",
                PosChoice::Rope => "with RoPE (causal)",
            };
            series.push(Series {
                name: name.into(),
                points: d
                    .layers
                    .iter()
                    .map(|l| (l.layer as f64, l.relative_change))
                    .collect(),
                markers: true,
            });
            if let Some(l) = d.first_moved.and_then(|f| d.layers.get(f)) {
                marks.push(Mark {
                    x: l.layer as f64,
                    y: l.relative_change,
                    label: format!("{}: first moves after layer {}", d.pos.name(), l.layer),
                });
            }
        }
        if let Some(d) = self.depth.first() {
            series.push(Series {
                name: "round-off tolerance".into(),
                points: d
                    .layers
                    .iter()
                    .map(|l| (l.layer as f64, l.tolerance))
                    .collect(),
                markers: false,
            });
        }
        vec![Chart {
            name: "depth".into(),
            title: format!(
                "{}: how far the last position moves when the prefix is permuted ({:?}), layer by layer",
                self.model, self.prefix_perm
            ),
            kind: ChartKind::Line(LineChart {
                x_label: "layer".into(),
                y_label: "max |h − h′| / max |h| at the last position".into(),
                series,
                log_y: true,
                marks,
                ..LineChart::default()
            }),
        }]
    }
}

/// From the request alone: tokenizing the text. The model's part (its weights in f32, the
/// eight forward passes and the hidden states kept for the layer-by-layer comparison) is in
/// its file: [`run`] checks the whole estimate once the header (or `config.json`) and the
/// tokenizer are read, before any weight is allocated.
pub fn budget(r: &ModelOrderRequest) -> Budget {
    super::request_budget(&r.text)
}

fn rel_change(a: ndarray::ArrayView1<f32>, b: ndarray::ArrayView1<f32>) -> f64 {
    let scale = a.iter().fold(0.0f64, |m, &x| m.max(f64::from(x).abs()));
    let diff = a.iter().zip(b).fold(0.0f64, |m, (&x, &y)| {
        m.max((f64::from(x) - f64::from(y)).abs())
    });
    diff / scale.max(f64::MIN_POSITIVE)
}

fn depth(w: &LlamaWeights<f32>, ids: &[u32], pids: &[u32], pos: PosChoice) -> Result<Depth> {
    let c = &w.config;
    let opts = ForwardOptions {
        positions: pos.positions(),
        keep_hidden: true,
        ..ForwardOptions::default()
    };
    let a = w.forward(ids, &opts)?;
    let b = w.forward(pids, &opts)?;
    let n = ids.len();
    // Round-off bound per layer, relative: k·eps32·(n + d + ffn) for one layer's sums, and each
    // layer can add as much again (the same argument as the forward's oracle test).
    let one = 8.0 * f64::from(f32::EPSILON) * (n + c.dim + c.ffn_dim) as f64;
    let layers: Vec<LayerMove> = (0..c.layers)
        .map(|l| {
            let r = rel_change(a.hidden[l].row(n - 1), b.hidden[l].row(n - 1));
            let tolerance = one * (l + 1) as f64;
            LayerMove {
                layer: l,
                relative_change: r,
                tolerance,
                moved: r > tolerance,
            }
        })
        .collect();
    Ok(Depth {
        pos,
        first_moved: layers.iter().find(|l| l.moved).map(|l| l.layer),
        layers,
    })
}

/// Runs every comparison.
///
/// # Errors
/// Bad model, ids or permutation; fewer than 3 tokens (a prefix of at least two is needed);
/// budgets over the limits.
pub fn run(r: &ModelOrderRequest, ctx: &Context) -> Result<ModelOrderReport> {
    let opened = super::open_checkpoint(&r.model, ctx)?;
    let ids = opened.ids(&r.text, &r.ids, ctx)?;
    let n = ids.len();
    if n < 3 {
        return Err(Error::invalid(
            "text length",
            format!("{n} tokens"),
            "at least 3 tokens (a prefix of two or more to permute, and a last token)",
        ));
    }
    if r.top == 0 {
        return Err(Error::invalid("--top", 0, "at least 1"));
    }
    let perm = match &r.perm {
        Some(p) => Permutation::parse(&p.joined(), n)?,
        None => Permutation::new((0..n).rev().collect())?,
    };
    if perm.is_identity() {
        return Err(Error::invalid(
            "--perm",
            perm.as_slice()
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(","),
            "a permutation that moves some token",
        ));
    }
    // The prefix permutation: the given one if it keeps the last token, else the prefix reversed.
    let prefix = if perm.as_slice()[n - 1] == n - 1 {
        perm.clone()
    } else {
        let mut p: Vec<usize> = (0..n - 1).rev().collect();
        p.push(n - 1);
        Permutation::new(p)?
    };
    super::check_length(&opened.config, n)?;
    // 2 × 2 forwards for the distributions, 2 × 2 for the layer sweeps (which keep every
    // layer's hidden states of both texts), and two bare attention layers.
    let layers = crate::limits::u(opened.config.layers);
    opened.check_budget("model order", n, 8, 2 * layers, ctx)?;
    let m = opened.load(ctx)?;
    let w = &m.weights;
    let apply = |p: &Permutation| -> Vec<u32> { p.as_slice().iter().map(|&i| ids[i]).collect() };
    let (pids, prefix_ids) = (apply(&perm), apply(&prefix));

    let mut distributions = Vec::new();
    for pos in [PosChoice::Rope, PosChoice::None] {
        let opts = ForwardOptions {
            positions: pos.positions(),
            logits_at: vec![n - 1],
            ..ForwardOptions::default()
        };
        let a = w.forward(&ids, &opts)?;
        let b = w.forward(&pids, &opts)?;
        let (pa, pb) = (
            crate::model::llama::softmax_f64(a.logits.row(0)),
            crate::model::llama::softmax_f64(b.logits.row(0)),
        );
        let tv = 0.5 * pa.iter().zip(&pb).map(|(x, y)| (x - y).abs()).sum::<f64>();
        distributions.push(Distributions {
            pos,
            text_top: m.top(a.logits.row(0), r.top),
            permuted_top: m.top(b.logits.row(0), r.top),
            total_variation: tv,
        });
        ctx.check_cancelled("model order")?;
    }

    // Bare attention of layer 0: no mask, no rotation, on the embedded tokens.
    let h = w.embed(&ids)?;
    let ph = perm.apply_rows(h.view())?;
    let fa = w.attention(0, h.view(), None, Mask::None)?;
    let fpa = w.attention(0, ph.view(), None, Mask::None)?;
    let pfa: Array2<f32> = perm.apply_rows(fa.view())?;
    let scale = fa.iter().fold(0.0f64, |m, &x| m.max(f64::from(x).abs()));
    let err = (&fpa - &pfa)
        .iter()
        .fold(0.0f64, |m, &x| m.max(f64::from(x).abs()));
    let tol = crate::symmetry::Tolerance::for_layer::<f32>(n, w.config.dim, scale).value;
    let bare_attention = BareAttention {
        layer: 0,
        max_error: err,
        tolerance: tol,
        equivariant: err <= tol,
    };
    let depth = vec![
        depth(w, &ids, &prefix_ids, PosChoice::None)?,
        depth(w, &ids, &prefix_ids, PosChoice::Rope)?,
    ];
    Ok(ModelOrderReport {
        model: r.model.clone(),
        ids,
        perm: perm.as_slice().to_vec(),
        prefix_perm: prefix.as_slice().to_vec(),
        distributions,
        bare_attention,
        depth,
    })
}
