//! `attnlab lab`: every product of the practical session (seed 002) and seed 000's exercises
//! and reference table, computed with defaults that need no input.

use serde::{Deserialize, Serialize};

use super::value::{BlocksSource, Count, List};
use super::Context;
use crate::lab::{self, LabConfig};
use crate::limits::{self, Budget};
use crate::Result;

pub use crate::lab::LabReport;

/// The request of `attnlab lab`.
///
/// ```
/// use attnlab_core::api::{self, lab::LabRequest, Request};
/// let report = api::run(&Request::Lab(LabRequest::default())).unwrap();
/// assert!(report.outcome().holds());
/// assert_eq!(report.charts().len(), 5);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LabRequest {
    /// The single frequency of products (b) and (c), e.g. `pi/2`.
    pub omega: String,
    /// The multi-frequency set of products (b) and (d), e.g. `pi/2,pi/3`.
    pub omegas: List,
    /// The context length L of product (d): separations 1..L−1 must differ from 0.
    pub context: Count,
    /// The provided blocks held fixed (`Wq`, `Wk`, `Wv`, `X`; the others are the course
    /// program's draws).
    pub blocks: Option<BlocksSource>,
}

impl Default for LabRequest {
    fn default() -> Self {
        let cfg = LabConfig::default();
        LabRequest {
            omega: cfg.omega,
            omegas: List::parse(&cfg.omegas),
            context: Count(cfg.context),
            blocks: None,
        }
    }
}

/// What the lab needs for m frequencies and a context of L: the resolution scan of the set
/// (at most `L·m` phases, each a reduction and a comparison) and the margin curve (`4096·m`
/// phases); everything else is a fixed, small computation.
pub fn budget(req: &LabRequest) -> Budget {
    let m = limits::u(req.omegas.0.len()).max(1);
    // A fixed-point phase update and its comparison (the scan of `spectrum::resolve`).
    let phase = 1;
    let ops = limits::product(&[req.context.get(), m, phase]).saturating_add(limits::product(&[
        crate::lab::MAX_MARGIN_CURVE,
        m,
        phase,
    ]));
    Budget::new(limits::product(&[m, 64]).saturating_add(1 << 20), ops)
}

/// Runs the lab.
///
/// # Errors
/// A frequency that does not parse or is out of range, a context of 0 or over the resolve cap,
/// cancellation.
pub fn run(req: &LabRequest, ctx: &Context) -> Result<LabReport> {
    ctx.check_cancelled("lab")?;
    budget(req).check(
        format!(
            "lab with {} frequencies and --context {}",
            req.omegas.0.len(),
            req.context
        ),
        &ctx.limits,
    )?;
    (ctx.progress)("lab", 0.0);
    let blocks = match &req.blocks {
        Some(b) => Some(b.load_in(ctx)?),
        None => None,
    };
    let report = lab::run(&LabConfig {
        omega: req.omega.clone(),
        omegas: req.omegas.joined(),
        context: req.context.get(),
        blocks,
        ..LabConfig::default()
    })?;
    (ctx.progress)("lab", 1.0);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{self, Request};
    use crate::chart::{ChartKind, ColourScale};

    #[test]
    fn json_requests_take_every_spelling_and_refuse_unknown_fields() {
        let r = Request::from_json(
            "lab",
            serde_json::json!({"omegas": ["pi/2"], "context": "2^3"}),
        )
        .unwrap();
        let Request::Lab(l) = r else {
            panic!("not a lab request")
        };
        assert_eq!((l.omegas.joined().as_str(), l.context.get()), ("pi/2", 8));
        assert_eq!(l.omega, LabRequest::default().omega);
        // A CLI output option is not a request field.
        assert!(Request::from_json("lab", serde_json::json!({"plots": "out"})).is_err());
        let zero = LabRequest {
            context: Count(0),
            ..LabRequest::default()
        };
        let e = api::run(&Request::Lab(zero)).unwrap_err();
        assert!(e.to_string().contains("--context"), "{e}");
    }

    #[test]
    fn the_charts_are_derived_from_the_report() {
        let r = run(&LabRequest::default(), &Context::default()).unwrap();
        let charts = r.charts();
        let names: Vec<&str> = charts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "scores_vs_separation",
                "resolution_margin",
                "permuted_difference",
                "attention_weights",
                "symmetry_breakers"
            ]
        );
        let ChartKind::Line(scores) = &charts[0].kind else {
            panic!("scores is a line chart")
        };
        for (row, (&(s, single), &(_, mean))) in r
            .b_scores
            .rows
            .iter()
            .zip(scores.series[0].points.iter().zip(&scores.series[1].points))
        {
            assert_eq!(
                (s, single, mean),
                (row.separation as f64, row.single, row.set_mean)
            );
        }
        // The difference of a check that holds is coloured relative to its tolerance, and the
        // rows the permutation moved are highlighted ([2, 0, 3, 1] moves every row).
        let ChartKind::Heatmap(diff) = &charts[2].kind else {
            panic!("the difference is a heat map")
        };
        let rep = &r.a_permutation.check.report;
        assert!(rep.holds);
        assert_eq!(diff.scale, ColourScale::Diverging { max: rep.tolerance });
        assert!(diff.scale_note.contains("tolerance"));
        assert_eq!(diff.highlight_rows, vec![0, 1, 2, 3]);
        assert_eq!(diff.values.len(), r.a_permutation.difference.nrows());
        // The symmetry breakers are a categorical comparison: one bar per exercise.
        let ChartKind::Bar(bars) = &charts[4].kind else {
            panic!("the exercises are a bar chart")
        };
        assert_eq!(bars.categories.len(), r.exercises.len());
        let margins: Vec<f64> = r.exercises.iter().map(|e| e.margin).collect();
        assert_eq!(bars.groups[0].values, margins);
    }
}
