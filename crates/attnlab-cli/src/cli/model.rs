//! What the `attnlab model …` commands share: the model and the tokens a forward runs on.
//! Options become the core's requests (`attnlab_core::api::model`); every range check is the
//! core's.

use attnlab_core::api::value::List;

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
    pub fn ids(&self) -> Option<List> {
        self.ids.as_deref().map(List::parse)
    }
}
