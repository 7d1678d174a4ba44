//! `attnlab model order`.

use std::path::PathBuf;

use attnlab_core::api::model::order::ModelOrderRequest;
use attnlab_core::api::value::List;
use attnlab_core::api::{Outcome, Request};

use super::exec::{execute, Show};
use super::model::ModelInput;

/// Seed 000's question on a real model: the text vs a permutation of its tokens, with and
/// without RoPE, and the first layer where the last position moves.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub input: ModelInput,
    /// The permutation of the tokens, comma-separated (new position i holds old token P[i])
    /// [default: the reversal].
    #[arg(long)]
    pub perm: Option<String>,
    /// Tokens listed per distribution.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Write the chart (SVG) into DIR: depth (the last position's change after each layer,
    /// without and with RoPE, against the round-off tolerance).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<Outcome> {
    execute(
        &Request::ModelOrder(ModelOrderRequest {
            ids: a.input.ids(),
            model: a.input.model,
            text: a.input.text,
            perm: a.perm.as_deref().map(List::parse),
            top: a.top,
        }),
        &Show {
            json: a.json,
            plot_dir: a.plot.as_deref(),
        },
    )
}
