//! `attnlab equivariance`: check f(ΠH) = Π f(H) (or invariance for a readout) with evidence.

use attnlab_core::api::equivariance::EquivarianceRequest;
use attnlab_core::api::value::List;
use attnlab_core::api::{Outcome, Report, Request};
use attnlab_core::choice::Choice;
use attnlab_core::layer::{LayerKind, Readout};

use super::common::InputArgs;
use super::exec::{
    emit_with_text, execute_html, run_with_progress, stdout_error, write_html, Show,
};

/// Check permutation equivariance f(ΠH) = Π f(H) (or invariance with a readout), with evidence.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// The layer under test; with --model, the index L of the model's decoder layer whose
    /// attention is checked [possible values: attention, rnn; with --model, 0, 1, …]
    /// [default: attention; with --model, 0].
    #[arg(long, value_name = "LAYER")]
    pub layer: Option<String>,
    /// A real trained model (a GGUF file, smollm2-135m, or a Hugging Face directory): check
    /// the attention of its layer --layer L (all heads, GQA, Wo) on the hidden states entering
    /// it, for --text T or --n N drawn token ids; --pos none|rope, --mask none|causal.
    #[arg(long, value_name = "PATH")]
    pub model: Option<String>,
    /// Readout after the layer: none (check equivariance), mean or row:I (check invariance).
    #[arg(long, default_value = "none")]
    pub readout: String,
    /// One permutation, as numpy's X[perm] list, e.g. 2,0,3,1.
    #[arg(long, conflicts_with_all = ["exhaustive", "samples"])]
    pub perm: Option<String>,
    /// Every permutation of the n positions (n ≤ 8).
    #[arg(long, conflicts_with = "samples")]
    pub exhaustive: bool,
    /// K random non-identity permutations [default: exhaustive for n ≤ 6, else 100 samples].
    #[arg(long, allow_negative_numbers = true)]
    pub samples: Option<usize>,
    /// Seed of the random permutations [default: --seed].
    #[arg(long, allow_negative_numbers = true)]
    pub perm_seed: Option<u64>,
    /// Also report the course's product for the one --perm: f(ΠX), Π f(X) and their difference
    /// entry by entry (in the JSON report; equivariance only, no --readout).
    #[arg(long, requires = "perm")]
    pub product: bool,
    /// With --pos rope: move the rotary positions with the tokens (row i of ΠX holds token
    /// perm[i] at its own position perm[i]); a rope layer is then equivariant again.
    #[arg(long)]
    pub move_positions: bool,
    /// Also write the report as one self-contained HTML file (inline SVG and CSS, no script).
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// Also print the seconds each part took and the permutations per second (the JSON
    /// report always has them, under `timings`).
    #[arg(long)]
    pub timings: bool,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let (layer, model_layer) = match (&args.model, args.layer.as_deref()) {
        (_, None) => (LayerKind::Attention, None),
        (Some(_), Some(l)) => (
            LayerKind::Attention,
            Some(l.trim().parse::<usize>().map_err(|_| {
                attnlab_core::Error::invalid(
                    "--layer",
                    attnlab_core::text::shorten(l),
                    "a layer index 0, 1, … with --model",
                )
            })?),
        ),
        (None, Some(l)) => (LayerKind::parse(l)?, None),
    };
    let request = Request::Equivariance(EquivarianceRequest {
        input: args.input.layer_input(),
        layer,
        model: args.model.clone(),
        model_layer,
        readout: Readout::parse(&args.readout)?,
        perm: args.perm.as_deref().map(List::parse),
        exhaustive: args.exhaustive,
        samples: args.samples,
        perm_seed: args.perm_seed,
        product: args.product,
        move_positions: args.move_positions,
    });
    let show = Show {
        json: args.input.json,
        plot_dir: args.input.plot.as_deref(),
    };
    if !args.timings || show.json {
        return execute_html(&request, &show, args.html.as_deref());
    }
    // The text with one more line: the timings, which vary from run to run.
    let report = run_with_progress(&request)?;
    if let Some(path) = args.html.as_deref() {
        write_html(path, request.command(), &report)?;
    }
    let mut text = attnlab_render::text::render(&report);
    if let Report::Equivariance(r) = &report {
        text.push_str(&attnlab_render::text::equivariance_timings(&r.timings));
        text.push('\n');
    }
    emit_with_text(&report, Some(&text), &show)?;
    if let Some(path) = args.html.as_deref() {
        use std::io::Write;
        writeln!(
            std::io::stdout().lock(),
            "HTML report written to {}",
            path.display()
        )
        .map_err(stdout_error)?;
    }
    Ok(report.outcome())
}
