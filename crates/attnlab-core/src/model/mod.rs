//! Real trained models: a model file's format, its tensors, its tokenizer and what it says
//! about itself.
//!
//! * [`gguf`] — the GGUF file (llama.cpp's format): header, metadata, tensor table, tensor data
//!   read lazily and bounds-checked ([`gguf::GgufFile`]).
//! * [`quant`] — ggml's tensor types and their dequantization to f32 ([`quant::dequantize`]).
//! * [`tokenizer`] — the model's tokenizer (byte-level BPE from the GGUF's vocabulary and
//!   merges, or a Hugging Face `tokenizer.json`): text → ids and pieces.
//! * [`ModelInfo`] — the architecture numbers a forward needs, read from the metadata.
//! * [`locate`] — `--model smollm2-135m` → the cached file.
//! * [`sublayer`] — one layer's attention sublayer as a map on hidden states (the checker's layer).
//! * [`llama`] — the Llama-family forward (llama, mistral, qwen2, qwen3) on [`llama::LlamaWeights`],
//!   which the loaders fill: [`hf`] (a Hugging Face directory) and [`gguf_weights`] (a GGUF file).
//!
//! ```no_run
//! use attnlab_core::model::{gguf::GgufFile, ModelInfo};
//! use attnlab_core::limits::Limits;
//! let f = GgufFile::open("SmolLM2-135M-Instruct.Q4_1.gguf".as_ref(), &Limits::default())?;
//! let info = ModelInfo::from_gguf(&f)?;
//! assert_eq!((info.layers, info.heads, info.kv_heads, info.head_dim), (30, 9, 3, 64));
//! let embd = f.tensor_f32("token_embd.weight")?; // 49152 rows of 576 values
//! # Ok::<(), attnlab_core::Error>(())
//! ```

pub mod gguf;
pub mod gguf_weights;
pub mod gguf_write;
pub mod hf;
pub mod llama;
pub mod locate;
pub mod quant;
pub mod sublayer;
pub mod tokenizer;
pub mod usage;

use serde::Serialize;

use crate::text;
use crate::{Error, Result};
use gguf::{GgufFile, Value};

/// The architectures whose forward attnlab builds (the llama family: same tensors, same
/// block).
pub const SUPPORTED_ARCHITECTURES: [&str; 4] = ["llama", "mistral", "qwen2", "qwen3"];

/// Rotary position metadata of a model file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RopeInfo {
    /// The base θ of the frequencies `θ^(−2i/d)` (`{arch}.rope.freq_base`; 10000 when absent).
    pub freq_base: f64,
    /// Whether `freq_base` was in the file (else llama.cpp's default 10000).
    pub freq_base_in_file: bool,
    /// How many of each head's dims rotate (`{arch}.rope.dimension_count`; head_dim when absent).
    pub dimension_count: u64,
    /// `{arch}.rope.scaling.*` keys as they are in the file (type, factor,
    /// original_context_length, …).
    pub scaling: Vec<(String, String)>,
    /// Whether a `rope_freqs.weight` tensor (per-plane frequency factors, llama 3's scaling) is
    /// present.
    pub rope_freqs_tensor: bool,
}

/// One tensor of the file, for a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorSummary {
    /// Its name.
    pub name: String,
    /// Its dims, ggml order (row length first).
    pub dims: Vec<u64>,
    /// Its type's name.
    pub ggml_type: &'static str,
    /// Its bytes in the file.
    pub bytes: u64,
}

/// How many tensors of one type, and their bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypeCount {
    /// The type's name.
    pub ggml_type: &'static str,
    /// Tensors of the type.
    pub tensors: u64,
    /// Their elements.
    pub elements: u64,
    /// Their bytes in the file.
    pub bytes: u64,
}

/// What a model file says about the model: the numbers a forward needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelInfo {
    /// `general.architecture` (`llama`).
    pub architecture: String,
    /// `general.name`, when present.
    pub name: Option<String>,
    /// Whether attnlab's forward builds this architecture ([`SUPPORTED_ARCHITECTURES`]).
    pub supported: bool,
    /// Transformer blocks (`{arch}.block_count`).
    pub layers: u64,
    /// Query heads (`{arch}.attention.head_count`).
    pub heads: u64,
    /// Key/value heads (`{arch}.attention.head_count_kv`; = heads when absent).
    pub kv_heads: u64,
    /// Dims per head (`{arch}.attention.key_length`, else embedding / heads).
    pub head_dim: u64,
    /// The residual stream's width (`{arch}.embedding_length`).
    pub embedding: u64,
    /// The MLP's hidden width (`{arch}.feed_forward_length`).
    pub feed_forward: u64,
    /// Vocabulary size (`{arch}.vocab_size`, else the tokenizer's token count, else the
    /// embedding table's rows).
    pub vocab: u64,
    /// The context length it was trained with (`{arch}.context_length`).
    pub context_length: u64,
    /// RMSNorm's ε (`{arch}.attention.layer_norm_rms_epsilon`).
    pub rms_norm_eps: Option<f64>,
    /// Rotary position metadata.
    pub rope: RopeInfo,
    /// Whether the output projection is the token embedding (no `output.weight` tensor).
    pub tied_embeddings: bool,
    /// The tokenizer's kind (`tokenizer.ggml.model`: `gpt2` is byte-level BPE, `llama` is
    /// SentencePiece) and its pre-tokenizer (`tokenizer.ggml.pre`).
    pub tokenizer_model: Option<String>,
    /// The pre-tokenizer's name (`smollm`).
    pub tokenizer_pre: Option<String>,
    /// Tensors per type.
    pub tensor_types: Vec<TypeCount>,
    /// Every tensor.
    pub tensors: Vec<TensorSummary>,
    /// Parameters (elements of every tensor).
    pub parameters: u64,
}

fn meta_u64(f: &GgufFile, key: &str) -> Result<Option<u64>> {
    match f.get(key) {
        None => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            Error::io(
                f.path(),
                format!(
                    "metadata {key} is {}; expected a non-negative integer",
                    v.summary()
                ),
            )
        }),
    }
}

fn require_u64(f: &GgufFile, key: &str) -> Result<u64> {
    meta_u64(f, key)?.ok_or_else(|| {
        Error::io(
            f.path(),
            format!("the model file has no {key} (a required model dimension)"),
        )
    })
}

impl ModelInfo {
    /// Reads the model's numbers from a GGUF file's metadata and tensor table.
    ///
    /// # Errors
    /// No `general.architecture`, a missing or non-integer dimension, dims that do not fit
    /// together (heads not dividing the embedding, KV heads not dividing heads).
    pub fn from_gguf(f: &GgufFile) -> Result<ModelInfo> {
        let arch = f
            .get("general.architecture")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                Error::io(
                    f.path(),
                    "the model file has no general.architecture string (not a model GGUF?)",
                )
            })?
            .to_string();
        let k = |s: &str| format!("{arch}.{s}");
        let layers = require_u64(f, &k("block_count"))?;
        let embedding = require_u64(f, &k("embedding_length"))?;
        let heads = require_u64(f, &k("attention.head_count"))?;
        if heads == 0 {
            return Err(Error::io(
                f.path(),
                format!(
                    "metadata {} is 0; expected at least 1",
                    k("attention.head_count")
                ),
            ));
        }
        let kv_heads = meta_u64(f, &k("attention.head_count_kv"))?.unwrap_or(heads);
        if kv_heads == 0 || heads % kv_heads != 0 {
            return Err(Error::io(
                f.path(),
                format!(
                    "metadata {} is {kv_heads}; expected a divisor of the {heads} query heads",
                    k("attention.head_count_kv")
                ),
            ));
        }
        let head_dim = match meta_u64(f, &k("attention.key_length"))? {
            Some(d) => d,
            None => embedding / heads,
        };
        let feed_forward = meta_u64(f, &k("feed_forward_length"))?.unwrap_or(0);
        let tokens = f
            .get("tokenizer.ggml.tokens")
            .and_then(Value::as_array)
            .map(|a| a.len() as u64);
        let vocab = match meta_u64(f, &k("vocab_size"))? {
            Some(v) => v,
            None => tokens
                .or_else(|| {
                    f.tensor("token_embd.weight")
                        .and_then(|t| t.dims.get(1).copied())
                })
                .unwrap_or(0),
        };
        let context_length = meta_u64(f, &k("context_length"))?.unwrap_or(0);
        let base = f.number(&k("rope.freq_base"))?;
        let prefix = k("rope.scaling.");
        let scaling = f
            .metadata()
            .iter()
            .filter(|(key, _)| key.starts_with(&prefix))
            .map(|(key, v)| (key[prefix.len()..].to_string(), v.summary()))
            .collect();
        let rope = RopeInfo {
            freq_base: base.unwrap_or(10000.0),
            freq_base_in_file: base.is_some(),
            dimension_count: meta_u64(f, &k("rope.dimension_count"))?.unwrap_or(head_dim),
            scaling,
            rope_freqs_tensor: f.tensor("rope_freqs.weight").is_some(),
        };
        let mut tensor_types: Vec<TypeCount> = Vec::new();
        let mut parameters = 0u64;
        for t in f.tensors() {
            parameters = parameters.saturating_add(t.elements);
            match tensor_types
                .iter_mut()
                .find(|c| c.ggml_type == t.ggml_type.name())
            {
                Some(c) => {
                    c.tensors += 1;
                    c.elements = c.elements.saturating_add(t.elements);
                    c.bytes = c.bytes.saturating_add(t.bytes);
                }
                None => tensor_types.push(TypeCount {
                    ggml_type: t.ggml_type.name(),
                    tensors: 1,
                    elements: t.elements,
                    bytes: t.bytes,
                }),
            }
        }
        let tensors = f
            .tensors()
            .iter()
            .map(|t| TensorSummary {
                name: t.name.clone(),
                dims: t.dims.clone(),
                ggml_type: t.ggml_type.name(),
                bytes: t.bytes,
            })
            .collect();
        let rms_norm_eps = f.number(&k("attention.layer_norm_rms_epsilon"))?;
        Ok(ModelInfo {
            supported: SUPPORTED_ARCHITECTURES.contains(&arch.as_str()),
            name: f
                .get("general.name")
                .and_then(Value::as_str)
                .map(str::to_owned),
            architecture: arch,
            layers,
            heads,
            kv_heads,
            head_dim,
            embedding,
            feed_forward,
            vocab,
            context_length,
            rms_norm_eps,
            rope,
            tied_embeddings: f.tensor("output.weight").is_none(),
            tokenizer_model: f
                .get("tokenizer.ggml.model")
                .and_then(Value::as_str)
                .map(str::to_owned),
            tokenizer_pre: f
                .get("tokenizer.ggml.pre")
                .and_then(Value::as_str)
                .map(str::to_owned),
            tensor_types,
            tensors,
            parameters,
        })
    }

    /// The file's rope metadata as a Hugging Face `config.json` object, so the rope commands
    /// audit a GGUF file like a config: `model_type` = the architecture, `rope_theta` =
    /// `rope.freq_base`, `max_position_embeddings` = `context_length`, `head_dim`,
    /// `hidden_size`, `num_attention_heads`, `num_key_value_heads`, `partial_rotary_factor` =
    /// `rope.dimension_count / head_dim` (when below 1), and `rope_scaling` from
    /// `rope.scaling.type` / `.factor` / `.original_context_length` (when a type other than
    /// `none` is given). A `rope_freqs.weight` tensor (per-plane factors) is not applied.
    pub fn rope_config(&self) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::json;
        let mut m = serde_json::Map::new();
        m.insert("model_type".into(), json!(self.architecture));
        m.insert("rope_theta".into(), json!(self.rope.freq_base));
        if self.context_length > 0 {
            m.insert("max_position_embeddings".into(), json!(self.context_length));
        }
        m.insert("hidden_size".into(), json!(self.embedding));
        m.insert("num_attention_heads".into(), json!(self.heads));
        m.insert("num_key_value_heads".into(), json!(self.kv_heads));
        m.insert("head_dim".into(), json!(self.head_dim));
        if self.rope.dimension_count > 0 && self.rope.dimension_count < self.head_dim {
            m.insert(
                "partial_rotary_factor".into(),
                json!(self.rope.dimension_count as f64 / self.head_dim as f64),
            );
        }
        let get = |k: &str| {
            self.rope
                .scaling
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.trim_matches('"').to_string())
        };
        if let Some(t) = get("type").filter(|t| t != "none") {
            let mut s = serde_json::Map::new();
            s.insert("rope_type".into(), json!(t));
            if let Some(f) = get("factor").and_then(|f| f.parse::<f64>().ok()) {
                s.insert("factor".into(), json!(f));
            }
            if let Some(o) = get("original_context_length").and_then(|f| f.parse::<u64>().ok()) {
                s.insert("original_max_position_embeddings".into(), json!(o));
            }
            m.insert("rope_scaling".into(), serde_json::Value::Object(s));
        }
        m
    }

    /// An error unless attnlab's forward builds this architecture, naming the supported ones.
    ///
    /// # Errors
    /// An architecture outside [`SUPPORTED_ARCHITECTURES`].
    pub fn require_supported(&self) -> Result<()> {
        if self.supported {
            Ok(())
        } else {
            Err(Error::invalid(
                "model architecture",
                format!("\"{}\"", text::shorten(&self.architecture)),
                format!(
                    "one of {} (the llama family)",
                    SUPPORTED_ARCHITECTURES.join(", ")
                ),
            ))
        }
    }
}
