//! `attnlab attend`: one forward pass of self-attention — the drawn or loaded inputs, the
//! positional table added, the projections, Q, K, V (rotated under RoPE), the scaled scores,
//! the weights of every head and the output. [`AttendPart`] names the parts a front end may
//! show.

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::layer_input::{forward_budget, inputs_bytes, LayerInput};
use super::{Context, Outcome};
use crate::attention::Mask;
use crate::chart::Chart;
use crate::layer::{Inputs, LayerKind, PosKind, Readout};
use crate::limits::{self, Budget};
use crate::rng::RngKind;
use crate::{Dtype, Real, Result};

/// The request of `attnlab attend`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AttendRequest {
    /// The layer's inputs and set-up.
    #[serde(flatten)]
    pub input: LayerInput,
    /// The parts the caller will show (`--show`); absent: every part, with the n × n scores and
    /// weights formed only for n ≤ [`MAX_READABLE_TOKENS`]. Naming `scores` or `weights` for a
    /// larger n is refused; a list without them never forms an n × n matrix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub show: Option<Vec<AttendPart>>,
}

/// The largest n whose n × n scores and weights are formed: a 256 × 256 heat map is about the
/// most a person can read (a pixel or two per weight), and the output never needs them (the
/// fused kernel computes it without). Larger n still run, within the budgets.
pub const MAX_READABLE_TOKENS: usize = 256;

crate::choice! {
    /// The parts of a forward pass a front end can show (`attnlab attend --show`).
    pub enum AttendPart("part") {
        /// X, the input rows.
        Inputs = "inputs",
        /// The positional table added (and H = X + table), or the note that RoPE rotates Q, K.
        Positions = "positions",
        /// Wq, Wk, Wv (and Wo).
        Projections = "projections",
        /// Q, K, V (and the rotated Q, K under RoPE).
        Qkv = "qkv",
        /// The scaled scores Q·Kᵀ/√d_k, masked entries shown as −∞.
        Scores = "scores",
        /// The weights A = softmax(scores).
        Weights = "weights",
        /// The output A·V (·Wo).
        Output = "output",
    }
}

impl AttendPart {
    /// What `attnlab attend` shows without `--show`: the input, the weights, the output.
    pub const DEFAULT: [AttendPart; 3] =
        [AttendPart::Inputs, AttendPart::Weights, AttendPart::Output];
}

/// The report of `attnlab attend`: every matrix of the forward pass, in f64 (f32 layers'
/// values converted exactly).
#[derive(Debug, Clone, Serialize)]
pub struct AttendReport {
    /// Sequence length.
    pub n: usize,
    /// Model width.
    pub dim: usize,
    /// Heads.
    pub heads: usize,
    /// Seed of the generator.
    pub seed: u64,
    /// Generator.
    pub rng: RngKind,
    /// Mask.
    pub mask: Mask,
    /// Positional information.
    pub pos: PosKind,
    /// The layer's dtype.
    pub dtype: Dtype,
    /// The tokens, when the input came from text.
    pub tokens: Option<Vec<String>>,
    /// Input rows.
    #[serde(rename = "X", serialize_with = "rows")]
    pub x: Array2<f64>,
    /// Query projection.
    #[serde(rename = "Wq", serialize_with = "rows")]
    pub wq: Array2<f64>,
    /// Key projection.
    #[serde(rename = "Wk", serialize_with = "rows")]
    pub wk: Array2<f64>,
    /// Value projection.
    #[serde(rename = "Wv", serialize_with = "rows")]
    pub wv: Array2<f64>,
    /// Output projection (several heads).
    #[serde(rename = "Wo", serialize_with = "opt_rows")]
    pub wo: Option<Array2<f64>>,
    /// The positional table added to X (index signal, sinusoidal or learned; null without
    /// additive positions — RoPE rotates Q and K instead).
    #[serde(serialize_with = "opt_rows")]
    pub positions: Option<Array2<f64>>,
    /// `H = X + positions`, the rows the projections act on (null without additive positions:
    /// then H = X).
    #[serde(rename = "H", serialize_with = "opt_rows")]
    pub h: Option<Array2<f64>>,
    /// `Q = H·Wq` (n × d; head h uses columns h·d_k..(h+1)·d_k).
    #[serde(rename = "Q", serialize_with = "rows")]
    pub q: Array2<f64>,
    /// `K = H·Wk`.
    #[serde(rename = "K", serialize_with = "rows")]
    pub k: Array2<f64>,
    /// `V = H·Wv`.
    #[serde(rename = "V", serialize_with = "rows")]
    pub v: Array2<f64>,
    /// With RoPE: each head's queries rotated by position (what enters the scores); else null.
    #[serde(rename = "Q_rotated", serialize_with = "opt_rows")]
    pub q_rotated: Option<Array2<f64>>,
    /// With RoPE: the rotated keys; else null.
    #[serde(rename = "K_rotated", serialize_with = "opt_rows")]
    pub k_rotated: Option<Array2<f64>>,
    /// The scaled scores `Q·Kᵀ/√d_k` of head 0 before softmax; masked entries (−∞) are null.
    pub scores: Vec<Vec<Option<f64>>>,
    /// Every head's scaled scores (only with several heads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scores_per_head: Option<Vec<Vec<Vec<Option<f64>>>>>,
    /// The weights of head 0 (the only head of a single-head layer); empty when they were not
    /// formed ([`AttendReport::weights_formed`]), as `scores` is.
    #[serde(serialize_with = "rows")]
    pub weights: Array2<f64>,
    /// Every head's weights (only with several heads).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_rows_list"
    )]
    pub weights_per_head: Option<Vec<Array2<f64>>>,
    /// The layer output.
    #[serde(serialize_with = "rows")]
    pub output: Array2<f64>,
}

impl AttendReport {
    /// Always holds (a forward pass is not a check).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// Whether the n × n scores and weights were formed (asked for with `--show`, or by default
    /// for n ≤ [`MAX_READABLE_TOKENS`]); when not, `scores` and `weights` are empty and
    /// `weights_per_head` and `scores_per_head` absent.
    pub fn weights_formed(&self) -> bool {
        self.weights.nrows() > 0
    }

    /// The weights of each head as a heat map (`attention_weights`, or `attention_weights_h<k>`
    /// with several heads): rows are queries and sum to 1, the colour runs from 0 to 1.
    pub fn charts(&self) -> Vec<Chart> {
        if !self.weights_formed() {
            return Vec::new();
        }
        let heads: Vec<&Array2<f64>> = match &self.weights_per_head {
            Some(list) => list.iter().collect(),
            None => vec![&self.weights],
        };
        let labels = self.tokens.clone().unwrap_or_default();
        heads
            .iter()
            .enumerate()
            .map(|(h, w)| Chart {
                name: if heads.len() > 1 {
                    format!("attention_weights_h{h}")
                } else {
                    "attention_weights".into()
                },
                title: format!(
                    "attention weights{}, mask {}, positions {}, {}",
                    if heads.len() > 1 {
                        format!(" of head {h}")
                    } else {
                        String::new()
                    },
                    self.mask,
                    self.pos,
                    self.dtype
                ),
                kind: crate::chart::ChartKind::Heatmap(crate::chart::Heatmap {
                    values: w.rows().into_iter().map(|r| r.to_vec()).collect(),
                    row_labels: labels.clone(),
                    col_labels: labels.clone(),
                    x_label: "key".into(),
                    y_label: "query (each row sums to 1)".into(),
                    scale: crate::chart::ColourScale::Sequential { min: 0.0, max: 1.0 },
                    scale_note: "colour: weight 0 to 1".into(),
                    highlight_rows: vec![],
                }),
            })
            .collect()
    }
}

pub use crate::report::rows;

struct Rows<'a>(&'a Array2<f64>);

impl Serialize for Rows<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        rows(self.0, s)
    }
}

/// [`rows`] for an optional matrix (`null` when absent).
pub fn opt_rows<S: serde::Serializer>(
    a: &Option<Array2<f64>>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match a {
        Some(a) => rows(a, s),
        None => s.serialize_none(),
    }
}

fn opt_rows_list<S: serde::Serializer>(
    a: &Option<Vec<Array2<f64>>>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match a {
        Some(list) => s.collect_seq(list.iter().map(Rows)),
        None => s.serialize_none(),
    }
}

/// What a forward pass computed, in f64.
struct Pass {
    h: Array2<f64>,
    output: Array2<f64>,
    weights: Vec<Array2<f64>>,
    trace: crate::attention::Trace<f64>,
}

/// One pass of the layer: with the weights, the kernel's weights path and every intermediate
/// ([`crate::layer::AttentionLayer::traced`]); without, the fused kernel's output and the
/// intermediates but the n × n scores ([`crate::layer::AttentionLayer::projected`]).
fn forward<T: Real>(req: &LayerInput, inputs: &Inputs, with_weights: bool) -> Result<Pass> {
    let spec = req.spec(LayerKind::Attention, Readout::None);
    let layer = spec.attention_layer::<T>(inputs)?;
    let x = inputs.x.mapv(T::from_f64);
    let (h, output, weights, t) = if with_weights {
        let (h, out, t) = layer.traced(x.view())?;
        (h, out.output, out.weights, t)
    } else {
        let (h, out, t) = layer.projected(x.view())?;
        (h, out, Vec::new(), t)
    };
    // Every matrix to f64 for the report, the conversions spread over the pool.
    use rayon::prelude::*;
    let f = |a: &Array2<T>| a.mapv(Real::to_f64);
    let fixed: Vec<Array2<f64>> = [&h, &output, &t.q, &t.k, &t.v, &t.q_mapped, &t.k_mapped]
        .into_par_iter()
        .map(f)
        .collect();
    let mut fixed = fixed.into_iter();
    let mut next = || fixed.next().expect("seven matrices");
    Ok(Pass {
        h: next(),
        output: next(),
        weights: weights.par_iter().map(f).collect(),
        trace: crate::attention::Trace {
            q: next(),
            k: next(),
            v: next(),
            q_mapped: next(),
            k_mapped: next(),
            scores: t.scores.par_iter().map(f).collect(),
        },
    })
}

/// Whether the request forms the n × n scores and weights (see [`AttendRequest::show`]).
///
/// # Errors
/// `scores` or `weights` asked for with n > [`MAX_READABLE_TOKENS`].
pub fn forms_weights(show: Option<&[AttendPart]>, n: usize) -> Result<bool> {
    let readable = n <= MAX_READABLE_TOKENS;
    match show {
        None => Ok(readable),
        Some(parts) => {
            let asked = parts
                .iter()
                .find(|p| matches!(p, AttendPart::Weights | AttendPart::Scores));
            match asked {
                Some(p) if !readable => Err(crate::Error::invalid(
                    format!("--show {}", p.name()),
                    format!("n = {n} tokens"),
                    format!(
                        "n ≤ {MAX_READABLE_TOKENS} (the {} is n×n, more than a person can read; the output needs no weights — leave {} out of --show)",
                        if *p == AttendPart::Weights { "weight matrix" } else { "score matrix" },
                        p.name()
                    ),
                )),
                Some(_) => Ok(true),
                // The JSON report carries every part: a readable n keeps the matrices whatever
                // the text shows (the JSON contract of `--show`).
                None => Ok(readable),
            }
        }
    }
}

/// Scores with −∞ (masked) as `None`.
fn masked(a: &Array2<f64>) -> Vec<Vec<Option<f64>>> {
    a.rows()
        .into_iter()
        .map(|r| r.iter().map(|&x| x.is_finite().then_some(x)).collect())
        .collect()
}

/// What `attnlab attend` needs for an n × d input with k heads: the inputs, one forward pass
/// ([`super::layer_input::forward_budget`], with or without the n × n matrices) and the report
/// — the inputs, Q, K, V (rotated too), the output and, when formed, every head's scores and
/// weights, in f64 and in their text rendering (about 16 bytes per number).
pub fn budget_for(n: usize, d: usize, heads: usize, with_weights: bool) -> Budget {
    let (nn, dd, h) = (limits::u(n), limits::u(d), limits::u(heads));
    let square = if with_weights {
        limits::product(&[2, h, nn, nn])
    } else {
        0
    };
    let report_values = square.saturating_add(limits::product(&[8, nn, dd]));
    let report = Budget::new(report_values.saturating_mul(8 + 16), 0);
    let pass = if with_weights {
        forward_budget(n, d, heads)
    } else {
        super::layer_input::fused_forward_budget(n, d, heads)
    };
    Budget::new(inputs_bytes(n, d), 0).plus(pass).plus(report)
}

/// The budget of a request, from what it declares (see [`LayerInput::declared_shape`]).
pub fn budget(req: &AttendRequest) -> Budget {
    let (n, d) = req.input.declared_shape();
    let weights = forms_weights(req.show.as_deref(), n).unwrap_or(true);
    budget_for(n, d, req.input.heads, weights)
}

/// Runs one forward pass.
///
/// # Errors
/// Bad options, requests over `ctx.limits`, or inputs whose output overflows the dtype (a
/// non-finite result is refused, never printed).
pub fn run(req: &AttendRequest, ctx: &Context) -> Result<AttendReport> {
    let a = &req.input;
    let spec = a.prepare(ctx)?;
    let (n, d) = spec.shape()?;
    let with_weights = forms_weights(req.show.as_deref(), n)?;
    budget_for(n, d, a.heads, with_weights).check(a.describe(n, d, "attend"), &ctx.limits)?;
    let inputs = spec.build()?;
    let pass = match a.dtype.require_layer()? {
        Dtype::F32 => forward::<f32>(a, &inputs, with_weights)?,
        _ => forward::<f64>(a, &inputs, with_weights)?,
    };
    let (output, weights) = (pass.output, pass.weights);
    if output
        .iter()
        .chain(weights.iter().flatten())
        .chain(pass.trace.q_mapped.iter())
        .chain(pass.trace.k_mapped.iter())
        .any(|v| !v.is_finite())
    {
        return Err(a.dtype.overflow(crate::symmetry::LAYER_OUTPUT));
    }
    let (n, dim) = inputs.x.dim();
    let heads = inputs.heads;
    let mut weights = weights.into_iter();
    let first = weights
        .next()
        .unwrap_or_else(|| Array2::zeros(if with_weights { (n, n) } else { (0, 0) }));
    let weights_per_head = (heads > 1 && with_weights)
        .then(|| std::iter::once(first.clone()).chain(weights).collect());
    let spec = a.spec(LayerKind::Attention, Readout::None);
    let positions = spec.positional_table(n, dim)?;
    let rope = a.pos == PosKind::Rope;
    let t = pass.trace;
    let scores_all: Vec<_> = t.scores.iter().map(masked).collect();
    Ok(AttendReport {
        n,
        dim,
        heads,
        seed: a.seed,
        rng: a.rng,
        mask: a.mask,
        pos: a.pos,
        dtype: a.dtype,
        tokens: inputs.tokens,
        x: inputs.x,
        wq: inputs.wq,
        wk: inputs.wk,
        wv: inputs.wv,
        wo: inputs.wo,
        h: positions.is_some().then_some(pass.h),
        positions,
        q: t.q,
        k: t.k,
        v: t.v,
        q_rotated: rope.then_some(t.q_mapped),
        k_rotated: rope.then_some(t.k_mapped),
        scores: scores_all.first().cloned().unwrap_or_default(),
        scores_per_head: (heads > 1 && with_weights).then_some(scores_all),
        weights: first,
        weights_per_head,
        output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::layer_input::LayerInput;

    fn report(input: LayerInput) -> AttendReport {
        run(&AttendRequest { input, show: None }, &Context::default()).unwrap()
    }

    /// The intermediates are the layer's own: the traced pass gives the same output as the
    /// layer function, and Q, K, V, the scores and the weights satisfy their definitions.
    #[test]
    fn the_intermediates_are_the_layers_own() {
        for (pos, mask) in [
            (PosKind::None, Mask::None),
            (PosKind::Index, Mask::Causal),
            (PosKind::Sinusoidal, Mask::None),
            (PosKind::Rope, Mask::Causal),
        ] {
            let input = LayerInput {
                pos,
                mask,
                ..LayerInput::default()
            };
            let r = report(input.clone());
            let inputs = input.inputs(&Context::default()).unwrap();
            let spec = input.spec(LayerKind::Attention, Readout::None);
            let f = spec.attention_fn::<f64>(&inputs).unwrap();
            assert_eq!(f(inputs.x.view()).unwrap().output, r.output, "{pos}");
            // The unfused pass the intermediates come from agrees with it to rounding.
            let (_, traced, _) = spec.attention_traced::<f64>(&inputs).unwrap();
            let diff = (&traced.output - &r.output)
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(diff <= 1e-13, "{pos}: {diff:e}");
            let h = r.h.clone().unwrap_or_else(|| r.x.clone());
            if let Some(p) = &r.positions {
                assert_eq!(&r.x + p, h);
            }
            assert_eq!(r.q, h.dot(&r.wq));
            assert_eq!(r.k, h.dot(&r.wk));
            assert_eq!(r.v, h.dot(&r.wv));
            let (q, k) = match (&r.q_rotated, &r.k_rotated) {
                (Some(q), Some(k)) => (q.clone(), k.clone()),
                _ => (r.q.clone(), r.k.clone()),
            };
            assert_eq!(r.q_rotated.is_some(), pos == PosKind::Rope);
            let raw = q.dot(&k.t()) / (r.dim as f64).sqrt();
            for (i, row) in r.scores.iter().enumerate() {
                for (j, s) in row.iter().enumerate() {
                    match s {
                        None => assert!(mask == Mask::Causal && j > i),
                        Some(s) => assert!((s - raw[[i, j]]).abs() <= 1e-13, "{pos} {i} {j}"),
                    }
                }
            }
            // RoPE preserves each row's norm within a head.
            if let Some(qr) = &r.q_rotated {
                for (a, b) in qr.rows().into_iter().zip(r.q.rows()) {
                    assert!((a.dot(&a) - b.dot(&b)).abs() <= 1e-12);
                }
            }
        }
    }
}
