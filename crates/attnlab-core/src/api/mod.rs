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
pub mod model;
pub mod predict;
pub mod rope;
pub mod session;
pub mod value;

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::chart::Chart;
use crate::limits::{Budget, Limits};
use crate::{Error, Result};

pub use crate::report::Outcome;

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

/// Builds a request body of type `T` from a JSON object, naming `command` in its errors;
/// unknown fields are errors (the known ones are the fields of `T::default()`'s serialisation).
fn typed<T: Serialize + for<'de> Deserialize<'de> + Default>(
    command: &str,
    body: serde_json::Value,
) -> Result<T> {
    let serde_json::Value::Object(map) = &body else {
        return Err(Error::invalid(
            format!("{command} request"),
            crate::text::shorten(&body.to_string()),
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
                crate::text::shorten(k),
                format!("one of {}", names.join(", ")),
            ));
        }
    }
    serde_json::from_value(body).map_err(|e| {
        Error::invalid(
            format!("{command} request"),
            crate::text::shorten(&e.to_string()),
            format!("the fields documented by `attnlab {command} --help`"),
        )
    })
}

/// One command, seen through its request type: its name, its report, how it runs and what it
/// costs. Implemented by the command table (`commands!`) for every request type in the table.
pub trait Command: Serialize + for<'de> Deserialize<'de> + Default + Into<Request> {
    /// The command's name as the CLI spells it (`rope audit`).
    const NAME: &'static str;
    /// The report it returns.
    type Report: Serialize;
    /// Runs it (the command module's `run`).
    ///
    /// # Errors
    /// Bad input, unreadable files, requests over the limits, cancellation.
    fn run(&self, ctx: &Context) -> Result<Self::Report>;
    /// Its estimated peak memory and operations (the command module's `budget`).
    fn budget(&self) -> Budget;
}

/// The core's half of the command table ([`for_each_command!`]): generates [`Request`],
/// [`Report`], [`COMMANDS`], [`Request::from_json`], [`Report::outcome`], [`Report::charts`],
/// [`budget`], [`run_with`] and [`Command`] for each request type.
///
/// The module of a line holds `run(&Request, &Context) -> Result<Report>` and
/// `budget(&Request) -> Budget`, and the report `outcome()` and `charts()`. A subcommand is a
/// name with a space (`"rope audit"`, served as `/api/rope/audit`) and a module under its group
/// (`rope::audit`).
macro_rules! commands {
    ($(
        $(#[$meta:meta])*
        $variant:ident / $file:ident = $name:literal => $($module:ident)::+ :: { $req:ident, $rep:ident }
    ),+ $(,)?) => {
        /// One request, for any command.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "command")]
        pub enum Request {
            $( $(#[$meta])* #[serde(rename = $name)] $variant($($module::)+$req), )+
        }

        /// One report, for any command; serialises as the command's own report (no wrapper).
        #[derive(Debug, Clone, Serialize)]
        #[serde(untagged)]
        pub enum Report {
            $( $(#[$meta])* $variant(Box<$($module::)+$rep>), )+
        }

        /// The command names, as the CLI spells them (`rope audit` is `rope/audit` in URLs).
        pub const COMMANDS: &[&str] = &[$($name),+];

        $(
            impl Command for $($module::)+$req {
                const NAME: &'static str = $name;
                type Report = $($module::)+$rep;
                fn run(&self, ctx: &Context) -> Result<Self::Report> {
                    $($module::)+run(self, ctx)
                }
                fn budget(&self) -> Budget {
                    $($module::)+budget(self)
                }
            }

            impl From<$($module::)+$req> for Request {
                fn from(r: $($module::)+$req) -> Request {
                    Request::$variant(r)
                }
            }

            impl From<$($module::)+$rep> for Report {
                fn from(r: $($module::)+$rep) -> Report {
                    Report::$variant(Box::new(r))
                }
            }
        )+

        impl Request {
            /// The command's name as the CLI spells it.
            pub fn command(&self) -> &'static str {
                match self {
                    $(Request::$variant(_) => $name,)+
                }
            }

            /// Builds a request from the command's name and a JSON body (an object whose fields
            /// are the CLI's long options in snake_case). Unknown fields are errors, not silently
            /// ignored. Subcommands are spelled as the CLI does (`rope audit`) or as in URLs
            /// (`rope/audit`).
            ///
            /// # Errors
            /// An unknown command, a body that is not an object, unknown fields, wrong types.
            pub fn from_json(command: &str, body: serde_json::Value) -> Result<Request> {
                Ok(match command.replace('/', " ").as_str() {
                    $($name => Request::$variant(typed(command, body)?),)+
                    _ => {
                        return Err(Error::invalid(
                            "command",
                            crate::text::shorten(command),
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
                    $(Report::$variant(r) => r.outcome(),)+
                }
            }

            /// The charts that show this report (empty when a table says it all).
            pub fn charts(&self) -> Vec<Chart> {
                match self {
                    $(Report::$variant(r) => r.charts(),)+
                }
            }
        }

        /// What `request` asks for, estimated from the request alone (before any file is read):
        /// its peak memory and operation count. [`run_with`] refuses a request whose budget
        /// exceeds `ctx.limits`; inputs read from files are checked again against the shapes
        /// their headers declare, before their data is read.
        pub fn budget(request: &Request) -> Budget {
            match request {
                $(Request::$variant(r) => Command::budget(r),)+
            }
        }

        /// Runs one request.
        ///
        /// # Errors
        /// Bad input, unreadable files, requests over the limits, cancellation.
        pub fn run_with(request: &Request, ctx: &Context) -> Result<Report> {
            Ok(match request {
                $(Request::$variant(r) => Report::$variant(Box::new(Command::run(r, ctx)?)),)+
            })
        }
    };
}

/// The command table, in the order `attnlab --help` lists the commands: calls the macro
/// `$callback` with one line per command, `Variant / file = "cli name" => module::{Request,
/// Report}`. `module` is the command's module under [`api`](crate::api); `file` names the
/// command's module in each front end (`text/<file>.rs` in attnlab-render, `cli/<file>.rs` in
/// the CLI). The core generates its contract from the table (`commands!` above); the text
/// renderer and the CLI generate their module declarations and dispatch from it, so a new
/// command is one line here plus its module in each crate, and a missing module is a compile
/// error.
#[macro_export]
macro_rules! for_each_command {
    ($callback:ident) => {
        $callback! {
        /// `attnlab lab`.
        Lab / lab = "lab" => lab::{LabRequest, LabReport},
        /// `attnlab claims`.
        Claims / claims = "claims" => claims::{ClaimsRequest, ClaimsReport},
        /// `attnlab attend`.
        Attend / attend = "attend" => attend::{AttendRequest, AttendReport},
        /// `attnlab equivariance`.
        Equivariance / equivariance = "equivariance" => equivariance::{EquivarianceRequest, EquivarianceReport},
        /// `attnlab embed`.
        Embed / embed = "embed" => embed::{EmbedRequest, EmbedReport},
        /// `attnlab rope identity`.
        RopeIdentity / rope_identity = "rope identity" => rope::identity::{IdentityRequest, IdentityReport},
        /// `attnlab rope score`.
        RopeScore / rope_score = "rope score" => rope::score::{ScoreRequest, ScoreReport},
        /// `attnlab rope period`.
        RopePeriod / rope_period = "rope period" => rope::period::{PeriodRequest, PeriodReport},
        /// `attnlab rope resolve`.
        RopeResolve / rope_resolve = "rope resolve" => rope::resolve::{ResolveRequest, ResolveReport},
        /// `attnlab rope audit`.
        RopeAudit / rope_audit = "rope audit" => rope::audit::{AuditRequest, AuditReport},
        /// `attnlab rope engines`.
        RopeEngines / rope_engines = "rope engines" => rope::engines::{EnginesRequest, EnginesReport},
        /// `attnlab rope usage`.
        RopeUsage / rope_usage = "rope usage" => rope::usage::{UsageRequest, UsageReport},
        /// `attnlab predict`.
        Predict / predict = "predict" => predict::{PredictRequest, PredictReport},
        /// `attnlab model info`.
        ModelInfo / model_info = "model info" => model::info::{InfoRequest, InfoReport},
        /// `attnlab model tokenize`.
        ModelTokenize / model_tokenize = "model tokenize" => model::tokenize::{TokenizeRequest, TokenizeReport},
        /// `attnlab model predict`.
        ModelPredict / model_predict = "model predict" => model::predict::{ModelPredictRequest, ModelPredictReport},
        /// `attnlab model order`.
        ModelOrder / model_order = "model order" => model::order::{ModelOrderRequest, ModelOrderReport},
        /// `attnlab model attention`.
        ModelAttention / model_attention = "model attention" => model::attention::{ModelAttentionRequest, ModelAttentionReport},
        /// `attnlab session` (scripted, or the step list).
        Session / session = "session" => session::{SessionRequest, SessionReport},
        }
    };
}

for_each_command!(commands);

/// Runs one request with the default context (no progress, no cancellation, files allowed).
///
/// # Errors
/// Bad input, unreadable files, requests over the limits.
pub fn run(request: &Request) -> Result<Report> {
    run_with(request, &Context::default())
}
