//! Steps 7–9: the causal mask breaks equivariance, hides the future from earlier outputs, and
//! sees the prefix as a set (access, not distance).

use ndarray::ArrayView2;

use super::super::answer::Answer;
use super::super::engine::{Observation, Step};
use super::super::evidence::Evidence;
use super::super::param::{Param, ParamKind};
use super::{check, perm_param, yes_no};
use crate::attention::Mask;
use crate::layer::LayerSpec;
use crate::number::sci;
use crate::rng::{Gaussian, StdGaussian};
use crate::symmetry::{check_future_independence, check_prefix_invariance, Permutation};

fn causal() -> LayerSpec {
    LayerSpec {
        mask: Mask::Causal,
        ..LayerSpec::default()
    }
}

/// Step 7: with a causal mask, Attn(PH) = P·Attn(H) fails — the mask is attached to the slots.
pub(super) fn causal_equivariance() -> Step {
    Step {
        id: "causal_equivariance",
        hint: "Which keys can the token that lands in slot 0 see, compared with what it saw before the shuffle?",
        title: "The causal mask and equivariance",
        varied: "the order of the 4 input tokens (the permutation P)",
        fixed: "attention with a causal mask (query i sees keys j ≤ i), no positions, the course program's input, f64",
        params: vec![perm_param("2,0,3,1")],
        question: |s| Ok(format!(
            "Add a causal mask (query i sees keys j ≤ i), no positional signal. Shuffle with P = [{}]. Does Attn(PH) = P·Attn(H) still hold?",
            s.raw("perm")?
        )),
        kind: yes_no,
        run: |s, h| {
            let inputs = h.seed_program(4)?;
            let r = check(&causal(), &inputs, &[s.perm("perm", 4)?])?;
            let explanation = if r.holds {
                "This P leaves every token where it was, so nothing changes — choose a P that moves tokens.".to_string()
            } else {
                format!(
                    "The mask is attached to the slots: after the shuffle a token sees a different set of earlier tokens, so the mask already breaks the symmetry (difference {} times the tolerance).",
                    sci(r.margin)
                )
            };
            Ok(Observation { result: Answer::YesNo(r.holds), evidence: vec![Evidence::check(None, &r)], explanation })
        },
    }
}

/// Step 8: f(H')[..t] = f(H)[..t] when H' replaces the rows ≥ t — a query only sees keys at or
/// before its own position.
pub(super) fn causal_future() -> Step {
    Step {
        id: "causal_future",
        hint: "Which keys enter the softmax of a query at a position i < t?",
        title: "The causal mask: are earlier outputs blind to later tokens?",
        varied:
            "the cut t: the tokens at positions ≥ t are replaced by new random vectors (std seed 1)",
        fixed: "attention with a causal mask, no positions, the course program's input, f64",
        params: vec![Param {
            name: "t",
            what: "the first position whose token is replaced",
            kind: ParamKind::Position { min: 1, n: 4 },
            default: "2",
        }],
        question: |s| {
            let t = s.raw("t")?;
            Ok(format!(
                "With the causal mask, replace the tokens at positions ≥ {t} by new random vectors. Are the outputs at positions < {t} unchanged (to round-off)?"
            ))
        },
        kind: yes_no,
        run: |s, h| {
            let inputs = h.seed_program(4)?;
            let t = s.count("t")?;
            let spec = causal();
            let f = spec.build::<f64>(&inputs)?;
            let (n, d) = inputs.x.dim();
            let replacement = StdGaussian::new(1).randn(n - t, d);
            let r = check_future_independence(
                |x: ArrayView2<f64>| f(x),
                inputs.x.view(),
                t,
                replacement.view(),
            )?;
            let explanation = if r.holds {
                format!(
                    "A query at a position before {t} takes its softmax only over keys at or before its own position, none of which changed: the outputs differ by at most {}.",
                    sci(r.max_abs_error)
                )
            } else {
                format!("Earlier outputs moved by {} times the tolerance: the mask leaks the future — a bug to report.", sci(r.margin))
            };
            Ok(Observation {
                result: Answer::YesNo(r.holds),
                evidence: vec![Evidence::check(None, &r)],
                explanation,
            })
        },
    }
}

/// Step 9: f(Π_<t H)[t..] = f(H)[t..] for every reordering of the first t tokens — the mask says
/// which tokens came before, not in what order. The answer is whether the outputs *change*.
pub(super) fn causal_prefix() -> Step {
    Step {
        id: "causal_prefix",
        hint: "The query at position t sees the keys at 0..t. Does reordering keys together with their values change a softmax-weighted sum?",
        title: "The causal mask gives access, not distance",
        varied: "the prefix length t: every reordering of the first t tokens",
        fixed: "attention with a causal mask, no positions, the course program's input, f64",
        params: vec![Param {
            name: "t",
            what: "how many leading tokens are reordered",
            kind: ParamKind::Position { min: 2, n: 4 },
            default: "3",
        }],
        question: |s| {
            let t = s.raw("t")?;
            Ok(format!(
                "With the causal mask and no positional signal, reorder the first {t} tokens (every reordering). Do the outputs at positions ≥ {t} change?"
            ))
        },
        kind: yes_no,
        run: |s, h| {
            let inputs = h.seed_program(4)?;
            let t = s.count("t")?;
            let spec = causal();
            let f = spec.build::<f64>(&inputs)?;
            let perms: Vec<Permutation> = Permutation::all(t)?
                .into_iter()
                .filter(|p| !p.is_identity())
                .collect();
            let r = check_prefix_invariance(|x: ArrayView2<f64>| f(x), inputs.x.view(), t, &perms)?;
            let explanation = if r.holds {
                format!(
                    "A query at or after {t} sees the whole prefix as a set — reordering it permutes keys and values together — so its output stays put (difference {}): the mask says which tokens came before, not in what order or how far back, so it does not replace a positional encoding.",
                    sci(r.max_abs_error)
                )
            } else {
                format!("The later outputs moved by {} times the tolerance — unexpected for a causal mask without positions.", sci(r.margin))
            };
            Ok(Observation {
                result: Answer::YesNo(!r.holds),
                evidence: vec![Evidence::check(None, &r)],
                explanation,
            })
        },
    }
}
