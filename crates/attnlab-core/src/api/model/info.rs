//! `attnlab model info`: what a model file says about the model — architecture, dimensions,
//! rope metadata, tensor types and sizes, tokenizer kind.

use serde::{Deserialize, Serialize};

use crate::api::{Context, Outcome};
use crate::chart::Chart;
use crate::limits::Budget;
use crate::model::tokenizer::ModelTokenizer;
use crate::model::{ModelInfo, SUPPORTED_ARCHITECTURES};
use crate::Result;

/// The request of `attnlab model info`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InfoRequest {
    /// A GGUF file, or a known model name (`smollm2-135m`, fetched by `scripts/fetch-smollm2`).
    pub model: String,
}

impl Default for InfoRequest {
    fn default() -> Self {
        InfoRequest {
            model: super::DEFAULT_MODEL.into(),
        }
    }
}

/// One metadata entry, summarised (arrays as their length and element type).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetaEntry {
    /// The key.
    pub key: String,
    /// The value in a few words.
    pub value: String,
}

/// The report of `attnlab model info`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InfoReport {
    /// The file read.
    pub path: String,
    /// Its size in bytes.
    pub file_bytes: u64,
    /// GGUF version.
    pub gguf_version: u32,
    /// Alignment of tensor data.
    pub alignment: u64,
    /// The byte at which tensor data starts.
    pub data_start: u64,
    /// The model's numbers.
    #[serde(flatten)]
    pub info: ModelInfo,
    /// The architectures the forward builds.
    pub supported_architectures: Vec<&'static str>,
    /// The tokenizer's vocabulary size, when the file's tokenizer is one attnlab builds.
    pub tokenizer_vocab: Option<u32>,
    /// Why the tokenizer cannot be built, when it cannot.
    pub tokenizer_error: Option<String>,
    /// Every metadata entry, summarised.
    pub metadata: Vec<MetaEntry>,
}

impl InfoReport {
    /// Always holds (a description).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// No charts.
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// Reading a header: bounded by the file-size and memory limits as it is read.
pub fn budget(_: &InfoRequest) -> Budget {
    Budget::default()
}

/// Runs `model info`.
///
/// # Errors
/// See [`super::open`]; a model file without the dimensions a model needs.
pub fn run(req: &InfoRequest, ctx: &Context) -> Result<InfoReport> {
    let f = super::open(&req.model, ctx)?;
    let info = ModelInfo::from_gguf(&f)?;
    let (tokenizer_vocab, tokenizer_error) = match ModelTokenizer::from_gguf(&f) {
        Ok(t) => (Some(t.vocab_size()), None),
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(InfoReport {
        path: crate::present::text::shorten_path(f.path()),
        file_bytes: f.size(),
        gguf_version: f.version(),
        alignment: f.alignment(),
        data_start: f.data_start(),
        supported_architectures: SUPPORTED_ARCHITECTURES.to_vec(),
        tokenizer_vocab,
        tokenizer_error,
        metadata: f
            .metadata()
            .iter()
            .map(|(k, v)| MetaEntry {
                key: k.clone(),
                value: v.summary(),
            })
            .collect(),
        info,
    })
}
