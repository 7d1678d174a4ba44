//! # attnlab-web — the lab in the browser
//!
//! A local HTTP server (axum on tokio) with the CLI's contract as its API and one page whose
//! assets are compiled into the binary (no CDN, no network: it works offline).
//!
//! * `POST /api/<command>` (`/api/attend`, `/api/rope/audit`, …: every name in
//!   [`attnlab_core::api::COMMANDS`], spaces as slashes) takes the command's request as a JSON
//!   object — field names are the CLI's long options in snake_case, absent fields take the CLI's
//!   defaults, an empty body is `{}` — and answers exactly the JSON `attnlab <command> --json`
//!   prints for the same options (HTTP 200 whether the checked property holds or fails; the
//!   header `x-attnlab-outcome` says which). `?charts=svg` and/or `?text=1` wrap it instead as
//!   `{"outcome", "report", "charts": [{"name", "title", "svg"}], "text"}`: the CLI's figures and
//!   its text rendering, drawn by `attnlab-render`.
//! * `GET /api/presets` lists the built-in rope presets; `GET /api/commands` the commands and the
//!   server's limits.
//! * Errors are `{"error": "<the CLI's one-line message>"}`: 400 for bad input (malformed JSON,
//!   unknown or wrong-typed fields, values over the core's caps or its work budget — said in
//!   the server's words, not the CLI's options — a request naming a file), 413 for a body over
//!   [`Limits::body_bytes`], 408 for a body slower than [`Limits::body_timeout`], 404 for an
//!   unknown command, 503 when the time limit passes (the computation is cancelled through
//!   [`attnlab_core::api::Context::cancel`]) or when [`Limits::max_connections`] are open.
//!   Input never causes a 500; a 500 means a bug.
//!
//! Requests run on tokio's blocking pool with at most [`Limits::workers`] computations at once
//! (the others wait, within their time limit), with `Context { allow_files: false }`: no request
//! reads or writes a file.
//!
//! There is no per-command code here: a command added to the core's `api` is served as soon as
//! it is in `COMMANDS`.

#![warn(missing_docs)]

mod assets;
mod handlers;
mod server;
#[doc(hidden)]
pub mod testing;

pub use handlers::{router, router_with_shutdown, url_name, Limits};
pub use server::{run, serve, ServeOptions, DEFAULT_ADDR};
