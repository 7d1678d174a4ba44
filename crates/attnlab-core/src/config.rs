//! Hugging Face `config.json` → rotary configuration, following transformers 5.x.
//!
//! What is read (v4 and v5 layouts, and the keys model families use):
//!
//! * **rope parameters**: `rope_scaling` (v4) or `rope_parameters` (v5); when both are present
//!   `rope_scaling` wins, as in `convert_rope_params_to_dict` (`rope_scaling or rope_parameters`).
//!   A dict nested per layer type (Gemma-3 style) is read at its `full_attention` entry.
//!   Type: `rope_type`, else the legacy `type`, else `default`; `su` is LongRoPE.
//! * **base**: `rope_theta` in the parameters, else at top level, else GPT-NeoX's
//!   `rotary_emb_base`, else the class default (10000; 150000 for `gpt_oss`). GPT-J hard-codes
//!   10000 and ignores any theta.
//! * **head_dim**: `head_dim`, else `hidden_size / num_attention_heads` (floor; GPT-J's
//!   `n_embd / n_head`); DeepSeek-V2/V3 rotate only `qk_rope_head_dim` (default 64), which their
//!   config class stores as `head_dim`. transformers' default/linear/llama3 code reads
//!   `getattr(config, "head_dim", None) or hidden // heads` while dynamic/yarn/longrope read
//!   `getattr(config, "head_dim", hidden // heads)` (no `or`), so an explicit `"head_dim": null`
//!   would break the latter — except that config classes such as `LlamaConfig` replace a null
//!   by `hidden // heads` first. Here null is treated as absent, which is what those classes do.
//! * **partial rotary**: `partial_rotary_factor` (parameters, then top level), GPT-NeoX's
//!   `rotary_pct` (class default 0.25), GPT-J's `rotary_dim`; rotary dim = `int(head_dim · f)`.
//!   transformers 5.x's *default* type ignores the factor in most families (Llama, Mistral,
//!   Qwen2, DeepSeek, gpt-oss, …: their `compute_default_rope_parameters` uses `dim = head_dim`)
//!   and honours it in GPT-NeoX, Phi, Phi-3, StableLM, Persimmon, GLM, Nemotron and a few others
//!   ([`DEFAULT_HONOURS_PARTIAL`]); this module follows the model family. The scaled types
//!   always honour it.
//! * **original context** (llama3 / yarn / longrope): a top-level
//!   `original_max_position_embeddings` overrides the parameters' (Phi-3 keeps it there; its
//!   class default is 4096), else the parameters' value, else `max_position_embeddings`.
//! * **factor**: required for linear, dynamic and llama3; yarn and longrope default it to
//!   `max_position_embeddings / original`.

use std::path::Path;

use serde_json::{Map, Value};

use crate::position::frequencies::scaling::params::{bad, boolean, num, text, uint, ConfigView};
use crate::position::frequencies::{
    yarn_get_mscale, RopeScaling, RopeType, RotaryFrequencies, TrainedContext,
};
use crate::{Error, Result};

/// Model types whose transformers 5.x default rope honours `partial_rotary_factor`, for model
/// types the generated class-defaults table does not know (it has `default_honours_partial`,
/// read from each model's `compute_default_rope_parameters`).
pub const DEFAULT_HONOURS_PARTIAL: &[&str] = &[
    "gpt_neox",
    "gpt_neox_japanese",
    "phi",
    "phi3",
    "phi4_multimodal",
    "stablelm",
    "persimmon",
    "glm",
    "glm4",
    "glm4_moe",
    "nemotron",
    "qwen3_next",
    "recurrent_gemma",
    "bamba",
];

/// Rope types seen in configs that attnlab does not read, with the models that use them: the
/// refusal names both.
const UNSUPPORTED_TYPES: &[(&str, &str)] = &[(
    "axial",
    "vision encoders (Qwen2-VL's and Gemma-4's vision towers: 2-D patch positions, not a text rope)",
)];

/// Wrappers whose config class builds its text config from top-level fields (a flat
/// `config.json`, as Qwen2-VL's is): the text config class's defaults apply
/// (`Qwen2VLTextConfig.default_theta = 1e6`, not the wrapper's 10000).
const FLAT_WRAPPERS: &[&str] = &["qwen2_vl", "qwen2_5_vl"];

/// Model types whose config class has a constant `head_dim` default, used even when
/// `hidden_size / num_attention_heads` is known (`Gemma3TextConfig.head_dim = 256`,
/// `GlmConfig.head_dim = 128`; checked against transformers 5.24's classes).
const FIXED_HEAD_DIM: &[&str] = &["gemma", "gemma2", "gemma3_text", "glm", "glm4"];

/// Model types without rotary position embeddings, with the scheme they use instead: refused.
const NON_ROPE: &[(&str, &str)] = &[
    ("bert", "learned absolute position embeddings"),
    ("roberta", "learned absolute position embeddings"),
    ("gpt2", "learned absolute position embeddings"),
    ("opt", "learned absolute position embeddings"),
    ("bloom", "ALiBi (linear attention biases)"),
    ("mpt", "ALiBi (linear attention biases)"),
];

/// Refuses a model type that uses no RoPE, naming its position scheme.
fn refuse_non_rope(mt: &str) -> Result<()> {
    match NON_ROPE.iter().find(|(t, _)| *t == mt) {
        Some((_, scheme)) => Err(Error::invalid(
            "config",
            format!("model type {mt}"),
            format!("a model with rotary position embeddings ({mt} uses {scheme}, not RoPE: there is nothing to audit)"),
        )),
        None => Ok(()),
    }
}

/// The config class whose defaults apply: the text config's for a flat [`FLAT_WRAPPERS`] config.
fn defaults_class(mt: &str, flat: bool) -> Option<&'static Map<String, Value>> {
    let c = defaults::class(mt)?;
    match c.get("text_config").and_then(Value::as_str) {
        Some(t) if flat && FLAT_WRAPPERS.contains(&mt) => defaults::class(t).or(Some(c)),
        Some(_) | None => Some(c),
    }
}

/// How the two coordinates of a rotary plane sit in a head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// `(x[k], x[k + d/2])`: `rotate_half` (Llama, NeoX, Mistral, Qwen, Gemma, Phi, …).
    HalfSplit,
    /// `(x[2k], x[2k+1])`: GPT-J's `rotate_every_two`, Llama-4's complex view, Cohere's
    /// `repeat_interleave`. Same frequencies; the weights of a checkpoint differ by a fixed
    /// permutation of q/k columns from a half-split one.
    Interleaved,
}

/// One set of rotary frequencies used by some layers of a model (Gemma-3: `full_attention` and
/// `sliding_attention` layers rotate with different bases).
#[derive(Debug, Clone)]
pub struct RopeSet {
    /// The layer type the set belongs to (`full_attention`, `sliding_attention`,
    /// `chunked_attention`, …), `None` when every layer uses it.
    pub layer_type: Option<String>,
    /// How many layers use it, when the config says.
    pub layers: Option<usize>,
    /// θ.
    pub base: f64,
    /// The head dimension of these layers.
    pub head_dim: usize,
    /// How many leading dimensions rotate.
    pub rotary_dim: usize,
    /// The rope type with its parameters.
    pub scaling: RopeScaling,
}

/// A model's rotary configuration as read from its `config.json`.
#[derive(Debug, Clone)]
pub struct RopeConfig {
    /// The raw JSON, kept for reporting.
    pub raw: serde_json::Value,
    /// Where it came from (a path or a preset name).
    pub name: String,
    /// `model_type`, when present (of `text_config` for multimodal wrappers).
    pub model_type: Option<String>,
    /// θ, the base of the geometric frequency ladder (of the primary set).
    pub base: f64,
    /// The head dimension of queries and keys (the rotated part for DeepSeek; primary set).
    pub head_dim: usize,
    /// How many leading dimensions rotate (primary set).
    pub rotary_dim: usize,
    /// The rope type with its parameters (primary set).
    pub scaling: RopeScaling,
    /// `max_position_embeddings` (or GPT-J's `n_positions`).
    pub max_position_embeddings: Option<u64>,
    /// DeepSeek-V2/V3: the factor mscale² multiplying the softmax scale (see
    /// [`RotaryFrequencies::softmax_scale_multiplier`]).
    pub softmax_scale_multiplier: Option<f64>,
    /// Decisions taken while reading (defaults applied, keys ignored), in words.
    pub notes: Vec<String>,
    /// Every rope set of the model; `sets[primary]` is the one the fields above describe.
    pub sets: Vec<RopeSet>,
    /// Index of the primary set (the full-attention one when there are several).
    pub primary: usize,
    /// `num_hidden_layers` (explicit or the class default), when known.
    pub num_layers: Option<usize>,
    /// `sliding_window`, when the config sets one.
    pub sliding_window: Option<u64>,
    /// Which layer types slide (all layers when the config has a window but no layer types).
    pub sliding_layer_types: Vec<String>,
    /// How plane coordinates are paired in a head.
    pub pairing: Pairing,
}

/// The rope-relevant defaults of transformers' config classes, generated from transformers
/// itself (`scripts/gen_hf_rope_vectors.py --defaults`).
mod defaults {
    use std::sync::OnceLock;

    use serde_json::{Map, Value};

    const TABLE: &str = include_str!("../data/hf_config_defaults.json");

    fn table() -> &'static Map<String, Value> {
        static T: OnceLock<Map<String, Value>> = OnceLock::new();
        T.get_or_init(|| {
            let v: Value = serde_json::from_str(TABLE).expect("the generated table is JSON");
            match v.get("classes") {
                Some(Value::Object(m)) => m.clone(),
                _ => Map::new(),
            }
        })
    }

    /// The defaults of a model type's config class.
    pub fn class(model_type: &str) -> Option<&'static Map<String, Value>> {
        match table().get(model_type) {
            Some(Value::Object(m)) => Some(m),
            _ => None,
        }
    }

    /// The transformers version the table was generated with.
    pub fn version() -> &'static str {
        static V: OnceLock<String> = OnceLock::new();
        V.get_or_init(|| {
            let v: Value = serde_json::from_str(TABLE).expect("the generated table is JSON");
            v["versions"]["transformers"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        })
    }
}

/// Layer types a nested `rope_parameters` may be keyed by.
const KNOWN_LAYER_TYPES: &[&str] = &[
    "full_attention",
    "sliding_attention",
    "chunked_attention",
    "linear_attention",
    "local_attention",
    "global_attention",
];

fn short_num(x: f64) -> String {
    crate::number::short(x)
}

impl RopeConfig {
    /// Reads a parsed `config.json` (see the module doc for the rules).
    ///
    /// ```
    /// use attnlab_core::config::RopeConfig;
    /// let raw = serde_json::json!({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
    ///                              "max_position_embeddings": 4096, "rope_theta": 10000.0});
    /// let c = RopeConfig::from_json(raw, "llama").unwrap();
    /// assert_eq!((c.head_dim, c.rotary_dim, c.base), (128, 128, 10000.0));
    /// ```
    ///
    /// # Errors
    /// Not a JSON object; missing `hidden_size` / `num_attention_heads` without `head_dim` (and
    /// no class default); a non-numeric value; an unknown or unsupported rope type; a missing
    /// required parameter (factor for linear/dynamic/llama3, `low_freq_factor`/`high_freq_factor`
    /// for llama3, the factor lists for longrope, a context where one is needed); a
    /// `partial_rotary_factor` outside (0, 1]; and everything
    /// [`RotaryFrequencies::from_scaling`] rejects (base ≤ 1, odd rotary dim, …).
    pub fn from_json(raw: Value, name: &str) -> Result<RopeConfig> {
        let outer = raw.as_object().ok_or_else(|| {
            Error::invalid(
                "config",
                format!("{name}: not a JSON object"),
                "a config.json object",
            )
        })?;
        let mut notes = Vec::new();
        // Multimodal wrappers keep the language model's fields in `text_config`.
        let wrapper_type = text(outer, "model_type")?.map(str::to_string);
        let top = match outer.get("text_config") {
            Some(Value::Object(t))
                if !outer.contains_key("hidden_size") && !outer.contains_key("head_dim") =>
            {
                let others: Vec<&str> = outer
                    .iter()
                    .filter(|(k, v)| k.ends_with("_config") && *k != "text_config" && v.is_object())
                    .map(|(k, _)| k.as_str())
                    .collect();
                let mut n = format!(
                    "multimodal config{}: read its text_config",
                    wrapper_type
                        .as_deref()
                        .map(|w| format!(" ({w})"))
                        .unwrap_or_default()
                );
                if !others.is_empty() {
                    n += &format!(" ({} not audited)", others.join(", "));
                }
                notes.push(n);
                t
            }
            _ => outer,
        };
        let model_type = match (text(top, "model_type")?, &wrapper_type) {
            (Some(t), _) => Some(t.to_string()),
            (None, Some(w)) if !std::ptr::eq(top, outer) => {
                // The wrapper's class names its text config's class.
                Some(
                    defaults::class(w)
                        .and_then(|c| c.get("text_config"))
                        .and_then(Value::as_str)
                        .unwrap_or(w)
                        .to_string(),
                )
            }
            (None, w) => w.clone(),
        };
        let mt = model_type.as_deref().unwrap_or("");
        refuse_non_rope(mt)?;
        let class = defaults_class(mt, std::ptr::eq(top, outer));
        let class_num = |key: &str| class.and_then(|c| c.get(key)).and_then(Value::as_f64);
        let class_name = || format!("model type {mt} (transformers {})", defaults::version());

        // rope parameters: rope_scaling wins over rope_parameters (5.x `rope_scaling or
        // rope_parameters`); neither: the class default.
        let empty = Map::new();
        let class_params = class
            .and_then(|c| c.get("rope_parameters"))
            .and_then(Value::as_object);
        let params: &Map<String, Value> = match top.get("rope_scaling") {
            Some(Value::Object(m)) if !m.is_empty() => m,
            None | Some(Value::Null) | Some(Value::Object(_)) => match top.get("rope_parameters") {
                Some(Value::Object(m)) => m,
                None | Some(Value::Null) => match class_params {
                    Some(cp)
                        if cp.values().any(Value::is_object)
                            || cp
                                .get("rope_type")
                                .and_then(Value::as_str)
                                .is_some_and(|t| t != "default") =>
                    {
                        notes.push(format!(
                            "no rope parameters: the class default of {}",
                            class_name()
                        ));
                        cp
                    }
                    _ => &empty,
                },
                Some(v) => return Err(bad("rope_parameters", v, "an object or null")),
            },
            Some(v) => return Err(bad("rope_scaling", v, "an object or null")),
        };

        // Layer types: the config's list, else counted from the family's pattern.
        let num_layers = uint(top, "num_hidden_layers")?.map(|n| n as usize);
        let layer_list: Option<Vec<String>> = match top.get("layer_types") {
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| bad("layer_types", v, "a list of layer type names"))
                    })
                    .collect::<Result<_>>()?,
            ),
            None | Some(Value::Null) => layer_pattern(top, mt, num_layers)?,
            Some(v) => return Err(bad("layer_types", v, "a list of layer type names")),
        };
        let count = |lt: &str| {
            layer_list
                .as_ref()
                .map(|l| l.iter().filter(|t| *t == lt).count())
        };

        // The sets: nested per layer type (v5), Gemma-3's / ModernBERT's v4 pair of bases, or
        // one set for every layer.
        let declared: Vec<&str> = layer_list
            .iter()
            .flatten()
            .map(String::as_str)
            .chain(KNOWN_LAYER_TYPES.iter().copied())
            .collect();
        let nested: Vec<(&str, &Map<String, Value>)> = params
            .iter()
            .filter(|(k, _)| declared.contains(&k.as_str()))
            .filter_map(|(k, v)| v.as_object().map(|m| (k.as_str(), m)))
            .collect();
        let class_theta = class.and_then(|c| c.get("default_theta"));
        let mut owned: Vec<(String, Map<String, Value>)> = Vec::new();
        if nested.is_empty() {
            let pair = match class_theta {
                Some(Value::Object(t)) if t.contains_key("global") && t.contains_key("local") => {
                    Some((t["global"].as_f64(), t["local"].as_f64()))
                }
                _ => None,
            };
            if let Some((global, local)) = pair {
                // v4 keys: Gemma-3 `rope_theta` + `rope_local_base_freq` (rope_scaling on the
                // global layers only); ModernBERT `global_rope_theta` + `local_rope_theta`.
                let g = num(params, "rope_theta")?
                    .or(num(top, "rope_theta")?)
                    .or(num(top, "global_rope_theta")?);
                let l = num(top, "rope_local_base_freq")?.or(num(top, "local_rope_theta")?);
                let mut full = params.clone();
                full.remove("rope_theta");
                full.insert(
                    "rope_theta".into(),
                    Value::from(g.or(global).unwrap_or(10000.0)),
                );
                if g.is_none() {
                    notes.push(format!(
                        "full_attention layers: no rope_theta: class default {} of {}",
                        short_num(global.unwrap_or(10000.0)),
                        class_name()
                    ));
                }
                let mut sliding = Map::new();
                sliding.insert("rope_type".into(), Value::from("default"));
                sliding.insert(
                    "rope_theta".into(),
                    Value::from(l.or(local).unwrap_or(10000.0)),
                );
                if l.is_none() {
                    notes.push(format!(
                        "sliding_attention layers: no local base (rope_local_base_freq): class default {} of {}",
                        short_num(local.unwrap_or(10000.0)),
                        class_name()
                    ));
                }
                owned.push(("full_attention".into(), full));
                owned.push(("sliding_attention".into(), sliding));
            }
        }
        let entries: Vec<(Option<&str>, &Map<String, Value>)> = if !nested.is_empty() {
            let others: Vec<&str> = params
                .iter()
                .filter(|(k, v)| !v.is_object() && !declared.contains(&k.as_str()))
                .map(|(k, _)| k.as_str())
                .collect();
            let mut n = format!(
                "rope parameters nested per layer type: {} audited as separate sets",
                nested
                    .iter()
                    .map(|(k, _)| *k)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if !others.is_empty() {
                n += &format!(" (other entries ignored: {})", others.join(", "));
            }
            notes.push(n);
            nested.iter().map(|(k, m)| (Some(*k), *m)).collect()
        } else if !owned.is_empty() {
            owned.iter().map(|(k, m)| (Some(k.as_str()), m)).collect()
        } else {
            vec![(None, params)]
        };

        let is_gptj = mt == "gptj";
        let is_deepseek = mt == "deepseek_v2" || mt == "deepseek_v3";
        let max_pos = match uint(top, "max_position_embeddings")? {
            Some(m) => Some(m),
            None => match uint(top, "n_positions")? {
                Some(m) => Some(m),
                None => match class_num("max_position_embeddings") {
                    Some(m) => {
                        notes.push(format!(
                            "no max_position_embeddings: class default {} of {}",
                            short_num(m),
                            class_name()
                        ));
                        Some(m as u64)
                    }
                    None => None,
                },
            },
        };

        let mut sets = Vec::new();
        let mut first_params = params;
        for (i, &(lt, p)) in entries.iter().enumerate() {
            if i == 0 || lt == Some("full_attention") {
                first_params = p;
            }
            let theta_default = match (class_theta, lt) {
                (Some(Value::Object(t)), Some(l))
                    if l.contains("sliding") || l.contains("local") =>
                {
                    t.get("local").and_then(Value::as_f64)
                }
                (Some(Value::Object(t)), _) => t.get("global").and_then(Value::as_f64),
                (Some(v), _) => v.as_f64(),
                (None, _) => None,
            };
            let set = read_set(SetInput {
                params: p,
                top,
                model_type: mt,
                layer_type: lt,
                class,
                theta_default: theta_default.unwrap_or(if mt == "gpt_oss" {
                    150000.0
                } else {
                    10000.0
                }),
                max_pos,
                is_gptj,
                is_deepseek,
                class_name: &class_name(),
                notes: &mut notes,
            })?;
            let layers = match lt {
                Some(l) => count(l),
                // Llama-4: the rope layers are the chunked-attention ones (the others are NoPE).
                None if mt == "llama4_text" => count("chunked_attention"),
                None => layer_list.as_ref().map(Vec::len),
            };
            let layer_type = match lt {
                Some(l) => Some(l.to_string()),
                None if mt == "llama4_text" && layers.is_some() => Some("chunked_attention".into()),
                None => None,
            };
            sets.push(RopeSet {
                layer_type,
                layers,
                ..set
            });
        }
        let primary = sets
            .iter()
            .position(|s| s.layer_type.as_deref() == Some("full_attention"))
            .unwrap_or(0);
        if mt == "llama4_text" {
            if let (Some(r), Some(n)) = (sets[primary].layers, layer_list.as_ref().map(Vec::len)) {
                notes.push(format!(
                    "llama4: rope on the {r} chunked-attention layers (attention_chunk_size); the other {} layers use no position encoding (NoPE)",
                    n - r
                ));
            }
        }

        // Pairing.
        let pairing = match mt {
            // GLM / GLM-4: `rotate_half` takes x[0::2], x[1::2] (modeling_glm.py, modeling_glm4.py).
            "gptj" | "llama4_text" | "llama4" | "cohere" | "cohere2" | "glm" | "glm4" => {
                Pairing::Interleaved
            }
            _ => Pairing::HalfSplit,
        };
        if pairing == Pairing::Interleaved {
            notes.push(format!(
                "{mt}: rotary pairs are interleaved (x[2k], x[2k+1]), not half-split (x[k], x[k+d/2]); same frequencies, but the checkpoint's q/k weights differ from a NeoX-style model's by a fixed permutation, so weights and runtime must use the same convention"
            ));
        }

        // Sliding windows.
        let sliding_window = uint(top, "sliding_window")?;
        let sliding_layer_types: Vec<String> = match (&sliding_window, &layer_list) {
            (Some(_), Some(l)) => {
                let mut t: Vec<String> = l
                    .iter()
                    .filter(|x| x.contains("sliding") || x.contains("local"))
                    .cloned()
                    .collect();
                t.dedup();
                t.sort();
                t.dedup();
                t
            }
            _ => Vec::new(),
        };

        // DeepSeek-V2/V3 multiply the softmax scale by mscale² (yarn_apply_mscale).
        // Only when the config scales the rope (transformers: `rope_scaling is not None`; the
        // default type means none) and gives a non-zero mscale_all_dim.
        let softmax_scale_multiplier = if is_deepseek {
            let msd = num(first_params, "mscale_all_dim")?.unwrap_or(0.0);
            let scaled = sets[primary].scaling.rope_type() != RopeType::Default;
            Some(match num(first_params, "factor")? {
                Some(f) if scaled && msd != 0.0 => {
                    let m = yarn_get_mscale(f, msd);
                    m * m
                }
                Some(_) | None => 1.0,
            })
        } else {
            None
        };

        let p = &sets[primary];
        let cfg = RopeConfig {
            raw: raw.clone(),
            name: name.to_string(),
            model_type,
            base: p.base,
            head_dim: p.head_dim,
            rotary_dim: p.rotary_dim,
            scaling: p.scaling.clone(),
            max_position_embeddings: max_pos,
            softmax_scale_multiplier,
            notes,
            primary,
            num_layers: num_layers.or(layer_list.as_ref().map(Vec::len)),
            sliding_window,
            sliding_layer_types,
            pairing,
            sets,
        };
        // Validate once now, so a bad config fails when loaded rather than when used.
        for i in 0..cfg.sets.len() {
            cfg.set_frequencies(i, None)?;
        }
        Ok(cfg)
    }

    /// The frequencies and attention factor the implementation computes at initialisation
    /// (`seq_len = None`) or for a given sequence length (dynamic NTK, LongRoPE long factors),
    /// for the primary set.
    ///
    /// ```
    /// let c = attnlab_core::config::preset("llama-3.1-8b").unwrap();
    /// let f = c.frequencies(None).unwrap();
    /// assert_eq!((f.rotary_dim, f.context, f.attention_factor), (128, Some(131072), 1.0));
    /// ```
    pub fn frequencies(&self, seq_len: Option<u64>) -> Result<RotaryFrequencies> {
        self.set_frequencies(self.primary, seq_len)
    }

    /// [`Self::frequencies`] of set `i` of [`Self::sets`].
    ///
    /// # Errors
    /// As [`RotaryFrequencies::from_scaling`]; `i` out of range.
    pub fn set_frequencies(&self, i: usize, seq_len: Option<u64>) -> Result<RotaryFrequencies> {
        let set = self.sets.get(i).ok_or_else(|| {
            Error::invalid("rope set", i, format!("an index below {}", self.sets.len()))
        })?;
        let mut f = RotaryFrequencies::from_scaling(
            set.base,
            set.head_dim,
            set.rotary_dim,
            &set.scaling,
            seq_len,
        )?;
        f.context = self.max_position_embeddings;
        f.softmax_scale_multiplier = self.softmax_scale_multiplier;
        let at = seq_len
            .map(|s| format!(" at sequence length {s}"))
            .unwrap_or_default();
        let layers = set
            .layer_type
            .as_deref()
            .filter(|_| self.sets.len() > 1)
            .map(|l| format!("{l} layers, "))
            .unwrap_or_default();
        f.source = format!("{} ({layers}{}{at})", self.name, f.source);
        Ok(f)
    }

    /// The frequencies of the set of a layer type (`None`: the primary set).
    ///
    /// # Errors
    /// No set for that layer type; as [`Self::set_frequencies`].
    pub fn layer_frequencies(
        &self,
        layer_type: Option<&str>,
        seq_len: Option<u64>,
    ) -> Result<RotaryFrequencies> {
        match layer_type {
            None => self.frequencies(seq_len),
            Some(l) => {
                let i = self
                    .sets
                    .iter()
                    .position(|s| s.layer_type.as_deref() == Some(l))
                    .ok_or_else(|| {
                        Error::invalid(
                            "layer type",
                            l,
                            format!(
                                "one of {}",
                                self.sets
                                    .iter()
                                    .filter_map(|s| s.layer_type.clone())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        )
                    })?;
                self.set_frequencies(i, seq_len)
            }
        }
    }

    /// What the configuration states about its context (primary set).
    pub fn trained_context(&self) -> TrainedContext {
        self.set_trained_context(self.primary)
    }

    /// What the configuration states about its context, for set `i` (its scaling type's
    /// original and intended lengths; the primary set's when `i` is out of range).
    pub fn set_trained_context(&self, i: usize) -> TrainedContext {
        let scaling = self.sets.get(i).map_or(&self.scaling, |s| &s.scaling);
        let (original, intended) = scaling.contexts();
        // Dynamic NTK's "original" is max_position_embeddings itself: not a separate length.
        let original = original.filter(|_| scaling.rope_type() != RopeType::Dynamic);
        let limit = match (self.max_position_embeddings, intended) {
            (Some(m), Some(i)) => Some(m.max(i)),
            (Some(m), None) => Some(m),
            (None, i) => i,
        };
        TrainedContext {
            max_position_embeddings: self.max_position_embeddings,
            original,
            intended,
            limit,
        }
    }

    /// The context an audit uses by default: `max_position_embeddings`, or the intended length
    /// factor × original when it is larger (a model card's `rope_scaling` added to a config
    /// whose `max_position_embeddings` still says the pre-training length), over all sets.
    pub fn default_context(&self) -> Option<u64> {
        (0..self.sets.len())
            .filter_map(|i| self.set_trained_context(i).limit)
            .max()
    }

    /// Notes that depend on the audited length L (sliding windows, the intended length).
    pub fn notes_at(&self, l: u64) -> Vec<String> {
        let mut notes = Vec::new();
        let tc = self.trained_context();
        if let (Some(i), Some(m)) = (tc.intended, tc.max_position_embeddings) {
            if i > m && self.scaling.rope_type() != RopeType::Longrope {
                notes.push(format!(
                    "{} factor × original = {i} exceeds max_position_embeddings {m}: the scaling is meant for {i} positions, the default audited length",
                    self.scaling.name()
                ));
            }
        }
        if let Some(w) = self.sliding_window {
            if l > w {
                let who = if self.sliding_layer_types.is_empty() {
                    "every layer attends".to_string()
                } else {
                    format!("{} layers attend", self.sliding_layer_types.join(", "))
                };
                notes.push(format!(
                    "sliding_window {w}: {who} at most {w} positions back, so separations beyond {w} (up to the audited {}) never occur within one of them",
                    l - 1
                ));
            }
        }
        notes
    }
}

/// Layer types from a family's pattern when the config has no `layer_types` list: Gemma-3/4
/// (`sliding_window_pattern`, default 6: every 6th layer global), Llama-4 (`no_rope_layers` or
/// every `no_rope_layer_interval`-th layer NoPE: the rope layers are chunked-attention ones).
fn layer_pattern(
    top: &Map<String, Value>,
    mt: &str,
    num_layers: Option<usize>,
) -> Result<Option<Vec<String>>> {
    let Some(n) = num_layers else {
        return Ok(None);
    };
    match mt {
        "gemma3_text" | "gemma4_text" => {
            let p = uint(top, "sliding_window_pattern")?.unwrap_or(6).max(1) as usize;
            let mut v: Vec<String> = (0..n)
                .map(|i| {
                    if (i + 1) % p != 0 {
                        "sliding_attention".into()
                    } else {
                        "full_attention".into()
                    }
                })
                .collect();
            if mt == "gemma4_text" {
                if let Some(last) = v.last_mut() {
                    *last = "full_attention".into();
                }
            }
            Ok(Some(v))
        }
        "llama4_text" => {
            let flags: Vec<bool> = match top.get("no_rope_layers") {
                Some(Value::Array(a)) if !a.is_empty() => {
                    a.iter().map(|v| v.as_f64().unwrap_or(1.0) != 0.0).collect()
                }
                _ => {
                    let k = uint(top, "no_rope_layer_interval")?.unwrap_or(4).max(1) as usize;
                    (0..n).map(|i| (i + 1) % k != 0).collect()
                }
            };
            let chunked = !matches!(top.get("attention_chunk_size"), Some(Value::Null));
            Ok(Some(
                flags
                    .iter()
                    .map(|&rope| {
                        if rope && chunked {
                            "chunked_attention".into()
                        } else {
                            "full_attention".into()
                        }
                    })
                    .collect(),
            ))
        }
        _ => Ok(None),
    }
}

/// What [`read_set`] reads one rope set from.
struct SetInput<'a> {
    params: &'a Map<String, Value>,
    top: &'a Map<String, Value>,
    model_type: &'a str,
    layer_type: Option<&'a str>,
    class: Option<&'a Map<String, Value>>,
    theta_default: f64,
    max_pos: Option<u64>,
    is_gptj: bool,
    is_deepseek: bool,
    class_name: &'a str,
    notes: &'a mut Vec<String>,
}

/// One rope set: type, base, head and rotary dimension, parameters.
fn read_set(inp: SetInput) -> Result<RopeSet> {
    let SetInput {
        params,
        top,
        model_type: mt,
        layer_type,
        class,
        theta_default,
        max_pos,
        is_gptj,
        is_deepseek,
        class_name,
        notes,
    } = inp;
    let class_num = |key: &str| class.and_then(|c| c.get(key)).and_then(Value::as_f64);
    let which = layer_type
        .map(|l| format!("{l} layers: "))
        .unwrap_or_default();
    let type_name = match text(params, "rope_type")? {
        Some(t) => t,
        None => text(params, "type")?.unwrap_or("default"),
    };
    if let Some((_, users)) = UNSUPPORTED_TYPES.iter().find(|(t, _)| *t == type_name) {
        return Err(Error::invalid(
            "rope type",
            format!("{type_name:?} (used by {users})"),
            "a text rope type attnlab reads: default, linear, dynamic, yarn, longrope (or su), llama3, mrope, proportional",
        ));
    }
    let rope_type = RopeType::from_config_name(type_name, notes)?;
    if is_gptj && rope_type != RopeType::Default {
        return Err(Error::invalid(
            "rope type",
            format!("{:?} for gptj", rope_type.name()),
            "default (GPT-J's rotary code has no scaling)",
        ));
    }

    // base
    let base = if is_gptj {
        notes.push("gptj: base hard-coded to 10000 by create_sinusoidal_positions".into());
        10000.0
    } else {
        match (
            num(params, "rope_theta")?,
            num(top, "rope_theta")?,
            num(top, "rotary_emb_base")?,
        ) {
            (Some(b), _, _) | (None, Some(b), _) => b,
            (None, None, Some(b)) if mt == "gpt_neox" => b,
            _ => {
                if mt.is_empty() {
                    notes.push(format!(
                        "{which}no rope_theta: class default {}",
                        short_num(theta_default)
                    ));
                } else {
                    notes.push(format!(
                        "{which}no rope_theta: class default {} of {class_name}",
                        short_num(theta_default)
                    ));
                }
                theta_default
            }
        }
    };

    // head dimension
    let key_or_class =
        |key: &str, alt: Option<&str>, notes: &mut Vec<String>| -> Result<Option<f64>> {
            if let Some(v) = num(top, key)? {
                return Ok(Some(v));
            }
            if let Some(a) = alt {
                if let Some(v) = num(top, a)? {
                    return Ok(Some(v));
                }
            }
            Ok(class_num(key).inspect(|v| {
                notes.push(format!(
                    "no {key}: class default {} of {class_name}",
                    short_num(*v)
                ))
            }))
        };
    let full_head = layer_type == Some("full_attention")
        && class.is_some_and(|c| {
            c.contains_key("full_attention_head_dim") && !c.contains_key("head_dim")
        });
    let head_dim = if is_deepseek {
        let d = uint(top, "qk_rope_head_dim")?.unwrap_or(64) as usize;
        notes.push(format!(
            "{mt}: only qk_rope_head_dim = {d} dimensions of each q/k head rotate"
        ));
        if boolean(top, "rope_interleave")?.unwrap_or(true) {
            notes.push(format!("{mt}: rope_interleave (default true): checkpoint rope dims are stored interleaved; transformers de-interleaves them and rotates half-split"));
        }
        d
    } else if full_head {
        // Gemma-4: full-attention layers have their own (global) head dimension.
        match uint(top, "global_head_dim")? {
            Some(d) => d as usize,
            None => {
                let d = class_num("full_attention_head_dim").unwrap_or(0.0) as usize;
                notes.push(format!(
                    "full_attention layers: no global_head_dim: class default {d} of {class_name}"
                ));
                d
            }
        }
    } else {
        match uint(top, "head_dim")? {
            Some(d) => d as usize,
            None => {
                let class_head = if (top.contains_key("hidden_size") || top.contains_key("n_embd"))
                    && !FIXED_HEAD_DIM.contains(&mt)
                {
                    None
                } else {
                    class_num("head_dim")
                };
                match class_head {
                    Some(d) => {
                        notes.push(format!(
                            "no head_dim, hidden_size: class default head_dim {} of {class_name}",
                            short_num(d)
                        ));
                        d as usize
                    }
                    None => {
                        let hidden = key_or_class("hidden_size", Some("n_embd"), notes)?;
                        let heads = key_or_class("num_attention_heads", Some("n_head"), notes)?;
                        head_from_hidden(hidden, heads)?
                    }
                }
            }
        }
    };
    crate::position::frequencies::check_head_dim(head_dim)?;

    // partial rotary
    let class_partial = class
        .and_then(|c| c.get("rope_parameters"))
        .and_then(|p| match layer_type {
            Some(l) if p.get(l).is_some() => p.get(l),
            _ => Some(p),
        })
        .and_then(|p| p.get("partial_rotary_factor"))
        .and_then(Value::as_f64);
    let partial = match (
        num(params, "partial_rotary_factor")?,
        num(top, "partial_rotary_factor")?,
    ) {
        (Some(f), _) | (None, Some(f)) => Some(f),
        _ if mt == "gpt_neox" => Some(num(top, "rotary_pct")?.unwrap_or(0.25)),
        _ => match class_partial {
            Some(f) if f != 1.0 => {
                notes.push(format!(
                    "{which}no partial_rotary_factor: class default {} of {class_name}",
                    short_num(f)
                ));
                Some(f)
            }
            _ => None,
        },
    };
    if let Some(f) = partial {
        if !(f > 0.0 && f <= 1.0) {
            return Err(Error::invalid(
                "config key partial_rotary_factor",
                f,
                "a fraction in (0, 1]",
            ));
        }
    }
    let honours = class
        .and_then(|c| c.get("default_honours_partial"))
        .and_then(Value::as_bool)
        .unwrap_or(DEFAULT_HONOURS_PARTIAL.contains(&mt));
    let rotary_dim = if is_gptj {
        match uint(top, "rotary_dim")? {
            Some(r) => r as usize,
            None => head_dim,
        }
    } else if rope_type == RopeType::Proportional {
        // The whole head: the fraction decides how many planes rotate (the rest are NoPE).
        head_dim
    } else {
        match partial {
            Some(f) if !rope_type.scales() && !honours => {
                if f < 1.0 {
                    notes.push(format!(
                        "partial_rotary_factor {f} ignored: transformers 5.x default rope of model type {mt:?} rotates the whole head"
                    ));
                }
                head_dim
            }
            Some(f) => (head_dim as f64 * f) as usize,
            None => head_dim,
        }
    };

    // Read before the type's own parameters, for every type (a malformed factor is an error
    // even where the type ignores it).
    num(params, "factor")?;
    let scaling = RopeScaling::from_config(
        rope_type,
        &mut ConfigView {
            params,
            top,
            model_type: mt,
            max_position_embeddings: max_pos,
            notes,
        },
    )?;
    Ok(RopeSet {
        layer_type: layer_type.map(str::to_string),
        layers: None,
        base,
        head_dim,
        rotary_dim,
        scaling,
    })
}

/// `hidden_size / num_attention_heads` (floor), both required positive integers.
fn head_from_hidden(hidden: Option<f64>, heads: Option<f64>) -> Result<usize> {
    let h = hidden.ok_or_else(|| {
        Error::invalid(
            "config",
            "missing hidden_size",
            "hidden_size and num_attention_heads (or head_dim)",
        )
    })?;
    let n = heads.ok_or_else(|| {
        Error::invalid(
            "config",
            "missing num_attention_heads",
            "hidden_size and num_attention_heads (or head_dim)",
        )
    })?;
    if !(h >= 1.0 && h.fract() == 0.0) {
        return Err(Error::invalid(
            "config key hidden_size",
            h,
            "a positive integer",
        ));
    }
    if !(n >= 1.0 && n.fract() == 0.0) {
        return Err(Error::invalid(
            "config key num_attention_heads",
            n,
            "a positive integer",
        ));
    }
    let d = h as u64 / n as u64;
    if d > crate::position::frequencies::MAX_ROTARY_DIM as u64 {
        return Err(Error::invalid(
            "head dimension",
            format!("{d} (hidden_size {h} / num_attention_heads {n})"),
            format!(
                "at most {} columns per head",
                crate::position::frequencies::MAX_ROTARY_DIM
            ),
        ));
    }
    Ok(d as usize)
}

/// Reads and validates a `config.json`.
///
/// # Errors
/// The file cannot be read or is not JSON (an [`crate::ErrorKind::Read`] error), or [`RopeConfig::from_json`] rejects it.
pub fn load_config(path: &Path) -> Result<RopeConfig> {
    load_config_with(path, &crate::limits::Limits::default())
}

/// [`load_config`] through the input gate ([`crate::files::read_input`]): a regular file
/// (symbolic links followed; devices refused at once), a pipe with a writer (`<(jq …)`), or
/// standard input for `-`, of at most `limits.max_file_bytes` bytes.
///
/// # Errors
/// See [`load_config`]; devices, a pipe with no writer or a silent one, files over the cap.
pub fn load_config_with(path: &Path, limits: &crate::limits::Limits) -> Result<RopeConfig> {
    let text = crate::files::read_input_text(path, limits)?;
    let shown = crate::files::shown(path);
    let raw: Value = serde_json::from_str(&text).map_err(|e| {
        Error::io(
            shown,
            format!("not valid JSON: {}", crate::text::clip(&e.to_string())),
        )
    })?;
    RopeConfig::from_json(raw, &crate::text::shorten_path(shown))
}

/// The built-in presets: (name, source, rope-relevant fields of the model's public `config.json`).
const PRESETS: &[(&str, &str, &str)] = &[
    (
        "llama-2-7b",
        "meta-llama/Llama-2-7b-hf, config.json",
        r#"{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 32,
            "max_position_embeddings": 4096, "rope_theta": 10000.0, "rope_scaling": null}"#,
    ),
    (
        "llama-3.1-8b",
        "meta-llama/Llama-3.1-8B, config.json",
        r#"{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
            "max_position_embeddings": 131072, "rope_theta": 500000.0,
            "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 8192, "rope_type": "llama3"}}"#,
    ),
    (
        "mistral-7b-v0.1",
        "mistralai/Mistral-7B-v0.1, config.json",
        r#"{"model_type": "mistral", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
            "max_position_embeddings": 32768, "rope_theta": 10000.0, "sliding_window": 4096}"#,
    ),
    (
        "qwen2-7b-instruct",
        "Qwen/Qwen2-7B-Instruct, config.json",
        r#"{"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
            "max_position_embeddings": 32768, "rope_theta": 1000000.0, "rope_scaling": null}"#,
    ),
    (
        "gpt-neox-20b",
        "EleutherAI/gpt-neox-20b, config.json",
        r#"{"model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64,
            "max_position_embeddings": 2048, "rotary_pct": 0.25, "rotary_emb_base": 10000}"#,
    ),
    (
        "deepseek-v3",
        "deepseek-ai/DeepSeek-V3, config.json",
        r#"{"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128,
            "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
            "max_position_embeddings": 163840, "rope_theta": 10000,
            "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                             "original_max_position_embeddings": 4096, "type": "yarn"}}"#,
    ),
    (
        "qwen3-8b-yarn4",
        "Qwen/Qwen3-8B, config.json, with the model card's rope_scaling for YaRN factor 4",
        r#"{"model_type": "qwen3", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
            "max_position_embeddings": 40960, "rope_theta": 1000000,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}"#,
    ),
    (
        "gpt-oss-20b",
        "openai/gpt-oss-20b, config.json",
        r#"{"model_type": "gpt_oss", "hidden_size": 2880, "num_attention_heads": 64, "head_dim": 64,
            "max_position_embeddings": 131072, "rope_theta": 150000,
            "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                             "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": false}}"#,
    ),
    (
        "phi-3.5-mini-instruct",
        "microsoft/Phi-3.5-mini-instruct, config.json",
        PHI35_MINI,
    ),
];

/// Phi-3.5-mini-instruct's rope fields; the 48 + 48 LongRoPE factors as published (each value
/// an exact float32).
const PHI35_MINI: &str = r#"{"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "num_key_value_heads": 32,
    "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
    "rope_scaling": {"type": "longrope",
      "long_factor": [
        1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601, 1.5899999141693115, 1.600000023841858,
        1.6200000047683716, 2.620000123977661, 3.2300000190734863, 3.2300000190734863, 4.789999961853027, 7.400000095367432,
        7.700000286102295, 9.09000015258789, 12.199999809265137, 17.670000076293945, 24.46000099182129, 28.57000160217285,
        30.420001983642578, 30.840002059936523, 32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992,
        50.340003967285156, 50.45000457763672, 57.55000305175781, 57.93000411987305, 58.21000289916992, 60.1400032043457,
        62.61000442504883, 62.62000274658203, 62.71000289916992, 63.1400032043457, 63.1400032043457, 63.77000427246094,
        63.93000411987305, 63.96000289916992, 63.970001220703125, 64.02999877929688, 64.06999969482422, 64.08000183105469,
        64.12000274658203, 64.41000366210938, 64.4800033569336, 64.51000213623047, 64.52999877929688, 64.83999633789062],
      "short_factor": [
        1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842, 1.0499999523162842,
        1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0699999332427979, 1.0999999046325684, 1.1099998950958252,
        1.1599998474121094, 1.1599998474121094, 1.1699998378753662, 1.2899998426437378, 1.339999794960022, 1.679999828338623,
        1.7899998426437378, 1.8199998140335083, 1.8499997854232788, 1.8799997568130493, 1.9099997282028198, 1.9399996995925903,
        1.9899996519088745, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
        2.0199997425079346, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
        2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0799996852874756, 2.0899996757507324,
        2.189999580383301, 2.2199995517730713, 2.5899994373321533, 2.729999542236328, 2.749999523162842, 2.8399994373321533]}}"#;

/// A built-in configuration typed from a well-known model's public `config.json`
/// (see [`preset_source`] for which file).
///
/// # Errors
/// An unknown name (the message lists the known ones).
pub fn preset(name: &str) -> Result<RopeConfig> {
    let (n, _, json) = PRESETS
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| {
            Error::invalid(
                "preset",
                crate::text::shorten(name),
                format!("one of {}", preset_names().join(", ")),
            )
        })?;
    let raw: Value = serde_json::from_str(json)
        .map_err(|e| Error::invalid("preset", n, format!("valid JSON ({e})")))?;
    RopeConfig::from_json(raw, &format!("preset {n}"))
}

/// The names of the built-in presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _, _)| *n).collect()
}

/// A built-in preset as `rope audit --list-presets` lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PresetInfo {
    /// The name `--preset` takes.
    pub name: &'static str,
    /// Where its values were typed from (model repository and file).
    pub source: &'static str,
    /// Its rope type (default, linear, dynamic, yarn, longrope, llama3).
    pub rope_type: String,
    /// Its rotary dimension.
    pub rotary_dim: usize,
    /// Its base θ (`rope_theta`).
    pub base: Option<f64>,
    /// The context length it declares (`max_position_embeddings`).
    pub context: Option<u64>,
}

/// Every built-in preset with its source, rope type, rotary dimension and base.
///
/// # Errors
/// None in practice (every preset is tested to load).
pub fn presets() -> Result<Vec<PresetInfo>> {
    PRESETS
        .iter()
        .map(|(name, source, _)| {
            let f = preset(name)?.frequencies(None)?;
            Ok(PresetInfo {
                name,
                source,
                rope_type: f.rope_type.clone(),
                rotary_dim: f.rotary_dim,
                base: f.base,
                context: f.context,
            })
        })
        .collect()
}

/// Where a preset's values were typed from (model repository and file), if the name is known.
pub fn preset_source(name: &str) -> Option<&'static str> {
    PRESETS
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name.trim()))
        .map(|(_, s, _)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cfg(v: Value) -> Result<RopeConfig> {
        RopeConfig::from_json(v, "test")
    }

    #[test]
    fn every_preset_loads_and_names_its_source() {
        for n in preset_names() {
            let c = preset(n).unwrap();
            let f = c.frequencies(None).unwrap();
            assert_eq!(f.inv_freq.len(), c.rotary_dim / 2, "{n}");
            assert!(preset_source(n).unwrap().contains("config.json"));
        }
        assert!(preset("gpt-5")
            .unwrap_err()
            .to_string()
            .contains("llama-2-7b"));
    }

    #[test]
    fn family_rules() {
        let neox = preset("gpt-neox-20b").unwrap();
        assert_eq!((neox.head_dim, neox.rotary_dim), (96, 24));
        let ds = preset("deepseek-v3").unwrap();
        assert_eq!(ds.head_dim, 64);
        let f = ds.frequencies(None).unwrap();
        // mscale == mscale_all_dim: cos/sin factor exactly 1; softmax multiplier (0.1 ln 40 + 1)².
        assert_eq!(f.attention_factor, 1.0);
        let m = 0.1 * 40f64.ln() + 1.0;
        assert_eq!(f.softmax_scale_multiplier, Some(m * m));
        let phi = preset("phi-3.5-mini-instruct").unwrap();
        let f = phi.frequencies(None).unwrap();
        assert_eq!(f.attention_factor, (1.0 + 32f64.ln() / 4096f64.ln()).sqrt());
        assert_ne!(f.inv_freq, phi.frequencies(Some(4097)).unwrap().inv_freq);
        // Llama default ignores partial_rotary_factor (5.x); Phi honours it.
        let base = json!({"hidden_size": 256, "num_attention_heads": 2, "partial_rotary_factor": 0.5, "max_position_embeddings": 64});
        let mut l = base.clone();
        l["model_type"] = json!("llama");
        let llama = cfg(l).unwrap();
        assert_eq!(llama.rotary_dim, 128);
        assert!(llama.notes.iter().any(|n| n.contains("ignored")));
        let mut p = base.clone();
        p["model_type"] = json!("phi");
        assert_eq!(cfg(p).unwrap().rotary_dim, 64);
        // ...but a scaled type honours it for Llama too.
        let mut l = base;
        l["model_type"] = json!("llama");
        l["rope_scaling"] = json!({"rope_type": "linear", "factor": 2.0});
        assert_eq!(cfg(l).unwrap().rotary_dim, 64);
    }

    #[test]
    fn v5_rope_parameters_and_top_level_original_override() {
        let c = cfg(json!({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 1, "max_position_embeddings": 1000,
            "original_max_position_embeddings": 100,
            "rope_parameters": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 500, "rope_theta": 5000.0}}))
        .unwrap();
        assert_eq!(c.base, 5000.0);
        let RopeScaling::Yarn(y) = &c.scaling else {
            panic!("{:?}", c.scaling)
        };
        assert_eq!(y.original_max_position_embeddings, 100);
    }

    #[test]
    fn qwen2_vl_without_rope_theta_uses_the_text_config_default_1e6() {
        // Qwen2VLConfig builds Qwen2VLTextConfig from a flat config; its default_theta is 1e6.
        let c = cfg(json!({"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28,
            "max_position_embeddings": 32768, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}))
        .unwrap();
        assert_eq!(c.base, 1e6);
        assert!(
            c.notes.iter().any(|n| n.contains("1000000")),
            "{:?}",
            c.notes
        );
    }

    #[test]
    fn gemma3_text_config_without_head_dim_uses_the_class_default_256() {
        // Gemma3TextConfig.head_dim = 256 although hidden / heads = 2560 / 8 = 320.
        let c = cfg(json!({"model_type": "gemma3", "text_config": {"hidden_size": 2560, "num_attention_heads": 8,
            "num_hidden_layers": 34, "max_position_embeddings": 131072}}))
        .unwrap();
        assert_eq!((c.head_dim, c.rotary_dim), (256, 256));
        assert_eq!(c.frequencies(None).unwrap().inv_freq.len(), 128);
    }

    #[test]
    fn non_rope_configs_are_refused_naming_their_position_scheme() {
        for (mt, scheme) in [
            ("bert", "learned absolute"),
            ("gpt2", "learned absolute"),
            ("opt", "learned absolute"),
            ("bloom", "ALiBi"),
            ("mpt", "ALiBi"),
        ] {
            let e = cfg(json!({"model_type": mt, "hidden_size": 768, "num_attention_heads": 12}))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(mt) && e.contains(scheme) && e.contains("not RoPE"),
                "{e}"
            );
        }
    }

    #[test]
    fn glm_and_glm4_pair_adjacent_coordinates() {
        for mt in ["glm", "glm4"] {
            let c = cfg(
                json!({"model_type": mt, "hidden_size": 4096, "num_attention_heads": 32,
                "max_position_embeddings": 131072}),
            )
            .unwrap();
            assert_eq!(c.pairing, Pairing::Interleaved, "{mt}");
            assert!(c
                .notes
                .iter()
                .any(|n| n.contains("interleaved (x[2k], x[2k+1])")));
        }
    }

    #[test]
    fn max_position_embeddings_2_pow_53_is_refused_with_the_limit() {
        let e = cfg(
            json!({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 1,
            "max_position_embeddings": 9007199254740992u64}),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("9007199254740992") && e.contains("below 2^53"),
            "{e}"
        );
    }

    #[test]
    fn malformed_configs_name_the_key() {
        let e = |v: Value| cfg(v).unwrap_err().to_string();
        assert!(e(json!({"num_attention_heads": 4})).contains("hidden_size"));
        assert!(e(
            json!({"hidden_size": 64, "num_attention_heads": 4, "rope_scaling": {"type": "ntk"}})
        )
        .contains("\"ntk\""));
        assert!(e(json!({"hidden_size": "64", "num_attention_heads": 4})).contains("hidden_size"));
        assert!(
            e(json!({"hidden_size": 64, "num_attention_heads": 4, "rope_theta": 1.0}))
                .contains("rope_theta")
        );
        assert!(e(json!({"hidden_size": 64, "num_attention_heads": 4, "rope_scaling": {"type": "linear", "factor": 0.5}})).contains("factor"));
        assert!(e(
            json!({"hidden_size": 64, "num_attention_heads": 4, "rope_scaling": {"type": "linear"}})
        )
        .contains("missing rope parameter factor"));
        assert!(e(json!({"hidden_size": 63, "num_attention_heads": 1})).contains("63"));
        assert!(e(
            json!({"hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 64,
            "rope_scaling": {"type": "longrope", "short_factor": [1.0], "long_factor": [1.0]}})
        )
        .contains("short_factor"));
        assert!(e(json!([1, 2])).contains("JSON object"));
    }
}
