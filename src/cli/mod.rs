//! Command definitions (clap derive) and dispatch. Each subcommand lives in its own file and
//! returns an [`Outcome`]; errors become one line on stderr and exit code 2 (see `main.rs`).

mod output;
mod rope;
mod rope_spectrum;

use clap::{Parser, Subcommand};

pub use output::Outcome;

/// Compute, verify and audit what attention layers and positional encodings actually do.
///
/// Every command takes --json (one JSON object on stdout, nothing else there).
/// Exit codes: 0 ok / the checked property holds, 1 a check failed, 2 bad usage or bad input.
#[derive(Debug, Parser)]
#[command(name = "attnlab", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Rotary position embeddings: the relative-position identity, scores, periods, resolution, audits.
    #[command(subcommand)]
    Rope(rope::RopeCommand),
}

/// Runs one parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Rope(cmd) => rope::run(cmd),
    }
}
