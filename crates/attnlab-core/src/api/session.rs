//! `attnlab session`: the prediction-first practical, scripted or one step at a time.
//!
//! A scripted run ([`run`]) takes a [`SessionRequest`] — the answers document (step id →
//! prediction, with optional reasons and settings; the parsed content of an `--answers` file,
//! or the body the web lab posts) and, when the document says `resume = true`, the saved
//! progress to continue from — and grades **every** answer in the document, in session order.
//! An answers document is graded on its own: a saved progress never replaces an answer the
//! document gives, and without `resume = true` it is not used at all. Steps without an answer
//! are named in [`RunReport::missing`] (the run is then incomplete: exit code 1); records kept
//! from the saved progress are named in [`RunReport::carried_over`]. `list` asks for the steps
//! instead. The report is typed: each [`StepRecord`] holds the prediction and the result as
//! data, the evidence as data and the score.
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
//! // The other 13 steps have no answer: they are named, and the run fails (exit code 1).
//! assert!(!r.complete);
//! assert_eq!(r.missing.len(), 13);
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Context, Outcome};
use crate::chart::Chart;
use crate::limits::Budget;
pub use crate::session::Pause;
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
    /// The saved progress (the content of the `--state` file). With answers, it is used only
    /// when they say `resume = true`: the steps they do not answer keep their saved records
    /// (every answer they give is graded now). Without answers, the run reports it.
    pub state: Option<State>,
    /// The provided blocks the steps hold fixed (`E`, `Wq`, `Wk`, `Wv`; see
    /// [`crate::session::Held::blocks`]); without them, the course program's draws and table.
    pub blocks: Option<super::value::BlocksSource>,
    /// With `list`: overrides of steps' settings (step id → setting → value as typed, the
    /// settings an answers entry may carry); those steps are listed with their question and
    /// answer form at the overrides — what a student sees before predicting with a changed
    /// parameter.
    pub settings: Option<BTreeMap<String, BTreeMap<String, String>>>,
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
    /// Why an interactive run stopped early (`null` when complete, and for scripted runs).
    pub paused: Option<Pause>,
    /// Whether the run continued a saved progress (`resume = true` in the answers, or an
    /// interactive run from the state file).
    pub resumed: bool,
    /// The finished steps' records, in session order (from earlier sittings too).
    pub steps: Vec<StepRecord>,
    /// The ids of the steps this run graded, in order.
    pub graded_now: Vec<String>,
    /// The ids of the steps whose records come from the saved progress (not graded by this
    /// run), in session order.
    pub carried_over: Vec<String>,
    /// The ids of the steps without a record (no answer in the document, or not reached), in
    /// session order.
    pub missing: Vec<String>,
    /// The provided blocks this run held fixed (empty: the course program's draws and table).
    /// Each record names the blocks its own computation used.
    pub blocks: Vec<String>,
}

impl RunReport {
    /// The report of `state` after a run that graded `graded_now` and stopped for `paused`.
    pub fn new(
        session: &Session,
        state: &State,
        graded_now: Vec<String>,
        paused: Option<Pause>,
        resumed: bool,
    ) -> RunReport {
        let score = session.score(state);
        let complete = score.answered == score.total;
        let steps: Vec<StepRecord> = session.records(state).into_iter().cloned().collect();
        let carried_over = steps
            .iter()
            .filter(|r| !graded_now.contains(&r.id))
            .map(|r| r.id.clone())
            .collect();
        let missing = session
            .steps()
            .iter()
            .filter(|s| !state.done(s.id))
            .map(|s| s.id.to_string())
            .collect();
        RunReport {
            complete,
            score,
            full_marks: complete && score.correct == score.total,
            paused: if complete { None } else { paused },
            resumed,
            steps,
            graded_now,
            carried_over,
            missing,
            blocks: session.blocks(),
        }
    }

    /// How many steps were finished before this run (the records carried over).
    pub fn done_before(&self) -> usize {
        self.carried_over.len()
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
    /// A list holds. A run holds (exit 0) when every step has a record — right or wrong: a
    /// wrong prediction is not a failure of the program — and fails (exit 1) when steps are
    /// missing, so a script never mistakes an incomplete answers file for a graded one.
    pub fn outcome(&self) -> Outcome {
        match self {
            SessionReport::List(_) => Outcome::Holds,
            SessionReport::Run(r) => Outcome::from_bool(r.complete),
        }
    }

    /// No charts.
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// What the request costs: nothing to bound (the steps compute on the course's fixed small inputs; the documents it reads went through the input gate).
pub fn budget(_: &SessionRequest) -> Budget {
    Budget::default()
}

/// Runs the request: lists the steps, or grades every answer of the document, in session
/// order (every entry is checked before anything runs). With `resume = true` in the answers,
/// the saved progress supplies the records of the steps the answers do not give; otherwise the
/// answers are graded on their own.
///
/// # Errors
/// `list` together with answers; `resume = true` without a saved state; an entry naming no
/// step, with settings the step does not have or that do not parse, or an answer not of the
/// step's form; a saved state of another version; cancellation.
pub fn run(req: &SessionRequest, ctx: &Context) -> Result<SessionReport> {
    let session = match &req.blocks {
        Some(b) => Session::with_blocks(b.load_in(ctx)?)?,
        None => Session::course(),
    };
    if req.list {
        if req.answers.is_some() {
            return Err(Error::invalid(
                "session request",
                "list together with answers",
                "either list (the steps) or answers (a run)",
            ));
        }
        let overrides = req.settings.clone().unwrap_or_default();
        let steps = session.steps();
        if let Some(bad) = overrides
            .keys()
            .find(|id| !steps.iter().any(|s| s.id == *id))
        {
            return Err(Error::invalid(
                "settings of step",
                crate::present::text::shorten(bad),
                format!(
                    "a step id: {}",
                    steps.iter().map(|s| s.id).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let none = BTreeMap::new();
        let listed = steps
            .iter()
            .enumerate()
            .map(|(i, s)| session.describe(i, overrides.get(s.id).unwrap_or(&none)))
            .collect::<Result<Vec<_>>>()?;
        return Ok(SessionReport::List(StepList { steps: listed }));
    }
    if req.settings.is_some() {
        return Err(Error::invalid(
            "session request",
            "settings without list",
            "settings with list (a run takes each step's settings in its answers entry)",
        ));
    }
    // Without answers the run reports the saved progress; with answers, only `resume = true`
    // lets the saved progress in.
    let resume = req.answers.as_ref().is_none_or(|a| a.resume);
    let mut state = match (&req.state, resume) {
        (Some(s), true) => {
            s.check_version("the saved state")?;
            s.clone()
        }
        (None, true) if req.answers.is_some() => {
            return Err(Error::invalid(
                "resume = true in the answers",
                "no saved progress",
                "the saved state to continue from (--state FILE)",
            ))
        }
        _ => State::default(),
    };
    let empty = AnswerSheet::default();
    let prepared = session.prepare_all(req.answers.as_ref().unwrap_or(&empty))?;
    let mut graded_now = Vec::new();
    for (i, step) in session.steps().iter().enumerate() {
        let Some(p) = prepared.get(step.id) else {
            continue;
        };
        ctx.check_cancelled("session")?;
        (ctx.progress)(step.id, i as f64 / session.len() as f64);
        state.record(session.run_prepared(i, p, false)?);
        graded_now.push(step.id.to_string());
    }
    let resumed = resume && req.state.is_some();
    Ok(SessionReport::Run(RunReport::new(
        &session, &state, graded_now, None, resumed,
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

    #[test]
    fn list_at_settings_asks_the_question_at_them() {
        let listed = |settings: serde_json::Value| -> Vec<StepInfo> {
            let req: SessionRequest =
                serde_json::from_value(serde_json::json!({"list": true, "settings": settings}))
                    .unwrap();
            match run(&req, &Context::default()).unwrap() {
                SessionReport::List(l) => l.steps,
                SessionReport::Run(_) => panic!("a list"),
            }
        };
        let plain = listed(serde_json::json!({}));
        let moved = listed(serde_json::json!({"rope_scores": {"omega": "pi/3"}}));
        let at = |steps: &[StepInfo]| {
            steps
                .iter()
                .find(|s| s.id == "rope_scores")
                .unwrap()
                .clone()
        };
        let (a, b) = (at(&plain), at(&moved));
        assert_ne!(a.question, b.question, "the question follows the setting");
        let omega = b.settings.iter().find(|s| s.name == "omega").unwrap();
        assert_eq!(omega.value, "pi/3");
        // The other steps are listed at their defaults.
        for (x, y) in plain
            .iter()
            .zip(&moved)
            .filter(|(x, _)| x.id != "rope_scores")
        {
            assert_eq!(x, y);
        }
        let bad: SessionRequest = serde_json::from_value(
            serde_json::json!({"list": true, "settings": {"no_such_step": {"omega": "1"}}}),
        )
        .unwrap();
        let e = run(&bad, &Context::default()).unwrap_err().to_string();
        assert!(
            e.contains("no_such_step") && e.contains("rope_scores"),
            "{e}"
        );
        let unparsable: SessionRequest = serde_json::from_value(
            serde_json::json!({"list": true, "settings": {"rope_scores": {"omega": "abc"}}}),
        )
        .unwrap();
        assert!(run(&unparsable, &Context::default()).is_err());
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
        assert!(full.missing.is_empty() && full.carried_over.is_empty() && !full.resumed);
        // Resume from the first three records with a document answering the other twelve: the
        // three are carried over, the twelve graded.
        let mut state = State::default();
        for r in &full.steps[..3] {
            state.record(r.clone());
        }
        let mut rest = right();
        for r in &full.steps[..3] {
            rest.entries.remove(&r.id);
        }
        rest.resume = true;
        let resumed = run_report(&SessionRequest {
            answers: Some(rest),
            state: Some(state.clone()),
            ..Default::default()
        });
        assert!(resumed.resumed && resumed.complete);
        assert_eq!(resumed.graded_now.len(), 12);
        assert_eq!(
            resumed.carried_over,
            ["embedding_dim", "shuffle_attention", "swap_two_tokens"]
        );
        assert_eq!(resumed.done_before(), 3);
        assert_eq!(resumed.steps, full.steps);
        resumed.update(&mut state);
        assert_eq!(state.records, full.steps);
        // No answers: nothing runs; every step is missing and the run fails.
        let none = run_report(&SessionRequest::default());
        assert_eq!(none.missing.len(), 15);
        assert!(none.steps.is_empty());
        assert!(!SessionReport::Run(none).outcome().holds());
    }

    /// Issue 11, defect 1: a complete earlier run must not stand in for a later answers
    /// document. Without `resume = true` the saved progress is ignored: the wrong answers are
    /// graded and reported as wrong.
    #[test]
    fn regression_wrong_answers_after_a_complete_run_are_graded_on_their_own() {
        let full = run_report(&SessionRequest {
            answers: Some(right()),
            ..Default::default()
        });
        let mut saved = State::default();
        full.update(&mut saved);
        let mut wrong = right();
        wrong
            .entries
            .insert("shuffle_attention".into(), ScriptedAnswer::new("no"));
        wrong
            .entries
            .insert("rope_repeat_half_pi".into(), ScriptedAnswer::new("2"));
        let r = run_report(&SessionRequest {
            answers: Some(wrong.clone()),
            state: Some(saved.clone()),
            ..Default::default()
        });
        assert!(!r.resumed && r.carried_over.is_empty());
        assert_eq!(r.graded_now.len(), 15);
        assert_eq!((r.score.correct, r.score.total), (13, 15));
        assert!(!r.full_marks);
        // Even when resuming, an answer the document gives is graded now, never replaced by
        // the saved record of the same step.
        wrong.resume = true;
        let r = run_report(&SessionRequest {
            answers: Some(wrong),
            state: Some(saved),
            ..Default::default()
        });
        assert!(r.resumed && r.carried_over.is_empty());
        assert_eq!(r.score.correct, 13);
        // resume = true needs a saved state.
        let mut lone = right();
        lone.resume = true;
        let e = run(
            &SessionRequest {
                answers: Some(lone),
                ..Default::default()
            },
            &Context::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("--state"), "{e}");
    }

    /// Issue 11, defect 1: a document with a gap grades the rest and names the gap; the run is
    /// incomplete (exit code 1), not a silent success.
    #[test]
    fn regression_a_missing_step_is_named_and_the_rest_graded() {
        let mut gaps = right();
        gaps.entries.remove("swap_two_tokens");
        gaps.entries.remove("challenge");
        let r = run_report(&SessionRequest {
            answers: Some(gaps),
            ..Default::default()
        });
        assert_eq!(r.missing, ["swap_two_tokens", "challenge"]);
        assert_eq!(r.graded_now.len(), 13);
        assert_eq!(r.score.correct, 13);
        assert!(r.paused.is_none() && !r.complete);
        assert_eq!(SessionReport::Run(r).outcome().exit_code(), 1);
    }

    /// Issue 11, item 6: the practical holds "the provided blocks" fixed: the steps that run a
    /// layer use them, their records say so, and the others do not claim them.
    #[test]
    fn provided_blocks_are_held_fixed_and_named() {
        let id: Vec<Vec<f64>> = (0..4)
            .map(|i| (0..4).map(|j| f64::from(u8::from(i == j))).collect())
            .collect();
        let e = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.5, 0.5, 0.0, 0.0],
        ];
        let body = serde_json::json!({"Wq": id, "Wk": id, "E": e});
        let blocks: super::super::value::BlocksSource = serde_json::from_value(body).unwrap();
        let with = run_report(&SessionRequest {
            answers: Some(right()),
            blocks: Some(blocks),
            ..Default::default()
        });
        let plain = run_report(&SessionRequest {
            answers: Some(right()),
            ..Default::default()
        });
        assert_eq!(with.blocks, ["E", "Wq", "Wk"]);
        assert!(plain.blocks.is_empty());
        let rec = |r: &RunReport, id: &str| r.steps.iter().find(|s| s.id == id).unwrap().clone();
        assert_eq!(rec(&with, "shuffle_attention").blocks, ["E", "Wq", "Wk"]);
        assert!(rec(&with, "rope_scores").blocks.is_empty());
        // The blocks change the computation, not its conclusions.
        assert_ne!(
            rec(&with, "shuffle_attention").evidence,
            rec(&plain, "shuffle_attention").evidence
        );
        assert!(with.full_marks);
        // A block that does not fit every step is refused before anything runs.
        let bad: super::super::value::BlocksSource = serde_json::from_value(
            serde_json::json!({"Wq": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]}),
        )
        .unwrap();
        let e = run(
            &SessionRequest {
                answers: Some(right()),
                blocks: Some(bad),
                ..Default::default()
            },
            &Context::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("every step"), "{e}");
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
        let with_resume = serde_json::json!({"answers": {"resume": true, "embedding_dim": "no"}, "state": {"version": 1, "records": []}});
        let crate::api::Request::Session(r) =
            crate::api::Request::from_json("session", with_resume).unwrap()
        else {
            panic!()
        };
        assert!(r.answers.unwrap().resume);
        let bad = serde_json::json!({"answers": {"x": "y"}, "list": true});
        let req: SessionRequest = serde_json::from_value(bad).unwrap();
        assert!(run(&req, &Context::default()).is_err());
        let e = crate::api::Request::from_json("session", serde_json::json!({"answer": {}}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("answers, blocks, list, settings, state"), "{e}");
    }
}
