//! `attnlab lab`: every product of the practical session (seed 002) and seed 000's exercises
//! and reference table, computed with defaults that need no input.

use serde::{Deserialize, Serialize};

use ndarray::Array2;

use super::value::{BlocksSource, Count, List};
use super::{Context, Outcome};
use crate::chart::{
    BarChart, Chart, ChartKind, ColourScale, Heatmap, LineChart, RefLine, Series, Series1,
};
use crate::lab::{self, LabConfig};
use crate::limits::{self, Budget};
use crate::present::prose::course as prose;
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
    Ok(worded(report))
}

/// The report with its sentences, written from its typed values: the exercises' names, the
/// statement of product (d), each fact's statement and evidence, the reference table's status
/// and evidence.
fn worded(mut r: LabReport) -> LabReport {
    for e in &mut r.exercises {
        e.name = prose::exercise_name(e.id);
    }
    let d = &mut r.d_resolution;
    d.statement = prose::resolution_statement(&r.setup.omegas, &d.result);
    for f in &mut r.facts {
        f.statement = prose::fact_statement(&f.measured);
        f.evidence = prose::fact_evidence(&f.measured);
    }
    r.reference_table = super::claims::worded(r.reference_table);
    r
}

impl LabReport {
    /// Holds (exit 0) when everything is confirmed, else fails (exit 1).
    pub fn outcome(&self) -> Outcome {
        Outcome::from_bool(self.all_confirmed)
    }

    /// The lab's five figures: scores vs separation (b), the resolution margin (d), the
    /// difference heat map and the weights of (a), and the exercises' error/tolerance per
    /// variant. File stems: `scores_vs_separation`, `resolution_margin`, `permuted_difference`,
    /// `attention_weights`, `symmetry_breakers`.
    pub fn charts(&self) -> Vec<Chart> {
        let b = &self.b_scores;
        let set = prose::frequency_set(&b.omegas);
        let scores = Chart {
            name: "scores_vs_separation".into(),
            title: "positional contribution to a score, aligned unit vectors".into(),
            kind: ChartKind::Line(LineChart {
                x_label: "separation s = j − i".into(),
                y_label: "cos(sω) (mean over planes)".into(),
                series: vec![
                    Series {
                        name: format!("ω = {}", b.omega),
                        points: b
                            .rows
                            .iter()
                            .map(|r| (r.separation as f64, r.single))
                            .collect(),
                        markers: true,
                    },
                    Series {
                        name: format!("mean over {set}"),
                        points: b
                            .rows
                            .iter()
                            .map(|r| (r.separation as f64, r.set_mean))
                            .collect(),
                        markers: true,
                    },
                ],
                h_lines: vec![RefLine {
                    at: 1.0,
                    label: "score at s = 0".into(),
                }],
                ..Default::default()
            }),
        };
        let d = &self.d_resolution;
        let context = d.result.context;
        let margin = Chart {
            name: "resolution_margin".into(),
            title: format!("largest per-plane phase distance from a full turn, {set}"),
            kind: ChartKind::Line(LineChart {
                x_label: "separation s".into(),
                y_label: "margin (rad); 0 = indistinguishable from s = 0".into(),
                series: vec![Series {
                    name: "margin(s)".into(),
                    points: d.margins.iter().map(|&(s, m)| (s as f64, m)).collect(),
                    markers: true,
                }],
                h_lines: vec![RefLine {
                    at: 0.0,
                    label: "alias".into(),
                }],
                v_lines: (context > 1)
                    .then(|| RefLine {
                        at: (context - 1) as f64,
                        label: format!("L − 1 = {}, the context's largest separation", context - 1),
                    })
                    .into_iter()
                    .collect(),
                ..Default::default()
            }),
        };
        let a = &self.a_permutation;
        let rep = &a.check.report;
        let max_abs = a.difference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let colour_max = if rep.holds { rep.tolerance } else { max_abs };
        let difference = Chart {
            name: "permuted_difference".into(),
            title: format!("Attn(ΠH) − Π Attn(H), {}", rep.dtype),
            kind: ChartKind::Heatmap(Heatmap {
                values: nested(&a.difference),
                row_labels: vec![],
                col_labels: vec![],
                x_label: "column".into(),
                y_label: "row".into(),
                scale: ColourScale::Diverging { max: colour_max },
                scale_note: prose::difference_scale_note(rep.holds, max_abs, rep.tolerance),
                highlight_rows: a
                    .perm
                    .iter()
                    .enumerate()
                    .filter(|&(i, &p)| i != p)
                    .map(|(i, _)| i)
                    .collect(),
            }),
        };
        let weights = Chart {
            name: "attention_weights".into(),
            title: "attention weights A, course program".into(),
            kind: ChartKind::Heatmap(Heatmap {
                values: nested(&a.weights),
                row_labels: vec![],
                col_labels: vec![],
                x_label: "key".into(),
                y_label: "query (each row sums to 1)".into(),
                scale: ColourScale::Sequential { min: 0.0, max: 1.0 },
                scale_note: "colour: 0 to 1".into(),
                highlight_rows: vec![],
            }),
        };
        let breakers = Chart {
            name: "symmetry_breakers".into(),
            title: "error / tolerance per variant, every permutation of the course input".into(),
            kind: ChartKind::Bar(BarChart {
                categories: self
                    .exercises
                    .iter()
                    .map(|e| prose::exercise_label(e.id).to_string())
                    .collect(),
                groups: vec![Series1 {
                    name: "margin = max error / tolerance".into(),
                    values: self.exercises.iter().map(|e| e.margin).collect(),
                }],
                y_label: "margin (log; < 1 holds)".into(),
                log_y: true,
                h_lines: vec![RefLine {
                    at: 1.0,
                    label: "tolerance".into(),
                }],
            }),
        };
        vec![scores, margin, difference, weights, breakers]
    }
}

fn nested(a: &Array2<f64>) -> Vec<Vec<f64>> {
    a.rows().into_iter().map(|r| r.to_vec()).collect()
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
