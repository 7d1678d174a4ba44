//! The prediction-first practical (seed 002, "The practical session": *Predict each result before
//! running the block*), in the Predict–Observe–Explain form.
//!
//! A session is an ordered list of [`Step`]s. Each step states what is varied and what is held
//! fixed, lets the student set the varied quantities ([`Param`]) or keep their defaults, asks for
//! a prediction of a given [`AnswerKind`] (yes/no, an integer, a list of numbers, a choice), then
//! runs the real computation through the library ([`Step::run`]) and grades the prediction
//! against the result ([`grade`]): numbers are compared with a stated tolerance, everything else
//! exactly. [`Step::evaluate`] bundles all of that into a [`StepRecord`] — prediction and result
//! side by side, one sentence of explanation, the evidence — which the [`State`] file keeps so a
//! student can stop and resume. [`AnswerSheet`] is the scripted form (`--answers FILE`).
//!
//! Every number a step shows is computed when it runs; nothing here is a typed-in result. This
//! module does no terminal I/O: the `attnlab session` command prompts and renders.

use std::collections::BTreeMap;
use std::path::Path;

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use crate::attention::Mask;
use crate::embedding::Embedding;
use crate::experiment;
use crate::layer::{InputSpec, Inputs, LayerKind, LayerSpec, PosKind, Readout};
use crate::numeric::Dtype;
use crate::position::frequencies::{parse_omega_list, Omega};
use crate::rng::{Gaussian, RngKind, StdGaussian};
use crate::spectrum::angle::phase;
use crate::spectrum::identity::score_absolute;
use crate::spectrum::period::period;
use crate::spectrum::resolve::{resolve, DEFAULT_TOL};
use crate::symmetry::{
    check_equivariance, check_future_independence, check_invariance, check_prefix_invariance,
    compare, CheckReport, Permutation, Tolerance,
};
use crate::tokenizer::Vocabulary;
use crate::{Error, Result};

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

/// One option of a multiple-choice question.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChoiceOption {
    /// The letter the student types (`a`, `b`, …).
    pub key: String,
    /// The statement.
    pub text: String,
}

/// The form a prediction takes, and how it is graded.
#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// A number for display: 6 decimals with trailing zeros removed (`-0` shown as `0`).
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// An error-like number for display: 3 significant digits, scientific (`0` when exactly zero).
fn fmt_sci(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else {
        format!("{x:.3e}")
    }
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::YesNo(true) => write!(f, "yes"),
            Answer::YesNo(false) => write!(f, "no"),
            Answer::Integer(i) => write!(f, "{i}"),
            Answer::Nothing => write!(f, "none"),
            Answer::Numbers(v) => {
                let s: Vec<String> = v.iter().map(|&x| fmt_num(x)).collect();
                write!(f, "{}", s.join(", "))
            }
            Answer::Choice(c) => write!(f, "{c}"),
        }
    }
}

impl AnswerKind {
    /// The accepted form, in words (shown as the hint when an answer is not understood).
    pub fn form(&self) -> String {
        match self {
            AnswerKind::YesNo => "yes or no (y/n)".into(),
            AnswerKind::Integer => "a whole number, e.g. 5".into(),
            AnswerKind::IntegerOrNone => "a whole number, e.g. 5, or none".into(),
            AnswerKind::Numbers { count, tolerance } => format!(
                "{count} numbers separated by commas or spaces, e.g. {} (each within ±{} counts as right)",
                (0..*count)
                    .map(|i| ["1", "0.5", "-0.25", "0", "-1"][i % 5])
                    .collect::<Vec<_>>()
                    .join(", "),
                fmt_num(*tolerance)
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
        let bad = || Error::invalid("answer", format!("{t:?}"), self.form());
        match self {
            AnswerKind::YesNo => match t.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Answer::YesNo(true)),
                "n" | "no" | "false" => Ok(Answer::YesNo(false)),
                _ => Err(bad()),
            },
            AnswerKind::Integer => parse_integer(t).map(Answer::Integer).ok_or_else(bad),
            AnswerKind::IntegerOrNone => {
                if t.eq_ignore_ascii_case("none") {
                    Ok(Answer::Nothing)
                } else {
                    parse_integer(t).map(Answer::Integer).ok_or_else(bad)
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
                        format!("{t:?} ({} numbers)", v.len()),
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

/// A whole number, also written as `6.0`.
fn parse_integer(t: &str) -> Option<i64> {
    t.parse::<i64>().ok().or_else(|| {
        t.parse::<f64>()
            .ok()
            .filter(|x| x.fract() == 0.0 && x.abs() < 1e15)
            .map(|x| x as i64)
    })
}

/// How a prediction compared with the result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grade {
    /// Whether the prediction counts as right.
    pub correct: bool,
    /// How it was compared (for numbers: the largest difference and the tolerance).
    pub detail: String,
}

/// Grades `prediction` against `result`: numbers within the kind's tolerance, anything else
/// exactly.
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
            let correct = worst <= *tolerance;
            Grade {
                correct,
                detail: format!(
                    "largest difference {} {} the tolerance ±{}",
                    fmt_num(worst),
                    if correct { "within" } else { "outside" },
                    fmt_num(*tolerance)
                ),
            }
        }
        _ => {
            let correct = prediction == result;
            Grade {
                correct,
                detail: if correct {
                    "exact match".into()
                } else {
                    "does not match".into()
                },
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Varied quantities
// ---------------------------------------------------------------------------------------------

/// What kind of quantity a parameter is, and so how it is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A permutation of `0..n` (numpy's `X[perm]` list).
    Permutation {
        /// Sequence length.
        n: usize,
    },
    /// Two different tokens of the course vocabulary `(A, B, .)`.
    Pair,
    /// A finite real number.
    Real,
    /// A position `t` with `min ≤ t < n`.
    Position {
        /// Smallest allowed.
        min: usize,
        /// Sequence length.
        n: usize,
    },
    /// One rotation frequency; with `rational`, it must be a rational multiple of π.
    Omega {
        /// Require an exact (rational multiple of π) frequency.
        rational: bool,
    },
    /// A comma-separated list of frequencies.
    Omegas,
    /// 1 to 12 integer separations.
    Separations,
    /// An integer between `min` and `max`.
    Count {
        /// Smallest allowed.
        min: usize,
        /// Largest allowed.
        max: usize,
    },
}

/// A quantity the student may set before predicting.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Its name (the key in an answers file).
    pub name: &'static str,
    /// What it is, in words.
    pub what: &'static str,
    /// How it is parsed.
    pub kind: ParamKind,
    /// Its default, as typed.
    pub default: &'static str,
}

impl Param {
    /// The accepted form, in words.
    pub fn form(&self) -> String {
        match self.kind {
            ParamKind::Permutation { n } => format!(
                "a permutation of 0..{} as a comma-separated list, e.g. {}",
                n - 1,
                (0..n)
                    .rev()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            ParamKind::Pair => {
                "two different tokens of A, B, . separated by a space, e.g. A B".into()
            }
            ParamKind::Real => "a finite number, e.g. 0.1".into(),
            ParamKind::Position { min, n } => format!("a whole number from {min} to {}", n - 1),
            ParamKind::Omega { rational: false } => "a frequency, e.g. pi/2, 2*pi/7 or 0.25".into(),
            ParamKind::Omega { rational: true } => {
                "a rational multiple of pi, e.g. pi/3, 2*pi/7 or 3*pi/4".into()
            }
            ParamKind::Omegas => "frequencies separated by commas, e.g. pi/2,pi/3".into(),
            ParamKind::Separations => {
                "1 to 12 whole numbers separated by commas, e.g. 0,1,2,3,4".into()
            }
            ParamKind::Count { min, max } => format!("a whole number from {min} to {max}"),
        }
    }

    /// Validates `text` and returns its canonical form.
    ///
    /// # Errors
    /// Text not of the accepted form; the message names the parameter and the form.
    pub fn validate(&self, text: &str) -> Result<String> {
        let t = text.trim();
        let bad = || Error::invalid(self.name, format!("{t:?}"), self.form());
        match self.kind {
            ParamKind::Permutation { n } => Permutation::parse(t, n)
                .map(|p| {
                    p.as_slice()
                        .iter()
                        .map(|i| i.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .map_err(|_| bad()),
            ParamKind::Pair => {
                let ids = Vocabulary::example().encode(t).map_err(|_| bad())?;
                if ids.len() != 2 || ids[0] == ids[1] {
                    return Err(bad());
                }
                Ok(t.split_whitespace().collect::<Vec<_>>().join(" "))
            }
            ParamKind::Real => t
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(|_| t.to_string())
                .ok_or_else(bad),
            ParamKind::Position { min, n } => t
                .parse::<usize>()
                .ok()
                .filter(|&v| v >= min && v < n)
                .map(|v| v.to_string())
                .ok_or_else(bad),
            ParamKind::Omega { rational } => {
                let w = Omega::parse(t).map_err(|_| bad())?;
                if rational && w.turns_fraction().is_none() {
                    return Err(Error::invalid(
                        self.name,
                        format!("{t:?} (not a rational multiple of pi: it never repeats exactly)"),
                        self.form(),
                    ));
                }
                Ok(w.label())
            }
            ParamKind::Omegas => parse_omega_list(t)
                .map(|l| l.iter().map(|w| w.label()).collect::<Vec<_>>().join(","))
                .map_err(|_| bad()),
            ParamKind::Separations => {
                let v = parse_ints(t).ok_or_else(bad)?;
                if v.is_empty() || v.len() > 12 || v.iter().any(|s| s.abs() > 1_000_000) {
                    return Err(bad());
                }
                Ok(v.iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(","))
            }
            ParamKind::Count { min, max } => t
                .parse::<usize>()
                .ok()
                .filter(|v| (min..=max).contains(v))
                .map(|v| v.to_string())
                .ok_or_else(bad),
        }
    }
}

fn parse_ints(t: &str) -> Option<Vec<i64>> {
    t.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<i64>().ok())
        .collect()
}

/// The values of a step's parameters (canonical text, validated).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Settings(pub BTreeMap<String, String>);

impl Settings {
    fn raw(&self, name: &str) -> Result<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| Error::invalid("setting", name, "a parameter of this step"))
    }
    fn perm(&self, name: &str, n: usize) -> Result<Permutation> {
        Permutation::parse(self.raw(name)?, n)
    }
    fn real(&self, name: &str) -> Result<f64> {
        self.raw(name)?
            .parse()
            .map_err(|_| Error::invalid(name, self.raw(name).unwrap_or(""), "a number"))
    }
    fn count(&self, name: &str) -> Result<usize> {
        self.raw(name)?
            .parse()
            .map_err(|_| Error::invalid(name, self.raw(name).unwrap_or(""), "a whole number"))
    }
    fn omega(&self, name: &str) -> Result<Omega> {
        Omega::parse(self.raw(name)?)
    }
    fn omegas(&self, name: &str) -> Result<Vec<Omega>> {
        parse_omega_list(self.raw(name)?)
    }
    fn ints(&self, name: &str) -> Result<Vec<i64>> {
        parse_ints(self.raw(name)?)
            .ok_or_else(|| Error::invalid(name, self.raw(name).unwrap_or(""), "whole numbers"))
    }
}

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

/// One computed fact a step shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// What it is.
    pub label: String,
    /// Its value, formatted.
    pub value: String,
}

fn ev(label: impl Into<String>, value: impl Into<String>) -> Evidence {
    Evidence {
        label: label.into(),
        value: value.into(),
    }
}

/// What running a step's computation produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The result, in the same form as the prediction.
    pub result: Answer,
    /// The computed facts behind it.
    pub evidence: Vec<Evidence>,
    /// One sentence saying why.
    pub explanation: String,
}

type QuestionFn = fn(&Settings) -> Result<String>;
type KindFn = fn(&Settings) -> Result<AnswerKind>;
type RunFn = fn(&Settings) -> Result<Observation>;

/// One prediction-first step.
#[derive(Debug, Clone)]
pub struct Step {
    /// Stable identifier (the key in answers and state files).
    pub id: &'static str,
    /// A short title.
    pub title: &'static str,
    /// What is varied.
    pub varied: &'static str,
    /// What is held fixed.
    pub fixed: &'static str,
    /// A nudge shown on request (never the answer).
    pub hint: &'static str,
    /// The quantities the student may set.
    pub params: Vec<Param>,
    question: QuestionFn,
    kind: KindFn,
    run: RunFn,
}

/// A finished step: prediction and result side by side, graded and explained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The settings it ran with.
    pub settings: Settings,
    /// The question asked.
    pub question: String,
    /// The student's prediction.
    pub prediction: Answer,
    /// The computed result.
    pub result: Answer,
    /// Whether the prediction was right.
    pub correct: bool,
    /// How it was compared.
    pub grading: String,
    /// One sentence of explanation.
    pub explanation: String,
    /// The computed facts.
    pub evidence: Vec<Evidence>,
    /// The student's reason for the prediction, if given (Predict–Observe–Explain: the reason is
    /// compared with the explanation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the student asked for the hint before predicting.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hint_used: bool,
}

impl Step {
    /// The settings: every parameter's default, replaced by the given overrides.
    ///
    /// # Errors
    /// An override for a parameter the step does not have, or one that does not parse.
    pub fn settings(&self, overrides: &BTreeMap<String, String>) -> Result<Settings> {
        for name in overrides.keys() {
            if !self.params.iter().any(|p| p.name == name) {
                let known: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                return Err(Error::invalid(
                    format!("setting for step {}", self.id),
                    name,
                    if known.is_empty() {
                        "no settings (this step varies nothing)".to_string()
                    } else {
                        format!("one of {}", known.join(", "))
                    },
                ));
            }
        }
        let mut s = BTreeMap::new();
        for p in &self.params {
            let text = overrides.get(p.name).map_or(p.default, String::as_str);
            let v = p.validate(text).map_err(|e| {
                Error::invalid(
                    format!("setting {} of step {}", p.name, self.id),
                    format!("{text:?}"),
                    format!("{} ({e})", p.form()),
                )
            })?;
            s.insert(p.name.to_string(), v);
        }
        Ok(Settings(s))
    }

    /// The question, for these settings.
    ///
    /// # Errors
    /// Settings that do not parse (cannot happen for validated ones).
    pub fn question(&self, s: &Settings) -> Result<String> {
        (self.question)(s)
    }

    /// The form the prediction takes, for these settings.
    ///
    /// # Errors
    /// Settings that do not parse.
    pub fn answer_kind(&self, s: &Settings) -> Result<AnswerKind> {
        (self.kind)(s)
    }

    /// Runs the computation.
    ///
    /// # Errors
    /// Settings that do not fit the computation.
    pub fn run(&self, s: &Settings) -> Result<Observation> {
        (self.run)(s)
    }

    /// Runs the step and grades `prediction` against the result.
    ///
    /// # Errors
    /// See [`Step::run`].
    pub fn evaluate(&self, s: &Settings, prediction: &Answer) -> Result<StepRecord> {
        let kind = self.answer_kind(s)?;
        let obs = self.run(s)?;
        let g = grade(&kind, prediction, &obs.result);
        Ok(StepRecord {
            id: self.id.into(),
            title: self.title.into(),
            settings: s.clone(),
            question: self.question(s)?,
            prediction: prediction.clone(),
            result: obs.result,
            correct: g.correct,
            grading: g.detail,
            explanation: obs.explanation,
            evidence: obs.evidence,
            reason: None,
            hint_used: false,
        })
    }
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

/// The course program's input: `np.random.seed(0)`, Wq, Wk, Wv then X (4 × 4), as numpy draws
/// them (and the RNN's weights after them).
fn seed_program(n: usize) -> Result<Inputs> {
    InputSpec {
        n: Some(n),
        dim: Some(4),
        rng: RngKind::Numpy,
        seed: 0,
        ..InputSpec::default()
    }
    .build()
}

/// A two-token text embedded with the course table; projections drawn with seed 0.
fn pair_inputs(pair: &str) -> Result<Inputs> {
    InputSpec {
        text: Some(pair.to_string()),
        ..InputSpec::default()
    }
    .build()
}

fn reversed(pair: &str) -> String {
    pair.split_whitespace().rev().collect::<Vec<_>>().join(" ")
}

fn check(spec: &LayerSpec, inputs: &Inputs, perms: &[Permutation]) -> Result<CheckReport> {
    experiment::check(spec, inputs, perms, Dtype::F64)
}

fn check_evidence(prefix: &str, r: &CheckReport) -> Vec<Evidence> {
    vec![
        ev(
            format!("{prefix}max |lhs − rhs| ({})", r.equation),
            fmt_sci(r.max_abs_error),
        ),
        ev(
            format!("{prefix}tolerance"),
            r.tolerance_detail.derivation.clone(),
        ),
        ev(
            format!("{prefix}margin (error / tolerance)"),
            format!("{} → {}", fmt_sci(r.margin), r.verdict),
        ),
    ]
}

fn rows(a: &Array2<f64>) -> String {
    a.rows()
        .into_iter()
        .map(|r| {
            format!(
                "({})",
                r.iter().map(|&x| fmt_num(x)).collect::<Vec<_>>().join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

// --- 1. checkpoint 1 ---------------------------------------------------------------------------

fn embedding_dim() -> Step {
    Step {
        id: "embedding_dim",
        hint: "Multiplying a one-hot row vector by E picks out one row of E. What does that ask of E's number of columns?",
        title: "Must the embedding dimension equal the vocabulary size? (checkpoint 1)",
        varied: "nothing — a reading of the course table",
        fixed: "the embedding table E for the vocabulary (A, B, .)",
        params: vec![],
        question: |_| {
            Ok("The table E has one row per token of the vocabulary (A, B, .). Must the embedding dimension (the number of components in a row) equal the vocabulary size?".into())
        },
        kind: yes_no,
        run: |_| {
            let e = Embedding::example();
            let vocab = Vocabulary::example();
            let mut selects = true;
            let mut ev_rows = Vec::new();
            for (id, tok) in vocab.tokens().iter().enumerate() {
                let prod = e.one_hot_product(id)?;
                selects &= prod == e.table().row(id);
                ev_rows.push(ev(
                    format!("one-hot e_{tok} · E"),
                    format!(
                        "({}) = E[{tok}]{}",
                        prod.iter()
                            .map(|&x| fmt_num(x))
                            .collect::<Vec<_>>()
                            .join(", "),
                        if prod == e.table().row(id) {
                            ", exactly"
                        } else {
                            " — NOT equal"
                        }
                    ),
                ));
            }
            let must = !(selects && e.dim() != e.vocab());
            let mut evidence = vec![ev(
                "shape of E",
                format!(
                    "{}×{}: vocabulary size {}, dimension {}",
                    e.vocab(),
                    e.dim(),
                    e.vocab(),
                    e.dim()
                ),
            )];
            evidence.extend(ev_rows);
            Ok(Observation {
                result: Answer::YesNo(must),
                evidence,
                explanation: format!(
                    "A label only selects a row, so the table needs one row per token and any number of columns: this {}×{} table embeds {} tokens in {} dimensions.",
                    e.vocab(), e.dim(), e.vocab(), e.dim()
                ),
            })
        },
    }
}

// --- 2. shuffling bare attention -----------------------------------------------------------------

fn perm_param(default: &'static str) -> Param {
    Param {
        name: "perm",
        what: "the shuffle P (row i of PH is row perm[i] of H)",
        kind: ParamKind::Permutation { n: 4 },
        default,
    }
}

fn shuffle_attention() -> Step {
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
        run: |s| {
            let inputs = seed_program(4)?;
            let p = s.perm("perm", 4)?;
            let r = experiment::symmetry(&LayerSpec::default(), &inputs, std::slice::from_ref(&p), Dtype::F64)?;
            let rep = &r.report;
            let mut evidence = check_evidence("", rep);
            evidence.push(ev(
                "round-off or structure? (f32 vs f64)",
                format!("{}: f32 error {}, f64 error {}", r.diagnosis.conclusion, fmt_sci(r.diagnosis.f32_error), fmt_sci(r.diagnosis.f64_error)),
            ));
            let explanation = if rep.holds {
                format!(
                    "Q, K and V are row-wise products, so P relabels the rows of the scores and the entries within each row, which the row softmax ignores: the output rows move with their tokens (difference {}, {} of the tolerance).",
                    fmt_sci(rep.max_abs_error), fmt_sci(rep.margin)
                )
            } else {
                format!("The check failed with margin {}: bare attention should be equivariant — this is a bug to report.", fmt_sci(rep.margin))
            };
            Ok(Observation { result: Answer::YesNo(rep.holds), evidence, explanation })
        },
    }
}

// --- 3. checkpoint 2: AB vs BA -------------------------------------------------------------------

fn pair_param() -> Param {
    Param {
        name: "pair",
        what: "the two tokens, in their first order",
        kind: ParamKind::Pair,
        default: "A B",
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

fn swap_two_tokens() -> Step {
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
        run: |s| {
            let inputs = pair_inputs(s.raw("pair")?)?;
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
            let p = s.raw("pair")?;
            let evidence = vec![
                ev(format!("Attn({p}) rows"), rows(&out)),
                ev(format!("Attn({}) rows", reversed(p)), rows(&out_swapped)),
                ev("max |Attn(BA) − swap rows of Attn(AB)|", fmt_sci(eq.max_abs_error)),
                ev("max |Attn(BA) − Attn(AB)|", fmt_sci(fixed.max_abs_error)),
                ev("tolerance", fmt_sci(eq.tolerance)),
            ];
            let explanation = if key == "b" {
                format!(
                    "Equivariance says each token's output row travels with the token, so the rows swap (difference {}); they do not stay fixed (they differ by {}).",
                    fmt_sci(eq.max_abs_error), fmt_sci(fixed.max_abs_error)
                )
            } else {
                format!("The rows did not simply swap (difference {}): bare attention should be equivariant — a bug to report.", fmt_sci(eq.max_abs_error))
            };
            Ok(Observation { result: Answer::Choice(key.into()), evidence, explanation })
        },
    }
}

// --- 4. mean vs row readout ----------------------------------------------------------------------

fn readout_kind(_: &Settings) -> Result<AnswerKind> {
    Ok(choices(&[
        ("a", "Only the mean over positions."),
        ("b", "Only row 0."),
        ("c", "Both."),
        ("d", "Neither."),
    ]))
}

fn readouts() -> Step {
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
        run: |s| {
            let inputs = pair_inputs(s.raw("pair")?)?;
            let swap = Permutation::new(vec![1, 0])?;
            let mut evidence = Vec::new();
            let mut same = Vec::new();
            for (name, readout) in [("mean", Readout::Mean), ("row 0", Readout::Row(0))] {
                let spec = LayerSpec {
                    readout,
                    ..LayerSpec::default()
                };
                let r = check(&spec, &inputs, std::slice::from_ref(&swap))?;
                let f = spec.build::<f64>(&inputs)?;
                let a = f(inputs.x.view())?;
                let b = f(swap.apply_rows(inputs.x.view())?.view())?;
                evidence.push(ev(format!("{name} readout, first order"), rows(&a)));
                evidence.push(ev(format!("{name} readout, other order"), rows(&b)));
                evidence.push(ev(
                    format!(
                        "{name}: max difference (tolerance {})",
                        fmt_sci(r.tolerance)
                    ),
                    fmt_sci(r.max_abs_error),
                ));
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
                fmt_sci(same[0].1), fmt_sci(same[1].1)
            );
            Ok(Observation {
                result: Answer::Choice(key.into()),
                evidence,
                explanation,
            })
        },
    }
}

// --- 5. the RNN ------------------------------------------------------------------------------------

fn rnn_shuffle() -> Step {
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
        run: |s| {
            let inputs = seed_program(4)?;
            let spec = LayerSpec { kind: LayerKind::Rnn, ..LayerSpec::default() };
            let r = check(&spec, &inputs, &[s.perm("perm", 4)?])?;
            let explanation = if r.holds {
                "This P leaves every token where it was, so nothing changes — choose a P that moves tokens to see the contrast.".to_string()
            } else {
                format!(
                    "Each hidden state is built from the tokens before it, so a shuffle changes what every later state was computed from: the difference is {} times the round-off tolerance — structure, not round-off.",
                    fmt_sci(r.margin)
                )
            };
            Ok(Observation { result: Answer::YesNo(r.holds), evidence: check_evidence("", &r), explanation })
        },
    }
}

// --- 6. a positional signal -------------------------------------------------------------------------

fn index_signal() -> Step {
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
        run: |s| {
            let inputs = seed_program(4)?;
            let scale = s.real("scale")?;
            let spec = LayerSpec {
                pos: PosKind::Index,
                index_scale: scale,
                ..LayerSpec::default()
            };
            let r = check(&spec, &inputs, &[Permutation::parse("2,0,3,1", 4)?])?;
            let explanation = if r.holds {
                format!("A signal of scale {} adds the same to every row or nothing at all, so the layer is still order-blind (margin {}).", fmt_num(scale), fmt_sci(r.margin))
            } else {
                format!(
                    "The signal belongs to the slot, not the token: after the shuffle each token carries its new slot's index, so the rows no longer just move (difference {} times the tolerance).",
                    fmt_sci(r.margin)
                )
            };
            Ok(Observation {
                result: Answer::YesNo(r.holds),
                evidence: check_evidence("", &r),
                explanation,
            })
        },
    }
}

// --- 7–9. the causal mask --------------------------------------------------------------------------

fn causal() -> LayerSpec {
    LayerSpec {
        mask: Mask::Causal,
        ..LayerSpec::default()
    }
}

fn causal_equivariance() -> Step {
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
        run: |s| {
            let inputs = seed_program(4)?;
            let r = check(&causal(), &inputs, &[s.perm("perm", 4)?])?;
            let explanation = if r.holds {
                "This P leaves every token where it was, so nothing changes — choose a P that moves tokens.".to_string()
            } else {
                format!(
                    "The mask is attached to the slots: after the shuffle a token sees a different set of earlier tokens, so the mask already breaks the symmetry (difference {} times the tolerance).",
                    fmt_sci(r.margin)
                )
            };
            Ok(Observation { result: Answer::YesNo(r.holds), evidence: check_evidence("", &r), explanation })
        },
    }
}

fn causal_future() -> Step {
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
        run: |s| {
            let inputs = seed_program(4)?;
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
                    fmt_sci(r.max_abs_error)
                )
            } else {
                format!("Earlier outputs moved by {} times the tolerance: the mask leaks the future — a bug to report.", fmt_sci(r.margin))
            };
            Ok(Observation {
                result: Answer::YesNo(r.holds),
                evidence: check_evidence("", &r),
                explanation,
            })
        },
    }
}

fn causal_prefix() -> Step {
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
        run: |s| {
            let inputs = seed_program(4)?;
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
                    fmt_sci(r.max_abs_error)
                )
            } else {
                format!("The later outputs moved by {} times the tolerance — unexpected for a causal mask without positions.", fmt_sci(r.margin))
            };
            Ok(Observation {
                result: Answer::YesNo(!r.holds),
                evidence: check_evidence("", &r),
                explanation,
            })
        },
    }
}

// --- 10–13. rotary ------------------------------------------------------------------------------------
//
// These steps compute with `crate::spectrum`: scores with `identity::score_absolute` (the rotated
// vectors' dot product, every phase reduced accurately), periods with `period::period`, and
// resolution with `resolve::resolve`.

/// The score of `q = k = (1, 0)` after rotating `q` at position 0 and `k` at position `s` in one
/// plane of frequency `ω`: `(R(0)q)ᵀ(R(sω)k) = cos(sω)`.
fn aligned_score(w: Omega, s: i64) -> f64 {
    score_absolute(&[w.value()], &[1.0, 0.0], &[1.0, 0.0], 0.0, s as f64)
}

fn rope_scores_kind(s: &Settings) -> Result<AnswerKind> {
    Ok(AnswerKind::Numbers {
        count: s.ints("separations")?.len(),
        tolerance: 0.01,
    })
}

fn rope_scores() -> Step {
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
        run: |s| {
            let w = s.omega("omega")?;
            let seps = s.ints("separations")?;
            let scores: Vec<f64> = seps.iter().map(|&sep| aligned_score(w, sep)).collect();
            let evidence = seps
                .iter()
                .zip(&scores)
                .map(|(&sep, &sc)| {
                    ev(
                        format!("s = {sep}: angle s·ω reduced to (−π, π]"),
                        format!(
                            "{} rad, score {}",
                            fmt_num(phase(sep as f64, w.value())),
                            fmt_num(sc)
                        ),
                    )
                })
                .collect();
            Ok(Observation {
                result: Answer::Numbers(scores.clone()),
                evidence,
                explanation: format!(
                    "Rotations compose, R(iω)ᵀR(jω) = R((j−i)ω), so for aligned unit vectors the score is cos(s·ω): {} at ω = {}.",
                    Answer::Numbers(scores), w.label()
                ),
            })
        },
    }
}

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
        ev("ω as a fraction of a turn", format!("2π·{a}/{b}")),
        ev(
            "2π/ω, one full turn (not necessarily a whole number)",
            fmt_num(report.wavelength),
        ),
    ];
    for sep in [0, 1, s - 1, s]
        .into_iter()
        .filter(|&x| x >= 0)
        .collect::<std::collections::BTreeSet<_>>()
    {
        evidence.push(ev(
            format!("s = {sep}: angle reduced to (−π, π], score"),
            format!(
                "{} rad, {}",
                fmt_num(phase(sep as f64, w.value())),
                fmt_num(aligned_score(w, sep))
            ),
        ));
    }
    Ok(Observation {
        result: Answer::Integer(s),
        evidence,
        explanation: format!(
            "ω = {} is {a}/{b} of a turn per position, so s·ω is a whole number of turns first at s = {s}: separations 0 and {s} get the same score.",
            w.label()
        ),
    })
}

fn rope_repeat_half_pi() -> Step {
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
        run: |_| repeat_observation(Omega::pi_rational(1, 2)?),
    }
}

fn rope_repeat_chosen() -> Step {
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
        run: |s| repeat_observation(s.omega("omega")?),
    }
}

fn rope_resolve() -> Step {
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
        run: |s| {
            let set = s.omegas("omegas")?;
            let l = s.count("context")? as u64;
            let mut evidence = Vec::new();
            for &w in &set {
                let p = period(w, DEFAULT_TOL, l - 1)?;
                let first = p.first_repeat.filter(|&r| r < l).or(p.first_within_tol);
                evidence.push(ev(
                    format!("ω = {} alone: first repeat within 1..{}", w.label(), l - 1),
                    first.map_or("none".to_string(), |r| r.to_string()),
                ));
            }
            let r = resolve(&set, l, DEFAULT_TOL)?;
            if let Some(cp) = r.common_period {
                evidence.push(ev("common period (lcm of the single periods)", cp.to_string()));
            }
            evidence.push(ev(
                "all at once, first (within the context)",
                r.first_alias.map_or("none".into(), |c| c.to_string()),
            ));
            if let (Some(m), Some(at)) = (r.min_margin, r.margin_at) {
                evidence.push(ev(
                    "closest approach to separation 0 (largest per-plane phase distance, minimised over s)",
                    format!("{} rad at s = {at}", fmt_sci(m)),
                ));
            }
            let labels = set.iter().map(|w| w.label()).collect::<Vec<_>>().join(", ");
            let explanation = match r.first_alias {
                Some(c) => format!(
                    "{{{labels}}} all return to their start at s = {c} < L = {l}, so separations 0 and {c} look identical: the set resolves every separation only in contexts of at most {c} positions."
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

fn values_rotated() -> Step {
    Step {
        id: "values_rotated",
        hint: "Which of Q, K and V enter the scores, and which enters only after the softmax?",
        title: "Are values rotated?",
        varied: "the sequence length n",
        fixed: "rotary attention (the layer of `attnlab attend --pos rope`) vs the same layer without positions; Wq = Wk = 0 so every weight is 1/n; Wv and X from the course program (np.random.seed(0)), f64",
        params: vec![Param { name: "n", what: "the sequence length", kind: ParamKind::Count { min: 2, max: 16 }, default: "4" }],
        question: |_| Ok("Rotary position embeddings rotate the queries and keys by position. Are the values V rotated too? (Test: with Wq = Wk = 0 every weight is 1/n whatever the rotation; rotated values would change the output.)".into()),
        kind: yes_no,
        run: |s| {
            let n = s.count("n")?;
            let mut inputs = seed_program(n)?;
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
            let (wmin, wmax) = w.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
            let evidence = vec![
                ev("rotary weights (all entries)", format!("from {} to {} (1/n = {})", fmt_num(wmin), fmt_num(wmax), fmt_num(1.0 / n as f64))),
                ev("max |rotary output − plain output|", fmt_sci(diff.max_abs)),
                ev("tolerance", tol.derivation),
            ];
            let explanation = if rotated {
                format!("The outputs differ by {}: the values were changed by position.", fmt_sci(diff.max_abs))
            } else {
                format!(
                    "The rotary layer's output differs from the plain layer's by at most {}: only queries and keys are rotated, and the values enter unrotated after the weights are fixed.",
                    fmt_sci(diff.max_abs)
                )
            };
            Ok(Observation { result: Answer::YesNo(rotated), evidence, explanation })
        },
    }
}

// --- 15. seed 000's independent challenge -------------------------------------------------------------

fn challenge_kind(_: &Settings) -> Result<AnswerKind> {
    Ok(choices(&[
        ("a", "The colleague is right: attention is order-blind, so transformers barely use word order."),
        ("b", "Word order matters because attention alone is order-blind: positional information is added before attention precisely to restore it, so the claim inverts cause and effect."),
        ("c", "Attention reads positions through its dot products, so no positional information is needed."),
        ("d", "Only the causal mask makes order matter; positional encodings are redundant with it."),
    ]))
}

fn challenge() -> Step {
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
        run: |_| {
            let inputs = seed_program(4)?;
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
            let mut evidence = check_evidence("bare attention: ", &bare);
            evidence.extend(check_evidence(
                &format!("with the index signal p·{}: ", fmt_num(indexed.index_scale)),
                &pos,
            ));
            Ok(Observation {
                result: Answer::Choice(key.into()),
                evidence,
                explanation: format!(
                    "Bare attention is order-blind (margin {}) and the positional signal is what makes order matter (margin {}): transformers are order-sensitive because order is put back on purpose, not because attention sees it.",
                    fmt_sci(bare.margin), fmt_sci(pos.margin)
                ),
            })
        },
    }
}

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
        embedding_dim(),
        shuffle_attention(),
        swap_two_tokens(),
        readouts(),
        rnn_shuffle(),
        index_signal(),
        causal_equivariance(),
        causal_future(),
        causal_prefix(),
        rope_scores(),
        rope_repeat_half_pi(),
        rope_repeat_chosen(),
        rope_resolve(),
        values_rotated(),
        challenge(),
    ]
}

// ---------------------------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------------------------

/// Progress kept between runs: the finished steps, in the order they were done.
///
/// Stored as JSON: `{"version": 1, "records": [StepRecord, …]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Format version (1).
    pub version: u32,
    /// The finished steps.
    pub records: Vec<StepRecord>,
}

impl Default for State {
    fn default() -> Self {
        State {
            version: 1,
            records: Vec::new(),
        }
    }
}

/// The score so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Score {
    /// Right predictions.
    pub correct: usize,
    /// Finished steps.
    pub answered: usize,
    /// Steps in the session.
    pub total: usize,
}

impl State {
    /// Loads the state; a missing file is a fresh start.
    ///
    /// # Errors
    /// An unreadable file, or one that is not a state file of this version.
    pub fn load(path: &Path) -> Result<State> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::default()),
            Err(e) => return Err(Error::io_source(path, e)),
        };
        let state: State = serde_json::from_str(&text).map_err(|e| {
            Error::io(
                path,
                format!("not an attnlab session state file ({e}); start over with --reset"),
            )
        })?;
        if state.version != 1 {
            return Err(Error::io(
                path,
                format!(
                    "state file version {} (expected 1); start over with --reset",
                    state.version
                ),
            ));
        }
        Ok(state)
    }

    /// Writes the state (creating the directory), via a temporary file and a rename so an
    /// interrupted write never leaves half a file.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::write_source(dir, e))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::write_source(path, e))?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text + "\n").map_err(|e| Error::write_source(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::write_source(path, e))
    }

    /// Whether step `id` is finished.
    pub fn done(&self, id: &str) -> bool {
        self.records.iter().any(|r| r.id == id)
    }

    /// Records a finished step (replacing an earlier record of the same step).
    pub fn record(&mut self, r: StepRecord) {
        self.records.retain(|x| x.id != r.id);
        self.records.push(r);
    }

    /// The score over the session's steps (records of unknown steps are ignored).
    pub fn score(&self, steps: &[Step]) -> Score {
        let known: Vec<&StepRecord> = self
            .records
            .iter()
            .filter(|r| steps.iter().any(|s| s.id == r.id))
            .collect();
        Score {
            correct: known.iter().filter(|r| r.correct).count(),
            answered: known.len(),
            total: steps.len(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scripted answers
// ---------------------------------------------------------------------------------------------

/// One step's scripted entry: the answer as typed, and overrides of the varied quantities.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScriptedAnswer {
    /// The answer, as text.
    pub answer: String,
    /// Parameter overrides, as text.
    pub settings: BTreeMap<String, String>,
    /// The reason for the prediction, if given.
    pub reason: Option<String>,
}

/// A prepared scripted step: its settings and its parsed prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The settings.
    pub settings: Settings,
    /// The prediction.
    pub prediction: Answer,
    /// The reason for it, if given.
    pub reason: Option<String>,
}

/// An answers file (`--answers FILE`): step id → answer, or step id → a table with `answer`, an
/// optional `reason`, and overrides of the step's parameters.
///
/// TOML:
/// ```toml
/// embedding_dim = "no"
/// rope_scores = [1, 0, -1, 0, 1]
/// [rope_repeat_chosen]
/// answer = 6
/// reason = "pi/3 is a sixth of a turn"
/// omega = "pi/3"
/// ```
/// JSON: `{"embedding_dim": "no", "rope_repeat_chosen": {"answer": 6, "omega": "pi/3"}}`.
/// Booleans mean yes/no; arrays are joined with commas.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnswerSheet {
    /// The entries by step id.
    pub entries: BTreeMap<String, ScriptedAnswer>,
}

fn value_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Bool(true) => Some("yes".into()),
        serde_json::Value::Bool(false) => Some("no".into()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(a) => a
            .iter()
            .map(value_text)
            .collect::<Option<Vec<_>>>()
            .map(|v| v.join(",")),
        _ => None,
    }
}

impl AnswerSheet {
    /// Reads a `.toml` or `.json` file (other extensions: JSON if it parses, else TOML).
    ///
    /// # Errors
    /// Unreadable or malformed files, entries that are neither an answer nor a table with one.
    pub fn load(path: &Path) -> Result<AnswerSheet> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io_source(path, e))?;
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        let from_toml = |t: &str| -> Result<serde_json::Value> {
            let v: toml::Value = toml::from_str(t)
                .map_err(|e| Error::io(path, format!("invalid TOML: {}", e.message())))?;
            serde_json::to_value(v).map_err(|e| Error::io_source(path, e))
        };
        let value = match ext.as_str() {
            "json" => serde_json::from_str(&text)
                .map_err(|e| Error::io(path, format!("invalid JSON: {e}")))?,
            "toml" => from_toml(&text)?,
            _ => match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(_) => from_toml(&text)?,
            },
        };
        Self::from_value(path, &value)
    }

    fn from_value(path: &Path, value: &serde_json::Value) -> Result<AnswerSheet> {
        let obj = value
            .as_object()
            .ok_or_else(|| Error::io(path, "expected a table mapping step ids to answers"))?;
        let mut entries = BTreeMap::new();
        for (id, v) in obj {
            let entry = match v {
                serde_json::Value::Object(t) => {
                    let answer = t.get("answer").and_then(value_text).ok_or_else(|| {
                        Error::io(
                            path,
                            format!(
                                "step {id}: a table needs an \"answer\" (plus optional settings)"
                            ),
                        )
                    })?;
                    let reason = match t.get("reason") {
                        None => None,
                        Some(serde_json::Value::String(r)) => Some(r.clone()),
                        Some(_) => {
                            return Err(Error::io(
                                path,
                                format!("step {id}: the reason must be a string"),
                            ))
                        }
                    };
                    let mut settings = BTreeMap::new();
                    for (k, x) in t
                        .iter()
                        .filter(|(k, _)| k.as_str() != "answer" && k.as_str() != "reason")
                    {
                        let s = value_text(x).ok_or_else(|| {
                            Error::io(
                                path,
                                format!("step {id}: setting {k} must be a string, number or list"),
                            )
                        })?;
                        settings.insert(k.clone(), s);
                    }
                    ScriptedAnswer {
                        answer,
                        settings,
                        reason,
                    }
                }
                other => ScriptedAnswer {
                    answer: value_text(other).ok_or_else(|| {
                        Error::io(
                            path,
                            format!(
                                "step {id}: the answer must be a string, number, boolean or list"
                            ),
                        )
                    })?,
                    settings: BTreeMap::new(),
                    reason: None,
                },
            };
            entries.insert(id.clone(), entry);
        }
        Ok(AnswerSheet { entries })
    }

    /// Checks every entry against the steps before anything runs: each id names a step, each
    /// override parses, each answer has the accepted form.
    ///
    /// # Errors
    /// The first bad entry, naming the step and the accepted form.
    pub fn prepare(&self, steps: &[Step]) -> Result<BTreeMap<String, Prepared>> {
        let mut out = BTreeMap::new();
        for (id, entry) in &self.entries {
            let step = steps.iter().find(|s| s.id == id).ok_or_else(|| {
                Error::invalid(
                    "step id in the answers file",
                    id,
                    format!(
                        "one of {}",
                        steps.iter().map(|s| s.id).collect::<Vec<_>>().join(", ")
                    ),
                )
            })?;
            let settings = step.settings(&entry.settings)?;
            let kind = step.answer_kind(&settings)?;
            let prediction = kind.parse(&entry.answer).map_err(|_| {
                Error::invalid(
                    format!("answer to step {id}"),
                    format!("{:?}", entry.answer),
                    kind.form(),
                )
            })?;
            out.insert(
                id.clone(),
                Prepared {
                    settings,
                    prediction,
                    reason: entry.reason.clone(),
                },
            );
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, overrides: &[(&str, &str)]) -> Observation {
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
                q.ends_with('?') || q.ends_with(".") || q.ends_with(')'),
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
        assert_eq!(
            run("rope_resolve", &[("context", "13")]).result,
            Answer::Integer(12)
        );
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
        assert_eq!(
            AnswerKind::IntegerOrNone.parse("None").unwrap(),
            Answer::Nothing
        );
        let c = challenge_kind(&Settings::default()).unwrap();
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
        assert!(!g.correct && g.detail.contains("outside"), "{}", g.detail);
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

    #[test]
    fn settings_are_validated() {
        let s = shuffle_attention();
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
        let p = pair_param();
        assert_eq!(p.validate(" B   A ").unwrap(), "B A");
        assert!(p.validate("A A").is_err() && p.validate("A B .").is_err());
        let w = Param {
            name: "omega",
            what: "",
            kind: ParamKind::Omega { rational: false },
            default: "",
        };
        assert_eq!(w.validate("2*pi/4").unwrap(), "pi/2");
    }

    #[test]
    fn answer_sheets_from_toml_and_json() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("a.toml");
        std::fs::write(
            &t,
            "embedding_dim = false\nrope_scores = [1, 0, -1, 0, 1]\n[rope_scores_x]\nanswer = 1\n",
        )
        .unwrap();
        let sheet = AnswerSheet::load(&t).unwrap();
        assert_eq!(sheet.entries["embedding_dim"].answer, "no");
        assert_eq!(sheet.entries["rope_scores"].answer, "1,0,-1,0,1");
        // Unknown step ids are reported with the list of known ones.
        let e = sheet.prepare(&steps()).unwrap_err().to_string();
        assert!(
            e.contains("rope_scores_x") && e.contains("embedding_dim"),
            "{e}"
        );
        let j = dir.path().join("a.json");
        std::fs::write(&j, r#"{"rope_scores": {"answer": [1, 0.5, -0.5], "omega": "pi/3", "separations": [0, 1, 2]}}"#).unwrap();
        let prepared = AnswerSheet::load(&j).unwrap().prepare(&steps()).unwrap();
        assert_eq!(
            prepared["rope_scores"].prediction,
            Answer::Numbers(vec![1.0, 0.5, -0.5])
        );
        assert_eq!(prepared["rope_scores"].settings.0["omega"], "pi/3");
        // The answer count follows the overridden separations: 5 numbers for 3 separations is an
        // error naming the step and the form.
        std::fs::write(
            &j,
            r#"{"rope_scores": {"answer": "1 0 -1 0 1", "separations": "0,1,2"}}"#,
        )
        .unwrap();
        let e = AnswerSheet::load(&j)
            .unwrap()
            .prepare(&steps())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("answer to step rope_scores") && e.contains("3 numbers"),
            "{e}"
        );
    }

    #[test]
    fn state_round_trips_and_scores() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.json");
        let mut st = State::load(&path).unwrap();
        assert!(st.records.is_empty());
        let all = steps();
        let s0 = &all[0];
        let set = s0.settings(&BTreeMap::new()).unwrap();
        st.record(s0.evaluate(&set, &Answer::YesNo(true)).unwrap());
        st.record(s0.evaluate(&set, &Answer::YesNo(false)).unwrap());
        st.save(&path).unwrap();
        let back = State::load(&path).unwrap();
        assert_eq!(back, st);
        assert_eq!(
            back.score(&all),
            Score {
                correct: 1,
                answered: 1,
                total: all.len()
            }
        );
        std::fs::write(&path, "{").unwrap();
        assert!(State::load(&path)
            .unwrap_err()
            .to_string()
            .contains("--reset"));
    }
}
