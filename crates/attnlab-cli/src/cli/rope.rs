//! What the `attnlab rope …` commands share: where a frequency set comes from, and the syntax of
//! their number and count options (every range and every source rule is the core's).

use attnlab_core::present::text::shorten;
use std::path::{Path, PathBuf};

use attnlab_core::api::rope::{ConfigSource, FrequencySource};
use attnlab_core::api::value::{Count, List};
use attnlab_core::api::Request;
use attnlab_core::Error;

use super::exec::{emit, execute, run_with_progress, stdout_error, Show};
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
    pub fn source(&self) -> Result<FrequencySource, Error> {
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
pub fn number(what: &str, s: &str) -> Result<f64, Error> {
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

pub const NON_NEGATIVE: &str = "a non-negative integer, e.g. 4096, 1e6 or 2^20";

/// A count option (`4096`, `1e6`, `2^20`, `128k`), its error naming the option.
pub fn count(what: &str, s: &str, expected: &str) -> Result<Count, Error> {
    Count::parse(s).map_err(|_| Error::invalid(format!("--{what}"), shorten(s), expected))
}

/// Runs a request and writes its charts into the directory `plot` (every command's `--plot
/// DIR`). A path ending in `.svg` is the old single-file form of `score` and `identity`: it
/// still works, with a one-line note on stderr, so scripts keep running while they move on.
pub fn execute_with_plots(
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

pub fn context(s: Option<&str>) -> Result<Option<Count>, Error> {
    s.map(|c| count("context", c, NON_NEGATIVE)).transpose()
}
