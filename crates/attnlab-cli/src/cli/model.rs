//! `attnlab model …`: a real trained model — its file, its tokenizer (labels are addresses), and
//! the core's Llama-family forward on it. Options become the core's requests
//! (`attnlab_core::api::model`); every range check is the core's.

use std::path::PathBuf;

use attnlab_core::api::model::attention::ModelAttentionRequest;
use attnlab_core::api::model::info::InfoRequest;
use attnlab_core::api::model::tokenize::TokenizeRequest;
use attnlab_core::api::model::{order::ModelOrderRequest, predict::ModelPredictRequest, PosChoice};
use attnlab_core::api::value::List;
use attnlab_core::api::{Outcome, Request};

use super::exec::{execute, Show};

#[derive(Debug, clap::Subcommand)]
pub enum ModelCommand {
    /// What a GGUF model file says: architecture, layers, heads, KV heads, head_dim,
    /// vocabulary, trained context, rope metadata, tensor types and sizes, tokenizer.
    Info(InfoArgs),
    /// Text → the model's token ids and pieces, and the row of the embedding table each id
    /// selects (a label is an address).
    Tokenize(TokenizeArgs),
    /// The next-token distribution at the last position: top: [{id, piece, logit, prob}].
    Predict(PredictArgs),
    /// Seed 000's question on a real model: the text vs a permutation of its tokens, with and
    /// without RoPE, and the first layer where the last position moves.
    Order(OrderArgs),
    /// One head's attention weights in one layer, on the hidden states entering that layer for
    /// the text: the course's heat map on a trained model (row = query, column = key; causal).
    Attention(AttentionArgs),
}

/// The model and the tokens a forward runs on: `--model`, and `--text` or `--ids`.
#[derive(Debug, clap::Args)]
pub struct ModelInput {
    /// The checkpoint: a GGUF file, smollm2-135m (the cached SmolLM2, see scripts/fetch-smollm2), or a Hugging Face directory (config.json, *.safetensors, tokenizer.json).
    #[arg(long, default_value = "smollm2-135m")]
    pub model: String,
    /// The text, tokenized by the model's tokenizer (no BOS token added).
    #[arg(long, conflicts_with = "ids")]
    pub text: Option<String>,
    /// Token ids, comma-separated (e.g. 1,42,7).
    #[arg(long)]
    pub ids: Option<String>,
}

impl ModelInput {
    /// The ids parsed as the core's list (its range checks are the core's).
    fn ids(&self) -> Option<List> {
        self.ids.as_deref().map(List::parse)
    }
}

/// Options of `attnlab model info`.
#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    /// A GGUF file, or a known model name: smollm2-135m (fetched into the model cache by
    /// scripts/fetch-smollm2; ATTNLAB_MODEL_DIR names another cache).
    #[arg(long, default_value = "smollm2-135m")]
    pub model: String,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Options of `attnlab model tokenize`.
#[derive(Debug, clap::Args)]
pub struct TokenizeArgs {
    /// A GGUF file, or a known model name: smollm2-135m.
    #[arg(long, default_value = "smollm2-135m")]
    pub model: String,
    /// The text to tokenize.
    #[arg(long, allow_hyphen_values = true)]
    pub text: Option<String>,
    /// A UTF-8 file holding the text (for long texts).
    #[arg(long)]
    pub text_file: Option<PathBuf>,
    /// Token ids to look up instead of a text (comma-separated).
    #[arg(long)]
    pub ids: Option<String>,
    /// Values shown of each id's embedding row (0 to 64).
    #[arg(long, default_value_t = 4)]
    pub values: u64,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Options of `attnlab model predict`.
#[derive(Debug, clap::Args)]
pub struct PredictArgs {
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

/// Options of `attnlab model order`.
#[derive(Debug, clap::Args)]
pub struct OrderArgs {
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

/// Options of `attnlab model attention`.
#[derive(Debug, clap::Args)]
pub struct AttentionArgs {
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

pub fn run(cmd: ModelCommand) -> anyhow::Result<Outcome> {
    let show = |json| Show {
        json,
        plot_dir: None,
    };
    match cmd {
        ModelCommand::Info(a) => execute(
            &Request::ModelInfo(InfoRequest { model: a.model }),
            &show(a.json),
        ),
        ModelCommand::Tokenize(a) => execute(
            &Request::ModelTokenize(TokenizeRequest {
                model: a.model,
                text: a.text,
                text_file: a.text_file,
                ids: a.ids.as_deref().map(List::parse),
                values: a.values,
            }),
            &show(a.json),
        ),
        ModelCommand::Predict(a) => execute(
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
        ),
        ModelCommand::Order(a) => execute(
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
        ),
        ModelCommand::Attention(a) => execute(
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
        ),
    }
}
