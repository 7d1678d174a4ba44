//! `attnlab attend`: one forward pass of self-attention — the drawn or loaded inputs, the
//! weights of every head and the output.

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
    /// The weights of head 0 (the only head of a single-head layer).
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

    /// The weights heat map of each head.
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// A matrix as row-major nested arrays, streamed (no intermediate `Vec<Vec<f64>>`).
pub fn rows<S: serde::Serializer>(a: &Array2<f64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(a.nrows()))?;
    for row in a.rows() {
        seq.serialize_element(&Row(row))?;
    }
    seq.end()
}

struct Row<'a>(ndarray::ArrayView1<'a, f64>);

impl Serialize for Row<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

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

fn forward<T: Real>(req: &LayerInput, inputs: &Inputs) -> Result<(Array2<f64>, Vec<Array2<f64>>)> {
    let spec = req.spec(LayerKind::Attention, Readout::None);
    let f = spec.attention_fn::<T>(inputs)?;
    let h = inputs.x.mapv(T::from_f64);
    let out = f(h.view())?;
    let output = out.output.mapv(Real::to_f64);
    let weights = out.weights.iter().map(|w| w.mapv(Real::to_f64)).collect();
    Ok((output, weights))
}

/// What `attnlab attend` needs for an n × d input with k heads: the inputs, one forward pass
/// ([`super::layer_input::forward_budget`]) and the report — every head's weights and the
/// output in f64, and their text rendering (about 16 bytes per number).
pub fn budget_for(n: usize, d: usize, heads: usize) -> Budget {
    let (nn, dd, h) = (limits::u(n), limits::u(d), limits::u(heads));
    let report_values = limits::product(&[h, nn, nn]).saturating_add(limits::product(&[6, nn, dd]));
    let report = Budget::new(report_values.saturating_mul(8 + 16), 0);
    Budget::new(inputs_bytes(n, d), 0)
        .plus(forward_budget(n, d, heads))
        .plus(report)
}

/// The budget of a request, from what it declares (see [`LayerInput::declared_shape`]).
pub fn budget(req: &AttendRequest) -> Budget {
    let (n, d) = req.input.declared_shape();
    budget_for(n, d, req.input.heads)
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
    budget_for(n, d, a.heads).check(a.describe(n, d, "attend"), &ctx.limits)?;
    let inputs = spec.build()?;
    let (output, weights) = match a.dtype.require_layer()? {
        Dtype::F32 => forward::<f32>(a, &inputs)?,
        _ => forward::<f64>(a, &inputs)?,
    };
    if output
        .iter()
        .chain(weights.iter().flatten())
        .any(|v| !v.is_finite())
    {
        return Err(crate::Error::overflow(
            crate::symmetry::LAYER_OUTPUT,
            a.dtype,
        ));
    }
    let (n, dim) = inputs.x.dim();
    let heads = inputs.heads;
    let mut weights = weights.into_iter();
    let first = weights.next().unwrap_or_else(|| Array2::zeros((n, n)));
    let weights_per_head =
        (heads > 1).then(|| std::iter::once(first.clone()).chain(weights).collect());
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
        weights: first,
        weights_per_head,
        output,
    })
}
