//! Command definitions (clap derive) and dispatch. Each subcommand lives in its own file and
//! returns an [`Outcome`]; errors become one line on stderr and exit code 2 (see `main.rs`).

mod attend;
mod claims;
mod common;
mod embed;
mod equivariance;
mod exec;
mod lab;
mod predict;
mod rope;
mod session;

use clap::{Parser, Subcommand};

pub use attnlab_core::api::Outcome;

use std::sync::atomic::AtomicBool;

/// Set by Ctrl-C: long computations stop cleanly at their next check.
pub fn interrupted() -> &'static AtomicBool {
    static FLAG: AtomicBool = AtomicBool::new(false);
    &FLAG
}

/// Compute, verify and audit what attention layers and positional encodings actually do.
///
/// Every command takes --json (one JSON object on stdout, nothing else there).
/// Exit codes: 0 ok / the checked property holds, 1 a check failed, 2 bad usage or bad input.
#[derive(Debug, Parser)]
#[command(name = "attnlab", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// Worker threads for parallel computations [default: all cores]. Results are identical
    /// for any thread count.
    #[arg(long, global = true, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// All products of the practical session, computed with defaults: the permuted output,
    /// scores vs separation, the first repeat, what a frequency set resolves, seed 000's exercises.
    Lab(lab::LabArgs),
    /// Every claim of both course documents, checked now; exit 1 if any fails.
    Claims(claims::ClaimsArgs),
    /// One forward pass of self-attention: the drawn or loaded inputs, the weights and the output.
    Attend(attend::AttendArgs),
    /// Check permutation equivariance f(ΠH) = Π f(H) (or invariance with a readout), with evidence.
    Equivariance(equivariance::EquivarianceArgs),
    /// Tokens → one-hot → embedding lookup, and the basis-change redundancy at a linear interface.
    Embed(embed::EmbedArgs),
    /// Rotary position embeddings: the relative-position identity, scores, periods, resolution, audits.
    #[command(subcommand)]
    Rope(rope::RopeCommand),
    /// The complete next-token prediction: tokens → embeddings → causal attention → readout → softmax.
    Predict(predict::PredictArgs),
    /// The prediction-first practical: predict each result, then see it computed (progress is kept).
    Session(session::SessionArgs),
}

/// Runs one parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    if let Some(n) = cli.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build_global()
            .map_err(|e| anyhow::anyhow!("cannot start {n} worker threads: {e}"))?;
    }
    // Ctrl-C asks long computations to stop at their next check; a second Ctrl-C exits.
    let _ = ctrlc::set_handler(|| {
        if interrupted().swap(true, std::sync::atomic::Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    match cli.command {
        Command::Lab(a) => lab::run(a),
        Command::Claims(a) => claims::run(a),
        Command::Attend(a) => attend::run(a),
        Command::Equivariance(a) => equivariance::run(a),
        Command::Embed(a) => embed::run(a),
        Command::Rope(cmd) => rope::run(cmd),
        Command::Predict(a) => predict::run(a),
        Command::Session(a) => session::run(a),
    }
}
