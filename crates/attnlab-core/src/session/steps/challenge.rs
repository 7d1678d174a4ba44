//! Step 15, seed 000's independent challenge: transformers are order-sensitive because order is
//! put back on purpose (a positional signal), not because attention sees it.

use super::super::answer::{Answer, AnswerKind};
use super::super::engine::{Observation, Step};
use super::super::evidence::{CheckedLayer, Evidence};
use super::super::param::Settings;
use super::{check, choices};
use crate::layer::{LayerSpec, PosKind};
use crate::number::sci;
use crate::symmetry::Permutation;
use crate::Result;

fn challenge_kind(_: &Settings) -> Result<AnswerKind> {
    Ok(choices(&[
        ("a", "The colleague is right: attention is order-blind, so transformers barely use word order."),
        ("b", "Word order matters because attention alone is order-blind: positional information is added before attention precisely to restore it, so the claim inverts cause and effect."),
        ("c", "Attention reads positions through its dot products, so no positional information is needed."),
        ("d", "Only the causal mask makes order matter; positional encodings are redundant with it."),
    ]))
}

/// The evidence is the shuffle test of bare attention (holds) and of attention with the index
/// signal (breaks); the right statement follows from the two verdicts.
pub(super) fn challenge() -> Step {
    Step {
        id: "challenge",
        hint: "Think of exercises 1 and 3 of seed 000: which layer is order-blind, and what was added to make order matter?",
        title: "Seed 000's independent challenge",
        varied: "nothing — the evidence is the bare and the position-broken shuffle tests",
        fixed: "the course program's input, P = [2,0,3,1], the index signal at its default scale (`--pos index`), f64",
        params: vec![],
        question: |_| {
            Ok("A colleague says: \"since attention lets every token attend to every other token directly, word order must not matter much to transformer models.\" Which statement gets the mechanism right?".into())
        },
        kind: challenge_kind,
        run: |_, h| {
            let inputs = h.seed_program(4)?;
            let p = Permutation::parse("2,0,3,1", 4)?;
            let bare = check(&LayerSpec::default(), &inputs, std::slice::from_ref(&p))?;
            let indexed = LayerSpec {
                pos: PosKind::Index,
                ..LayerSpec::default()
            };
            let pos = check(&indexed, &inputs, &[p])?;
            let key = match (bare.holds, pos.holds) {
                (true, false) => "b",
                (false, _) => "c",
                (true, true) => "a",
            };
            let evidence = vec![
                Evidence::check(Some(CheckedLayer::BareAttention), &bare),
                Evidence::check(
                    Some(CheckedLayer::IndexSignal {
                        scale: indexed.index_scale,
                    }),
                    &pos,
                ),
            ];
            Ok(Observation {
                result: Answer::Choice(key.into()),
                evidence,
                explanation: format!(
                    "Bare attention is order-blind (margin {}) and the positional signal is what makes order matter (margin {}): transformers are order-sensitive because order is put back on purpose, not because attention sees it.",
                    sci(bare.margin), sci(pos.margin)
                ),
            })
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_accepts_a_bracketed_letter_and_names_the_letters() {
        let c = challenge_kind(&Settings::default()).unwrap();
        assert_eq!(c.parse("(B)").unwrap(), Answer::Choice("b".into()));
        assert!(c
            .parse("e")
            .unwrap_err()
            .to_string()
            .contains("one letter: a, b, c, d"));
    }
}
