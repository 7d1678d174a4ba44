//! Sentences generated from reports: every explanation, verdict line and derivation a user
//! reads is written here, from typed values, with numbers formatted by [`super::number`].
//! The course commands' sentences are in [`course`].

pub mod course;
pub mod rope;
pub mod session;

use super::number::{sci, short};

/// The tolerance derivation of a symmetry check: `k·eps·(n+d)·max|f(H)| = … = value (why)`.
pub fn tolerance_derivation(
    k: f64,
    eps: f64,
    n: usize,
    d: usize,
    scale: f64,
    value: f64,
) -> String {
    format!(
        "k·eps·(n+d)·max|f(H)| = {}·{}·({}+{})·{} = {} (reordered sums of n and d terms, a few roundings each, relative to the output scale)",
        short(k),
        sci(eps),
        n,
        d,
        sci(scale),
        sci(value)
    )
}

impl crate::symmetry::Tolerance {
    /// The formula with its numbers, in words ([`tolerance_derivation`]).
    pub fn derivation(&self) -> String {
        tolerance_derivation(self.k, self.eps, self.n, self.d, self.scale, self.value)
    }
}

/// A tolerance as the reports carry it: its numbers and the derivation sentence.
impl serde::Serialize for crate::symmetry::Tolerance {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Tolerance", 6)?;
        s.serialize_field("value", &self.value)?;
        s.serialize_field("k", &self.k)?;
        s.serialize_field("eps", &self.eps)?;
        s.serialize_field("growth", &self.growth)?;
        s.serialize_field("scale", &self.scale)?;
        s.serialize_field("derivation", &self.derivation())?;
        s.end()
    }
}

/// A largest ulp distance as reports show it: the count, or "opposite signs" when the worst
/// pair differs in sign ([`crate::symmetry::OPPOSITE_SIGNS`]).
pub fn ulps(max_ulps: u64) -> String {
    if max_ulps == crate::symmetry::OPPOSITE_SIGNS {
        "opposite signs".into()
    } else {
        max_ulps.to_string()
    }
}

/// The note of a check whose permutations are all the identity: one token has no other
/// permutation; for n ≥ 2 the identity was chosen (`--perm 0,1,2,3`), though others exist.
pub fn only_identity(n: usize) -> String {
    if n < 2 {
        format!("only the identity permutation exists for n = {n}, so this check cannot show anything about equivariance; use n ≥ 2")
    } else {
        format!("the identity permutation was chosen (it moves none of the n = {n} positions), so this check cannot show anything about equivariance; choose a permutation that moves a position")
    }
}

/// A list of indices as `[2, 0, 3, 1]`.
pub fn index_list(items: &[usize]) -> String {
    let inner: Vec<String> = items.iter().map(usize::to_string).collect();
    format!("[{}]", inner.join(", "))
}

impl crate::experiment::Diagnosis {
    /// One sentence saying why the error is round-off, structure or exact ([`diagnosis`]).
    pub fn explanation(&self) -> String {
        use crate::experiment::Conclusion;
        let why = match (self.conclusion, self.internal) {
            (Conclusion::LowerPrecision, Some(p)) => lower_precision(p),
            _ => diagnosis(self.conclusion, self.ratio, self.eps_ratio),
        };
        match self.sampled_rows {
            Some(r) => format!("{why} (the second precision compared {} of the {} output rows, the first one's worst row among them, each computed alone and bit for bit that row of the whole output)", r.rows, r.of),
            None => why,
        }
    }
}

/// A diagnosis as the reports carry it: its numbers, the conclusion and the sentence
/// (`explanation`, written here from the typed values).
impl serde::Serialize for crate::experiment::Diagnosis {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Diagnosis", 6)?;
        s.serialize_field("f32_error", &self.f32_error)?;
        s.serialize_field("f64_error", &self.f64_error)?;
        s.serialize_field("ratio", &self.ratio)?;
        s.serialize_field("eps_ratio", &self.eps_ratio)?;
        s.serialize_field("conclusion", &self.conclusion)?;
        s.serialize_field("explanation", &self.explanation())?;
        if let Some(p) = self.internal {
            s.serialize_field("internal_dtype", &p)?;
        }
        if let Some(r) = self.sampled_rows {
            s.serialize_field("sampled_rows", &r)?;
        }
        s.end()
    }
}

/// The round-off-or-structure sentence of a symmetry check's f32/f64 diagnosis, with the
/// expert figures (the ratio of the errors, the ratio of the two precisions) and what they mean
/// in plain words.
///
/// ```
/// use attnlab_core::experiment::Conclusion;
/// use attnlab_core::present::prose::diagnosis;
/// let s = diagnosis(Conclusion::RoundOff, 5.369e8, 5.369e8);
/// assert!(s.contains("the error shrank as much as the precision grew, so it is round-off"), "{s}");
/// ```
pub fn diagnosis(conclusion: crate::experiment::Conclusion, ratio: f64, eps_ratio: f64) -> String {
    use crate::experiment::Conclusion;
    // Factors up to 10⁴ read as plain numbers (1.002), larger ones as powers of ten (5.369e8).
    let sci4 = |x: f64| {
        if x.abs() < 1e4 {
            super::number::sig(x, 4)
        } else {
            super::number::format(x, super::number::Style::Scientific(4))
        }
    };
    match conclusion {
        Conclusion::Nondeterministic => "the identity control failed: f(X) ≠ f(X), the same input gave another output, so the layer is nondeterministic and no difference under a permutation says anything about symmetry (no verdict); put the module in eval mode (model.eval(): dropout off) and fix the seeds (torch.manual_seed) before checking".into(),
        Conclusion::LowerPrecision => lower_precision(crate::Dtype::F32),
        Conclusion::Exact => "both precisions give identical results: the transformation reorders no arithmetic at all".into(),
        Conclusion::Structural => format!(
            "the error barely changes from f32 to f64 (it shrinks by a factor {}, while f64 is {} times more precise): the error did not shrink with the precision, so it is a real difference — the layer is not symmetric",
            sci4(ratio),
            sci4(eps_ratio)
        ),
        Conclusion::RoundOff if ratio < 1.0 => format!(
            "the f32 error is no larger than the f64 error (ratio {}) and the f64 error stays below {} × the f64 tolerance: floating-point round-off (or a layer that computes in f64 whatever its input), not structure",
            super::number::sig(ratio, 4),
            super::number::short(crate::experiment::Diagnosis::STRUCTURE_FACTOR)
        ),
        Conclusion::RoundOff => format!(
            "the error falls from f32 to f64 by a factor {} (f64 is {} times more precise; ∞ when f64 is exact): the error shrank as much as the precision grew, so it is round-off, not structure",
            sci4(ratio),
            sci4(eps_ratio)
        ),
    }
}

/// The diagnosis of a layer that computes internally in the lower precision `p`.
pub fn lower_precision(p: crate::Dtype) -> String {
    let name = precision_name(p);
    format!(
        "the error does not fall from f32 to f64, but it sits at {name} round-off in both: the property holds to {name} precision; the layer computes internally in {name} (e.g. a softmax run with dtype=torch.float32), not structure — the tolerance is sized for {name}"
    )
}

/// A dtype as numpy and torch spell it (float32, bfloat16).
pub fn precision_name(p: crate::Dtype) -> &'static str {
    match p {
        crate::Dtype::F32 => "float32",
        crate::Dtype::F64 => "float64",
        crate::Dtype::F16 => "float16",
        crate::Dtype::Bf16 => "bfloat16",
    }
}

/// Why a caller's layer has no f32/f64 diagnosis: it failed on the `other` precision's copy of X.
pub fn diagnosis_unavailable(other: crate::Dtype, error: &crate::Error) -> String {
    let name = match other {
        crate::Dtype::F32 => "float32",
        crate::Dtype::F64 => "float64",
        d => d.name(),
    };
    format!(
        "the layer failed on the {name} copy of X, so round-off cannot be told from structure by comparing precisions ({error})"
    )
}

/// The note of an unmasked check that broke on a layer whose outputs never depend on later
/// positions.
pub fn looks_causal() -> String {
    "the layer looks causal: the check broke, but no output moved when the tokens after it changed (the dependence pattern is lower-triangular); check what a causal layer guarantees with mask=\"causal\" (transformers' sdpa attention is causal when attention_mask is None)".into()
}

/// The note of a check whose negative control did not break.
pub fn negative_control_held() -> String {
    "the negative control did not break: f(X + P) with the index signal P = p·1.0 is still symmetric, so f removes a per-row constant (LayerNorm or mean-centring first) or does not depend on its input that way; this check's verdict is no evidence that f would notice such a positional signal".into()
}

/// The title of a check's difference heat map: left − right-hand side, short enough to share
/// one line with the scale note.
pub fn difference_title(property: crate::symmetry::Property, dtype: crate::Dtype) -> String {
    let sides = match property {
        crate::symmetry::Property::Invariance => "R(f(ΠH)) − R(f(H))",
        crate::symmetry::Property::PrefixInvariance => "f(Π_<t H)[t..] − f(H)[t..]",
        crate::symmetry::Property::WeightEquivariance => "A(ΠH) − Π A(H) Πᵀ",
        _ => "f(ΠH) − Π f(H)",
    };
    format!("{sides}, worst permutation ({dtype})")
}

/// What the colours of a difference heat map are relative to: full colour at ± the larger of
/// the largest difference and the tolerance.
pub fn difference_scale_note(max: f64) -> String {
    format!("full colour at ±{}", sci(max))
}

/// What a margin is, once per output: `margin = max error ÷ tolerance: below 1 the two sides
/// agree to round-off (holds); far above 1 they really differ (breaks).`
pub fn margin_explained() -> String {
    "margin = max error ÷ tolerance: below 1 the two sides agree to round-off (the property holds); far above 1 they really differ (it breaks).".into()
}
