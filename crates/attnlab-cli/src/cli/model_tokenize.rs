//! `attnlab model tokenize`.

use std::path::PathBuf;

use attnlab_core::api::model::tokenize::TokenizeRequest;
use attnlab_core::api::value::List;
use attnlab_core::api::{Outcome, Request};

use super::exec::{execute, Show};

/// Text → the model's token ids and pieces, and the row of the embedding table each id
/// selects (a label is an address).
#[derive(Debug, clap::Args)]
pub struct Args {
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

pub fn run(a: Args) -> anyhow::Result<Outcome> {
    execute(
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
    )
}
