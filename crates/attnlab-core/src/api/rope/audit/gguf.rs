//! `rope audit --model FILE.gguf --config C` (or `--preset`): the file's rope, as llama.cpp
//! reads it, against transformers' for the config ([`crate::engines::gguf`]), and its
//! sentences (written here, at the report boundary, from the typed comparison).

use serde::Serialize;

use crate::api::Context;
use crate::config::RopeConfig;
use crate::engines::gguf::{compare, GgufCause, GgufComparison, GgufRope};
use crate::present::number::{short, sig};
use crate::Result;

/// The comparison with its verdict.
#[derive(Debug, Clone, Serialize)]
pub struct GgufAudit {
    /// The model file (as the request names it).
    pub model: String,
    /// "this GGUF rotates like the model", or where and why it does not.
    pub verdict: String,
    /// Every number of the comparison.
    #[serde(flatten)]
    pub comparison: GgufComparison,
}

/// Reads the file's rope (served with context `seq_len`) and compares it with `cfg`'s.
///
/// # Errors
/// The file unreadable or refused by the input gate, its rope metadata malformed.
pub fn run(model: &str, cfg: &RopeConfig, seq_len: u64, ctx: &Context) -> Result<GgufAudit> {
    let f = crate::api::model::open(model, ctx)?;
    let g = GgufRope::from_file(&f, seq_len)?;
    let comparison = compare(g, cfg, seq_len)?;
    Ok(GgufAudit {
        model: model.to_string(),
        verdict: verdict(&comparison),
        comparison,
    })
}

/// One cause, in words.
pub fn cause(c: &GgufCause) -> String {
    match c {
        GgufCause::BaseDiffers { gguf, config } => format!(
            "rope.freq_base is {} where the config's θ is {}",
            sig(*gguf, 9),
            sig(*config, 9)
        ),
        GgufCause::RotaryDimDiffers { gguf, config } => format!(
            "rope.dimension_count is {gguf} where the config rotates {config} dims"
        ),
        GgufCause::ScalingDiffers { gguf, config } => format!(
            "the file scales by the {gguf} rule where the config's rope type is {config} (a conversion that dropped or added a scaling key or tensor)"
        ),
        GgufCause::FactorDiffers { gguf, config } => format!(
            "rope.scaling.factor is {} where the config's factor is {}",
            sig(*gguf, 7),
            sig(*config, 7)
        ),
        GgufCause::OriginalContextDiffers { gguf, config } => format!(
            "the file's original context is {gguf} where the config's original_max_position_embeddings is {config}"
        ),
        GgufCause::FreqFactorsDiffer { tensor, planes } => format!(
            "{tensor} holds other factors than the config implies in {} plane{} ({})",
            planes.len(),
            if planes.len() == 1 { "" } else { "s" },
            plane_list(planes)
        ),
        GgufCause::FreqFactorsMissing { tensor } => format!(
            "the config's rope type needs a {tensor} tensor (llama.cpp carries these factors only as a tensor), and the file has none"
        ),
        GgufCause::BetasDiffer { gguf, config } => format!(
            "YaRN's betas are ({}, {}) in the file and ({}, {}) in the config",
            short(gguf.0),
            short(gguf.1),
            short(config.0),
            short(config.1)
        ),
        GgufCause::TruncateIgnored => "the config sets YaRN's truncate = false; llama.cpp always floors/ceils the correction range".into(),
        GgufCause::LongropeSetDiffers { gguf, transformers } => format!(
            "llama.cpp applies {gguf} for this context, transformers the {transformers} factors for this sequence length"
        ),
        GgufCause::AttentionFactorDiffers { gguf, transformers } => format!(
            "cos/sin are scaled by {} in llama.cpp and by {} in transformers",
            sig(*gguf, 7),
            sig(*transformers, 7)
        ),
        GgufCause::SoftmaxScaleDiffers { gguf, transformers } => format!(
            "the softmax scale is multiplied by {} in llama.cpp and by {} in transformers",
            sig(*gguf, 7),
            sig(*transformers, 7)
        ),
    }
}

/// Plane indices as runs (`0–3, 7`).
pub fn plane_list(planes: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &p in planes {
        match runs.last_mut() {
            Some((_, e)) if *e + 1 == p => *e = p,
            _ => runs.push((p, p)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The comparison in one paragraph.
pub fn verdict(c: &GgufComparison) -> String {
    let n = c.sequence_length;
    let why = if c.causes.is_empty() {
        String::new()
    } else {
        format!(
            " Why: {}.",
            c.causes.iter().map(cause).collect::<Vec<_>>().join("; ")
        )
    };
    match &c.first_difference {
        None => format!(
            "This GGUF rotates like the model: every one of its {} planes stays within bf16 resolution of transformers' rotation for the config up to position {} (largest relative frequency difference {}).{}",
            c.planes.len(),
            n.saturating_sub(1),
            sig(c.max_rel_diff, 3),
            if c.causes.is_empty() {
                String::new()
            } else {
                format!(
                    " The parameters still differ, below what bf16 shows in {n} positions:{}",
                    why.trim_start_matches(" Why:")
                )
            }
        ),
        Some(d) => {
            let where_ = match d.plane {
                Some(k) => format!("plane {k} first"),
                None => "every plane at once (a factor, or different planes rotate)".into(),
            };
            let freq: Vec<&crate::engines::gguf::PlaneComparison> = c
                .planes
                .iter()
                .filter(|p| p.first_frequency_difference.is_some())
                .collect();
            let freq_part = match freq.iter().min_by_key(|p| p.first_frequency_difference) {
                None => "no plane's frequency differs within bf16 resolution (only a factor does)".to_string(),
                Some(first) => format!(
                    "the frequencies alone differ in {} plane{} ({}), plane {} first from position {}",
                    freq.len(),
                    if freq.len() == 1 { "" } else { "s" },
                    plane_list(&freq.iter().map(|p| p.plane).collect::<Vec<_>>()),
                    first.plane,
                    first.first_frequency_difference.unwrap_or(0)
                ),
            };
            format!(
                "This GGUF does not rotate like the model: its rotation differs from transformers' beyond bf16 resolution from position {} ({where_}); within {n} positions {} of {} planes differ ({}); {freq_part}; largest relative frequency difference {}.{why}",
                d.position,
                c.differing_planes.len(),
                c.planes.len(),
                if c.differing_planes.is_empty() {
                    "through the cos/sin or softmax factor".to_string()
                } else {
                    format!("planes {}", plane_list(&c.differing_planes))
                },
                sig(c.max_rel_diff, 3),
            )
        }
    }
}
