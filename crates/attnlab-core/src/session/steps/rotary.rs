//! Steps 10–14: rotary scores depend on the separation only, cos(s·ω) for aligned unit
//! vectors; the first repeat of a rational ω (checkpoint 3 of seed 002); what a frequency set
//! resolves within a context; values are not rotated.
//!
//! These steps compute with `crate::spectrum`: scores with `identity::score_absolute` (the
//! rotated vectors' dot product, every phase reduced accurately), periods with
//! `period::period`, and resolution with `resolve::resolve`.

use std::collections::BTreeSet;

use ndarray::Array2;

use super::super::answer::{Answer, AnswerKind};
use super::super::engine::{Observation, Step};
use super::super::evidence::{Compared, Evidence};
use super::super::param::{Param, ParamKind, Settings};
use super::{integer, integer_or_none, yes_no};
use crate::layer::{LayerSpec, PosKind};
use crate::number::sci;
use crate::position::frequencies::Omega;
use crate::spectrum::angle::phase;
use crate::spectrum::identity::score_absolute;
use crate::spectrum::period::period;
use crate::spectrum::resolve::{resolve, DEFAULT_TOL};
use crate::symmetry::{compare, Tolerance};
use crate::text::count;
use crate::{Error, Result};

/// The absolute tolerance a predicted score is graded to.
const SCORE_TOLERANCE: f64 = 0.01;

/// The score of `q = k = (1, 0)` after rotating `q` at position 0 and `k` at position `s` in one
/// plane of frequency `ω`: `(R(0)q)ᵀ(R(sω)k) = cos(sω)`.
fn aligned_score(w: Omega, s: i64) -> f64 {
    score_absolute(&[w.value()], &[1.0, 0.0], &[1.0, 0.0], 0.0, s as f64)
}

/// The angle s·ω reduced to (−π, π] and the aligned score at separation `s`.
fn angle(w: Omega, s: i64) -> Evidence {
    Evidence::Angle {
        separation: s,
        phase: phase(s as f64, w.value()),
        score: aligned_score(w, s),
    }
}

fn rope_scores_kind(s: &Settings) -> Result<AnswerKind> {
    Ok(AnswerKind::Numbers {
        count: s.ints("separations")?.len(),
        tolerance: SCORE_TOLERANCE,
    })
}

/// Step 10: the scores cos(s·ω) at the chosen separations.
pub(super) fn rope_scores() -> Step {
    Step {
        id: "rope_scores",
        hint: "R(iω)ᵀR(jω) = R((j−i)ω): the score of aligned unit vectors is the cosine of the angle between them.",
        title: "Rotary scores against separation",
        varied: "the frequency ω and the separations s = j − i",
        fixed: "one rotation plane, q = k = (1, 0), the query at position 0",
        params: vec![
            Param {
                name: "omega",
                what: "the rotation frequency ω (radians per position)",
                kind: ParamKind::Omega { rational: false },
                default: "pi/2",
            },
            Param {
                name: "separations",
                what: "the separations s",
                kind: ParamKind::Separations,
                default: "0,1,2,3,4",
            },
        ],
        question: |s| {
            Ok(format!(
            "Rotate q = (1, 0) at position 0 and k = (1, 0) at position s by their positions' angles (ω = {} per position). Predict the score q'ᵀk' for s = {}.",
            s.raw("omega")?, s.raw("separations")?
        ))
        },
        kind: rope_scores_kind,
        run: |s, _| {
            let w = s.omega("omega")?;
            let seps = s.ints("separations")?;
            let scores: Vec<f64> = seps.iter().map(|&sep| aligned_score(w, sep)).collect();
            let result = Answer::Numbers(scores);
            Ok(Observation {
                evidence: seps.iter().map(|&sep| angle(w, sep)).collect(),
                explanation: format!(
                    "Rotations compose, R(iω)ᵀR(jω) = R((j−i)ω), so for aligned unit vectors the score is cos(s·ω): {} at ω = {}.",
                    result, w.label()
                ),
                result,
            })
        },
    }
}

/// The first repeat of a rational ω = 2π·a/b: b, the first s with s·a/b a whole number.
fn repeat_observation(w: Omega) -> Result<Observation> {
    let (a, b) = w.turns_fraction().ok_or_else(|| {
        Error::invalid(
            "frequency",
            w.label(),
            "a rational multiple of pi (it never repeats exactly otherwise)",
        )
    })?;
    let report = period(w, DEFAULT_TOL, b.unsigned_abs())?;
    let s = report
        .first_repeat
        .ok_or_else(|| Error::invalid("frequency", w.label(), "a frequency that repeats"))?
        as i64;
    let mut evidence = vec![
        Evidence::TurnFraction {
            numerator: a,
            denominator: b,
        },
        Evidence::Wavelength {
            value: report.wavelength,
        },
    ];
    let shown: BTreeSet<i64> = [0, 1, s - 1, s].into_iter().filter(|&x| x >= 0).collect();
    evidence.extend(shown.into_iter().map(|sep| angle(w, sep)));
    Ok(Observation {
        result: Answer::Integer(s),
        evidence,
        explanation: format!(
            "ω = {} is {a}/{b} of a turn per position, so s·ω is a whole number of turns first at s = {s}: separations 0 and {s} get the same score.",
            w.label()
        ),
    })
}

/// Step 11, checkpoint 3 of seed 002: ω = π/2 repeats first at s = 4.
pub(super) fn rope_repeat_half_pi() -> Step {
    Step {
        id: "rope_repeat_half_pi",
        hint: "How many quarter turns make a whole turn?",
        title: "The first repeat of ω = π/2 (checkpoint 3)",
        varied: "nothing — ω = π/2 is the seed's example",
        fixed: "ω = π/2, q = k = (1, 0)",
        params: vec![],
        question: |_| {
            Ok("With ω = π/2, what is the smallest separation s > 0 whose score equals the score at s = 0 (the angle s·ω is back where it started)?".into())
        },
        kind: integer,
        run: |_, _| repeat_observation(Omega::pi_rational(1, 2)?),
    }
}

/// Step 12: the first repeat of a chosen rational ω.
pub(super) fn rope_repeat_chosen() -> Step {
    Step {
        id: "rope_repeat_chosen",
        hint: "Write ω as 2π·a/b in lowest terms. For which s is s·a/b a whole number?",
        title: "The first repeat of a chosen ω",
        varied: "the frequency ω (a rational multiple of π)",
        fixed: "one rotation plane, q = k = (1, 0)",
        params: vec![Param {
            name: "omega",
            what: "the rotation frequency ω",
            kind: ParamKind::Omega { rational: true },
            default: "3*pi/4",
        }],
        question: |s| {
            Ok(format!(
            "With ω = {}, what is the smallest separation s > 0 at which the rotation repeats (s·ω a whole number of turns)?",
            s.raw("omega")?
        ))
        },
        kind: integer,
        run: |s, _| repeat_observation(s.omega("omega")?),
    }
}

/// Step 13: the first separation in 1..L−1 at which every frequency of the set repeats at once
/// (the common period, when it fits in the context).
pub(super) fn rope_resolve() -> Step {
    Step {
        id: "rope_resolve",
        hint: "Each frequency alone repeats at its own period. When do all of them repeat together?",
        title: "What a set of frequencies resolves within a context",
        varied: "the frequency set and the context length L",
        fixed: "one rotation plane per frequency; a separation counts as a repeat when every plane is within 1e-9 rad of a whole turn (exact integer arithmetic for rational multiples of π)",
        params: vec![
            Param {
                name: "omegas",
                what: "the frequency set",
                kind: ParamKind::Omegas,
                default: "pi/2,pi/3",
            },
            Param {
                name: "context",
                what: "the context length L (separations 1..L−1)",
                kind: ParamKind::Count {
                    min: 2,
                    max: 100_000,
                },
                default: "16",
            },
        ],
        question: |s| {
            Ok(format!(
            "Use the frequencies {{{}}} together, in a context of L = {} positions. What is the smallest separation s in 1..{} at which every frequency repeats at once (so s cannot be told from 0)? Answer none if there is none.",
            s.raw("omegas")?, s.raw("context")?, s.count("context")? - 1
        ))
        },
        kind: integer_or_none,
        run: |s, _| {
            let set = s.omegas("omegas")?;
            let l = s.count("context")? as u64;
            let mut evidence = Vec::new();
            for &w in &set {
                let p = period(w, DEFAULT_TOL, l - 1)?;
                evidence.push(Evidence::SingleRepeat {
                    omega: w.label(),
                    context: l,
                    first: p.first_repeat.filter(|&r| r < l).or(p.first_within_tol),
                });
            }
            let r = resolve(&set, l, DEFAULT_TOL)?;
            if let Some(cp) = r.common_period {
                evidence.push(Evidence::CommonPeriod { value: cp });
            }
            evidence.push(Evidence::FirstAlias {
                value: r.first_alias,
            });
            if let (Some(m), Some(at)) = (r.min_margin, r.margin_at) {
                evidence.push(Evidence::ClosestApproach {
                    phase_distance: m,
                    at,
                });
            }
            let labels = set.iter().map(|w| w.label()).collect::<Vec<_>>().join(", ");
            let explanation = match r.first_alias {
                Some(c) => format!(
                    "{{{labels}}} all return to their start at s = {c} < L = {l}, so separations 0 and {c} look identical: the set resolves every separation only in contexts of at most {}.",
                    count(c, "position")
                ),
                None => format!(
                    "No separation in 1..{} is a common period of {{{labels}}}, so the set distinguishes every separation in this context — a property of the set and the length together, to be checked again for a longer context.",
                    l - 1
                ),
            };
            Ok(Observation {
                result: r.first_alias.map_or(Answer::Nothing, |c| Answer::Integer(c as i64)),
                evidence,
                explanation,
            })
        },
    }
}

/// Step 14: with Wq = Wk = 0 every weight is 1/n whatever the rotation, so the rotary layer's
/// output equals the plain layer's exactly when the values are not rotated.
pub(super) fn values_rotated() -> Step {
    Step {
        id: "values_rotated",
        hint: "Which of Q, K and V enter the scores, and which enters only after the softmax?",
        title: "Are values rotated?",
        varied: "the sequence length n",
        fixed: "rotary attention (the layer of `attnlab attend --pos rope`) vs the same layer without positions; Wq = Wk = 0 so every weight is 1/n; Wv and X from the course program (np.random.seed(0)), f64",
        params: vec![Param { name: "n", what: "the sequence length", kind: ParamKind::Count { min: 2, max: 16 }, default: "4" }],
        question: |_| Ok("Rotary position embeddings rotate the queries and keys by position. Are the values V rotated too? (Test: with Wq = Wk = 0 every weight is 1/n whatever the rotation; rotated values would change the output.)".into()),
        kind: yes_no,
        run: |s, h| {
            let n = s.count("n")?;
            let mut inputs = h.seed_program(n)?;
            let d = inputs.x.ncols();
            inputs.wq = Array2::zeros((d, d));
            inputs.wk = Array2::zeros((d, d));
            let rope = LayerSpec { pos: PosKind::Rope, ..LayerSpec::default() };
            let bare = LayerSpec::default();
            let out_rope = rope.build::<f64>(&inputs)?(inputs.x.view())?;
            let out_bare = bare.build::<f64>(&inputs)?(inputs.x.view())?;
            let w = rope.weights_fn::<f64>(&inputs, 0)?(inputs.x.view())?;
            let diff = compare(out_rope.view(), out_bare.view())?;
            let scale = out_bare.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let tol = Tolerance::for_layer::<f64>(n, d, scale);
            let rotated = diff.max_abs > tol.value;
            let (min, max) = w.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
            let evidence = vec![
                Evidence::WeightRange { min, max, uniform: 1.0 / n as f64 },
                Evidence::Difference { between: Compared::RotaryVsPlain, max_abs: diff.max_abs },
                Evidence::Tolerance { value: tol.value, derivation: Some(tol.derivation()) },
            ];
            let explanation = if rotated {
                format!("The outputs differ by {}: the values were changed by position.", sci(diff.max_abs))
            } else {
                format!(
                    "The rotary layer's output differs from the plain layer's by at most {}: only queries and keys are rotated, and the values enter unrotated after the weights are fixed.",
                    sci(diff.max_abs)
                )
            };
            Ok(Observation { result: Answer::YesNo(rotated), evidence, explanation })
        },
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::tests::run;
    use super::*;

    #[test]
    fn rotary_scores_are_cosines_of_the_separation() {
        let obs = run("rope_scores", &[]);
        let Answer::Numbers(v) = obs.result else {
            panic!()
        };
        // cos(π/2), cos(3π/2): the rounded angle's cosine is 6.1e-17 and −1.8e-16 — within 2 ulp
        // of 1 of the exact 0; ±1 are exact (cos 0, and cos π rounds to −1).
        let exact = [1.0, 0.0, -1.0, 0.0, 1.0];
        for (a, b) in v.iter().zip(exact) {
            assert!((a - b).abs() < 2.0 * f64::EPSILON, "{v:?}");
        }
        // Another frequency and negative separations: cos(sω) is even in s.
        let obs = run(
            "rope_scores",
            &[("omega", "pi/3"), ("separations", "-2,2,3")],
        );
        let Answer::Numbers(v) = obs.result else {
            panic!()
        };
        assert!(
            (v[0] + 0.5).abs() < 4.0 * f64::EPSILON && (v[0] - v[1]).abs() < 4.0 * f64::EPSILON
        );
        assert!((v[2] + 1.0).abs() < 4.0 * f64::EPSILON);
        // The evidence holds the same scores, with the reduced angles ±2π/3 and π.
        let Evidence::Angle { phase, score, .. } = obs.evidence[2] else {
            panic!("{:?}", obs.evidence)
        };
        assert_eq!(score, v[2]);
        assert!((phase.abs() - std::f64::consts::PI).abs() < 4.0 * f64::EPSILON);
    }

    #[test]
    fn repeats_and_resolution() {
        assert_eq!(
            run("rope_repeat_chosen", &[("omega", "2*pi/7")]).result,
            Answer::Integer(7)
        );
        assert_eq!(
            run("rope_repeat_chosen", &[("omega", "pi/3")]).result,
            Answer::Integer(6)
        );
        // {π/2, π/3}: periods 4 and 6, common period lcm = 12.
        assert_eq!(
            run("rope_resolve", &[("context", "12")]).result,
            Answer::Nothing
        );
        let obs = run("rope_resolve", &[("context", "13")]);
        assert_eq!(obs.result, Answer::Integer(12));
        assert!(obs.evidence.contains(&Evidence::CommonPeriod { value: 12 }));
        assert_eq!(
            run("rope_resolve", &[("omegas", "pi/2,pi/4")]).result,
            Answer::Integer(8)
        );
        // A float frequency never returns exactly (within 1e-9 rad in a context of 16); π/2 alone
        // repeats at 4.
        assert_eq!(
            run("rope_resolve", &[("omegas", "1")]).result,
            Answer::Nothing
        );
        assert_eq!(
            run("rope_resolve", &[("omegas", "pi/2")]).result,
            Answer::Integer(4)
        );
        // A float ω is refused where an exact period is asked for.
        let step = rope_repeat_chosen();
        let o = BTreeMap::from([("omega".to_string(), "0.5".to_string())]);
        assert!(step
            .settings(&o)
            .unwrap_err()
            .to_string()
            .contains("rational multiple of pi"));
    }
}
