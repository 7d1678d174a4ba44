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
use crate::position::frequencies::{yarn_get_mscale, RopeScaling, RopeType, RotaryFrequencies};
use crate::{Error, Result};

/// Model types whose transformers 5.x default rope honours `partial_rotary_factor`.
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

/// A model's rotary configuration as read from its `config.json`.
#[derive(Debug, Clone)]
pub struct RopeConfig {
    /// The raw JSON, kept for reporting.
    pub raw: serde_json::Value,
    /// Where it came from (a path or a preset name).
    pub name: String,
    /// `model_type`, when present.
    pub model_type: Option<String>,
    /// θ, the base of the geometric frequency ladder.
    pub base: f64,
    /// The head dimension of queries and keys (the rotated part for DeepSeek).
    pub head_dim: usize,
    /// How many leading dimensions rotate.
    pub rotary_dim: usize,
    /// The rope type with its parameters.
    pub scaling: RopeScaling,
    /// `max_position_embeddings` (or GPT-J's `n_positions`).
    pub max_position_embeddings: Option<u64>,
    /// DeepSeek-V2/V3: the factor mscale² multiplying the softmax scale (see
    /// [`RotaryFrequencies::softmax_scale_multiplier`]).
    pub softmax_scale_multiplier: Option<f64>,
    /// Decisions taken while reading (defaults applied, keys ignored), in words.
    pub notes: Vec<String>,
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
    /// Not a JSON object; missing `hidden_size` / `num_attention_heads` without `head_dim`; a
    /// non-numeric value; an unknown rope type; a missing required parameter (factor for
    /// linear/dynamic/llama3, `low_freq_factor`/`high_freq_factor` for llama3, the factor lists
    /// for longrope, a context where one is needed); a `partial_rotary_factor` outside (0, 1];
    /// and everything [`RotaryFrequencies::from_scaling`] rejects (base ≤ 1, odd rotary dim, …).
    pub fn from_json(raw: Value, name: &str) -> Result<RopeConfig> {
        let top = raw.as_object().ok_or_else(|| {
            Error::invalid(
                "config",
                format!("{name}: not a JSON object"),
                "a config.json object",
            )
        })?;
        // Multimodal wrappers keep the language model's fields in `text_config`.
        let top = match top.get("text_config") {
            Some(Value::Object(t))
                if !top.contains_key("hidden_size") && !top.contains_key("head_dim") =>
            {
                t
            }
            _ => top,
        };
        let mut notes = Vec::new();
        let model_type = text(top, "model_type")?.map(str::to_string);
        let mt = model_type.as_deref().unwrap_or("");

        // rope parameters: rope_scaling wins over rope_parameters (5.x `rope_scaling or rope_parameters`).
        let empty = Map::new();
        let mut params = match top.get("rope_scaling") {
            Some(Value::Object(m)) if !m.is_empty() => m,
            None | Some(Value::Null) | Some(Value::Object(_)) => match top.get("rope_parameters") {
                Some(Value::Object(m)) => m,
                None | Some(Value::Null) => &empty,
                Some(v) => return Err(bad("rope_parameters", v, "an object or null")),
            },
            Some(v) => return Err(bad("rope_scaling", v, "an object or null")),
        };
        if let Some(Value::Object(full)) = params.get("full_attention") {
            params = full;
            notes.push(
                "rope parameters nested per layer type: read the full_attention entry".into(),
            );
        }

        let type_name = match text(params, "rope_type")? {
            Some(t) => t,
            None => text(params, "type")?.unwrap_or("default"),
        };
        let rope_type = RopeType::from_config_name(type_name, &mut notes)?;
        let is_gptj = mt == "gptj";
        if is_gptj && rope_type != RopeType::Default {
            return Err(Error::invalid(
                "rope type",
                format!("{:?} for gptj", rope_type.name()),
                "default (GPT-J's rotary code has no scaling)",
            ));
        }

        // base
        let default_theta = if mt == "gpt_oss" { 150000.0 } else { 10000.0 };
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
                    notes.push(format!("no rope_theta: class default {default_theta}"));
                    default_theta
                }
            }
        };

        // head dimension
        let hidden = match num(top, "hidden_size")? {
            Some(h) => Some(h),
            None => num(top, "n_embd")?,
        };
        let heads = match num(top, "num_attention_heads")? {
            Some(h) => Some(h),
            None => num(top, "n_head")?,
        };
        let from_hidden = || -> Result<usize> {
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
        };
        let is_deepseek = mt == "deepseek_v2" || mt == "deepseek_v3";
        let head_dim = if is_deepseek {
            let d = uint(top, "qk_rope_head_dim")?.unwrap_or(64) as usize;
            notes.push(format!(
                "{mt}: only qk_rope_head_dim = {d} dimensions of each q/k head rotate"
            ));
            if boolean(top, "rope_interleave")?.unwrap_or(true) {
                notes.push(format!("{mt}: rope_interleave (default true): checkpoint rope dims are stored interleaved; transformers de-interleaves them and rotates half-split"));
            }
            d
        } else {
            match uint(top, "head_dim")? {
                Some(d) => d as usize,
                None => from_hidden()?,
            }
        };
        crate::position::frequencies::check_head_dim(head_dim)?;

        // partial rotary
        let partial = match (
            num(params, "partial_rotary_factor")?,
            num(top, "partial_rotary_factor")?,
        ) {
            (Some(f), _) | (None, Some(f)) => Some(f),
            _ if mt == "gpt_neox" => Some(num(top, "rotary_pct")?.unwrap_or(0.25)),
            _ => None,
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
        let rotary_dim = if is_gptj {
            match uint(top, "rotary_dim")? {
                Some(r) => r as usize,
                None => head_dim,
            }
        } else {
            match partial {
                Some(f)
                    if rope_type == RopeType::Default && !DEFAULT_HONOURS_PARTIAL.contains(&mt) =>
                {
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

        let max_pos = match uint(top, "max_position_embeddings")? {
            Some(m) => Some(m),
            None => uint(top, "n_positions")?,
        };
        // Read before the type's own parameters, for every type (a malformed factor is an error
        // even where the type ignores it), and used by DeepSeek's softmax rule below.
        let factor = num(params, "factor")?;
        let scaling = RopeScaling::from_config(
            rope_type,
            &mut ConfigView {
                params,
                top,
                model_type: mt,
                max_position_embeddings: max_pos,
                notes: &mut notes,
            },
        )?;

        // DeepSeek-V2/V3 multiply the softmax scale by mscale² (yarn_apply_mscale).
        // Only when the config scales the rope (transformers: `rope_scaling is not None`; the
        // default type means none) and gives a non-zero mscale_all_dim.
        let softmax_scale_multiplier = if is_deepseek {
            let msd = num(params, "mscale_all_dim")?.unwrap_or(0.0);
            let scaled = rope_type != RopeType::Default;
            Some(match factor {
                Some(f) if scaled && msd != 0.0 => {
                    let m = yarn_get_mscale(f, msd);
                    m * m
                }
                Some(_) | None => 1.0,
            })
        } else {
            None
        };

        let cfg = RopeConfig {
            raw: raw.clone(),
            name: name.to_string(),
            model_type,
            base,
            head_dim,
            rotary_dim,
            scaling,
            max_position_embeddings: max_pos,
            softmax_scale_multiplier,
            notes,
        };
        // Validate once now, so a bad config fails when loaded rather than when used.
        cfg.frequencies(None)?;
        Ok(cfg)
    }

    /// The frequencies and attention factor the implementation computes at initialisation
    /// (`seq_len = None`) or for a given sequence length (dynamic NTK, LongRoPE long factors).
    ///
    /// ```
    /// let c = attnlab_core::config::preset("llama-3.1-8b").unwrap();
    /// let f = c.frequencies(None).unwrap();
    /// assert_eq!((f.rotary_dim, f.context, f.attention_factor), (128, Some(131072), 1.0));
    /// ```
    pub fn frequencies(&self, seq_len: Option<u64>) -> Result<RotaryFrequencies> {
        let mut f = RotaryFrequencies::from_scaling(
            self.base,
            self.head_dim,
            self.rotary_dim,
            &self.scaling,
            seq_len,
        )?;
        f.context = self.max_position_embeddings;
        f.softmax_scale_multiplier = self.softmax_scale_multiplier;
        let at = seq_len
            .map(|s| format!(" at sequence length {s}"))
            .unwrap_or_default();
        f.source = format!("{} ({}{at})", self.name, f.source);
        Ok(f)
    }
}

/// Reads and validates a `config.json`.
///
/// # Errors
/// The file cannot be read or is not JSON (an [`crate::ErrorKind::Read`] error), or [`RopeConfig::from_json`] rejects it.
pub fn load_config(path: &Path) -> Result<RopeConfig> {
    load_config_with(path, &crate::limits::Limits::default())
}

/// [`load_config`] through the input gate ([`crate::files`]): a regular file (symbolic links
/// followed; FIFOs and devices refused at once) of at most `limits.max_file_bytes` bytes.
///
/// # Errors
/// See [`load_config`]; FIFOs, devices, files over the cap.
pub fn load_config_with(path: &Path, limits: &crate::limits::Limits) -> Result<RopeConfig> {
    let text = crate::files::read_text(path, limits)?;
    let raw: Value = serde_json::from_str(&text).map_err(|e| {
        Error::io(
            path,
            format!(
                "not valid JSON: {}",
                crate::present::text::clip(&e.to_string())
            ),
        )
    })?;
    RopeConfig::from_json(raw, &crate::present::text::shorten_path(path))
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
                crate::present::text::shorten(name),
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
