//! Checks a layer the caller supplies as a function — Python's
//! `attnlab.check_equivariance(f, X)` — with exactly the evidence `attnlab equivariance` gives a
//! built-in layer: the same checkers ([`crate::symmetry`]), the same tolerance derivation
//! `k·eps·(n+d)·max|f(X)|`, worst case and margin, the same positive control (the identity
//! permutation must give exactly 0), a negative control (the same function on `X + P`, `P` the
//! index signal p·1.0 — the CLI's broken layer when `f` is the CLI's attention) and the same
//! f32/f64 round-off-or-structure classification ([`Diagnosis::classify`]).
//!
//! The layer is given in both precisions ([`UserLayer`]): the check runs in the dtype of `X`, and
//! the diagnosis evaluates the same function on the other precision's copy of `X`. When that
//! second evaluation fails (a function that only accepts one dtype), the report says why
//! instead of failing the whole check.
//!
//! ```
//! use attnlab_core::api::check::{self, Input, LayerCheckOptions, UserLayer};
//! use attnlab_core::api::Context;
//! use ndarray::{array, Array2, ArrayView2};
//! // A row-wise map is permutation equivariant: f(X) = tanh(X)·2.
//! let f64_layer = |x: ArrayView2<f64>| Ok(x.mapv(|v| 2.0 * v.tanh()));
//! let f32_layer = |x: ArrayView2<f32>| Ok(x.mapv(|v| 2.0 * v.tanh()));
//! let layer = UserLayer { f32: &f32_layer, f64: &f64_layer };
//! let x: Array2<f64> = array![[0.1, 0.2], [0.3, -0.4], [1.5, 0.6]];
//! let r = check::run(&layer, Input::F64(x.view()), &LayerCheckOptions::default(), &Context::default()).unwrap();
//! assert!(r.holds && r.max_abs_error == 0.0 && r.permutations_checked == 6);
//! // The negative control, f(X + P), broke: the check can see a positional signal.
//! assert!(r.controls.iter().all(|c| c.ok));
//! ```

use ndarray::{s, Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use super::{Context, Outcome};
use crate::attention::Mask;
use crate::chart::{Chart, ChartKind, ColourScale, Heatmap};
use crate::experiment::PermutationSet;
use crate::experiment::{self, CheckSummary, Control, Diagnosis, PermChoice, MAX_SAMPLES};
use crate::layer::Readout;
use crate::position::additive::index_signal;
use crate::symmetry::{CheckReport, Forward, Perms, Permutation};
use crate::{Dtype, Error, Real, Result};

/// A layer as a function of its input in one precision.
pub type LayerFn<'a, T> = dyn Fn(ArrayView2<T>) -> Result<Array2<T>> + 'a;

/// A layer as a function of its input and the position ids of its rows (a rotary layer:
/// `f(X, pos)`); the check permutes both.
pub type PosLayerFn<'a, T> = dyn Fn(ArrayView2<T>, &[i64]) -> Result<Array2<T>> + 'a;

/// A caller's layer that receives the position ids of its rows, in both precisions, with the
/// ids of `X`'s rows: the check calls `f(ΠX, Π pos)` — the positions move with the tokens.
pub struct PositionedLayer<'a> {
    /// The layer on f32 inputs.
    pub f32: &'a PosLayerFn<'a, f32>,
    /// The layer on f64 inputs.
    pub f64: &'a PosLayerFn<'a, f64>,
    /// The position id of each row of X.
    pub positions: &'a [i64],
}

/// One precision of a caller's layer: plain `f(X)`, or `f(X, pos)` with the ids of X's rows.
#[derive(Clone, Copy)]
enum Calls<'a, T> {
    Plain(&'a LayerFn<'a, T>),
    Positioned(&'a PosLayerFn<'a, T>, &'a [i64]),
}

impl<T: Real> Calls<'_, T> {
    /// The layer on rows holding the tokens `at` of X (positions `pos[at[i]]`).
    fn call(&self, h: ArrayView2<T>, at: &[usize]) -> Result<Array2<T>> {
        match self {
            Calls::Plain(f) => f(h),
            Calls::Positioned(f, pos) => {
                let moved: Vec<i64> = at.iter().map(|&i| pos[i]).collect();
                f(h, &moved)
            }
        }
    }
}

/// The layer under test, supplied by the caller: one function, callable on f32 and on f64
/// inputs. Each must return an (n, d′) array for an (n, d) input; errors are passed through
/// (with the stage of the check they happened in as context).
pub struct UserLayer<'a> {
    /// The layer on f32 inputs.
    pub f32: &'a LayerFn<'a, f32>,
    /// The layer on f64 inputs.
    pub f64: &'a LayerFn<'a, f64>,
}

/// The input `X` (n × d), in the precision the layer is checked in.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A float32 input: the check runs in f32, the diagnosis evaluates the layer on the
    /// (exact) float64 copy.
    F32(ArrayView2<'a, f32>),
    /// A float64 input: the check runs in f64, the diagnosis evaluates the layer on the
    /// float32 copy (rounded to nearest).
    F64(ArrayView2<'a, f64>),
}

impl Input<'_> {
    /// (n, d).
    pub fn dim(&self) -> (usize, usize) {
        match self {
            Input::F32(x) => x.dim(),
            Input::F64(x) => x.dim(),
        }
    }

    /// The dtype of `X`.
    pub fn dtype(&self) -> Dtype {
        match self {
            Input::F32(_) => Dtype::F32,
            Input::F64(_) => Dtype::F64,
        }
    }
}

/// What to check and over which permutations (Python's keyword arguments).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LayerCheckOptions {
    /// The permutations to check, each as numpy's `X[perm]` index list (length n; length t
    /// for the causal check).
    pub perms: Option<Vec<Vec<usize>>>,
    /// K random non-identity permutations (default: every permutation for up to 6 positions,
    /// else 100 random ones, as `attnlab equivariance`).
    pub samples: Option<usize>,
    /// Every permutation (at most 8 positions).
    pub exhaustive: bool,
    /// Seed of the random permutations (the CLI's `--perm-seed`, which defaults to `--seed`).
    pub seed: u64,
    /// Read the output out before comparing: `mean` or `row:I` check invariance
    /// `R(f(ΠX)) = R(f(X))` instead of equivariance.
    pub readout: Readout,
    /// `causal` checks what a causal layer guarantees instead: permuting the first t rows
    /// leaves the outputs at positions ≥ t unchanged (`f(Π_<t X)[t..] = f(X)[t..]`).
    pub mask: Mask,
    /// The prefix length t of the causal check (default n − 1, the longest prefix that leaves
    /// an output to compare).
    pub prefix: Option<usize>,
}

/// The difference `lhs − rhs` of the worst permutation, entry by entry (the heat map): all of
/// it, or a window of at most [`DifferenceMap::WINDOW`] rows and columns around the worst entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DifferenceMap {
    /// The permutation.
    pub perm: Vec<usize>,
    /// Output position of the first row shown (≥ t for the causal check).
    pub first_row: usize,
    /// Output column of the first column shown.
    pub first_col: usize,
    /// `lhs − rhs` in f64, rows × columns of the window.
    pub values: Vec<Vec<f64>>,
}

impl DifferenceMap {
    /// The most rows and columns kept.
    pub const WINDOW: usize = 32;
}

/// The start of a window of at most `DifferenceMap::WINDOW` of `len` indices around `at`.
fn window_start(at: usize, len: usize) -> usize {
    let w = DifferenceMap::WINDOW;
    if len <= w {
        0
    } else {
        at.saturating_sub(w / 2).min(len - w)
    }
}

/// The report of a check of a caller's layer: the same [`CheckSummary`] as
/// [`super::equivariance::EquivarianceReport`], and the caller's set-up.
#[derive(Debug, Clone, Serialize)]
pub struct LayerCheckReport {
    /// The verdict and its evidence (the fields every check report shares).
    #[serde(flatten)]
    pub check: CheckSummary,
    /// `causal` for the prefix check, else `none`.
    pub mask: Mask,
    /// Readout.
    pub readout: Readout,
    /// The dtype of `X`, which the check runs in.
    pub dtype: Dtype,
    /// Sequence length n (rows of X).
    pub n: usize,
    /// Input width d (columns of X).
    pub dim: usize,
    /// Output width d′ (columns of f(X)).
    pub output_dim: usize,
    /// The prefix length t of the causal check.
    pub prefix: Option<usize>,
    /// Positive (identity) and negative (f on X + index signal) controls.
    pub controls: Vec<Control>,
    /// Round-off or structure: the same check on the other precision's copy of X.
    pub diagnosis: Option<Diagnosis>,
    /// Why there is no diagnosis (the layer failed on the other precision).
    pub diagnosis_unavailable: Option<String>,
    /// Caveats about what the check can show.
    pub note: Option<String>,
    /// The difference of the worst permutation.
    pub worst_difference: DifferenceMap,
    /// The causal check's second half (`mask = causal`): outputs before a cut do not move when
    /// the tokens from the cut on change (an unmasked or anti-causal layer breaks it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub future_independence: Option<CheckReport>,
    /// An unmasked check broke and the outputs never depend on later positions (the
    /// dependence pattern is lower-triangular): the layer looks causal; check it with
    /// `mask = causal`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub looks_causal: bool,
}

impl std::ops::Deref for LayerCheckReport {
    type Target = CheckSummary;
    /// The report reads as its check summary (`report.holds`, `report.margin`).
    fn deref(&self) -> &CheckSummary {
        &self.check
    }
}

impl LayerCheckReport {
    /// Holds → 0, breaks → 1.
    pub fn outcome(&self) -> Outcome {
        Outcome::from_bool(self.holds)
    }

    /// The heat map of the worst permutation's difference, coloured relative to the
    /// tolerance (cells beyond ± the tolerance saturate unless the error is larger).
    pub fn charts(&self) -> Vec<Chart> {
        let d = &self.worst_difference;
        let rows = d.values.len();
        let max = self.max_abs_error.max(self.tolerance);
        let cols = d.values.first().map_or(0, Vec::len);
        let row_labels = if self.readout == Readout::None {
            (0..rows).map(|i| (d.first_row + i).to_string()).collect()
        } else {
            vec![self.readout.name()]
        };
        let col_labels = (0..cols).map(|j| (d.first_col + j).to_string()).collect();
        vec![Chart {
            name: "difference".into(),
            title: crate::present::prose::difference_title(self.property, self.dtype),
            kind: ChartKind::Heatmap(Heatmap {
                values: d.values.clone(),
                row_labels,
                col_labels,
                x_label: "output column".into(),
                y_label: "output position".into(),
                scale: ColourScale::Diverging { max },
                scale_note: crate::present::prose::difference_scale_note(max),
                highlight_rows: Vec::new(),
            }),
        }]
    }
}

/// The property a check compares, with where its permutations act.
#[derive(Debug, Clone, Copy)]
struct Target {
    readout: Readout,
    prefix: Option<usize>,
}

impl Target {
    /// `lhs − rhs` for one permutation (`perm` of all n positions, as in [`crate::symmetry::Worst`]), around
    /// the output entry `worst` (row, column).
    fn difference<T: Real>(
        self,
        f: Calls<'_, T>,
        x: ArrayView2<T>,
        perm: &[usize],
        worst: (usize, usize),
    ) -> Result<(DifferenceMap, usize)> {
        let p = Permutation::new(perm.to_vec())?;
        let id: Vec<usize> = (0..x.nrows()).collect();
        let out = f.call(x, &id)?;
        let output_dim = out.ncols();
        let base = self.readout.apply(out)?;
        let moved = self
            .readout
            .apply(f.call(p.apply_rows(x)?.view(), p.as_slice())?)?;
        let (lhs, rhs, first_row) = match (self.prefix, self.readout) {
            (Some(t), _) => (
                moved.slice(s![t.., ..]).to_owned(),
                base.slice(s![t.., ..]).to_owned(),
                t,
            ),
            (None, Readout::None) => (moved, p.apply_rows(base.view())?, 0),
            (None, _) => (moved, base, 0),
        };
        let diff = crate::symmetry::compare(lhs.view(), rhs.view())?.difference;
        let (r0, c0) = (
            window_start(worst.0.saturating_sub(first_row), diff.nrows()),
            window_start(worst.1, diff.ncols()),
        );
        let w = DifferenceMap::WINDOW;
        let shown = diff.slice(s![
            r0..(r0 + w).min(diff.nrows()),
            c0..(c0 + w).min(diff.ncols())
        ]);
        let map = DifferenceMap {
            perm: perm.to_vec(),
            first_row: first_row + r0,
            first_col: c0,
            values: shown.rows().into_iter().map(|r| r.to_vec()).collect(),
        };
        Ok((map, output_dim))
    }
}

/// Rejects inputs the check cannot use: empty, or with non-finite entries.
fn validate<T: Real>(x: ArrayView2<T>) -> Result<()> {
    let (n, d) = x.dim();
    if n == 0 || d == 0 {
        return Err(Error::shape(
            "X",
            "an (n, d) array with n ≥ 1 rows and d ≥ 1 columns",
            format!("({n}, {d})"),
        ));
    }
    crate::numeric::require_finite("X", x)
}

/// The permutations of `m` positions (m = n, or t for the causal check) the options ask for,
/// and how they were chosen.
fn permutations(opts: &LayerCheckOptions, m: usize) -> Result<(Vec<Permutation>, PermutationSet)> {
    PermChoice::at_most_one(
        opts.perms.is_some(),
        opts.exhaustive,
        opts.samples.is_some(),
        "perms, samples, exhaustive",
    )?;
    let what = if opts.mask == Mask::Causal {
        format!("the {m} prefix positions")
    } else {
        format!("the {m} positions")
    };
    if let Some(list) = &opts.perms {
        if list.is_empty() {
            return Err(Error::invalid(
                "perms",
                "an empty list",
                "at least one permutation",
            ));
        }
        let perms = list
            .iter()
            .map(|p| {
                if p.len() != m {
                    return Err(Error::invalid(
                        "permutation",
                        crate::present::prose::index_list(p),
                        format!("a permutation of {what}, each of 0..{} once", m - 1),
                    ));
                }
                Permutation::new(p.clone())
            })
            .collect::<Result<Vec<_>>>()?;
        let choice = PermChoice::Given(perms);
        return Ok((choice.permutations(m)?, choice.set(0)));
    }
    if opts.exhaustive && m > 8 {
        return Err(Error::invalid(
            "exhaustive",
            format!("{m} positions ({what})"),
            "at most 8 positions (8! = 40320 permutations); give samples=K instead",
        ));
    }
    if let Some(k) = opts.samples {
        if k == 0 || k > MAX_SAMPLES {
            return Err(Error::invalid("samples", k, format!("1..={MAX_SAMPLES}")));
        }
        if m < 2 {
            return Err(Error::invalid(
                "samples",
                k,
                "no random permutations: only the identity permutes 1 position",
            ));
        }
    }
    let choice = PermChoice::from_options(None, opts.exhaustive, opts.samples, opts.seed, m);
    let perms = choice.permutations(m)?;
    let set = choice.set(perms.len());
    Ok((perms, set))
}

/// The check in the dtype `T` of `X` and the diagnosis in the other precision `U`.
struct Parts {
    checked: experiment::Checked,
    output_dim: usize,
    difference: DifferenceMap,
}

/// A caller's layer as the runner's forward: read out by `readout`, on `X + add` for the
/// negative control.
fn forward_of<'a, T: Real>(
    f: Calls<'a, T>,
    readout: Readout,
    add: Option<Array2<T>>,
) -> experiment::ForwardAt<'a, T> {
    Box::new(
        move |h: ArrayView2<T>, at: &[usize], out: &mut Forward<T>| {
            let moved;
            let h = match &add {
                Some(p) => {
                    if h.dim() != p.dim() {
                        return Err(Error::shape(
                            "index signal",
                            format!("{}×{}", p.nrows(), p.ncols()),
                            format!("{}×{}", h.nrows(), h.ncols()),
                        ));
                    }
                    moved = &h + p;
                    moved.view()
                }
                None => h,
            };
            out.output = readout.apply(f.call(h, at)?)?;
            Ok(())
        },
    )
}

fn run_in<T: Real, U: Real>(
    f: Calls<'_, T>,
    g: Calls<'_, U>,
    x: ArrayView2<T>,
    target: Target,
    perms: &[Permutation],
    m: usize,
    ctx: &Context,
) -> Result<Parts> {
    let (n, d) = x.dim();
    let subject = experiment::Subject {
        check: forward_of(f, target.readout, None),
        broken: (m >= 2).then(|| experiment::Broken {
            name: "broken layer (f + index signal p·1.0)".into(),
            stage: "the negative control f(X + P), P = index signal p·1.0".into(),
            forward: forward_of(
                f,
                target.readout,
                Some(index_signal(n, d, 1.0).mapv(T::from_f64)),
            ),
            rows: None,
        }),
        other_rows: None,
        other: forward_of(g, target.readout, None),
        arithmetic: experiment::Arithmetic::Foreign,
    };
    let xu = x.mapv(|v| U::from_f64(v.to_f64()));
    let full: Vec<Permutation> = match target.prefix {
        Some(t) => perms
            .iter()
            .map(|p| Permutation::new(p.as_slice().iter().copied().chain(t..n).collect()))
            .collect::<Result<_>>()?,
        None => perms.to_vec(),
    };
    let goal = match (target.prefix, target.readout) {
        (Some(t), _) => experiment::Target::Causal { t },
        (None, Readout::None) => experiment::Target::Equivariance,
        (None, _) => experiment::Target::Invariance,
    };
    let cancel = || ctx.check_cancelled("layer check");
    let progress = |stage: &str, done: f64| (ctx.progress)(stage, done);
    let watch = experiment::Watch {
        cancel: &cancel,
        progress: &progress,
    };
    let checked = experiment::run_check(subject, x, xu.view(), Perms::List(&full), goal, &watch)?;
    ctx.check_cancelled("layer check")?;
    let worst = &checked.report.worst;
    let (difference, output_dim) = target
        .difference(f, x, &worst.perm, (worst.row, worst.col))
        .map_err(|e| e.context("recomputing the worst permutation's difference"))?;
    Ok(Parts {
        checked,
        output_dim,
        difference,
    })
}

/// Checks the caller's layer on `x` (see the module documentation).
///
/// # Errors
/// An empty or non-finite `X`; conflicting or invalid permutation choices; a readout with the
/// causal check, or a prefix without it; and every error of the layer itself in the check or
/// the controls (with the stage as context). A failure of the layer on the other precision
/// is reported in [`LayerCheckReport::diagnosis_unavailable`] instead.
pub fn run(
    layer: &UserLayer<'_>,
    x: Input<'_>,
    opts: &LayerCheckOptions,
    ctx: &Context,
) -> Result<LayerCheckReport> {
    run_calls(
        Calls::Plain(layer.f32),
        Calls::Plain(layer.f64),
        x,
        opts,
        ctx,
    )
}

/// [`run`] for a layer that receives the position ids of its rows (`f(X, pos)`): every
/// permutation moves the positions with the tokens, `f(ΠX, Π pos) = Π f(X, pos)` — what a
/// rotary layer satisfies, since its scores depend only on (token, position) pairs.
///
/// # Errors
/// As [`run`]; `positions` of another length than X's rows.
pub fn run_positioned(
    layer: &PositionedLayer<'_>,
    x: Input<'_>,
    opts: &LayerCheckOptions,
    ctx: &Context,
) -> Result<LayerCheckReport> {
    let n = x.dim().0;
    if layer.positions.len() != n {
        return Err(Error::shape(
            "positions",
            format!("{n} ids (one per row of X)"),
            format!("{} ids", layer.positions.len()),
        ));
    }
    run_calls(
        Calls::Positioned(layer.f32, layer.positions),
        Calls::Positioned(layer.f64, layer.positions),
        x,
        opts,
        ctx,
    )
}

fn run_calls(
    f32s: Calls<'_, f32>,
    f64s: Calls<'_, f64>,
    x: Input<'_>,
    opts: &LayerCheckOptions,
    ctx: &Context,
) -> Result<LayerCheckReport> {
    let (n, d) = x.dim();
    match x {
        Input::F32(v) => validate(v)?,
        Input::F64(v) => validate(v)?,
    }
    let prefix =
        match (opts.mask, opts.prefix) {
            (Mask::Causal, _) if opts.readout != Readout::None => return Err(Error::invalid(
                "readout",
                opts.readout.name(),
                "none with mask='causal' (the causal check compares the outputs at positions ≥ t)",
            )),
            (Mask::Causal, Some(t)) if t < 2 || t >= n => {
                return Err(Error::invalid(
                    "prefix",
                    t,
                    format!(
                        "2..{} (at least two rows to permute and one output after them; n = {n})",
                        n.saturating_sub(1)
                    ),
                ))
            }
            (Mask::Causal, Some(t)) => Some(t),
            (Mask::Causal, None) if n < 3 => {
                return Err(Error::invalid(
                    "X rows for mask='causal'",
                    n,
                    "at least 3 (two rows to permute and one output after them)",
                ))
            }
            (Mask::Causal, None) => Some(n - 1),
            (Mask::None, Some(t)) => {
                return Err(Error::invalid(
                    "prefix",
                    t,
                    "no prefix without mask='causal' (it is the causal check's t)",
                ))
            }
            (Mask::None, None) => None,
        };
    if let Readout::Row(i) = opts.readout {
        if i >= n {
            return Err(Error::invalid(
                "readout row",
                i,
                format!("0..{n} (the rows of X)"),
            ));
        }
    }
    let m = prefix.unwrap_or(n);
    let (perms, permutations) = permutations(opts, m)?;
    let target = Target {
        readout: opts.readout,
        prefix,
    };
    let parts = match x {
        Input::F32(v) => run_in(f32s, f64s, v, target, &perms, m, ctx)?,
        Input::F64(v) => run_in(f64s, f32s, v, target, &perms, m, ctx)?,
    };
    let c = parts.checked;
    let only_identity = perms.iter().all(Permutation::is_identity);
    // An unmasked check that breaks, on a layer whose outputs never depend on later positions:
    // it looks causal.
    let looks_causal = prefix.is_none()
        && c.report.verdict == crate::symmetry::Verdict::Breaks
        && c.future.as_ref().is_some_and(|f| f.holds);
    let note = if only_identity {
        Some(crate::present::prose::only_identity(m))
    } else if looks_causal {
        Some(crate::present::prose::looks_causal())
    } else if c.negative_held {
        Some(crate::present::prose::negative_control_held())
    } else {
        None
    };
    let (diagnosis, diagnosis_unavailable) = match c.diagnosis {
        Ok(d) => (Some(d), None),
        Err(e) => (
            None,
            Some(crate::present::prose::diagnosis_unavailable(
                match x.dtype() {
                    Dtype::F32 => Dtype::F64,
                    _ => Dtype::F32,
                },
                &e,
            )),
        ),
    };
    let mut check = CheckSummary::new(c.report, permutations);
    let future_independence = if prefix.is_some() { c.future } else { None };
    if let Some(fut) = &future_independence {
        // The causal check holds when both halves do.
        if check.verdict != crate::symmetry::Verdict::Undecided && !fut.holds {
            check.holds = false;
            check.verdict = crate::symmetry::Verdict::Breaks;
        }
    }
    Ok(LayerCheckReport {
        check,
        mask: opts.mask,
        readout: opts.readout,
        dtype: x.dtype(),
        n,
        dim: d,
        output_dim: parts.output_dim,
        prefix,
        controls: c.controls,
        diagnosis,
        diagnosis_unavailable,
        note,
        worst_difference: parts.difference,
        future_independence,
        looks_causal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::equivariance::{self, EquivarianceRequest};
    use crate::api::layer_input::LayerInput;
    use crate::layer::{InputSpec, LayerSpec, PosKind};
    use crate::rng::RngKind;
    use crate::ErrorKind;

    /// The CLI's layer for `LayerInput` `a`, as a caller's function in both precisions, run
    /// through [`run`], next to `attnlab equivariance` on the same request.
    fn both(a: LayerInput, opts: LayerCheckOptions) -> (serde_json::Value, serde_json::Value) {
        let req = EquivarianceRequest {
            input: a.clone(),
            ..Default::default()
        };
        let cli = equivariance::run(&req, &Context::default()).unwrap();
        let inputs = a.inputs(&Context::default()).unwrap();
        let spec = a.spec(crate::layer::LayerKind::Attention, Readout::None);
        let f64_layer = spec.build::<f64>(&inputs).unwrap();
        let f32_layer = spec.build::<f32>(&inputs).unwrap();
        let layer = UserLayer {
            f32: &*f32_layer,
            f64: &*f64_layer,
        };
        let x32 = inputs.x.mapv(|v| v as f32);
        let x = match a.dtype {
            Dtype::F32 => Input::F32(x32.view()),
            _ => Input::F64(inputs.x.view()),
        };
        let mine = checked(&layer, x, &opts);
        (
            serde_json::to_value(&cli).unwrap(),
            serde_json::to_value(&mine).unwrap(),
        )
    }

    const SHARED: &[&str] = &[
        "holds",
        "verdict",
        "property",
        "equation",
        "max_abs_error",
        "max_rel_error",
        "max_ulps",
        "tolerance",
        "tolerance_derivation",
        "margin",
        "permutations_checked",
        "permutations",
        "worst",
        "mask",
        "readout",
        "dtype",
        "n",
        "dim",
    ];

    #[test]
    fn the_course_layer_as_a_function_gives_the_cli_report() {
        for (pos, dtype) in [
            (PosKind::None, Dtype::F64),
            (PosKind::Index, Dtype::F64),
            (PosKind::None, Dtype::F32),
        ] {
            let a = LayerInput {
                rng: RngKind::Numpy,
                pos,
                dtype,
                ..LayerInput::default()
            };
            let (cli, mine) = both(a, LayerCheckOptions::default());
            for k in SHARED {
                assert_eq!(cli[k], mine[k], "{pos:?} {dtype:?}: {k}");
            }
            assert_eq!(cli["controls"][0], mine["controls"][0]);
            // The CLI's broken layer is attention + p·1.0; f(X + P) is that same layer when f
            // is the bare attention (with --pos index, f already adds p·0.1 of its own). The
            // CLI runs it on the fused kernel, f on the weights path: the same structural
            // error, rounded differently — within a few eps relative (the error is ≫ round-off).
            if pos == PosKind::None {
                assert_eq!(cli["controls"][1]["ok"], mine["controls"][1]["ok"]);
                let rel = 64.0 * dtype.eps();
                for k in ["max_abs_error", "margin"] {
                    let (c, m) = (
                        cli["controls"][1][k].as_f64().unwrap(),
                        mine["controls"][1][k].as_f64().unwrap(),
                    );
                    assert!((c - m).abs() <= rel * c.abs(), "{k}: {c} vs {m}");
                }
            }
            // The diagnosis: the check's own dtype is the same computation (identical error);
            // the other dtype runs the fused kernel in the CLI (issue 12), so only its
            // conclusion is comparable.
            assert_eq!(
                cli["diagnosis"]["conclusion"],
                mine["diagnosis"]["conclusion"]
            );
            let own = if dtype == Dtype::F64 {
                "f64_error"
            } else {
                "f32_error"
            };
            assert_eq!(cli["diagnosis"][own], mine["diagnosis"][own]);
        }
    }

    #[test]
    fn samples_and_seed_draw_the_cli_permutations() {
        let a = LayerInput {
            n: Some(9),
            seed: 5,
            ..LayerInput::default()
        };
        let (cli, mine) = both(
            a,
            LayerCheckOptions {
                seed: 5,
                ..Default::default()
            },
        );
        for k in SHARED {
            assert_eq!(cli[k], mine[k], "{k}");
        }
    }

    fn course() -> crate::layer::Inputs {
        InputSpec {
            rng: RngKind::Numpy,
            n: Some(5),
            ..InputSpec::default()
        }
        .build()
        .unwrap()
    }

    #[test]
    fn causal_attention_is_prefix_invariant_and_bare_attention_is_too() {
        let inputs = course();
        let spec = LayerSpec {
            mask: Mask::Causal,
            ..LayerSpec::default()
        };
        let f64_layer = spec.build::<f64>(&inputs).unwrap();
        let f32_layer = spec.build::<f32>(&inputs).unwrap();
        let layer = UserLayer {
            f32: &*f32_layer,
            f64: &*f64_layer,
        };
        let opts = LayerCheckOptions {
            mask: Mask::Causal,
            ..Default::default()
        };
        let r = checked(&layer, Input::F64(inputs.x.view()), &opts);
        assert!(r.holds, "{r:?}");
        assert_eq!(r.prefix, Some(4));
        assert_eq!(r.permutations_checked, 24);
        assert_eq!(r.worst_difference.first_row, 4);
        assert_eq!(r.worst_difference.values.len(), 1);
        assert!(r.controls.iter().all(|c| c.ok), "{:?}", r.controls);
        // Equivariance fails for the causal layer: the mask sees the order.
        let eq = checked(&layer, Input::F64(inputs.x.view()), &Default::default());
        assert!(!eq.holds);
        assert_eq!(
            eq.diagnosis.unwrap().conclusion,
            experiment::Conclusion::Structural
        );
    }

    #[test]
    fn a_failing_second_precision_leaves_the_check_and_says_why() {
        let inputs = course();
        let spec = LayerSpec::default();
        let f64_layer = spec.build::<f64>(&inputs).unwrap();
        let refuse = |_: ArrayView2<f32>| Err(Error::layer("f raised TypeError: no f32"));
        let layer = UserLayer {
            f32: &refuse,
            f64: &*f64_layer,
        };
        let r = checked(&layer, Input::F64(inputs.x.view()), &Default::default());
        assert!(r.holds);
        assert!(r.diagnosis.is_none());
        let why = r.diagnosis_unavailable.unwrap();
        assert!(why.contains("float32") && why.contains("no f32"), "{why}");
    }

    #[test]
    fn layer_errors_name_the_stage_and_bad_options_are_refused() {
        let x = Array2::<f64>::ones((3, 2));
        let calls = std::cell::Cell::new(0);
        // Fails on its third call: inside the main check.
        let flaky = |h: ArrayView2<f64>| {
            calls.set(calls.get() + 1);
            if calls.get() == 3 {
                Err(Error::layer("f raised ValueError: third call"))
            } else {
                Ok(h.to_owned())
            }
        };
        let f32_layer = |h: ArrayView2<f32>| Ok(h.to_owned());
        let layer = UserLayer {
            f32: &f32_layer,
            f64: &flaky,
        };
        let ctx = Context::default();
        let e = run(&layer, Input::F64(x.view()), &Default::default(), &ctx).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Layer);
        assert!(
            e.message()
                .starts_with("in the check f(ΠH) = Π f(H): f raised"),
            "{e}"
        );
        let ok = |h: ArrayView2<f64>| Ok(h.to_owned());
        let layer = UserLayer {
            f32: &f32_layer,
            f64: &ok,
        };
        let bad = |opts: LayerCheckOptions, needle: &str| {
            let e = run(&layer, Input::F64(x.view()), &opts, &ctx).unwrap_err();
            assert!(e.to_string().contains(needle), "{e}");
        };
        bad(
            LayerCheckOptions {
                exhaustive: true,
                samples: Some(3),
                ..Default::default()
            },
            "at most one of perms, samples, exhaustive",
        );
        bad(
            LayerCheckOptions {
                perms: Some(vec![vec![0, 1]]),
                ..Default::default()
            },
            "a permutation of the 3 positions",
        );
        bad(
            LayerCheckOptions {
                perms: Some(vec![vec![0, 0, 1]]),
                ..Default::default()
            },
            "each of 0..2 exactly once",
        );
        bad(
            LayerCheckOptions {
                prefix: Some(2),
                ..Default::default()
            },
            "without mask='causal'",
        );
        bad(
            LayerCheckOptions {
                mask: Mask::Causal,
                readout: Readout::Mean,
                ..Default::default()
            },
            "none with mask='causal'",
        );
        let mut nan = x.clone();
        nan[[1, 0]] = f64::NAN;
        let e = run(&layer, Input::F64(nan.view()), &Default::default(), &ctx).unwrap_err();
        assert!(e.to_string().contains("X[1, 0]"), "{e}");
    }

    #[test]
    fn a_layer_that_centres_rows_hides_the_index_signal_and_the_report_says_so() {
        // f(H) = H − row mean: the index signal adds p to every entry of row p, which the
        // centring removes, so the negative control cannot break.
        fn centre<T: Real>(h: ArrayView2<T>) -> Result<Array2<T>> {
            let mut out = h.to_owned();
            for mut row in out.rows_mut() {
                let m = row.iter().fold(T::zero(), |a, &b| a + b) / T::from_f64(row.len() as f64);
                row.mapv_inplace(|v| v - m);
            }
            Ok(out)
        }
        let layer = UserLayer {
            f32: &centre::<f32>,
            f64: &centre::<f64>,
        };
        let x = ndarray::array![[0.5, 1.0, -2.0], [3.0, 0.25, 1.0], [-1.0, 2.0, 0.0]];
        let r = checked(&layer, Input::F64(x.view()), &Default::default());
        assert!(r.holds);
        assert!(!r.controls[1].ok);
        assert!(r.note.unwrap().contains("negative control"));
    }

    /// [`run`] in the default context, which must succeed.
    fn checked(layer: &UserLayer<'_>, x: Input<'_>, opts: &LayerCheckOptions) -> LayerCheckReport {
        run(layer, x, opts, &Context::default()).unwrap()
    }

    fn both_precisions<'a>(
        f32_layer: &'a LayerFn<'a, f32>,
        f64_layer: &'a LayerFn<'a, f64>,
    ) -> UserLayer<'a> {
        UserLayer {
            f32: f32_layer,
            f64: f64_layer,
        }
    }

    /// A layer computing in float32 whatever its input (transformers' eager softmax with
    /// `dtype=torch.float32`): in f64 its error is float32 round-off, which does not fall with
    /// the input's precision. Reported as lower precision, holding to float32's tolerance.
    #[test]
    fn a_layer_computing_in_f32_holds_to_float32_precision_not_structural() {
        let inputs = InputSpec {
            rng: RngKind::Numpy,
            n: Some(6),
            dim: Some(8),
            ..InputSpec::default()
        }
        .build()
        .unwrap();
        let spec = LayerSpec::default();
        let f32_layer = spec.build::<f32>(&inputs).unwrap();
        let inner = &f32_layer;
        let via32 =
            move |x: ArrayView2<f64>| Ok(inner(x.mapv(|v| v as f32).view())?.mapv(f64::from));
        let layer = both_precisions(&**inner, &via32);
        let r = checked(&layer, Input::F64(inputs.x.view()), &Default::default());
        let d = r.diagnosis.clone().unwrap();
        assert_eq!(
            d.conclusion,
            experiment::Conclusion::LowerPrecision,
            "{d:?}"
        );
        assert_eq!(d.internal, Some(Dtype::F32));
        // The error is f32 round-off: above the f64 tolerance, within float32's.
        // The tolerance was re-sized from eps64 to eps32 (same n + d and scale).
        let tol64 = r.tolerance * f64::EPSILON / f64::from(f32::EPSILON);
        assert!(
            r.max_abs_error > 1e3 * tol64,
            "{} vs {tol64}",
            r.max_abs_error
        );
        assert!(r.holds && r.margin < 1.0, "{r:?}");
        // The same layer in f32: its own precision; the f64 copy does not help — lower
        // precision again, never "structural" next to "holds".
        let x32 = inputs.x.mapv(|v| v as f32);
        let r32 = checked(&layer, Input::F32(x32.view()), &Default::default());
        assert!(r32.holds);
        assert_eq!(
            r32.diagnosis.unwrap().conclusion,
            experiment::Conclusion::LowerPrecision
        );
        // attnlab's own f64 layer is round-off (the conclusion the CLI gives).
        let f64_layer = spec.build::<f64>(&inputs).unwrap();
        let own = both_precisions(&**inner, &*f64_layer);
        let r = checked(&own, Input::F64(inputs.x.view()), &Default::default());
        assert_eq!(
            r.diagnosis.unwrap().conclusion,
            experiment::Conclusion::RoundOff
        );
    }

    /// f(X) ≠ f(X): nondeterminism, no verdict on symmetry.
    #[test]
    fn a_nondeterministic_layer_gets_no_verdict() {
        let calls = std::cell::Cell::new(0u32);
        // Row-wise (so symmetric), plus a different perturbation at every call (dropout-like).
        let noisy64 = |h: ArrayView2<f64>| {
            calls.set(calls.get() + 1);
            let k = f64::from(calls.get() % 7) * 1e-3;
            Ok(h.mapv(|v| v.tanh() + k))
        };
        let noisy32 = |h: ArrayView2<f32>| Ok(h.mapv(|v| v.tanh()));
        let layer = both_precisions(&noisy32, &noisy64);
        let x = course().x;
        let r = checked(&layer, Input::F64(x.view()), &Default::default());
        assert!(!r.controls[0].ok, "{:?}", r.controls);
        assert_eq!(r.verdict, crate::symmetry::Verdict::Undecided);
        assert!(!r.holds);
        let d = r.diagnosis.unwrap();
        assert_eq!(d.conclusion, experiment::Conclusion::Nondeterministic);
        assert!(d.explanation().contains("eval"), "{}", d.explanation());
    }

    /// The causal check fails for an unmasked and an anti-causal layer (future leakage), holds
    /// for a causal one; an unmasked check of the causal layer says it looks causal.
    #[test]
    fn mask_causal_catches_future_leakage() {
        let inputs = course();
        let causal_spec = LayerSpec {
            mask: Mask::Causal,
            ..LayerSpec::default()
        };
        let bare = LayerSpec::default();
        let c64 = causal_spec.build::<f64>(&inputs).unwrap();
        let c32 = causal_spec.build::<f32>(&inputs).unwrap();
        let b64 = bare.build::<f64>(&inputs).unwrap();
        let b32 = bare.build::<f32>(&inputs).unwrap();
        // Anti-causal: the causal layer on the reversed sequence, reversed back (query i sees j ≥ i).
        let rev = Permutation::new((0..5).rev().collect()).unwrap();
        let a64 = |h: ArrayView2<f64>| rev.apply_rows(c64(rev.apply_rows(h)?.view())?.view());
        let a32 = |h: ArrayView2<f32>| rev.apply_rows(c32(rev.apply_rows(h)?.view())?.view());
        let causal = LayerCheckOptions {
            mask: Mask::Causal,
            ..Default::default()
        };
        let ctx = Context::default();
        let x = Input::F64(inputs.x.view());
        let r = run(&both_precisions(&*c32, &*c64), x, &causal, &ctx).unwrap();
        assert!(r.holds, "{r:?}");
        let fut = r.future_independence.as_ref().unwrap();
        assert!(fut.holds && fut.max_abs_error == 0.0, "{fut:?}");
        for (name, layer) in [
            ("unmasked", both_precisions(&*b32, &*b64)),
            ("anti-causal", both_precisions(&a32, &a64)),
        ] {
            let r = run(&layer, x, &causal, &ctx).unwrap();
            let fut = r.future_independence.as_ref().unwrap();
            assert!(!r.holds && !fut.holds, "{name}: {r:?}");
            // Far beyond round-off: changing the future moves the past by O(1).
            assert!(fut.margin > 1e6, "{name}: {}", fut.margin);
        }
        // Unmasked check of the causal layer: breaks, and it looks causal.
        let r = run(&both_precisions(&*c32, &*c64), x, &Default::default(), &ctx).unwrap();
        assert!(!r.holds && r.looks_causal, "{r:?}");
        assert!(r.note.unwrap().contains("mask=\"causal\""));
        // The bare layer breaks nothing; a rope layer breaks but is not causal.
        let rope = LayerSpec {
            pos: PosKind::Rope,
            ..LayerSpec::default()
        };
        let r64 = rope.build::<f64>(&inputs).unwrap();
        let r32 = rope.build::<f32>(&inputs).unwrap();
        let r = run(&both_precisions(&*r32, &*r64), x, &Default::default(), &ctx).unwrap();
        assert!(!r.holds && !r.looks_causal, "{r:?}");
    }

    /// A rope layer holds when the positions move with the tokens, and breaks when they do not.
    #[test]
    fn a_rope_layer_holds_with_positions_moved() {
        let inputs = course();
        let rope = LayerSpec {
            pos: PosKind::Rope,
            move_positions: true,
            ..LayerSpec::default()
        };
        let f64_at = rope.build_at::<f64>(&inputs).unwrap();
        let f32_at = rope.build_at::<f32>(&inputs).unwrap();
        // f(X, pos): the spec's rotary positions are the row ids it is told.
        let g64 = |h: ArrayView2<f64>, p: &[i64]| {
            let at: Vec<usize> = p.iter().map(|&i| i as usize).collect();
            f64_at(h, &at)
        };
        let g32 = |h: ArrayView2<f32>, p: &[i64]| {
            let at: Vec<usize> = p.iter().map(|&i| i as usize).collect();
            f32_at(h, &at)
        };
        let positions: Vec<i64> = (0..5).collect();
        let layer = PositionedLayer {
            f32: &g32,
            f64: &g64,
            positions: &positions,
        };
        let r = run_positioned(
            &layer,
            Input::F64(inputs.x.view()),
            &Default::default(),
            &Context::default(),
        )
        .unwrap();
        assert!(r.holds, "{r:?}");
        assert!(r.controls.iter().all(|c| c.ok), "{:?}", r.controls);
        assert_eq!(
            r.diagnosis.unwrap().conclusion,
            experiment::Conclusion::RoundOff
        );
        // Fixed positions: breaks, structurally.
        let fixed = |h: ArrayView2<f64>| f64_at(h, &[0, 1, 2, 3, 4]);
        let fixed32 = |h: ArrayView2<f32>| f32_at(h, &[0, 1, 2, 3, 4]);
        let r = checked(
            &both_precisions(&fixed32, &fixed),
            Input::F64(inputs.x.view()),
            &Default::default(),
        );
        assert!(!r.holds);
        assert_eq!(
            r.diagnosis.unwrap().conclusion,
            experiment::Conclusion::Structural
        );
        // A wrong number of positions is refused.
        let short = PositionedLayer {
            positions: &positions[..3],
            ..layer
        };
        let e = run_positioned(
            &short,
            Input::F64(inputs.x.view()),
            &Default::default(),
            &Context::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("positions"), "{e}");
    }
}
