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
//!   (`default_honours_partial` in the class defaults, else in the family table); this module
//!   follows the model family. The scaled types always honour it.
//! * **original context** (llama3 / yarn / longrope): a top-level
//!   `original_max_position_embeddings` overrides the parameters' (Phi-3 keeps it there; its
//!   class default is 4096), else the parameters' value, else `max_position_embeddings`.
//! * **factor**: required for linear, dynamic and llama3; yarn and longrope default it to
//!   `max_position_embeddings / original`.
//!
//! The reading runs in stages, each a function of `read`: the JSON object → keys and nesting
//! standardised (a wrapper's `text_config`, the rope parameters, layer types, one parameter map
//! per rope set) → the config class's defaults (`defaults`, generated from transformers into
//! `data/hf_config_defaults.json`) → the model family's quirks (`family`, the table
//! `data/hf_config_families.json` beside it) → the rope sets.

use std::path::Path;

use serde_json::Value;

use crate::position::frequencies::{RopeScaling, RopeType, RotaryFrequencies, TrainedContext};
use crate::{Error, Result};

mod defaults;
mod family;
mod read;

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
        read::from_json(raw, name)
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

/// The built-in presets (`data/rope_presets.json`): name, source, the rope-relevant fields of
/// the model's public `config.json`.
fn preset_table() -> &'static [(String, String, Value)] {
    static T: std::sync::OnceLock<Vec<(String, String, Value)>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let v: Value = serde_json::from_str(include_str!("../data/rope_presets.json"))
            .expect("the preset table is JSON (tested)");
        let field = |p: &Value, k: &str| p[k].as_str().unwrap_or_default().to_string();
        v["presets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| (field(p, "name"), field(p, "source"), p["config"].clone()))
            .collect()
    })
}

/// A built-in configuration typed from a well-known model's public `config.json`
/// (see [`preset_source`] for which file).
///
/// # Errors
/// An unknown name (the message lists the known ones).
pub fn preset(name: &str) -> Result<RopeConfig> {
    let (n, _, raw) = preset_table()
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| {
            Error::invalid(
                "preset",
                crate::text::shorten(name),
                format!("one of {}", preset_names().join(", ")),
            )
        })?;
    RopeConfig::from_json(raw.clone(), &format!("preset {n}"))
}

/// The names of the built-in presets.
pub fn preset_names() -> Vec<&'static str> {
    preset_table().iter().map(|(n, _, _)| n.as_str()).collect()
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
    preset_table()
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
    preset_table()
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name.trim()))
        .map(|(_, s, _)| s.as_str())
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
