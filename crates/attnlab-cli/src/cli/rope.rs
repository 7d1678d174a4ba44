//! `attnlab rope …`: the subcommands' options, converted to the core's rope requests
//! (`attnlab_core::api::rope`) and run through [`super::exec`]. Only the syntax of the option
//! strings is checked here (numbers, counts); every range and every source rule is the core's.

use attnlab_core::present::text::shorten;
use std::path::{Path, PathBuf};

use clap::Subcommand;

use attnlab_core::api::rope::{
    audit::AuditRequest, engines::EnginesRequest, identity::IdentityRequest, period::PeriodRequest,
    resolve::ResolveRequest, score::ScoreRequest, usage::UsageRequest, ConfigSource,
    FrequencySource,
};
use attnlab_core::api::value::{Count, List};
use attnlab_core::api::Request;
use attnlab_core::numeric::Dtype;
use attnlab_core::spectrum::resolve::DEFAULT_TOL;
use attnlab_core::Error;

use super::exec::{emit, execute, execute_html, run_with_progress, stdout_error, Show};
use super::Outcome;

#[derive(Debug, Subcommand)]
pub enum RopeCommand {
    /// The relative-position identity (R(iω)q)ᵀ(R(jω)k) = qᵀR((j−i)ω)k, and translation invariance per dtype.
    Identity(IdentityArgs),
    /// Positional contribution to a score vs separation: cos(sω), averaged over several frequencies.
    Score(ScoreArgs),
    /// The first separation at which a single frequency repeats (exact for rational multiples of π).
    Period(PeriodArgs),
    /// Check that a frequency set distinguishes every separation 1..L−1 from 0 (exit 1 if not).
    Resolve(ResolveArgs),
    /// Audit a model's RoPE configuration: wavelengths, resolution, decay, precision (a report:
    /// exit 0 whatever it finds).
    Audit(AuditArgs),
    /// One config, every engine: the rotation transformers, vLLM, SGLang and llama.cpp (through
    /// the GGUF conversion rules) each compute, and the first position where each one differs
    /// from transformers beyond bf16 resolution (a report: exit 0 whatever it finds).
    Engines(EnginesArgs),
    /// Which rotation planes a trained model uses: per layer, head and plane the bound
    /// |q_k|·|k_k| a plane adds to a score (from the weights, and on a text), the share of score
    /// energy in planes that never complete a turn within the trained context, and what that
    /// means before changing the base (a report: exit 0 whatever it finds).
    Usage(UsageArgs),
}

pub fn run(cmd: RopeCommand) -> anyhow::Result<Outcome> {
    match cmd {
        RopeCommand::Identity(a) => identity(a),
        RopeCommand::Score(a) => score(a),
        RopeCommand::Period(a) => period(a),
        RopeCommand::Resolve(a) => resolve(a),
        RopeCommand::Audit(a) => audit(a),
        RopeCommand::Engines(a) => engines(a),
        RopeCommand::Usage(a) => usage(a),
    }
}

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
    /// A Hugging Face config.json: a file, a pipe such as <(jq … config.json), or - for
    /// standard input.
    #[arg(long)]
    config: Option<PathBuf>,
    /// A built-in model preset: llama-2-7b, llama-3.1-8b, mistral-7b-v0.1, qwen2-7b-instruct,
    /// gpt-neox-20b, deepseek-v3, qwen3-8b-yarn4, gpt-oss-20b, phi-3.5-mini-instruct (any case; `rope audit
    /// --list-presets` shows each one's source).
    #[arg(long)]
    preset: Option<String>,
    /// A GGUF model file, or a known model name (smollm2-135m): its rope metadata
    /// (freq_base, dimension_count, context_length, scaling keys) audited like a config.
    #[arg(long)]
    model: Option<String>,
}

impl SourceArgs {
    fn source(&self) -> Result<FrequencySource, Error> {
        Ok(FrequencySource {
            omega: self.omega.as_deref().map(List::parse),
            base: self
                .base
                .as_deref()
                .map(|b| number("base", b))
                .transpose()?,
            dim: self
                .dim
                .as_deref()
                .map(|d| count("dim", d, NON_NEGATIVE))
                .transpose()?,
            config: self.config.clone().map(ConfigSource::Path),
            preset: self.preset.clone(),
            model: self.model.clone(),
        })
    }
}

/// A number option (syntax only: the core checks its range).
fn number(what: &str, s: &str) -> Result<f64, Error> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| Error::invalid(format!("--{what}"), shorten(s), "a number"))?;
    if !v.is_finite() {
        return Err(Error::invalid(
            format!("--{what}"),
            shorten(s),
            "a finite number",
        ));
    }
    Ok(v)
}

const NON_NEGATIVE: &str = "a non-negative integer, e.g. 4096, 1e6 or 2^20";

/// A count option (`4096`, `1e6`, `2^20`, `128k`), its error naming the option.
fn count(what: &str, s: &str, expected: &str) -> Result<Count, Error> {
    Count::parse(s).map_err(|_| Error::invalid(format!("--{what}"), shorten(s), expected))
}

/// Runs a request and writes its charts into the directory `plot` (every command's `--plot
/// DIR`). A path ending in `.svg` is the old single-file form of `score` and `identity`: it
/// still works, with a one-line note on stderr, so scripts keep running while they move on.
fn execute_with_plots(
    request: &Request,
    json: bool,
    plot: Option<&Path>,
) -> anyhow::Result<Outcome> {
    let single_file = plot.filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("svg")));
    let Some(path) = single_file else {
        return execute(
            request,
            &Show {
                json,
                plot_dir: plot,
            },
        );
    };
    let report = run_with_progress(request)?;
    if let Some(chart) = report.charts().first() {
        attnlab_render::svg::write_file(path, chart)?;
        use std::io::Write;
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let _ = writeln!(
            std::io::stderr(),
            "note: --plot takes a directory now (every chart as DIR/<name>.svg, here {}); a FILE.svg still gets the one chart",
            dir.join(format!("{}.svg", chart.name)).display()
        );
    }
    emit(
        &report,
        &Show {
            json,
            plot_dir: None,
        },
    )?;
    if !json {
        use std::io::Write;
        writeln!(std::io::stdout(), "Plot written to {}", path.display()).map_err(stdout_error)?;
    }
    Ok(report.outcome())
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
    /// Write every chart (invariance.svg: error vs shift per dtype, log-log) into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// `attnlab rope identity`: default frequencies base 10000, dim 64.
fn identity(a: IdentityArgs) -> anyhow::Result<Outcome> {
    let request = Request::RopeIdentity(IdentityRequest {
        source: a.source.source()?,
        seed: count(
            "seed",
            &a.seed,
            "a non-negative integer seed below 2^64, e.g. 0 or 42",
        )?
        .get(),
        trials: count("trials", &a.trials, NON_NEGATIVE)?,
        max_shift: count("max-shift", &a.max_shift, NON_NEGATIVE)?,
    });
    execute_with_plots(&request, a.json, a.plot.as_deref())
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
    dim: Option<u64>,
    /// Largest separation s shown (1..=1000000, and separations × frequencies ≤ 2^24).
    #[arg(long, default_value_t = 8)]
    max_sep: u64,
    /// Phase tolerance (radians): s "scores like 0" when every plane's phase s·ω is within tol
    /// of a full turn — the same criterion as `rope resolve`.
    #[arg(long, default_value_t = DEFAULT_TOL)]
    tol: f64,
    /// Write every chart (score.svg: score vs separation) into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

fn score(a: ScoreArgs) -> anyhow::Result<Outcome> {
    let request = Request::RopeScore(ScoreRequest {
        source: FrequencySource {
            omega: a.omega.as_deref().map(List::parse),
            base: a.base,
            dim: a.dim.map(Count),
            ..FrequencySource::default()
        },
        max_sep: Count(a.max_sep),
        tol: a.tol,
    });
    execute_with_plots(&request, a.json, a.plot.as_deref())
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

fn period(a: PeriodArgs) -> anyhow::Result<Outcome> {
    let request = Request::RopePeriod(PeriodRequest {
        omega: List(vec![a.omega.clone()]),
        tol: number("tol", &a.tol)?,
        max_sep: count("max-sep", &a.max_sep, NON_NEGATIVE)?,
    });
    execute(
        &request,
        &Show {
            json: a.json,
            plot_dir: None,
        },
    )
}

/// Options of `attnlab rope resolve`.
#[derive(Debug, clap::Args)]
pub struct ResolveArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Context length L: separations 1..L−1 are examined, e.g. 4096, 128k, 1M, 2^17, 1e6
    /// (L ≤ 2^30, and L × planes ≤ 2^34) [default: the config's max_position_embeddings].
    #[arg(long, allow_hyphen_values = true)]
    context: Option<String>,
    /// Alias tolerance (radians): s aliases 0 when every plane is within tol of a full turn.
    #[arg(long, allow_hyphen_values = true, default_value = "1e-9")]
    tol: String,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

fn context(s: Option<&str>) -> Result<Option<Count>, Error> {
    s.map(|c| count("context", c, NON_NEGATIVE)).transpose()
}

/// `attnlab rope resolve`: a check. Exit 0 when every separation 1..L−1 is distinguished from
/// 0, exit 1 when some separation aliases 0.
fn resolve(a: ResolveArgs) -> anyhow::Result<Outcome> {
    let request = Request::RopeResolve(ResolveRequest {
        source: a.source.source()?,
        context: context(a.context.as_deref())?,
        tol: number("tol", &a.tol)?,
    });
    execute(
        &request,
        &Show {
            json: a.json,
            plot_dir: None,
        },
    )
}

/// Options of `attnlab rope audit`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Context length L, e.g. 4096, 128k, 1M, 2^17 (L ≤ 2^24, and L × planes ≤ 2^31)
    /// [default: the config's max_position_embeddings].
    #[arg(long, allow_hyphen_values = true)]
    context: Option<String>,
    /// The dtype the verdict speaks about (all four are in the JSON).
    #[arg(long, value_parser = super::common::choice::<Dtype>(), default_value_t = Dtype::Bf16)]
    dtype: Dtype,
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
    /// Write every chart (wavelengths.svg, decay.svg, precision.svg) into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Also write the audit (verdict, tables, charts) as one self-contained HTML file (inline
    /// SVG and CSS, no script, no external request).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// List the built-in presets (name, rope type, rotary dimension, base, context, source) and
    /// exit.
    #[arg(long, conflicts_with_all = ["omega", "base", "dim", "config", "preset", "model", "plot", "html"])]
    list_presets: bool,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

fn audit(a: AuditArgs) -> anyhow::Result<Outcome> {
    if a.list_presets {
        let presets = attnlab_core::config::presets()?;
        let mut out = std::io::stdout().lock();
        use std::io::Write;
        if a.json {
            serde_json::to_writer_pretty(&mut out, &presets).map_err(stdout_error)?;
            writeln!(out).map_err(stdout_error)?;
        } else {
            let text = attnlab_render::text::presets::render(&presets);
            out.write_all(super::exec::for_terminal(&text, super::exec::Stream::Stdout).as_bytes())
                .map_err(stdout_error)?;
        }
        return Ok(Outcome::Holds);
    }
    let request = Request::RopeAudit(AuditRequest {
        source: a.source.source()?,
        context: context(a.context.as_deref())?,
        dtype: a.dtype,
        tol: number("tol", &a.tol)?,
        skip_min_base: a.skip_min_base,
        min_base_grid: a
            .min_base_grid
            .as_deref()
            .map(|g| number("min-base-grid", g))
            .transpose()?,
    });
    execute_html(
        &request,
        &Show {
            json: a.json,
            plot_dir: a.plot.as_deref(),
        },
        a.html.as_deref(),
    )
}

/// Options of `attnlab rope engines`.
#[derive(Debug, clap::Args)]
pub struct EnginesArgs {
    /// A Hugging Face config.json: a file, a pipe such as <(jq … config.json), or - for
    /// standard input.
    #[arg(long, conflicts_with = "preset")]
    config: Option<PathBuf>,
    /// A built-in model preset (`rope audit --list-presets` lists them).
    #[arg(long)]
    preset: Option<String>,
    /// The served context C (vLLM's max_model_len, llama.cpp's n_ctx), e.g. 4096, 128k, 2^17
    /// [default: the config's max_position_embeddings, or factor × original when larger].
    #[arg(long, allow_hyphen_values = true)]
    context: Option<String>,
    /// The engines to compare with transformers (comma-separated or repeated): transformers,
    /// vllm, sglang, llamacpp [default: all].
    #[arg(long, value_delimiter = ',', value_parser = super::common::choice::<attnlab_core::engines::Engine>())]
    engine: Vec<attnlab_core::engines::Engine>,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// `attnlab rope engines`: a report (exit 0 whatever it finds).
fn engines(a: EnginesArgs) -> anyhow::Result<Outcome> {
    let request = Request::RopeEngines(EnginesRequest {
        config: a.config.map(ConfigSource::Path),
        preset: a.preset,
        context: context(a.context.as_deref())?,
        engine: a.engine,
    });
    execute(
        &request,
        &Show {
            json: a.json,
            plot_dir: None,
        },
    )
}

/// Options of `attnlab rope usage`.
#[derive(Debug, clap::Args)]
pub struct UsageArgs {
    /// The checkpoint: a GGUF file, smollm2-135m (the cached SmolLM2, see scripts/fetch-smollm2),
    /// or a Hugging Face directory (config.json, *.safetensors, tokenizer.json).
    #[arg(long, default_value = "smollm2-135m")]
    model: String,
    /// A text whose queries and keys are measured too (mean |q_k|·|k_k| over its tokens; no BOS
    /// token added).
    #[arg(long, allow_hyphen_values = true)]
    text: Option<String>,
    /// Only this layer (0-based) [default: every layer].
    #[arg(long)]
    layer: Option<usize>,
    /// Write the layers × planes heat maps (usage_weights.svg, and usage_text.svg with --text)
    /// into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// `attnlab rope usage`: a report (exit 0 whatever it finds).
fn usage(a: UsageArgs) -> anyhow::Result<Outcome> {
    let request = Request::RopeUsage(UsageRequest {
        model: a.model,
        text: a.text,
        layer: a.layer,
    });
    execute(
        &request,
        &Show {
            json: a.json,
            plot_dir: a.plot.as_deref(),
        },
    )
}
