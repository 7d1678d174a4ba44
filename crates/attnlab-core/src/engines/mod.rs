//! One config, every engine: what transformers (the reference), vLLM, SGLang and llama.cpp
//! each rotate with for the same `config.json`.
//!
//! Each engine is a module that transcribes the engine's own rope code — the file and version it
//! follows are its `SOURCES` and `VERSION` — into a function of the config and two lengths:
//!
//! * the **served context** `C` (vLLM's `max_model_len`, SGLang's `context_length`, llama.cpp's
//!   `n_ctx`): some engines fix their choice of frequencies when they start, from `C`;
//! * the **sequence length** `S` of the request being rotated (transformers recomputes
//!   LongRoPE's and dynamic NTK's frequencies from `S`).
//!
//! What comes out ([`EngineRope`]) is the per-plane `inv_freq` ω_k, the factor multiplying cos
//! and sin (`a`), and the multiplier of the softmax scale 1/√d_qk. Formulas are evaluated in
//! f64 (what the engine's formula means); where an engine stores a value in float32 by rule
//! (llama.cpp's `rope_freqs` tensor and `freq_scale = 1/factor` in GGUF), the stored value is
//! rounded to f32 as the rule says. Float32 rounding of the angles themselves, which every engine
//! shares, is not what this compares.
//!
//! [`compare`] turns two rotations into the first position at which they differ by more than
//! bf16 resolution.

pub mod compare;
pub mod gguf;
pub mod llamacpp;
pub mod sglang;
pub mod transformers;
pub mod vllm;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::{RopeConfig, RopeSet};
use crate::position::frequencies::{RopeScaling, Yarn};
use crate::Result;

crate::choice! {
    /// An inference engine whose rope formulas attnlab models.
    pub enum Engine("engine") {
        /// Hugging Face transformers (the reference the audit matches bit for bit).
        Transformers = "transformers",
        /// vLLM.
        Vllm = "vllm",
        /// SGLang.
        Sglang = "sglang",
        /// llama.cpp, through the GGUF conversion rules (`convert_hf_to_gguf.py`).
        Llamacpp = "llamacpp",
    }
}

impl Engine {
    /// The engine version the module models.
    pub fn version(self) -> &'static str {
        match self {
            Engine::Transformers => transformers::VERSION,
            Engine::Vllm => vllm::VERSION,
            Engine::Sglang => sglang::VERSION,
            Engine::Llamacpp => llamacpp::VERSION,
        }
    }

    /// The files (and commits where pinned) the module transcribes.
    pub fn sources(self) -> &'static [&'static str] {
        match self {
            Engine::Transformers => transformers::SOURCES,
            Engine::Vllm => vllm::SOURCES,
            Engine::Sglang => sglang::SOURCES,
            Engine::Llamacpp => llamacpp::SOURCES,
        }
    }

    /// What the engine rotates with for the primary set of `cfg`, served with context
    /// `served`, for a sequence of `seq_len` tokens.
    ///
    /// # Errors
    /// A config value the engine's formula cannot evaluate (as the reference rejects it).
    pub fn rope(self, input: &EngineInput, seq_len: u64) -> Result<Outcome> {
        match self {
            Engine::Transformers => transformers::rope(input, seq_len),
            Engine::Vllm => vllm::rope(input, seq_len),
            Engine::Sglang => sglang::rope(input, seq_len),
            Engine::Llamacpp => llamacpp::rope(input, seq_len),
        }
    }

    /// How the engine chooses its frequencies by length.
    pub fn switching(self, input: &EngineInput) -> Switching {
        match self {
            Engine::Transformers => transformers::switching(input),
            Engine::Vllm | Engine::Llamacpp => by_served_context(input),
            Engine::Sglang => sglang::switching(input),
        }
    }

    /// Where the engine's rule departs from transformers' for this config (from the reference
    /// notes and the engine's code), whether or not it shows within bf16 resolution.
    pub fn causes(self, input: &EngineInput) -> Vec<Cause> {
        match self {
            Engine::Transformers => Vec::new(),
            Engine::Vllm => vllm::causes(input),
            Engine::Sglang => sglang::causes(input),
            Engine::Llamacpp => llamacpp::causes(input),
        }
    }
}

/// What an engine rotates with for one sequence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineRope {
    /// ω_k per plane (radians per position).
    pub inv_freq: Vec<f64>,
    /// The factor multiplying cos and sin (YaRN's mscale, LongRoPE's scaling factor).
    pub cos_sin_factor: f64,
    /// The factor multiplying the softmax scale 1/√d_qk (DeepSeek's mscale²; 1 elsewhere).
    pub softmax_scale_multiplier: f64,
}

/// An engine's answer for a config: a rotation, or why it has none.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The engine rotates with this.
    Rotates(EngineRope),
    /// The engine refuses the rope type (the message it raises, or that it has no such type).
    NotSupported(String),
    /// The engine has the type but attnlab does not model its formula.
    NotModelled(String),
}

impl Outcome {
    /// The engine rotates with `inv_freq`, multiplies cos/sin by `cos_sin_factor` and the
    /// softmax scale by `softmax`.
    pub(crate) fn rotates(inv_freq: Vec<f64>, cos_sin_factor: f64, softmax: f64) -> Outcome {
        Outcome::Rotates(EngineRope {
            inv_freq,
            cos_sin_factor,
            softmax_scale_multiplier: softmax,
        })
    }
}

/// How an engine chooses its frequencies by length.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Switching {
    /// One set of frequencies for every sequence.
    Never,
    /// Recomputed from the sequence length: sequences of `from` tokens or more use the other set
    /// (transformers' LongRoPE long factors at original + 1, dynamic NTK beyond
    /// max_position_embeddings).
    BySequenceLength {
        /// The first sequence length with the other frequencies.
        from: u64,
    },
    /// Per forward batch: the long set when any position in the batch exceeds `above` (SGLang's
    /// LongRoPE `torch.any(positions > original)`).
    ByBatchPosition {
        /// The position that must be exceeded.
        above: u64,
    },
    /// Fixed when the engine starts, from the served context: the long set when it exceeds
    /// `original` (vLLM's `max_model_len`, llama.cpp's `n_ctx`).
    ByServedContext {
        /// The original (pre-training) context.
        original: u64,
        /// Whether the long set was chosen for this served context.
        long: bool,
    },
}

/// Where an engine's rule departs from transformers' for a config.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// LongRoPE's long factors for every sequence, chosen once because the served context
    /// exceeds the original one (transformers uses the short factors up to `original` tokens).
    LongropeLongForEverySequence {
        /// The served context.
        served: u64,
        /// The original context.
        original: u64,
    },
    /// LongRoPE switches to the long factors only when a position exceeds `original`, one
    /// position later than transformers (which switches when the sequence length exceeds it),
    /// and per batch rather than per sequence.
    LongropeBatchSwitch {
        /// The original context.
        original: u64,
    },
    /// Dynamic NTK is static: the engine's base is `engine_base` at every length, where
    /// transformers keeps `base` up to max_position_embeddings and stretches it beyond.
    DynamicStatic {
        /// The base the engine uses.
        engine_base: f64,
    },
    /// YaRN's correction range is always floored/ceiled; the config sets `truncate = false`.
    TruncateIgnored,
    /// The config's explicit `attention_factor` is not read; the engine uses `engine` instead.
    AttentionFactorIgnored {
        /// The config's value (transformers uses it).
        config: f64,
        /// The factor the engine uses.
        engine: f64,
    },
    /// The engine's YaRN multiplies its mscale by the config's `attn_factor` (a key
    /// transformers does not read).
    AttnFactorMultiplied {
        /// The config's `attn_factor`.
        attn_factor: f64,
    },
    /// `mscale` / `mscale_all_dim` are not used for the cos/sin factor (hard-wired
    /// `1 + 0.1·ln factor`, or cancelled to 1 for DeepSeek graphs).
    MscaleNotCarried {
        /// The factor transformers uses.
        transformers: f64,
        /// The factor the engine uses.
        engine: f64,
    },
    /// LongRoPE's cos/sin factor from `short_mscale`/`long_mscale` or max/original, where
    /// transformers uses `attention_factor` or its factor.
    LongropeFactorDiffers {
        /// transformers' factor.
        transformers: f64,
        /// The engine's factor.
        engine: f64,
    },
}

/// What every engine module reads: the config, its primary set, its raw rope parameters and
/// the served context.
#[derive(Debug, Clone)]
pub struct EngineInput<'a> {
    /// The config as attnlab reads it (transformers' semantics).
    pub config: &'a RopeConfig,
    /// Its primary rope set.
    pub set: &'a RopeSet,
    /// The raw rope parameters of that set (keys transformers ignores, such as `attn_factor`,
    /// are read from here).
    pub params: Map<String, Value>,
    /// The served context C.
    pub served: u64,
}

impl<'a> EngineInput<'a> {
    /// The input for the primary set of `config` served with context `served`.
    pub fn new(config: &'a RopeConfig, served: u64) -> EngineInput<'a> {
        EngineInput {
            config,
            set: &config.sets[config.primary],
            params: rope_params(
                &config.raw,
                config.sets[config.primary].layer_type.as_deref(),
            ),
            served,
        }
    }

    /// A number among the raw rope parameters.
    pub(crate) fn num(&self, key: &str) -> Option<f64> {
        self.params.get(key).and_then(Value::as_f64)
    }

    /// Whether the model is DeepSeek-V2/V3 (their model code swaps `yarn` for `deepseek_yarn`).
    pub(crate) fn is_deepseek(&self) -> bool {
        matches!(
            self.config.model_type.as_deref(),
            Some("deepseek_v2" | "deepseek_v3")
        )
    }

    /// The rotary dimension as f64.
    pub(crate) fn dim(&self) -> f64 {
        self.set.rotary_dim as f64
    }
}

/// The raw rope parameters of a config (of `text_config` for wrappers): `rope_scaling` when a
/// non-empty object, else `rope_parameters`; a dict nested per layer type is read at
/// `layer_type` (else `full_attention`).
pub fn rope_params(raw: &Value, layer_type: Option<&str>) -> Map<String, Value> {
    let outer = raw.as_object().cloned().unwrap_or_default();
    let top = match outer.get("text_config") {
        Some(Value::Object(t))
            if !outer.contains_key("hidden_size") && !outer.contains_key("head_dim") =>
        {
            t.clone()
        }
        _ => outer,
    };
    let params = match top.get("rope_scaling") {
        Some(Value::Object(m)) if !m.is_empty() => m.clone(),
        _ => match top.get("rope_parameters") {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        },
    };
    let key = layer_type.unwrap_or("full_attention");
    match params.get(key) {
        Some(Value::Object(m)) => m.clone(),
        _ => params,
    }
}

/// LongRoPE as vLLM and SGLang write it: `inv[k] = 1/(ext_k·base^(2k/dim))` with `ext` the
/// long factors when `long` (else the short ones), and the cos/sin factor the config's
/// `long_mscale`/`short_mscale` or, without it, [`longrope_scaling_factor`]. The engines differ
/// only in when `long` holds.
pub(crate) fn longrope(
    input: &EngineInput,
    base: f64,
    dim: usize,
    l: &crate::position::frequencies::scaling::Longrope,
    long: bool,
) -> Outcome {
    let orig = l.original_max_position_embeddings;
    let ext = if long {
        &l.long_factor
    } else {
        &l.short_factor
    };
    let key = if long { "long_mscale" } else { "short_mscale" };
    let a = input
        .num(key)
        .unwrap_or_else(|| longrope_scaling_factor(input, orig));
    Outcome::rotates(
        default_inv_freq(base, dim)
            .into_iter()
            .zip(ext)
            .map(|(w, e)| w / e)
            .collect(),
        a,
        1.0,
    )
}

/// vLLM's and llama.cpp's choice: LongRoPE's set is fixed when the engine starts, by the served
/// context (`max_model_len`, `n_ctx`); every other type has one set.
fn by_served_context(input: &EngineInput) -> Switching {
    match &input.set.scaling {
        RopeScaling::Longrope(l) => Switching::ByServedContext {
            original: l.original_max_position_embeddings,
            long: input.served > l.original_max_position_embeddings,
        },
        _ => Switching::Never,
    }
}

/// LongRoPE's cos/sin factor differs from transformers' (beyond 1e-12 relative).
pub(crate) fn longrope_factor_cause(transformers: f64, engine: f64) -> Option<Cause> {
    ((engine - transformers).abs() > 1e-12 * transformers).then_some(Cause::LongropeFactorDiffers {
        transformers,
        engine,
    })
}

/// `1/base^(2k/dim)` in f64, k = 0..dim/2.
pub(crate) fn default_inv_freq(base: f64, dim: usize) -> Vec<f64> {
    (0..dim / 2)
        .map(|k| 1.0 / base.powf((2 * k) as f64 / dim as f64))
        .collect()
}

/// YaRN's blend as every engine writes it: `inv[j] = e_j·(scale·(1 − x_j) + x_j)` with
/// `e_j = 1/base^(2j/dim)` (extrapolation), `scale` = 1/factor (the interpolation is
/// `scale·e_j`), `x_j = 1 − clamp((j − low)/(high − low), 0, 1)` and `(low, high)` YaRN's
/// correction range (floored/ceiled when `truncate`; `high += 0.001` when equal).
pub(crate) fn yarn_inv_freq(
    base: f64,
    dim: usize,
    scale: f64,
    orig: f64,
    betas: (f64, f64),
    truncate: bool,
) -> Vec<f64> {
    let (low, high) = crate::position::frequencies::yarn_correction_range(
        betas.0, betas.1, dim, base, orig, truncate,
    );
    let high = if low == high { high + 0.001 } else { high };
    default_inv_freq(base, dim)
        .into_iter()
        .enumerate()
        .map(|(j, e)| {
            let ramp = ((j as f64 - low) / (high - low)).clamp(0.0, 1.0);
            let x = 1.0 - ramp;
            e * scale * (1.0 - x) + e * x
        })
        .collect()
}

/// [`yarn_inv_freq`] as vLLM and SGLang call it: `scale` = 1/factor, the config's original
/// context and its raw betas.
pub(crate) fn yarn_by_factor(input: &EngineInput, y: &Yarn, truncate: bool) -> Vec<f64> {
    yarn_inv_freq(
        input.set.base,
        input.set.rotary_dim,
        1.0 / y.factor,
        y.original_max_position_embeddings as f64,
        raw_betas(input),
        truncate,
    )
}

/// The YaRN betas an engine passes on: the config's values when present (even 0, which
/// transformers' `or` replaces by the default), else 32 and 1.
pub(crate) fn raw_betas(input: &EngineInput) -> (f64, f64) {
    (
        input.num("beta_fast").unwrap_or(32.0),
        input.num("beta_slow").unwrap_or(1.0),
    )
}

/// The cause of a cos/sin factor that differs from transformers' for a YaRN config.
pub(crate) fn yarn_factor_cause(
    input: &EngineInput,
    transformers: f64,
    engine: f64,
    multiplied_by_attn_factor: bool,
) -> Option<Cause> {
    if (engine - transformers).abs() <= 1e-12 * transformers.abs() {
        return None;
    }
    if let crate::position::frequencies::RopeScaling::Yarn(y) = &input.set.scaling {
        if let Some(a) = y.attention_factor {
            return Some(Cause::AttentionFactorIgnored { config: a, engine });
        }
    }
    match input.num("attn_factor") {
        Some(a) if multiplied_by_attn_factor && a != 1.0 => {
            Some(Cause::AttnFactorMultiplied { attn_factor: a })
        }
        _ => Some(Cause::MscaleNotCarried {
            transformers,
            engine,
        }),
    }
}

/// LongRoPE's cos/sin factor in vLLM, SGLang and llama.cpp's converter:
/// `sqrt(1 + ln(max/original)/ln(original))` (1 when max ≤ original), from the config's
/// `max_position_embeddings`, unless `short_mscale`/`long_mscale` (vLLM, SGLang) override it.
pub(crate) fn longrope_scaling_factor(input: &EngineInput, original: u64) -> f64 {
    let max = input.config.max_position_embeddings.unwrap_or(original) as f64;
    let orig = original as f64;
    let scale = max / orig;
    if scale <= 1.0 {
        1.0
    } else {
        (1.0 + scale.ln() / orig.ln()).sqrt()
    }
}
