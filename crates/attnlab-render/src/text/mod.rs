//! Text renderings of reports: the tables and sentences `attnlab <command>` prints, Python's
//! `repr(report)` and the web lab's plain-text view. One function per report; numbers go through
//! the core's one formatter ([`attnlab_core::present::number`]).

pub mod attend;
pub mod check;
mod claims;
mod embed;
mod equivariance;
mod lab;
mod model;
mod predict;
pub mod presets;
mod rope_audit;
mod rope_common;
mod rope_engines;
mod rope_identity;
mod rope_period;
mod rope_resolve;
mod rope_score;
mod rope_usage;
pub mod session;
mod table;
pub mod wrap;

pub use equivariance::timings as equivariance_timings;
pub use table::{matrix_table, matrix_table_with, table, MAX_COLS_SHOWN, MAX_ROWS_SHOWN};

use attnlab_core::api::{self, Report, ReportVisitor};

/// The text rendering of any report (ends with a newline).
pub fn render(report: &Report) -> String {
    report.visit(Text)
}

/// The text dispatch: one method per command of the core's table (a new command that has no
/// rendering here is a compile error).
struct Text;

impl ReportVisitor for Text {
    type Output = String;
    fn attend(self, r: &api::attend::AttendReport) -> String {
        attend::render(r)
    }
    fn equivariance(self, r: &api::equivariance::EquivarianceReport) -> String {
        equivariance::render(r)
    }
    fn lab(self, r: &api::lab::LabReport) -> String {
        lab::render(r)
    }
    fn claims(self, r: &api::claims::ClaimsReport) -> String {
        claims::render(r)
    }
    fn embed(self, r: &api::embed::EmbedReport) -> String {
        embed::render(r)
    }
    fn predict(self, r: &api::predict::PredictReport) -> String {
        predict::render(r)
    }
    fn session(self, r: &api::session::SessionReport) -> String {
        session::render(r)
    }
    fn rope_identity(self, r: &api::rope::identity::IdentityReport) -> String {
        rope_identity::render(r)
    }
    fn rope_score(self, r: &api::rope::score::ScoreReport) -> String {
        rope_score::render(r)
    }
    fn rope_period(self, r: &api::rope::period::PeriodReport) -> String {
        rope_period::render(r)
    }
    fn rope_resolve(self, r: &api::rope::resolve::ResolveReport) -> String {
        rope_resolve::render(r)
    }
    fn rope_audit(self, r: &api::rope::audit::AuditReport) -> String {
        rope_audit::render(r)
    }
    fn rope_engines(self, r: &api::rope::engines::EnginesReport) -> String {
        rope_engines::render(r)
    }
    fn rope_usage(self, r: &api::rope::usage::UsageReport) -> String {
        rope_usage::render(r)
    }
    fn model_info(self, r: &api::model::info::InfoReport) -> String {
        model::info(r)
    }
    fn model_tokenize(self, r: &api::model::tokenize::TokenizeReport) -> String {
        model::tokenize(r)
    }
    fn model_predict(self, r: &api::model::predict::ModelPredictReport) -> String {
        model::predict(r)
    }
    fn model_order(self, r: &api::model::order::ModelOrderReport) -> String {
        model::order(r)
    }
    fn model_attention(self, r: &api::model::attention::ModelAttentionReport) -> String {
        model::attention(r)
    }
}
