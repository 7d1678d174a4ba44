//! Sentences of `rope engines`, written from its typed report.

use crate::api::rope::engines::{EngineReport, Verdict};
use crate::engines::{Cause, Switching};
use crate::present::number::{short, sig};

/// How an engine chooses its frequencies by length, in words.
pub fn switching(s: &Switching) -> String {
    match s {
        Switching::Never => "one set of frequencies for every sequence".into(),
        Switching::BySequenceLength { from } => {
            format!("recomputed per sequence: other frequencies from {from} tokens on")
        }
        Switching::ByBatchPosition { above } => format!(
            "per batch: long factors when any position in the batch exceeds {above}"
        ),
        Switching::ByServedContext { original, long } => format!(
            "fixed at start by the served context: {} factors (served context {} original {original})",
            if *long { "long" } else { "short" },
            if *long { ">" } else { "≤" }
        ),
    }
}

/// One cause, in words.
pub fn cause(c: &Cause) -> String {
    match c {
        Cause::LongropeLongForEverySequence { served, original } => format!(
            "LongRoPE's long factors for every sequence because the served context {served} exceeds the original {original} (transformers uses the short factors for sequences of up to {original} tokens)"
        ),
        Cause::LongropeBatchSwitch { original } => format!(
            "LongRoPE switches to the long factors only when a position exceeds {original}, per batch (transformers: when the sequence length exceeds {original}, i.e. one token earlier)"
        ),
        Cause::DynamicStatic { engine_base } => format!(
            "dynamic NTK is static: base {} at every length (transformers keeps the base up to max_position_embeddings and stretches it beyond)",
            sig(*engine_base, 7)
        ),
        Cause::TruncateIgnored => "YaRN's correction range is always floored/ceiled: the config's truncate = false is not honoured".into(),
        Cause::AttentionFactorIgnored { config, engine } => format!(
            "the config's attention_factor {} is not read; cos/sin are scaled by {}",
            short(*config),
            sig(*engine, 7)
        ),
        Cause::AttnFactorMultiplied { attn_factor } => format!(
            "YaRN's mscale is multiplied by the config's attn_factor {} (a key transformers does not read)",
            short(*attn_factor)
        ),
        Cause::MscaleNotCarried { transformers, engine } => format!(
            "cos/sin factor {} where transformers uses {} (mscale/mscale_all_dim not carried; hard-wired 1 + 0.1·ln factor)",
            sig(*engine, 7),
            sig(*transformers, 7)
        ),
        Cause::LongropeFactorDiffers { transformers, engine } => format!(
            "LongRoPE cos/sin factor {} where transformers uses {}",
            sig(*engine, 7),
            sig(*transformers, 7)
        ),
    }
}

/// An engine's verdict in one line: `same`, `differs from position P: why`, `type not supported`.
pub fn verdict(e: &EngineReport) -> String {
    match &e.verdict {
        Verdict::Same if e.causes.is_empty() => "same".into(),
        Verdict::Same => format!(
            "same within bf16 resolution at the compared lengths (the rule differs: {})",
            e.causes.iter().map(cause).collect::<Vec<_>>().join("; ")
        ),
        Verdict::Differs {
            from_position,
            sequence_length,
            plane,
        } => {
            let where_ = match plane {
                Some(k) => format!("plane {k} first"),
                None => "every plane".into(),
            };
            let why = if e.causes.is_empty() {
                "no cause recorded in the reference notes".to_string()
            } else {
                e.causes.iter().map(cause).collect::<Vec<_>>().join("; ")
            };
            format!(
                "differs from position {from_position} (sequence of {sequence_length} tokens, {where_}): {why}"
            )
        }
        Verdict::TypeNotSupported { reason } => format!("type not supported: {reason}"),
        Verdict::NotModelled { reason } => format!("not modelled: {reason}"),
    }
}
