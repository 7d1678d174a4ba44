//! `attnlab attend`: one forward pass, printing the parts `--show` asks for.

use attnlab_core::api::attend::{AttendPart, AttendRequest};
use attnlab_core::api::{Outcome, Report, Request};
use attnlab_core::choice::Choice;

use super::common::InputArgs;
use super::exec::{emit_with_text, run_with_progress, Show};

/// One forward pass of self-attention: the drawn or loaded inputs, the weights and the output.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub input: InputArgs,
    /// The parts of the pass to print, comma-separated, in any order (they are shown in the
    /// order of the computation): inputs, positions (the table added), projections (Wq, Wk,
    /// Wv), qkv (Q, K, V; rotated under RoPE), scores (Q·Kᵀ/√d_k), weights, output; or all
    /// [default: inputs,weights,output]. The n×n scores and weights are formed only when
    /// shown, for n ≤ 256 (without --show, larger n skip them); --json holds every part formed.
    #[arg(long, value_name = "PARTS", value_delimiter = ',', value_parser = parts_parser())]
    pub show: Vec<Parts>,
}

/// One `--show` item: a part, or `all`.
#[derive(Debug, Clone)]
pub enum Parts {
    /// Every part.
    All,
    /// One part.
    One(AttendPart),
}

fn parts_parser() -> impl clap::builder::TypedValueParser<Value = Parts> {
    use clap::builder::{PossibleValue, TypedValueParser};
    let mut values: Vec<PossibleValue> = AttendPart::ALL
        .iter()
        .map(|p| PossibleValue::new(p.name()))
        .collect();
    values.push(PossibleValue::new("all"));
    clap::builder::PossibleValuesParser::new(values).map(|s| match s.as_str() {
        "all" => Parts::All,
        // Only the listed names reach here, and each parses.
        other => AttendPart::parse(other).map_or(Parts::All, Parts::One),
    })
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    // The parts asked for, in the request too: the n × n scores and weights are formed only
    // when shown (and refused for n past what a person can read).
    let parts: Option<Vec<AttendPart>> = (!args.show.is_empty()).then(|| {
        if args.show.iter().any(|p| matches!(p, Parts::All)) {
            AttendPart::ALL.to_vec()
        } else {
            args.show
                .iter()
                .filter_map(|p| match p {
                    Parts::One(p) => Some(*p),
                    Parts::All => None,
                })
                .collect()
        }
    });
    let request = Request::Attend(AttendRequest {
        input: args.input.layer_input(),
        show: parts.clone(),
    });
    let report = run_with_progress(&request)?;
    let show = Show {
        json: args.input.json,
        plot_dir: args.input.plot.as_deref(),
    };
    let text = match (&report, &parts) {
        (Report::Attend(r), Some(parts)) if !args.input.json => {
            Some(attnlab_render::text::attend::render_parts(r, parts))
        }
        _ => (!args.input.json).then(|| attnlab_render::text::render(&report)),
    };
    emit_with_text(&report, text.as_deref(), &show)?;
    Ok(report.outcome())
}
