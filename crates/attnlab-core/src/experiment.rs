//! The course's experiments as reusable functions: a symmetry check with its controls and its
//! round-off-or-structure diagnosis. The CLI, the lab and the claims ledger all call these.

use ndarray::ArrayView2;
use serde::Serialize;

use crate::attention::Mask;
use crate::layer::{Inputs, LayerKind, LayerSpec, PosKind, Readout};
use crate::symmetry::{
    check_equivariance, check_invariance, check_weight_equivariance_heads, CheckReport, Permutation,
};
use crate::{Dtype, Error, Real, Result};

/// The most random permutations one check draws.
pub const MAX_SAMPLES: usize = 100_000;

/// Which permutations a check runs over.
#[derive(Debug, Clone, PartialEq)]
pub enum PermChoice {
    /// One given permutation.
    Given(Permutation),
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
            PermChoice::Given(p) if p.len() != n => Err(Error::invalid(
                "--perm",
                p,
                format!(
                    "a permutation of 0..{} (length {n}, the sequence length)",
                    n.saturating_sub(1)
                ),
            )),
            PermChoice::Given(p) => Ok(vec![p.clone()]),
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

/// A negative or positive control run beside a check.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
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
    /// One sentence saying why.
    pub explanation: String,
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
            explanation: crate::present::prose::diagnosis(conclusion, ratio, eps_ratio),
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

/// The weight form of every head from one forward pass per input (not one per head), and the
/// worst head's report (the first of equal margins).
fn weight_form_in<T: Real>(
    spec: &LayerSpec,
    inputs: &Inputs,
    perms: &[Permutation],
    cancel: &dyn Fn() -> Result<()>,
) -> Result<CheckReport> {
    let h = inputs.x.mapv(T::from_f64);
    let f = spec.attention_fn::<T>(inputs)?;
    let reports = check_weight_equivariance_heads(
        |x: ArrayView2<T>| {
            cancel()?;
            Ok(f(x)?.weights)
        },
        h.view(),
        perms,
    )?;
    let mut worst: Option<CheckReport> = None;
    for r in reports {
        if worst.as_ref().is_none_or(|b| r.margin > b.margin) {
            worst = Some(r);
        }
    }
    // check_weight_equivariance_heads returns one report per head, and a layer has ≥ 1 head.
    worst.ok_or_else(|| Error::invalid("heads", 0, "at least one head"))
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

/// Runs the check of `spec` over `perms` in `dtype`, with controls and the dtype diagnosis.
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
    let check = |spec: &LayerSpec, inputs: &Inputs, perms: &[Permutation], dtype: Dtype| {
        check_cancellable(spec, inputs, perms, dtype, cancel)
    };
    let report = check(spec, inputs, perms, dtype)?;
    let weight_form = if spec.kind == LayerKind::Attention && spec.readout == Readout::None {
        Some(match dtype.require_layer()? {
            Dtype::F32 => weight_form_in::<f32>(spec, inputs, perms, cancel)?,
            _ => weight_form_in::<f64>(spec, inputs, perms, cancel)?,
        })
    } else {
        None
    };
    let n = inputs.x.nrows();
    let mut controls = Vec::new();
    let id = check(spec, inputs, &[Permutation::identity(n)], dtype)?;
    controls.push(Control::identity(&id));
    if n >= 2 {
        let broken = LayerSpec {
            kind: LayerKind::Attention,
            pos: PosKind::Index,
            mask: Mask::None,
            readout: spec.readout,
            index_scale: 1.0,
            ..*spec
        };
        let b = check(&broken, inputs, &non_identity(perms, n)?, dtype)?;
        controls.push(Control::broken(
            "broken layer (attention + index signal p·1.0)",
            &b,
        ));
    }
    let (e32, e64) = match dtype.require_layer()? {
        Dtype::F32 => (
            report.max_abs_error,
            check(spec, inputs, perms, Dtype::F64)?.max_abs_error,
        ),
        _ => (
            check(spec, inputs, perms, Dtype::F32)?.max_abs_error,
            report.max_abs_error,
        ),
    };
    let tol64 = check(spec, inputs, &perms[..1], Dtype::F64)?.tolerance;
    Ok(SymmetryResult {
        report,
        weight_form,
        controls,
        diagnosis: Diagnosis::classify(e32, e64, tol64),
    })
}
