//! `attnlab attend`: one forward pass, printing the weights and the output.

use attnlab_core::api::attend::AttendRequest;
use attnlab_core::api::{Outcome, Request};

use super::common::InputArgs;
use super::exec::{execute, Show};

/// Options of `attnlab attend`.
#[derive(Debug, clap::Args)]
pub struct AttendArgs {
    #[command(flatten)]
    pub input: InputArgs,
}

pub fn run(args: AttendArgs) -> anyhow::Result<Outcome> {
    let request = Request::Attend(AttendRequest {
        input: args.input.layer_input(),
    });
    execute(
        &request,
        &Show {
            json: args.input.json,
            plot_dir: None,
        },
    )
}
