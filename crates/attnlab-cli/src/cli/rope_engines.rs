//! `attnlab rope engines`.

use std::path::PathBuf;

use attnlab_core::api::rope::{engines::EnginesRequest, ConfigSource};
use attnlab_core::api::Request;

use super::exec::{execute, Show};
use super::rope::context;
use super::Outcome;

/// One config, every engine: the rotation transformers, vLLM, SGLang and llama.cpp (through
/// the GGUF conversion rules) each compute, and the first position where each one differs
/// from transformers beyond bf16 resolution (a report: exit 0 whatever it finds).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A Hugging Face config.json: a file, a pipe such as <(jq … config.json), or - for
    /// standard input.
    #[arg(long, conflicts_with = "preset")]
    config: Option<PathBuf>,
    /// A built-in model preset (`rope audit --list-presets` lists them).
    #[arg(long)]
    preset: Option<String>,
    /// The served context C (vLLM's max_model_len, llama.cpp's n_ctx), e.g. 4096, 128k, 2^17
    /// [default: the config's max_position_embeddings, or factor × original when larger].
    #[arg(long, allow_hyphen_values = true)]
    context: Option<String>,
    /// The engines to compare with transformers (comma-separated or repeated): transformers,
    /// vllm, sglang, llamacpp [default: all].
    #[arg(long, value_delimiter = ',', value_parser = super::common::choice::<attnlab_core::engines::Engine>())]
    engine: Vec<attnlab_core::engines::Engine>,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// `attnlab rope engines`: a report (exit 0 whatever it finds).
pub fn run(a: Args) -> anyhow::Result<Outcome> {
    let request = Request::RopeEngines(EnginesRequest {
        config: a.config.map(ConfigSource::Path),
        preset: a.preset,
        context: context(a.context.as_deref())?,
        engine: a.engine,
    });
    execute(
        &request,
        &Show {
            json: a.json,
            plot_dir: None,
        },
    )
}
