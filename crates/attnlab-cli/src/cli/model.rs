//! `attnlab model …`: a real trained checkpoint (a Hugging Face directory), run by the core's
//! Llama-family forward. Options become the core's requests (`attnlab_core::api::model`); every
//! range check is the core's.

use clap::Subcommand;

use attnlab_core::api::model::{order::ModelOrderRequest, predict::ModelPredictRequest, PosChoice};
use attnlab_core::api::value::List;
use attnlab_core::api::Request;

use super::exec::{execute, Show};
use super::Outcome;

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// The next-token distribution at the last position: top: [{id, piece, logit, prob}].
    Predict(PredictArgs),
    /// Seed 000's question on a real model: the text vs a permutation of its tokens, with and
    /// without RoPE, and the first layer where the last position moves.
    Order(OrderArgs),
}

/// Options of `attnlab model predict`.
#[derive(Debug, clap::Args)]
pub struct PredictArgs {
    /// The checkpoint: a GGUF file, smollm2-135m (the cached SmolLM2, see scripts/fetch-smollm2), or a Hugging Face directory (config.json, *.safetensors, tokenizer.json).
    #[arg(long, default_value = "")]
    pub model: String,
    /// The text, tokenized by the model's tokenizer (no BOS token added).
    #[arg(long, conflicts_with = "ids")]
    pub text: Option<String>,
    /// Token ids, comma-separated (e.g. 1,42,7).
    #[arg(long)]
    pub ids: Option<String>,
    /// How many of the most likely tokens to list (1 … vocabulary size).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// rope (as trained) or none (the same model with cos = 1, sin = 0 in every layer).
    #[arg(long, value_parser = super::common::choice::<PosChoice>(), default_value_t = PosChoice::Rope)]
    pub pos: PosChoice,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Options of `attnlab model order`.
#[derive(Debug, clap::Args)]
pub struct OrderArgs {
    /// The checkpoint: a GGUF file, smollm2-135m (the cached SmolLM2, see scripts/fetch-smollm2), or a Hugging Face directory (config.json, *.safetensors, tokenizer.json).
    #[arg(long, default_value = "")]
    pub model: String,
    /// The text, tokenized by the model's tokenizer (no BOS token added).
    #[arg(long, conflicts_with = "ids")]
    pub text: Option<String>,
    /// Token ids, comma-separated (at least 3).
    #[arg(long)]
    pub ids: Option<String>,
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
}

pub fn run(cmd: ModelCommand) -> anyhow::Result<Outcome> {
    let show = |json| Show {
        json,
        plot_dir: None,
    };
    match cmd {
        ModelCommand::Predict(a) => execute(
            &Request::ModelPredict(ModelPredictRequest {
                model: a.model,
                text: a.text,
                ids: a.ids.as_deref().map(List::parse),
                top: a.top,
                pos: a.pos,
            }),
            &show(a.json),
        ),
        ModelCommand::Order(a) => execute(
            &Request::ModelOrder(ModelOrderRequest {
                model: a.model,
                text: a.text,
                ids: a.ids.as_deref().map(List::parse),
                perm: a.perm.as_deref().map(List::parse),
                top: a.top,
            }),
            &show(a.json),
        ),
    }
}
