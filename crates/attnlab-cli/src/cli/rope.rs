//! `attnlab rope …`: the subcommand enum. `score` lives here; `identity`, `period`, `resolve`
//! and `audit` live in [`super::rope_spectrum`].

use clap::Subcommand;

use super::legacy_plot::{line_chart, LineChart, Series};
use attnlab_core::position::frequencies::{
    parse_omega_list, Omega, RotaryFrequencies,
};
use attnlab_core::position::rotary::{aligned_scores, separations_like_zero};
use attnlab_core::spectrum::resolve::DEFAULT_TOL;
use attnlab_core::present::number::short as short_number;
use serde_json::json;

use super::output::{num, print_json, table};
use super::rope_spectrum;
use super::Outcome;

#[derive(Debug, Subcommand)]
pub enum RopeCommand {
    /// The relative-position identity (R(iω)q)ᵀ(R(jω)k) = qᵀR((j−i)ω)k, and translation invariance per dtype.
    Identity(rope_spectrum::IdentityArgs),
    /// Positional contribution to a score vs separation: cos(sω), averaged over several frequencies.
    Score(ScoreArgs),
    /// The first separation at which a single frequency repeats (exact for rational multiples of π).
    Period(rope_spectrum::PeriodArgs),
    /// Check that a frequency set distinguishes every separation 1..L−1 from 0 (exit 1 if not).
    Resolve(rope_spectrum::ResolveArgs),
    /// Audit a model's RoPE configuration: wavelengths, resolution, decay, precision (a report:
    /// exit 0 whatever it finds).
    Audit(rope_spectrum::AuditArgs),
}

/// Options of `attnlab rope score`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("freqs").required(true).args(["omega", "base"])))]
pub struct ScoreArgs {
    /// Frequencies, comma-separated expressions: pi/2,pi/3 (exact), 0.25, 2*pi/7.
    #[arg(long, allow_hyphen_values = true)]
    omega: Option<String>,
    /// Base θ of ω_k = θ^(−2k/D), k = 0..D/2 (with --dim).
    #[arg(long, requires = "dim", conflicts_with = "omega")]
    base: Option<f64>,
    /// Rotary dimension D (even, ≤ 32768) for --base.
    #[arg(long, requires = "base", conflicts_with = "omega")]
    dim: Option<usize>,
    /// Largest separation s shown (1..=1000000, and separations × frequencies ≤ 2^24).
    #[arg(long, default_value_t = 8)]
    max_sep: u64,
    /// Phase tolerance (radians): s "scores like 0" when every plane's phase s·ω is within tol
    /// of a full turn — the same criterion as `rope resolve`.
    #[arg(long, default_value_t = DEFAULT_TOL)]
    tol: f64,
    /// Write an SVG line chart of score vs separation to FILE.
    #[arg(long, value_name = "FILE")]
    plot: Option<std::path::PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// Per-frequency columns are shown in the table up to this many frequencies (JSON has all).
const MAX_TABLE_COLUMNS: usize = 8;

fn score(a: ScoreArgs) -> anyhow::Result<Outcome> {
    let omegas: Vec<Omega> = match (&a.omega, a.base, a.dim) {
        (Some(text), _, _) => parse_omega_list(text)?,
        (None, Some(base), Some(dim)) => {
            let f = RotaryFrequencies::from_base(base, dim)?;
            f.inv_freq
                .iter()
                .map(|&w| Omega::float(w))
                .collect::<attnlab_core::Result<_>>()?
        }
        _ => anyhow::bail!("give --omega LIST or --base B --dim D"),
    };
    let labels: Vec<String> = match (a.base, a.dim) {
        (Some(base), Some(dim)) if a.omega.is_none() => (0..omegas.len())
            .map(|k| format!("{}^(-{}/{dim})", short_number(base), 2 * k))
            .collect(),
        _ => omegas.iter().map(|o| o.label()).collect(),
    };
    let rows = aligned_scores(&omegas, a.max_sep)?;
    let equal = separations_like_zero(&omegas, a.max_sep, a.tol)?;

    if let Some(path) = &a.plot {
        let mut series = Vec::new();
        if omegas.len() <= 5 {
            for (k, label) in labels.iter().enumerate() {
                series.push(Series {
                    name: format!("cos(s·{label})"),
                    points: rows
                        .iter()
                        .map(|r| (r.separation as f64, r.scores[k]))
                        .collect(),
                    markers: rows.len() <= 64,
                });
            }
        }
        if omegas.len() > 1 {
            series.push(Series {
                name: format!("mean over {} frequencies", omegas.len()),
                points: rows.iter().map(|r| (r.separation as f64, r.mean)).collect(),
                markers: rows.len() <= 64,
            });
        }
        let chart = LineChart {
            title: "RoPE positional score vs separation (aligned unit vectors)".into(),
            x_label: "separation s = j − i".into(),
            y_label: "score".into(),
            series,
            ..Default::default()
        };
        line_chart(path, &chart)?;
    }

    if a.json {
        let out = json!({
            "omegas": omegas.iter().zip(&labels).map(|(o, l)| json!({
                "label": l,
                "value": o.value(),
                "exact": matches!(o, Omega::PiRational { .. }),
            })).collect::<Vec<_>>(),
            "separations": rows,
            "equal_to_zero_separation": equal,
            "tolerance": a.tol,
            "criterion": "every plane's phase s*omega within tolerance (radians) of 0 mod 2*pi, as in rope resolve; exact integer arithmetic for exact frequencies",
            "plot": a.plot.as_ref().map(|p| p.display().to_string()),
        });
        print_json(&out)?;
        return Ok(Outcome::Holds);
    }

    let per_column = omegas.len() <= MAX_TABLE_COLUMNS;
    let mut header: Vec<String> = vec!["s".into()];
    if per_column {
        header.extend(labels.iter().map(|l| format!("cos(s·{l})")));
    }
    if omegas.len() > 1 {
        header.push("mean".into());
    }
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = table(&header_refs);
    for r in &rows {
        let mut cells = vec![r.separation.to_string()];
        if per_column {
            cells.extend(r.scores.iter().map(|&v| num(v)));
        }
        if omegas.len() > 1 {
            cells.push(num(r.mean));
        }
        t.add_row(cells);
    }
    println!(
        "Positional score of aligned unit vectors: cos(s·ω) per frequency{}.",
        if omegas.len() > 1 {
            ", and their mean"
        } else {
            ""
        }
    );
    println!("{t}");
    if !per_column {
        println!(
            "({} frequencies: per-frequency columns omitted; --json lists them all.)",
            omegas.len()
        );
    }
    if omegas.iter().any(|o| matches!(o, Omega::PiRational { .. })) {
        println!("Exact frequencies (rational multiples of π) use exactly reduced phases: quarter turns give exactly 1, 0, −1.");
    }
    match equal.as_slice() {
        [] => println!(
            "No separation in 1..={} scores like s = 0 (no separation has every phase within {:e} rad of a full turn).",
            a.max_sep, a.tol
        ),
        s => println!(
            "Separations scoring like s = 0 (every phase within {:e} rad of a full turn): {}.",
            a.tol,
            s.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
    if let Some(p) = &a.plot {
        println!("Plot written to {}", p.display());
    }
    Ok(Outcome::Holds)
}

pub fn run(cmd: RopeCommand) -> anyhow::Result<Outcome> {
    match cmd {
        RopeCommand::Identity(a) => rope_spectrum::identity(a),
        RopeCommand::Score(a) => score(a),
        RopeCommand::Period(a) => rope_spectrum::period(a),
        RopeCommand::Resolve(a) => rope_spectrum::resolve(a),
        RopeCommand::Audit(a) => rope_spectrum::audit(a),
    }
}
