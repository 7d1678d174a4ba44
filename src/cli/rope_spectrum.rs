//! `attnlab rope identity|period|resolve|audit` (being written).

use super::Outcome;

/// Options of `attnlab rope identity`.
#[derive(Debug, clap::Args)]
pub struct IdentityArgs {}
/// Options of `attnlab rope period`.
#[derive(Debug, clap::Args)]
pub struct PeriodArgs {}
/// Options of `attnlab rope resolve`.
#[derive(Debug, clap::Args)]
pub struct ResolveArgs {}
/// Options of `attnlab rope audit`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {}

pub fn identity(_a: IdentityArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("rope identity is not yet implemented")
}
pub fn period(_a: PeriodArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("rope period is not yet implemented")
}
pub fn resolve(_a: ResolveArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("rope resolve is not yet implemented")
}
pub fn audit(_a: AuditArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("rope audit is not yet implemented")
}
