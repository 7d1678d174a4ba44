//! `attnlab model attention`.

use std::path::PathBuf;

use attnlab_core::api::model::{attention::ModelAttentionRequest, PosChoice};
use attnlab_core::api::{Outcome, Request};

use super::exec::{execute, Show};
use super::model::ModelInput;

/// One head's attention weights in one layer, on the hidden states entering that layer for
/// the text: the course's heat map on a trained model (row = query, column = key; causal).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub input: ModelInput,
    /// The layer, 0 … layers − 1.
    #[arg(long, default_value_t = 0)]
    pub layer: usize,
    /// The query head, 0 … heads − 1.
    #[arg(long, default_value_t = 0)]
    pub head: usize,
    /// rope (as trained) or none (the same model with cos = 1, sin = 0 in every layer).
    #[arg(long, value_parser = super::common::choice::<PosChoice>(), default_value_t = PosChoice::Rope)]
    pub pos: PosChoice,
    /// Write the heat map as DIR/attention.svg.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> anyhow::Result<Outcome> {
    execute(
        &Request::ModelAttention(ModelAttentionRequest {
            ids: a.input.ids(),
            model: a.input.model,
            text: a.input.text,
            layer: a.layer,
            head: a.head,
            pos: a.pos,
        }),
        &Show {
            json: a.json,
            plot_dir: a.plot.as_deref(),
        },
    )
}
