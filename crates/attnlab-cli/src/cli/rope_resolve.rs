//! `attnlab rope resolve`.

use attnlab_core::api::rope::resolve::ResolveRequest;
use attnlab_core::api::Request;

use super::exec::{execute, Show};
use super::rope::{context, number, SourceArgs};
use super::Outcome;

/// Check that a frequency set distinguishes every separation 1..L−1 from 0 (exit 1 if not).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    source: SourceArgs,
    /// Context length L: separations 1..L−1 are examined, e.g. 4096, 128k, 1M, 2^17, 1e6
    /// (L ≤ 2^30, and L × planes ≤ 2^34) [default: the config's max_position_embeddings].
    #[arg(long, allow_hyphen_values = true)]
    context: Option<String>,
    /// Alias tolerance (radians): s aliases 0 when every plane is within tol of a full turn.
    #[arg(long, allow_hyphen_values = true, default_value = "1e-9")]
    tol: String,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// `attnlab rope resolve`: a check. Exit 0 when every separation 1..L−1 is distinguished from
/// 0, exit 1 when some separation aliases 0.
pub fn run(a: Args) -> anyhow::Result<Outcome> {
    let request = Request::RopeResolve(ResolveRequest {
        source: a.source.source()?,
        context: context(a.context.as_deref())?,
        tol: number("tol", &a.tol)?,
    });
    execute(
        &request,
        &Show {
            json: a.json,
            plot_dir: None,
        },
    )
}
