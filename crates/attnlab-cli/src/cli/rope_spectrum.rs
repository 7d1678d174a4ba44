//! `attnlab rope identity|period|resolve|audit`: parse, call [`attnlab_core::spectrum`], render.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::legacy_plot::{line_chart, LineChart, Series};
use anyhow::{anyhow, bail, Result};
use attnlab_core::config;
use attnlab_core::numeric::Dtype;
use attnlab_core::position::frequencies::{
    parse_omega_list, Omega, RotaryFrequencies,
};
use attnlab_core::spectrum::{audit as au, identity as id, period as pe, resolve as re};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use attnlab_core::present::number::short as short_number;
use serde_json::json;

use super::output::{num, print_json, sci, table};
use super::Outcome;

/// Where a frequency set comes from (exactly one of these).
#[derive(Debug, Clone, clap::Args)]
pub struct SourceArgs {
    /// Explicit frequencies, comma-separated expressions (pi/2,pi/3 stay exact; 0.25 is a float).
    #[arg(long, allow_hyphen_values = true)]
    omega: Option<String>,
    /// Base θ of ω_k = θ^(−2k/D) (with --dim).
    #[arg(long, allow_hyphen_values = true)]
    base: Option<String>,
    /// Rotary dimension D (even; with --base).
    #[arg(long, allow_hyphen_values = true)]
    dim: Option<String>,
    /// A Hugging Face config.json.
    #[arg(long)]
    config: Option<PathBuf>,
    /// A built-in model preset.
    #[arg(long)]
    preset: Option<String>,
}

fn bad(what: &str, value: &str, expected: &str) -> anyhow::Error {
    anyhow!(attnlab_core::Error::invalid(what, value, expected))
}

/// Parses a float option.
fn parse_f64(what: &str, s: &str) -> Result<f64> {
    let v: f64 = s.trim().parse().map_err(|_| bad(what, s, "a number"))?;
    if !v.is_finite() {
        return Err(bad(what, s, "a finite number"));
    }
    Ok(v)
}

/// Parses a non-negative integer option: `1048576`, `1e6`, `2^20`.
fn parse_u64(what: &str, s: &str) -> Result<u64> {
    parse_u64_as(what, s, "a non-negative integer, e.g. 4096, 1e6 or 2^20")
}

/// A seed: any integer in 0..2^64.
fn parse_seed(s: &str) -> Result<u64> {
    parse_u64_as(
        "seed",
        s,
        "a non-negative integer seed below 2^64, e.g. 0 or 42",
    )
}

/// One curve per pipeline (f64 exact, f64, f32, bf16, f16): error vs shift.
fn invariance_series(rows: &[id::ShiftRow]) -> Vec<Series> {
    id::PIPELINES
        .iter()
        .map(|&name| Series {
            name: name.to_string(),
            points: rows
                .iter()
                .map(|row| (row.shift as f64, row.errors[name]))
                .collect(),
            markers: true,
        })
        .collect()
}

fn parse_u64_as(what: &str, s: &str, expected: &str) -> Result<u64> {
    super::common::whole_number(s).ok_or_else(|| bad(what, s, expected))
}

fn parse_tol(s: &str) -> Result<f64> {
    let t = parse_f64("tol", s)?;
    if t <= 0.0 || t > std::f64::consts::PI {
        return Err(bad("tol", s, "a phase tolerance in (0, π] radians"));
    }
    Ok(t)
}

/// A resolved frequency set: frequencies, the exact expressions when given, and whether a
/// config supplied it (then `frequencies(Some(L))` is re-evaluated at the context).
struct Source {
    freqs: RotaryFrequencies,
    omegas: Option<Vec<Omega>>,
    config: Option<config::RopeConfig>,
}

fn load_source(a: &SourceArgs, default: Option<(f64, usize)>) -> Result<Source> {
    let n = a.omega.is_some() as u8
        + (a.base.is_some() || a.dim.is_some()) as u8
        + a.config.is_some() as u8
        + a.preset.is_some() as u8;
    if n > 1 {
        bail!(attnlab_core::Error::invalid(
            "frequency source",
            "several given",
            "exactly one of --omega, --base/--dim, --config, --preset"
        ));
    }
    if let Some(o) = &a.omega {
        let omegas = parse_omega_list(o)?;
        return Ok(Source {
            freqs: RotaryFrequencies::from_omegas(&omegas),
            omegas: Some(omegas),
            config: None,
        });
    }
    if a.base.is_some() || a.dim.is_some() {
        let (Some(b), Some(d)) = (&a.base, &a.dim) else {
            bail!(attnlab_core::Error::invalid(
                "frequency source",
                "--base and --dim must go together",
                "both, e.g. --base 10000 --dim 128"
            ));
        };
        let base = parse_f64("base", b)?;
        let dim = parse_u64("dim", d)? as usize;
        return Ok(Source {
            freqs: RotaryFrequencies::from_base(base, dim)?,
            omegas: None,
            config: None,
        });
    }
    let cfg = match (&a.config, &a.preset) {
        (Some(p), _) => Some(config::load_config(p)?),
        (_, Some(name)) => Some(config::preset(name)?),
        _ => None,
    };
    if let Some(cfg) = cfg {
        let freqs = cfg.frequencies(None)?;
        return Ok(Source {
            freqs,
            omegas: None,
            config: Some(cfg),
        });
    }
    match default {
        Some((b, d)) => Ok(Source {
            freqs: RotaryFrequencies::from_base(b, d)?,
            omegas: None,
            config: None,
        }),
        None => bail!(attnlab_core::Error::invalid(
            "frequency source",
            "none given",
            "one of --omega LIST, --base B --dim D, --config FILE, --preset NAME"
        )),
    }
}

/// Resolves the context: --context, else the config's max_position_embeddings; re-evaluates a
/// config's frequencies at that sequence length (dynamic NTK / LongRoPE depend on it).
/// `cap` is the command's largest context (checked here too so that a config's huge
/// max_position_embeddings gets a message that names it and asks for --context).
fn context_for(src: &mut Source, context: &Option<String>, cap: u64) -> Result<u64> {
    let l = match context {
        Some(c) => parse_u64("context", c)?,
        None => {
            let l = src.freqs.context.ok_or_else(|| {
                anyhow!(attnlab_core::Error::invalid(
                    "context",
                    "missing",
                    "--context L (required unless a config gives max_position_embeddings)"
                ))
            })?;
            if l > cap {
                bail!(attnlab_core::Error::invalid(
                    "context",
                    format!("{l} (the config's max_position_embeddings)"),
                    format!("an explicit --context L with L ≤ {cap} for this command")
                ));
            }
            l
        }
    };
    if l == 0 || l > cap {
        bail!(attnlab_core::Error::invalid(
            "context",
            l,
            format!("a number of positions in 1..={cap}")
        ));
    }
    if let Some(cfg) = &src.config {
        src.freqs = cfg.frequencies(Some(l))?;
    }
    Ok(l)
}

/// The notes a config reader took (defaults applied, keys ignored); empty for other sources.
fn config_notes(src: &Source) -> Vec<String> {
    src.config
        .as_ref()
        .map(|c| c.notes.clone())
        .unwrap_or_default()
}

fn print_notes(notes: &[String]) {
    if !notes.is_empty() {
        println!("\nconfig notes:");
        for n in notes {
            println!("  - {n}");
        }
    }
}

/// Options of `attnlab rope identity`.
#[derive(Debug, clap::Args)]
pub struct IdentityArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Seed of the ChaCha8 generator for q, k and positions.
    #[arg(long, allow_hyphen_values = true, default_value = "0")]
    seed: String,
    /// Number of random (q, k, i, j) trials (1..=1000000).
    #[arg(long, allow_hyphen_values = true, default_value = "200")]
    trials: String,
    /// Largest shift t of the translation-invariance table (log grid, 4 per decade; ≤ 2^40).
    #[arg(long, allow_hyphen_values = true, default_value = "1e9")]
    max_shift: String,
    /// Writes an SVG of error vs shift per dtype (log-log).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// `attnlab rope identity`: default frequencies base 10000, dim 64.
pub fn identity(a: IdentityArgs) -> Result<Outcome> {
    let src = load_source(&a.source, Some((10000.0, 64)))?;
    let seed = parse_seed(&a.seed)?;
    let trials = usize::try_from(parse_u64("trials", &a.trials)?).unwrap_or(usize::MAX);
    let max_shift = parse_u64("max-shift", &a.max_shift)?;
    let r = id::identity_check(&src.freqs, seed, trials, max_shift)?;
    if let Some(p) = &a.plot {
        let series = invariance_series(&r.invariance);
        line_chart(
            p,
            &LineChart {
                title: format!(
                    "Translation invariance: |S(i+t, j+t) − S(i, j)|, {}",
                    src.freqs.source
                ),
                x_label: "shift t".into(),
                y_label: "max abs error over trials".into(),
                series,
                log_x: true,
                log_y: true,
                h_lines: vec![],
            },
        )?;
    }
    if a.json {
        // The report's fields at the top level, plus how it was computed.
        let mut v = serde_json::to_value(&r)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("source".into(), json!(src.freqs.source));
            o.insert("config_notes".into(), json!(config_notes(&src)));
            o.insert("planes".into(), json!(src.freqs.inv_freq.len()));
            o.insert(
                "generator".into(),
                json!("rand_chacha::ChaCha8Rng::seed_from_u64(seed), rand_distr::StandardNormal"),
            );
            o.insert(
                "tolerance_rule".into(),
                json!(format!(
                    "{} * eps64 * sum_p |q_p||k_p|",
                    id::IDENTITY_TOL_EPS
                )),
            );
            o.insert("pipelines".into(), json!("f64_exact: accurate phase reduction; f64: naive f64 product; f32/bf16/f16: HF pipeline (f32 positions, inv_freq and angles, cos/sin in f32 cast to the dtype, rotation in the dtype, dot accumulated in f32)"));
        }
        print_json(&v)?;
    } else {
        println!(
            "Relative-position identity (R(iω)q)ᵀ(R(jω)k) = qᵀR((j−i)ω)k — {} ({} planes)",
            src.freqs.source,
            src.freqs.inv_freq.len()
        );
        println!(
            "seed {} (ChaCha8Rng + StandardNormal), {} trials, positions in 0..={}",
            r.seed, r.trials, max_shift
        );
        println!(
            "max |error| = {} ; worst error/tolerance = {} (tolerance {} = {}·eps64·Σ|q_p||k_p|) at (i, j) = {:?} → {}",
            sci(r.max_abs_error),
            num(r.max_error_ratio),
            sci(r.tolerance),
            id::IDENTITY_TOL_EPS,
            r.worst_positions,
            if r.holds { "holds" } else { "FAILS" }
        );
        println!(
            "\nTranslation invariance: max |S(i+t, j+t) − S(i, j)| over {} cases, i, j < {}",
            r.trials.min(20),
            r.base_position_range
        );
        let mut t = table(&["shift t", "f64 exact", "f64 naive", "f32", "bf16", "f16"]);
        for row in &r.invariance {
            let e = &row.errors;
            t.add_row(vec![
                row.shift.to_string(),
                sci(e["f64_exact"]),
                sci(e["f64"]),
                sci(e["f32"]),
                sci(e["bf16"]),
                sci(e["f16"]),
            ]);
        }
        println!("{t}");
        println!("f32/bf16/f16 follow Hugging Face: positions, inv_freq and angles in f32; cos/sin in f32 cast to the dtype.");
        print_notes(&config_notes(&src));
    }
    Ok(Outcome::from_bool(r.holds))
}

/// Options of `attnlab rope period`.
#[derive(Debug, clap::Args)]
pub struct PeriodArgs {
    /// The frequency (one expression: pi/2, -pi/2, 2*pi/7, 0.25; |ω| ≤ 1e4).
    #[arg(long, allow_hyphen_values = true)]
    omega: String,
    /// Phase tolerance (radians) for the first near-repeat search.
    #[arg(long, allow_hyphen_values = true, default_value = "1e-3")]
    tol: String,
    /// Search bound of the first separation within --tol (≤ 2^40).
    #[arg(long, allow_hyphen_values = true, default_value = "1e7")]
    max_sep: String,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// `attnlab rope period`.
pub fn period(a: PeriodArgs) -> Result<Outcome> {
    let list = parse_omega_list(&a.omega)?;
    if list.len() != 1 {
        bail!(attnlab_core::Error::invalid(
            "omega",
            &a.omega,
            "a single frequency (use `rope resolve` for sets)"
        ));
    }
    let tol = parse_tol(&a.tol)?;
    let max_sep = parse_u64("max-sep", &a.max_sep)?;
    let r = pe::period(list[0], tol, max_sep)?;
    if a.json {
        print_json(&r)?;
        return Ok(Outcome::Holds);
    }
    println!(
        "ω = {} = {} rad/position; wavelength 2π/|ω| = {}",
        r.omega.label,
        short_number(r.omega.value),
        num(r.wavelength)
    );
    match r.first_repeat {
        Some(b) => println!("exact: ω = 2π·a/{b} in lowest terms, first exact repeat at separation {b}"),
        None => println!("no exact repeat: a binary64 ω is a rational number of radians, so ω/2π is irrational (π is); near-repeats are continued-fraction convergents of ω/2π:"),
    }
    let mut t = table(&["separation", "phase error (rad)"]);
    for n in &r.near_repeats {
        t.add_row(vec![n.separation.to_string(), sci(n.phase_error)]);
    }
    println!("{t}");
    match r.first_within_tol {
        Some(s) => println!(
            "first separation within {} rad of a full turn: {s}",
            sci(tol)
        ),
        None => println!(
            "no separation ≤ {} within {} rad of a full turn",
            r.max_sep,
            sci(tol)
        ),
    }
    Ok(Outcome::Holds)
}

/// Options of `attnlab rope resolve`.
#[derive(Debug, clap::Args)]
pub struct ResolveArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Context length L: separations 1..L−1 are examined (L ≤ 2^30, and L × planes ≤ 2^34).
    #[arg(long, allow_hyphen_values = true)]
    context: Option<String>,
    /// Alias tolerance (radians): s aliases 0 when every plane is within tol of a full turn.
    #[arg(long, allow_hyphen_values = true, default_value = "1e-9")]
    tol: String,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// `attnlab rope resolve`: a check. Exit 0 when every separation 1..L−1 is distinguished from
/// 0, exit 1 when some separation aliases 0.
pub fn resolve(a: ResolveArgs) -> Result<Outcome> {
    let mut src = load_source(&a.source, None)?;
    let l = context_for(&mut src, &a.context, re::MAX_CONTEXT)?;
    let tol = parse_tol(&a.tol)?;
    let set: Vec<Omega> = match &src.omegas {
        Some(o) => o.clone(),
        // Planes with ω = 0 never turn and add nothing to any margin (as in the audit).
        None => src
            .freqs
            .inv_freq
            .iter()
            .filter(|&&w| w != 0.0)
            .map(|&w| Omega::float(w))
            .collect::<attnlab_core::Result<_>>()?,
    };
    let r = re::resolve(&set, l, tol)?;
    if a.json {
        print_json(&json!({
            "context": r.context, "resolves": r.resolves, "common_period": r.common_period,
            "first_alias": r.first_alias, "min_margin": r.min_margin, "margin_at": r.margin_at,
            "tol": r.tol, "exact": r.exact, "source": src.freqs.source, "frequencies": src.freqs.inv_freq,
            "config_notes": config_notes(&src),
        }))?;
        return Ok(Outcome::from_bool(r.resolves));
    }
    println!(
        "{} ({} planes), context L = {}",
        src.freqs.source,
        set.len(),
        l
    );
    if let Some(p) = r.common_period {
        println!(
            "exact set: common period lcm = {p} ({} L)",
            if p >= l { "≥" } else { "<" }
        );
    }
    if let (Some(m), Some(at)) = (r.min_margin, r.margin_at) {
        println!(
            "smallest margin over separations 1..{}: {} rad at separation {at}",
            l - 1,
            sci(m)
        );
    }
    match r.first_alias {
        None => println!(
            "resolves: every separation 1..{} is distinguished from 0 (tol {} rad)",
            l - 1,
            sci(tol)
        ),
        Some(s) => println!(
            "does not resolve: separation {s} is within {} rad of a full turn in every plane",
            sci(tol)
        ),
    }
    print_notes(&config_notes(&src));
    Ok(Outcome::from_bool(r.resolves))
}

/// Options of `attnlab rope audit`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Context length L ≤ 2^24, and L × planes ≤ 2^31 (default: the config's
    /// max_position_embeddings).
    #[arg(long, allow_hyphen_values = true)]
    context: Option<String>,
    /// The dtype the verdict speaks about (all four are in the JSON).
    #[arg(long, allow_hyphen_values = true, default_value = "bf16")]
    dtype: String,
    /// Alias tolerance (radians) of the resolution.
    #[arg(long, allow_hyphen_values = true, default_value = "1e-9")]
    tol: String,
    /// Skip the minimum-base search.
    #[arg(long)]
    skip_min_base: bool,
    /// Coarse log-grid ratio of the minimum-base search, in [1.0001, 2] (default 1.0005; finer
    /// finds narrower islands of passing bases, proportionally slower).
    #[arg(long, allow_hyphen_values = true, conflicts_with = "skip_min_base")]
    min_base_grid: Option<String>,
    /// Writes wavelengths.svg, decay.svg and precision.svg into DIR.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

fn write_audit_plots(dir: &Path, r: &au::AuditReport) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| attnlab_core::Error::io_source(dir, e))?;
    line_chart(
        &dir.join("wavelengths.svg"),
        &LineChart {
            title: format!("Wavelength 2π/ω per plane — {}", r.source),
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
            log_x: false,
            log_y: true,
            h_lines: vec![(r.context as f64, format!("context {}", r.context))],
        },
    )?;
    line_chart(
        &dir.join("decay.svg"),
        &LineChart {
            title: "Decay criterion B(m)/planes = mean cos(m·ω_k) (Men et al. 2024)".into(),
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
            log_y: false,
            h_lines: vec![(0.0, "0".into())],
        },
    )?;
    let series = invariance_series(&r.invariance);
    line_chart(
        &dir.join("precision.svg"),
        &LineChart {
            title: "Translation-invariance error vs position per dtype (HF pipeline)".into(),
            x_label: "position shift t".into(),
            y_label: "max |S(i+t, j+t) − S(i, j)|".into(),
            series,
            log_x: true,
            log_y: true,
            h_lines: vec![],
        },
    )?;
    Ok(())
}

/// `attnlab rope audit`.
pub fn audit(a: AuditArgs) -> Result<Outcome> {
    let mut src = load_source(&a.source, None)?;
    let l = context_for(&mut src, &a.context, au::MAX_AUDIT_CONTEXT)?;
    let dtype = Dtype::parse(&a.dtype)?;
    let tol = parse_tol(&a.tol)?;
    let min_base_grid = match &a.min_base_grid {
        None => attnlab_core::spectrum::decay::DEFAULT_GRID_RATIO,
        Some(text) => {
            let g = parse_f64("min-base-grid", text)?;
            if !(attnlab_core::spectrum::decay::MIN_GRID_RATIO..=2.0).contains(&g) {
                bail!(attnlab_core::Error::invalid(
                    "min-base-grid",
                    text,
                    "a grid ratio in [1.0001, 2], e.g. 1.0005 (the default)"
                ));
            }
            g
        }
    };
    let opts = au::AuditOptions {
        context: l,
        dtype,
        tol,
        min_base: !a.skip_min_base,
        min_base_grid,
    };
    // The bar stays hidden for the first second and on non-terminals.
    let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message("minimum-base search");
    let start = Instant::now();
    let mut shown = false;
    let r = au::audit(&src.freqs, src.omegas.as_deref(), &opts, |f| {
        if !shown && start.elapsed() > Duration::from_secs(1) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
        bar.set_position((f.clamp(0.0, 1.0) * 1000.0) as u64);
    })?;
    bar.finish_and_clear();
    if let Some(dir) = &a.plot {
        write_audit_plots(dir, &r)?;
    }
    let notes = config_notes(&src);
    if a.json {
        // Flattened rather than via serde_json::Value, so f32 fields keep their f32 form.
        #[derive(serde::Serialize)]
        struct WithNotes<'a> {
            #[serde(flatten)]
            report: &'a au::AuditReport,
            config_notes: &'a [String],
        }
        print_json(&WithNotes {
            report: &r,
            config_notes: &notes,
        })?;
        return Ok(Outcome::Holds);
    }
    // Config and base/dim sources already name their dimensions; explicit lists do not.
    let dims = if src.omegas.is_some() {
        format!(" (rotary dim {}, head dim {})", r.rotary_dim, r.head_dim)
    } else {
        String::new()
    };
    println!("RoPE audit — {}{dims}, context {}", r.source, r.context);
    if let (Some(b), Some(e)) = (r.base, r.effective_base) {
        if b != e {
            println!(
                "base {} as configured; effective base {} at sequence length {} (dynamic scaling)",
                short_number(b),
                short_number(e),
                r.context
            );
        }
    }
    println!("\n{}", r.verdict);
    print_notes(&notes);
    println!();
    let mut t = table(&[
        "plane",
        "inv_freq",
        "wavelength",
        "turns in context",
        "full turn",
    ]);
    for p in &r.planes {
        t.add_row(vec![
            p.index.to_string(),
            sci(p.inv_freq),
            num(p.wavelength),
            num(p.turns_in_context),
            if p.full_turn_in_context { "yes" } else { "no" }.into(),
        ]);
    }
    println!("{t}");
    println!(
        "planes with a full turn: {} ({} dims); attention factor {}",
        r.planes_full_turn,
        r.dims_full_turn,
        num(r.attention_factor)
    );
    println!(
        "resolution: resolves = {}, min margin {} rad at {}, first alias {}",
        r.resolves,
        r.min_margin.map(sci).unwrap_or("-".into()),
        r.margin_at.map(|m| m.to_string()).unwrap_or("-".into()),
        r.resolution
            .first_alias
            .map(|m| m.to_string())
            .unwrap_or("none".into())
    );
    println!(
        "decay: first negative B(m) at {}, min mean {} at m = {}; smallest base for this context: {}",
        r.decay_first_negative
            .map(|m| m.to_string())
            .unwrap_or(format!("none below {}", r.context)),
        num(r.decay_min_mean),
        r.decay_min_mean_at,
        r.min_base_for_context.map(sci).unwrap_or("-".into())
    );
    let mut t = table(&[
        "dtype",
        "distinct positions",
        "first inexact",
        "overflow from",
        "distinct rows",
        "first duplicate row",
    ]);
    for (name, p) in &r.precision {
        let o = |x: Option<u64>| x.map(|v| v.to_string()).unwrap_or("-".into());
        t.add_row(vec![
            name.clone(),
            p.distinct_positions.to_string(),
            o(p.first_inexact_position),
            o(p.first_overflow_position),
            p.distinct_rows.to_string(),
            o(p.first_duplicate_row),
        ]);
    }
    println!("{t}");
    Ok(Outcome::Holds)
}
