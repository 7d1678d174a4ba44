//! The engine every front end runs the session with: a [`Step`] (what is varied and held
//! fixed, its parameters, its question, its computation), the [`StepRecord`] of a graded
//! prediction, and [`Session`] — list the steps, describe step i at given settings, grade one
//! prediction for step i — which the CLI's prompts, scripted runs and the web lab share.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::answer::{grade, Answer, AnswerKind};
use super::answers::{AnswerSheet, Prepared, ScriptedAnswer};
use super::evidence::Evidence;
use super::param::{Param, Settings};
use super::state::{Score, State};
use crate::{Error, Result};

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

pub(super) type QuestionFn = fn(&Settings) -> Result<String>;
pub(super) type KindFn = fn(&Settings) -> Result<AnswerKind>;
pub(super) type RunFn = fn(&Settings, &Held) -> Result<Observation>;

/// What a session holds fixed beyond each step's own settings: the provided blocks (seed 002's
/// practical: "Held fixed: the provided blocks, the embedding table, and the projections").
/// The steps that run a layer take `E`, `Wq`, `Wk`, `Wv` from them instead of the course
/// program's draws and the course table; the others ignore them.
#[derive(Debug, Default)]
pub struct Held {
    blocks: Option<crate::blocks::Blocks>,
    used: std::sync::atomic::AtomicBool,
}

impl Clone for Held {
    fn clone(&self) -> Self {
        Held {
            blocks: self.blocks.clone(),
            used: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

/// The blocks a session may hold fixed.
pub const SESSION_BLOCKS: [&str; 4] = ["E", "Wq", "Wk", "Wv"];

impl Held {
    /// Holds `blocks` fixed. Only `E` (3 × d, the embedding table of A, B, .) and the d × d
    /// projections `Wq`, `Wk`, `Wv` are accepted; the steps embed text with `E` (default: the
    /// course's 3 × 2 table) and draw inputs of width d, so the shapes must agree.
    ///
    /// # Errors
    /// Another block name, or shapes that do not fit every step (checked by building both
    /// kinds of input once).
    pub fn blocks(blocks: crate::blocks::Blocks) -> Result<Held> {
        if let Some(other) = blocks
            .arrays
            .keys()
            .find(|k| !SESSION_BLOCKS.contains(&k.as_str()))
        {
            return Err(Error::invalid(
                "block for the session",
                crate::text::shorten(other),
                format!(
                    "one of {} (the embedding table and the projections the steps hold fixed)",
                    SESSION_BLOCKS.join(", ")
                ),
            ));
        }
        let held = Held {
            blocks: Some(blocks),
            used: Default::default(),
        };
        held.seed_program(4)
            .and_then(|_| held.text_input("A B"))
            .map_err(|e| e.context("the provided blocks must fit every step of the session"))?;
        Ok(held)
    }

    /// The names of the provided blocks, in the order E, Wq, Wk, Wv (empty when none).
    pub fn names(&self) -> Vec<String> {
        SESSION_BLOCKS
            .iter()
            .filter(|n| self.blocks.as_ref().is_some_and(|b| b.get(n).is_some()))
            .map(|n| n.to_string())
            .collect()
    }

    fn mark(&self) {
        if self.blocks.is_some() {
            self.used.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The course program's input — `np.random.seed(0)`: Wq, Wk, Wv, then X (n × d, d = 4 or
    /// the width of the provided projections) — with the provided projections in place of the
    /// drawn ones.
    ///
    /// # Errors
    /// Blocks whose shapes do not fit.
    pub fn seed_program(&self, n: usize) -> Result<crate::layer::Inputs> {
        self.mark();
        let blocks = self.blocks.as_ref().map(|b| {
            let mut b = b.clone();
            b.arrays.remove("E");
            b
        });
        let dim = blocks
            .as_ref()
            .and_then(|b| b.get("Wq").or(b.get("Wk")).or(b.get("Wv")))
            .map_or(4, |w| w.nrows());
        crate::layer::InputSpec {
            n: Some(n),
            dim: Some(dim),
            rng: crate::rng::RngKind::Numpy,
            seed: 0,
            blocks,
            ..crate::layer::InputSpec::default()
        }
        .build()
    }

    /// A text embedded with the course table (or the provided `E`); projections drawn with the
    /// default seed unless provided.
    ///
    /// # Errors
    /// Unknown tokens; blocks whose shapes do not fit.
    pub fn text_input(&self, text: &str) -> Result<crate::layer::Inputs> {
        self.mark();
        crate::layer::InputSpec {
            text: Some(text.to_string()),
            blocks: self.blocks.clone(),
            rng: crate::rng::RngKind::Std,
            ..crate::layer::InputSpec::default()
        }
        .build()
    }
}

/// One prediction-first step (the course's steps are in [`super::steps`]).
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
    pub(super) question: QuestionFn,
    pub(super) kind: KindFn,
    pub(super) run: RunFn,
}

/// A finished step: prediction and result side by side, graded and explained. This is one
/// record of the state file (`{"version": 1, "records": [StepRecord, …]}`).
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
    /// How it was compared, in words ([`crate::session::Grade::detail`]).
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
    /// The provided blocks the step's computation held fixed (empty: the course program's
    /// draws and the course table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<String>,
}

/// A step as a front end presents it before the prediction: what is varied and fixed, the
/// question and the answer form at given settings, the settings it may change, the hint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepInfo {
    /// The step's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// What is varied.
    pub varied: String,
    /// What is held fixed.
    pub fixed: String,
    /// The question, at these settings.
    pub question: String,
    /// The accepted form of the answer, in words.
    pub answer_form: String,
    /// The form of the answer, as data (with the options of a choice).
    pub answer_kind: AnswerKind,
    /// The quantities the student may set.
    pub settings: Vec<SettingInfo>,
    /// A nudge to show on request (never the answer).
    pub hint: String,
}

/// One settable quantity of a [`StepInfo`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingInfo {
    /// Its name (the key in an answers file).
    pub name: String,
    /// What it is.
    pub what: String,
    /// Its default, as typed.
    pub default: String,
    /// The value the question uses (canonical text: the default unless set).
    pub value: String,
    /// The accepted form, in words.
    pub form: String,
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
                    crate::text::shorten(name),
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
                    super::answer::quoted(text),
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
        (self.run)(s, &Held::default())
    }

    /// Runs the computation with what the session holds fixed.
    ///
    /// # Errors
    /// Settings that do not fit the computation.
    pub fn run_with(&self, s: &Settings, held: &Held) -> Result<Observation> {
        (self.run)(s, held)
    }

    /// The step as presented before the prediction, at these settings.
    ///
    /// # Errors
    /// Settings that do not parse.
    pub fn info(&self, s: &Settings) -> Result<StepInfo> {
        let kind = self.answer_kind(s)?;
        Ok(StepInfo {
            id: self.id.into(),
            title: self.title.into(),
            varied: self.varied.into(),
            fixed: self.fixed.into(),
            question: self.question(s)?,
            answer_form: kind.form(),
            answer_kind: kind,
            settings: self
                .params
                .iter()
                .map(|p| SettingInfo {
                    name: p.name.into(),
                    what: p.what.into(),
                    default: p.default.into(),
                    value: s.0.get(p.name).cloned().unwrap_or_else(|| p.default.into()),
                    form: p.form(),
                })
                .collect(),
            hint: self.hint.into(),
        })
    }

    /// Runs the step and grades `prediction` against the result.
    ///
    /// # Errors
    /// See [`Step::run`].
    pub fn evaluate(&self, s: &Settings, prediction: &Answer) -> Result<StepRecord> {
        self.evaluate_with(s, prediction, &Held::default())
    }

    /// [`Step::evaluate`] with what the session holds fixed; the record names the provided
    /// blocks when the computation used them.
    ///
    /// # Errors
    /// See [`Step::run`].
    pub fn evaluate_with(
        &self,
        s: &Settings,
        prediction: &Answer,
        held: &Held,
    ) -> Result<StepRecord> {
        let kind = self.answer_kind(s)?;
        held.used.store(false, std::sync::atomic::Ordering::Relaxed);
        let obs = self.run_with(s, held)?;
        let blocks = if held.used.load(std::sync::atomic::Ordering::Relaxed) {
            held.names()
        } else {
            Vec::new()
        };
        let g = grade(&kind, prediction, &obs.result);
        Ok(StepRecord {
            id: self.id.into(),
            title: self.title.into(),
            settings: s.clone(),
            question: self.question(s)?,
            prediction: prediction.clone(),
            result: obs.result,
            correct: g.correct,
            grading: g.detail(),
            explanation: obs.explanation,
            evidence: obs.evidence,
            reason: None,
            hint_used: false,
            blocks,
        })
    }
}

/// The prediction-first session: its steps in order, and the operations a front end runs it
/// with. Progress lives in a [`State`] the front end keeps (the CLI in a file, the web lab on
/// its server), in the same JSON format everywhere.
///
/// ```
/// use std::collections::BTreeMap;
/// use attnlab_core::session::{Answer, ScriptedAnswer, Session, State};
/// let session = Session::course();
/// let mut state = State::default();
/// // Step 11 asks for the first repeat of ω = π/2: four quarter turns make a whole turn.
/// let i = session.position("rope_repeat_half_pi").unwrap();
/// let info = session.describe(i, &BTreeMap::new()).unwrap();
/// assert!(info.question.contains("π/2"));
/// let record = session.grade(i, &ScriptedAnswer::new("4"), false).unwrap();
/// assert!(record.correct && record.result == Answer::Integer(4));
/// state.record(record);
/// assert_eq!(session.score(&state).correct, 1);
/// ```
#[derive(Debug, Clone)]
pub struct Session {
    steps: Vec<Step>,
    held: Held,
}

impl Session {
    /// The course's session (the steps of [`super::steps()`]).
    pub fn course() -> Session {
        Session {
            steps: super::steps(),
            held: Held::default(),
        }
    }

    /// The course's session with the provided blocks held fixed (see [`Held::blocks`]).
    ///
    /// # Errors
    /// See [`Held::blocks`].
    pub fn with_blocks(blocks: crate::blocks::Blocks) -> Result<Session> {
        Ok(Session {
            steps: super::steps(),
            held: Held::blocks(blocks)?,
        })
    }

    /// The names of the blocks this session holds fixed (empty: none provided).
    pub fn blocks(&self) -> Vec<String> {
        self.held.names()
    }

    /// The steps, in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// How many steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether there are no steps.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Step `i` (0-based).
    ///
    /// # Errors
    /// `i` past the last step.
    pub fn step(&self, i: usize) -> Result<&Step> {
        self.steps.get(i).ok_or_else(|| {
            Error::invalid(
                "step number",
                i,
                format!("0..={} (0-based)", self.len().saturating_sub(1)),
            )
        })
    }

    /// The position of the step with this id.
    ///
    /// # Errors
    /// An unknown id; the message lists the known ones.
    pub fn position(&self, id: &str) -> Result<usize> {
        self.steps.iter().position(|s| s.id == id).ok_or_else(|| {
            Error::invalid(
                "step id",
                crate::text::shorten(id),
                format!("one of {}", self.ids().join(", ")),
            )
        })
    }

    fn ids(&self) -> Vec<&'static str> {
        self.steps.iter().map(|s| s.id).collect()
    }

    /// Every step as presented at its default settings (what an answers file needs).
    ///
    /// # Errors
    /// A step whose defaults do not parse (a bug: the tests run every default).
    pub fn list(&self) -> Result<Vec<StepInfo>> {
        (0..self.len())
            .map(|i| self.describe(i, &BTreeMap::new()))
            .collect()
    }

    /// Step `i` as presented before the prediction, with these overrides of its settings.
    ///
    /// # Errors
    /// `i` past the last step; overrides the step does not have or that do not parse.
    pub fn describe(&self, i: usize, overrides: &BTreeMap<String, String>) -> Result<StepInfo> {
        let step = self.step(i)?;
        step.info(&step.settings(overrides)?)
    }

    /// Checks one entry (answer as typed, overrides, reason) against step `i`.
    ///
    /// # Errors
    /// Overrides that do not fit the step; an answer not of the step's form (the message names
    /// the step and the form).
    pub fn prepare(&self, i: usize, entry: &ScriptedAnswer) -> Result<Prepared> {
        let step = self.step(i)?;
        let settings = step.settings(&entry.settings)?;
        let kind = step.answer_kind(&settings)?;
        let prediction = kind.parse(&entry.answer).map_err(|e| {
            // What the parse expected (the form, or why a value of the form is refused).
            let message = e.to_string();
            let expected = message
                .split_once("; expected ")
                .map_or_else(|| kind.form(), |(_, x)| x.to_string());
            Error::invalid(
                format!("answer to step {}", step.id),
                super::answer::quoted(&entry.answer),
                expected,
            )
        })?;
        Ok(Prepared {
            settings,
            prediction,
            reason: entry.reason.clone(),
        })
    }

    /// Checks every entry of an answers document before anything runs: each id names a step,
    /// each override parses, each answer has the accepted form.
    ///
    /// # Errors
    /// The first bad entry, naming the step and the accepted form.
    pub fn prepare_all(&self, sheet: &AnswerSheet) -> Result<BTreeMap<String, Prepared>> {
        sheet
            .entries
            .iter()
            .map(|(id, entry)| {
                let i = self.position(id).map_err(|_| {
                    Error::invalid("step id in the answers", crate::text::shorten(id), {
                        let ids = self.ids();
                        format!(
                            "one of the {} step ids ({}, …; `attnlab session --list` lists them)",
                            ids.len(),
                            ids.iter().take(3).copied().collect::<Vec<_>>().join(", ")
                        )
                    })
                })?;
                Ok((id.clone(), self.prepare(i, entry)?))
            })
            .collect()
    }

    /// Runs step `i` on a prepared entry and grades it.
    ///
    /// # Errors
    /// See [`Step::run`].
    pub fn run_prepared(&self, i: usize, p: &Prepared, hint_used: bool) -> Result<StepRecord> {
        let mut record = self
            .step(i)?
            .evaluate_with(&p.settings, &p.prediction, &self.held)?;
        record.reason = p.reason.clone();
        record.hint_used = hint_used;
        Ok(record)
    }

    /// Grades one prediction for step `i`: checks the entry, runs the computation, compares.
    ///
    /// # Errors
    /// See [`Session::prepare`] and [`Step::run`].
    pub fn grade(&self, i: usize, entry: &ScriptedAnswer, hint_used: bool) -> Result<StepRecord> {
        let p = self.prepare(i, entry)?;
        self.run_prepared(i, &p, hint_used)
    }

    /// The first step not yet finished in `state`, if any.
    pub fn next(&self, state: &State) -> Option<usize> {
        self.steps.iter().position(|s| !state.done(s.id))
    }

    /// The score of `state` over this session's steps (records of unknown steps are ignored).
    pub fn score(&self, state: &State) -> Score {
        state.score(&self.steps)
    }

    /// The records of `state` for this session's steps, in session order.
    pub fn records<'a>(&self, state: &'a State) -> Vec<&'a StepRecord> {
        self.steps
            .iter()
            .filter_map(|s| state.records.iter().find(|r| r.id == s.id))
            .collect()
    }
}
