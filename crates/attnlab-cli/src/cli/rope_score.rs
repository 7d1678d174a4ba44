//! `attnlab rope score`.

use std::path::PathBuf;

use attnlab_core::api::rope::{score::ScoreRequest, FrequencySource};
use attnlab_core::api::value::{Count, List};
use attnlab_core::api::Request;
use attnlab_core::spectrum::resolve::DEFAULT_TOL;

use super::rope::execute_with_plots;
use super::Outcome;

/// Positional contribution to a score vs separation: cos(sω), averaged over several frequencies.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("freqs").required(true).args(["omega", "base"])))]
pub struct Args {
    /// Frequencies, comma-separated expressions: pi/2,pi/3 (exact), 0.25, 2*pi/7.
    #[arg(long, allow_hyphen_values = true)]
    omega: Option<String>,
    /// Base θ of ω_k = θ^(−2k/D), k = 0..D/2 (with --dim).
    #[arg(long, requires = "dim", conflicts_with = "omega")]
    base: Option<f64>,
    /// Rotary dimension D (even, ≤ 32768) for --base.
    #[arg(long, requires = "base", conflicts_with = "omega")]
    dim: Option<u64>,
    /// Largest separation s shown (1..=1000000, and separations × frequencies ≤ 2^24).
    #[arg(long, default_value_t = 8)]
    max_sep: u64,
    /// Phase tolerance (radians): s "scores like 0" when every plane's phase s·ω is within tol
    /// of a full turn — the same criterion as `rope resolve`.
    #[arg(long, default_value_t = DEFAULT_TOL)]
    tol: f64,
    /// Write every chart (score.svg: score vs separation) into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<Outcome> {
    let request = Request::RopeScore(ScoreRequest {
        source: FrequencySource {
            omega: a.omega.as_deref().map(List::parse),
            base: a.base,
            dim: a.dim.map(Count),
            ..FrequencySource::default()
        },
        max_sep: Count(a.max_sep),
        tol: a.tol,
    });
    execute_with_plots(&request, a.json, a.plot.as_deref())
}
