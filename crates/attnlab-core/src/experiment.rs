//! The course's experiments as reusable functions: a symmetry check with its controls and its
//! round-off-or-structure diagnosis. The CLI, the lab and the claims ledger all call these.

use ndarray::ArrayView2;
use serde::Serialize;

use crate::attention::Mask;
use crate::layer::{Inputs, LayerKind, LayerSpec, PosKind, Readout};
use crate::symmetry::{
    check_equivariance, check_invariance, error_matrix, future_pass, identity_check,
    identity_recomputed, sampled_pass_at, shared_pass_at, CheckReport, Forward, LayerAt,
    LayerRowsAt, Perms, Permutation, Property, Tolerance, Verdict, Worst,
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
            tolerance_derivation: r.tolerance_detail.derivation(),
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
    /// The output rows it compared, when not all of them ([`RowSample`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampled_rows: Option<RowSample>,
}

/// The output rows a control or the diagnosis compared when n is large
/// ([`run_check`]: more than [`RowSample::ABOVE`] positions, a layer whose rows can be computed
/// alone): the main check's worst row and evenly spaced others, `rows` of the `of` rows.
/// Each computed row is bit-identical to that row of the whole output, so the error found is
/// the whole comparison's on those rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RowSample {
    /// Rows compared.
    pub rows: usize,
    /// Rows of the output.
    pub of: usize,
}

impl RowSample {
    /// Sequences longer than this compare a sample of rows in the controls and the diagnosis.
    pub const ABOVE: usize = 256;
    /// Rows a sample holds.
    pub const ROWS: usize = 64;

    /// The rows of a sample of `0..n`: `worst` and `ROWS − 1` evenly spaced rows from 0 to
    /// n − 1 (sorted, without repeats).
    ///
    /// ```
    /// use attnlab_core::experiment::RowSample;
    /// let r = RowSample::rows_of(4096, 5);
    /// assert_eq!((r.len(), r[0], r[1], *r.last().unwrap()), (64, 0, 5, 4095));
    /// ```
    pub fn rows_of(n: usize, worst: usize) -> Vec<usize> {
        let k = Self::ROWS - 1;
        let mut rows: Vec<usize> = (0..k)
            .map(|i| i * (n - 1) / (k - 1).max(1))
            .chain(std::iter::once(worst.min(n - 1)))
            .collect();
        rows.sort_unstable();
        rows.dedup();
        rows
    }
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
    /// Round-off, structural, exact (both errors 0), a lower internal precision, or a
    /// nondeterministic layer.
    pub conclusion: Conclusion,
    /// The precision the layer computes in internally ([`Conclusion::LowerPrecision`]).
    pub internal: Option<Dtype>,
    /// The output rows the other precision's check compared, when not all ([`RowSample`]).
    pub sampled_rows: Option<RowSample>,
}

impl Diagnosis {
    /// The factor by which the f64 error must exceed the f64 tolerance, with an f32/f64 error
    /// ratio below the same factor, for the error to count as structural: round-off of a
    /// symmetric layer stays below the tolerance in f64 and falls by ≈ eps32/eps64 ≈ 5.4e8.
    pub const STRUCTURE_FACTOR: f64 = 1e3;

    /// How far below a lower precision's round-off level (eps · scale) an error may sit and
    /// still be read as that precision's round-off: an error 16 times smaller than one unit of
    /// float32 at the output's scale is not float32 arithmetic.
    pub const LOWER_BAND: f64 = 16.0;

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
            internal: None,
            sampled_rows: None,
        }
    }

    /// [`Diagnosis::classify`] for a layer whose arithmetic is not attnlab's (a caller's
    /// function, a torch module): an error that does not fall from f32 to f64 but sits at the
    /// round-off level of a lower precision P — between `eps_P · scale / 16` and the tolerance
    /// `k · eps_P · (n + d) · scale` of the f64 check (`tol64` is that check's tolerance, sized
    /// with eps64) — is that precision's round-off: the layer computes internally in P (float32
    /// inside a float64 run, as transformers' eager softmax does; float16 or bfloat16 inside
    /// float32), and the property holds to P's precision. P is the most precise of float32,
    /// float16, bfloat16 that fits; a 16-bit P only when every entry of f(X) is exact in it
    /// (`exact_in`: the layer casts its result from that format), since a 16-bit tolerance is
    /// wide enough to hide real structure. Never structural for such an error.
    ///
    /// ```
    /// use attnlab_core::experiment::{Conclusion, Diagnosis};
    /// use attnlab_core::symmetry::Tolerance;
    /// use attnlab_core::Dtype;
    /// // The f64 check's tolerance at scale 1, n = d = 4. An error of 3e-8 in both precisions is
    /// // float32 round-off (eps32 = 1.2e-7), not structure.
    /// let tol64 = Tolerance::for_layer::<f64>(4, 4, 1.0);
    /// let d = Diagnosis::classify_foreign(3e-8, 3e-8, &tol64, &[]);
    /// assert_eq!((d.conclusion, d.internal), (Conclusion::LowerPrecision, Some(Dtype::F32)));
    /// // A difference of 0.3 is structure, unless the output itself is bfloat16 (the bfloat16
    /// // tolerance here is 8·2⁻⁷·8 = 0.5).
    /// assert_eq!(Diagnosis::classify_foreign(0.3, 0.3, &tol64, &[]).conclusion, Conclusion::Structural);
    /// let d = Diagnosis::classify_foreign(0.3, 0.3, &tol64, &[Dtype::Bf16]);
    /// assert_eq!(d.internal, Some(Dtype::Bf16));
    /// ```
    pub fn classify_foreign(
        e32: f64,
        e64: f64,
        tol64: &Tolerance,
        exact_in: &[Dtype],
    ) -> Diagnosis {
        let mut d = Self::classify(e32, e64, tol64.value);
        if d.conclusion != Conclusion::Structural {
            return d;
        }
        let worst = e32.max(e64);
        for p in [Dtype::F32, Dtype::F16, Dtype::Bf16] {
            // A 16-bit tolerance is wide (2⁻⁷ for bfloat16): claim it only for a layer whose
            // output is itself in that format (cast back at its end).
            if p != Dtype::F32 && !exact_in.contains(&p) {
                continue;
            }
            let tol = Tolerance::for_eps(p.eps(), tol64.n, tol64.d, tol64.scale);
            let unit = p.eps() * tol.scale;
            if worst <= tol.value && worst >= unit / Self::LOWER_BAND {
                d.conclusion = Conclusion::LowerPrecision;
                d.internal = Some(p);
                return d;
            }
        }
        d
    }

    /// Whether the error of one permutation reproduces in the other precision entry by entry:
    /// `0 < max |E₁ − E₂| ≤ max(max |E₁|, max |E₂|) / 2`. A structural error (the function's own)
    /// is the same in both runs up to the lower precision's round-off; round-off of a
    /// computation in a lower precision is a different draw in each run, so the difference is
    /// as large as the errors themselves. Bit-identical errors say nothing either way: the two
    /// runs did the same arithmetic (a layer that casts its input to the lower precision), so
    /// the other precision's run is no second measurement.
    ///
    /// ```
    /// use attnlab_core::experiment::Diagnosis;
    /// use ndarray::array;
    /// let bias = array![[1e-6, -2e-6], [0.0, 1e-6]];
    /// assert!(Diagnosis::reproduces(&bias, &(&bias + 1e-7)));
    /// assert!(!Diagnosis::reproduces(&array![[3e-8, 0.0]], &array![[0.0, -3e-8]]));
    /// assert!(!Diagnosis::reproduces(&bias, &bias));
    /// ```
    pub fn reproduces(a: &ndarray::Array2<f64>, b: &ndarray::Array2<f64>) -> bool {
        let max = |m: &ndarray::Array2<f64>| m.iter().fold(0.0f64, |acc, v| acc.max(v.abs()));
        if a.dim() != b.dim() {
            return false;
        }
        let (scale, diff) = (max(a).max(max(b)), max(&(a - b)));
        scale > 0.0 && diff > 0.0 && diff <= scale / 2.0
    }

    /// The diagnosis of a nondeterministic layer: f(X) ≠ f(X), so neither precision's error
    /// says anything about symmetry.
    pub fn nondeterministic(e32: f64, e64: f64) -> Diagnosis {
        Diagnosis {
            conclusion: Conclusion::Nondeterministic,
            internal: None,
            ..Self::classify(e32, e64, f64::INFINITY)
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
            sampled_rows: None,
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
            sampled_rows: None,
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
        /// The error sits at a lower precision's round-off in both dtypes: the layer computes
        /// internally in that precision (float32 inside a float64 run), and the property holds
        /// to it.
        LowerPrecision = "lower-precision",
        /// The identity control failed (f(X) ≠ f(X)): the layer is nondeterministic, so there
        /// is no verdict on symmetry.
        Nondeterministic = "nondeterministic",
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
/// computed once — the one runner ([`run_check`]) on attnlab's own layer:
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
/// With `spec.move_positions` the rotary positions move with the tokens (row i of `ΠH` is
/// token `perm[i]` at position `perm[i]`). Permutations are visited from one buffer (no list
/// for [`Perms::All`]); nothing is allocated per permutation outside the layer's own forward
/// pass. Returns the result and the seconds each part took.
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

/// A forward pass writing into a [`Forward`], told the positions its rows hold.
pub type ForwardAt<'a, T> = Box<LayerAt<'a, T>>;

/// The layer on the fused path (output only).
fn fused_forward<'a, T: Real>(spec: &'a LayerSpec, inputs: &'a Inputs) -> Result<ForwardAt<'a, T>> {
    let f = spec.build_fused_at::<T>(inputs)?;
    Ok(Box::new(move |x, at: &[usize], out: &mut Forward<T>| {
        out.output = f(x, at)?;
        Ok(())
    }))
}

/// The layer computing only given output rows (attention without a readout), or `None`.
fn rows_forward<'a, T: Real>(
    spec: &'a LayerSpec,
    inputs: &'a Inputs,
) -> Result<Option<RowsAt<'a, T>>> {
    Ok(spec.build_rows_at::<T>(inputs)?.map(|f| {
        Box::new(move |x: ArrayView2<T>, at: &[usize], rows: &[usize]| f(x, at, rows))
            as RowsAt<'a, T>
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
    let target = match spec.readout {
        Readout::None => Target::Equivariance,
        _ => Target::Invariance,
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
    let check: ForwardAt<'_, T> = if with_weights {
        let f = spec.attention_fn_at::<T>(inputs)?;
        Box::new(move |x, at: &[usize], out: &mut Forward<T>| {
            let r = f(x, at)?;
            out.output = r.output;
            out.weights = r.weights;
            Ok(())
        })
    } else {
        // The same path as [`check`] (and a caller's layer through `api::check`), so the
        // check's numbers do not depend on whether the weight form is asked for.
        let f = spec.build_at::<T>(inputs)?;
        Box::new(move |x, at: &[usize], out: &mut Forward<T>| {
            out.output = f(x, at)?;
            Ok(())
        })
    };
    let subject = Subject {
        check,
        broken: Some(Broken {
            name: "broken layer (attention + index signal p·1.0)".into(),
            stage: "the negative control (attention + index signal p·1.0)".into(),
            forward: fused_forward::<T>(&broken, inputs)?,
            rows: rows_forward::<T>(&broken, inputs)?,
        }),
        other: fused_forward::<U>(spec, inputs)?,
        other_rows: rows_forward::<U>(spec, inputs)?,
        arithmetic: Arithmetic::Own,
    };
    let h = inputs.x.mapv(T::from_f64);
    let hu = inputs.x.mapv(U::from_f64);
    let c = run_check(subject, h.view(), hu.view(), perms, target, watch)?;
    Ok((
        SymmetryResult {
            report: c.report,
            weight_form: c.weight_form,
            controls: c.controls,
            diagnosis: c.diagnosis?,
        },
        c.timings,
    ))
}

/// What a check compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `f(ΠH) = Π f(H)`.
    Equivariance,
    /// `f(ΠH) = f(H)` (the layer reads its output out).
    Invariance,
    /// What a causal layer guarantees: permuting the first t rows leaves the outputs at
    /// positions ≥ t unchanged (`f(Π_<t H)[t..] = f(H)[t..]`, the permutations fix rows ≥ t),
    /// and the outputs before a cut do not move when the tokens from the cut on change.
    Causal {
        /// The prefix length.
        t: usize,
    },
}

impl Target {
    /// The property of the main check.
    pub fn property(self) -> Property {
        match self {
            Target::Equivariance => Property::Equivariance,
            Target::Invariance => Property::Invariance,
            Target::Causal { .. } => Property::PrefixInvariance,
        }
    }

    /// The first output row compared.
    fn rows_from(self) -> usize {
        match self {
            Target::Causal { t } => t,
            _ => 0,
        }
    }
}

/// Whose arithmetic a layer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arithmetic {
    /// attnlab's own layers: deterministic and exactly in their dtype (the identity control
    /// reuses `f(H)`; no lower-precision conclusion; errors are the layer's own).
    Own,
    /// A caller's function or module: it may be nondeterministic (the identity control
    /// recomputes `f(H)`), may compute internally in a lower precision
    /// ([`Diagnosis::classify_foreign`]), may fail on the other precision (the diagnosis is then
    /// unavailable, not an error), and its errors name the stage of the check.
    Foreign,
}

/// The negative control's layer: broken on purpose.
pub struct Broken<'a, T: Real> {
    /// The control's name in the report.
    pub name: String,
    /// The stage an error of it is reported in.
    pub stage: String,
    /// Its forward pass.
    pub forward: ForwardAt<'a, T>,
    /// The same layer computing only given output rows, bit-identical to those rows of
    /// `forward` (attnlab's attention): a long sequence's control compares a [`RowSample`].
    pub rows: Option<RowsAt<'a, T>>,
}

/// A forward pass computing only given output rows ([`LayerRowsAt`]).
pub type RowsAt<'a, T> = Box<LayerRowsAt<'a, T>>;

/// The layer under test as [`run_check`] calls it: in the check's dtype `T`, broken on purpose,
/// and in the other dtype `U` (the diagnosis).
pub struct Subject<'a, T: Real, U: Real> {
    /// The layer in the check's dtype (it may hand back every head's weights: the weight form).
    pub check: ForwardAt<'a, T>,
    /// The negative control (none when the sequence has a single position).
    pub broken: Option<Broken<'a, T>>,
    /// The layer in the other dtype.
    pub other: ForwardAt<'a, U>,
    /// The layer in the other dtype computing only given output rows, bit-identical to those
    /// rows of `other`: a long sequence's diagnosis compares a [`RowSample`].
    pub other_rows: Option<RowsAt<'a, U>>,
    /// Whose arithmetic.
    pub arithmetic: Arithmetic,
}

/// Everything [`run_check`] found.
#[derive(Debug)]
pub struct Checked {
    /// The main check (its tolerance re-sized to the layer's internal precision when the
    /// diagnosis finds a lower one).
    pub report: CheckReport,
    /// The weight form (worst head), when the layer returned its weights.
    pub weight_form: Option<CheckReport>,
    /// Identity and broken-layer controls.
    pub controls: Vec<Control>,
    /// Whether the negative control failed to break.
    pub negative_held: bool,
    /// The diagnosis, or why the other precision could not be evaluated (a foreign layer).
    pub diagnosis: Result<Diagnosis>,
    /// Future independence: the causal check's second half, or, when an unmasked foreign
    /// layer's equivariance breaks, its dependence pattern (holds = the outputs never depend
    /// on later positions: the layer looks causal).
    pub future: Option<CheckReport>,
    /// Seconds per part.
    pub timings: SymmetryTimings,
}

/// The cuts the future-independence check changes the tokens from: 1, n/2 and n − 1.
pub fn future_cuts(n: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = [1, n / 2, n.saturating_sub(1)]
        .into_iter()
        .filter(|&c| c >= 1 && c < n)
        .collect();
    cuts.dedup();
    cuts
}

/// The lower precisions every entry of `a` is exact in (a layer that casts its result from
/// float32, float16 or bfloat16).
fn exact_in<T: Real>(a: &ndarray::Array2<T>) -> Vec<Dtype> {
    [Dtype::F32, Dtype::F16, Dtype::Bf16]
        .into_iter()
        .filter(|p| {
            p.eps() > T::EPSILON.to_f64() && a.iter().all(|v| p.round(v.to_f64()) == v.to_f64())
        })
        .collect()
}

/// The one check runner (the CLI's `equivariance`, Python's `check_equivariance`, the lab, the
/// model's layers): the check over `perms` (for [`Target::Causal`], permutations of all n rows
/// that fix rows ≥ t), the weight form from the same forwards, the identity and broken-layer
/// controls, the causal check's future independence, and the diagnosis — the same check on
/// `hu` (the other precision's copy of `h`) in `U`. Conclusions beyond round-off and
/// structure: a failed identity control is nondeterminism (verdict `undecided`, no verdict on
/// symmetry); a foreign layer's error at a lower precision's round-off re-sizes the tolerance
/// to that precision ([`Diagnosis::classify_foreign`]).
///
/// # Errors
/// Whatever a forward or `watch.cancel` returns (a foreign layer's failure in the other
/// precision is kept in [`Checked::diagnosis`] instead).
pub fn run_check<T: Real, U: Real>(
    subject: Subject<'_, T, U>,
    h: ArrayView2<T>,
    hu: ArrayView2<U>,
    perms: Perms<'_>,
    target: Target,
    watch: &Watch<'_>,
) -> Result<Checked> {
    let Subject {
        mut check,
        broken,
        mut other,
        mut other_rows,
        arithmetic,
    } = subject;
    let foreign = arithmetic == Arithmetic::Foreign;
    let staged = |stage: &str, e: Error| {
        if foreign && e.kind() != crate::ErrorKind::Cancelled {
            e.context(format!("in {stage}"))
        } else {
            e
        }
    };
    let n = h.nrows();
    let property = target.property();
    let rows_from = target.rows_from();
    // One position has no non-identity permutation, so no broken layer can show anything.
    let broken = broken.filter(|_| n >= 2);
    let stages = if broken.is_some() { 3 } else { 2 };
    let mut timings = SymmetryTimings::default();

    // The check (and the weight form from the same forwards).
    let mut tick = stage_tick(watch, "equivariance check", 0, stages, perms.len());
    let equation = format!("the check {}", property.equation());
    let pass = shared_pass_at(&mut *check, h, perms, false, property, rows_from, &mut tick)
        .map_err(|e| staged(&equation, e))?;
    timings.forwards_s = pass.times.forwards;
    timings.comparisons_s = pass.times.outputs;
    timings.weight_form_s = pass.times.weights;
    let mut weight_form: Option<CheckReport> = None;
    for r in &pass.weight_heads {
        if weight_form.as_ref().is_none_or(|b| r.margin > b.margin) {
            weight_form = Some(r.clone());
        }
    }
    // A long sequence's controls and diagnosis compare a sample of rows (the check's worst
    // among them) where the layer computes rows alone, bit-identical to the whole output's.
    let sample = (target == Target::Equivariance && n > RowSample::ABOVE)
        .then(|| RowSample::rows_of(n, pass.report.worst.row));
    let sampled = |rows: &Vec<usize>| RowSample {
        rows: rows.len(),
        of: n,
    };

    // Controls: the identity (from the check's own f(H), or recomputed for a foreign layer);
    // the broken layer, its own forwards.
    let t = std::time::Instant::now();
    let identity = if foreign {
        identity_recomputed(&mut *check, h, &pass, rows_from)
            .map_err(|e| staged("the positive control (identity permutation)", e))?
    } else {
        identity_check(&pass, n)
    };
    let mut controls = vec![Control::identity(&identity)];
    let mut negative_held = false;
    if let Some(mut b) = broken {
        let owned;
        let broken_perms = if perms.non_identity_count() == 0 {
            owned = match target {
                Target::Causal { t } => non_identity(&[], t)?
                    .into_iter()
                    .map(|p| Permutation::new(p.as_slice().iter().copied().chain(t..n).collect()))
                    .collect::<Result<Vec<_>>>()?,
                _ => non_identity(&[], n)?,
            };
            Perms::List(&owned)
        } else {
            perms
        };
        let count = broken_perms.non_identity_count();
        let mut tick = stage_tick(watch, "broken-layer control", 1, stages, count);
        let (r, rows) = match (b.rows.as_mut(), &sample) {
            (Some(f), Some(rows)) => (
                sampled_pass_at(&mut **f, h, broken_perms, true, rows, None, &mut tick),
                Some(sampled(rows)),
            ),
            _ => (
                shared_pass_at(
                    &mut *b.forward,
                    h,
                    broken_perms,
                    true,
                    property,
                    rows_from,
                    &mut tick,
                )
                .map(|p| p.report),
                None,
            ),
        };
        let r = r.map_err(|e| staged(&b.stage, e))?;
        negative_held = r.holds;
        controls.push(Control {
            sampled_rows: rows,
            ..Control::broken(b.name, &r)
        });
    }
    // Future independence: the causal check's other half; for a foreign layer whose
    // equivariance breaks, the dependence pattern (does it look causal?).
    let wants_future = match target {
        Target::Causal { .. } => true,
        Target::Equivariance => foreign && !pass.report.holds && n >= 2,
        Target::Invariance => false,
    };
    let future = if wants_future {
        (watch.cancel)()?;
        Some(
            future_pass(&mut *check, h, &pass.base, &future_cuts(n))
                .map_err(|e| staged("the future-independence check", e))?,
        )
    } else {
        None
    };
    timings.controls_s = t.elapsed().as_secs_f64();
    let exact = if foreign {
        exact_in(&pass.base.output)
    } else {
        Vec::new()
    };
    let mut report = pass.report;
    // f(H) and the layer stay for the reproducibility test of a lower-precision reading.
    let base = pass.base;

    // The diagnosis: the same check in the other float type.
    let t = std::time::Instant::now();
    let other_name = if U::DTYPE == Dtype::F64 {
        "f64 diagnosis"
    } else {
        "f32 diagnosis"
    };
    let mut tick = stage_tick(watch, other_name, stages - 1, stages, perms.len());
    // The whole f(H)'s scale is the check's (the other precision's differs in its last bits).
    let (other_pass, other_rows_sample) = match (other_rows.as_mut(), &sample) {
        (Some(f), Some(rows)) => (
            sampled_pass_at(
                &mut **f,
                hu,
                perms,
                false,
                rows,
                Some(report.tolerance_detail.scale),
                &mut tick,
            )
            .map(|r| (r, None)),
            Some(sampled(rows)),
        ),
        _ => (
            shared_pass_at(
                &mut *other,
                hu,
                perms,
                false,
                property,
                rows_from,
                &mut tick,
            )
            .map(|o| (o.report, Some(o.base))),
            None,
        ),
    };
    timings.diagnosis_s = t.elapsed().as_secs_f64();
    (watch.progress)(other_name, 1.0);
    let identity_ok = controls[0].ok;
    let diagnosis = match other_pass {
        Ok((o_report, o_base)) => {
            let (e32, e64, tol64) = if U::DTYPE == Dtype::F64 {
                (
                    report.max_abs_error,
                    o_report.max_abs_error,
                    &o_report.tolerance_detail,
                )
            } else {
                (
                    o_report.max_abs_error,
                    report.max_abs_error,
                    &report.tolerance_detail,
                )
            };
            let mut d = if !identity_ok {
                Diagnosis::nondeterministic(e32, e64)
            } else if foreign {
                Diagnosis::classify_foreign(e32, e64, tol64, &exact)
            } else {
                Diagnosis::classify(e32, e64, tol64.value)
            };
            // An error the size of a lower precision's round-off may still be structure (an
            // index bias of 1e-6 is that size at scale 1): structure is a property of the
            // function and shows entry by entry in both precisions; round-off is another draw
            // in each. A layer whose output is exact in the lower precision (it casts its
            // result) runs the same arithmetic in both, so it needs no such test.
            if d.conclusion == Conclusion::LowerPrecision
                && d.internal.is_some_and(|p| !exact.contains(&p))
            {
                let perm = report.worst.perm.clone();
                let et = error_matrix(&mut *check, h, &base, &perm, property, rows_from);
                let eu = match &o_base {
                    Some(ob) => error_matrix(&mut *other, hu, ob, &perm, property, rows_from),
                    None => Err(Error::invalid("diagnosis", "a row sample", "whole outputs")),
                };
                if let (Ok(et), Ok(eu)) = (et, eu) {
                    if Diagnosis::reproduces(&et, &eu) {
                        d.conclusion = Conclusion::Structural;
                        d.internal = None;
                    }
                }
            }
            d.sampled_rows = other_rows_sample;
            Ok(d)
        }
        Err(e) if e.kind() == crate::ErrorKind::Cancelled || !foreign => return Err(e),
        Err(e) => Err(e),
    };
    if !identity_ok {
        report.holds = false;
        report.verdict = Verdict::Undecided;
    } else if let Ok(Diagnosis {
        internal: Some(p), ..
    }) = &diagnosis
    {
        if p.eps() > T::EPSILON.to_f64() {
            let d = &report.tolerance_detail;
            let tol = Tolerance::for_eps(p.eps(), d.n, d.d, d.scale);
            report.tolerance = tol.value;
            report.margin = report.max_abs_error / tol.value;
            report.holds = report.max_abs_error <= tol.value;
            report.verdict = Verdict::from_holds(report.holds);
            report.tolerance_detail = tol;
        }
    }
    Ok(Checked {
        report,
        weight_form,
        controls,
        negative_held,
        diagnosis,
        future,
        timings,
    })
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

    /// Past [`RowSample::ABOVE`] positions the broken-layer control and the diagnosis compare
    /// a row sample: exactly the whole comparison's numbers on those rows (each row is computed
    /// alone, bit for bit), with the check's worst row among them; the conclusions stand.
    #[test]
    fn a_long_sequence_compares_a_row_sample_with_the_whole_comparisons_numbers() {
        let n = RowSample::ABOVE + 44;
        let inputs = InputSpec {
            n: Some(n),
            dim: Some(8),
            heads: 2,
            seed: 3,
            ..InputSpec::default()
        }
        .build()
        .unwrap();
        let watch = Watch {
            cancel: &|| Ok(()),
            progress: &|_, _| {},
        };
        let perms = Permutation::random(n, 2, 4, true).unwrap();
        for (pos, structural) in [(PosKind::None, false), (PosKind::Index, true)] {
            let spec = LayerSpec {
                pos,
                index_scale: 1.0,
                ..LayerSpec::default()
            };
            let (r, _) =
                symmetry_observed(&spec, &inputs, Perms::List(&perms), Dtype::F32, &watch).unwrap();
            let rows = RowSample::rows_of(n, r.report.worst.row);
            let sample = Some(RowSample {
                rows: rows.len(),
                of: n,
            });
            assert!(rows.contains(&r.report.worst.row) && rows.len() >= RowSample::ROWS - 1);
            assert_eq!(
                (r.diagnosis.sampled_rows, r.controls[1].sampled_rows),
                (sample, sample)
            );
            assert_eq!(r.controls[0].sampled_rows, None);
            // The whole f64 comparison restricted to the sampled rows, by hand.
            let f = spec.build_fused_at::<f64>(&inputs).unwrap();
            let mut e64 = 0.0f64;
            for p in &perms {
                let px = p.apply_rows(inputs.x.view()).unwrap();
                let (lhs, rhs) = (
                    f(px.view(), p.as_slice()).unwrap(),
                    f(inputs.x.view(), &[]).unwrap(),
                );
                for &i in &rows {
                    let pi = p.as_slice()[i];
                    for j in 0..lhs.ncols() {
                        e64 = e64.max((lhs[[i, j]] - rhs[[pi, j]]).abs());
                    }
                }
            }
            assert_eq!(r.diagnosis.f64_error, e64, "{pos:?}");
            // A lower bound of the whole comparison's error.
            let whole_fn = |x: ArrayView2<f64>| f(x, &[]);
            let whole = check_equivariance(whole_fn, inputs.x.view(), &perms).unwrap();
            assert!(e64 <= whole.max_abs_error);
            let expected = if structural {
                Conclusion::Structural
            } else {
                Conclusion::RoundOff
            };
            assert_eq!(
                r.diagnosis.conclusion, expected,
                "{pos:?}: {:?}",
                r.diagnosis
            );
            assert!(
                r.controls[1].ok,
                "the broken layer breaks on the sample too"
            );
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
