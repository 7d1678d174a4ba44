//! The course's steps, in order: what each varies and holds fixed, the question, the form of the
//! answer, the computation (through the library's public functions) and the explanation.
//!
//! | # | id | file |
//! |---|---|---|
//! | 1 | `embedding_dim` (checkpoint 1) | [`embedding`] |
//! | 2–6 | `shuffle_attention`, `swap_two_tokens` (checkpoint 2), `readouts`, `rnn_shuffle`, `index_signal` | [`order`] |
//! | 7–9 | `causal_equivariance`, `causal_future`, `causal_prefix` | [`causal`] |
//! | 10–14 | `rope_scores`, `rope_repeat_half_pi` (checkpoint 3), `rope_repeat_chosen`, `rope_resolve`, `values_rotated` | [`rotary`] |
//! | 15 | `challenge` (seed 000's independent challenge) | [`challenge`] |
//!
//! Every number a step shows is computed when it runs; nothing here is a typed-in result.

mod causal;
mod challenge;
mod embedding;
mod order;
mod rotary;

use super::answer::{AnswerKind, ChoiceOption};
use super::engine::Step;
use super::param::{Param, ParamKind, Settings};
use crate::layer::{Inputs, LayerSpec};
use crate::numeric::Dtype;
use crate::symmetry::{CheckReport, Permutation};
use crate::{experiment, Result};

/// The session's steps, in order.
///
/// ```
/// use std::collections::BTreeMap;
/// use attnlab_core::session::{steps, Answer};
/// let step = steps().into_iter().find(|s| s.id == "rope_repeat_chosen").unwrap();
/// // Vary ω: 2π/7 is a seventh of a turn, so it repeats first at s = 7.
/// let set = step.settings(&BTreeMap::from([("omega".into(), "2*pi/7".into())])).unwrap();
/// let record = step.evaluate(&set, &Answer::Integer(7)).unwrap();
/// assert!(record.correct && record.result == Answer::Integer(7));
/// ```
pub fn steps() -> Vec<Step> {
    vec![
        embedding::embedding_dim(),
        order::shuffle_attention(),
        order::swap_two_tokens(),
        order::readouts(),
        order::rnn_shuffle(),
        order::index_signal(),
        causal::causal_equivariance(),
        causal::causal_future(),
        causal::causal_prefix(),
        rotary::rope_scores(),
        rotary::rope_repeat_half_pi(),
        rotary::rope_repeat_chosen(),
        rotary::rope_resolve(),
        rotary::values_rotated(),
        challenge::challenge(),
    ]
}

fn yes_no(_: &Settings) -> Result<AnswerKind> {
    Ok(AnswerKind::YesNo)
}

fn integer(_: &Settings) -> Result<AnswerKind> {
    Ok(AnswerKind::Integer)
}

fn integer_or_none(_: &Settings) -> Result<AnswerKind> {
    Ok(AnswerKind::IntegerOrNone)
}

fn choices(list: &[(&str, &str)]) -> AnswerKind {
    AnswerKind::Choice {
        options: list
            .iter()
            .map(|(k, t)| ChoiceOption {
                key: k.to_string(),
                text: t.to_string(),
            })
            .collect(),
    }
}

/// The shuffle P of the 4 tokens of the course program.
fn perm_param(default: &'static str) -> Param {
    Param {
        name: "perm",
        what: "the shuffle P (row i of PH is row perm[i] of H)",
        kind: ParamKind::Permutation { n: 4 },
        default,
    }
}

/// The check of `spec` over `perms` in f64.
fn check(spec: &LayerSpec, inputs: &Inputs, perms: &[Permutation]) -> Result<CheckReport> {
    experiment::check(spec, inputs, perms, Dtype::F64)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::{Answer, Observation};
    use super::*;

    pub(super) fn run(id: &str, overrides: &[(&str, &str)]) -> Observation {
        let step = steps().into_iter().find(|s| s.id == id).unwrap();
        let o: BTreeMap<String, String> = overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        step.run(&step.settings(&o).unwrap()).unwrap()
    }

    #[test]
    fn step_ids_are_unique_and_every_default_runs() {
        let all = steps();
        let mut ids: Vec<&str> = all.iter().map(|s| s.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len());
        for s in &all {
            let set = s.settings(&BTreeMap::new()).unwrap();
            let q = s.question(&set).unwrap();
            assert!(
                q.ends_with('?') || q.ends_with('.') || q.ends_with(')'),
                "{}: {q}",
                s.id
            );
            let obs = s.run(&set).unwrap();
            // The result has the form the student is asked for.
            let kind = s.answer_kind(&set).unwrap();
            assert!(
                kind.parse(&obs.result.to_string()).is_ok(),
                "{}: {}",
                s.id,
                obs.result
            );
            assert!(
                !obs.explanation.is_empty() && !obs.evidence.is_empty(),
                "{}",
                s.id
            );
            assert!(s.hint.ends_with('?') || s.hint.ends_with('.'), "{}", s.id);
        }
    }

    #[test]
    fn the_seed_s_answers_are_what_the_library_computes() {
        // The answers the seeds give (checkpoints 1–3, exercises 1–3, the challenge), compared
        // with what each step computes at its defaults.
        let want: [(&str, Answer); 15] = [
            ("embedding_dim", Answer::YesNo(false)),
            ("shuffle_attention", Answer::YesNo(true)),
            ("swap_two_tokens", Answer::Choice("b".into())),
            ("readouts", Answer::Choice("a".into())),
            ("rnn_shuffle", Answer::YesNo(false)),
            ("index_signal", Answer::YesNo(false)),
            ("causal_equivariance", Answer::YesNo(false)),
            ("causal_future", Answer::YesNo(true)),
            ("causal_prefix", Answer::YesNo(false)),
            (
                "rope_scores",
                Answer::Numbers(vec![1.0, 0.0, -1.0, 0.0, 1.0]),
            ),
            ("rope_repeat_half_pi", Answer::Integer(4)),
            ("rope_repeat_chosen", Answer::Integer(8)),
            ("rope_resolve", Answer::Integer(12)),
            ("values_rotated", Answer::YesNo(false)),
            ("challenge", Answer::Choice("b".into())),
        ];
        for (id, answer) in want {
            let step = steps().into_iter().find(|s| s.id == id).unwrap();
            let set = step.settings(&BTreeMap::new()).unwrap();
            let rec = step.evaluate(&set, &answer).unwrap();
            assert!(
                rec.correct,
                "{id}: predicted {answer}, computed {} ({})",
                rec.result, rec.grading
            );
        }
    }

    #[test]
    fn settings_are_validated() {
        let s = order::shuffle_attention();
        let bad = BTreeMap::from([("perm".to_string(), "0,0,1,2".to_string())]);
        assert!(s
            .settings(&bad)
            .unwrap_err()
            .to_string()
            .contains("setting perm of step shuffle_attention"));
        let unknown = BTreeMap::from([("omega".to_string(), "pi".to_string())]);
        assert!(s
            .settings(&unknown)
            .unwrap_err()
            .to_string()
            .contains("one of perm"));
    }

    #[test]
    fn varied_quantities_change_the_results() {
        // The identity shuffle cannot break anything; a zero index signal adds nothing.
        assert_eq!(
            run("rnn_shuffle", &[("perm", "0,1,2,3")]).result,
            Answer::YesNo(true)
        );
        assert_eq!(
            run("causal_equivariance", &[("perm", "0,1,2,3")]).result,
            Answer::YesNo(true)
        );
        assert_eq!(
            run("index_signal", &[("scale", "0")]).result,
            Answer::YesNo(true)
        );
        for t in ["1", "3"] {
            assert_eq!(
                run("causal_future", &[("t", t)]).result,
                Answer::YesNo(true)
            );
        }
        assert_eq!(
            run("causal_prefix", &[("t", "2")]).result,
            Answer::YesNo(false)
        );
        assert_eq!(
            run("swap_two_tokens", &[("pair", "B .")]).result,
            Answer::Choice("b".into())
        );
        assert_eq!(
            run("readouts", &[("pair", ". A")]).result,
            Answer::Choice("a".into())
        );
        assert_eq!(
            run("values_rotated", &[("n", "7")]).result,
            Answer::YesNo(false)
        );
    }
}
