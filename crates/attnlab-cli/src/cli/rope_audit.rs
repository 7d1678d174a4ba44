//! `attnlab rope audit`.

use std::path::PathBuf;

use attnlab_core::api::rope::audit::AuditRequest;
use attnlab_core::api::Request;
use attnlab_core::numeric::Dtype;

use super::exec::{execute_html, stdout_error, Show};
use super::rope::{context, number, SourceArgs};
use super::Outcome;

/// Audit a model's RoPE configuration: wavelengths, resolution, decay, precision (a report:
/// exit 0 whatever it finds).
#[derive(Debug, clap::Args)]
pub struct Args {
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

pub fn run(a: Args) -> anyhow::Result<Outcome> {
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
