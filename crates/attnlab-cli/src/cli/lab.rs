//! `attnlab lab`: every product of the practical session, with defaults that need no input.

use std::path::PathBuf;

use attnlab_core::api::lab::LabRequest;
use attnlab_core::api::value::{Count, List};
use attnlab_core::api::{Outcome, Request};

use super::exec::{execute_html, Show};

/// Options of `attnlab lab`.
#[derive(Debug, clap::Args)]
pub struct LabArgs {
    /// Write every figure (SVG) into this directory.
    #[arg(long)]
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
    /// The context length of product (d) (e.g. 12, 4096, 1e6, 2^20 or 128k).
    #[arg(long, default_value = "12")]
    pub context: Count,
}

pub fn run(args: LabArgs) -> anyhow::Result<Outcome> {
    let request = Request::Lab(LabRequest {
        omega: args.omega,
        omegas: List::parse(&args.omegas),
        context: args.context,
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
