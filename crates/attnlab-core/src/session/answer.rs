//! Predictions and results: the forms an answer takes ([`AnswerKind`]), parsing what a student
//! types into an [`Answer`], and grading a prediction against the computed result ([`grade`]).

use serde::{Deserialize, Serialize};

use crate::number::{format, sci, short, Style};
use crate::text::count;
use crate::{Error, Result};

/// One option of a multiple-choice question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceOption {
    /// The letter the student types (`a`, `b`, …).
    pub key: String,
    /// The statement.
    pub text: String,
}

/// The form a prediction takes, and how it is graded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnswerKind {
    /// `yes` or `no`; graded exactly.
    YesNo,
    /// A whole number; graded exactly.
    Integer,
    /// A whole number, or `none`; graded exactly.
    IntegerOrNone,
    /// `count` numbers; each must be within `tolerance` (absolute) of the result.
    Numbers {
        /// How many numbers.
        count: usize,
        /// The absolute tolerance per number.
        tolerance: f64,
    },
    /// One of the options, by letter; graded exactly.
    Choice {
        /// The options.
        options: Vec<ChoiceOption>,
    },
}

/// A prediction or a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Answer {
    /// yes (`true`) or no.
    YesNo(bool),
    /// A whole number.
    Integer(i64),
    /// "none".
    Nothing,
    /// A list of numbers.
    Numbers(Vec<f64>),
    /// The letter of a choice.
    Choice(String),
}

/// As the student would type it: `yes`, `12`, `none`, `1, 0, -1`, `b`; numbers to six
/// decimals through [`crate::number`] (predictions are graded to an absolute tolerance).
///
/// ```
/// use attnlab_core::session::Answer;
/// assert_eq!(Answer::Numbers(vec![1.0, 6.123233995736766e-17, -1.0]).to_string(), "1, 0, -1");
/// assert_eq!(Answer::Nothing.to_string(), "none");
/// ```
impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::YesNo(yes) => f.write_str(if *yes { "yes" } else { "no" }),
            Answer::Integer(i) => write!(f, "{i}"),
            Answer::Nothing => f.write_str("none"),
            Answer::Numbers(v) => {
                let v: Vec<String> = v.iter().map(|&x| format(x, Style::Decimals(6))).collect();
                f.write_str(&v.join(", "))
            }
            Answer::Choice(c) => f.write_str(c),
        }
    }
}

impl AnswerKind {
    /// The accepted form, in words: the hint when an answer is not understood, and what the
    /// parser's refusal says would be accepted.
    pub fn form(&self) -> String {
        match self {
            AnswerKind::YesNo => "yes or no (y/n)".into(),
            AnswerKind::Integer => "a whole number, e.g. 5".into(),
            AnswerKind::IntegerOrNone => "a whole number, e.g. 5, or none".into(),
            AnswerKind::Numbers {
                count: n,
                tolerance,
            } => format!(
                "{} separated by commas or spaces, e.g. {} (each within ±{} counts as right)",
                count(*n as u64, "number"),
                (0..*n)
                    .map(|i| ["1", "0.5", "-0.25", "0", "-1"][i % 5])
                    .collect::<Vec<_>>()
                    .join(", "),
                short(*tolerance)
            ),
            AnswerKind::Choice { options } => {
                let keys: Vec<&str> = options.iter().map(|o| o.key.as_str()).collect();
                format!("one letter: {}", keys.join(", "))
            }
        }
    }

    /// Parses a typed answer.
    ///
    /// ```
    /// use attnlab_core::session::{Answer, AnswerKind};
    /// assert_eq!(AnswerKind::YesNo.parse(" Y ").unwrap(), Answer::YesNo(true));
    /// let k = AnswerKind::Numbers { count: 3, tolerance: 0.01 };
    /// assert_eq!(k.parse("1, 0 -1").unwrap(), Answer::Numbers(vec![1.0, 0.0, -1.0]));
    /// assert!(k.parse("1, 0").is_err());
    /// ```
    ///
    /// # Errors
    /// Text that is not of the accepted form; the message names the form.
    pub fn parse(&self, text: &str) -> Result<Answer> {
        let t = text.trim();
        let bad = || Error::invalid("answer", quoted(t), self.form());
        match self {
            AnswerKind::YesNo => match t.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Answer::YesNo(true)),
                "n" | "no" | "false" => Ok(Answer::YesNo(false)),
                _ => Err(bad()),
            },
            AnswerKind::Integer => separation(t, self),
            AnswerKind::IntegerOrNone => {
                if t.eq_ignore_ascii_case("none") {
                    Ok(Answer::Nothing)
                } else {
                    separation(t, self)
                }
            }
            AnswerKind::Numbers { count, .. } => {
                let v: Vec<f64> = t
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse::<f64>().ok().filter(|x| x.is_finite()))
                    .collect::<Option<_>>()
                    .ok_or_else(bad)?;
                if v.len() != *count {
                    return Err(Error::invalid(
                        "answer",
                        format!(
                            "{} ({})",
                            quoted(t),
                            crate::text::count(v.len() as u64, "number")
                        ),
                        self.form(),
                    ));
                }
                Ok(Answer::Numbers(v))
            }
            AnswerKind::Choice { options } => {
                let key = t
                    .trim_matches(|c| c == '(' || c == ')' || c == '.')
                    .to_ascii_lowercase();
                options
                    .iter()
                    .find(|o| o.key == key)
                    .map(|o| Answer::Choice(o.key.clone()))
                    .ok_or_else(bad)
            }
        }
    }
}

/// A user's text in double quotes for a message, control characters escaped and long text cut
/// ([`crate::text::shorten`]).
pub(crate) fn quoted(t: &str) -> String {
    format!("\"{}\"", crate::text::shorten(t))
}

/// A whole number, also written as `6.0`.
/// A whole-number answer: every whole-number question of the course asks for a separation
/// s > 0, so 0 and negative numbers are refused (not graded) with the reason.
fn separation(t: &str, kind: &AnswerKind) -> Result<Answer> {
    match parse_integer(t) {
        Some(s) if s >= 1 => Ok(Answer::Integer(s)),
        Some(_) => Err(Error::invalid(
            "answer",
            quoted(t),
            format!("a separation s > 0 ({})", kind.form()),
        )),
        None => Err(Error::invalid("answer", quoted(t), kind.form())),
    }
}

fn parse_integer(t: &str) -> Option<i64> {
    t.parse::<i64>().ok().or_else(|| {
        t.parse::<f64>()
            .ok()
            .filter(|x| x.fract() == 0.0 && x.abs() < 1e15)
            .map(|x| x as i64)
    })
}

/// How a prediction compared with the result.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Grade {
    /// Whether the prediction counts as right.
    pub correct: bool,
    /// For lists of numbers: max |prediction − result| over the entries, and the tolerance it
    /// was held to. `None` for answers compared exactly.
    pub within: Option<Within>,
}

/// The comparison of two lists of numbers: the largest absolute difference and the tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Within {
    /// max over entries of |prediction − result|.
    pub largest_difference: f64,
    /// The absolute tolerance (right when `largest_difference ≤ tolerance`).
    pub tolerance: f64,
}

impl Grade {
    /// How it was compared, in words, as the record keeps it (the state file stores the
    /// words): `exact match`, `does not match`, or for numbers `largest difference 3.829e-16
    /// within the tolerance ±0.01`.
    pub fn detail(&self) -> String {
        match (self.within, self.correct) {
            (Some(w), ok) => format!(
                "largest difference {} {} the tolerance ±{}",
                sci(w.largest_difference),
                if ok { "within" } else { "outside" },
                short(w.tolerance)
            ),
            (None, true) => "exact match".into(),
            (None, false) => "does not match".into(),
        }
    }
}

/// Grades `prediction` against `result`: numbers within the kind's tolerance,
/// max |pᵢ − rᵢ| ≤ tolerance, anything else exactly.
///
/// ```
/// use attnlab_core::session::{grade, Answer, AnswerKind};
/// let k = AnswerKind::Numbers { count: 2, tolerance: 0.01 };
/// let g = grade(&k, &Answer::Numbers(vec![1.0, 0.0]), &Answer::Numbers(vec![1.0, 6e-17]));
/// assert!(g.correct);
/// assert!(!grade(&AnswerKind::YesNo, &Answer::YesNo(true), &Answer::YesNo(false)).correct);
/// ```
pub fn grade(kind: &AnswerKind, prediction: &Answer, result: &Answer) -> Grade {
    match (kind, prediction, result) {
        (AnswerKind::Numbers { tolerance, .. }, Answer::Numbers(p), Answer::Numbers(r))
            if p.len() == r.len() =>
        {
            let worst = p
                .iter()
                .zip(r)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f64, f64::max);
            Grade {
                correct: worst <= *tolerance,
                within: Some(Within {
                    largest_difference: worst,
                    tolerance: *tolerance,
                }),
            }
        }
        _ => Grade {
            correct: prediction == result,
            within: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_in_their_accepted_forms_only() {
        let yn = AnswerKind::YesNo;
        for (t, want) in [("yes", true), ("N", false), ("true", true), (" no ", false)] {
            assert_eq!(yn.parse(t).unwrap(), Answer::YesNo(want));
        }
        assert!(yn
            .parse("maybe")
            .unwrap_err()
            .to_string()
            .contains("yes or no"));
        assert_eq!(
            AnswerKind::Integer.parse("6.0").unwrap(),
            Answer::Integer(6)
        );
        assert!(AnswerKind::Integer.parse("2.5").is_err());
        // The questions ask for a separation s > 0: −4 and 0 are refused, saying so.
        for t in ["-4", "0"] {
            let e = AnswerKind::Integer.parse(t).unwrap_err().to_string();
            assert!(e.contains("a separation s > 0"), "{e}");
            assert!(AnswerKind::IntegerOrNone.parse(t).is_err());
        }
        assert_eq!(
            AnswerKind::IntegerOrNone.parse("None").unwrap(),
            Answer::Nothing
        );
        let c = AnswerKind::Choice {
            options: ["a", "b", "c", "d"]
                .iter()
                .map(|k| ChoiceOption {
                    key: k.to_string(),
                    text: String::new(),
                })
                .collect(),
        };
        assert_eq!(c.parse("(B)").unwrap(), Answer::Choice("b".into()));
        assert!(c
            .parse("e")
            .unwrap_err()
            .to_string()
            .contains("one letter: a, b, c, d"));
        let k = AnswerKind::Numbers {
            count: 2,
            tolerance: 0.01,
        };
        assert!(k.parse("1, x").is_err());
        assert!(k
            .parse("1 2 3")
            .unwrap_err()
            .to_string()
            .contains("3 numbers"));
        // The user's text is echoed escaped, never as a Rust Debug string.
        let e = yn.parse("a\u{1b}b").unwrap_err().to_string();
        assert!(e.contains(r#""a\u{1b}b""#), "{e}");
    }

    #[test]
    fn grading_uses_the_stated_tolerance() {
        let k = AnswerKind::Numbers {
            count: 2,
            tolerance: 0.01,
        };
        let r = Answer::Numbers(vec![0.5403, -0.4161]);
        assert!(grade(&k, &Answer::Numbers(vec![0.54, -0.42]), &r).correct);
        let g = grade(&k, &Answer::Numbers(vec![0.54, -0.40]), &r);
        assert!(
            !g.correct && g.detail().contains("outside"),
            "{}",
            g.detail()
        );
        let w = g.within.unwrap();
        assert!((w.largest_difference - 0.0161).abs() < 1e-12 && w.tolerance == 0.01);
        let g = Grade {
            correct: true,
            within: Some(Within {
                largest_difference: 3.8285686989269494e-16,
                tolerance: 0.01,
            }),
        };
        assert_eq!(
            g.detail(),
            "largest difference 3.829e-16 within the tolerance ±0.01"
        );
        assert!(
            grade(
                &AnswerKind::Integer,
                &Answer::Integer(8),
                &Answer::Integer(8)
            )
            .correct
        );
        assert!(
            !grade(
                &AnswerKind::IntegerOrNone,
                &Answer::Nothing,
                &Answer::Integer(12)
            )
            .correct
        );
    }
}
