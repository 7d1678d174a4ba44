//! The sentences of the prediction-first session, from its typed data: answers as a student
//! types them, the accepted forms, the grading, the evidence lines, the score and why a run
//! paused. Numbers go through [`crate::number`]: answers, scores, phases and rows to
//! six decimals ([`Style::Decimals`]; predictions are graded to an absolute tolerance), errors,
//! tolerances and margins in scientific notation.

use crate::number::{format, sci, short, Style};
use crate::session::{CheckedLayer, Compared, Evidence, Pause, Score};
pub use crate::text::count;

/// A value read against an absolute tolerance: six decimals, trailing zeros dropped.
fn dec(x: f64) -> String {
    format(x, Style::Decimals(6))
}

fn list(v: &[f64]) -> String {
    v.iter().map(|&x| dec(x)).collect::<Vec<_>>().join(", ")
}

fn prefix(of: &Option<CheckedLayer>) -> String {
    match of {
        None => String::new(),
        Some(CheckedLayer::BareAttention) => "bare attention: ".into(),
        Some(CheckedLayer::IndexSignal { scale }) => {
            format!("with the index signal p·{}: ", short(*scale))
        }
    }
}

fn readout_name(r: crate::layer::Readout) -> String {
    match r {
        crate::layer::Readout::None => "no".into(),
        crate::layer::Readout::Mean => "mean".into(),
        crate::layer::Readout::Row(i) => format!("row {i}"),
    }
}

/// The lines a fact is shown as: (what it is, its value). Most facts are one line; a check is
/// three (error, tolerance, margin and verdict).
///
/// ```
/// use attnlab_core::present::prose::session::evidence_lines;
/// use attnlab_core::session::Evidence;
/// let lines = evidence_lines(&Evidence::Angle { separation: 1, phase: std::f64::consts::FRAC_PI_2, score: 6.123233995736766e-17 });
/// assert_eq!(lines, [("s = 1: angle s·ω reduced to (−π, π]".to_string(), "1.570796 rad, score 0".to_string())]);
/// ```
pub fn evidence_lines(e: &Evidence) -> Vec<(String, String)> {
    let one = |label: String, value: String| vec![(label, value)];
    match e {
        Evidence::TableShape { vocab, dim } => one(
            "shape of E".into(),
            format!("{vocab}×{dim}: vocabulary size {vocab}, dimension {dim}"),
        ),
        Evidence::OneHot {
            token,
            product,
            equals_row,
        } => one(
            format!("one-hot e_{token} · E"),
            format!(
                "({}) = E[{token}]{}",
                list(product),
                if *equals_row {
                    ", exactly"
                } else {
                    " — NOT equal"
                }
            ),
        ),
        Evidence::Check {
            of,
            equation,
            max_abs_error,
            tolerance_derivation,
            margin,
            verdict,
            ..
        } => {
            let p = prefix(of);
            vec![
                (
                    format!("{p}max |lhs − rhs| ({equation})"),
                    sci(*max_abs_error),
                ),
                (format!("{p}tolerance"), tolerance_derivation.clone()),
                (
                    format!("{p}margin (error / tolerance)"),
                    format!("{} → {verdict}", sci(*margin)),
                ),
            ]
        }
        Evidence::Diagnosis {
            conclusion,
            f32_error,
            f64_error,
        } => one(
            "round-off or structure? (f32 vs f64)".into(),
            format!(
                "{conclusion}: f32 error {}, f64 error {}",
                sci(*f32_error),
                sci(*f64_error)
            ),
        ),
        Evidence::Output {
            tokens,
            readout,
            rows,
        } => {
            let label = match readout {
                crate::layer::Readout::None => format!("Attn({tokens}) rows"),
                r => format!("{} readout of Attn({tokens})", readout_name(*r)),
            };
            let value = rows
                .iter()
                .map(|r| format!("({})", list(r)))
                .collect::<Vec<_>>()
                .join(" ");
            one(label, value)
        }
        Evidence::Difference { between, max_abs } => {
            let label = match between {
                Compared::SwappedRows => "max |Attn(BA) − swap rows of Attn(AB)|".to_string(),
                Compared::SameRows => "max |Attn(BA) − Attn(AB)|".to_string(),
                Compared::BothOrders { readout, tolerance } => format!(
                    "{}: max difference between the orders (tolerance {})",
                    readout_name(*readout),
                    sci(*tolerance)
                ),
                Compared::RotaryVsPlain => "max |rotary output − plain output|".to_string(),
            };
            one(label, sci(*max_abs))
        }
        Evidence::Tolerance { value, derivation } => one(
            "tolerance".into(),
            derivation.clone().unwrap_or_else(|| sci(*value)),
        ),
        Evidence::WeightRange { min, max, uniform } => one(
            "rotary weights (all entries)".into(),
            format!(
                "from {} to {} (1/n = {})",
                dec(*min),
                dec(*max),
                dec(*uniform)
            ),
        ),
        Evidence::Angle {
            separation,
            phase,
            score,
        } => one(
            format!("s = {separation}: angle s·ω reduced to (−π, π]"),
            format!("{} rad, score {}", dec(*phase), dec(*score)),
        ),
        Evidence::TurnFraction {
            numerator,
            denominator,
        } => one(
            "ω as a fraction of a turn".into(),
            format!("2π·{numerator}/{denominator}"),
        ),
        Evidence::Wavelength { value } => one(
            "2π/ω, one full turn (not necessarily a whole number)".into(),
            dec(*value),
        ),
        Evidence::SingleRepeat {
            omega,
            context,
            first,
        } => one(
            match context.saturating_sub(1) {
                0 => format!(
                    "ω = {omega} alone: first repeat (a context of 1 has no separation but 0)"
                ),
                1 => format!("ω = {omega} alone: first repeat at separation 1"),
                n => format!("ω = {omega} alone: first repeat within 1..{n}"),
            },
            first.map_or("none".into(), |r| r.to_string()),
        ),
        Evidence::CommonPeriod { value } => one(
            "common period (lcm of the single periods)".into(),
            value.to_string(),
        ),
        Evidence::FirstAlias { value } => one(
            "all at once, first (within the context)".into(),
            value.map_or("none".into(), |r| r.to_string()),
        ),
        Evidence::ClosestApproach { phase_distance, at } => one(
            "closest approach to separation 0 (largest per-plane phase distance, minimised over s)"
                .into(),
            format!("{} rad at s = {at}", sci(*phase_distance)),
        ),
        Evidence::Recorded { label, value } => one(label.clone(), value.clone()),
    }
}

/// Why an interactive run stopped before the last step.
pub fn pause(p: &Pause) -> String {
    match p {
        Pause::InputEnded => "input ended".into(),
    }
}

/// Step ids joined for a sentence: `a, b and c`.
fn ids(list: &[String]) -> String {
    match list {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The steps an answers document did not answer: `Not graded — no answer for swap_two_tokens
/// and challenge (2 of 15 steps); add them to the answers to grade them.`
pub fn missing(list: &[String], total: usize) -> Option<String> {
    (!list.is_empty()).then(|| {
        format!(
            "Not graded — no answer for {} ({} of {}); add {} to the answers to grade {}.",
            ids(list),
            list.len(),
            count(total as u64, "step"),
            if list.len() == 1 { "it" } else { "them" },
            if list.len() == 1 { "it" } else { "them" },
        )
    })
}

/// The records a resumed run kept from the saved progress: `Carried over from the saved
/// progress (graded in an earlier sitting, not by this run): embedding_dim and readouts.`
pub fn carried_over(list: &[String]) -> Option<String> {
    (!list.is_empty()).then(|| {
        format!(
            "Carried over from the saved progress (graded in an earlier sitting, not by this run): {}.",
            ids(list)
        )
    })
}

/// Which provided blocks a run holds fixed: `Held fixed: the provided blocks E, Wq and Wv (in
/// every step that runs a layer; the rest are the course program's).` Nothing without blocks.
pub fn blocks_line(names: &[String]) -> Option<String> {
    (!names.is_empty()).then(|| {
        format!(
            "Held fixed: the provided blocks {} (in every step that runs a layer; the rest are the course program's).",
            ids(names)
        )
    })
}

/// The first line of a run: how to play, or how far an earlier sitting got (nothing when every
/// step is done).
pub fn intro(done_before: usize, total: usize) -> Option<String> {
    if done_before == 0 {
        Some("Prediction first: for each step, say what you expect before it is computed.".into())
    } else if done_before < total {
        Some(format!(
            "Resuming: {done_before} of {} done.",
            count(total as u64, "step")
        ))
    } else {
        None
    }
}

/// `Score: 15/15 predictions right — full marks.`
pub fn score(s: &Score) -> String {
    format!(
        "Score: {}/{} predictions right{}",
        s.correct,
        s.total,
        if s.correct == s.total {
            " — full marks."
        } else {
            "."
        }
    )
}

/// `Session paused (input ended) after 3 of 15 steps; score so far 2/3.`
pub fn paused(p: Option<&Pause>, s: &Score) -> String {
    format!(
        "Session paused ({}) after {} of {}; score so far {}/{}.",
        p.map_or("stopped".into(), pause),
        s.answered,
        count(s.total as u64, "step"),
        s.correct,
        s.answered
    )
}

/// The score of an incomplete scripted run: `Graded 13 of 15 steps: 12 predictions right.`
pub fn partial_score(s: &Score) -> String {
    format!(
        "Graded {} of {}: {} right.",
        s.answered,
        count(s.total as u64, "step"),
        count(s.correct as u64, "prediction")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_lines_count_and_name_steps() {
        assert_eq!(count(1, "step"), "1 step");
        assert_eq!(count(15, "step"), "15 steps");
        assert_eq!(intro(3, 15).unwrap(), "Resuming: 3 of 15 steps done.");
        assert!(intro(15, 15).is_none());
        let two = ["a".to_string(), "b".to_string()];
        assert_eq!(
            missing(&two, 15).unwrap(),
            "Not graded — no answer for a and b (2 of 15 steps); add them to the answers to grade them."
        );
        assert!(missing(&[], 15).is_none());
        assert_eq!(carried_over(&two[..1]).unwrap(), "Carried over from the saved progress (graded in an earlier sitting, not by this run): a.");
    }
}
