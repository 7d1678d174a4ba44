//! `attnlab rope identity`.

use std::path::PathBuf;

use attnlab_core::api::rope::identity::IdentityRequest;
use attnlab_core::api::Request;

use super::rope::{count, execute_with_plots, SourceArgs, NON_NEGATIVE};
use super::Outcome;

/// The relative-position identity (R(iω)q)ᵀ(R(jω)k) = qᵀR((j−i)ω)k, and translation invariance per dtype.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    source: SourceArgs,
    /// Seed of the ChaCha8 generator for q, k and positions.
    #[arg(long, allow_hyphen_values = true, default_value = "0")]
    seed: String,
    /// Number of random (q, k, i, j) trials (1..=1000000).
    #[arg(long, allow_hyphen_values = true, default_value = "200")]
    trials: String,
    /// Largest shift t of the translation-invariance table (log grid, 4 per decade; ≤ 2^40).
    #[arg(long, allow_hyphen_values = true, default_value = "1e9")]
    max_shift: String,
    /// Write every chart (invariance.svg: error vs shift per dtype, log-log) into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// `attnlab rope identity`: default frequencies base 10000, dim 64.
pub fn run(a: Args) -> anyhow::Result<Outcome> {
    let request = Request::RopeIdentity(IdentityRequest {
        source: a.source.source()?,
        seed: count(
            "seed",
            &a.seed,
            "a non-negative integer seed below 2^64, e.g. 0 or 42",
        )?
        .get(),
        trials: count("trials", &a.trials, NON_NEGATIVE)?,
        max_shift: count("max-shift", &a.max_shift, NON_NEGATIVE)?,
    });
    execute_with_plots(&request, a.json, a.plot.as_deref())
}
