//! A Hugging Face checkpoint directory: `config.json`, `model.safetensors` (or the shards a
//! `model.safetensors.index.json` lists, or every `*.safetensors` in the directory) and, for
//! text, `tokenizer.json`. Every file goes through the input gate ([`crate::files`]); the
//! config's shapes are checked against the memory limit before any tensor is converted, and
//! every tensor's header shape against the configuration.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ndarray::{Array1, Array2};
use safetensors::{Dtype as StDtype, SafeTensors};
use serde_json::Value;

use super::llama::{Arch, LayerWeights, LlamaConfig, LlamaWeights};
use crate::config::RopeConfig;
use crate::limits::Limits;
use crate::position::frequencies::RopeType;
use crate::position::rotary::Layout;
use crate::{files, Error, Result};

/// Whether `path` looks like a Hugging Face checkpoint directory (holds `config.json`).
pub fn is_checkpoint_dir(path: &Path) -> bool {
    path.is_dir() && path.join("config.json").is_file()
}

fn uint(cfg: &Value, key: &str, path: &Path) -> Result<Option<usize>> {
    match cfg.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|x| usize::try_from(x).ok())
            .map(Some)
            .ok_or_else(|| Error::io(path, format!("{key} is {v}; expected a whole number"))),
    }
}

fn need(cfg: &Value, key: &str, path: &Path) -> Result<usize> {
    uint(cfg, key, path)?.ok_or_else(|| Error::io(path, format!("no {key}")))
}

/// Reads a checkpoint's hyper-parameters from its `config.json` (transformers 5.x field names).
///
/// # Errors
/// Unreadable or non-JSON file, an unsupported architecture (named, with the supported list),
/// a missing size, a rope type other than `default`.
pub fn read_config(dir: &Path, limits: &Limits) -> Result<LlamaConfig> {
    let path = dir.join("config.json");
    let text = files::read_text(&path, limits)?;
    let cfg: Value =
        serde_json::from_str(&text).map_err(|e| Error::io(&path, format!("not JSON: {e}")))?;
    let arch_name = cfg
        .get("model_type")
        .and_then(Value::as_str)
        .or_else(|| {
            cfg.get("architectures")
                .and_then(|a| a.get(0))
                .and_then(Value::as_str)
        })
        .ok_or_else(|| Error::io(&path, "no model_type or architectures"))?;
    let arch = Arch::parse(arch_name)?;
    let dim = need(&cfg, "hidden_size", &path)?;
    let heads = need(&cfg, "num_attention_heads", &path)?;
    let kv_heads = uint(&cfg, "num_key_value_heads", &path)?.unwrap_or(heads);
    let rope = RopeConfig::from_json(cfg.clone(), &path.display().to_string())?;
    if rope.scaling.rope_type() != RopeType::Default {
        return Err(Error::invalid(
            "rope type",
            rope.scaling.rope_type().name(),
            "default (scaled rope types are audited by `rope audit`, not run by the forward)",
        ));
    }
    let freqs = rope.frequencies(None)?;
    let head_dim = freqs.head_dim;
    if heads == 0 || head_dim == 0 {
        return Err(Error::io(&path, "zero attention heads or head dimension"));
    }
    let tied = cfg
        .get("tie_word_embeddings")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let rms_eps = cfg
        .get("rms_norm_eps")
        .and_then(Value::as_f64)
        .unwrap_or(1e-6);
    let sliding_window = match arch {
        Arch::Mistral => uint(&cfg, "sliding_window", &path)?,
        _ if cfg.get("use_sliding_window").and_then(Value::as_bool) == Some(true) => {
            uint(&cfg, "sliding_window", &path)?
        }
        _ => None,
    };
    let config = LlamaConfig {
        arch,
        layers: need(&cfg, "num_hidden_layers", &path)?,
        dim,
        heads,
        kv_heads,
        head_dim,
        ffn_dim: need(&cfg, "intermediate_size", &path)?,
        vocab: need(&cfg, "vocab_size", &path)?,
        rms_eps,
        inv_freq: freqs.inv_freq_f32.iter().map(|&w| f64::from(w)).collect(),
        rope_attention_factor: freqs.attention_factor,
        rope_layout: Layout::HalfSplit,
        context_length: uint(&cfg, "max_position_embeddings", &path)?,
        sliding_window,
        tied,
    };
    config.validate()?;
    Ok(config)
}

/// The safetensors files of a checkpoint: the shards the index names, else `model.safetensors`,
/// else every `*.safetensors` in the directory (sorted).
fn shard_paths(dir: &Path, limits: &Limits) -> Result<Vec<PathBuf>> {
    let index = dir.join("model.safetensors.index.json");
    if index.is_file() {
        let text = files::read_text(&index, limits)?;
        let v: Value =
            serde_json::from_str(&text).map_err(|e| Error::io(&index, format!("not JSON: {e}")))?;
        let map = v
            .get("weight_map")
            .and_then(Value::as_object)
            .ok_or_else(|| Error::io(&index, "no weight_map object"))?;
        let mut names: Vec<String> = Vec::new();
        for f in map.values() {
            let f = f
                .as_str()
                .ok_or_else(|| Error::io(&index, "a weight_map value is not a file name"))?;
            if f.contains('/') || f.contains('\\') || f.starts_with('.') {
                return Err(Error::io(
                    &index,
                    format!(
                        "shard {} is not a plain file name in the directory",
                        crate::text::shorten(f)
                    ),
                ));
            }
            if !names.iter().any(|n| n == f) {
                names.push(f.to_string());
            }
        }
        names.sort();
        if let Some(absent) = names.iter().find(|n| !dir.join(n).exists()) {
            return Err(Error::io(
                &index,
                format!(
                    "it names the shard {}, which is not in the directory; expected every shard of its weight_map beside it",
                    crate::text::shorten(absent)
                ),
            ));
        }
        return Ok(names.into_iter().map(|n| dir.join(n)).collect());
    }
    let single = dir.join("model.safetensors");
    if single.is_file() {
        return Ok(vec![single]);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io_source(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(Error::io(dir, "no *.safetensors file"));
    }
    Ok(found)
}

/// Tensors by name, converted to f32 as they are taken.
struct Tensors {
    /// name → (shard index, shape)
    shapes: BTreeMap<String, (usize, Vec<usize>)>,
    shards: Vec<(PathBuf, Vec<u8>)>,
}

impl Tensors {
    fn open(paths: &[PathBuf], limits: &Limits) -> Result<Tensors> {
        let mut shapes = BTreeMap::new();
        let mut shards = Vec::new();
        for (i, p) in paths.iter().enumerate() {
            let bytes = files::read(p, limits)?;
            let st = SafeTensors::deserialize(&bytes)
                .map_err(|e| Error::io(p, format!("not a safetensors file: {e}")))?;
            for (name, view) in st.tensors() {
                shapes.insert(name, (i, view.shape().to_vec()));
            }
            shards.push((p.clone(), bytes));
        }
        Ok(Tensors { shapes, shards })
    }

    fn has(&self, name: &str) -> bool {
        self.shapes.contains_key(name)
    }

    fn values(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let (i, got) = self.shapes.get(name).ok_or_else(|| {
            Error::invalid(
                "checkpoint",
                format!("no tensor {name}"),
                "every tensor of the architecture",
            )
        })?;
        if got != shape {
            return Err(Error::shape(
                format!("tensor {name}"),
                format!("{shape:?}"),
                format!("{got:?}"),
            ));
        }
        let (path, bytes) = &self.shards[*i];
        let st = SafeTensors::deserialize(bytes)
            .map_err(|e| Error::io(path, format!("not a safetensors file: {e}")))?;
        let t = st
            .tensor(name)
            .map_err(|e| Error::io(path, format!("tensor {name}: {e}")))?;
        let data = t.data();
        let out: Vec<f32> = match t.dtype() {
            StDtype::F32 => data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            StDtype::F16 => data
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            StDtype::BF16 => data
                .chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            other => {
                return Err(Error::invalid(
                    format!("dtype of tensor {name}"),
                    format!("{other:?}"),
                    "F32, F16 or BF16",
                ))
            }
        };
        Ok(out)
    }

    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Array2<f32>> {
        let v = self.values(name, &[rows, cols])?;
        Ok(Array2::from_shape_vec((rows, cols), v).expect("shape checked"))
    }

    fn vector(&self, name: &str, len: usize) -> Result<Array1<f32>> {
        Ok(Array1::from(self.values(name, &[len])?))
    }

    fn opt_vector(&self, name: &str, len: usize) -> Result<Option<Array1<f32>>> {
        if self.has(name) {
            self.vector(name, len).map(Some)
        } else {
            Ok(None)
        }
    }
}

/// Loads a checkpoint directory's weights in f32.
///
/// # Errors
/// See [`read_config`]; the weights' size over the memory limit (checked before reading them); a
/// file over the file-size limit; missing tensors (named) or shapes that differ from the config.
pub fn load(dir: &Path, limits: &Limits) -> Result<LlamaWeights<f32>> {
    let c = read_config(dir, limits)?;
    // The file bytes and the converted f32 weights are held together while loading.
    let weights_bytes = c.parameters().saturating_mul(4);
    limits.check_memory(
        format!(
            "the weights of {} ({} parameters, f32)",
            dir.display(),
            c.parameters()
        ),
        weights_bytes.saturating_mul(2),
    )?;
    let paths = shard_paths(dir, limits)?;
    let t = Tensors::open(&paths, limits)?;
    let (d, q, kv, f) = (
        c.dim,
        c.heads * c.head_dim,
        c.kv_heads * c.head_dim,
        c.ffn_dim,
    );
    let mut layers = Vec::with_capacity(c.layers);
    for i in 0..c.layers {
        let p = |s: &str| format!("model.layers.{i}.{s}");
        layers.push(LayerWeights {
            attn_norm: t.vector(&p("input_layernorm.weight"), d)?,
            wq: t.matrix(&p("self_attn.q_proj.weight"), q, d)?,
            wk: t.matrix(&p("self_attn.k_proj.weight"), kv, d)?,
            wv: t.matrix(&p("self_attn.v_proj.weight"), kv, d)?,
            wo: t.matrix(&p("self_attn.o_proj.weight"), d, q)?,
            bq: t.opt_vector(&p("self_attn.q_proj.bias"), q)?,
            bk: t.opt_vector(&p("self_attn.k_proj.bias"), kv)?,
            bv: t.opt_vector(&p("self_attn.v_proj.bias"), kv)?,
            bo: t.opt_vector(&p("self_attn.o_proj.bias"), d)?,
            q_norm: t.opt_vector(&p("self_attn.q_norm.weight"), c.head_dim)?,
            k_norm: t.opt_vector(&p("self_attn.k_norm.weight"), c.head_dim)?,
            ffn_norm: t.vector(&p("post_attention_layernorm.weight"), d)?,
            w_gate: t.matrix(&p("mlp.gate_proj.weight"), f, d)?,
            w_up: t.matrix(&p("mlp.up_proj.weight"), f, d)?,
            w_down: t.matrix(&p("mlp.down_proj.weight"), d, f)?,
        });
    }
    // A tied checkpoint may still store lm_head (equal to the embedding); the embedding is used.
    let output = if c.tied {
        None
    } else {
        Some(t.matrix("lm_head.weight", c.vocab, d)?)
    };
    let w = LlamaWeights {
        embed: t.matrix("model.embed_tokens.weight", c.vocab, d)?,
        final_norm: t.vector("model.norm.weight", d)?,
        layers,
        output,
        config: c,
    };
    w.validate()?;
    Ok(w)
}
