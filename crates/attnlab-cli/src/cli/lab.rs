//! `attnlab lab`: every product of the practical session, with defaults that need no input.

use std::path::PathBuf;

use attnlab_core::api::lab::LabRequest;
use attnlab_core::api::value::{BlocksSource, Count, List};
use attnlab_core::api::{Outcome, Request};

use super::exec::{execute_html, Show};

/// All products of the practical session, computed with defaults: the permuted output,
/// scores vs separation, the first repeat, what a frequency set resolves, seed 000's exercises.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write every chart (SVG) into DIR: scores_vs_separation, resolution_margin,
    /// permuted_difference, attention_weights, symmetry_breakers (`--plots` is the old name).
    #[arg(long = "plot", visible_alias = "plots", value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also write the products, tables and plots as one self-contained HTML file (inline SVG and
    /// CSS, no script, no external request) to hand in or share.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The single frequency of products (b) and (c).
    #[arg(long, default_value = "pi/2", allow_negative_numbers = true)]
    pub omega: String,
    /// The multi-frequency set of products (b) and (d).
    #[arg(long, default_value = "pi/2,pi/3")]
    pub omegas: String,
    /// The context length of product (d), e.g. 12, 4096, 128k, 1M, 2^17, 1e6.
    #[arg(long, default_value = "12")]
    pub context: Count,
    /// The provided blocks, held fixed: Wq, Wk, Wv and/or X from a .json, .npy, .npz or
    /// .safetensors file (or a directory of .npy files) replace the course program's draws.
    #[arg(long, value_name = "FILE")]
    pub blocks: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let request = Request::Lab(LabRequest {
        omega: args.omega,
        omegas: List::parse(&args.omegas),
        context: args.context,
        blocks: args.blocks.map(BlocksSource::Path),
    });
    execute_html(
        &request,
        &Show {
            json: args.json,
            plot_dir: args.plots.as_deref(),
        },
        args.html.as_deref(),
    )
}
