//! `attnlab model …`: a real trained model's file, tokenizer and numbers (issue 18), and the
//! Llama-family forward on it ([`crate::model::llama`]): `predict`, `order`, `attention`.
//!
//! Every command names its model with `model` (`--model`): a path to a GGUF file, or a known
//! name (`smollm2-135m`) resolved in the model cache ([`crate::model::locate`]).

pub mod attention;
pub mod info;
pub mod order;
pub mod predict;
pub mod tokenize;

use crate::api::Context;
use crate::model::gguf::GgufFile;
use crate::{Error, Result};

/// The default `--model`: the model `scripts/fetch-smollm2` fetches.
pub const DEFAULT_MODEL: &str = "smollm2-135m";

/// Opens the GGUF file `model` names, within `ctx`'s limits (refused when the front end does
/// not allow files).
///
/// # Errors
/// Files not allowed; an unknown name's file missing from the cache; everything
/// [`GgufFile::open`] refuses.
pub fn open(model: &str, ctx: &Context) -> Result<GgufFile> {
    refuse_paths(model, ctx)?;
    let path = crate::model::locate::resolve(model)?;
    if crate::files::entry(&path)? == crate::files::Entry::Dir {
        return Err(Error::io(
            &path,
            "it is a directory; expected a GGUF model file (Hugging Face checkpoint directories \
             are read by the model commands that run the forward)",
        ));
    }
    GgufFile::open(&path, &ctx.limits)
}

/// A front end that reads no files (the web server) still opens the models attnlab knows by
/// name: they resolve to the model cache only, never to a path the request chose.
fn refuse_paths(model: &str, ctx: &Context) -> Result<()> {
    if ctx.allow_files || crate::model::locate::is_known(model) {
        return Ok(());
    }
    let names: Vec<&str> = crate::model::locate::KNOWN.iter().map(|k| k.name).collect();
    Err(Error::invalid(
        "model",
        crate::present::text::shorten(model),
        format!(
            "a model known by name ({}): this front end reads no file paths",
            names.join(", ")
        ),
    ))
}

use serde::{Deserialize, Serialize};

use super::value::List;
use crate::model::gguf_weights::QkRows;
use crate::model::llama::{LlamaWeights, Positions};
use crate::model::tokenizer::ModelTokenizer;

crate::choice! {
    /// Whether the model rotates queries and keys.
    #[derive(Default)]
    pub enum PosChoice("pos") {
        #[default]
        /// RoPE as trained.
        Rope = "rope",
        /// The same model with the rotation removed (cos = 1, sin = 0 in every layer).
        None = "none",
    }
}

impl PosChoice {
    /// The forward's positions.
    pub fn positions(self) -> Positions {
        match self {
            PosChoice::Rope => Positions::Rope,
            PosChoice::None => Positions::None,
        }
    }
}

/// A loaded checkpoint: its weights and, when it has one, its tokenizer.
pub(crate) struct Loaded {
    pub weights: LlamaWeights<f32>,
    pub tokenizer: Option<ModelTokenizer>,
}

impl Loaded {
    /// The token ids of a request: the text tokenized (no BOS added, as transformers'
    /// `add_special_tokens=False`), or the ids given.
    pub fn ids(
        &self,
        text: &Option<String>,
        ids: &Option<List>,
        ctx: &Context,
    ) -> Result<Vec<u32>> {
        match (text, ids) {
            (Some(t), None) => {
                let tok = self.tokenizer.as_ref().ok_or_else(|| {
                    Error::invalid(
                        "--text",
                        "a text",
                        "--ids: this checkpoint has no tokenizer (tokenizer.json)",
                    )
                })?;
                let v: Vec<u32> = tok
                    .encode(t, &ctx.limits)?
                    .into_iter()
                    .map(|t| t.id)
                    .collect();
                if v.is_empty() {
                    return Err(Error::invalid(
                        "--text",
                        "a text with no tokens",
                        "a text of at least one token",
                    ));
                }
                Ok(v)
            }
            _ => token_ids(text, ids),
        }
    }

    /// The vocabulary entry of an id, when there is a tokenizer.
    pub fn piece(&self, id: u32) -> Option<String> {
        self.tokenizer.as_ref().and_then(|t| t.piece(id).ok())
    }

    /// Top entries with their pieces.
    pub fn top(&self, row: ndarray::ArrayView1<f32>, k: usize) -> Vec<TopEntry> {
        let mut v = top_entries(row, k);
        for e in &mut v {
            e.piece = self.piece(e.id);
        }
        v
    }
}

/// Loads the checkpoint a request names (files only when the context allows them): a GGUF file
/// (or a known name such as `smollm2-135m`, found in the model cache) or a Hugging Face
/// directory.
///
/// The last GGUF file loaded stays in memory, keyed by its path, size and modification time, so
/// a front end that answers many requests on one model (the web lab's panel asks three per run)
/// dequantizes it once; a file that changed is read again.
///
/// # Errors
/// No path, files not allowed, or the loaders' errors.
pub(crate) fn load(model: &str, ctx: &Context) -> Result<std::sync::Arc<Loaded>> {
    if model.trim().is_empty() {
        return Err(Error::invalid(
            "--model",
            "none",
            "a GGUF file, smollm2-135m, or a Hugging Face checkpoint directory",
        ));
    }
    refuse_paths(model, ctx)?;
    let path = crate::model::locate::resolve(model)?;
    // Only single files are kept: a directory's own time does not change when a file in it does.
    let key = std::fs::metadata(&path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| (path.clone(), m.len(), m.modified().ok()));
    static LAST: std::sync::Mutex<Option<(CacheKey, std::sync::Arc<Loaded>)>> =
        std::sync::Mutex::new(None);
    if let Some(k) = &key {
        if let Ok(last) = LAST.lock() {
            if let Some((lk, m)) = last.as_ref() {
                if lk == k {
                    return Ok(m.clone());
                }
            }
        }
    }
    let loaded = std::sync::Arc::new(read(&path, ctx)?);
    if let (Some(k), Ok(mut last)) = (key, LAST.lock()) {
        *last = Some((k, loaded.clone()));
    }
    Ok(loaded)
}

/// What identifies a loaded file: its path, size and modification time.
type CacheKey = (std::path::PathBuf, u64, Option<std::time::SystemTime>);

/// Reads a checkpoint from disk (see [`load`]).
fn read(path: &std::path::Path, ctx: &Context) -> Result<Loaded> {
    if crate::model::hf::is_checkpoint_dir(path) {
        let weights = crate::model::hf::load(path, &ctx.limits)?;
        let tj = path.join("tokenizer.json");
        let tokenizer = if tj.is_file() {
            Some(ModelTokenizer::from_json(&tj, &ctx.limits)?)
        } else {
            None
        };
        return Ok(Loaded { weights, tokenizer });
    }
    let f = crate::model::gguf::GgufFile::open(path, &ctx.limits)?;
    let weights = crate::model::gguf_weights::load(&f, QkRows::HalfSplit, &ctx.limits)?;
    let tokenizer = Some(ModelTokenizer::from_gguf(&f)?);
    Ok(Loaded { weights, tokenizer })
}

/// The token ids a request gives as `ids` (comma-separated or a list).
///
/// # Errors
/// Neither or both of text and ids; ids that are not whole numbers.
pub(crate) fn token_ids(text: &Option<String>, ids: &Option<List>) -> Result<Vec<u32>> {
    match (text, ids) {
        (Some(_), None) => Err(Error::invalid("--text", "a text", "--ids (no tokenizer)")),
        (None, Some(l)) => {
            l.0.iter()
                .map(|s| {
                    s.trim().parse::<u32>().map_err(|_| {
                        Error::invalid(
                            "token id",
                            crate::present::text::shorten(s),
                            "a whole number ≥ 0",
                        )
                    })
                })
                .collect::<Result<Vec<u32>>>()
                .and_then(|v| {
                    if v.is_empty() {
                        Err(Error::invalid("--ids", "none", "at least one token id"))
                    } else {
                        Ok(v)
                    }
                })
        }
        (Some(_), Some(_)) => Err(Error::invalid(
            "input",
            "both --text and --ids",
            "one of them",
        )),
        (None, None) => Err(Error::invalid("input", "none", "--text or --ids")),
    }
}

/// Refuses texts beyond the trained context (the model never saw such positions) and the
/// sliding window (not implemented: every key is attended).
///
/// # Errors
/// As described.
pub(crate) fn check_length(w: &LlamaWeights<f32>, n: usize) -> Result<()> {
    if let Some(ctx) = w.config.context_length {
        if n > ctx {
            return Err(Error::invalid(
                "text length",
                format!("{n} tokens"),
                format!("at most the trained context of {ctx} tokens"),
            ));
        }
    }
    if let Some(win) = w.config.sliding_window {
        if n > win {
            return Err(Error::invalid(
                "text length",
                format!("{n} tokens"),
                format!("at most the sliding window of {win} tokens (longer texts would need the window mask)"),
            ));
        }
    }
    Ok(())
}

/// One entry of a next-token distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopEntry {
    /// Token id.
    pub id: u32,
    /// The token's text, when a tokenizer is available.
    pub piece: Option<String>,
    /// Its logit.
    pub logit: f64,
    /// Its softmax probability.
    pub prob: f64,
}

/// The `k` most likely next tokens of a logits row.
pub(crate) fn top_entries(row: ndarray::ArrayView1<f32>, k: usize) -> Vec<TopEntry> {
    let probs = crate::model::llama::softmax_f64(row);
    crate::model::llama::top_k(row, k)
        .into_iter()
        .map(|(id, logit)| TopEntry {
            id: id as u32,
            piece: None,
            logit,
            prob: probs[id],
        })
        .collect()
}
