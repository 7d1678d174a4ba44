//! `attnlab rope resolve`: a check that a frequency set distinguishes every separation 1..L−1
//! from 0 (exit 1 if not).

use serde::{Deserialize, Serialize};

use super::{check_tol, FrequencySource};
use crate::api::value::Count;
use crate::api::{Context, Outcome};
use crate::chart::Chart;
use crate::limits::{self, Budget};
use crate::spectrum::resolve::{self as re, PairwiseDistinct, Resolution, DEFAULT_TOL};
use crate::Result;

/// The request of `attnlab rope resolve`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResolveRequest {
    /// The frequency set.
    #[serde(flatten)]
    pub source: FrequencySource,
    /// Context length L: separations 1..L−1 are examined (L ≤ 2^30, and L × planes ≤ 2^34;
    /// default: the config's max_position_embeddings).
    pub context: Option<Count>,
    /// Alias tolerance (radians): s aliases 0 when every plane is within tol of a full turn.
    pub tol: f64,
}

impl Default for ResolveRequest {
    fn default() -> Self {
        ResolveRequest {
            source: FrequencySource::default(),
            context: None,
            tol: DEFAULT_TOL,
        }
    }
}

/// The report of `attnlab rope resolve`.
#[derive(Debug, Clone, Serialize)]
pub struct ResolveReport {
    /// The resolution.
    #[serde(flatten)]
    pub resolution: Resolution,
    /// Where the frequencies came from.
    pub source: String,
    /// The frequencies (radians per position).
    pub frequencies: Vec<f64>,
    /// The rotating planes examined (planes with ω = 0 are left out).
    pub planes: usize,
    /// The stronger property an unmasked layer needs: separations −(L−1)..(L−1) pairwise
    /// distinct (null past L = 2^29). The exit code follows `resolves` (the seed's criterion).
    pub pairwise: Option<PairwiseDistinct>,
    /// Notes of the config reader (empty for other sources).
    pub config_notes: Vec<String>,
}

impl ResolveReport {
    /// Holds (exit 0) when every separation is distinguished from 0, fails (exit 1) otherwise.
    pub fn outcome(&self) -> Outcome {
        Outcome::from_bool(self.resolution.resolves)
    }

    /// No charts.
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// What the resolution check needs: at most `L·P` fixed-point phase updates (the scan; exact
/// sets stop at their common period), two operations each (a wrapping addition and a compare).
/// The scan's own cap,
/// [`re::MAX_WORK`] = 2³⁴ updates, is below the default work limit, so its message (the
/// largest context for this many planes) is the one a user sees.
pub fn budget_for(planes: u64, context: u64) -> Budget {
    Budget::new(
        limits::product(&[planes, 64]),
        // The scan refuses more than its own cap itself (naming the largest context for
        // this many planes), so no run does more.
        limits::product(&[context, planes])
            .min(re::MAX_WORK)
            .saturating_mul(2),
    )
}

/// The budget of a request, from what it declares (a config's context is known only once
/// it is read).
pub fn budget(req: &ResolveRequest) -> Budget {
    budget_for(
        req.source.declared_planes(),
        req.context.map_or(0, |c| c.get()),
    )
}

/// Runs the resolution check.
///
/// # Errors
/// A bad frequency source or context; `tol` not in (0, π]; a scan over the work limit.
pub fn run(req: &ResolveRequest, ctx: &Context) -> Result<ResolveReport> {
    let mut src = req.source.load(ctx, None)?;
    let l = src.at_context(req.context, re::MAX_CONTEXT)?;
    let planes = limits::u(src.freqs.inv_freq.len());
    budget_for(planes, l).check(
        super::describe("rope resolve", planes, &format!(" and a context of {l}")),
        &ctx.limits,
    )?;
    let tol = check_tol(req.tol)?;
    let set = src.rotating()?;
    ctx.check_cancelled("rope resolve")?;
    let resolution = re::resolve(&set, l, tol)?;
    let pairwise = if 2 * l - 1 <= re::MAX_CONTEXT {
        ctx.check_cancelled("rope resolve")?;
        Some(re::pairwise(&set, l, tol)?)
    } else {
        None
    };
    Ok(ResolveReport {
        resolution,
        pairwise,
        source: src.freqs.source.clone(),
        frequencies: src.freqs.inv_freq.clone(),
        planes: set.len(),
        config_notes: src.notes(),
    })
}
