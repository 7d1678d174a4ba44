//! `attnlab model predict`.

use std::path::PathBuf;

use attnlab_core::api::model::{predict::ModelPredictRequest, PosChoice};
use attnlab_core::api::{Outcome, Request};

use super::exec::{execute, Show};
use super::model::ModelInput;

/// The next-token distribution at the last position: top: [{id, piece, logit, prob}].
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub input: ModelInput,
    /// How many of the most likely tokens to list (1 … vocabulary size).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// rope (as trained) or none (the same model with cos = 1, sin = 0 in every layer).
    #[arg(long, value_parser = super::common::choice::<PosChoice>(), default_value_t = PosChoice::Rope)]
    pub pos: PosChoice,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Write the chart (SVG) into DIR: top (the listed tokens' probabilities as bars).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<Outcome> {
    execute(
        &Request::ModelPredict(ModelPredictRequest {
            ids: a.input.ids(),
            model: a.input.model,
            text: a.input.text,
            top: a.top,
            pos: a.pos,
        }),
        &Show {
            json: a.json,
            plot_dir: a.plot.as_deref(),
        },
    )
}
