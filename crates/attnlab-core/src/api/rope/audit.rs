//! `attnlab rope audit`: a model's rotary configuration audited — wavelengths, resolution,
//! decay, the minimum base, precision per dtype — with a verdict (a report: exit 0 whatever it
//! finds).

use serde::{Deserialize, Serialize};

use super::{check_tol, FrequencySource};
use crate::api::value::Count;
use crate::api::{Context, Outcome};
use crate::chart::{Chart, ChartKind, LineChart, RefLine, Series};
use crate::limits::{self, Budget};
use crate::numeric::Dtype;
use crate::present::prose::rope as prose;
use crate::spectrum::audit::{self as au, AuditOptions};
use crate::spectrum::decay::{DEFAULT_GRID_RATIO, MIN_GRID_RATIO};
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
    /// [`crate::present::prose::rope::audit_verdict`] from `findings`).
    pub verdict: String,
    /// Everything the audit computed.
    #[serde(flatten)]
    pub audit: au::AuditReport,
    /// Notes of the config reader (empty for other sources).
    pub config_notes: Vec<String>,
}

impl AuditReport {
    /// Always holds (a report, whatever it finds).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// Wavelength per plane, the decay criterion B(m)/planes, and the invariance error per
    /// dtype pipeline.
    pub fn charts(&self) -> Vec<Chart> {
        let r = &self.audit;
        let wavelengths = Chart {
            name: "wavelengths".into(),
            title: format!("Wavelength 2π/ω per plane — {}", r.source),
            kind: ChartKind::Line(LineChart {
                x_label: "plane index k".into(),
                y_label: "wavelength (positions)".into(),
                series: vec![Series {
                    name: "wavelength".into(),
                    points: r
                        .planes
                        .iter()
                        .map(|p| (p.index as f64, p.wavelength))
                        .collect(),
                    markers: true,
                }],
                log_y: true,
                h_lines: vec![RefLine {
                    at: r.context as f64,
                    label: format!("context {}", r.context),
                }],
                // The first plane that turns less than once within the context.
                marks: r
                    .planes
                    .iter()
                    .find(|p| p.wavelength > r.context as f64)
                    .map(|p| crate::chart::Mark {
                        x: p.index as f64,
                        y: p.wavelength,
                        label: format!("plane {}: first < 1 turn", p.index),
                    })
                    .into_iter()
                    .collect(),
                ..Default::default()
            }),
        };
        let decay = Chart {
            name: "decay".into(),
            title: "Decay criterion B(m)/planes = mean cos(m·ω_k) (Men et al. 2024)".into(),
            kind: ChartKind::Line(LineChart {
                x_label: "relative distance m".into(),
                y_label: "B(m) / planes".into(),
                series: vec![Series {
                    name: "B(m)/planes".into(),
                    points: r
                        .decay_curve
                        .iter()
                        .map(|&(m, b)| (m.max(1) as f64, b))
                        .collect(),
                    markers: false,
                }],
                log_x: true,
                h_lines: vec![RefLine {
                    at: 0.0,
                    label: "0".into(),
                }],
                marks: vec![crate::chart::Mark {
                    x: r.decay_min_mean_at.max(1) as f64,
                    y: r.decay_min_mean,
                    label: format!("minimum at m = {}", r.decay_min_mean_at),
                }],
                ..Default::default()
            }),
        };
        let precision = Chart {
            name: "precision".into(),
            title: "Translation-invariance error vs position per dtype (HF pipeline)".into(),
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
    let mut src = req.source.load(ctx, None)?;
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
    };
    let progress = |f: f64| (ctx.progress)("minimum-base search", f);
    let cancelled = || ctx.check_cancelled("rope audit").is_err();
    let audit = au::audit(
        &src.freqs,
        src.omegas.as_deref(),
        &opts,
        &Watch {
            progress: &progress,
            cancelled: &cancelled,
        },
    )?;
    Ok(AuditReport {
        verdict: prose::audit_verdict(&audit.findings),
        audit,
        config_notes: src.notes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_f32_fields_in_f32_form_and_the_verdict_comes_from_the_findings() {
        // inv_freq_f32 of plane 1 for base 10000, d = 8 is the f32 nearest 0.1: serialised as
        // an f32 it prints as 0.1, not as its f64 widening 0.10000000149011612.
        let req = AuditRequest {
            source: FrequencySource {
                base: Some(10000.0),
                dim: Some(Count(8)),
                ..Default::default()
            },
            context: Some(Count(64)),
            skip_min_base: true,
            ..Default::default()
        };
        let r = run(&req, &Context::default()).unwrap();
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
        let req = AuditRequest {
            source: FrequencySource {
                omega: Some("0.3".parse().unwrap()),
                ..Default::default()
            },
            context: Some(Count(1)),
            skip_min_base: true,
            ..Default::default()
        };
        let v = run(&req, &Context::default()).unwrap().verdict;
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
            source: FrequencySource {
                base: Some(10000.0),
                dim: Some(Count(8)),
                ..Default::default()
            },
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
}
