//! What llama.cpp rotates with for one GGUF file — read from the file itself, not from a
//! config — and where that departs from what transformers computes for the model's
//! `config.json`.
//!
//! **The file's rope** ([`GgufRope::from_file`]), as llama.cpp's loader and runtime read it
//! (`llama-model.cpp` `load_hparams`, `llama-context.cpp`, ggml's `rope_yarn`; the reference
//! notes `shared/reference/rope-engines.md`):
//!
//! * θ = `{arch}.rope.freq_base` (10000 when absent), `n_rot` = `{arch}.rope.dimension_count`
//!   (the head dimension when absent), ω_k = θ^(−2k/n_rot) / ff_k with ff_k the float32
//!   frequency factors of a `rope_freqs` tensor (llama 3's scaling, precomputed by the
//!   converter) or of `rope_factors_long` / `rope_factors_short` (LongRoPE: the long set when
//!   the context `n_ctx` exceeds the original one `rope.scaling.original_context_length`,
//!   else `context_length`), 1 without a tensor;
//! * `freq_scale = 1.0f/rope.scaling.factor` (float32; the old key `rope.scale_linear` when the
//!   new one is absent; 1 without a factor or for `rope.scaling.type = none`), the scaling type
//!   `linear` when absent (llama.cpp's default, a no-op without a factor);
//! * YaRN (`ext_factor` = `rope.scaling.yarn_ext_factor`, else 1 for type `yarn` and 0
//!   otherwise): ω_k = (freq_scale·ω_k)(1 − r_k) + ω_k·r_k with the ramp r_k over the correction
//!   range from `original_context_length`, `yarn_beta_fast` (32) and `yarn_beta_slow` (1),
//!   always floored/ceiled; without YaRN ω_k = freq_scale·ω_k;
//! * the factor multiplying cos and sin: `rope.scaling.attn_factor` (1 when absent) times, with
//!   YaRN, mscale(factor) = 1 + 0.1·ln factor — or, with `rope.scaling.yarn_log_multiplier` m ≠ 0
//!   (DeepSeek conversions), mscale(factor, m₀)/mscale(factor, m) with m₀ = m for `deepseek2`
//!   when m ≠ 1 and 1 otherwise (llama.cpp PR #17945 following transformers' YaRN), and for
//!   `deepseek2` the softmax scale multiplied by (1 + m·ln factor)².
//!
//! **The comparison** ([`compare`]) puts that rotation beside transformers' for the config at
//! the same sequence length (the audited length, which is also the context `n_ctx` llama.cpp is
//! served with), plane by plane: the relative frequency difference and the first position at
//! which the two rotations differ by more than bf16 resolution ([`super::compare`]), and the
//! typed causes (base, rotary dimension, scaling type and parameters, frequency-factor tensor,
//! attention factor).

use serde::Serialize;

use super::compare::{first_difference, plane_first_difference, rel_diff, Difference};
use super::{default_inv_freq, EngineInput, EngineRope, Outcome};
use crate::config::RopeConfig;
use crate::model::gguf::{GgufFile, Value};
use crate::model::ModelInfo;
use crate::position::frequencies::{yarn_get_mscale, RopeScaling};
use crate::{Error, Result};

/// The frequency-factor tensors llama.cpp reads (one float32 divisor per plane).
pub const FACTOR_TENSORS: [&str; 3] = [
    "rope_freqs.weight",
    "rope_factors_long.weight",
    "rope_factors_short.weight",
];

/// A frequency-factor tensor llama.cpp applies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FreqFactors {
    /// The tensor's name (`rope_freqs.weight`, `rope_factors_long.weight`, …).
    pub tensor: String,
    /// ff_k per plane (float32 widened).
    pub values: Vec<f64>,
}

/// How llama.cpp pairs a head's coordinates for an architecture (its rope mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RopeMode {
    /// `LLAMA_ROPE_TYPE_NORM`: adjacent pairs (2k, 2k+1). For llama-family conversions the
    /// converter permuted the q/k rows so this is transformers' half split on the original rows.
    Normal,
    /// `LLAMA_ROPE_TYPE_NEOX`: halves (k, k + n_rot/2), as transformers' `rotate_half`.
    Neox,
}

impl RopeMode {
    /// The mode llama.cpp uses for a few common architectures (`None`: not in attnlab's list).
    pub fn of(arch: &str) -> Option<RopeMode> {
        match arch {
            "llama" | "mistral" | "granite" | "baichuan" | "deepseek" | "deepseek2" | "minicpm" => {
                Some(RopeMode::Normal)
            }
            "qwen2" | "qwen3" | "qwen2moe" | "qwen3moe" | "phi3" | "gemma" | "gemma2"
            | "gemma3" | "gptneox" | "falcon" | "stablelm" | "starcoder2" | "olmo2" | "gpt-oss" => {
                Some(RopeMode::Neox)
            }
            _ => None,
        }
    }
}

/// What llama.cpp rotates with for a GGUF file served with context `n_ctx`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GgufRope {
    /// `general.architecture`.
    pub architecture: String,
    /// How llama.cpp pairs coordinates for it, when attnlab knows.
    pub mode: Option<RopeMode>,
    /// θ (`rope.freq_base`, 10000 when absent).
    pub freq_base: f64,
    /// Rotated dimensions per head (`rope.dimension_count`).
    pub n_rot: usize,
    /// The scaling type llama.cpp uses (`rope.scaling.type`; `linear` when absent).
    pub scaling_type: String,
    /// `1.0f/factor` (1 without a factor, or for type `none`).
    pub freq_scale: f64,
    /// YaRN's extrapolation mix (0: no YaRN).
    pub ext_factor: f64,
    /// The original context YaRN's correction range and LongRoPE's switch use
    /// (`rope.scaling.original_context_length`, else `context_length`).
    pub n_ctx_orig: u64,
    /// `{arch}.context_length`.
    pub context_length: u64,
    /// The context llama.cpp is served with (chooses LongRoPE's factors).
    pub n_ctx: u64,
    /// `rope.scaling.attn_factor` (1 when absent).
    pub attn_factor: f64,
    /// YaRN's betas (`rope.scaling.yarn_beta_fast` 32, `yarn_beta_slow` 1 when absent).
    pub beta_fast: f64,
    /// See `beta_fast`.
    pub beta_slow: f64,
    /// `rope.scaling.yarn_log_multiplier` (0 when absent).
    pub yarn_log_multiplier: f64,
    /// The frequency-factor tensor applied, if any.
    pub freq_factors: Option<FreqFactors>,
    /// The frequency-factor tensors present in the file.
    pub factor_tensors: Vec<String>,
    /// The rotation: ω_k, the cos/sin factor and the softmax-scale multiplier.
    pub rope: EngineRope,
}

fn factors(f: &GgufFile, name: &str, planes: usize) -> Result<Option<FreqFactors>> {
    if f.tensor(name).is_none() {
        return Ok(None);
    }
    let v = f.tensor_f32(name)?;
    if v.len() != planes {
        return Err(Error::io(
            f.path(),
            format!(
                "tensor {name} has {} values; llama.cpp needs one per rotated plane ({planes} = rope.dimension_count / 2)",
                v.len()
            ),
        ));
    }
    if let Some(bad) = v.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
        return Err(Error::io(
            f.path(),
            format!("tensor {name} holds {bad}; expected positive frequency factors"),
        ));
    }
    Ok(Some(FreqFactors {
        tensor: name.into(),
        values: v.into_iter().map(f64::from).collect(),
    }))
}

impl GgufRope {
    /// Reads the file's rope as llama.cpp does, for a context of `n_ctx` tokens.
    ///
    /// # Errors
    /// Metadata of the wrong type, a rotary dimension that is odd, zero or above the head, a
    /// frequency-factor tensor of the wrong length or with non-positive values, an unknown
    /// scaling type.
    pub fn from_file(f: &GgufFile, n_ctx: u64) -> Result<GgufRope> {
        let info = ModelInfo::from_gguf(f)?;
        let arch = info.architecture.clone();
        let k = |s: &str| format!("{arch}.rope.{s}");
        let n_rot = usize::try_from(info.rope.dimension_count).unwrap_or(usize::MAX);
        if n_rot == 0 || n_rot % 2 != 0 || n_rot as u64 > info.head_dim.max(1) {
            return Err(Error::io(
                f.path(),
                format!(
                    "{} is {n_rot}; expected an even number of rotated dims in 2..={} (the head dimension)",
                    k("dimension_count"),
                    info.head_dim
                ),
            ));
        }
        let base = info.rope.freq_base;
        if !(base.is_finite() && base > 1.0) {
            return Err(Error::io(
                f.path(),
                format!("{} is {base}; expected a base above 1", k("freq_base")),
            ));
        }
        let scaling_type = match f.get(&k("scaling.type")) {
            None => "linear".to_string(),
            Some(v) => v
                .as_str()
                .ok_or_else(|| {
                    Error::io(
                        f.path(),
                        format!(
                            "metadata {} is {}; expected a string",
                            k("scaling.type"),
                            v.summary()
                        ),
                    )
                })?
                .to_string(),
        };
        if !["none", "linear", "yarn", "longrope"].contains(&scaling_type.as_str()) {
            return Err(Error::io(
                f.path(),
                format!(
                    "{} is \"{}\"; llama.cpp knows none, linear, yarn, longrope",
                    k("scaling.type"),
                    crate::text::shorten(&scaling_type)
                ),
            ));
        }
        let factor = match f.number(&k("scaling.factor"))? {
            Some(x) => Some(x),
            None => f.number(&k("scale_linear"))?,
        };
        let freq_scale = match factor {
            _ if scaling_type == "none" => 1.0,
            Some(x) if x != 0.0 => f64::from(1.0f32 / x as f32),
            _ => 1.0,
        };
        if !(freq_scale.is_finite() && freq_scale > 0.0) {
            return Err(Error::io(
                f.path(),
                format!(
                    "{} gives freq_scale {freq_scale}; expected a positive factor",
                    k("scaling.factor")
                ),
            ));
        }
        let ext_factor = f
            .number(&k("scaling.yarn_ext_factor"))?
            .filter(|&x| x >= 0.0)
            .unwrap_or(if scaling_type == "yarn" { 1.0 } else { 0.0 });
        let n_ctx_orig = match f.get(&k("scaling.original_context_length")) {
            Some(Value::U32(0)) | None => info.context_length,
            Some(v) => v.as_u64().ok_or_else(|| {
                Error::io(
                    f.path(),
                    format!(
                        "metadata {} is {}; expected a non-negative integer",
                        k("scaling.original_context_length"),
                        v.summary()
                    ),
                )
            })?,
        };
        let attn_factor = f.number(&k("scaling.attn_factor"))?.unwrap_or(1.0);
        let beta_fast = f.number(&k("scaling.yarn_beta_fast"))?.unwrap_or(32.0);
        let beta_slow = f.number(&k("scaling.yarn_beta_slow"))?.unwrap_or(1.0);
        let ylm = f.number(&k("scaling.yarn_log_multiplier"))?.unwrap_or(0.0);
        let planes = n_rot / 2;
        let factor_tensors: Vec<String> = FACTOR_TENSORS
            .iter()
            .filter(|n| f.tensor(n).is_some())
            .map(|n| n.to_string())
            .collect();
        let freq_factors = match factors(f, "rope_freqs.weight", planes)? {
            Some(ff) => Some(ff),
            None => {
                let name = if n_ctx > n_ctx_orig {
                    "rope_factors_long.weight"
                } else {
                    "rope_factors_short.weight"
                };
                factors(f, name, planes)?
            }
        };
        let extrap: Vec<f64> = default_inv_freq(base, n_rot)
            .into_iter()
            .enumerate()
            .map(|(i, w)| w / freq_factors.as_ref().map_or(1.0, |ff| ff.values[i]))
            .collect();
        let inv_freq = if ext_factor != 0.0 {
            // ggml's rope_yarn: ramp r_k = 1 − clamp((k − low)/max(0.001, high − low), 0, 1)
            // over the always-floored/ceiled correction range, mixed by ext_factor.
            let (low, high) = crate::position::frequencies::yarn_correction_range(
                beta_fast,
                beta_slow,
                n_rot,
                base,
                n_ctx_orig as f64,
                true,
            );
            extrap
                .iter()
                .enumerate()
                .map(|(i, &e)| {
                    let y = (i as f64 - low) / (high - low).max(0.001);
                    let mix = (1.0 - y.clamp(0.0, 1.0)) * ext_factor;
                    freq_scale * e * (1.0 - mix) + e * mix
                })
                .collect()
        } else {
            extrap.iter().map(|e| freq_scale * e).collect()
        };
        let factor_value = 1.0 / freq_scale;
        let (cos_sin, softmax) = if ext_factor != 0.0 {
            let net = if ylm != 0.0 {
                let m0 = if arch == "deepseek2" && ylm != 1.0 {
                    ylm
                } else {
                    1.0
                };
                yarn_get_mscale(factor_value, m0) / yarn_get_mscale(factor_value, ylm)
            } else {
                yarn_get_mscale(factor_value, 1.0)
            };
            let softmax = if arch == "deepseek2" && ylm != 0.0 {
                let m = 1.0 + ylm * factor_value.ln();
                m * m
            } else {
                1.0
            };
            (net * attn_factor, softmax)
        } else {
            (attn_factor, 1.0)
        };
        Ok(GgufRope {
            mode: RopeMode::of(&arch),
            architecture: arch,
            freq_base: base,
            n_rot,
            scaling_type,
            freq_scale,
            ext_factor,
            n_ctx_orig,
            context_length: info.context_length,
            n_ctx,
            attn_factor,
            beta_fast,
            beta_slow,
            yarn_log_multiplier: ylm,
            freq_factors,
            factor_tensors,
            rope: EngineRope {
                inv_freq,
                cos_sin_factor: cos_sin,
                softmax_scale_multiplier: softmax,
            },
        })
    }
}

/// One plane of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlaneComparison {
    /// The plane index k.
    pub plane: usize,
    /// ω_k llama.cpp rotates with for the file.
    pub gguf_inv_freq: f64,
    /// ω_k transformers computes from the config.
    pub transformers_inv_freq: f64,
    /// |Δω|/ω_transformers.
    pub rel_diff: f64,
    /// The file's frequency factor ff_k, when a tensor applies.
    pub gguf_freq_factor: Option<f64>,
    /// The first position (< the sequence length) at which this plane's two rotations differ
    /// beyond bf16 resolution.
    pub first_difference: Option<u64>,
    /// The same with the cos/sin factors taken equal: where the frequency alone shows (a
    /// factor that differs makes every plane differ from position 0).
    pub first_frequency_difference: Option<u64>,
}

/// Why the file's rotation and the config's differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum GgufCause {
    /// `rope.freq_base` is not the config's θ.
    BaseDiffers {
        /// The file's.
        gguf: f64,
        /// The config's.
        config: f64,
    },
    /// `rope.dimension_count` is not the config's rotary dimension.
    RotaryDimDiffers {
        /// The file's.
        gguf: usize,
        /// The config's.
        config: usize,
    },
    /// The file scales by another rule than the config's rope type.
    ScalingDiffers {
        /// What the file does (`none`, `linear ×f`, `yarn`, `rope_freqs tensor`, …).
        gguf: String,
        /// The config's rope type.
        config: String,
    },
    /// The scaling factor differs (`rope.scaling.factor` vs the config's `factor`).
    FactorDiffers {
        /// The file's (1/freq_scale).
        gguf: f64,
        /// The config's.
        config: f64,
    },
    /// YaRN's or LongRoPE's original context differs.
    OriginalContextDiffers {
        /// The file's (`original_context_length`, else `context_length`).
        gguf: u64,
        /// The config's `original_max_position_embeddings`.
        config: u64,
    },
    /// The frequency factors of the file's tensor are not the ones the config implies (llama
    /// 3's converter rule, LongRoPE's long or short factors), in these planes.
    FreqFactorsDiffer {
        /// The tensor.
        tensor: String,
        /// The planes whose factor differs beyond float32 rounding.
        planes: Vec<usize>,
    },
    /// The config's type needs a frequency-factor tensor the file does not have.
    FreqFactorsMissing {
        /// The tensor llama.cpp would need.
        tensor: String,
    },
    /// YaRN's betas differ.
    BetasDiffer {
        /// The file's (fast, slow).
        gguf: (f64, f64),
        /// The config's.
        config: (f64, f64),
    },
    /// The config sets YaRN's `truncate = false`; llama.cpp always floors/ceils.
    TruncateIgnored,
    /// LongRoPE uses the other factor set than transformers at this length.
    LongropeSetDiffers {
        /// The tensor llama.cpp applies (chosen by n_ctx).
        gguf: String,
        /// The set transformers uses for the sequence length.
        transformers: String,
    },
    /// The factor multiplying cos and sin differs.
    AttentionFactorDiffers {
        /// The file's.
        gguf: f64,
        /// transformers'.
        transformers: f64,
    },
    /// The softmax-scale multiplier differs (DeepSeek's mscale²).
    SoftmaxScaleDiffers {
        /// The file's.
        gguf: f64,
        /// transformers'.
        transformers: f64,
    },
}

/// The file's rope against transformers' for the config.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GgufComparison {
    /// The file's rope as llama.cpp reads it.
    pub gguf: GgufRope,
    /// transformers' rotation for the config at `sequence_length`.
    pub transformers: EngineRope,
    /// The sequence length compared (also the context n_ctx the file is served with).
    pub sequence_length: u64,
    /// Per plane (the planes both rotate).
    pub planes: Vec<PlaneComparison>,
    /// The largest relative frequency difference.
    pub max_rel_diff: f64,
    /// The first position at which the rotations differ beyond bf16 resolution (null: the file
    /// rotates like the model within the sequence).
    pub first_difference: Option<Difference>,
    /// Planes that differ within the sequence, in order.
    pub differing_planes: Vec<usize>,
    /// Why (empty when the parameters agree).
    pub causes: Vec<GgufCause>,
}

/// `a` and `b` equal up to float32 storage (GGUF keeps floats in float32).
fn same32(a: f64, b: f64) -> bool {
    (a - b).abs() <= 2.0 * f64::from(f32::EPSILON) * a.abs().max(b.abs())
}

/// What the file does to the frequencies, in a word for [`GgufCause::ScalingDiffers`].
fn gguf_rule(g: &GgufRope) -> String {
    let tensor = g.freq_factors.as_ref().map(|f| f.tensor.clone());
    match (g.ext_factor != 0.0, g.freq_scale != 1.0, tensor) {
        (true, _, _) => "yarn".into(),
        (false, _, Some(t)) if t.starts_with("rope_factors") => "longrope".into(),
        (false, false, Some(_)) => "llama3".into(),
        (false, true, Some(_)) => "linear with a rope_freqs tensor".into(),
        (false, true, None) => "linear".into(),
        (false, false, None) => "default".into(),
    }
}

/// Compares the file's rotation with transformers' for `config` at `seq_len` (the primary set).
///
/// # Errors
/// As transformers' rotation for the config ([`super::transformers::rope`]).
pub fn compare(g: GgufRope, config: &RopeConfig, seq_len: u64) -> Result<GgufComparison> {
    let input = EngineInput::new(config, seq_len);
    let reference = match super::transformers::rope(&input, seq_len)? {
        Outcome::Rotates(r) => r,
        _ => unreachable!("transformers always rotates"),
    };
    let set = input.set;
    let mut causes = Vec::new();
    if !same32(g.freq_base, set.base) {
        causes.push(GgufCause::BaseDiffers {
            gguf: g.freq_base,
            config: set.base,
        });
    }
    if g.n_rot != set.rotary_dim {
        causes.push(GgufCause::RotaryDimDiffers {
            gguf: g.n_rot,
            config: set.rotary_dim,
        });
    }
    let rule = gguf_rule(&g);
    let cfg_type = set.scaling.name().to_string();
    let cfg_rule = match cfg_type.as_str() {
        "mrope" => "default".to_string(),
        t => t.to_string(),
    };
    if rule != cfg_rule {
        causes.push(GgufCause::ScalingDiffers {
            gguf: rule.clone(),
            config: cfg_type.clone(),
        });
    }
    let gfactor = 1.0 / g.freq_scale;
    let ff_diff = |tensor: &str, want: &[f64]| -> Option<GgufCause> {
        let have = g.freq_factors.as_ref().filter(|f| f.tensor == tensor)?;
        let planes: Vec<usize> = have
            .values
            .iter()
            .zip(want)
            .enumerate()
            .filter(|(_, (a, b))| !same32(**a, f64::from(**b as f32)))
            .map(|(i, _)| i)
            .collect();
        (!planes.is_empty()).then(|| GgufCause::FreqFactorsDiffer {
            tensor: tensor.into(),
            planes,
        })
    };
    match &set.scaling {
        RopeScaling::Linear(l) if rule == "linear" && !same32(gfactor, l.factor) => {
            causes.push(GgufCause::FactorDiffers {
                gguf: gfactor,
                config: l.factor,
            })
        }
        RopeScaling::Yarn(y) => {
            if rule == "yarn" {
                if !same32(gfactor, y.factor) {
                    causes.push(GgufCause::FactorDiffers {
                        gguf: gfactor,
                        config: y.factor,
                    });
                }
                if g.n_ctx_orig != y.original_max_position_embeddings {
                    causes.push(GgufCause::OriginalContextDiffers {
                        gguf: g.n_ctx_orig,
                        config: y.original_max_position_embeddings,
                    });
                }
                if !same32(g.beta_fast, y.beta_fast) || !same32(g.beta_slow, y.beta_slow) {
                    causes.push(GgufCause::BetasDiffer {
                        gguf: (g.beta_fast, g.beta_slow),
                        config: (y.beta_fast, y.beta_slow),
                    });
                }
            }
            if !y.truncate {
                causes.push(GgufCause::TruncateIgnored);
            }
        }
        RopeScaling::Llama3(l) => {
            let want = super::llamacpp::llama3_rope_freqs(l, set.base, set.rotary_dim);
            if g.freq_factors.is_none() {
                causes.push(GgufCause::FreqFactorsMissing {
                    tensor: "rope_freqs.weight".into(),
                });
            }
            causes.extend(ff_diff("rope_freqs.weight", &want));
        }
        RopeScaling::Longrope(l) => {
            let long_t = seq_len > l.original_max_position_embeddings;
            let t_name = if long_t { "long" } else { "short" };
            match &g.freq_factors {
                None => causes.push(GgufCause::FreqFactorsMissing {
                    tensor: format!("rope_factors_{t_name}.weight"),
                }),
                Some(ff) => {
                    let g_long = ff.tensor == "rope_factors_long.weight";
                    if ff.tensor.starts_with("rope_factors") && g_long != long_t {
                        causes.push(GgufCause::LongropeSetDiffers {
                            gguf: ff.tensor.clone(),
                            transformers: t_name.into(),
                        });
                    } else {
                        let want = if g_long {
                            &l.long_factor
                        } else {
                            &l.short_factor
                        };
                        causes.extend(ff_diff(&ff.tensor, want));
                    }
                }
            }
            if g.n_ctx_orig != l.original_max_position_embeddings {
                causes.push(GgufCause::OriginalContextDiffers {
                    gguf: g.n_ctx_orig,
                    config: l.original_max_position_embeddings,
                });
            }
        }
        _ => {}
    }
    if !same32(g.rope.cos_sin_factor, reference.cos_sin_factor) {
        causes.push(GgufCause::AttentionFactorDiffers {
            gguf: g.rope.cos_sin_factor,
            transformers: reference.cos_sin_factor,
        });
    }
    if !same32(
        g.rope.softmax_scale_multiplier,
        reference.softmax_scale_multiplier,
    ) {
        causes.push(GgufCause::SoftmaxScaleDiffers {
            gguf: g.rope.softmax_scale_multiplier,
            transformers: reference.softmax_scale_multiplier,
        });
    }
    let rel = rel_diff(&g.rope.inv_freq, &reference.inv_freq);
    let planes: Vec<PlaneComparison> = g
        .rope
        .inv_freq
        .iter()
        .zip(&reference.inv_freq)
        .zip(&rel)
        .enumerate()
        .map(|(k, ((&we, &wr), &r))| PlaneComparison {
            plane: k,
            gguf_inv_freq: we,
            transformers_inv_freq: wr,
            rel_diff: r,
            gguf_freq_factor: g.freq_factors.as_ref().map(|f| f.values[k]),
            first_difference: plane_first_difference(
                g.rope.cos_sin_factor,
                we,
                reference.cos_sin_factor,
                wr,
                seq_len,
            ),
            first_frequency_difference: plane_first_difference(
                reference.cos_sin_factor,
                we,
                reference.cos_sin_factor,
                wr,
                seq_len,
            ),
        })
        .collect();
    let mut first = first_difference(&g.rope, &reference, seq_len);
    if g.n_rot != set.rotary_dim && seq_len > 1 {
        // Different planes rotate: the extra plane turns from position 1 on.
        first = Some(Difference {
            position: first.map_or(1, |d| d.position.min(1)),
            plane: None,
        });
    }
    let differing_planes = planes
        .iter()
        .filter(|p| p.first_difference.is_some())
        .map(|p| p.plane)
        .collect();
    Ok(GgufComparison {
        max_rel_diff: rel.iter().copied().fold(0.0, f64::max),
        gguf: g,
        transformers: reference,
        sequence_length: seq_len,
        planes,
        first_difference: first,
        differing_planes,
        causes,
    })
}
