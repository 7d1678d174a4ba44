//! A GGUF file's tensors → [`LlamaWeights`] (dequantized to f32).
//!
//! ggml's dims are `[in, out]` with `in` varying fastest, so a tensor's values are `out` rows of
//! `in` — the same `out × in` matrix a Hugging Face checkpoint stores.
//!
//! **q/k rows.** llama.cpp's converter permutes the rows of `attn_q` / `attn_k` of llama-family
//! (llama, mistral) checkpoints so that its adjacent-pair rotation reproduces Hugging Face's
//! half-split one (qwen2 and qwen3 use llama.cpp's NeoX rotation and are not permuted).
//! [`QkRows::HalfSplit`] undoes the permutation ([`unpermute_rows`], as transformers'
//! `_reverse_permute_weights` does; `attn_k` with the KV head count) and rotates halves;
//! [`QkRows::AsStored`] keeps the stored rows and rotates adjacent pairs. The two are one rotation
//! up to a fixed permutation of each head's coordinates, so they give the same scores (tested on
//! the real checkpoint).

use ndarray::{Array1, Array2};

use super::gguf::GgufFile;
use super::llama::{unpermute_rows, Arch, LayerWeights, LlamaConfig, LlamaWeights};
use super::ModelInfo;
use crate::limits::{self, Limits};
use crate::position::frequencies::RotaryFrequencies;
use crate::position::rotary::Layout;
use crate::{Error, Result};

/// How the q/k rows of a llama-family GGUF are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QkRows {
    /// Rows put back in Hugging Face's order, half-split rotation (the default).
    HalfSplit,
    /// Rows as llama.cpp stores them, adjacent-pair rotation.
    AsStored,
}

/// Tensor `name`'s values in f32, once it is found with `dims` (GGUF's order: fastest first).
fn values(f: &GgufFile, name: &str, dims: &[u64]) -> Result<Vec<f32>> {
    let t = f.tensor(name).ok_or_else(|| {
        Error::invalid(
            "model file",
            format!("no tensor {name}"),
            "every tensor of the architecture",
        )
    })?;
    if t.dims != dims {
        return Err(Error::shape(
            format!("tensor {name}"),
            format!("dims {dims:?}"),
            format!("{:?}", t.dims),
        ));
    }
    f.tensor_f32(name)
}

fn matrix(f: &GgufFile, name: &str, rows: usize, cols: usize) -> Result<Array2<f32>> {
    let v = values(f, name, &[limits::u(cols), limits::u(rows)])?;
    Array2::from_shape_vec((rows, cols), v)
        .map_err(|e| Error::shape(format!("tensor {name}"), format!("{rows}×{cols}"), e))
}

fn vector(f: &GgufFile, name: &str, len: usize) -> Result<Array1<f32>> {
    Ok(Array1::from(values(f, name, &[limits::u(len)])?))
}

fn opt_vector(f: &GgufFile, name: &str, len: usize) -> Result<Option<Array1<f32>>> {
    if f.tensor(name).is_some() {
        vector(f, name, len).map(Some)
    } else {
        Ok(None)
    }
}

fn usize_of(what: &str, v: u64) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::invalid(what, v, "a size this machine can address"))
}

/// A rotation the forward runs instead of the file's plain one: ω per plane (radians per
/// position, `rope.dimension_count / 2` of them) and the factor on cos and sin — what llama.cpp
/// computes from a scaled file's rope metadata (`engines::gguf::GgufRope`).
#[derive(Debug, Clone, PartialEq)]
pub struct Rotation {
    /// ω_k per rotated plane.
    pub inv_freq: Vec<f64>,
    /// The factor multiplying cos and sin (YaRN's mscale × attn_factor; 1 otherwise).
    pub cos_sin_factor: f64,
}

/// The forward's configuration from a GGUF's metadata (plain RoPE: ω_k = θ^(−2k/d) in f32).
///
/// # Errors
/// An unsupported architecture (named, with the list), scaled rope metadata, sizes that do not fit.
pub fn config(f: &GgufFile, qk: QkRows) -> Result<LlamaConfig> {
    config_rotated(f, qk, None)
}

/// [`config`] with the rotation given for a file whose rope is scaled (`rope.scaling.*` keys or
/// a `rope_freqs` tensor); `None` refuses such a file.
///
/// # Errors
/// As [`config`]; a rotation whose plane count is not `rope.dimension_count / 2`.
pub fn config_rotated(
    f: &GgufFile,
    qk: QkRows,
    rotation: Option<&Rotation>,
) -> Result<LlamaConfig> {
    let info = ModelInfo::from_gguf(f)?;
    info.require_supported()?;
    let arch = Arch::parse(&info.architecture)?;
    let scaled = !info.rope.scaling.is_empty() || info.rope.rope_freqs_tensor;
    if scaled && rotation.is_none() {
        return Err(Error::invalid(
            "rope metadata",
            "rope scaling",
            "plain RoPE (scaled rope types are audited by `rope audit`, not run by the forward)",
        ));
    }
    let head_dim = usize_of("head dimension", info.head_dim)?;
    let rot = usize_of("rope dimension count", info.rope.dimension_count)?;
    let freqs = RotaryFrequencies::from_base(info.rope.freq_base, rot)?;
    let (inv_freq, rope_attention_factor) = match rotation {
        Some(r) if r.inv_freq.len() != rot / 2 => {
            return Err(Error::shape(
                "rotation",
                format!("{} planes", rot / 2),
                format!("{} frequencies", r.inv_freq.len()),
            ))
        }
        Some(r) => (r.inv_freq.clone(), r.cos_sin_factor),
        None => (
            freqs.inv_freq_f32.iter().map(|&w| f64::from(w)).collect(),
            1.0,
        ),
    };
    let permuted = matches!(arch, Arch::Llama | Arch::Mistral);
    let layout = match (permuted, qk) {
        (true, QkRows::AsStored) => Layout::Interleaved,
        _ => Layout::HalfSplit,
    };
    let c = LlamaConfig {
        arch,
        layers: usize_of("layers", info.layers)?,
        dim: usize_of("embedding width", info.embedding)?,
        heads: usize_of("heads", info.heads)?,
        kv_heads: usize_of("key/value heads", info.kv_heads)?,
        head_dim,
        ffn_dim: usize_of("MLP width", info.feed_forward)?,
        vocab: usize_of("vocabulary", info.vocab)?,
        rms_eps: info.rms_norm_eps.unwrap_or(1e-5),
        inv_freq,
        rope_attention_factor,
        rope_layout: layout,
        context_length: usize::try_from(info.context_length).ok().filter(|&c| c > 0),
        sliding_window: None,
        tied: info.tied_embeddings,
    };
    c.validate()?;
    Ok(c)
}

/// Loads every tensor (dequantized to f32) into the forward's weights.
///
/// # Errors
/// See [`config`]; the f32 weights over the memory limit (checked before any tensor is read);
/// missing tensors or dims that differ from the metadata.
pub fn load(f: &GgufFile, qk: QkRows, limits: &Limits) -> Result<LlamaWeights<f32>> {
    load_config(f, config(f, qk)?, qk, limits)
}

/// [`load`] with the configuration already read (e.g. by [`config_rotated`]).
///
/// # Errors
/// As [`load`].
pub fn load_config(
    f: &GgufFile,
    c: LlamaConfig,
    qk: QkRows,
    limits: &Limits,
) -> Result<LlamaWeights<f32>> {
    c.check_weight_memory(limits)?;
    let permuted = matches!(c.arch, Arch::Llama | Arch::Mistral) && qk == QkRows::HalfSplit;
    let (d, q, kv, ff, hd) = (
        c.dim,
        c.heads * c.head_dim,
        c.kv_heads * c.head_dim,
        c.ffn_dim,
        c.head_dim,
    );
    let fix = |m: Array2<f32>, heads: usize| -> Result<Array2<f32>> {
        if permuted {
            unpermute_rows(m.view(), heads)
        } else {
            Ok(m)
        }
    };
    let fix_v = |v: Option<Array1<f32>>, heads: usize| -> Result<Option<Array1<f32>>> {
        match v {
            Some(v) if permuted => {
                let n = v.len();
                let col = v.into_shape_with_order((n, 1)).expect("n × 1");
                Ok(Some(
                    unpermute_rows(col.view(), heads)?
                        .into_shape_with_order(n)
                        .expect("n"),
                ))
            }
            other => Ok(other),
        }
    };
    // The layers are read and dequantized in parallel (positioned reads share the file).
    use rayon::prelude::*;
    let read_layers = || {
        (0..c.layers)
            .into_par_iter()
            .map(|i| -> Result<LayerWeights<f32>> {
                let p = |s: &str| format!("blk.{i}.{s}");
                Ok(LayerWeights {
                    attn_norm: vector(f, &p("attn_norm.weight"), d)?,
                    wq: fix(matrix(f, &p("attn_q.weight"), q, d)?, c.heads)?,
                    wk: fix(matrix(f, &p("attn_k.weight"), kv, d)?, c.kv_heads)?,
                    wv: matrix(f, &p("attn_v.weight"), kv, d)?,
                    wo: matrix(f, &p("attn_output.weight"), d, q)?,
                    bq: fix_v(opt_vector(f, &p("attn_q.bias"), q)?, c.heads)?,
                    bk: fix_v(opt_vector(f, &p("attn_k.bias"), kv)?, c.kv_heads)?,
                    bv: opt_vector(f, &p("attn_v.bias"), kv)?,
                    bo: opt_vector(f, &p("attn_output.bias"), d)?,
                    q_norm: opt_vector(f, &p("attn_q_norm.weight"), hd)?,
                    k_norm: opt_vector(f, &p("attn_k_norm.weight"), hd)?,
                    ffn_norm: vector(f, &p("ffn_norm.weight"), d)?,
                    w_gate: matrix(f, &p("ffn_gate.weight"), ff, d)?,
                    w_up: matrix(f, &p("ffn_up.weight"), ff, d)?,
                    w_down: matrix(f, &p("ffn_down.weight"), d, ff)?,
                })
            })
            .collect::<Result<Vec<_>>>()
    };
    // The embedding (the largest tensor) alongside the layers.
    let (layers, embed) = rayon::join(read_layers, || matrix(f, "token_embd.weight", c.vocab, d));
    let (layers, embed) = (layers?, embed?);
    let output = if c.tied {
        None
    } else {
        Some(matrix(f, "output.weight", c.vocab, d)?)
    };
    let w = LlamaWeights {
        embed,
        final_norm: vector(f, "output_norm.weight", d)?,
        layers,
        output,
        config: c,
    };
    w.validate()?;
    Ok(w)
}
