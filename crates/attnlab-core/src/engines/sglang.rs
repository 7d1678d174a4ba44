//! SGLang 0.5.23's rope, transcribed from the files of the released wheel
//! (`sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl`, `sglang/srt/layers/rotary_embedding/`):
//!
//! * `factory.py` `get_rope`: `yarn` passes `extrapolation_factor`, `attn_factor`, `beta_fast`,
//!   `beta_slow`, `mscale`, `mscale_all_dim` as given and `truncate` (default true); transformers'
//!   `attention_factor` is not passed. `longrope` passes `short_mscale`/`long_mscale`.
//! * `yarn.py` `YaRNScalingRotaryEmbedding`: transformers' blend with `truncate`; mscale =
//!   get_mscale(f, mscale)/get_mscale(f, mscale_all_dim) when both are *not None* (transformers:
//!   when both are truthy), else 0.1·ln f + 1, then multiplied by `attn_factor`.
//! * `models/deepseek_v2.py` + `configs/model_config.py` `compute_mla_mscale_scaling`:
//!   DeepSeek-V2/V3 use `deepseek_yarn` (`rope_variant.py` `DeepseekScalingRotaryEmbedding`:
//!   always floor/ceil, mscale ratio with class defaults 1 and 0, times `attn_factor`) and
//!   multiply the softmax scale by get_mscale(f, mscale_all_dim)².
//! * `rope_variant.py` `Phi3LongRoPEScaledRotaryEmbedding.forward`: the long factors for a whole
//!   batch when `torch.any(positions > original)`; factor sqrt(1 + ln(max/orig)/ln(orig)).
//! * `rope_variant.py` `DynamicNTKScalingRotaryEmbedding`: static,
//!   base·((f·max_len/max_position) − (f − 1))^(d/(d−2)) with max_len = max_position·f, i.e.
//!   base·(f² − f + 1)^(d/(d−2)) at every length (`DynamicNTKAlphaRotaryEmbedding` with an
//!   `alpha` key: base·alpha^(d/(d−2))).
//! * `rope_variant.py` `Llama3RotaryEmbedding`, `base.py` `LinearScalingRotaryEmbedding`,
//!   `mrope.py`: transformers' formulas.

use super::{
    default_inv_freq, longrope, longrope_factor_cause, yarn_by_factor, yarn_factor_cause, Cause,
    EngineInput, Outcome, Switching,
};
use crate::position::frequencies::{yarn_get_mscale, RopeScaling};
use crate::Result;

/// The SGLang version modelled.
pub const VERSION: &str = "SGLang 0.5.23";

/// The files transcribed (from the SGLang 0.5.23 wheel).
pub const SOURCES: &[&str] = &[
    "python/sglang/srt/layers/rotary_embedding/factory.py (get_rope) @ sglang 0.5.23 (same dispatch at sgl-project/sglang@108c36c0)",
    "python/sglang/srt/layers/rotary_embedding/yarn.py @ sglang 0.5.23 (same at sgl-project/sglang@0b1fd02d)",
    "python/sglang/srt/layers/rotary_embedding/rope_variant.py (Phi3LongRoPEScaledRotaryEmbedding, DeepseekScalingRotaryEmbedding, DynamicNTKScalingRotaryEmbedding, Llama3RotaryEmbedding) @ sglang 0.5.23",
    "python/sglang/srt/models/deepseek_v2.py, python/sglang/srt/configs/model_config.py (compute_mla_mscale_scaling) @ sglang 0.5.23",
];

/// SGLang's static dynamic-NTK base (see the module doc).
pub(crate) fn dynamic_base(input: &EngineInput, factor: f64) -> f64 {
    let d = input.dim();
    let e = d / (d - 2.0);
    match input.num("alpha") {
        Some(alpha) => input.set.base * alpha.powf(e),
        None => input.set.base * (factor * factor - factor + 1.0).powf(e),
    }
}

/// Whether a sequence of `seq_len` tokens (positions 0..seq_len−1, alone in its batch) gets
/// LongRoPE's long factors: some position exceeds the original context.
fn long_for(seq_len: u64, original: u64) -> bool {
    seq_len.saturating_sub(1) > original
}

/// What SGLang rotates with for a sequence of `seq_len` tokens (only LongRoPE depends on it).
///
/// # Errors
/// None in practice (the config was validated when read).
pub fn rope(input: &EngineInput, seq_len: u64) -> Result<Outcome> {
    let (base, dim) = (input.set.base, input.set.rotary_dim);
    let attn_factor = input.num("attn_factor").unwrap_or(1.0);
    Ok(match &input.set.scaling {
        RopeScaling::Default(_) | RopeScaling::Mrope(_) => {
            Outcome::rotates(default_inv_freq(base, dim), 1.0, 1.0)
        }
        RopeScaling::Linear(l) => Outcome::rotates(
            default_inv_freq(base, dim)
                .into_iter()
                .map(|w| w / l.factor)
                .collect(),
            1.0,
            1.0,
        ),
        s @ RopeScaling::Llama3(_) => Outcome::rotates(s.inv_freq_f64(base, dim, None), 1.0, 1.0),
        RopeScaling::Dynamic(d) => Outcome::rotates(
            default_inv_freq(dynamic_base(input, d.factor), dim),
            1.0,
            1.0,
        ),
        RopeScaling::Yarn(y) if input.is_deepseek() => {
            let (a, s) = super::vllm::deepseek_factors(input, y.factor);
            Outcome::rotates(yarn_by_factor(input, y, true), a * attn_factor, s)
        }
        RopeScaling::Yarn(y) => {
            let a = match (input.num("mscale"), input.num("mscale_all_dim")) {
                (Some(m), Some(md)) => yarn_get_mscale(y.factor, m) / yarn_get_mscale(y.factor, md),
                _ => yarn_get_mscale(y.factor, 1.0),
            };
            Outcome::rotates(yarn_by_factor(input, y, y.truncate), a * attn_factor, 1.0)
        }
        RopeScaling::Longrope(l) => {
            longrope(input, base, dim, l, long_for(seq_len, l.original_max_position_embeddings))
        }
        RopeScaling::Proportional(_) => Outcome::NotModelled(
            "SGLang 0.5.23 maps proportional to Gemma4RotaryEmbedding, whose formula attnlab does not transcribe".into(),
        ),
    })
}

/// LongRoPE switches per batch by position; every other type has one cache.
pub fn switching(input: &EngineInput) -> Switching {
    match &input.set.scaling {
        RopeScaling::Longrope(l) => Switching::ByBatchPosition {
            above: l.original_max_position_embeddings,
        },
        _ => Switching::Never,
    }
}

/// Where SGLang 0.5.23's rule departs from transformers' for this config.
pub fn causes(input: &EngineInput) -> Vec<Cause> {
    let mut out = Vec::new();
    let reference = input.set.scaling.attention_factor();
    match &input.set.scaling {
        RopeScaling::Longrope(l) => {
            out.push(Cause::LongropeBatchSwitch {
                original: l.original_max_position_embeddings,
            });
            if let Ok(Outcome::Rotates(r)) = rope(input, input.served) {
                out.extend(longrope_factor_cause(reference, r.cos_sin_factor));
            }
        }
        RopeScaling::Dynamic(d) => out.push(Cause::DynamicStatic {
            engine_base: dynamic_base(input, d.factor),
        }),
        RopeScaling::Yarn(_) => {
            if let Ok(Outcome::Rotates(r)) = rope(input, input.served) {
                out.extend(yarn_factor_cause(input, reference, r.cos_sin_factor, true));
            }
        }
        _ => {}
    }
    out
}
