//! `attnlab rope period`.

use attnlab_core::api::rope::period::PeriodRequest;
use attnlab_core::api::value::List;
use attnlab_core::api::Request;

use super::exec::{execute, Show};
use super::rope::{count, number, NON_NEGATIVE};
use super::Outcome;

/// The first separation at which a single frequency repeats (exact for rational multiples of π).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The frequency (one expression: pi/2, -pi/2, 2*pi/7, 0.25; |ω| ≤ 1e4).
    #[arg(long, allow_hyphen_values = true)]
    omega: String,
    /// Phase tolerance (radians) for the first near-repeat search.
    #[arg(long, allow_hyphen_values = true, default_value = "1e-3")]
    tol: String,
    /// Search bound of the first separation within --tol (≤ 2^40).
    #[arg(long, allow_hyphen_values = true, default_value = "1e7")]
    max_sep: String,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<Outcome> {
    let request = Request::RopePeriod(PeriodRequest {
        omega: List(vec![a.omega.clone()]),
        tol: number("tol", &a.tol)?,
        max_sep: count("max-sep", &a.max_sep, NON_NEGATIVE)?,
    });
    execute(
        &request,
        &Show {
            json: a.json,
            plot_dir: None,
        },
    )
}
