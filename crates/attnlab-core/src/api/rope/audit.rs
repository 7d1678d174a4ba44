//! `attnlab rope audit`: a model's rotary configuration audited — wavelengths, resolution,
//! decay, the minimum base, precision per dtype — with a verdict (a report: exit 0 whatever it
//! finds). With `--model FILE.gguf` and a `--config` or `--preset`, the config is audited and
//! the file's rope is compared with it ([`gguf`]).

/// The GGUF file's rope against the config's.
pub mod gguf;
/// The sentence of the multimodal sections on a scaled rope type.
pub mod mrope;

use serde::{Deserialize, Serialize};

use super::{check_tol, FrequencySource};
use crate::api::value::Count;
use crate::api::{Context, Outcome};
use crate::chart::{Chart, ChartKind, LineChart, Mark, RefLine, Series};
use crate::limits::{self, Budget};
use crate::numeric::Dtype;
use crate::present::prose::rope as prose;
use crate::spectrum::audit::{self as au, AuditOptions};
use crate::spectrum::min_base::{MinBaseMethod, DEFAULT_GRID_RATIO, MIN_GRID_RATIO};
use crate::spectrum::resolve::DEFAULT_TOL;
use crate::spectrum::Watch;
use crate::{Error, Result};

/// The request of `attnlab rope audit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuditRequest {
    /// The frequency set.
    #[serde(flatten)]
    pub source: FrequencySource,
    /// Context length L ≤ 2^24, and L × planes ≤ 2^31 (default: the config's
    /// max_position_embeddings).
    pub context: Option<Count>,
    /// The dtype the verdict speaks about (all four are in the report).
    pub dtype: Dtype,
    /// Alias tolerance (radians) of the resolution.
    pub tol: f64,
    /// Skip the minimum-base search.
    pub skip_min_base: bool,
    /// Coarse log-grid ratio of the minimum-base search, in [1.0001, 2] (default 1.0005).
    pub min_base_grid: Option<f64>,
}

impl Default for AuditRequest {
    fn default() -> Self {
        AuditRequest {
            source: FrequencySource::default(),
            context: None,
            dtype: Dtype::Bf16,
            tol: DEFAULT_TOL,
            skip_min_base: false,
            min_base_grid: None,
        }
    }
}

/// The report of `attnlab rope audit`.
#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    /// The findings in one paragraph (written by
    /// [`crate::present::prose::rope::audit_verdict`] from `findings`; for a model with several
    /// rope sets, the primary set's paragraph and a sentence per other set).
    pub verdict: String,
    /// Everything the audit computed, for the primary set (the full-attention one when a model
    /// has several).
    #[serde(flatten)]
    pub audit: au::AuditReport,
    /// Notes of the config reader and of the audited length (empty for other sources).
    pub config_notes: Vec<String>,
    /// Liu et al. 2023's critical dimension of the primary set (a config source; absent
    /// otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_dimension: Option<crate::spectrum::extrapolation::CriticalDimension>,
    /// A position-dependent query scaling the model applies on top of RoPE (Ministral-3's
    /// `llama_4_scaling_beta`, Llama-4's NoPE-layer temperature), against position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_scaling: Option<crate::spectrum::extrapolation::QueryScaling>,
    /// One audit per rope set of the model (a config source; empty otherwise), labelled by
    /// layer type with the share of layers using it.
    pub rope_sets: Vec<RopeSetAudit>,
    /// With `--model FILE.gguf` and a config or preset: the file's rope (as llama.cpp reads it)
    /// against transformers' for the config, plane by plane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gguf: Option<gguf::GgufAudit>,
    /// A scaled rope type combined with multimodal sections (`mrope_section`, YaRN on Qwen3.5):
    /// which planes each position axis takes, and their regimes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mrope: Option<crate::spectrum::mrope_layout::MropeLayout>,
}

/// The audit of one rope set of a model.
#[derive(Debug, Clone, Serialize)]
pub struct RopeSetAudit {
    /// The layer type (`full_attention`, `sliding_attention`, …; null: every layer).
    pub layer_type: Option<String>,
    /// Layers using the set, when the config says.
    pub layers: Option<usize>,
    /// Their share of all layers.
    pub share: Option<f64>,
    /// Whether the top-level fields describe this set.
    pub primary: bool,
    /// This set's verdict.
    pub verdict: String,
    /// This set's audit.
    #[serde(flatten)]
    pub audit: au::AuditReport,
}

impl AuditReport {
    /// Always holds (a report, whatever it finds).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// Wavelength per plane, the decay criterion B(m)/planes, and the invariance error per
    /// dtype pipeline.
    pub fn charts(&self) -> Vec<Chart> {
        let mut charts = audit_charts(&self.audit, "");
        for s in self.rope_sets.iter().filter(|s| !s.primary) {
            let suffix = format!("_{}", s.layer_type.as_deref().unwrap_or("other"));
            charts.extend(audit_charts(&s.audit, &suffix));
        }
        charts
    }
}

/// Wavelength per plane (with the unscaled wavelengths and lines at the original and audited
/// lengths when a scaling type is active), the decay criterion's minimum per bin of m (with the
/// first negative m marked), and the invariance error per pipeline; file stems end in `suffix`.
fn audit_charts(r: &au::AuditReport, suffix: &str) -> Vec<Chart> {
    let mut series = vec![Series {
        name: "wavelength".into(),
        points: r
            .planes
            .iter()
            .filter(|p| p.wavelength.is_finite())
            .map(|p| (p.index as f64, p.wavelength))
            .collect(),
        markers: true,
    }];
    if r.scaling_bands.is_some() {
        series.push(Series {
            name: "unscaled (scaling dropped)".into(),
            points: r
                .planes
                .iter()
                .filter_map(|p| p.unscaled_wavelength.map(|w| (p.index as f64, w)))
                .collect(),
            markers: false,
        });
    }
    let mut h_lines = vec![RefLine {
        at: r.context as f64,
        label: format!("audited length {}", r.context),
    }];
    if let Some(o) = r.trained_context.and_then(|t| t.original) {
        h_lines.push(RefLine {
            at: o as f64,
            label: format!("original context {o}"),
        });
    }
    let mut v_lines = Vec::new();
    if let Some(ramp) = r.scaling_bands.as_ref().and_then(|b| b.ramp) {
        v_lines.push(RefLine {
            at: ramp.start,
            label: "ramp start".into(),
        });
        v_lines.push(RefLine {
            at: ramp.end,
            label: "ramp end".into(),
        });
    }
    let wavelengths = Chart {
        name: format!("wavelengths{suffix}"),
        title: format!("Wavelength 2π/ω per plane — {}", r.source),
        kind: ChartKind::Line(LineChart {
            x_label: "plane index k".into(),
            y_label: "wavelength (positions)".into(),
            series,
            log_y: true,
            h_lines,
            v_lines,
            // The first plane that turns less than once within the audited length.
            marks: r
                .planes
                .iter()
                .find(|p| p.wavelength > r.context as f64)
                .filter(|p| p.wavelength.is_finite())
                .map(|p| Mark {
                    x: p.index as f64,
                    y: p.wavelength,
                    label: format!("plane {}: first < 1 turn", p.index),
                })
                .into_iter()
                .collect(),
            ..Default::default()
        }),
    };
    let mut marks = Vec::new();
    let mut dv = Vec::new();
    if let Some(m) = r.decay_first_negative {
        dv.push(RefLine {
            at: m as f64,
            label: format!("first B(m) < 0 at m = {m}"),
        });
        let value = r
            .decay_bins
            .iter()
            .find(|b| b.from <= m && m < b.to)
            .map_or(0.0, |b| b.min_mean);
        marks.push(Mark {
            x: m as f64,
            y: value.min(0.0),
            label: format!("m = {m}"),
        });
    }
    marks.push(Mark {
        x: r.decay_min_mean_at.max(1) as f64,
        y: r.decay_min_mean,
        label: format!("minimum at m = {}", r.decay_min_mean_at),
    });
    let decay = Chart {
        name: format!("decay{suffix}"),
        title: "Decay criterion: min of B(m)/planes = mean cos(m·ω_k) over each bin of m (Men et al. 2024)"
            .into(),
        kind: ChartKind::Line(LineChart {
            x_label: "relative distance m".into(),
            y_label: "min B(m) / planes in the bin".into(),
            series: vec![Series {
                name: "min over the bin".into(),
                points: r
                    .decay_bins
                    .iter()
                    .map(|b| (b.at.max(1) as f64, b.min_mean))
                    .collect(),
                markers: false,
            }],
            log_x: true,
            h_lines: vec![RefLine {
                at: 0.0,
                label: "0".into(),
            }],
            v_lines: dv,
            marks,
            ..Default::default()
        }),
    };
    let precision = Chart {
        name: format!("precision{suffix}"),
        title: format!(
            "Translation-invariance error vs position per pipeline (scores ≈ {} RMS)",
            crate::number::sig(r.invariance_score_scale, 3)
        ),
        kind: ChartKind::Line(LineChart {
            x_label: "position shift t".into(),
            y_label: "max |S(i+t, j+t) − S(i, j)|".into(),
            series: super::identity::invariance_series(&r.invariance),
            log_x: true,
            log_y: true,
            ..Default::default()
        }),
    };
    vec![wavelengths, decay, precision]
}

impl AuditReport {
    /// The report of the primary set.
    pub fn primary(&self) -> &au::AuditReport {
        &self.audit
    }
}

/// What the audit needs for P planes and a context of L: the resolution scan, the decay curve
/// and the four dtypes' precision tables each touch every (position, plane) pair, and the
/// minimum-base search repeats the scan on its grid — `16·L·P` operations in all (the audit's
/// own cap, L·P ≤ 2³¹, was measured at ≤ ~25 s).
pub fn budget_for(planes: u64, context: u64) -> Budget {
    Budget::new(
        limits::product(&[planes, 4, 64]).saturating_add(limits::product(&[
            context.min(1 << 24),
            8,
            8,
        ])),
        limits::product(&[16, context, planes]),
    )
}

/// The budget of a request, from what it declares.
pub fn budget(req: &AuditRequest) -> Budget {
    budget_for(
        req.source.declared_planes(),
        req.context.map_or(0, |c| c.get()),
    )
}

/// Runs the audit. Progress of the minimum-base search goes to `ctx.progress` (stage
/// "minimum-base search"), and `ctx.cancel` stops it.
///
/// # Errors
/// A bad frequency source or context; `tol` not in (0, π]; a grid ratio outside
/// [1.0001, 2] or given with `skip_min_base`; work over the audit's limits or `ctx.limits` (checked once the context
/// is known); cancellation.
pub fn run(req: &AuditRequest, ctx: &Context) -> Result<AuditReport> {
    // A model file beside a config or preset: audit the config, compare the file with it.
    let (source, model) = match &req.source {
        s if s.model.is_some() && (s.config.is_some() || s.preset.is_some()) => (
            FrequencySource {
                model: None,
                ..s.clone()
            },
            s.model.clone(),
        ),
        s => (s.clone(), None),
    };
    let mut src = source.load(ctx, None)?;
    let l = src.at_context(req.context, au::MAX_AUDIT_CONTEXT)?;
    let planes = limits::u(src.freqs.inv_freq.len());
    budget_for(planes, l).check(
        super::describe("rope audit", planes, &format!(" and a context of {l}")),
        &ctx.limits,
    )?;
    let tol = check_tol(req.tol)?;
    let min_base_grid = match req.min_base_grid {
        None => DEFAULT_GRID_RATIO,
        Some(_) if req.skip_min_base => {
            return Err(Error::invalid(
                "min-base-grid",
                "given with --skip-min-base",
                "one of --skip-min-base or --min-base-grid (the grid is that of the search)",
            ))
        }
        Some(g) if (MIN_GRID_RATIO..=2.0).contains(&g) => g,
        Some(g) => {
            return Err(Error::invalid(
                "min-base-grid",
                g,
                "a grid ratio in [1.0001, 2], e.g. 1.0005 (the default)",
            ))
        }
    };
    let opts = AuditOptions {
        context: l,
        dtype: req.dtype,
        tol,
        min_base: !req.skip_min_base,
        min_base_grid,
        min_base_method: if req.min_base_grid.is_some() {
            MinBaseMethod::Grid
        } else {
            MinBaseMethod::CertifiedSweep
        },
        config: None,
        min_base_known: None,
    };
    let cancelled = || ctx.check_cancelled("rope audit").is_err();
    let Some(cfg) = src.config.clone() else {
        let progress = |f: f64| (ctx.progress)("minimum-base search", f);
        let audit = au::audit(
            &src.freqs,
            src.omegas.as_deref(),
            &opts,
            &Watch {
                progress: &progress,
                cancelled: &cancelled,
            },
        )?;
        return Ok(AuditReport {
            verdict: prose::audit_verdict(&audit.findings),
            audit,
            config_notes: src.notes(),
            critical_dimension: None,
            query_scaling: None,
            rope_sets: Vec::new(),
            gguf: None,
            mrope: None,
        });
    };
    // A config: every rope set, the primary first (its default minimum base is reused by sets
    // of the same rotary dimension).
    let n = cfg.sets.len();
    let order: Vec<usize> = std::iter::once(cfg.primary)
        .chain((0..n).filter(|&i| i != cfg.primary))
        .collect();
    let total = cfg.num_layers;
    let mut audits: Vec<(usize, au::AuditReport)> = Vec::new();
    for (done, &i) in order.iter().enumerate() {
        let freqs = cfg.set_frequencies(i, Some(l))?;
        let known = audits
            .iter()
            .find(|(_, a)| a.rotary_dim == freqs.rotary_dim)
            .and_then(|(_, a)| a.min_base_search.clone())
            .filter(|m| m.family() == "default");
        let o = AuditOptions {
            config: Some(au::ConfigFacts {
                scaling: cfg.sets[i].scaling.clone(),
                trained: cfg.set_trained_context(i),
            }),
            min_base_known: known,
            ..opts.clone()
        };
        let stage = |f: f64| {
            (ctx.progress)(
                "minimum-base search",
                (done as f64 + f) / order.len() as f64,
            )
        };
        audits.push((
            i,
            au::audit(
                &freqs,
                None,
                &o,
                &Watch {
                    progress: &stage,
                    cancelled: &cancelled,
                },
            )?,
        ));
    }
    let rope_sets: Vec<RopeSetAudit> = {
        let mut v: Vec<RopeSetAudit> = audits
            .iter()
            .map(|(i, a)| {
                let set = &cfg.sets[*i];
                RopeSetAudit {
                    layer_type: set.layer_type.clone(),
                    layers: set.layers,
                    share: match (set.layers, total) {
                        (Some(k), Some(t)) if t > 0 => Some(k as f64 / t as f64),
                        _ => None,
                    },
                    primary: *i == cfg.primary,
                    verdict: prose::audit_verdict(&a.findings),
                    audit: a.clone(),
                }
            })
            .collect();
        v.sort_by_key(|s| !s.primary);
        v
    };
    let audit = audits.remove(0).1;
    let mut notes = cfg.notes.clone();
    notes.extend(cfg.notes_at(l));
    notes.extend(nested_truncate_note(&cfg.raw));
    let (critical_dimension, query_scaling) = extrapolation(&cfg, l);
    let gguf = model.map(|m| gguf::run(&m, &cfg, l, ctx)).transpose()?;
    let mrope_sections = mrope_layout(&cfg, &audit);
    Ok(AuditReport {
        verdict: prose::model_verdict(&audit.findings, &rope_sets_summary(&rope_sets, total)),
        audit,
        config_notes: notes,
        critical_dimension,
        query_scaling,
        rope_sets,
        gguf,
        mrope: mrope_sections,
    })
}

/// Liu et al.'s critical dimension of the primary set (T_train: the scaling type's original
/// context, else max_position_embeddings) and the model's query scaling, if any.
fn extrapolation(
    cfg: &crate::config::RopeConfig,
    l: u64,
) -> (
    Option<crate::spectrum::extrapolation::CriticalDimension>,
    Option<crate::spectrum::extrapolation::QueryScaling>,
) {
    use crate::spectrum::extrapolation::{critical_dimension, query_scaling, QueryScalingKind};
    let tc = cfg.trained_context();
    let critical = tc
        .original
        .or(tc.max_position_embeddings)
        .map(|t| critical_dimension(cfg.base, cfg.rotary_dim, t));
    let params = crate::engines::rope_params(&cfg.raw, None);
    let num = |m: &serde_json::Map<String, serde_json::Value>, k: &str| {
        m.get(k).and_then(serde_json::Value::as_f64)
    };
    let top = match cfg.raw.get("text_config") {
        Some(serde_json::Value::Object(t)) if cfg.raw.get("hidden_size").is_none() => t.clone(),
        _ => cfg.raw.as_object().cloned().unwrap_or_default(),
    };
    let scaling = if let Some(beta) = num(&params, "llama_4_scaling_beta") {
        let step = num(&params, "original_max_position_embeddings")
            .or(tc.original.map(|o| o as f64))
            .unwrap_or(1.0) as u64;
        Some(query_scaling(
            QueryScalingKind::Llama4ScalingBeta,
            beta,
            step,
            l,
        ))
    } else if cfg.model_type.as_deref() == Some("llama4_text")
        && top
            .get("attn_temperature_tuning")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(true)
    {
        // Llama4TextConfig's class defaults: floor_scale 8192, attn_scale 0.1.
        let step = num(&top, "floor_scale").unwrap_or(8192.0) as u64;
        let scale = num(&top, "attn_scale").unwrap_or(0.1);
        Some(query_scaling(
            QueryScalingKind::Llama4AttnTemperature,
            scale,
            step,
            l,
        ))
    } else {
        None
    };
    (critical, scaling)
}

/// The multimodal sections of a scaled rope type (not `default` or `mrope`, whose frequencies
/// the sections do not change and which the config reader's notes describe).
fn mrope_layout(
    cfg: &crate::config::RopeConfig,
    audit: &au::AuditReport,
) -> Option<crate::spectrum::mrope_layout::MropeLayout> {
    use crate::position::frequencies::RopeScaling;
    let set = &cfg.sets[cfg.primary];
    if matches!(set.scaling, RopeScaling::Default(_) | RopeScaling::Mrope(_)) {
        return None;
    }
    let params = crate::engines::rope_params(&cfg.raw, set.layer_type.as_deref());
    let sections = params.get("mrope_section").and_then(|v| {
        v.as_array().map(|a| {
            a.iter()
                .filter_map(serde_json::Value::as_u64)
                .collect::<Vec<u64>>()
        })
    });
    let regimes: Vec<_> = audit.planes.iter().map(|p| p.regime).collect();
    crate::spectrum::mrope_layout::layout(
        cfg.model_type.as_deref(),
        sections,
        set.scaling.name(),
        &regimes,
    )
}

/// transformers 5.24 reads YaRN's `truncate` only at the top level of `rope_parameters`
/// (`config.rope_parameters.get("truncate")`), also when the parameters are nested per layer
/// type: a `truncate` inside a nested entry is not what transformers uses.
fn nested_truncate_note(raw: &serde_json::Value) -> Option<String> {
    let outer = raw.as_object()?;
    let top = match outer.get("text_config") {
        Some(serde_json::Value::Object(t)) if !outer.contains_key("hidden_size") => t,
        _ => outer,
    };
    let params = top.get("rope_parameters")?.as_object()?;
    let nested: Vec<&str> = params
        .iter()
        .filter(|(_, v)| v.get("truncate").is_some())
        .map(|(k, _)| k.as_str())
        .collect();
    if nested.is_empty() {
        return None;
    }
    Some(format!(
        "truncate inside nested rope_parameters ({}) is read by this audit, but transformers 5.24 reads truncate only at the top level of rope_parameters ({}), so transformers itself floors/ceils there unless the top level says truncate = false",
        nested.join(", "),
        match params.get("truncate") {
            Some(v) => format!("which says {v}"),
            None => "which has none: default true".into(),
        }
    ))
}

/// The other sets of a model, in words for the top-level verdict.
fn rope_sets_summary(sets: &[RopeSetAudit], total: Option<usize>) -> Vec<prose::SetSummary> {
    if sets.len() < 2 {
        return Vec::new();
    }
    sets.iter()
        .map(|s| prose::SetSummary {
            layer_type: s.layer_type.clone(),
            layers: s.layers,
            total,
            base: s.audit.base,
            rope_type: s.audit.scaling_bands.as_ref().map(|b| b.rope_type),
            primary: s.primary,
            findings: s.audit.findings.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_f32_fields_in_f32_form_and_the_verdict_comes_from_the_findings() {
        // inv_freq_f32 of plane 1 for base 10000, d = 8 is the f32 nearest 0.1: serialised as
        // an f32 it prints as 0.1, not as its f64 widening 0.10000000149011612.
        let r = audit(base_dim(), 64, false);
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"inv_freq_f32\":0.1,"), "{json}");
        assert!(!json.contains("0.10000000149011612"));
        assert_eq!(r.audit.planes[1].inv_freq_f32, 0.1f32);
        assert!(
            r.verdict.starts_with(
                "2 of 4 planes complete a full turn within the context of 64 positions"
            ),
            "{}",
            r.verdict
        );
        assert_eq!(r.verdict, prose::audit_verdict(&r.audit.findings));
    }

    #[test]
    fn the_verdict_reads_well_for_one_plane_and_one_position() {
        let omega = FrequencySource {
            omega: Some("0.3".parse().unwrap()),
            ..Default::default()
        };
        let v = audit(omega, 1, false).verdict;
        for phrase in [
            "The plane turns by less than one full turn within the context of 1 position",
            "no separation to distinguish",
            "has 1 distinct row of 1.",
        ] {
            assert!(v.contains(phrase), "{phrase}: {v}");
        }
        for leak in ["1..0", "1 planes", "1 positions", "shifts up to 0"] {
            assert!(!v.contains(leak), "{leak}: {v}");
        }
    }

    #[test]
    fn the_grid_is_checked_in_the_core() {
        let req = |g: f64, skip: bool| AuditRequest {
            source: base_dim(),
            context: Some(Count(64)),
            skip_min_base: skip,
            min_base_grid: Some(g),
            ..Default::default()
        };
        let e = run(&req(1.0000000001, false), &Context::default()).unwrap_err();
        assert!(e.to_string().contains("[1.0001, 2]"), "{e}");
        let e = run(&req(1.001, true), &Context::default()).unwrap_err();
        assert!(e.to_string().contains("--skip-min-base"), "{e}");
    }

    /// The audit of `source` at `context` positions (with the minimal base when `min_base`).
    fn audit(source: FrequencySource, context: u64, min_base: bool) -> AuditReport {
        let req = AuditRequest {
            source,
            context: Some(Count(context)),
            skip_min_base: !min_base,
            ..Default::default()
        };
        run(&req, &Context::default()).unwrap()
    }

    /// Base 10000, d = 8.
    fn base_dim() -> FrequencySource {
        FrequencySource {
            base: Some(10000.0),
            dim: Some(Count(8)),
            ..Default::default()
        }
    }

    fn audit_config(config: serde_json::Value, context: u64, min_base: bool) -> AuditReport {
        let config = super::super::ConfigSource::Inline(config.as_object().unwrap().clone());
        let source = FrequencySource {
            config: Some(config),
            ..Default::default()
        };
        audit(source, context, min_base)
    }

    fn preset_audit(name: &str, context: u64) -> AuditReport {
        let source = FrequencySource {
            preset: Some(name.into()),
            ..Default::default()
        };
        audit(source, context, false)
    }

    #[test]
    fn deepseek_reports_its_softmax_scale_factor_and_others_report_one() {
        // DeepSeek-V3: factor 40, mscale_all_dim 1 → (0.1·ln 40 + 1)² ≈ 1.874 (rope-papers §e).
        let r = preset_audit("deepseek-v3", 16);
        let m = 0.1 * 40f64.ln() + 1.0;
        assert_eq!(r.audit.softmax_scale_factor, m * m);
        assert_eq!(r.audit.findings.softmax_scale_factor, Some(m * m));
        assert!(r.verdict.contains("softmax scale"), "{}", r.verdict);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["softmax_scale_factor"], m * m);
        assert_eq!(
            preset_audit("llama-2-7b", 16).audit.softmax_scale_factor,
            1.0
        );
    }

    #[test]
    fn longrope_reports_the_factor_set_and_the_switch() {
        // Phi-3.5: original 4096; sequence length L uses the long factors from L = 4097 on.
        let short = preset_audit("phi-3.5-mini-instruct", 4096);
        let long = preset_audit("phi-3.5-mini-instruct", 4097);
        assert_eq!(short.audit.longrope_factor_set, Some(au::FactorSet::Short));
        assert_eq!(long.audit.longrope_factor_set, Some(au::FactorSet::Long));
        assert_eq!(long.audit.longrope_switch_at, Some(4097));
        assert!(long.verdict.contains("KV cache"), "{}", long.verdict);
        // The per-plane division is the long factor list (f64 formula: default ω / ω).
        let cfg = crate::config::preset("phi-3.5-mini-instruct").unwrap();
        let crate::position::frequencies::RopeScaling::Longrope(lr) = &cfg.scaling else {
            panic!("longrope")
        };
        for (p, f) in long.audit.planes.iter().zip(&lr.long_factor) {
            assert!(
                (p.division.unwrap() / f - 1.0).abs() < 1e-12,
                "plane {}",
                p.index
            );
        }
    }

    #[test]
    fn beyond_the_trained_context_the_verdict_leads_with_it() {
        let cfg = serde_json::json!({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
            "max_position_embeddings": 64, "rope_theta": 10000.0,
            "rope_scaling": {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32}});
        let within = audit_config(cfg.clone(), 64, false);
        assert_eq!(within.audit.beyond_trained_context, Some(false));
        let beyond = audit_config(cfg, 100, false);
        assert_eq!(beyond.audit.beyond_trained_context, Some(true));
        assert!(
            beyond
                .verdict
                .starts_with("The audited length 100 is beyond the context"),
            "{}",
            beyond.verdict
        );
        assert!(
            !beyond.verdict.contains("Every separation"),
            "{}",
            beyond.verdict
        );
        let t = beyond.audit.trained_context.unwrap();
        assert_eq!(
            (t.max_position_embeddings, t.original, t.intended, t.limit),
            (Some(64), Some(32), Some(64), Some(64))
        );
        // Base/dim sources know no trained context.
        let r = audit(base_dim(), 64, false);
        assert_eq!(r.audit.beyond_trained_context, None);
        assert!(r.rope_sets.is_empty());
    }

    #[test]
    fn a_yarn_config_meant_for_a_longer_context_is_audited_there_by_default() {
        // Qwen3's model card: max_position_embeddings 40960, yarn factor 4 × original 32768.
        let cfg = serde_json::json!({"model_type": "qwen3", "hidden_size": 512, "num_attention_heads": 4,
            "head_dim": 16, "max_position_embeddings": 40960, "rope_theta": 1000000.0,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}});
        let src = FrequencySource {
            config: Some(super::super::ConfigSource::Inline(
                cfg.as_object().unwrap().clone(),
            )),
            ..Default::default()
        };
        let mut f = src.load(&Context::default(), None).unwrap();
        assert_eq!(f.at_context(None, 1 << 24).unwrap(), 4 * 32768);
        let c = f.config.unwrap();
        assert!(c
            .notes_at(4 * 32768)
            .iter()
            .any(|n| n.contains("meant for 131072")));
    }

    #[test]
    fn gemma3_audits_both_rope_sets_with_their_share_of_layers() {
        let cfg = serde_json::json!({"model_type": "gemma3", "text_config": {
            "model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 8,
            "num_hidden_layers": 12, "max_position_embeddings": 131072, "rope_theta": 1000000.0,
            "rope_local_base_freq": 10000.0, "sliding_window": 16,
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"}}});
        let r = audit_config(cfg, 32, false);
        type Row<'a> = (Option<&'a str>, Option<usize>, Option<f64>, bool);
        let sets: Vec<Row> = r
            .rope_sets
            .iter()
            .map(|s| (s.layer_type.as_deref(), s.layers, s.audit.base, s.primary))
            .collect();
        assert_eq!(
            sets,
            [
                (Some("full_attention"), Some(2), Some(1e6), true),
                (Some("sliding_attention"), Some(10), Some(1e4), false)
            ]
        );
        assert_eq!(r.rope_sets[1].share, Some(10.0 / 12.0));
        // The linear factor applies to the global layers only.
        assert_eq!(r.audit.planes[0].inv_freq, 1.0 / 8.0);
        assert_eq!(r.rope_sets[1].audit.planes[0].inv_freq, 1.0);
        assert!(r.verdict.contains("2 rope sets"), "{}", r.verdict);
        assert!(r
            .config_notes
            .iter()
            .any(|n| n.contains("sliding_window 16")));
    }

    #[test]
    fn dropping_llama3_scaling_drifts_as_users_measured() {
        // mlx-vlm PR #1710 (rope-user-issues #9): cosine(correct, current) for Llama-3.2-Vision
        // (llama3: factor 8, 1/4, original 8192, θ 500000) was 0.959 at 1000, 0.757 at 8192,
        // 0.619 at 20000, 0.503 at 60000. Their q is unstated; ours has equal norm in every plane
        // (the expectation over isotropic q), so agreement within 0.04 is what we can claim.
        let r = preset_audit("llama-3.1-8b", 65536);
        let d = r.audit.scaled_vs_unscaled.unwrap();
        for (m, want) in [(1000, 0.959), (8192, 0.757), (20000, 0.619), (60000, 0.503)] {
            let got = d.cosine.iter().find(|&&(p, _)| p == m).unwrap().1;
            assert!((got - want).abs() < 0.04, "position {m}: {got} vs {want}");
        }
        assert!(d.first_below_0_9.unwrap() < 8192);
    }
}
