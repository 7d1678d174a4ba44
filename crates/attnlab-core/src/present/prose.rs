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

/// The round-off-or-structure sentence of a symmetry check's f32/f64 diagnosis.
pub fn diagnosis(conclusion: crate::experiment::Conclusion, ratio: f64, eps_ratio: f64) -> String {
    use crate::experiment::Conclusion;
    match conclusion {
        Conclusion::Exact => "both precisions give identical results: the transformation reorders no arithmetic at all".into(),
        Conclusion::Structural => format!(
            "the error barely changes from f32 to f64 (ratio {}, round-off would give ≈{}): the layer is not symmetric",
            super::number::sig(ratio, 4),
            super::number::format(eps_ratio, super::number::Style::Scientific(3))
        ),
        Conclusion::RoundOff => format!(
            "the error falls from f32 to f64 by {} (eps ratio {}; ∞ when f64 is exact): it is floating-point round-off, not structure",
            super::number::sig(ratio, 4),
            super::number::format(eps_ratio, super::number::Style::Scientific(3))
        ),
    }
}
pub mod rope;
pub mod session;
