//! `attnlab lab`: every product of the practical session, with defaults that need no input.

use std::path::{Path, PathBuf};

use super::legacy_plot::{heatmap, line_chart, LineChart, Series};
use attnlab_core::lab::{self, LabConfig, LabReport};
use ndarray::Array2;

use super::output::{num, print_json, sci, table};
use super::Outcome;

/// Options of `attnlab lab`.
#[derive(Debug, clap::Args)]
pub struct LabArgs {
    /// Write every figure (SVG) into this directory.
    #[arg(long)]
    pub plots: Option<PathBuf>,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
    /// The single frequency of products (b) and (c).
    #[arg(long, default_value = "pi/2", allow_negative_numbers = true)]
    pub omega: String,
    /// The multi-frequency set of products (b) and (d).
    #[arg(long, default_value = "pi/2,pi/3")]
    pub omegas: String,
    /// The context length of product (d) (e.g. 12, 4096, 1e6 or 2^20).
    #[arg(long, default_value = "12", value_parser = super::common::parse_count)]
    pub context: u64,
}

/// A matrix as a table, each entry formatted by `fmt`.
fn rows_table(rows: &[Vec<f64>], fmt: fn(f64) -> String) -> comfy_table::Table {
    let ncols = rows.first().map_or(0, Vec::len);
    let header: Vec<String> = std::iter::once(String::new())
        .chain((0..ncols).map(|j| j.to_string()))
        .collect();
    let refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = table(&refs);
    for (i, r) in rows.iter().enumerate() {
        t.add_row(
            std::iter::once(i.to_string())
                .chain(r.iter().map(|&v| fmt(v)))
                .collect::<Vec<_>>(),
        );
    }
    t
}

fn fixed6(v: f64) -> String {
    format!("{v:.6}")
}

fn write_plots(dir: &Path, r: &LabReport) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let b = &r.b_scores;
    let mut series = vec![Series {
        name: format!("ω = {}", b.omega),
        points: b
            .rows
            .iter()
            .map(|row| (row.separation as f64, row.single))
            .collect(),
        markers: true,
    }];
    series.push(Series {
        name: format!("mean over {{{}}}", b.omegas.join(", ")),
        points: b
            .rows
            .iter()
            .map(|row| (row.separation as f64, row.set_mean))
            .collect(),
        markers: true,
    });
    let p = dir.join("scores_vs_separation.svg");
    line_chart(
        &p,
        &LineChart {
            title: "positional contribution to a score, aligned unit vectors".into(),
            x_label: "separation s = j − i".into(),
            y_label: "cos(sω) (mean over planes)".into(),
            series,
            h_lines: vec![(1.0, "score at s = 0".into())],
            ..Default::default()
        },
    )?;
    written.push(p);
    let d = &r.d_resolution;
    let p = dir.join("resolution_margin.svg");
    line_chart(
        &p,
        &LineChart {
            title: format!(
                "largest per-plane phase distance from a full turn, {{{}}}",
                b.omegas.join(", ")
            ),
            x_label: "separation s".into(),
            y_label: "margin (rad); 0 = indistinguishable from s = 0".into(),
            series: vec![Series {
                name: "margin(s)".into(),
                points: d.margins.iter().map(|&(s, m)| (s as f64, m)).collect(),
                markers: true,
            }],
            h_lines: vec![(0.0, "alias".into())],
            ..Default::default()
        },
    )?;
    written.push(p);
    let p = dir.join("attention_weights.svg");
    heatmap(
        &p,
        "attention weights A of the course program (row = query)",
        &r.weights,
        "key",
        "query",
    )?;
    written.push(p);
    let a = &r.a_permutation;
    let to_arr = |rows: &Vec<Vec<f64>>| {
        Array2::from_shape_vec(
            (rows.len(), rows.first().map_or(0, Vec::len)),
            rows.concat(),
        )
        .expect("rectangular")
    };
    let p = dir.join("permuted_difference.svg");
    heatmap(
        &p,
        "Attn(ΠH) − Π Attn(H), entry by entry",
        &to_arr(&a.difference),
        "column",
        "row",
    )?;
    written.push(p);
    let p = dir.join("symmetry_breakers.svg");
    let pts: Vec<(f64, f64)> = r
        .exercises
        .iter()
        .enumerate()
        .map(|(i, e)| (i as f64, e.margin.max(1e-3)))
        .collect();
    line_chart(
        &p,
        &LineChart {
            title: "error / tolerance per variant (0: f64 bare, 1: f32 bare, 2: RNN, 3: index, 4: sinusoidal, 5: RoPE, 6: causal)".into(),
            x_label: "variant".into(),
            y_label: "margin (log; < 1 holds)".into(),
            series: vec![Series { name: "margin".into(), points: pts, markers: true }],
            h_lines: vec![(1.0, "tolerance".into())],
            log_y: true,
            ..Default::default()
        },
    )?;
    written.push(p);
    Ok(written)
}

pub fn run(args: LabArgs) -> anyhow::Result<Outcome> {
    let cfg = LabConfig {
        omega: args.omega.clone(),
        omegas: args.omegas.clone(),
        context: args.context,
        ..LabConfig::default()
    };
    if cfg.context == 0 {
        anyhow::bail!("invalid --context: 0; expected a context length of at least 1");
    }
    let r = lab::run(&cfg)?;
    let plots = match &args.plots {
        Some(dir) => write_plots(dir, &r)?,
        None => Vec::new(),
    };
    let ok = r.a_permutation.check.report.holds
        && r.exercises.iter().all(|e| e.confirmed)
        && r.reference_table.iter().all(|c| c.holds)
        && r.facts.iter().all(|f| f.confirmed);
    if args.json {
        let mut v = serde_json::to_value(&r)?;
        v["plots"] = serde_json::json!(plots
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>());
        v["all_confirmed"] = serde_json::json!(ok);
        print_json(&v)?;
        return Ok(Outcome::from_bool(ok));
    }
    let a = &r.a_permutation;
    let rep = &a.check.report;
    println!(
        "attnlab lab — the practical session (seed 002) and seed 000's exercises, computed now\n"
    );
    println!("(a) Shuffle the tokens of the course program (np.random.seed({}), n = {}, d = {}) with perm = {:?}.", cfg.seed, cfg.n, cfg.dim, a.perm);
    println!("Attn(ΠH):\n{}", rows_table(&a.out_perm, fixed6));
    println!(
        "Π Attn(H) (= out[perm]):\n{}",
        rows_table(&a.permuted_out, fixed6)
    );
    println!(
        "difference, entry by entry:\n{}",
        rows_table(&a.difference, sci)
    );
    println!(
        "→ {}: max |difference| = {} ({} ulp) ≤ tolerance {} — equal to numerical precision; {}\n",
        rep.verdict.name().to_uppercase(),
        sci(rep.max_abs_error),
        rep.max_ulps,
        sci(rep.tolerance),
        a.check.diagnosis.explanation
    );
    let b = &r.b_scores;
    println!("(b) Positional contribution to the score of aligned unit vectors vs separation s:");
    let set_label = format!("mean over {{{}}}", b.omegas.join(", "));
    let mut t = table(&[
        "s",
        &format!("cos(s·{})", b.omega),
        &b.omegas
            .iter()
            .map(|o| format!("cos(s·{o})"))
            .collect::<Vec<_>>()
            .join("  "),
        &set_label,
    ]);
    for row in &b.rows {
        t.add_row(vec![
            row.separation.to_string(),
            num(row.single),
            row.set
                .iter()
                .map(|&v| num(v))
                .collect::<Vec<_>>()
                .join("  "),
            num(row.set_mean),
        ]);
    }
    println!("{t}");
    println!(
        "→ ω = {} scores like s = 0 again at s = {:?}; the set {{{}}} at s = {:?} (every phase within {} rad of a full turn).\n",
        b.omega,
        b.single_equal_to_zero,
        b.omegas.join(", "),
        b.set_equal_to_zero,
        sci(attnlab_core::spectrum::resolve::DEFAULT_TOL)
    );
    let c = &r.c_first_repeat;
    match c.first_repeat {
        Some(q) => println!("(c) ω = {} first repeats at separation {q} (ω = 2π·a/{q} in lowest terms; wavelength 2π/ω = {}).\n", b.omega, num(c.wavelength)),
        None => println!(
            "(c) ω = {} never repeats exactly (wavelength {}); near-repeats: {}.\n",
            b.omega,
            num(c.wavelength),
            c.near_repeats.iter().take(6).map(|n| format!("s = {} (phase error {})", n.separation, sci(n.phase_error))).collect::<Vec<_>>().join(", ")
        ),
    }
    let d = &r.d_resolution;
    println!("(d) {}", d.statement);
    if let Some(cn) = &d.contrast {
        println!(
            "    Contrast: with a context of {}, {}.",
            cn.context,
            cn.first_alias
                .map_or("it still resolves".into(), |s| format!(
                    "separation {s} aliases separation 0"
                ))
        );
    }
    println!("\nSeed 000's exercises (all permutations of the course input):");
    let mut t = table(&[
        "exercise",
        "expected",
        "measured",
        "max abs error",
        "margin",
        "perms",
        "confirmed",
    ]);
    for e in &r.exercises {
        t.add_row(vec![
            e.name.clone(),
            e.expected.clone(),
            e.verdict.name().to_string(),
            sci(e.max_abs_error),
            sci(e.margin),
            e.permutations_checked.to_string(),
            if e.confirmed {
                "yes".into()
            } else {
                "NO".into()
            },
        ]);
    }
    println!("{t}");
    println!("\nSeed 000's reference table, filled in by measurement:");
    let mut t = table(&["property", "seed says", "measured", "evidence"]);
    for c in &r.reference_table {
        t.add_row(vec![
            c.plain.clone(),
            c.seed_status.clone(),
            c.measured_status.clone(),
            c.evidence.details.clone(),
        ]);
    }
    println!("{t}");
    println!("\nBeyond the tables:");
    for f in &r.facts {
        println!(
            "  [{}] {} ({})",
            if f.confirmed {
                "confirmed"
            } else {
                "NOT CONFIRMED"
            },
            f.statement,
            f.evidence
        );
    }
    if !plots.is_empty() {
        println!(
            "\nplots written: {}",
            plots
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(Outcome::from_bool(ok))
}
