//! llama.cpp's rope for a model converted from a Hugging Face config, through the GGUF
//! conversion rules (`convert_hf_to_gguf.py`) and the runtime (`ggml_rope_cache_init`,
//! `rope_yarn`, `ggml_rope_yarn_corr_dims` in ggml; `llama_hparams`), as the reference notes
//! (`shared/reference/rope-engines.md`) record them:
//!
//! * **freq_scale = 1/factor**: GGUF stores `rope.scaling.factor` (float32) and llama.cpp takes
//!   `freq_scale = 1.0f/factor` in float32; `θ_interp = freq_scale·θ_extrap`.
//! * **YaRN** (`rope.scaling.type = yarn`, `ext_factor` 1): the correction range is
//!   *always* floored/ceiled and clamped to [0, n_dims − 1] (no `truncate = false`);
//!   ramp `(i − low)/max(0.001, high − low)`; `mscale = attn_factor·(1 + 0.1·ln(1/freq_scale))`
//!   hard-wired, with `rope.scaling.attn_factor` = 1 (transformers' `attention_factor`,
//!   `mscale`, `mscale_all_dim` are not carried into it). DeepSeek-V2/V3 graphs pass
//!   attn_factor = 1/(1 + 0.1·ln(1/freq_scale)), cancelling it to exactly 1, and scale the
//!   scores by (1 + yarn_log_multiplier·ln(1/freq_scale))² with yarn_log_multiplier =
//!   0.1·mscale_all_dim from the converter. (PR ggml-org/llama.cpp#17945's mistral3
//!   `yarn_attn_factor_adjust` is not modelled.)
//! * **llama3**: no scaling type; the converter precomputes a float32 `rope_freqs` tensor,
//!   ff_k = 1 (short wavelengths), factor (long), 1/((1 − s)/factor + s) between, and
//!   llama.cpp rotates with θ/ff_k.
//! * **LongRoPE**: float32 `rope_factors_long` / `rope_factors_short` tensors and
//!   `rope.scaling.attn_factor` = sqrt(1 + ln(max/orig)/ln(orig)) (float32); the long set is
//!   chosen when the context `n_ctx` exceeds the original one, for every sequence.
//! * **dynamic NTK**: no such scaling type in llama.cpp (none, linear, yarn, longrope).

use super::{
    default_inv_freq, longrope_factor_cause, longrope_scaling_factor, raw_betas, yarn_factor_cause,
    yarn_inv_freq, Cause, EngineInput, Outcome,
};
use crate::position::frequencies::{RopeScaling, Yarn};
use crate::Result;

/// The llama.cpp version modelled: the files of the reference notes.
pub const VERSION: &str =
    "llama.cpp master as of the reference notes (ggml.c @1f08e2d6, llama-hparams.h @027d5756, convert_hf_to_gguf.py @a458664f)";

/// The files the rules come from.
pub const SOURCES: &[&str] = &[
    "convert_hf_to_gguf.py @a458664f (rope.scaling.* keys, rope_freqs for llama3, rope_factors_long/short and attn_factor for LongRoPE, yarn_log_multiplier for DeepSeek)",
    "ggml/src/ggml.c @1f08e2d6 (ggml_rope_yarn_corr_dims: floor/ceil, clamp)",
    "ggml/src/ggml-cpu/ops.cpp (ggml_rope_cache_init, rope_yarn: theta/ff, ramp, mscale *= 1 + 0.1·ln(1/freq_scale))",
    "src/llama-hparams.h @027d5756 (rope_freq_scale_train, yarn_ext_factor, yarn_attn_factor, yarn_beta_fast 32, yarn_beta_slow 1)",
    "src/llama-model.cpp (freq_scale = 1/factor; LongRoPE: long factors when n_ctx_per_seq > n_ctx_orig_yarn)",
];

/// A value as GGUF stores it (float32).
fn f32r(x: f64) -> f64 {
    f64::from(x as f32)
}

/// `freq_scale = 1.0f / factor` with the factor stored as float32.
fn freq_scale(factor: f64) -> f64 {
    f64::from(1.0f32 / factor as f32)
}

/// The converter's llama3 `rope_freqs` (one float32 divisor per plane).
pub fn llama3_rope_freqs(
    l: &crate::position::frequencies::Llama3,
    base: f64,
    dim: usize,
) -> Vec<f64> {
    let old = l.original_max_position_embeddings as f64;
    let low_wl = old / l.low_freq_factor;
    let high_wl = old / l.high_freq_factor;
    default_inv_freq(base, dim)
        .into_iter()
        .map(|w| {
            let wavelen = 2.0 * std::f64::consts::PI / w;
            if wavelen < high_wl {
                1.0
            } else if wavelen > low_wl {
                f32r(l.factor)
            } else {
                let s =
                    (old / wavelen - l.low_freq_factor) / (l.high_freq_factor - l.low_freq_factor);
                f32r(1.0 / ((1.0 - s) / l.factor + s))
            }
        })
        .collect()
}

/// What llama.cpp rotates with (one set for the whole context: `n_ctx` = the served context).
///
/// # Errors
/// None in practice (the config was validated when read).
pub fn rope(input: &EngineInput, _seq_len: u64) -> Result<Outcome> {
    let (base, dim) = (input.set.base, input.set.rotary_dim);
    Ok(match &input.set.scaling {
        RopeScaling::Default(_) | RopeScaling::Mrope(_) => {
            Outcome::rotates(default_inv_freq(base, dim), 1.0, 1.0)
        }
        RopeScaling::Linear(l) => {
            let fs = freq_scale(l.factor);
            Outcome::rotates(
                default_inv_freq(base, dim).into_iter().map(|w| w * fs).collect(),
                1.0,
                1.0,
            )
        }
        RopeScaling::Llama3(l) => Outcome::rotates(
            default_inv_freq(base, dim)
                .into_iter()
                .zip(llama3_rope_freqs(l, base, dim))
                .map(|(w, ff)| w / ff)
                .collect(),
            1.0,
            1.0,
        ),
        RopeScaling::Dynamic(_) => Outcome::NotSupported(
            "llama.cpp has no dynamic NTK scaling (GGUF rope.scaling.type is none, linear, yarn or longrope)".into(),
        ),
        RopeScaling::Yarn(y) => {
            let fs = freq_scale(y.factor);
            let inv = yarn_inv_freq(
                base,
                dim,
                fs,
                y.original_max_position_embeddings as f64,
                raw_betas(input),
                true,
            );
            let hardwired = 1.0 + 0.1 * (1.0 / fs).ln();
            if input.is_deepseek() {
                let msd = input.num("mscale_all_dim").unwrap_or(0.0);
                let m = 1.0 + f32r(0.1 * msd) * (1.0 / fs).ln();
                // attn_factor = 1/hardwired cancels the hard-wired mscale exactly.
                Outcome::rotates(inv, 1.0, m * m)
            } else {
                Outcome::rotates(inv, hardwired, 1.0)
            }
        }
        RopeScaling::Longrope(l) => {
            let orig = l.original_max_position_embeddings;
            let ext = if input.served > orig {
                &l.long_factor
            } else {
                &l.short_factor
            };
            Outcome::rotates(
                default_inv_freq(base, dim)
                    .into_iter()
                    .zip(ext)
                    .map(|(w, &e)| w / f32r(e))
                    .collect(),
                f32r(longrope_scaling_factor(input, orig)),
                1.0,
            )
        }
        RopeScaling::Proportional(_) => Outcome::NotModelled(
            "attnlab does not model how llama.cpp converts proportional (Gemma 4) rope".into(),
        ),
    })
}

/// Where the GGUF rules depart from transformers' for this config.
pub fn causes(input: &EngineInput) -> Vec<Cause> {
    let mut out = Vec::new();
    let reference = input.set.scaling.attention_factor();
    match &input.set.scaling {
        RopeScaling::Yarn(Yarn { truncate, .. }) => {
            if !truncate {
                out.push(Cause::TruncateIgnored);
            }
            if let Ok(Outcome::Rotates(r)) = rope(input, input.served) {
                out.extend(yarn_factor_cause(input, reference, r.cos_sin_factor, false));
            }
        }
        RopeScaling::Longrope(l) => {
            let orig = l.original_max_position_embeddings;
            if input.served > orig {
                out.push(Cause::LongropeLongForEverySequence {
                    served: input.served,
                    original: orig,
                });
            }
            out.extend(longrope_factor_cause(
                reference,
                longrope_scaling_factor(input, orig),
            ));
        }
        _ => {}
    }
    out
}
