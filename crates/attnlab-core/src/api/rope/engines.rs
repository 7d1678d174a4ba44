//! `attnlab rope engines`: one config, every engine — what transformers (the reference), vLLM,
//! SGLang and llama.cpp (through the GGUF conversion rules) each rotate with, and where they
//! part (a report: exit 0 whatever it finds).

/// The sentences of this report (the report boundary writes them from the typed values).
pub mod prose;

use serde::{Deserialize, Serialize};

use super::ConfigSource;
use crate::api::value::Count;
use crate::api::{Context, Outcome};
use crate::chart::Chart;
use crate::config::{self, RopeConfig};
use crate::engines::compare::{self, Difference, BF16_RESOLUTION};
use crate::engines::{Cause, Engine, EngineInput, EngineRope, Outcome as EngineOutcome, Switching};
use crate::limits::{self, Budget};
use crate::{Error, Result};

/// Largest served context accepted (positions are compared in closed form, so this only bounds
/// the arithmetic: 2⁴⁰, [`crate::position::frequencies::MAX_POSITION`]).
pub const MAX_CONTEXT: u64 = crate::position::frequencies::MAX_POSITION;

/// The request of `attnlab rope engines`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct EnginesRequest {
    /// A Hugging Face `config.json` (a path, or the object).
    pub config: Option<ConfigSource>,
    /// A built-in model preset.
    pub preset: Option<String>,
    /// The served context C (vLLM's max_model_len, llama.cpp's n_ctx; default: the config's
    /// max_position_embeddings, or factor × original when larger).
    pub context: Option<Count>,
    /// The engines to show (default: all four; transformers, the reference, is always computed).
    pub engine: Vec<Engine>,
}

/// The report of `attnlab rope engines`.
#[derive(Debug, Clone, Serialize)]
pub struct EnginesReport {
    /// Where the config came from.
    pub source: String,
    /// Its `model_type`.
    pub model_type: Option<String>,
    /// The rope type of the primary set (transformers' name).
    pub rope_type: String,
    /// θ of the primary set.
    pub base: f64,
    /// Its rotary dimension.
    pub rotary_dim: usize,
    /// The served context C.
    pub served_context: u64,
    /// The sequence lengths compared: C, and either side of every length at which an engine
    /// switches frequencies (within C).
    pub sequence_lengths: Vec<u64>,
    /// bf16 resolution relative to a value's size (2⁻⁸): rotations closer than this are the same.
    pub bf16_resolution: f64,
    /// One entry per engine, transformers first.
    pub engines: Vec<EngineReport>,
    /// Notes of the config reader.
    pub config_notes: Vec<String>,
}

/// What one engine does with the config.
#[derive(Debug, Clone, Serialize)]
pub struct EngineReport {
    /// The engine.
    pub engine: Engine,
    /// The version modelled.
    pub version: &'static str,
    /// The files (and commits) its formula follows.
    pub follows: &'static [&'static str],
    /// What it rotates with for a sequence of C tokens (null when not supported or modelled).
    pub rope: Option<EngineRope>,
    /// How it chooses its frequencies by length.
    pub switching: Switching,
    /// |ω_engine − ω_transformers| / ω_transformers per plane, at C.
    pub rel_diff: Option<Vec<f64>>,
    /// The largest of them.
    pub max_rel_diff: Option<f64>,
    /// The comparison at each sequence length.
    pub comparisons: Vec<Comparison>,
    /// The verdict.
    pub verdict: Verdict,
    /// Where the engine's rule departs from transformers' for this config (from the reference
    /// notes), whether or not it shows within bf16 resolution.
    pub causes: Vec<Cause>,
}

/// The comparison with transformers for one sequence length.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The sequence length S.
    pub sequence_length: u64,
    /// The largest relative frequency difference.
    pub max_rel_diff: f64,
    /// The engine's cos/sin factor for S.
    pub cos_sin_factor: f64,
    /// transformers' cos/sin factor for S.
    pub reference_cos_sin_factor: f64,
    /// The first position (< S) at which the rotations differ beyond bf16 resolution.
    pub first_difference: Option<Difference>,
}

/// An engine's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Rotates like transformers within bf16 resolution at every compared length.
    Same,
    /// Differs beyond bf16 resolution from `from_position` on, in a sequence of
    /// `sequence_length` tokens (the shortest compared length that shows it); the causes are
    /// the report's `causes`.
    Differs {
        /// The first differing position.
        from_position: u64,
        /// The sequence length it was found at.
        sequence_length: u64,
        /// The plane that differs first (null: all planes, through a factor).
        plane: Option<usize>,
    },
    /// The engine refuses this rope type.
    TypeNotSupported {
        /// Why.
        reason: String,
    },
    /// The engine has the type, attnlab does not model its formula.
    NotModelled {
        /// Why.
        reason: String,
    },
}

impl EnginesReport {
    /// Always holds (a report).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// No charts: the table per engine says everything (per-plane differences are in the JSON).
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// A few vectors of planes per engine and sequence length.
pub fn budget(_req: &EnginesRequest) -> Budget {
    let planes = limits::u(crate::position::frequencies::MAX_ROTARY_DIM / 2);
    Budget::new(
        limits::product(&[planes, 8, 4, 8]),
        limits::product(&[planes, 4, 8, 64]),
    )
}

fn load(req: &EnginesRequest, ctx: &Context) -> Result<RopeConfig> {
    match (&req.config, &req.preset) {
        (Some(_), Some(_)) => Err(Error::invalid(
            "config source",
            "both --config and --preset",
            "exactly one of --config FILE, --preset NAME",
        )),
        (Some(c), None) => c.load_with(ctx.allow_files, &ctx.limits),
        (None, Some(p)) => config::preset(p),
        (None, None) => Err(Error::invalid(
            "config source",
            "none given",
            "one of --config FILE, --preset NAME",
        )),
    }
}

/// The sequence lengths compared: C, and S − 1, S for every switch length S ≤ C.
fn sequence_lengths(switches: &[Switching], served: u64) -> Vec<u64> {
    let mut v = vec![served];
    for s in switches {
        let at = match s {
            Switching::BySequenceLength { from } => Some(*from),
            Switching::ByBatchPosition { above } => Some(above + 2),
            Switching::Never | Switching::ByServedContext { .. } => None,
        };
        if let Some(at) = at {
            for l in [at.saturating_sub(1), at] {
                if (1..=served).contains(&l) {
                    v.push(l);
                }
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Runs the comparison.
///
/// # Errors
/// No config or both sources; a bad config or preset; a context of 0 or above [`MAX_CONTEXT`].
pub fn run(req: &EnginesRequest, ctx: &Context) -> Result<EnginesReport> {
    budget(req).check("rope engines", &ctx.limits)?;
    let cfg = load(req, ctx)?;
    let served = match req.context {
        Some(c) => c.get(),
        None => cfg.default_context().ok_or_else(|| {
            Error::invalid(
                "context",
                "missing",
                "--context C (required unless the config gives max_position_embeddings)",
            )
        })?,
    };
    if served == 0 || served > MAX_CONTEXT {
        return Err(Error::invalid(
            "context",
            served,
            format!("a served context in 1..={MAX_CONTEXT}"),
        ));
    }
    let input = EngineInput::new(&cfg, served);
    let shown: Vec<Engine> = if req.engine.is_empty() {
        <Engine as crate::choice::Choice>::ALL.to_vec()
    } else {
        let mut e = vec![Engine::Transformers];
        e.extend(
            req.engine
                .iter()
                .copied()
                .filter(|e| *e != Engine::Transformers),
        );
        e
    };
    let switches: Vec<Switching> = shown.iter().map(|e| e.switching(&input)).collect();
    let lengths = sequence_lengths(&switches, served);
    let reference: Vec<EngineRope> = lengths
        .iter()
        .map(|&s| match Engine::Transformers.rope(&input, s)? {
            EngineOutcome::Rotates(r) => Ok(r),
            EngineOutcome::NotSupported(m) | EngineOutcome::NotModelled(m) => {
                Err(Error::invalid("config", cfg.name.clone(), m))
            }
        })
        .collect::<Result<_>>()?;
    let mut engines = Vec::new();
    for (&engine, switching) in shown.iter().zip(switches) {
        ctx.check_cancelled("rope engines")?;
        let mut comparisons = Vec::new();
        let mut verdict = Verdict::Same;
        let mut at_served = None;
        for (&s, r) in lengths.iter().zip(&reference) {
            let rope = match engine.rope(&input, s)? {
                EngineOutcome::Rotates(x) => x,
                EngineOutcome::NotSupported(reason) => {
                    verdict = Verdict::TypeNotSupported { reason };
                    break;
                }
                EngineOutcome::NotModelled(reason) => {
                    verdict = Verdict::NotModelled { reason };
                    break;
                }
            };
            let rel = compare::rel_diff(&rope.inv_freq, &r.inv_freq);
            let first = compare::first_difference(&rope, r, s);
            if let (Some(d), Verdict::Same) = (first, &verdict) {
                verdict = Verdict::Differs {
                    from_position: d.position,
                    sequence_length: s,
                    plane: d.plane,
                };
            }
            comparisons.push(Comparison {
                sequence_length: s,
                max_rel_diff: rel.iter().copied().fold(0.0, f64::max),
                cos_sin_factor: rope.cos_sin_factor,
                reference_cos_sin_factor: r.cos_sin_factor,
                first_difference: first,
            });
            if s == served {
                at_served = Some((rope, rel));
            }
        }
        let (rope, rel_diff) = match at_served {
            Some((r, d)) => (Some(r), Some(d)),
            None => (None, None),
        };
        engines.push(EngineReport {
            engine,
            version: engine.version(),
            follows: engine.sources(),
            max_rel_diff: rel_diff
                .as_ref()
                .map(|d| d.iter().copied().fold(0.0, f64::max)),
            rope,
            switching,
            rel_diff,
            comparisons,
            verdict,
            causes: engine.causes(&input),
        });
    }
    Ok(EnginesReport {
        source: cfg.name.clone(),
        model_type: cfg.model_type.clone(),
        rope_type: cfg.scaling.name().to_string(),
        base: cfg.base,
        rotary_dim: cfg.rotary_dim,
        served_context: served,
        sequence_lengths: lengths,
        bf16_resolution: BF16_RESOLUTION,
        engines,
        config_notes: cfg.notes.clone(),
    })
}
