//! `attnlab rope period`: the first separation at which one frequency repeats (exact for
//! rational multiples of π) and its near-repeats.

use serde::{Deserialize, Serialize};

use super::check_tol;
use crate::api::value::{Count, List};
use crate::api::{Context, Outcome};
use crate::chart::Chart;
use crate::limits::Budget;
use crate::position::frequencies::parse_omega_list;
use crate::present::text::shorten;
use crate::spectrum::period;
use crate::{Error, Result};

/// The request of `attnlab rope period`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PeriodRequest {
    /// The frequency (one expression: pi/2, -pi/2, 2*pi/7, 0.25; |ω| ≤ 1e4).
    pub omega: List,
    /// Phase tolerance (radians) for the first near-repeat search.
    pub tol: f64,
    /// Search bound of the first separation within `tol` (≤ 2^40).
    pub max_sep: Count,
}

impl Default for PeriodRequest {
    fn default() -> Self {
        PeriodRequest {
            omega: List::default(),
            tol: 1e-3,
            max_sep: Count(10_000_000),
        }
    }
}

/// ω = 2π·a/b in lowest terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TurnsFraction {
    /// Numerator (turns per `b` positions).
    pub a: i64,
    /// Denominator: the exact period.
    pub b: i64,
}

/// The report of `attnlab rope period`.
#[derive(Debug, Clone, Serialize)]
pub struct PeriodReport {
    /// The period analysis.
    #[serde(flatten)]
    pub period: period::PeriodReport,
    /// ω as a fraction of a turn, for exact frequencies.
    pub turns_fraction: Option<TurnsFraction>,
}

impl PeriodReport {
    /// Always holds (an analysis, not a check).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// No charts (the table of near-repeats says it all).
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// What the request costs: nothing to bound (a continued-fraction search, O(levels) for any
/// `max_sep`, allocating only the convergents it lists).
pub fn budget(_: &PeriodRequest) -> Budget {
    Budget::default()
}

/// Runs the period analysis.
///
/// # Errors
/// Not exactly one valid frequency; `tol` not in (0, π]; `max_sep` not in 1..=2⁴⁰.
pub fn run(req: &PeriodRequest, ctx: &Context) -> Result<PeriodReport> {
    let list = parse_omega_list(&req.omega.joined())?;
    if list.len() != 1 {
        return Err(Error::invalid(
            "omega",
            shorten(&req.omega.joined()),
            "a single frequency (use `rope resolve` for sets)",
        ));
    }
    let tol = check_tol(req.tol)?;
    ctx.check_cancelled("rope period")?;
    let report = period::period(list[0], tol, req.max_sep.get())?;
    Ok(PeriodReport {
        period: report,
        turns_fraction: list[0]
            .turns_fraction()
            .map(|(a, b)| TurnsFraction { a, b }),
    })
}
