//! `attnlab rope usage`: which rotation planes a trained model's attention uses — per layer,
//! head and plane the bound `|q_k|·|k_k|` a plane can add to a score, from the weights alone and
//! on a text ([`crate::model::usage`]), the share of score energy in the planes that never
//! complete a full turn within the trained context, and what that means before changing the
//! base (a report: exit 0 whatever it finds).

use serde::{Deserialize, Serialize};

use crate::api::{Context, Outcome};
use crate::chart::{Chart, ChartKind, ColourScale, Heatmap};
use crate::limits::Budget;
use crate::model::llama::{ForwardOptions, Positions};
use crate::model::usage::{self, BaseChange, Usage};
use crate::present::number::sig;
use crate::{Error, Result};

/// The request of `attnlab rope usage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UsageRequest {
    /// A GGUF file, a known model name (`smollm2-135m`) or a Hugging Face checkpoint directory.
    pub model: String,
    /// A text whose queries and keys are measured too (its mean |q_k|·|k_k| per plane).
    pub text: Option<String>,
    /// Only this layer (default: every layer).
    pub layer: Option<usize>,
}

impl Default for UsageRequest {
    fn default() -> Self {
        UsageRequest {
            model: crate::api::model::DEFAULT_MODEL.into(),
            text: None,
            layer: None,
        }
    }
}

/// The report of `attnlab rope usage`.
#[derive(Debug, Clone, Serialize)]
pub struct UsageReport {
    /// The model as the request names it.
    pub model: String,
    /// Its architecture.
    pub architecture: String,
    /// θ of its frequencies (ω_0 / ω_1 ratio recovered: ω_k = θ^(−2k/r)).
    pub base: f64,
    /// Rotated dims per head r.
    pub rotary_dim: usize,
    /// Layers, query heads, key/value heads of the model.
    pub model_layers: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads.
    pub kv_heads: usize,
    /// The text's token ids (with a text).
    pub ids: Option<Vec<u32>>,
    /// Everything measured.
    #[serde(flatten)]
    pub usage: Usage,
    /// What halving and doubling the base would move across the turn criterion (weights).
    pub base_changes: Vec<BaseChange>,
    /// The conclusion in one line: what to know before changing the base.
    pub conclusion: String,
}

impl UsageReport {
    /// Always holds (a report).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// The layers × planes heat map of each plane's share of the layer's score energy (from the
    /// weights, and on the text when given).
    pub fn charts(&self) -> Vec<Chart> {
        let mut v = vec![heat(
            "usage_weights",
            "Share of each layer's score energy per rotation plane, from the weights (‖W_q,k‖·‖W_k,k‖)²",
            &self.usage.layer_plane_share_weights,
            &self.usage,
        )];
        if let Some(t) = &self.usage.layer_plane_share_text {
            v.push(heat(
                "usage_text",
                "Share of each layer's score energy per rotation plane on the text (mean |q_k|·|k_k|)²",
                t,
                &self.usage,
            ));
        }
        v
    }
}

fn heat(name: &str, title: &str, values: &[Vec<f64>], u: &Usage) -> Chart {
    let max = values
        .iter()
        .flatten()
        .copied()
        .fold(0.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let first_slow = u.slow_planes.first().copied();
    Chart {
        name: name.into(),
        title: title.into(),
        kind: ChartKind::Heatmap(Heatmap {
            values: values.to_vec(),
            row_labels: u.layers.iter().map(|l| format!("layer {l}")).collect(),
            col_labels: u.planes.iter().map(|p| p.plane.to_string()).collect(),
            x_label: match first_slow {
                Some(k) => format!(
                    "rotation plane k (fast → slow; planes {k}+ turn less than once in {} positions)",
                    u.context
                ),
                None => "rotation plane k (fast → slow)".into(),
            },
            y_label: "layer".into(),
            scale: ColourScale::Sequential { min: 0.0, max },
            scale_note: format!("colour: 0 to {} of the layer's energy", sig(max, 3)),
            highlight_rows: vec![],
        }),
    }
}

/// Nothing is known before the file is read: the weights in f32 are checked against the memory
/// limit by the loader (4 bytes a parameter, before any tensor is read) and the text's forward by
/// its own budget, as `model predict` does.
pub fn budget(_req: &UsageRequest) -> Budget {
    Budget::new(0, 0)
}

/// Plane indices as runs (`20–31`).
fn runs(planes: &[usize]) -> String {
    crate::api::rope::audit::gguf::plane_list(planes)
}

/// The one line to read before changing the base (Barbero et al. 2024), from the numbers.
fn conclusion(u: &Usage, base: f64, changes: &[BaseChange]) -> String {
    let pct = |x: f64| format!("{}%", sig(100.0 * x, 3));
    let (src, slow) = match u.slow_share_text {
        Some(t) => ("on the text", t),
        None => ("from the weights", u.slow_share_weights),
    };
    let half = changes.iter().find(|c| c.ratio < 1.0);
    let double = changes.iter().find(|c| c.ratio > 1.0);
    let moved = |c: Option<&BaseChange>, start: bool| match c {
        Some(c) if start && !c.start_turning.is_empty() => format!(
            "{} of them (planes {}, {} of the energy) start to turn within the context",
            c.start_turning.len(),
            runs(&c.start_turning),
            pct(c.start_turning_share)
        ),
        Some(c) if !start && !c.stop_turning.is_empty() => format!(
            "plane{} {} ({} of the energy) stop{} completing a turn",
            if c.stop_turning.len() == 1 { "" } else { "s" },
            runs(&c.stop_turning),
            pct(c.stop_turning_share),
            if c.stop_turning.len() == 1 { "s" } else { "" }
        ),
        _ => "no plane crosses a full turn".into(),
    };
    if u.slow_planes.is_empty() {
        return format!(
            "Every plane completes a full turn within the trained {} positions (θ ≈ {}): the model has no never-turning semantic channel (Barbero et al. 2024); a larger base would create some, and the fastest planes carry the positional heads.",
            u.context,
            sig(base, 6)
        );
    }
    format!(
        "Before changing the base θ ≈ {}: {} of the score energy ({src}) sits in the {} planes {} that never complete a turn within the trained {} positions — the channels Barbero et al. 2024 find used as position-insensitive (semantic) ones; halving θ, {}; doubling θ, {}: those are the weights a new base would ask to re-learn.",
        sig(base, 6),
        pct(slow),
        u.slow_planes.len(),
        runs(&u.slow_planes),
        u.context,
        moved(half, true),
        moved(double, false)
    )
}

/// Runs it: loads the weights (progress stage "loading"), measures every requested layer
/// (stage "measuring"), with a text runs the forward up to the last requested layer.
///
/// # Errors
/// A model attnlab's forward cannot load; a layer out of range; a text with no tokens or beyond
/// the trained context; the weights or the forward over the memory limit; cancellation.
pub fn run(req: &UsageRequest, ctx: &Context) -> Result<UsageReport> {
    (ctx.progress)("loading", 0.0);
    let m = crate::api::model::load(&req.model, ctx)?;
    let w = &m.weights;
    let c = &w.config;
    let layers: Vec<usize> = match req.layer {
        Some(l) if l < c.layers => vec![l],
        Some(l) => {
            return Err(Error::invalid(
                "layer",
                l,
                format!("0 … {} (the model has {} layers)", c.layers - 1, c.layers),
            ))
        }
        None => (0..c.layers).collect(),
    };
    let context = c.context_length.ok_or_else(|| {
        Error::invalid(
            "model",
            crate::present::text::shorten(&req.model),
            "a model whose file states its trained context (context_length), which the turn criterion needs",
        )
    })? as u64;
    let (ids, hidden) = match &req.text {
        None => (None, None),
        Some(_) => {
            let ids = m.ids(&req.text, &None, ctx)?;
            crate::api::model::check_length(&w.config, ids.len())?;
            let last = *layers.last().expect("at least one layer");
            c.forward_budget(ids.len(), 0, 4)
                .check("the forward pass over the text", &ctx.limits)?;
            let h0 = w.embed(&ids)?;
            let out = w.forward_hidden(
                h0.clone(),
                &ForwardOptions {
                    positions: Positions::Rope,
                    layers: Some(last),
                    keep_hidden: true,
                    ..ForwardOptions::default()
                },
            )?;
            let mut inputs = vec![h0];
            inputs.extend(out.hidden);
            let picked: Vec<_> = layers.iter().map(|&l| inputs[l].clone()).collect();
            (Some(ids), Some(picked))
        }
    };
    let total = layers.len();
    let done = std::cell::Cell::new(0usize);
    let cancelled = || {
        (ctx.progress)("measuring", done.get() as f64 / total as f64);
        done.set(done.get() + 1);
        ctx.check_cancelled("rope usage")
    };
    let u = usage::measure(w, &layers, context, hidden.as_deref(), &cancelled)?;
    (ctx.progress)("measuring", 1.0);
    let rotary_dim = 2 * c.inv_freq.len();
    // θ from the slowest frequency, ω_last = θ^(−(r−2)/r) (the f32 rounding of ω is not
    // amplified, unlike from ω_1 = θ^(−2/r)); 6 significant digits are shown.
    let base = match c.inv_freq.last() {
        Some(&w) if w > 0.0 && rotary_dim > 2 => {
            (1.0 / w).powf(rotary_dim as f64 / (rotary_dim as f64 - 2.0))
        }
        _ => f64::NAN,
    };
    let shares = u
        .plane_share_text
        .clone()
        .unwrap_or_else(|| u.plane_share_weights.clone());
    let base_changes = vec![
        usage::base_change(&u, rotary_dim, 0.5, &shares),
        usage::base_change(&u, rotary_dim, 2.0, &shares),
    ];
    let conclusion = conclusion(&u, base, &base_changes);
    Ok(UsageReport {
        model: req.model.clone(),
        architecture: c.arch.name().into(),
        base,
        rotary_dim,
        model_layers: c.layers,
        heads: c.heads,
        kv_heads: c.kv_heads,
        ids,
        usage: u,
        base_changes,
        conclusion,
    })
}
