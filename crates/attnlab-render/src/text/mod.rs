//! Text renderings of reports: the tables and sentences `attnlab <command>` prints, Python's
//! `repr(report)` and the web lab's plain-text view. One function per report; numbers go through
//! the core's one formatter ([`attnlab_core::present::number`]).

pub mod attend;
pub mod check;
mod claims;
mod embed;
mod equivariance;
mod lab;
mod predict;
pub mod presets;
mod rope_audit;
mod rope_common;
mod rope_engines;
mod rope_identity;
mod rope_period;
mod rope_resolve;
mod rope_score;
pub mod session;
mod table;

pub use equivariance::timings as equivariance_timings;
pub use table::{matrix_table, matrix_table_with, table, MAX_COLS_SHOWN, MAX_ROWS_SHOWN};

use attnlab_core::api::Report;

/// The text rendering of any report (ends with a newline).
pub fn render(report: &Report) -> String {
    match report {
        Report::Attend(r) => attend::render(r),
        Report::Equivariance(r) => equivariance::render(r),
        Report::Lab(r) => lab::render(r),
        Report::Claims(r) => claims::render(r),
        Report::Embed(r) => embed::render(r),
        Report::Predict(r) => predict::render(r),
        Report::Session(r) => session::render(r),
        Report::RopeIdentity(r) => rope_identity::render(r),
        Report::RopeScore(r) => rope_score::render(r),
        Report::RopePeriod(r) => rope_period::render(r),
        Report::RopeResolve(r) => rope_resolve::render(r),
        Report::RopeAudit(r) => rope_audit::render(r),
        Report::RopeEngines(r) => rope_engines::render(r),
    }
}
