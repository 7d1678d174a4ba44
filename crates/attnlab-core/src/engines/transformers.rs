//! The reference: Hugging Face transformers, as `crate::position::frequencies::scaling`
//! computes it (bit for bit in float32, `tests/hf_rope.rs`), at the sequence length being
//! rotated: LongRoPE's long factors from `original + 1` tokens on and dynamic NTK's stretched
//! base beyond `max_position_embeddings` (`dynamic_rope_update`), the cos/sin attention factor
//! of the type, and DeepSeek-V2/V3's softmax-scale multiplier mscale(factor, mscale_all_dim)².

use super::{EngineInput, EngineRope, Outcome, Switching};
use crate::Result;

/// The transformers version modelled (the version the class-default table and the drift test
/// pin).
pub const VERSION: &str = "transformers 5.24.0";

/// What the reference follows.
pub const SOURCES: &[&str] = &[
    "src/transformers/modeling_rope_utils.py (ROPE_INIT_FUNCTIONS, dynamic_rope_update) at v5.24.0, matched bit for bit by attnlab's scaling module (crates/attnlab-core/tests/hf_rope.rs)",
    "src/transformers/models/deepseek_v3/modeling_deepseek_v3.py (softmax scale × mscale(factor, mscale_all_dim)²)",
];

/// transformers' rotation for a sequence of `seq_len` tokens.
///
/// # Errors
/// As [`crate::config::RopeConfig::set_frequencies`].
pub fn rope(input: &EngineInput, seq_len: u64) -> Result<Outcome> {
    let f = input
        .config
        .set_frequencies(input.config.primary, Some(seq_len))?;
    Ok(Outcome::Rotates(EngineRope {
        inv_freq: f.inv_freq,
        cos_sin_factor: f.attention_factor,
        softmax_scale_multiplier: f.softmax_scale_multiplier.unwrap_or(1.0),
    }))
}

/// LongRoPE and dynamic NTK switch by sequence length; the other types never do.
pub fn switching(input: &EngineInput) -> Switching {
    match input.set.scaling.switch_at() {
        Some(from) => Switching::BySequenceLength { from },
        None => Switching::Never,
    }
}
