//! `attnlab claims`: every claim of both course documents, checked now.

use serde::{Deserialize, Serialize};

use super::{Context, Outcome};
use crate::chart::Chart;
use crate::claims::{self, Claim, Fault};
use crate::limits::Budget;
use crate::present::prose::course::{claim_details, claim_status};
use crate::Result;

/// The request of `attnlab claims`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClaimsRequest {
    /// Swap in a deliberately wrong implementation of one ingredient, to see the ledger fail
    /// (for testing the ledger itself; hidden in the CLI's help).
    pub inject_fault: Fault,
}

/// The report of `attnlab claims`: the ledger, one row per claim of the two seed tables. It
/// serialises as the JSON array of its claims.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct ClaimsReport {
    /// The rows, seed 002's key claims first, then seed 000's reference table.
    pub claims: Vec<Claim>,
}

impl ClaimsReport {
    /// Holds (exit 0) when every claim holds, else fails (exit 1).
    pub fn outcome(&self) -> Outcome {
        Outcome::from_bool(claims::all_hold(&self.claims))
    }

    /// No charts: the ledger is a table.
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// What the request costs: nothing to bound (the ledger is a fixed list of small, fixed computations).
pub fn budget(_: &ClaimsRequest) -> Budget {
    Budget::default()
}

/// Checks every claim.
///
/// # Errors
/// Cancellation (the built-in inputs never fail).
pub fn run(req: &ClaimsRequest, ctx: &Context) -> Result<ClaimsReport> {
    ctx.check_cancelled("claims")?;
    Ok(ClaimsReport {
        claims: worded(claims::ledger(req.inject_fault)?),
    })
}

/// The rows with their sentences: the measured status and the evidence in words, written
/// from each row's measurement (the ledger returns them empty).
pub fn worded(mut claims: Vec<Claim>) -> Vec<Claim> {
    for c in &mut claims {
        c.measured_status = claim_status(c);
        c.evidence.details = claim_details(c);
    }
    claims
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{self, Request};

    #[test]
    fn the_report_serialises_as_the_array_of_its_claims() {
        let r = run(&ClaimsRequest::default(), &Context::default()).unwrap();
        assert!(r.outcome().holds());
        let v = serde_json::to_value(&r).unwrap();
        let rows = v.as_array().expect("a JSON array");
        assert_eq!(rows.len(), r.claims.len());
        for (row, c) in rows.iter().zip(&r.claims) {
            assert_eq!(row["id"], c.id.name());
            assert_eq!(row["evidence"]["details"], c.evidence.details.as_str());
        }
    }

    #[test]
    fn a_fault_named_in_json_fails_the_ledger() {
        let req =
            Request::from_json("claims", serde_json::json!({"inject_fault": "period"})).unwrap();
        let report = api::run(&req).unwrap();
        assert!(!report.outcome().holds());
        assert!(Request::from_json("claims", serde_json::json!({"inject_fault": "x"})).is_err());
    }
}
