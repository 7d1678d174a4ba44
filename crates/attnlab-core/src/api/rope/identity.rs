//! `attnlab rope identity`: the relative-position identity (R(iω)q)ᵀ(R(jω)k) = qᵀR((j−i)ω)k on
//! seeded random cases, and translation invariance per dtype pipeline.

use serde::{Deserialize, Serialize};

use super::FrequencySource;
use crate::api::value::Count;
use crate::api::{Context, Outcome};
use crate::chart::{Chart, ChartKind, LineChart, Series};
use crate::limits::{self, Budget};
use crate::present::prose::rope as prose;
use crate::spectrum::identity::{self as id, Pipeline, ShiftRow};
use crate::Result;

/// The request of `attnlab rope identity` (frequencies default to base 10000, dim 64).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IdentityRequest {
    /// The frequency set.
    #[serde(flatten)]
    pub source: FrequencySource,
    /// Seed of the ChaCha8 generator for q, k and positions.
    pub seed: u64,
    /// Number of random (q, k, i, j) trials (1..=1000000).
    pub trials: Count,
    /// Largest shift t of the translation-invariance table (log grid, 4 per decade; ≤ 2^40).
    pub max_shift: Count,
}

impl Default for IdentityRequest {
    fn default() -> Self {
        IdentityRequest {
            source: FrequencySource::default(),
            seed: 0,
            trials: Count(200),
            max_shift: Count(1_000_000_000),
        }
    }
}

/// The report of `attnlab rope identity`.
#[derive(Debug, Clone, Serialize)]
pub struct IdentityReport {
    /// The check and the invariance table.
    #[serde(flatten)]
    pub check: id::IdentityReport,
    /// Where the frequencies came from.
    pub source: String,
    /// Notes of the config reader (empty for other sources).
    pub config_notes: Vec<String>,
    /// Number of planes.
    pub planes: usize,
    /// How the random cases are drawn.
    pub generator: String,
    /// The tolerance of each trial.
    pub tolerance_rule: String,
    /// What each pipeline of the invariance table computes.
    pub pipelines: String,
}

impl IdentityReport {
    /// Holds (exit 0) when every trial is within its tolerance.
    pub fn outcome(&self) -> Outcome {
        Outcome::from_bool(self.check.holds)
    }

    /// The invariance error vs shift, one curve per pipeline (log-log).
    pub fn charts(&self) -> Vec<Chart> {
        vec![Chart {
            name: "invariance".into(),
            title: format!(
                "Translation invariance: |S(i+t, j+t) − S(i, j)|, {}",
                self.source
            ),
            kind: ChartKind::Line(LineChart {
                x_label: "shift t".into(),
                y_label: "max abs error over trials".into(),
                series: invariance_series(&self.check.invariance),
                log_x: true,
                log_y: true,
                ..Default::default()
            }),
        }]
    }
}

/// One curve per pipeline (f64 exact, f64, f32, bf16, f16): error vs shift.
pub(crate) fn invariance_series(rows: &[ShiftRow]) -> Vec<Series> {
    let pipelines: Vec<Pipeline> = rows
        .first()
        .map(|r| r.errors.keys().copied().collect())
        .unwrap_or_else(|| Pipeline::ALL.to_vec());
    pipelines
        .iter()
        .map(|&p| Series {
            name: crate::choice::Choice::name(p).to_string(),
            // Infinite errors (overflowing positions) and zeros have no place on a log axis.
            points: rows
                .iter()
                .filter_map(|row| row.errors.get(&p).map(|&e| (row.shift as f64, e)))
                .filter(|&(_, e)| e.is_finite() && e > 0.0)
                .collect(),
            markers: true,
        })
        .collect()
}

/// What the identity check needs for P planes: each trial draws 4·P normals and evaluates the
/// absolute and relative scores (3·P reduced phases, each a double-double reduction and a
/// `sin_cos`); the invariance table evaluates up to 20 cases at each shift of its log grid (4
/// per decade) in 4 pipelines. Counted as 1000 operations per (trial, plane) and 400 per
/// (case, shift, pipeline, plane): measured, not derived — 40 000 trials × 4096 planes took
/// 239 s of release build on the 2-core reference machine under a load of 10, 3000 trials
/// 17 s (see `docs/LIMITS.md`).
pub fn budget_for(planes: u64, trials: u64, max_shift: u64) -> Budget {
    let shifts = 4 * u64::from(64 - max_shift.max(1).leading_zeros()) / 3 + 2;
    let ops = limits::product(&[trials, planes, 1000])
        .saturating_add(limits::product(&[20, shifts, 4, planes, 400]));
    Budget::new(limits::product(&[planes, 8, 8]), ops)
}

/// The budget of a request, from what it declares.
pub fn budget(req: &IdentityRequest) -> Budget {
    budget_for(
        req.source.declared_planes(),
        req.trials.get(),
        req.max_shift.get(),
    )
}

/// Runs the identity check.
///
/// # Errors
/// A bad frequency source; `trials` or `max_shift` out of range (see
/// [`id::identity_check`]).
pub fn run(req: &IdentityRequest, ctx: &Context) -> Result<IdentityReport> {
    let src = req.source.load(ctx, Some((10000.0, 64)))?;
    let planes = limits::u(src.freqs.inv_freq.len());
    id::check_options(
        usize::try_from(req.trials.get()).unwrap_or(usize::MAX),
        req.max_shift.get(),
    )?;
    budget_for(planes, req.trials.get(), req.max_shift.get()).check(
        super::describe(
            "rope identity",
            planes,
            &format!(" and {} trials", req.trials),
        ),
        &ctx.limits,
    )?;
    let trials = usize::try_from(req.trials.get()).unwrap_or(usize::MAX);
    ctx.check_cancelled("rope identity")?;
    let check = id::identity_check(&src.freqs, req.seed, trials, req.max_shift.get())?;
    Ok(IdentityReport {
        source: src.freqs.source.clone(),
        config_notes: src.notes(),
        planes: src.freqs.inv_freq.len(),
        generator: prose::identity_generator().into(),
        tolerance_rule: prose::identity_tolerance_rule(id::IDENTITY_TOL_EPS),
        pipelines: prose::identity_pipelines().into(),
        check,
    })
}
