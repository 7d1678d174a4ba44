//! `attnlab rope score`: the positional part of a rotary score for aligned unit vectors,
//! cos(s·ω) per frequency and their mean, per separation s.

use serde::{Deserialize, Serialize};

use super::{check_tol, FrequencySource};
use crate::api::value::Count;
use crate::api::{Context, Outcome};
use crate::chart::{Chart, ChartKind, LineChart, Series};
use crate::limits::{self, Budget};
use crate::number::short;
use crate::position::frequencies::Omega;
use crate::position::rotary::{aligned_scores, separations_like_zero, SeparationScore};
use crate::present::prose::rope as prose;
use crate::spectrum::resolve::DEFAULT_TOL;
use crate::Result;

/// The request of `attnlab rope score`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScoreRequest {
    /// The frequency set (the CLI takes `omega` or `base` + `dim`).
    #[serde(flatten)]
    pub source: FrequencySource,
    /// Largest separation s shown (1..=1000000, and separations × frequencies ≤ 2^24).
    pub max_sep: Count,
    /// Phase tolerance (radians): s "scores like 0" when every plane's phase s·ω is within tol
    /// of a full turn — the same criterion as `rope resolve`.
    pub tol: f64,
}

impl Default for ScoreRequest {
    fn default() -> Self {
        ScoreRequest {
            source: FrequencySource::default(),
            max_sep: Count(8),
            tol: DEFAULT_TOL,
        }
    }
}

/// One frequency of the score table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreOmega {
    /// Display form (`pi/2`, `10000^(-2/8)`, `0.25`).
    pub label: String,
    /// Radians per position.
    pub value: f64,
    /// Whether it is an exact rational multiple of π (exactly reduced phases).
    pub exact: bool,
}

/// The report of `attnlab rope score`.
#[derive(Debug, Clone, Serialize)]
pub struct ScoreReport {
    /// The frequencies.
    pub omegas: Vec<ScoreOmega>,
    /// cos(s·ω_k) and their mean for s = 0..=max_sep.
    pub separations: Vec<SeparationScore>,
    /// The separations in 1..=max_sep that score like s = 0.
    pub equal_to_zero_separation: Vec<u64>,
    /// The phase tolerance of that criterion (radians).
    pub tolerance: f64,
    /// The criterion in words.
    pub criterion: String,
}

/// Curves drawn per frequency up to this many frequencies (the mean is always drawn).
const MAX_CURVES: usize = 5;

impl ScoreReport {
    /// Always holds (a table, not a check).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// Score vs separation: one curve per frequency (up to five) and the mean.
    pub fn charts(&self) -> Vec<Chart> {
        let markers = self.separations.len() <= 64;
        let mut series = Vec::new();
        if self.omegas.len() <= MAX_CURVES {
            for (k, o) in self.omegas.iter().enumerate() {
                series.push(Series {
                    name: format!("cos(s·{})", o.label),
                    points: self
                        .separations
                        .iter()
                        .map(|r| (r.separation as f64, r.scores[k]))
                        .collect(),
                    markers,
                });
            }
        }
        if self.omegas.len() > 1 {
            series.push(Series {
                name: format!("mean over {} frequencies", self.omegas.len()),
                points: self
                    .separations
                    .iter()
                    .map(|r| (r.separation as f64, r.mean))
                    .collect(),
                markers,
            });
        }
        vec![Chart {
            name: "score".into(),
            title: "RoPE positional score vs separation (aligned unit vectors)".into(),
            kind: ChartKind::Line(LineChart {
                x_label: "separation s = j − i".into(),
                y_label: "score".into(),
                series,
                h_lines: vec![crate::chart::RefLine {
                    at: 1.0,
                    label: "score at s = 0".into(),
                }],
                // The separations that score like s = 0, on the mean curve (or the only one).
                marks: self
                    .equal_to_zero_separation
                    .iter()
                    .take(8)
                    .filter_map(|&s| {
                        self.separations
                            .iter()
                            .find(|r| r.separation == s)
                            .map(|r| crate::chart::Mark {
                                x: s as f64,
                                y: if self.omegas.len() > 1 {
                                    r.mean
                                } else {
                                    r.scores[0]
                                },
                                label: format!("s = {s} like 0"),
                            })
                    })
                    .collect(),
                ..Default::default()
            }),
        }]
    }
}

/// What the score table needs: `(max_sep + 1)·P` cosines, kept as f64 and rendered (about 24
/// bytes each), twice over (the table and the like-zero criterion).
pub fn budget_for(planes: u64, max_sep: u64) -> Budget {
    let cells = limits::product(&[max_sep.saturating_add(1), planes]);
    Budget::new(
        cells.saturating_mul(24),
        limits::product(&[2, cells, limits::TRANSCENDENTAL + 2]),
    )
}

/// The budget of a request, from what it declares.
pub fn budget(req: &ScoreRequest) -> Budget {
    budget_for(req.source.declared_planes(), req.max_sep.get())
}

/// Runs the score table.
///
/// # Errors
/// A bad frequency source; `max_sep` or `tol` out of range (see [`aligned_scores`]).
pub fn run(req: &ScoreRequest, ctx: &Context) -> Result<ScoreReport> {
    let src = req.source.load(ctx, None)?;
    let planes = limits::u(src.freqs.inv_freq.len());
    budget_for(planes, req.max_sep.get()).check(
        super::describe(
            "rope score",
            planes,
            &format!(" and --max-sep {}", req.max_sep),
        ),
        &ctx.limits,
    )?;
    let omegas: Vec<Omega> = match &src.omegas {
        Some(o) => o.clone(),
        None => src
            .freqs
            .inv_freq
            .iter()
            .map(|&w| Omega::float(w))
            .collect::<Result<_>>()?,
    };
    let labels: Vec<String> = match (req.source.base, req.source.dim) {
        (Some(base), Some(dim)) => (0..omegas.len())
            .map(|k| format!("{}^(-{}/{dim})", short(base), 2 * k))
            .collect(),
        (Some(_) | None, Some(_) | None) => omegas.iter().map(|o| o.label()).collect(),
    };
    let separations = aligned_scores(&omegas, req.max_sep.get())?;
    let tol = check_tol(req.tol)?;
    let equal = separations_like_zero(&omegas, req.max_sep.get(), tol)?;
    Ok(ScoreReport {
        omegas: omegas
            .iter()
            .zip(labels)
            .map(|(o, label)| ScoreOmega {
                label,
                value: o.value(),
                exact: matches!(o, Omega::PiRational { .. }),
            })
            .collect(),
        separations,
        equal_to_zero_separation: equal,
        tolerance: tol,
        criterion: prose::score_criterion().into(),
    })
}
