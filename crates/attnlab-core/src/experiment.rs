//! The course's experiments as reusable functions: a symmetry check with its controls and its
//! round-off-or-structure diagnosis. The CLI, the lab and the claims ledger all call these.

use ndarray::ArrayView2;
use serde::Serialize;

use crate::attention::Mask;
use crate::layer::{Inputs, LayerKind, LayerSpec, PosKind, Readout};
use crate::symmetry::{
    check_equivariance, check_invariance, identity_check, shared_pass, CheckReport, Forward,
    LayerInto, Perms, Permutation, Property, Verdict, Worst,
};
use crate::{Dtype, Error, Real, Result};

/// The most random permutations one check draws.
pub const MAX_SAMPLES: usize = 100_000;

/// Which permutations a check runs over: the one choice type of `attnlab equivariance`, the
/// Python `check_equivariance` and their reports' [`PermutationSet`].
#[derive(Debug, Clone, PartialEq)]
pub enum PermChoice {
    /// The permutations the caller gave (one on the CLI, a list from Python).
    Given(Vec<Permutation>),
    /// All n! permutations (n ≤ 8).
    Exhaustive,
    /// K uniformly random non-identity permutations from a ChaCha8 stream with this seed.
    Samples {
        /// How many.
        k: usize,
        /// Seed of the permutation stream.
        seed: u64,
    },
}

impl PermChoice {
    /// The permutations for a sequence of length `n`.
    ///
    /// # Errors
    /// Wrong length, exhaustive with n > 8, random with n < 2 or k = 0.
    pub fn permutations(&self, n: usize) -> Result<Vec<Permutation>> {
        match self {
            PermChoice::Given(ps) => match ps.iter().find(|p| p.len() != n) {
                Some(p) => Err(Error::invalid(
                    "--perm",
                    p,
                    format!(
                        "a permutation of 0..{} (length {n}, the sequence length)",
                        n.saturating_sub(1)
                    ),
                )),
                None => Ok(ps.clone()),
            },
            PermChoice::Exhaustive => Permutation::all(n),
            PermChoice::Samples { k: 0, .. } => {
                Err(Error::invalid("--samples", 0, format!("1..={MAX_SAMPLES}")))
            }
            PermChoice::Samples { k, .. } if *k > MAX_SAMPLES => {
                Err(Error::invalid("--samples", k, format!("1..={MAX_SAMPLES}")))
            }
            PermChoice::Samples { k, seed } => {
                // When k covers every non-identity permutation, check each once instead of
                // drawing repeats (n = 2 has only one).
                if (2..=8).contains(&n) && (1..=n).product::<usize>() - 1 <= *k {
                    return Ok(Permutation::all(n)?
                        .into_iter()
                        .filter(|p| !p.is_identity())
                        .collect());
                }
                Permutation::random(n, *k, *seed, true)
            }
        }
    }

    /// Refuses more than one of the choices (`given`, `exhaustive`, `samples`); `options`
    /// names them as the front end spells them (`--perm, --exhaustive, --samples`).
    ///
    /// # Errors
    /// Two or three choices at once.
    pub fn at_most_one(given: bool, exhaustive: bool, samples: bool, options: &str) -> Result<()> {
        if given as u8 + exhaustive as u8 + samples as u8 > 1 {
            return Err(Error::invalid(
                "permutation choice",
                "several given",
                format!("at most one of {options}"),
            ));
        }
        Ok(())
    }

    /// The choice a request's options make: the given permutations, else all of them, else
    /// `samples` random ones, else the default for `n` positions ([`PermChoice::default_for`]).
    pub fn from_options(
        given: Option<Vec<Permutation>>,
        exhaustive: bool,
        samples: Option<usize>,
        seed: u64,
        n: usize,
    ) -> PermChoice {
        match (given, exhaustive, samples) {
            (Some(ps), _, _) => PermChoice::Given(ps),
            (None, true, _) => PermChoice::Exhaustive,
            (None, false, Some(k)) => PermChoice::Samples { k, seed },
            (None, false, None) => PermChoice::default_for(n, seed),
        }
    }

    /// How the report states the choice; `listed` is how many permutations it stands for
    /// (n! for exhaustive).
    pub fn set(&self, listed: usize) -> PermutationSet {
        match self {
            PermChoice::Given(ps) => PermutationSet {
                mode: PermutationMode::Given,
                count: ps.len(),
                seed: None,
            },
            PermChoice::Exhaustive => PermutationSet {
                mode: PermutationMode::Exhaustive,
                count: listed,
                seed: None,
            },
            PermChoice::Samples { k, seed } => PermutationSet {
                mode: PermutationMode::Random,
                count: *k,
                seed: Some(*seed),
            },
        }
    }

    /// The default: every permutation for n ≤ 6 (at most 720), else 100 random ones (20 for
    /// n > 256, where one forward pass is no longer instant).
    pub fn default_for(n: usize, seed: u64) -> Self {
        match n {
            0..=6 => PermChoice::Exhaustive,
            7..=256 => PermChoice::Samples { k: 100, seed },
            _ => PermChoice::Samples { k: 20, seed },
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

/// The verdict and evidence every check report shares, flattened into
/// [`crate::api::equivariance::EquivarianceReport`] and [`crate::api::check::LayerCheckReport`]
/// (one definition of the fields the front ends read: Python's dataclasses, the web page, the
/// text renderings).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckSummary {
    /// Whether the property holds within the tolerance.
    pub holds: bool,
    /// Holds or breaks.
    pub verdict: Verdict,
    /// Equivariance, invariance or (causal) prefix invariance.
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
}

impl CheckSummary {
    /// The summary of the check `r` over the permutations `permutations`.
    pub fn new(r: CheckReport, permutations: PermutationSet) -> CheckSummary {
        CheckSummary {
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
        }
    }
}

/// A negative or positive control run beside a check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Control {
    /// What the control is.
    pub name: String,
    /// What it must show.
    pub expectation: String,
    /// Its measured error.
    pub max_abs_error: f64,
    /// Its margin (error / tolerance).
    pub margin: f64,
    /// Whether it showed what it must.
    pub ok: bool,
}

/// Is the measured error round-off or structure? The same check in f32 and f64: round-off falls
/// by about eps32/eps64 ≈ 5.4e8 from f32 to f64; a structural asymmetry does not fall.
///
/// Typed data only: the sentence saying why (`Diagnosis::explanation`, and the JSON field
/// `explanation` after `conclusion`) is written by the report boundary, `present::prose`, which
/// also implements its serialisation.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    /// max abs error of the check in f32.
    pub f32_error: f64,
    /// max abs error of the check in f64.
    pub f64_error: f64,
    /// f32_error / f64_error (∞ when the f64 error is exactly 0).
    pub ratio: f64,
    /// eps32 / eps64, the ratio round-off would show.
    pub eps_ratio: f64,
    /// Round-off, structural, or exact (both errors 0).
    pub conclusion: Conclusion,
}

impl Diagnosis {
    /// The factor by which the f64 error must exceed the f64 tolerance, with an f32/f64 error
    /// ratio below the same factor, for the error to count as structural: round-off of a
    /// symmetric layer stays below the tolerance in f64 and falls by ≈ eps32/eps64 ≈ 5.4e8.
    pub const STRUCTURE_FACTOR: f64 = 1e3;

    /// Classifies the errors `e32`, `e64` of one check run in f32 and in f64 (`tol64` is the
    /// check's tolerance in f64):
    /// * exact when both are 0;
    /// * structural when `e64 > 1e3 · tol64` and `e32 / e64 < 1e3` (the error is far above
    ///   round-off in f64 and does not fall with the precision);
    /// * round-off otherwise.
    ///
    /// ```
    /// use attnlab_core::experiment::{Conclusion, Diagnosis};
    /// assert_eq!(Diagnosis::classify(0.0, 0.0, 1e-14).conclusion, Conclusion::Exact);
    /// assert_eq!(Diagnosis::classify(2e-7, 4e-16, 1e-14).conclusion, Conclusion::RoundOff);
    /// assert_eq!(Diagnosis::classify(1e-3, 1e-3, 1e-14).conclusion, Conclusion::Structural);
    /// ```
    pub fn classify(e32: f64, e64: f64, tol64: f64) -> Diagnosis {
        let eps_ratio = Dtype::F32.eps() / Dtype::F64.eps();
        let ratio = if e64 == 0.0 { f64::INFINITY } else { e32 / e64 };
        let conclusion = if e32 == 0.0 && e64 == 0.0 {
            Conclusion::Exact
        } else if e64 > tol64 * Self::STRUCTURE_FACTOR && ratio < Self::STRUCTURE_FACTOR {
            Conclusion::Structural
        } else {
            Conclusion::RoundOff
        };
        Diagnosis {
            f32_error: e32,
            f64_error: e64,
            ratio,
            eps_ratio,
            conclusion,
        }
    }
}

impl Control {
    /// The positive control: the identity permutation must give exactly 0 (the same input
    /// through the same arithmetic).
    pub fn identity(check: &CheckReport) -> Control {
        Control {
            name: "identity permutation".into(),
            expectation: "error exactly 0 (same input, same arithmetic)".into(),
            max_abs_error: check.max_abs_error,
            margin: check.margin,
            ok: check.max_abs_error == 0.0,
        }
    }

    /// The negative control: the same check on a layer that is broken on purpose must break.
    pub fn broken(name: impl Into<String>, check: &CheckReport) -> Control {
        Control {
            name: name.into(),
            expectation: "must break (margin > 1)".into(),
            max_abs_error: check.max_abs_error,
            margin: check.margin,
            ok: !check.holds,
        }
    }
}

/// The permutations a negative control runs over: the non-identity ones of `perms`, or one
/// random non-identity permutation (seed 1) when `perms` has none.
///
/// # Errors
/// n < 2 (no non-identity permutation exists).
pub fn non_identity(perms: &[Permutation], n: usize) -> Result<Vec<Permutation>> {
    let non_id: Vec<Permutation> = perms.iter().filter(|p| !p.is_identity()).cloned().collect();
    if non_id.is_empty() {
        Permutation::random(n, 1, 1, true)
    } else {
        Ok(non_id)
    }
}

crate::choice! {
    /// What the f32/f64 comparison concludes about a measured error.
    pub enum Conclusion("conclusion") {
        /// The error falls by about eps32/eps64: floating-point round-off.
        RoundOff = "round-off",
        /// The error does not fall with precision: the layer is not symmetric.
        Structural = "structural",
        /// Both precisions give identical results (error exactly 0).
        Exact = "exact",
    }
}

/// The result of a symmetry experiment.
#[derive(Debug, Clone, Serialize)]
pub struct SymmetryResult {
    /// The main check, in the requested dtype.
    pub report: CheckReport,
    /// The weight form `A(ΠH) = Π A(H) Πᵀ` (bare attention layers with no readout).
    pub weight_form: Option<CheckReport>,
    /// Positive control (identity permutation: error exactly 0) and negative control (the same
    /// check on a deliberately broken layer: must break).
    pub controls: Vec<Control>,
    /// Round-off or structure.
    pub diagnosis: Diagnosis,
}

fn check_in<T: Real>(
    spec: &LayerSpec,
    inputs: &Inputs,
    perms: &[Permutation],
    cancel: &dyn Fn() -> Result<()>,
) -> Result<CheckReport> {
    let f = spec.build::<T>(inputs)?;
    let h = inputs.x.mapv(T::from_f64);
    let f = |x: ArrayView2<T>| {
        cancel()?;
        f(x)
    };
    match spec.readout {
        Readout::None => check_equivariance(f, h.view(), perms),
        _ => check_invariance(f, h.view(), perms),
    }
}

/// Dispatches a check to the requested float type.
///
/// # Errors
/// See [`LayerSpec::build`].
pub fn check(
    spec: &LayerSpec,
    inputs: &Inputs,
    perms: &[Permutation],
    dtype: Dtype,
) -> Result<CheckReport> {
    check_cancellable(spec, inputs, perms, dtype, &|| Ok(()))
}

/// [`check`], calling `cancel` before every forward pass (it returns an error to stop).
fn check_cancellable(
    spec: &LayerSpec,
    inputs: &Inputs,
    perms: &[Permutation],
    dtype: Dtype,
    cancel: &dyn Fn() -> Result<()>,
) -> Result<CheckReport> {
    match dtype.require_layer()? {
        Dtype::F32 => check_in::<f32>(spec, inputs, perms, cancel),
        _ => check_in::<f64>(spec, inputs, perms, cancel),
    }
}

/// Runs the check of `spec` over `perms` in `dtype`, with controls and the dtype diagnosis (see
/// [`symmetry_observed`] for what is computed and how the work is shared).
///
/// # Errors
/// See [`LayerSpec::build`] and [`PermChoice::permutations`].
pub fn symmetry(
    spec: &LayerSpec,
    inputs: &Inputs,
    perms: &[Permutation],
    dtype: Dtype,
) -> Result<SymmetryResult> {
    symmetry_with(spec, inputs, perms, dtype, &|| Ok(()))
}

/// [`symmetry`], calling `cancel` before every forward pass, so a long check stops at once when
/// it returns an error (the CLI's Ctrl-C, a server's time limit).
///
/// # Errors
/// See [`symmetry`]; whatever `cancel` returns.
pub fn symmetry_with(
    spec: &LayerSpec,
    inputs: &Inputs,
    perms: &[Permutation],
    dtype: Dtype,
    cancel: &dyn Fn() -> Result<()>,
) -> Result<SymmetryResult> {
    let watch = Watch {
        cancel,
        progress: &|_, _| {},
    };
    Ok(symmetry_observed(spec, inputs, Perms::List(perms), dtype, &watch)?.0)
}

/// How a long experiment is observed: `cancel` runs before every forward pass (an error stops
/// the run), `progress(stage, fraction)` reports the fraction of the whole run done.
pub struct Watch<'a> {
    /// Returns an error to stop.
    pub cancel: &'a dyn Fn() -> Result<()>,
    /// Stage name and fraction of the whole run done (0..=1).
    pub progress: &'a dyn Fn(&str, f64),
}

/// Seconds spent in each part of a symmetry experiment ([`symmetry_observed`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SymmetryTimings {
    /// The check's forward passes: `f(H)` once and `f(ΠH)` once per permutation (with every
    /// head's weights when the weight form is checked).
    pub forwards_s: f64,
    /// Comparing `f(ΠH)` with `Π f(H)` (or `f(H)`), permutation by permutation.
    pub comparisons_s: f64,
    /// Comparing `A(ΠH)` with `Π A(H) Πᵀ` for every head (its forwards are the check's).
    pub weight_form_s: f64,
    /// The identity control (reuses `f(H)`) and the broken-layer control (its own forwards).
    pub controls_s: f64,
    /// The same check in the other float type, on the fused path.
    pub diagnosis_s: f64,
}

/// Runs the check of `spec` over `perms` in `dtype` with its evidence, each forward pass
/// computed once:
/// * the check: `f(H)` once and `f(ΠH)` once per permutation, on the layer of
///   [`LayerSpec::build`] (attention's output is `A·V` with the returned `A`, as in [`check`]).
///   For bare attention without a readout the forwards hand back every head's weights too, and
///   the weight form `A(ΠH) = Π A(H) Πᵀ` (worst head) is compared from those same weights;
/// * the identity control from the check's own `f(H)` ([`crate::symmetry::identity_check`]);
/// * the broken-layer control (attention + index signal p·1.0; its own `f(H)` and `f(ΠH)` per
///   non-identity permutation, fused kernel);
/// * the diagnosis: the check in the other float type (f64 for an f32 layer, f32 for f64) on
///   the fused kernel; its tolerance in f64 is sized on the f64 `f(H)` already computed.
///
/// Permutations are visited from one buffer (no list for [`Perms::All`]); nothing is allocated
/// per permutation outside the layer's own forward pass. Returns the result and the seconds
/// each part took.
///
/// # Errors
/// See [`symmetry`]; whatever `watch.cancel` returns.
pub fn symmetry_observed(
    spec: &LayerSpec,
    inputs: &Inputs,
    perms: Perms<'_>,
    dtype: Dtype,
    watch: &Watch<'_>,
) -> Result<(SymmetryResult, SymmetryTimings)> {
    match dtype.require_layer()? {
        Dtype::F32 => observed_in::<f32, f64>(spec, inputs, perms, watch),
        _ => observed_in::<f64, f32>(spec, inputs, perms, watch),
    }
}

/// A forward pass writing into a [`Forward`].
type ForwardFn<'a, T> = Box<LayerInto<'a, T>>;

/// The layer on the fused path (output only).
fn fused_forward<'a, T: Real>(spec: &'a LayerSpec, inputs: &'a Inputs) -> Result<ForwardFn<'a, T>> {
    let f = spec.build_fused::<T>(inputs)?;
    Ok(Box::new(move |x, out: &mut Forward<T>| {
        out.output = f(x)?;
        Ok(())
    }))
}

/// One stage of a run: its name, and its position among `stages` stages.
fn stage_tick<'a>(
    watch: &'a Watch<'a>,
    name: &'a str,
    index: usize,
    stages: usize,
    perms: usize,
) -> impl FnMut(usize) -> Result<()> + 'a {
    // Progress at most ~200 times per stage.
    let every = (perms / 200).max(1);
    move |done: usize| {
        (watch.cancel)()?;
        if done.is_multiple_of(every) {
            let within = done as f64 / perms.max(1) as f64;
            (watch.progress)(name, (index as f64 + within) / stages as f64);
        }
        Ok(())
    }
}

fn observed_in<T: Real, U: Real>(
    spec: &LayerSpec,
    inputs: &Inputs,
    perms: Perms<'_>,
    watch: &Watch<'_>,
) -> Result<(SymmetryResult, SymmetryTimings)> {
    let n = inputs.x.nrows();
    let property = match spec.readout {
        Readout::None => Property::Equivariance,
        _ => Property::Invariance,
    };
    let with_weights = spec.kind == LayerKind::Attention && spec.readout == Readout::None;
    let broken = LayerSpec {
        kind: LayerKind::Attention,
        pos: PosKind::Index,
        mask: Mask::None,
        readout: spec.readout,
        index_scale: 1.0,
        ..*spec
    };
    let stages = if n >= 2 { 3 } else { 2 };
    let mut timings = SymmetryTimings::default();

    // The check (and the weight form from the same forwards).
    let h = inputs.x.mapv(T::from_f64);
    let mut forward: ForwardFn<'_, T> = if with_weights {
        let f = spec.attention_fn::<T>(inputs)?;
        Box::new(move |x, out: &mut Forward<T>| {
            let r = f(x)?;
            out.output = r.output;
            out.weights = r.weights;
            Ok(())
        })
    } else {
        // The same path as [`check`] (and a caller's layer through `api::check`), so the
        // check's numbers do not depend on whether the weight form is asked for.
        let f = spec.build::<T>(inputs)?;
        Box::new(move |x, out: &mut Forward<T>| {
            out.output = f(x)?;
            Ok(())
        })
    };
    let mut tick = stage_tick(watch, "equivariance check", 0, stages, perms.len());
    let pass = shared_pass(&mut *forward, h.view(), perms, false, property, &mut tick)?;
    drop(forward);
    timings.forwards_s = pass.times.forwards;
    timings.comparisons_s = pass.times.outputs;
    timings.weight_form_s = pass.times.weights;
    let weight_form = if with_weights {
        let mut worst: Option<CheckReport> = None;
        for r in &pass.weight_heads {
            if worst.as_ref().is_none_or(|b| r.margin > b.margin) {
                worst = Some(r.clone());
            }
        }
        // A layer has ≥ 1 head, and each returned its weights.
        Some(worst.ok_or_else(|| Error::invalid("heads", 0, "at least one head"))?)
    } else {
        None
    };

    // Controls: the identity from the check's own f(H); the broken layer, its own forwards.
    let t = std::time::Instant::now();
    let mut controls = vec![Control::identity(&identity_check(&pass, n))];
    if n >= 2 {
        let owned;
        let broken_perms = if perms.non_identity_count() == 0 {
            owned = non_identity(&[], n)?;
            Perms::List(&owned)
        } else {
            perms
        };
        let mut f = fused_forward::<T>(&broken, inputs)?;
        let count = broken_perms.non_identity_count();
        let mut tick = stage_tick(watch, "broken-layer control", 1, stages, count);
        let b = shared_pass(&mut *f, h.view(), broken_perms, true, property, &mut tick)?;
        controls.push(Control::broken(
            "broken layer (attention + index signal p·1.0)",
            &b.report,
        ));
    }
    timings.controls_s = t.elapsed().as_secs_f64();
    let main_error = pass.report.max_abs_error;
    let main_tol = pass.report.tolerance;
    let report = pass.report;
    drop(pass.base);

    // The diagnosis: the same check in the other float type, fused kernel.
    let t = std::time::Instant::now();
    let other_name = if U::DTYPE == Dtype::F64 {
        "f64 diagnosis"
    } else {
        "f32 diagnosis"
    };
    let hu = inputs.x.mapv(U::from_f64);
    let mut f = fused_forward::<U>(spec, inputs)?;
    let mut tick = stage_tick(watch, other_name, stages - 1, stages, perms.len());
    let other = shared_pass(&mut *f, hu.view(), perms, false, property, &mut tick)?;
    timings.diagnosis_s = t.elapsed().as_secs_f64();
    (watch.progress)(other_name, 1.0);
    let (e32, e64, tol64) = if U::DTYPE == Dtype::F64 {
        (
            main_error,
            other.report.max_abs_error,
            other.report.tolerance,
        )
    } else {
        (other.report.max_abs_error, main_error, main_tol)
    };
    Ok((
        SymmetryResult {
            report,
            weight_form,
            controls,
            diagnosis: Diagnosis::classify(e32, e64, tol64),
        },
        timings,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::InputSpec;
    use crate::symmetry::check_weight_equivariance_heads;

    /// The shared run's evidence equals each piece computed on its own, with its own forwards.
    #[test]
    fn shared_evidence_equals_independently_computed_evidence() {
        let inputs = InputSpec {
            n: Some(7),
            dim: Some(6),
            heads: 2,
            seed: 5,
            ..InputSpec::default()
        }
        .build()
        .unwrap();
        let spec = LayerSpec::default();
        let perms = Permutation::random(7, 4, 9, true).unwrap();
        let (r, t) = symmetry_observed(
            &spec,
            &inputs,
            Perms::List(&perms),
            Dtype::F32,
            &Watch {
                cancel: &|| Ok(()),
                progress: &|_, _| {},
            },
        )
        .unwrap();
        // The check: the weights path (A·V with the returned A), as `check` computes it.
        assert_eq!(r.report, check(&spec, &inputs, &perms, Dtype::F32).unwrap());
        // The weight form: the worst head of the per-head check.
        let h = inputs.x.mapv(|v| v as f32);
        let full = spec.attention_fn::<f32>(&inputs).unwrap();
        let heads =
            check_weight_equivariance_heads(|x| Ok(full(x)?.weights), h.view(), &perms).unwrap();
        let worst = heads
            .iter()
            .fold(&heads[0], |b, r| if r.margin > b.margin { r } else { b });
        assert_eq!(r.weight_form.as_ref(), Some(worst));
        // Identity control: exactly 0, as a second forward of H would give.
        let id = check(&spec, &inputs, &[Permutation::identity(7)], Dtype::F32).unwrap();
        assert_eq!(r.controls[0].max_abs_error, id.max_abs_error);
        assert_eq!(r.controls[0].max_abs_error, 0.0);
        // Broken layer and diagnosis: the fused path, computed independently.
        let broken = LayerSpec {
            pos: PosKind::Index,
            index_scale: 1.0,
            ..spec
        };
        let fb = broken.build_fused::<f32>(&inputs).unwrap();
        let b = check_equivariance(&fb, h.view(), &perms).unwrap();
        assert_eq!(r.controls[1].max_abs_error, b.max_abs_error);
        assert_eq!(r.controls[1].margin, b.margin);
        assert!(r.controls[1].ok);
        let h64 = inputs.x.clone();
        let f64_ = spec.build_fused::<f64>(&inputs).unwrap();
        let d64 = check_equivariance(&f64_, h64.view(), &perms).unwrap();
        assert_eq!(r.diagnosis.f64_error, d64.max_abs_error);
        assert_eq!(r.diagnosis.f32_error, r.report.max_abs_error);
        assert_eq!(
            r.diagnosis,
            Diagnosis::classify(r.report.max_abs_error, d64.max_abs_error, d64.tolerance)
        );
        for s in [
            t.forwards_s,
            t.comparisons_s,
            t.weight_form_s,
            t.controls_s,
            t.diagnosis_s,
        ] {
            assert!(s.is_finite() && s >= 0.0, "{t:?}");
        }
    }

    /// A readout check has no weight form and equals [`check`]; `symmetry` (the list form)
    /// and the exhaustive form agree.
    #[test]
    fn a_readout_check_runs_fused_and_the_exhaustive_form_equals_the_list() {
        let inputs = InputSpec {
            n: Some(5),
            dim: Some(4),
            ..InputSpec::default()
        }
        .build()
        .unwrap();
        let spec = LayerSpec {
            readout: Readout::Mean,
            ..LayerSpec::default()
        };
        let all = Permutation::all(5).unwrap();
        let listed = symmetry(&spec, &inputs, &all, Dtype::F64).unwrap();
        assert!(listed.weight_form.is_none());
        assert_eq!(
            listed.report,
            check(&spec, &inputs, &all, Dtype::F64).unwrap()
        );
        let watch = Watch {
            cancel: &|| Ok(()),
            progress: &|_, _| {},
        };
        let (streamed, _) =
            symmetry_observed(&spec, &inputs, Perms::All(5), Dtype::F64, &watch).unwrap();
        assert_eq!(streamed.report, listed.report);
        assert_eq!(
            streamed.controls[1].max_abs_error,
            listed.controls[1].max_abs_error
        );
        assert_eq!(streamed.diagnosis, listed.diagnosis);
    }
}
