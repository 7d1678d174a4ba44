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
use crate::limits::Budget;
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
pub struct Loaded {
    /// The weights, dequantized to f32.
    pub weights: LlamaWeights<f32>,
    /// The tokenizer, when the checkpoint has one.
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
        request_ids(self.tokenizer.as_ref(), text, ids, ctx)
    }

    /// The vocabulary entry of an id, when there is a tokenizer.
    pub fn piece(&self, id: u32) -> Option<String> {
        self.tokenizer.as_ref().and_then(|t| t.piece(id).ok())
    }

    /// The vocabulary entries of `ids` (an unknown id as ""), when there is a tokenizer.
    pub fn pieces(&self, ids: &[u32]) -> Option<Vec<String>> {
        self.tokenizer.as_ref().map(|_| {
            ids.iter()
                .map(|&i| self.piece(i).unwrap_or_default())
                .collect()
        })
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

/// Where a checkpoint's weights are read from, once its header or config has been read.
enum Source {
    Gguf(crate::model::gguf::GgufFile),
    Hf(std::path::PathBuf),
}

/// A checkpoint whose configuration and tokenizer are read but whose weights are not yet: the
/// point where a request's budget is known (the model's sizes and the text's token count) and
/// checked, before the weights are allocated.
pub struct Opened {
    /// The forward's configuration (from the GGUF metadata or `config.json`).
    pub config: crate::model::llama::LlamaConfig,
    /// The tokenizer, when the checkpoint has one.
    pub tokenizer: Option<ModelTokenizer>,
    source: Source,
    /// The file's identity, for the loaded-model cache (GGUF files only).
    key: Option<CacheKey>,
}

/// What identifies a loaded file: its path, size and modification time.
type CacheKey = (std::path::PathBuf, u64, Option<std::time::SystemTime>);

/// The last GGUF file loaded, kept in memory (see [`Opened::load`]).
static LAST: std::sync::Mutex<Option<(CacheKey, std::sync::Arc<Loaded>)>> =
    std::sync::Mutex::new(None);

impl Opened {
    /// The token ids of a request (see [`Loaded::ids`]).
    ///
    /// # Errors
    /// As [`Loaded::ids`].
    pub fn ids(
        &self,
        text: &Option<String>,
        ids: &Option<List>,
        ctx: &Context,
    ) -> Result<Vec<u32>> {
        request_ids(self.tokenizer.as_ref(), text, ids, ctx)
    }

    /// The budget of a request on this checkpoint: the weights in f32 (kept for the whole
    /// run), plus `passes` forward passes over `n` tokens in f32 with logits at one position,
    /// plus `kept` hidden states of `n × dim` kept at once (`model order`'s layer-by-layer
    /// comparison).
    pub fn budget(&self, n: usize, passes: u64, kept: u64) -> Budget {
        let c = &self.config;
        let weights = Budget::new(c.parameters().saturating_mul(4), 0);
        let hidden = Budget::new(
            crate::limits::product(&[kept, crate::limits::u(n), crate::limits::u(c.dim), 4]),
            0,
        );
        weights
            .plus(hidden)
            .plus(c.forward_budget(n, 1, 4).repeated(passes))
    }

    /// Checks [`Opened::budget`] against the limits, naming the command, the token count and
    /// the model's size in the refusal.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Limit`] with the estimate and the limit.
    pub fn check_budget(
        &self,
        command: &str,
        n: usize,
        passes: u64,
        kept: u64,
        ctx: &Context,
    ) -> Result<()> {
        self.budget(n, passes, kept).check(
            format!(
                "{command} on {n} tokens ({} parameters in f32, {passes} forward pass{})",
                self.config.parameters(),
                if passes == 1 { "" } else { "es" }
            ),
            &ctx.limits,
        )
    }

    /// Reads and dequantizes the weights.
    ///
    /// The last GGUF file loaded stays in memory, keyed by its path, size and modification
    /// time, so a front end that answers many requests on one model (the web lab's panel asks
    /// three per run) dequantizes it once; a file that changed is read again.
    ///
    /// # Errors
    /// The loaders' errors (missing tensors, shapes, the weights over the memory limit).
    pub fn load(self, ctx: &Context) -> Result<std::sync::Arc<Loaded>> {
        if let (Some(k), Ok(last)) = (&self.key, LAST.lock()) {
            if let Some((lk, m)) = last.as_ref() {
                if lk == k {
                    return Ok(m.clone());
                }
            }
        }
        let weights = match &self.source {
            Source::Gguf(f) => crate::model::gguf_weights::load(f, QkRows::HalfSplit, &ctx.limits)?,
            Source::Hf(dir) => crate::model::hf::load(dir, &ctx.limits)?,
        };
        let loaded = std::sync::Arc::new(Loaded {
            weights,
            tokenizer: self.tokenizer,
        });
        if let (Some(k), Ok(mut last)) = (self.key, LAST.lock()) {
            *last = Some((k, loaded.clone()));
        }
        Ok(loaded)
    }
}

/// Opens the checkpoint a request names (files only when the context allows them): a GGUF file
/// (or a known name such as `smollm2-135m`, found in the model cache) or a Hugging Face
/// directory — its header or `config.json` and its tokenizer, not yet its weights.
///
/// # Errors
/// No path, files not allowed, an unsupported architecture, or the readers' errors.
pub fn open_checkpoint(model: &str, ctx: &Context) -> Result<Opened> {
    if model.trim().is_empty() {
        return Err(Error::invalid(
            "--model",
            "none",
            "a GGUF file, smollm2-135m, or a Hugging Face checkpoint directory",
        ));
    }
    refuse_paths(model, ctx)?;
    let path = crate::model::locate::resolve(model)?;
    // Only single files are kept loaded: a directory's own time does not change when a file in
    // it does.
    let key = std::fs::metadata(&path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| (path.clone(), m.len(), m.modified().ok()));
    if crate::model::hf::is_checkpoint_dir(&path) {
        let config = crate::model::hf::read_config(&path, &ctx.limits)?;
        let tj = path.join("tokenizer.json");
        let tokenizer = if tj.is_file() {
            Some(ModelTokenizer::from_json(&tj, &ctx.limits)?)
        } else {
            None
        };
        return Ok(Opened {
            config,
            tokenizer,
            source: Source::Hf(path),
            key: None,
        });
    }
    let f = crate::model::gguf::GgufFile::open(&path, &ctx.limits)?;
    let config = crate::model::gguf_weights::config(&f, QkRows::HalfSplit)?;
    let tokenizer = Some(ModelTokenizer::from_gguf(&f)?);
    Ok(Opened {
        config,
        tokenizer,
        source: Source::Gguf(f),
        key,
    })
}

/// What a model request costs before its checkpoint is read: tokenizing its text (the model's
/// sizes are in its file; [`Opened::check_budget`] checks the rest after the header read).
pub fn request_budget(text: &Option<String>) -> Budget {
    ModelTokenizer::budget(text.as_ref().map_or(0, |t| crate::limits::u(t.len())))
}

/// Loads the checkpoint a request names: [`open_checkpoint`], then its weights.
///
/// # Errors
/// As [`open_checkpoint`] and [`Opened::load`].
pub fn load(model: &str, ctx: &Context) -> Result<std::sync::Arc<Loaded>> {
    open_checkpoint(model, ctx)?.load(ctx)
}

/// The token ids of a request: the text tokenized (no BOS added, as transformers'
/// `add_special_tokens=False`), or the ids given.
fn request_ids(
    tokenizer: Option<&ModelTokenizer>,
    text: &Option<String>,
    ids: &Option<List>,
    ctx: &Context,
) -> Result<Vec<u32>> {
    match (text, ids) {
        (Some(t), None) => {
            let tok = tokenizer.ok_or_else(|| {
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
pub fn check_length(c: &crate::model::llama::LlamaConfig, n: usize) -> Result<()> {
    if let Some(ctx) = c.context_length {
        if n > ctx {
            return Err(Error::invalid(
                "text length",
                format!("{n} tokens"),
                format!("at most the trained context of {ctx} tokens"),
            ));
        }
    }
    if let Some(win) = c.sliding_window {
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
pub fn top_entries(row: ndarray::ArrayView1<f32>, k: usize) -> Vec<TopEntry> {
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
