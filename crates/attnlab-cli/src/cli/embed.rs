//! `attnlab embed`: tokens → labels → one-hot → embedding rows, and basis changes.

use attnlab_core::api::embed::EmbedRequest;
use attnlab_core::api::value::BlocksSource;
use attnlab_core::api::{Outcome, Request};

use super::exec::{execute, Show};

/// Tokens → one-hot → embedding lookup, and the basis-change redundancy at a linear interface.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Blocks file with an embedding table E (and optionally "vocab"); default: the course's
    /// 3×2 table for the vocabulary (A, B, .).
    #[arg(long)]
    pub blocks: Option<std::path::PathBuf>,
    /// Text to tokenize and embed.
    #[arg(long, default_value = "A B")]
    pub text: String,
    /// Also show that h → S h with the next linear map W → W S⁻¹ (in rows: H → H·S, W → S⁻¹·W)
    /// leaves the output unchanged,
    /// and that the same change pushed through ReLU, softmax or layer norm does not.
    #[arg(long)]
    pub basis_change: bool,
    /// Seed of the random S and W of the basis-change experiment.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let request = Request::Embed(EmbedRequest {
        blocks: args.blocks.map(BlocksSource::Path),
        text: args.text,
        basis_change: args.basis_change,
        seed: args.seed,
    });
    execute(
        &request,
        &Show {
            json: args.json,
            plot_dir: None,
        },
    )
}
