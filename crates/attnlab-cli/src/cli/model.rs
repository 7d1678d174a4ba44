//! `attnlab model …`: a real trained model's file, tokenizer and numbers.

use std::path::PathBuf;

use attnlab_core::api::model::info::InfoRequest;
use attnlab_core::api::model::tokenize::TokenizeRequest;
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

pub fn run(cmd: ModelCommand) -> anyhow::Result<Outcome> {
    match cmd {
        ModelCommand::Info(a) => execute(
            &Request::ModelInfo(InfoRequest { model: a.model }),
            &Show {
                json: a.json,
                plot_dir: None,
            },
        ),
        ModelCommand::Tokenize(a) => execute(
            &Request::ModelTokenize(TokenizeRequest {
                model: a.model,
                text: a.text,
                text_file: a.text_file,
                ids: a.ids.as_deref().map(List::parse),
                values: a.values,
            }),
            &Show {
                json: a.json,
                plot_dir: None,
            },
        ),
    }
}
