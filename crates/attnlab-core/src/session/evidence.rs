//! The computed facts a step shows beside its result, as data: numbers as numbers, rows as
//! lists, verdicts as enums. The lines a user reads are written from them by
//! [`crate::present::prose::session::evidence_lines`].

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::layer::Readout;
use crate::symmetry::{CheckReport, Verdict};

/// One computed fact a step shows.
///
/// Serialised with a `kind` tag and the fact's fields, e.g.
/// `{"kind": "check", "equation": "f(ΠH) = Π f(H)", "max_abs_error": 4.4e-16, …}`. State files
/// written before the evidence was typed hold `{"label": …, "value": …}` text pairs; those load
/// as [`Evidence::Recorded`] and are shown as they were recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Evidence {
    /// The shape of the embedding table E: one row per token, `dim` columns.
    TableShape {
        /// Rows (the vocabulary size).
        vocab: usize,
        /// Columns (the embedding dimension).
        dim: usize,
    },
    /// The one-hot row of `token` times E, and whether it equals E's row of that token exactly.
    OneHot {
        /// The token.
        token: String,
        /// e_token · E.
        product: Vec<f64>,
        /// Whether the product is exactly row `token` of E.
        equals_row: bool,
    },
    /// A symmetry check: its equation, largest error, tolerance (with its derivation), margin
    /// (error / tolerance) and verdict.
    Check {
        /// Which layer, when a step checks more than one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        of: Option<CheckedLayer>,
        /// The equation checked.
        equation: String,
        /// max |lhs − rhs|.
        max_abs_error: f64,
        /// The absolute tolerance.
        tolerance: f64,
        /// How the tolerance was derived, with its numbers.
        tolerance_derivation: String,
        /// `max_abs_error / tolerance` (< 1 holds).
        margin: f64,
        /// Holds or breaks.
        verdict: Verdict,
    },
    /// Round-off or structure: the same check's error in f32 and in f64.
    Diagnosis {
        /// `round-off`, `structural` or `exact`.
        conclusion: crate::experiment::Conclusion,
        /// The error in f32.
        f32_error: f64,
        /// The error in f64.
        f64_error: f64,
    },
    /// The output rows of bare attention on the embedded `tokens`, after `readout`.
    Output {
        /// The tokens, space-separated, in the order they were fed.
        tokens: String,
        /// How the output was read out (`none` for every row).
        readout: Readout,
        /// The rows.
        rows: Vec<Vec<f64>>,
    },
    /// The largest absolute difference between two outputs.
    Difference {
        /// Which outputs.
        between: Compared,
        /// max |a − b| over entries.
        max_abs: f64,
    },
    /// A tolerance on its own line.
    Tolerance {
        /// The absolute tolerance.
        value: f64,
        /// How it was derived, when the step shows it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        derivation: Option<String>,
    },
    /// The range of every attention weight of a layer, beside the uniform weight 1/n.
    WeightRange {
        /// The smallest weight.
        min: f64,
        /// The largest weight.
        max: f64,
        /// 1/n.
        uniform: f64,
    },
    /// The score of aligned unit vectors at a separation: the angle s·ω reduced to (−π, π] and
    /// cos(s·ω).
    Angle {
        /// The separation s.
        separation: i64,
        /// s·ω reduced to (−π, π], radians.
        phase: f64,
        /// The score (R(0)q)ᵀ(R(sω)k) = cos(sω) for q = k = (1, 0).
        score: f64,
    },
    /// ω as a fraction of a turn: ω = 2π·numerator/denominator in lowest terms.
    TurnFraction {
        /// a.
        numerator: i64,
        /// b.
        denominator: i64,
    },
    /// 2π/|ω|, the separation of one full turn (not a whole number in general).
    Wavelength {
        /// 2π/|ω|.
        value: f64,
    },
    /// The first repeat of one frequency alone within separations 1..L−1.
    SingleRepeat {
        /// The frequency, in its canonical spelling (`pi/2`).
        omega: String,
        /// The context length L.
        context: u64,
        /// The first separation that repeats, if any.
        first: Option<u64>,
    },
    /// The lcm of the single periods of an exact frequency set.
    CommonPeriod {
        /// The lcm.
        value: u64,
    },
    /// The first separation at which every frequency repeats at once, within the context.
    FirstAlias {
        /// The separation, if any.
        value: Option<u64>,
    },
    /// The closest approach to separation 0: the largest per-plane phase distance, minimised
    /// over the separations of the context.
    ClosestApproach {
        /// The distance, radians.
        phase_distance: f64,
        /// The separation where it occurs.
        at: u64,
    },
    /// A fact as an earlier version recorded it, in words only.
    #[serde(untagged)]
    Recorded {
        /// What it is.
        label: String,
        /// Its value, as it was formatted.
        value: String,
    },
}

/// Which layer a [`Evidence::Check`] is of, in a step that compares two.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "layer", rename_all = "snake_case")]
pub enum CheckedLayer {
    /// Bare attention.
    BareAttention,
    /// Attention after the index signal p·scale is added to row p.
    IndexSignal {
        /// The signal's scale.
        scale: f64,
    },
}

/// Which two outputs a [`Evidence::Difference`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outputs", rename_all = "snake_case")]
pub enum Compared {
    /// Attn(BA) against Attn(AB) with its rows swapped (zero when the rows travel with their
    /// tokens).
    SwappedRows,
    /// Attn(BA) against Attn(AB) as it is (zero when the rows stay put).
    SameRows,
    /// A readout of both orders of the tokens, with the tolerance it is held to.
    BothOrders {
        /// The readout.
        readout: Readout,
        /// The tolerance of the invariance check.
        tolerance: f64,
    },
    /// The rotary layer's output against the same layer without positions.
    RotaryVsPlain,
}

impl Evidence {
    /// The three facts of a check report (equation and error, tolerance, margin and verdict) as
    /// one [`Evidence::Check`].
    pub fn check(of: Option<CheckedLayer>, r: &CheckReport) -> Evidence {
        Evidence::Check {
            of,
            equation: r.equation.clone(),
            max_abs_error: r.max_abs_error,
            tolerance: r.tolerance,
            tolerance_derivation: r.tolerance_detail.derivation(),
            margin: r.margin,
            verdict: r.verdict,
        }
    }

    /// The rows of a matrix, for [`Evidence::Output`].
    pub fn rows(a: &Array2<f64>) -> Vec<Vec<f64>> {
        a.rows().into_iter().map(|r| r.to_vec()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_facts_round_trip_and_text_facts_of_old_state_files_load() {
        let facts = vec![
            Evidence::Angle {
                separation: 3,
                phase: -std::f64::consts::FRAC_PI_2,
                score: -1.8369701987210297e-16,
            },
            Evidence::FirstAlias { value: None },
            Evidence::Difference {
                between: Compared::BothOrders {
                    readout: Readout::Row(0),
                    tolerance: 9e-15,
                },
                max_abs: 0.57,
            },
            Evidence::Tolerance {
                value: 1e-14,
                derivation: None,
            },
        ];
        let text = serde_json::to_string(&facts).unwrap();
        let back: Vec<Evidence> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, facts);
        let old = r#"[{"label":"tolerance","value":"9.173e-15"}]"#;
        let back: Vec<Evidence> = serde_json::from_str(old).unwrap();
        assert_eq!(
            back,
            [Evidence::Recorded {
                label: "tolerance".into(),
                value: "9.173e-15".into()
            }]
        );
        // … and are written back as they were.
        assert_eq!(serde_json::to_string(&back).unwrap(), old);
    }
}
