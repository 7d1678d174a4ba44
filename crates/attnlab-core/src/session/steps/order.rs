//! Steps 2–6: bare attention is order-blind (equivariant), which readouts forget the order, the
//! RNN that is not, and a positional signal that breaks the symmetry (checkpoint 2 of seed 002,
//! exercises 1–3 of seed 000).

use ndarray::ArrayView2;

use super::super::answer::{Answer, AnswerKind};
use super::super::engine::{Observation, Step};
use super::super::evidence::{Compared, Evidence};
use super::super::param::{Param, ParamKind, Settings};
use super::{check, choices, perm_param, yes_no};
use crate::experiment;
use crate::layer::{LayerKind, LayerSpec, PosKind, Readout};
use crate::number::{sci, short};
use crate::numeric::Dtype;
use crate::symmetry::{check_equivariance, check_invariance, Permutation};
use crate::Result;

fn reversed(pair: &str) -> String {
    pair.split_whitespace().rev().collect::<Vec<_>>().join(" ")
}

fn pair_param() -> Param {
    Param {
        name: "pair",
        what: "the two tokens, in their first order",
        kind: ParamKind::Pair,
        default: "A B",
    }
}

/// Step 2: Attn(PH) = P·Attn(H) for bare attention, with the f32/f64 diagnosis that tells
/// round-off from structure.
pub(super) fn shuffle_attention() -> Step {
    Step {
        id: "shuffle_attention",
        hint: "Q = H·Wq acts on each row of H separately. What does permuting the rows of H do to the rows of Q, K and V, and to the entries within each row of Q·Kᵀ?",
        title: "Shuffling bare attention",
        varied: "the order of the 4 input tokens (the permutation P)",
        fixed: "bare attention (no mask, no positions), Wq, Wk, Wv and X of the course program (np.random.seed(0)), f64",
        params: vec![perm_param("2,0,3,1")],
        question: |s| Ok(format!(
            "Shuffle the input rows of bare attention with P = [{}]. Does the output follow the shuffle, Attn(PH) = P·Attn(H), to round-off?",
            s.raw("perm")?
        )),
        kind: yes_no,
        run: |s, h| {
            let inputs = h.seed_program(4)?;
            let p = s.perm("perm", 4)?;
            let r = experiment::symmetry(&LayerSpec::default(), &inputs, std::slice::from_ref(&p), Dtype::F64)?;
            let rep = &r.report;
            let evidence = vec![
                Evidence::check(None, rep),
                Evidence::Diagnosis {
                    conclusion: r.diagnosis.conclusion,
                    f32_error: r.diagnosis.f32_error,
                    f64_error: r.diagnosis.f64_error,
                },
            ];
            let explanation = if rep.holds {
                format!(
                    "Q, K and V are row-wise products, so P relabels the rows of the scores and the entries within each row, which the row softmax ignores: the output rows move with their tokens (difference {}, {} of the tolerance).",
                    sci(rep.max_abs_error), sci(rep.margin)
                )
            } else {
                format!("The check failed with margin {}: bare attention should be equivariant — this is a bug to report.", sci(rep.margin))
            };
            Ok(Observation { result: Answer::YesNo(rep.holds), evidence, explanation })
        },
    }
}

fn swap_kind(_: &Settings) -> Result<AnswerKind> {
    Ok(choices(&[
        ("a", "They stay where they were: Attn(BA) = Attn(AB)."),
        (
            "b",
            "They swap: row 0 of Attn(BA) is row 1 of Attn(AB), and row 1 is row 0.",
        ),
        ("c", "Neither: both rows change into something new."),
    ]))
}

/// Step 3, checkpoint 2 of seed 002: the two output rows of AB and BA swap (equivariance), they
/// do not stay put (invariance).
pub(super) fn swap_two_tokens() -> Step {
    Step {
        id: "swap_two_tokens",
        hint: "Equivariance says Attn(ΠH) = Π·Attn(H). Which Π turns AB into BA, and what does it do to the rows of a matrix?",
        title: "The swapped two-token input (checkpoint 2)",
        varied: "the order of the two tokens (AB → BA)",
        fixed: "the embedding table E, bare attention with Wq, Wk, Wv drawn with seed 0 (std), no mask, no positions",
        params: vec![pair_param()],
        question: |s| {
            let p = s.raw("pair")?;
            Ok(format!(
                "Embed \"{p}\" with the table E and run bare attention. Then feed the same tokens in the other order, \"{}\". What happens to the two output rows?",
                reversed(p)
            ))
        },
        kind: swap_kind,
        run: |s, h| {
            let p = s.raw("pair")?;
            let inputs = h.text_input(p)?;
            let spec = LayerSpec::default();
            let f = spec.build::<f64>(&inputs)?;
            let swap = Permutation::new(vec![1, 0])?;
            let h = inputs.x.view();
            let eq = check_equivariance(|x: ArrayView2<f64>| f(x), h, std::slice::from_ref(&swap))?;
            let fixed = check_invariance(|x: ArrayView2<f64>| f(x), h, std::slice::from_ref(&swap))?;
            let out = f(h)?;
            let out_swapped = f(swap.apply_rows(h)?.view())?;
            let key = match (eq.holds, fixed.holds) {
                (true, _) => "b",
                (false, true) => "a",
                (false, false) => "c",
            };
            let evidence = vec![
                Evidence::Output { tokens: p.to_string(), readout: Readout::None, rows: Evidence::rows(&out) },
                Evidence::Output { tokens: reversed(p), readout: Readout::None, rows: Evidence::rows(&out_swapped) },
                Evidence::Difference { between: Compared::SwappedRows, max_abs: eq.max_abs_error },
                Evidence::Difference { between: Compared::SameRows, max_abs: fixed.max_abs_error },
                Evidence::Tolerance { value: eq.tolerance, derivation: None },
            ];
            let explanation = if key == "b" {
                format!(
                    "Equivariance says each token's output row travels with the token, so the rows swap (difference {}); they do not stay fixed (they differ by {}).",
                    sci(eq.max_abs_error), sci(fixed.max_abs_error)
                )
            } else {
                format!("The rows did not simply swap (difference {}): bare attention should be equivariant — a bug to report.", sci(eq.max_abs_error))
            };
            Ok(Observation { result: Answer::Choice(key.into()), evidence, explanation })
        },
    }
}

fn readout_kind(_: &Settings) -> Result<AnswerKind> {
    Ok(choices(&[
        ("a", "Only the mean over positions."),
        ("b", "Only row 0."),
        ("c", "Both."),
        ("d", "Neither."),
    ]))
}

/// Step 4: the mean readout is invariant under the swap, the row-0 readout is not.
pub(super) fn readouts() -> Step {
    Step {
        id: "readouts",
        hint: "Which readout depends on where each row sits, and which only on the set of rows?",
        title: "Mean vs row readout for AB and BA",
        varied: "the order of the two tokens, and the readout (mean over positions or row 0)",
        fixed: "the embedding table E, bare attention with Wq, Wk, Wv drawn with seed 0 (std)",
        params: vec![pair_param()],
        question: |s| {
            let p = s.raw("pair")?;
            Ok(format!(
                "Read the attention output out in two ways: the mean over positions, and row 0. Which readout gives the same value for \"{p}\" and \"{}\"?",
                reversed(p)
            ))
        },
        kind: readout_kind,
        run: |s, h| {
            let p = s.raw("pair")?;
            let inputs = h.text_input(p)?;
            let swap = Permutation::new(vec![1, 0])?;
            let mut evidence = Vec::new();
            let mut same = Vec::new();
            for readout in [Readout::Mean, Readout::Row(0)] {
                let spec = LayerSpec {
                    readout,
                    ..LayerSpec::default()
                };
                let r = check(&spec, &inputs, std::slice::from_ref(&swap))?;
                let f = spec.build::<f64>(&inputs)?;
                let a = f(inputs.x.view())?;
                let b = f(swap.apply_rows(inputs.x.view())?.view())?;
                evidence.push(Evidence::Output {
                    tokens: p.to_string(),
                    readout,
                    rows: Evidence::rows(&a),
                });
                evidence.push(Evidence::Output {
                    tokens: reversed(p),
                    readout,
                    rows: Evidence::rows(&b),
                });
                evidence.push(Evidence::Difference {
                    between: Compared::BothOrders {
                        readout,
                        tolerance: r.tolerance,
                    },
                    max_abs: r.max_abs_error,
                });
                same.push((r.holds, r.max_abs_error));
            }
            let key = match (same[0].0, same[1].0) {
                (true, false) => "a",
                (false, true) => "b",
                (true, true) => "c",
                (false, false) => "d",
            };
            let explanation = format!(
                "The mean forgets where each row sat, so it is the same for both orders (difference {}); row 0 is the output of whichever token comes first, which changes with the order (difference {}).",
                sci(same[0].1),
                sci(same[1].1)
            );
            Ok(Observation {
                result: Answer::Choice(key.into()),
                evidence,
                explanation,
            })
        },
    }
}

/// Step 5: an Elman RNN is not equivariant — each hidden state is built from the ones before.
pub(super) fn rnn_shuffle() -> Step {
    Step {
        id: "rnn_shuffle",
        hint: "h_t is built from h_{t−1}. What was the first hidden state computed from before the shuffle, and after it?",
        title: "The RNN contrast",
        varied: "the order of the 4 input tokens (the permutation P)",
        fixed: "an Elman RNN h_t = tanh(x_t·Wx + h_{t−1}·Wh), Wx and Wh drawn after the course program's matrices (scaled by 1/√d), the same X, f64",
        params: vec![perm_param("2,0,3,1")],
        question: |s| Ok(format!(
            "Run an Elman RNN on the same 4 tokens, then on the tokens shuffled with P = [{}]. Does its output follow the shuffle, RNN(PH) = P·RNN(H)?",
            s.raw("perm")?
        )),
        kind: yes_no,
        run: |s, h| {
            let inputs = h.seed_program(4)?;
            let spec = LayerSpec { kind: LayerKind::Rnn, ..LayerSpec::default() };
            let r = check(&spec, &inputs, &[s.perm("perm", 4)?])?;
            let explanation = if r.holds {
                "This P leaves every token where it was, so nothing changes — choose a P that moves tokens to see the contrast.".to_string()
            } else {
                format!(
                    "Each hidden state is built from the tokens before it, so a shuffle changes what every later state was computed from: the difference is {} times the round-off tolerance — structure, not round-off.",
                    sci(r.margin)
                )
            };
            Ok(Observation { result: Answer::YesNo(r.holds), evidence: vec![Evidence::check(None, &r)], explanation })
        },
    }
}

/// Step 6: the index signal p·scale is attached to the slot, so a shuffle no longer just moves
/// the rows.
pub(super) fn index_signal() -> Step {
    Step {
        id: "index_signal",
        hint: "The signal is attached to the slot p, not to the token. After the shuffle, which index does each token carry?",
        title: "Adding a positional signal",
        varied: "the scale of the index signal (p·scale added to every component of row p)",
        fixed: "bare attention and the input of the course program, the shuffle P = [2,0,3,1], f64",
        params: vec![Param {
            name: "scale",
            what: "the scale of the index signal",
            kind: ParamKind::Real,
            default: "0.1",
        }],
        question: |s| {
            Ok(format!(
            "Add the signal p·{} to every component of row p before attention, then shuffle the tokens with P = [2,0,3,1]. Does the layer still satisfy f(PH) = P·f(H)?",
            s.raw("scale")?
        ))
        },
        kind: yes_no,
        run: |s, h| {
            let inputs = h.seed_program(4)?;
            let scale = s.real("scale")?;
            let spec = LayerSpec {
                pos: PosKind::Index,
                index_scale: scale,
                ..LayerSpec::default()
            };
            let r = check(&spec, &inputs, &[Permutation::parse("2,0,3,1", 4)?])?;
            let explanation = if r.holds {
                format!("A signal of scale {} adds the same to every row or nothing at all, so the layer is still order-blind (margin {}).", short(scale), sci(r.margin))
            } else {
                format!(
                    "The signal belongs to the slot, not the token: after the shuffle each token carries its new slot's index, so the rows no longer just move (difference {} times the tolerance).",
                    sci(r.margin)
                )
            };
            Ok(Observation {
                result: Answer::YesNo(r.holds),
                evidence: vec![Evidence::check(None, &r)],
                explanation,
            })
        },
    }
}
