//! `attnlab equivariance`: checks f(ΠH) = Π f(H) (or f(ΠH) = f(H) for a readout) with its
//! evidence — errors, the derived tolerance, the margin, controls and the f32/f64 diagnosis.

use serde::{Deserialize, Serialize};

use super::layer_input::{forward_budget, inputs_bytes, LayerInput};
use super::value::List;
use super::{Context, Outcome};
use crate::attention::Mask;
use crate::chart::Chart;
use crate::experiment::{self, Control, Diagnosis, PermChoice};
use crate::layer::{LayerKind, PosKind, Readout};
use crate::limits::{self, Budget};
use crate::rng::RngKind;
use crate::symmetry::{CheckReport, Permutation, Property, Verdict, Worst};
use crate::{Dtype, Error, Result};

/// The request of `attnlab equivariance`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EquivarianceRequest {
    /// The layer's inputs and set-up (the `attend` options).
    #[serde(flatten)]
    pub input: LayerInput,
    /// The layer under test.
    pub layer: LayerKind,
    /// Readout after the layer: none (check equivariance), mean or row:I (check invariance).
    pub readout: Readout,
    /// One permutation, as numpy's `X[perm]` list, e.g. `2,0,3,1`.
    pub perm: Option<List>,
    /// Every permutation of the n positions (n ≤ 8).
    pub exhaustive: bool,
    /// K random non-identity permutations (default: exhaustive for n ≤ 6, else 100 samples).
    pub samples: Option<usize>,
    /// Seed of the random permutations (default: `seed`).
    pub perm_seed: Option<u64>,
}

impl Default for EquivarianceRequest {
    fn default() -> Self {
        EquivarianceRequest {
            input: LayerInput::default(),
            layer: LayerKind::Attention,
            readout: Readout::None,
            perm: None,
            exhaustive: false,
            samples: None,
            perm_seed: None,
        }
    }
}

crate::choice! {
    /// How the permutations of a check were chosen.
    pub enum PermutationMode("permutations") {
        /// One permutation the user gave.
        Given = "given",
        /// All n! permutations.
        Exhaustive = "exhaustive",
        /// Random non-identity permutations.
        Random = "random",
    }
}

/// Which permutations a check ran over.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PermutationSet {
    /// Given, exhaustive or random.
    pub mode: PermutationMode,
    /// How many were asked for (random) or exist (exhaustive, given).
    pub count: usize,
    /// Seed of the random permutations (random only).
    pub seed: Option<u64>,
}

/// The report of `attnlab equivariance`.
#[derive(Debug, Clone, Serialize)]
pub struct EquivarianceReport {
    /// Whether the property holds within the tolerance.
    pub holds: bool,
    /// Holds or breaks.
    pub verdict: Verdict,
    /// Equivariance or invariance.
    pub property: Property,
    /// The equation checked.
    pub equation: String,
    /// max |lhs − rhs| over entries and permutations (in f64).
    pub max_abs_error: f64,
    /// Normwise relative error of the worst permutation.
    pub max_rel_error: f64,
    /// Largest distance in units in the last place of the layer's dtype.
    pub max_ulps: u64,
    /// The absolute tolerance.
    pub tolerance: f64,
    /// How the tolerance was derived, with its numbers.
    pub tolerance_derivation: String,
    /// `max_abs_error / tolerance` (< 1 holds).
    pub margin: f64,
    /// How many permutations were compared.
    pub permutations_checked: usize,
    /// Which permutations.
    pub permutations: PermutationSet,
    /// Where the largest difference occurred.
    pub worst: Worst,
    /// The layer under test.
    pub layer: LayerKind,
    /// Positional information.
    pub pos: PosKind,
    /// Attention mask.
    pub mask: Mask,
    /// Readout.
    pub readout: Readout,
    /// The layer's dtype.
    pub dtype: Dtype,
    /// Seed of the generator.
    pub seed: u64,
    /// Generator.
    pub rng: RngKind,
    /// Sequence length.
    pub n: usize,
    /// Model width.
    pub dim: usize,
    /// Heads.
    pub heads: usize,
    /// The weight form A(ΠH) = Π A(H) Πᵀ (bare attention without readout), worst head.
    pub weight_form: Option<CheckReport>,
    /// Positive (identity) and negative (broken layer) controls.
    pub controls: Vec<Control>,
    /// Round-off or structure: the same check in f32 and f64.
    pub diagnosis: Diagnosis,
    /// A caveat about what the check can show (e.g. n = 1 has only the identity).
    pub note: Option<String>,
}

impl EquivarianceReport {
    /// Holds → exit 0, breaks → exit 1.
    pub fn outcome(&self) -> Outcome {
        Outcome::from_bool(self.holds)
    }

    /// `margins`: a bar per check — the property, the weight form, the controls — of its
    /// margin (max error ÷ tolerance) on a log axis with the line at 1 (the tolerance). A margin
    /// of exactly 0 (the identity control: same input, same arithmetic) has no bar on a log
    /// axis; the category says so.
    pub fn charts(&self) -> Vec<Chart> {
        // Short category names (the renderer shortens long ones); the title says the equation.
        let mut categories = vec!["the check".to_string()];
        let mut values = vec![self.margin];
        if let Some(w) = &self.weight_form {
            categories.push("weights A".into());
            values.push(w.margin);
        }
        for c in &self.controls {
            categories.push(if c.margin == 0.0 {
                "identity (exactly 0)".into()
            } else if c.margin > 1.0 {
                "broken layer".into()
            } else {
                "control".into()
            });
            values.push(c.margin);
        }
        vec![Chart {
            name: "margins".into(),
            title: format!(
                "{} {}: margin per check ({}, positions {}, mask {}, {})",
                self.equation, self.verdict, self.layer, self.pos, self.mask, self.dtype
            ),
            kind: crate::chart::ChartKind::Bar(crate::chart::BarChart {
                categories,
                groups: vec![crate::chart::Series1 {
                    name: "margin = max error ÷ tolerance".into(),
                    values,
                }],
                y_label: "margin (log; < 1 holds)".into(),
                log_y: true,
                h_lines: vec![crate::chart::RefLine {
                    at: 1.0,
                    label: "tolerance".into(),
                }],
            }),
        }]
    }
}

/// How many permutations a request over n positions compares.
fn permutation_count(req: &EquivarianceRequest, n: usize) -> u64 {
    let factorial = (1..=limits::u(n).min(21)).fold(1u64, |p, k| p.saturating_mul(k));
    match (&req.perm, req.exhaustive, req.samples) {
        (Some(_), _, _) => 1,
        (None, true, _) => factorial,
        (None, false, Some(k)) if n <= 20 => limits::u(k).min(factorial.saturating_sub(1)),
        (None, false, Some(k)) => limits::u(k),
        (None, false, None) => match PermChoice::default_for(n, 0) {
            PermChoice::Samples { k, .. } => limits::u(k),
            _ => factorial,
        },
    }
}

/// What a check over P permutations of an n × d input with k heads needs: the inputs; the
/// forward passes — the check and the weight form (P + 1 each), the identity control (2), the
/// broken-layer control (P + 1), the other dtype's check (P + 1) and its tolerance (2), so
/// `4·(P + 1) + 4` at most — each [`super::layer_input::forward_budget`]; the permutations
/// (`P·n` indices) and the compared arrays (four n × d and four k·n² at a time).
pub fn budget_for(n: usize, d: usize, heads: usize, perms: u64) -> Budget {
    let (nn, dd, h) = (limits::u(n), limits::u(d), limits::u(heads));
    let forward = forward_budget(n, d, heads);
    let forwards = perms.saturating_add(1).saturating_mul(4).saturating_add(4);
    let compared = limits::matrices(4, nn, dd).saturating_add(limits::matrices(4 * h, nn, nn));
    let compare_ops = perms.saturating_mul(limits::product(&[10, nn, dd + h * nn]));
    Budget::new(
        inputs_bytes(n, d)
            .saturating_add(forward.bytes)
            .saturating_add(limits::product(&[perms, nn, 8]))
            .saturating_add(compared),
        forward
            .ops
            .saturating_mul(forwards)
            .saturating_add(compare_ops),
    )
}

/// The budget of a request, from what it declares (see [`LayerInput::declared_shape`]).
pub fn budget(req: &EquivarianceRequest) -> Budget {
    let (n, d) = req.input.declared_shape();
    budget_for(n, d, req.input.heads, permutation_count(req, n))
}

/// Runs the check.
///
/// # Errors
/// Bad options (see [`LayerInput::inputs`]), a permutation of the wrong length, conflicting
/// permutation choices, requests over `ctx.limits`.
pub fn run(req: &EquivarianceRequest, ctx: &Context) -> Result<EquivarianceReport> {
    let a = &req.input;
    let chosen = req.perm.is_some() as u8 + req.exhaustive as u8 + req.samples.is_some() as u8;
    if chosen > 1 {
        return Err(Error::invalid(
            "permutation choice",
            "several given",
            "at most one of --perm, --exhaustive, --samples",
        ));
    }
    let spec = a.prepare(ctx)?;
    let (n, d) = spec.shape()?;
    let count = permutation_count(req, n);
    budget_for(n, d, a.heads, count).check(
        format!(
            "{} over {count} permutation{}",
            a.describe(n, d, "an equivariance check"),
            if count == 1 { "" } else { "s" }
        ),
        &ctx.limits,
    )?;
    let inputs = spec.build()?;
    let n = inputs.x.nrows();
    let spec = a.spec(req.layer, req.readout);
    let perm_seed = req.perm_seed.unwrap_or(a.seed);
    let choice = match (&req.perm, req.exhaustive, req.samples) {
        (Some(p), _, _) => PermChoice::Given(Permutation::parse(&p.joined(), n)?),
        (None, true, _) => PermChoice::Exhaustive,
        (None, false, Some(k)) => PermChoice::Samples { k, seed: perm_seed },
        (None, false, None) => PermChoice::default_for(n, perm_seed),
    };
    let perms = choice.permutations(n)?;
    ctx.check_cancelled("equivariance check")?;
    let result = experiment::symmetry_with(&spec, &inputs, &perms, a.dtype, &|| {
        ctx.check_cancelled("equivariance check")
    })?;
    let note = perms
        .iter()
        .all(Permutation::is_identity)
        .then(|| crate::present::prose::only_identity(n));
    let permutations = match &choice {
        PermChoice::Given(_) => PermutationSet {
            mode: PermutationMode::Given,
            count: 1,
            seed: None,
        },
        PermChoice::Exhaustive => PermutationSet {
            mode: PermutationMode::Exhaustive,
            count: perms.len(),
            seed: None,
        },
        PermChoice::Samples { k, seed } => PermutationSet {
            mode: PermutationMode::Random,
            count: *k,
            seed: Some(*seed),
        },
    };
    let r = result.report;
    Ok(EquivarianceReport {
        holds: r.holds,
        verdict: r.verdict,
        property: r.property,
        equation: r.equation,
        max_abs_error: r.max_abs_error,
        max_rel_error: r.max_rel_error,
        max_ulps: r.max_ulps,
        tolerance: r.tolerance,
        tolerance_derivation: r.tolerance_detail.derivation,
        margin: r.margin,
        permutations_checked: r.permutations_checked,
        permutations,
        worst: r.worst,
        layer: req.layer,
        pos: a.pos,
        mask: a.mask,
        readout: req.readout,
        dtype: a.dtype,
        seed: a.seed,
        rng: a.rng,
        n,
        dim: inputs.x.ncols(),
        heads: inputs.heads,
        weight_form: result.weight_form,
        controls: result.controls,
        diagnosis: result.diagnosis,
        note,
    })
}
