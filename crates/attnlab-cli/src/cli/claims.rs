//! `attnlab claims`: the claims ledger of both seeds, checked now.

use attnlab_core::api::claims::ClaimsRequest;
use attnlab_core::api::{Outcome, Request};
use attnlab_core::claims::Fault;

use super::exec::{execute, Show};

/// Every claim of both course documents, checked now; exit 1 if any fails.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a JSON array of claims on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Swap in a deliberately wrong implementation (to see the ledger fail; for testing).
    #[arg(long, value_parser = super::common::choice::<Fault>(), default_value_t = Fault::None, hide = true)]
    pub inject_fault: Fault,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let request = Request::Claims(ClaimsRequest {
        inject_fault: args.inject_fault,
    });
    execute(
        &request,
        &Show {
            json: args.json,
            plot_dir: None,
        },
    )
}
