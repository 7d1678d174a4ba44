//! `attnlab rope …`: the subcommand enum. `score` lives here; `identity`, `period`, `resolve`
//! and `audit` live in [`super::rope_spectrum`].

use clap::Subcommand;

use super::rope_spectrum;
use super::Outcome;

#[derive(Debug, Subcommand)]
pub enum RopeCommand {
    /// The relative-position identity (R(iω)q)ᵀ(R(jω)k) = qᵀR((j−i)ω)k, and translation invariance per dtype.
    Identity(rope_spectrum::IdentityArgs),
    /// Positional contribution to a score vs separation: cos(sω), averaged over several frequencies.
    Score(ScoreArgs),
    /// The first separation at which a single frequency repeats (exact for rational multiples of π).
    Period(rope_spectrum::PeriodArgs),
    /// Which separations in 1..L−1 a frequency set distinguishes.
    Resolve(rope_spectrum::ResolveArgs),
    /// Audit a model's RoPE configuration: wavelengths, resolution, decay, precision.
    Audit(rope_spectrum::AuditArgs),
}

/// Options of `attnlab rope score` (being written).
#[derive(Debug, clap::Args)]
pub struct ScoreArgs {}

pub fn run(cmd: RopeCommand) -> anyhow::Result<Outcome> {
    match cmd {
        RopeCommand::Identity(a) => rope_spectrum::identity(a),
        RopeCommand::Score(_a) => anyhow::bail!("rope score is not yet implemented"),
        RopeCommand::Period(a) => rope_spectrum::period(a),
        RopeCommand::Resolve(a) => rope_spectrum::resolve(a),
        RopeCommand::Audit(a) => rope_spectrum::audit(a),
    }
}
