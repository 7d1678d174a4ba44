//! Sentences generated from reports: every explanation, verdict line and derivation a user
//! reads is written here, from typed values, with numbers formatted by [`super::number`].
//! The course commands' sentences are in [`course`].

pub mod course;

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

/// The note of a check on one token, which has only the identity permutation.
pub fn only_identity(n: usize) -> String {
    format!("only the identity permutation exists for n = {n}, so this check cannot show anything about equivariance; use n ≥ 2")
}

/// A list of indices as `[2, 0, 3, 1]`.
pub fn index_list(items: &[usize]) -> String {
    let inner: Vec<String> = items.iter().map(usize::to_string).collect();
    format!("[{}]", inner.join(", "))
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
        Conclusion::Exact => "both precisions give identical results: the transformation reorders no arithmetic at all".into(),
        Conclusion::Structural => format!(
            "the error barely changes from f32 to f64 (it shrinks by a factor {}, while f64 is {} times more precise): the error did not shrink with the precision, so it is a real difference — the layer is not symmetric",
            sci4(ratio),
            sci4(eps_ratio)
        ),
        Conclusion::RoundOff => format!(
            "the error falls from f32 to f64 by a factor {} (f64 is {} times more precise; ∞ when f64 is exact): the error shrank as much as the precision grew, so it is round-off, not structure",
            sci4(ratio),
            sci4(eps_ratio)
        ),
    }
}

/// What a margin is, once per output: `margin = max error ÷ tolerance: below 1 the two sides
/// agree to round-off (holds); far above 1 they really differ (breaks).`
pub fn margin_explained() -> String {
    "margin = max error ÷ tolerance: below 1 the two sides agree to round-off (the property holds); far above 1 they really differ (it breaks).".into()
}

pub mod rope;
pub mod session;
