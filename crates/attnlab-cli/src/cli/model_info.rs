//! `attnlab model info`.

use attnlab_core::api::model::info::InfoRequest;
use attnlab_core::api::{Outcome, Request};

use super::exec::{execute, Show};

/// What a GGUF model file says: architecture, layers, heads, KV heads, head_dim,
/// vocabulary, trained context, rope metadata, tensor types and sizes, tokenizer.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A GGUF file, or a known model name: smollm2-135m (fetched into the model cache by
    /// scripts/fetch-smollm2; ATTNLAB_MODEL_DIR names another cache).
    #[arg(long, default_value = "smollm2-135m")]
    pub model: String,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> anyhow::Result<Outcome> {
    execute(
        &Request::ModelInfo(InfoRequest { model: a.model }),
        &Show {
            json: a.json,
            plot_dir: None,
        },
    )
}
