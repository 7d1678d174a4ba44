//! `attnlab rope usage`.

use std::path::PathBuf;

use attnlab_core::api::rope::usage::UsageRequest;
use attnlab_core::api::Request;

use super::exec::{execute, Show};
use super::Outcome;

/// Which rotation planes a trained model uses: per layer, head and plane the bound
/// |q_k|·|k_k| a plane adds to a score (from the weights, and on a text), the share of score
/// energy in planes that never complete a turn within the trained context, and what that
/// means before changing the base (a report: exit 0 whatever it finds).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The checkpoint: a GGUF file, smollm2-135m (the cached SmolLM2, see scripts/fetch-smollm2),
    /// or a Hugging Face directory (config.json, *.safetensors, tokenizer.json).
    #[arg(long, default_value = "smollm2-135m")]
    model: String,
    /// A text whose queries and keys are measured too (mean |q_k|·|k_k| over its tokens; no BOS
    /// token added).
    #[arg(long, allow_hyphen_values = true)]
    text: Option<String>,
    /// Only this layer (0-based) [default: every layer].
    #[arg(long)]
    layer: Option<usize>,
    /// Write the layers × planes heat maps (usage_weights.svg, and usage_text.svg with --text)
    /// into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// `attnlab rope usage`: a report (exit 0 whatever it finds).
pub fn run(a: Args) -> anyhow::Result<Outcome> {
    let request = Request::RopeUsage(UsageRequest {
        model: a.model,
        text: a.text,
        layer: a.layer,
    });
    execute(
        &request,
        &Show {
            json: a.json,
            plot_dir: a.plot.as_deref(),
        },
    )
}
