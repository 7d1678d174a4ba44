//! `attnlab session`: the prediction-first practical, scripted or one step at a time.
//!
//! A scripted run ([`run`]) takes a [`SessionRequest`] — the answers document (step id →
//! prediction, with optional reasons and settings; the parsed content of an `--answers` file,
//! or the body the web lab posts) and the saved progress to continue from — and grades every
//! unfinished step that has an answer, in order, stopping at the first without one. `list`
//! asks for the steps instead. The report is typed: each [`StepRecord`] holds the prediction and
//! the result as data, the evidence as data and the score.
//!
//! The step-by-step API ([`list`], [`describe`], [`grade`]) runs the same engine one step at a
//! time, so a web page can show step i, take a prediction and store the record in a [`State`]
//! (the JSON format of the CLI's state file: [`State::to_json`], [`State::from_json`]).
//!
//! ```
//! use attnlab_core::api::session::{run, SessionReport, SessionRequest};
//! use attnlab_core::api::Context;
//! let answers = serde_json::json!({"embedding_dim": "no", "shuffle_attention": "yes"});
//! let req = SessionRequest { answers: Some(serde_json::from_value(answers).unwrap()), ..Default::default() };
//! let SessionReport::Run(r) = run(&req, &Context::default()).unwrap() else { unreachable!() };
//! assert_eq!((r.score.correct, r.score.answered), (2, 2));
//! assert!(!r.complete); // the third step has no answer: the run pauses there
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Context, Outcome};
use crate::chart::Chart;
use crate::session::{AnswerSheet, Score, ScriptedAnswer, Session, State, StepInfo, StepRecord};
use crate::{Error, Result};

/// The request of `attnlab session` (scripted, or `list`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionRequest {
    /// The answers document: step id → answer, or → a table with `answer`, an optional
    /// `reason` and overrides of the step's settings (the content of an `--answers` file).
    /// Without it the run grades nothing and reports the progress so far.
    pub answers: Option<AnswerSheet>,
    /// List the steps (ids, questions, answer forms, settings with their defaults) instead of
    /// running them.
    pub list: bool,
    /// The progress to continue from (the content of the `--state` file); finished steps are
    /// not run again. Without it the run starts from the first step.
    pub state: Option<State>,
}

/// Why a run stopped before the last step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Pause {
    /// The answers have no entry for this step (the next one to do).
    NoAnswer {
        /// The step's id.
        step: String,
    },
    /// The student ended the input (Ctrl-D, `quit`).
    InputEnded,
}

/// The steps, as `--list` shows them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepList {
    /// Every step at its default settings, in order.
    pub steps: Vec<StepInfo>,
}

/// A run of the session: the score and every finished step's record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    /// Every step is finished.
    pub complete: bool,
    /// Right predictions, finished steps, steps in the session.
    pub score: Score,
    /// Complete and every prediction right.
    pub full_marks: bool,
    /// Why the run stopped early (`null` when complete).
    pub paused: Option<Pause>,
    /// The finished steps' records, in session order (from earlier sittings too).
    pub steps: Vec<StepRecord>,
    /// The ids of the steps this run graded, in order (the others were finished before).
    pub graded_now: Vec<String>,
}

impl RunReport {
    /// The report of `state` after a run that graded `graded_now` and stopped for `paused`.
    pub fn new(
        session: &Session,
        state: &State,
        graded_now: Vec<String>,
        paused: Option<Pause>,
    ) -> RunReport {
        let score = session.score(state);
        let complete = score.answered == score.total;
        RunReport {
            complete,
            score,
            full_marks: complete && score.correct == score.total,
            paused: if complete { None } else { paused },
            steps: session.records(state).into_iter().cloned().collect(),
            graded_now,
        }
    }

    /// How many steps were finished before this run.
    pub fn done_before(&self) -> usize {
        self.score.answered.saturating_sub(self.graded_now.len())
    }

    /// The records this run graded, in order.
    pub fn graded(&self) -> impl Iterator<Item = &StepRecord> {
        self.graded_now
            .iter()
            .filter_map(|id| self.steps.iter().find(|r| &r.id == id))
    }

    /// Records the steps this run graded into `state` (the progress the run continued from),
    /// so the front end can save it.
    pub fn update(&self, state: &mut State) {
        for r in self.graded() {
            state.record(r.clone());
        }
    }
}

/// The report of `attnlab session`: the step list, or a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SessionReport {
    /// `list`: the steps.
    List(StepList),
    /// A (scripted or interactive) run.
    Run(RunReport),
}

impl SessionReport {
    /// Always holds: a session is a report of predictions, not a check (a wrong prediction is
    /// not a failure of the program).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// No charts.
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// Runs the request: lists the steps, or grades every unfinished step that has an answer, in
/// order, until the first without one. Every entry is checked before anything runs.
///
/// # Errors
/// `list` together with answers; an entry naming no step, with settings the step does not
/// have or that do not parse, or an answer not of the step's form; a saved state of another
/// version; cancellation.
pub fn run(req: &SessionRequest, ctx: &Context) -> Result<SessionReport> {
    let session = Session::course();
    if req.list {
        if req.answers.is_some() {
            return Err(Error::invalid(
                "session request",
                "list together with answers",
                "either list (the steps) or answers (a run)",
            ));
        }
        return Ok(SessionReport::List(StepList {
            steps: session.list()?,
        }));
    }
    let mut state = match &req.state {
        Some(s) => {
            s.check_version("the saved state")?;
            s.clone()
        }
        None => State::default(),
    };
    let empty = AnswerSheet::default();
    let prepared = session.prepare_all(req.answers.as_ref().unwrap_or(&empty))?;
    let mut graded_now = Vec::new();
    let mut paused = None;
    for (i, step) in session.steps().iter().enumerate() {
        if state.done(step.id) {
            continue;
        }
        let Some(p) = prepared.get(step.id) else {
            paused = Some(Pause::NoAnswer {
                step: step.id.into(),
            });
            break;
        };
        ctx.check_cancelled("session")?;
        (ctx.progress)(step.id, i as f64 / session.len() as f64);
        state.record(session.run_prepared(i, p, false)?);
        graded_now.push(step.id.to_string());
    }
    Ok(SessionReport::Run(RunReport::new(
        &session, &state, graded_now, paused,
    )))
}

/// Every step at its default settings (what `--list` shows).
///
/// # Errors
/// None in practice (every default is tested).
pub fn list() -> Result<Vec<StepInfo>> {
    Session::course().list()
}

/// Step `i` (0-based) as presented before the prediction: its question and answer form at
/// these settings (overrides of the defaults, as text).
///
/// # Errors
/// `i` past the last step; settings the step does not have or that do not parse.
pub fn describe(i: usize, settings: &BTreeMap<String, String>) -> Result<StepInfo> {
    Session::course().describe(i, settings)
}

/// Grades one prediction for step `i` (0-based): `entry` is an entry of an answers document
/// (the answer as typed, settings, reason); `hint_used` records whether the hint was shown.
/// Add the record to the [`State`] with [`State::record`].
///
/// # Errors
/// `i` past the last step; bad settings; an answer not of the step's form.
pub fn grade(i: usize, entry: &ScriptedAnswer, hint_used: bool) -> Result<StepRecord> {
    Session::course().grade(i, entry, hint_used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Answer;

    fn right() -> AnswerSheet {
        serde_json::from_value(serde_json::json!({
            "embedding_dim": "no", "shuffle_attention": "yes", "swap_two_tokens": "b",
            "readouts": "a", "rnn_shuffle": "no", "index_signal": "no",
            "causal_equivariance": "no", "causal_future": "yes", "causal_prefix": "no",
            "rope_scores": [1, 0, -1, 0, 1], "rope_repeat_half_pi": 4,
            "rope_repeat_chosen": 8, "rope_resolve": 12, "values_rotated": "no",
            "challenge": "b"
        }))
        .unwrap()
    }

    fn run_report(req: &SessionRequest) -> RunReport {
        match run(req, &Context::default()).unwrap() {
            SessionReport::Run(r) => r,
            SessionReport::List(_) => panic!("a list"),
        }
    }

    #[test]
    fn a_scripted_run_grades_every_step_and_continues_from_a_saved_state() {
        let full = run_report(&SessionRequest {
            answers: Some(right()),
            ..Default::default()
        });
        assert!(full.complete && full.full_marks && full.paused.is_none());
        assert_eq!(full.graded_now.len(), 15);
        // Continue from the first three records: only the other twelve run.
        let mut state = State::default();
        for r in &full.steps[..3] {
            state.record(r.clone());
        }
        let rest = run_report(&SessionRequest {
            answers: Some(right()),
            state: Some(state.clone()),
            ..Default::default()
        });
        assert_eq!(rest.graded_now.len(), 12);
        assert_eq!(rest.done_before(), 3);
        assert_eq!(rest.steps, full.steps);
        rest.update(&mut state);
        assert_eq!(state.records, full.steps);
        // No answers: nothing runs; the run pauses at the first unfinished step.
        let none = run_report(&SessionRequest::default());
        assert_eq!(
            none.paused,
            Some(Pause::NoAnswer {
                step: "embedding_dim".into()
            })
        );
        assert!(none.steps.is_empty());
    }

    #[test]
    fn the_step_by_step_api_is_the_same_engine() {
        let steps = list().unwrap();
        assert_eq!(steps.len(), 15);
        let i = steps.iter().position(|s| s.id == "rope_scores").unwrap();
        let set = BTreeMap::from([("separations".to_string(), "0,1,2".to_string())]);
        let info = describe(i, &set).unwrap();
        assert!(info.question.contains("s = 0,1,2"), "{}", info.question);
        assert!(info.answer_form.starts_with("3 numbers"));
        let entry = ScriptedAnswer {
            answer: "1 0 -1".into(),
            settings: set,
            reason: Some("quarter turns".into()),
        };
        let r = grade(i, &entry, true).unwrap();
        assert!(r.correct && r.hint_used);
        assert_eq!(r.prediction, Answer::Numbers(vec![1.0, 0.0, -1.0]));
        assert!(describe(15, &BTreeMap::new()).is_err());
        assert!(grade(0, &ScriptedAnswer::new("maybe"), false)
            .unwrap_err()
            .to_string()
            .contains("answer to step embedding_dim"));
    }

    #[test]
    fn requests_come_from_json_bodies() {
        let body = serde_json::json!({"answers": {"embedding_dim": false}, "state": {"version": 1, "records": []}});
        let req = crate::api::Request::from_json("session", body).unwrap();
        let crate::api::Request::Session(req) = req else {
            panic!()
        };
        assert_eq!(req.answers.unwrap().entries["embedding_dim"].answer, "no");
        let bad = serde_json::json!({"answers": {"x": "y"}, "list": true});
        let req: SessionRequest = serde_json::from_value(bad).unwrap();
        assert!(run(&req, &Context::default()).is_err());
        let e = crate::api::Request::from_json("session", serde_json::json!({"answer": {}}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("answers, list, state"), "{e}");
    }
}
