//! The prediction-first practical (seed 002, "The practical session": *Predict each result before
//! running the block*), in the Predict–Observe–Explain form.
//!
//! The module has two halves:
//!
//! * **the engine** — [`answer`] (the forms a prediction takes, parsing, [`grade`]), [`param`]
//!   (the quantities a student may set, [`Settings`]), [`evidence`] (the computed facts a step
//!   shows, as data), [`engine`] ([`Step`], [`StepRecord`], and [`Session`]: list the steps,
//!   describe step i, grade one prediction), [`state`] (the progress file, [`Score`]) and
//!   [`answers`] (scripted answers documents in TOML or JSON);
//! * **the course** — [`steps()`]: the 15 steps, each stating what is varied and what is held
//!   fixed, its question, its computation (through the library's public functions) and its
//!   explanation.
//!
//! A session is an ordered list of [`Step`]s. Each lets the student set the varied quantities
//! ([`Param`]) or keep their defaults, asks for a prediction of a given [`AnswerKind`] (yes/no,
//! an integer, a list of numbers, a choice), runs the real computation ([`Step::run`]) and grades
//! the prediction against the result ([`grade`]): numbers are compared with a stated tolerance,
//! everything else exactly. [`Step::evaluate`] bundles that into a [`StepRecord`] — prediction
//! and result side by side, one sentence of explanation, the evidence — which the [`State`]
//! keeps so a student can stop and resume. [`AnswerSheet`] is the scripted form
//! (`--answers FILE`); [`crate::api::session`] is the request → report contract.
//!
//! Every number a step shows is computed when it runs; nothing here is a typed-in result. This
//! module does no terminal I/O and writes no sentences of its own beyond the course text: the
//! evidence lines come from [`crate::present::prose::session`]; the accepted forms and the
//! grading words are the parser's and the record's own ([`AnswerKind::form`], [`Grade::detail`]).

pub mod answer;
pub mod answers;
pub mod engine;
pub mod evidence;
pub mod param;
pub mod state;
mod steps;

pub use answer::{grade, Answer, AnswerKind, ChoiceOption, Grade, Within};
pub use answers::{AnswerSheet, Prepared, ScriptedAnswer, Syntax};
pub use engine::{
    Held, Observation, Session, SettingInfo, Step, StepInfo, StepRecord, SESSION_BLOCKS,
};
pub use evidence::{CheckedLayer, Compared, Evidence};
pub use param::{Param, ParamKind, Settings};
pub use state::{Pause, Score, State, STATE_VERSION};
pub use steps::steps;
