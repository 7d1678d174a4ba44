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
        // Before the cache: a request whose budget cannot hold the weights is refused even when
        // they are already in memory (the same answer as on a first load).
        self.config.check_weight_memory(&ctx.limits)?;
        if let (Some(k), Ok(last)) = (&self.key, LAST.lock()) {
            if let Some((lk, m)) = last.as_ref() {
                if lk == k {
                    return Ok(m.clone());
                }
            }
        }
        let weights = match &self.source {
            Source::Gguf(f) => crate::model::gguf_weights::load_config(
                f,
                self.config.clone(),
                QkRows::HalfSplit,
                &ctx.limits,
            )?,
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
    let config = gguf_config(&f)?;
    let tokenizer = Some(ModelTokenizer::from_gguf(&f)?);
    Ok(Opened {
        config,
        tokenizer,
        source: Source::Gguf(f),
        key,
    })
}

/// The forward's configuration of a GGUF file: its plain RoPE, or, when its rope metadata is
/// scaled (`rope.scaling.*`, a `rope_freqs` tensor), the rotation llama.cpp computes from that
/// metadata at the file's trained context ([`crate::engines::gguf::GgufRope`]: linear's
/// `freq_scale`, YaRN's ramp and mscale, the frequency factors), so the forward rotates as the
/// engine that serves the file does.
///
/// # Errors
/// The readers' errors; a rotation that also rescales the softmax (DeepSeek-2's YaRN), which
/// the llama forward does not run.
fn gguf_config(f: &crate::model::gguf::GgufFile) -> Result<crate::model::llama::LlamaConfig> {
    let info = crate::model::ModelInfo::from_gguf(f)?;
    let rotation = if !info.rope.scaling.is_empty() || info.rope.rope_freqs_tensor {
        let g = crate::engines::gguf::GgufRope::from_file(f, info.context_length)?;
        if g.rope.softmax_scale_multiplier != 1.0 {
            return Err(Error::invalid(
                "rope metadata",
                format!(
                    "a softmax scale multiplier of {}",
                    g.rope.softmax_scale_multiplier
                ),
                "a rotation that leaves the softmax scale 1/√d alone (the llama forward's)",
            ));
        }
        Some(crate::model::gguf_weights::Rotation {
            inv_freq: g.rope.inv_freq,
            cos_sin_factor: g.rope.cos_sin_factor,
        })
    } else {
        None
    };
    crate::model::gguf_weights::config_rotated(f, QkRows::HalfSplit, rotation.as_ref())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::gguf::Value;
    use crate::model::gguf_write::GgufWriter;

    /// [`GgufWriter::tiny_llama`] with the given extra metadata, written to `dir/name`.
    fn file(dir: &std::path::Path, name: &str, meta: &[(&str, Value)]) -> String {
        let mut g = GgufWriter::tiny_llama();
        for (k, v) in meta {
            g.meta(k, v.clone());
        }
        let path = dir.join(name);
        std::fs::write(&path, g.to_bytes()).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// A GGUF with scaled rope metadata runs with llama.cpp's rotation of it: linear factor 4
    /// is ω_k/4 (freq_scale = 1/4 exactly in f32) with cos/sin unscaled; YaRN factor 4 keeps
    /// the highest frequency (extrapolation), divides the lowest by 4 and multiplies cos/sin by
    /// 1 + 0.1·ln 4. (llama.cpp's own logits on such files: tests/llamacpp_oracle.rs.)
    #[test]
    fn a_scaled_gguf_runs_with_llamacpps_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::default();
        let plain = open_checkpoint(&file(dir.path(), "plain.gguf", &[]), &ctx).unwrap();
        let s = |x: &str| Value::String(x.into());
        let linear = file(
            dir.path(),
            "linear.gguf",
            &[
                ("llama.rope.scaling.type", s("linear")),
                ("llama.rope.scaling.factor", Value::F32(4.0)),
            ],
        );
        let linear = open_checkpoint(&linear, &ctx).unwrap();
        let yarn = file(
            dir.path(),
            "yarn.gguf",
            &[
                ("llama.rope.scaling.type", s("yarn")),
                ("llama.rope.scaling.factor", Value::F32(4.0)),
                ("llama.rope.scaling.original_context_length", Value::U32(32)),
            ],
        );
        let yarn = open_checkpoint(&yarn, &ctx).unwrap();
        let (p, l, y) = (&plain.config, &linear.config, &yarn.config);
        assert_eq!((p.inv_freq.len(), p.rope_attention_factor), (8, 1.0));
        for (k, (&a, &b)) in p.inv_freq.iter().zip(&l.inv_freq).enumerate() {
            // plain is θ^(−2k/d) rounded to f32; linear is llama.cpp's f64 reading of it.
            assert!((b - a / 4.0).abs() <= 1e-7 * a, "plane {k}: {b} vs {a}/4");
        }
        assert_eq!(l.rope_attention_factor, 1.0);
        let (hi, lo) = (y.inv_freq[0] / p.inv_freq[0], y.inv_freq[7] / p.inv_freq[7]);
        assert!(
            (hi - 1.0).abs() < 1e-6 && (lo - 0.25).abs() < 1e-6,
            "{hi} {lo}"
        );
        assert!((y.rope_attention_factor - (1.0 + 0.1 * 4f64.ln())).abs() < 1e-6);
        // And the forward runs on it.
        let m = yarn.load(&ctx).unwrap();
        let ids = [0u32, 1, 2, 3];
        let out = m
            .weights
            .forward(
                &ids,
                &crate::model::llama::ForwardOptions {
                    logits_at: vec![3],
                    ..Default::default()
                },
            )
            .unwrap();
        assert!(out.logits.iter().all(|x| x.is_finite()));
    }
}
