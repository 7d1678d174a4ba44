//! The request → report contract every front end shares.
//!
//! Each command has a serde `Request` type (field names are the CLI's long options in
//! snake_case, defaults identical to the CLI's) and a typed `Report`; [`run`] turns one into the
//! other. `attnlab <command> --json` prints exactly the serialisation of the report, the web
//! lab's `POST /api/<command>` returns the same JSON for the same request, and Python's
//! functions return it as a dict — so the JSON interface is defined once, here.
//!
//! ```
//! use attnlab_core::api::{self, equivariance::EquivarianceRequest, Request};
//! let req = Request::Equivariance(EquivarianceRequest {
//!     perm: Some("2,0,3,1".parse().unwrap()),
//!     ..Default::default()
//! });
//! let report = api::run(&req).unwrap();
//! assert!(report.outcome().holds());
//! ```

pub mod attend;
pub mod check;
pub mod claims;
pub mod embed;
pub mod equivariance;
pub mod lab;
pub mod layer_input;
pub mod predict;
pub mod rope;
pub mod session;
pub mod value;

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::chart::Chart;
use crate::limits::{Budget, Limits};
use crate::{Error, Result};

/// What a command concluded: the checked property holds (exit code 0) or fails (exit code 1).
/// Errors (bad input) are not outcomes: they are [`Error`]s (exit code 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Success, or the checked property holds.
    Holds,
    /// The checked property does not hold.
    Fails,
}

impl Outcome {
    /// `Holds` when `ok`, else `Fails`.
    pub fn from_bool(ok: bool) -> Self {
        if ok {
            Outcome::Holds
        } else {
            Outcome::Fails
        }
    }

    /// Whether it holds.
    pub fn holds(self) -> bool {
        self == Outcome::Holds
    }

    /// The process exit code: 0 or 1.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Holds => 0,
            Outcome::Fails => 1,
        }
    }
}

/// How a run is observed and bounded by its front end.
pub struct Context<'a> {
    /// Called with a stage name and the fraction done (0..=1) by long computations.
    pub progress: &'a (dyn Fn(&str, f64) + Sync),
    /// Set to stop a long computation early (Ctrl-C, a time limit): it returns
    /// [`crate::ErrorKind::Cancelled`].
    pub cancel: Option<&'a AtomicBool>,
    /// Whether requests may name files to read (`blocks`, `config`). The web server says no.
    pub allow_files: bool,
    /// The work, memory and file-size limits every request is checked against before it
    /// allocates anything (see [`crate::limits`]; each command's `budget` function gives the
    /// estimate).
    pub limits: Limits,
}

impl Default for Context<'_> {
    fn default() -> Self {
        Context {
            progress: &|_, _| {},
            cancel: None,
            allow_files: true,
            limits: Limits::default(),
        }
    }
}

impl Context<'_> {
    /// An error if the run was cancelled.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Cancelled`] once `cancel` is set.
    pub fn check_cancelled(&self, what: &str) -> Result<()> {
        match self.cancel {
            Some(flag) if flag.load(Ordering::Relaxed) => Err(Error::cancelled(what)),
            _ => Ok(()),
        }
    }
}

/// One request, for any command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Request {
    /// `attnlab attend`.
    Attend(attend::AttendRequest),
    /// `attnlab equivariance`.
    Equivariance(equivariance::EquivarianceRequest),
    /// `attnlab lab`.
    Lab(lab::LabRequest),
    /// `attnlab claims`.
    Claims(claims::ClaimsRequest),
    /// `attnlab embed`.
    Embed(embed::EmbedRequest),
    /// `attnlab predict`.
    Predict(predict::PredictRequest),
    /// `attnlab session` (scripted, or the step list).
    Session(session::SessionRequest),
    /// `attnlab rope identity`.
    #[serde(rename = "rope identity")]
    RopeIdentity(rope::identity::IdentityRequest),
    /// `attnlab rope score`.
    #[serde(rename = "rope score")]
    RopeScore(rope::score::ScoreRequest),
    /// `attnlab rope period`.
    #[serde(rename = "rope period")]
    RopePeriod(rope::period::PeriodRequest),
    /// `attnlab rope resolve`.
    #[serde(rename = "rope resolve")]
    RopeResolve(rope::resolve::ResolveRequest),
    /// `attnlab rope audit`.
    #[serde(rename = "rope audit")]
    RopeAudit(rope::audit::AuditRequest),
    /// `attnlab rope engines`.
    #[serde(rename = "rope engines")]
    RopeEngines(rope::engines::EnginesRequest),
}

/// One report, for any command; serialises as the command's own report (no wrapper).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Report {
    /// `attnlab attend`.
    Attend(Box<attend::AttendReport>),
    /// `attnlab equivariance`.
    Equivariance(Box<equivariance::EquivarianceReport>),
    /// `attnlab lab`.
    Lab(Box<lab::LabReport>),
    /// `attnlab claims`.
    Claims(Box<claims::ClaimsReport>),
    /// `attnlab embed`.
    Embed(Box<embed::EmbedReport>),
    /// `attnlab predict`.
    Predict(Box<predict::PredictReport>),
    /// `attnlab session`.
    Session(Box<session::SessionReport>),
    /// `attnlab rope identity`.
    RopeIdentity(Box<rope::identity::IdentityReport>),
    /// `attnlab rope score`.
    RopeScore(Box<rope::score::ScoreReport>),
    /// `attnlab rope period`.
    RopePeriod(Box<rope::period::PeriodReport>),
    /// `attnlab rope resolve`.
    RopeResolve(Box<rope::resolve::ResolveReport>),
    /// `attnlab rope audit`.
    RopeAudit(Box<rope::audit::AuditReport>),
    /// `attnlab rope engines`.
    RopeEngines(Box<rope::engines::EnginesReport>),
}

/// The command names, as the CLI spells them (`rope audit` is `rope/audit` in URLs).
pub const COMMANDS: &[&str] = &[
    "attend",
    "equivariance",
    "lab",
    "claims",
    "embed",
    "predict",
    "session",
    "rope identity",
    "rope score",
    "rope period",
    "rope resolve",
    "rope audit",
    "rope engines",
];

impl Request {
    /// The command's name as the CLI spells it.
    pub fn command(&self) -> &'static str {
        match self {
            Request::Attend(_) => "attend",
            Request::Equivariance(_) => "equivariance",
            Request::Lab(_) => "lab",
            Request::Claims(_) => "claims",
            Request::Embed(_) => "embed",
            Request::Predict(_) => "predict",
            Request::Session(_) => "session",
            Request::RopeIdentity(_) => "rope identity",
            Request::RopeScore(_) => "rope score",
            Request::RopePeriod(_) => "rope period",
            Request::RopeResolve(_) => "rope resolve",
            Request::RopeAudit(_) => "rope audit",
            Request::RopeEngines(_) => "rope engines",
        }
    }

    /// Builds a request from the command's name and a JSON body (an object whose fields are the
    /// CLI's long options in snake_case). Unknown fields are errors, not silently ignored.
    /// Two-word commands are spelled as the CLI does (`rope audit`) or as in URLs
    /// (`rope/audit`).
    ///
    /// # Errors
    /// An unknown command, a body that is not an object, unknown fields, wrong types.
    pub fn from_json(command: &str, body: serde_json::Value) -> Result<Request> {
        fn typed<T: Serialize + for<'de> Deserialize<'de> + Default>(
            command: &str,
            body: serde_json::Value,
        ) -> Result<T> {
            let serde_json::Value::Object(map) = &body else {
                return Err(Error::invalid(
                    format!("{command} request"),
                    crate::present::text::shorten(&body.to_string()),
                    "a JSON object whose fields are the command's options",
                ));
            };
            let known = serde_json::to_value(T::default()).unwrap_or_default();
            if let Some(known) = known.as_object() {
                if let Some(k) = map.keys().find(|k| !known.contains_key(k.as_str())) {
                    let mut names: Vec<&str> = known.keys().map(String::as_str).collect();
                    names.sort_unstable();
                    return Err(Error::invalid(
                        format!("{command} request field"),
                        crate::present::text::shorten(k),
                        format!("one of {}", names.join(", ")),
                    ));
                }
            }
            serde_json::from_value(body).map_err(|e| {
                Error::invalid(
                    format!("{command} request"),
                    crate::present::text::shorten(&e.to_string()),
                    format!("the fields documented by `attnlab {command} --help`"),
                )
            })
        }
        Ok(match command {
            "attend" => Request::Attend(typed(command, body)?),
            "equivariance" => Request::Equivariance(typed(command, body)?),
            "lab" => Request::Lab(typed(command, body)?),
            "claims" => Request::Claims(typed(command, body)?),
            "embed" => Request::Embed(typed(command, body)?),
            "predict" => Request::Predict(typed(command, body)?),
            "session" => Request::Session(typed(command, body)?),
            "rope identity" | "rope/identity" => Request::RopeIdentity(typed(command, body)?),
            "rope score" | "rope/score" => Request::RopeScore(typed(command, body)?),
            "rope period" | "rope/period" => Request::RopePeriod(typed(command, body)?),
            "rope resolve" | "rope/resolve" => Request::RopeResolve(typed(command, body)?),
            "rope audit" | "rope/audit" => Request::RopeAudit(typed(command, body)?),
            "rope engines" | "rope/engines" => Request::RopeEngines(typed(command, body)?),
            other => {
                return Err(Error::invalid(
                    "command",
                    crate::present::text::shorten(other),
                    COMMANDS.join(", "),
                ))
            }
        })
    }
}

impl Report {
    /// What the report concluded (the exit code).
    pub fn outcome(&self) -> Outcome {
        match self {
            Report::Attend(_) => Outcome::Holds,
            Report::Equivariance(r) => r.outcome(),
            Report::Lab(r) => r.outcome(),
            Report::Claims(r) => r.outcome(),
            Report::Embed(r) => r.outcome(),
            Report::Predict(r) => r.outcome(),
            Report::Session(r) => r.outcome(),
            Report::RopeIdentity(r) => r.outcome(),
            Report::RopeScore(r) => r.outcome(),
            Report::RopePeriod(r) => r.outcome(),
            Report::RopeResolve(r) => r.outcome(),
            Report::RopeAudit(r) => r.outcome(),
            Report::RopeEngines(r) => r.outcome(),
        }
    }

    /// The charts that show this report (empty when a table says it all).
    pub fn charts(&self) -> Vec<Chart> {
        match self {
            Report::Attend(r) => r.charts(),
            Report::Equivariance(r) => r.charts(),
            Report::Lab(r) => r.charts(),
            Report::Claims(r) => r.charts(),
            Report::Embed(r) => r.charts(),
            Report::Predict(r) => r.charts(),
            Report::Session(r) => r.charts(),
            Report::RopeIdentity(r) => r.charts(),
            Report::RopeScore(r) => r.charts(),
            Report::RopePeriod(r) => r.charts(),
            Report::RopeResolve(r) => r.charts(),
            Report::RopeAudit(r) => r.charts(),
            Report::RopeEngines(r) => r.charts(),
        }
    }
}

/// Runs one request with the default context (no progress, no cancellation, files allowed).
///
/// # Errors
/// Bad input, unreadable files, requests over the limits.
pub fn run(request: &Request) -> Result<Report> {
    run_with(request, &Context::default())
}

/// What `request` asks for, estimated from the request alone (before any file is read): its
/// peak memory and operation count. [`run_with`] refuses a request whose budget exceeds
/// `ctx.limits`; inputs read from files are checked again against the shapes their headers
/// declare, before their data is read.
pub fn budget(request: &Request) -> Budget {
    match request {
        Request::Attend(r) => attend::budget(r),
        Request::Equivariance(r) => equivariance::budget(r),
        Request::Lab(r) => lab::budget(r),
        Request::Claims(_) => Budget::default(),
        Request::Embed(r) => embed::budget(r),
        Request::Predict(r) => predict::budget(r),
        Request::Session(_) => Budget::default(),
        Request::RopeIdentity(r) => rope::identity::budget(r),
        Request::RopeScore(r) => rope::score::budget(r),
        Request::RopePeriod(_) => Budget::default(),
        Request::RopeResolve(r) => rope::resolve::budget(r),
        Request::RopeAudit(r) => rope::audit::budget(r),
        Request::RopeEngines(r) => rope::engines::budget(r),
    }
}

/// Runs one request.
///
/// # Errors
/// Bad input, unreadable files, requests over the limits, cancellation.
pub fn run_with(request: &Request, ctx: &Context) -> Result<Report> {
    Ok(match request {
        Request::Attend(r) => Report::Attend(Box::new(attend::run(r, ctx)?)),
        Request::Equivariance(r) => Report::Equivariance(Box::new(equivariance::run(r, ctx)?)),
        Request::Lab(r) => Report::Lab(Box::new(lab::run(r, ctx)?)),
        Request::Claims(r) => Report::Claims(Box::new(claims::run(r, ctx)?)),
        Request::Embed(r) => Report::Embed(Box::new(embed::run(r, ctx)?)),
        Request::Predict(r) => Report::Predict(Box::new(predict::run(r, ctx)?)),
        Request::Session(r) => Report::Session(Box::new(session::run(r, ctx)?)),
        Request::RopeIdentity(r) => Report::RopeIdentity(Box::new(rope::identity::run(r, ctx)?)),
        Request::RopeScore(r) => Report::RopeScore(Box::new(rope::score::run(r, ctx)?)),
        Request::RopePeriod(r) => Report::RopePeriod(Box::new(rope::period::run(r, ctx)?)),
        Request::RopeResolve(r) => Report::RopeResolve(Box::new(rope::resolve::run(r, ctx)?)),
        Request::RopeAudit(r) => Report::RopeAudit(Box::new(rope::audit::run(r, ctx)?)),
        Request::RopeEngines(r) => Report::RopeEngines(Box::new(rope::engines::run(r, ctx)?)),
    })
}
