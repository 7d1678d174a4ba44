//! vLLM 0.33.0's rope, transcribed from the files of the released wheel
//! (`vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl`, `vllm/model_executor/layers/rotary_embedding/`):
//!
//! * `__init__.py` `get_rope`: which config keys reach each class. `yarn` passes `beta_fast`,
//!   `beta_slow`, `mscale`, `mscale_all_dim`, `attention_factor`, `truncate` as given (no `or`
//!   defaults); `longrope` passes `short_mscale`/`long_mscale`.
//! * `yarn_scaling_rope.py` + `common.py`: the blend of transformers with `truncate`, mscale =
//!   `attention_factor` if given, else get_mscale(f, mscale)/get_mscale(f, mscale_all_dim) when
//!   both are truthy, else get_mscale(f) — transformers' rule.
//! * `models/deepseek_v2.py`: DeepSeek-V2/V3 replace `yarn` by `deepseek_yarn`
//!   (`deepseek_scaling_rope.py`: always floor/ceil, mscale = get_mscale(f, mscale)/
//!   get_mscale(f, mscale_all_dim) with class defaults 1 and 0) and multiply the softmax scale by
//!   get_mscale(f, mscale_all_dim)².
//! * `phi3_long_rope_scaled_rope.py`: `use_long_rope = max_model_len > original`, fixed at start
//!   (also so at vllm-project/vllm@17d618b0); factor sqrt(1 + ln(max/orig)/ln(orig)).
//! * `dynamic_ntk_scaling_rope.py`: base·((f·max_position/max_trained_positions) − (f − 1))^(d/(d−2))
//!   with max_trained_positions = max_position unless the config says: the base is unchanged
//!   at every length (also so at vllm-project/vllm@3cfbaf33; issue vllm-project/vllm#41236).
//! * `llama3_rope.py`, `linear_scaling_rope.py`, `mrope.py`: transformers' formulas.

use super::{
    default_inv_freq, longrope, longrope_factor_cause, yarn_by_factor, yarn_factor_cause, Cause,
    EngineInput, Outcome,
};
use crate::position::frequencies::{yarn_get_mscale, RopeScaling};
use crate::Result;

/// The vLLM version modelled.
pub const VERSION: &str = "vLLM 0.33.0";

/// The files transcribed (from the vLLM 0.33.0 wheel).
pub const SOURCES: &[&str] = &[
    "vllm/model_executor/layers/rotary_embedding/__init__.py (get_rope) @ vllm 0.33.0",
    "vllm/model_executor/layers/rotary_embedding/yarn_scaling_rope.py, common.py @ vllm 0.33.0",
    "vllm/model_executor/layers/rotary_embedding/deepseek_scaling_rope.py, vllm/model_executor/models/deepseek_v2.py @ vllm 0.33.0",
    "vllm/model_executor/layers/rotary_embedding/phi3_long_rope_scaled_rope.py @ vllm 0.33.0 (same rule at vllm-project/vllm@17d618b0)",
    "vllm/model_executor/layers/rotary_embedding/dynamic_ntk_scaling_rope.py @ vllm 0.33.0 (same result at vllm-project/vllm@3cfbaf33)",
    "vllm/model_executor/layers/rotary_embedding/llama3_rope.py, linear_scaling_rope.py, mrope.py @ vllm 0.33.0",
];

/// vLLM's DeepSeek YaRN cos/sin factor and softmax multiplier (`deepseek_scaling_rope.py`,
/// `deepseek_v2.py`; SGLang's are the same, times its `attn_factor`).
pub(crate) fn deepseek_factors(input: &EngineInput, factor: f64) -> (f64, f64) {
    let m = input.num("mscale").unwrap_or(1.0);
    let md = input.num("mscale_all_dim").unwrap_or(0.0);
    let cos_sin = yarn_get_mscale(factor, m) / yarn_get_mscale(factor, md);
    let s = yarn_get_mscale(factor, md);
    (cos_sin, s * s)
}

/// vLLM's base for dynamic NTK (static: see the module doc).
pub(crate) fn dynamic_base(input: &EngineInput, factor: f64) -> f64 {
    let max = input.config.max_position_embeddings.unwrap_or(1) as f64;
    let trained = input.num("max_trained_positions").unwrap_or(max);
    let d = input.dim();
    input.set.base * ((factor * max / trained) - (factor - 1.0)).powf(d / (d - 2.0))
}

/// What vLLM rotates with (the sequence length never matters: vLLM builds one cos/sin cache).
///
/// # Errors
/// None in practice (the config was validated when read).
pub fn rope(input: &EngineInput, _seq_len: u64) -> Result<Outcome> {
    let (base, dim) = (input.set.base, input.set.rotary_dim);
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
        // llama3_rope.py is transformers' formula line for line.
        s @ RopeScaling::Llama3(_) => Outcome::rotates(s.inv_freq_f64(base, dim, None), 1.0, 1.0),
        RopeScaling::Dynamic(d) => Outcome::rotates(
            default_inv_freq(dynamic_base(input, d.factor), dim),
            1.0,
            1.0,
        ),
        RopeScaling::Yarn(y) if input.is_deepseek() => {
            let (a, s) = deepseek_factors(input, y.factor);
            Outcome::rotates(yarn_by_factor(input, y, true), a, s)
        }
        RopeScaling::Yarn(y) => {
            let m = input.num("mscale").filter(|m| *m != 0.0);
            let md = input.num("mscale_all_dim").filter(|m| *m != 0.0);
            let a = match (y.attention_factor, m, md) {
                (Some(a), _, _) => a,
                (None, Some(m), Some(md)) => {
                    yarn_get_mscale(y.factor, m) / yarn_get_mscale(y.factor, md)
                }
                (None, _, _) => yarn_get_mscale(y.factor, 1.0),
            };
            Outcome::rotates(yarn_by_factor(input, y, y.truncate), a, 1.0)
        }
        RopeScaling::Longrope(l) => {
            longrope(input, base, dim, l, input.served > l.original_max_position_embeddings)
        }
        RopeScaling::Proportional(_) => Outcome::NotModelled(
            "vLLM 0.33.0 maps proportional to Gemma4RotaryEmbedding, whose formula attnlab does not transcribe".into(),
        ),
    })
}

/// Where vLLM 0.33.0's rule departs from transformers' for this config.
pub fn causes(input: &EngineInput) -> Vec<Cause> {
    let mut out = Vec::new();
    let reference = input.set.scaling.attention_factor();
    match &input.set.scaling {
        RopeScaling::Longrope(l) => {
            let orig = l.original_max_position_embeddings;
            if input.served > orig {
                out.push(Cause::LongropeLongForEverySequence {
                    served: input.served,
                    original: orig,
                });
            }
            if let Ok(Outcome::Rotates(r)) = rope(input, input.served) {
                out.extend(longrope_factor_cause(reference, r.cos_sin_factor));
            }
        }
        RopeScaling::Dynamic(d) => out.push(Cause::DynamicStatic {
            engine_base: dynamic_base(input, d.factor),
        }),
        RopeScaling::Yarn(_) => {
            if let Ok(Outcome::Rotates(r)) = rope(input, input.served) {
                out.extend(yarn_factor_cause(input, reference, r.cos_sin_factor, false));
            }
        }
        _ => {}
    }
    out
}
