//! `attnlab predict`: the complete two-token prediction, every intermediate printed.

use attnlab_core::api::predict::PredictRequest;
use attnlab_core::api::value::BlocksSource;
use attnlab_core::api::{Outcome, Request};

use super::exec::{execute, Show};

/// The complete next-token prediction: tokens → embeddings → causal attention → readout → softmax.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The context: whitespace-separated tokens of the vocabulary (A, B, . by default).
    #[arg(long, default_value = "A B")]
    pub text: String,
    /// Blocks file (E, Wq, Wk, Wv, U and optionally "vocab"); missing blocks keep their defaults:
    /// the course table E, identity Wq = Wk = Wv, and U = Eᵀ (tied embeddings).
    #[arg(long)]
    pub blocks: Option<std::path::PathBuf>,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let request = Request::Predict(PredictRequest {
        text: args.text,
        blocks: args.blocks.map(BlocksSource::Path),
    });
    execute(
        &request,
        &Show {
            json: args.json,
            plot_dir: None,
        },
    )
}
