//! Command definitions (clap derive) and dispatch. Each subcommand lives in its own file and
//! returns an [`Outcome`]; errors become one line on stderr and exit code 2 (see `main.rs`).

mod attend;
mod claims;
mod common;
mod embed;
mod equivariance;
mod exec;
mod lab;
mod model;
mod predict;
mod rope;
mod serve;
mod session;

use clap::{Parser, Subcommand};

use attnlab_core::api::value::Count;
use attnlab_core::limits::Limits;

pub use attnlab_core::api::Outcome;

use std::sync::atomic::AtomicBool;

/// Set by Ctrl-C: long computations stop cleanly at their next check.
pub fn interrupted() -> &'static AtomicBool {
    static FLAG: AtomicBool = AtomicBool::new(false);
    &FLAG
}

/// The heading the global options (threads and limits) are listed under in every command's
/// `--help`, after the command's own options.
pub const LIMITS_HEADING: &str = "Limits and threads (global: every command takes them)";

/// Compute, verify and audit what attention layers and positional encodings actually do.
///
/// Every command takes --json (one JSON object on stdout, nothing else there).
/// Exit codes: 0 ok / the checked property holds, 1 a check failed, 2 bad usage or bad input.
#[derive(Debug, Parser)]
#[command(name = "attnlab", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// Worker threads for parallel computations [default: all cores]. Results are identical
    /// for any thread count.
    #[arg(long, global = true, help_heading = LIMITS_HEADING, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Largest estimated memory a request may use, in bytes (e.g. 4G, 512M) [default: 1G].
    /// Requests over it are refused before they start, with the estimate.
    #[arg(long, global = true, help_heading = LIMITS_HEADING, value_name = "BYTES")]
    pub max_memory: Option<Count>,
    /// Largest estimated work of a request, in floating-point operations (e.g. 1e12, 2^40)
    /// [default: 2^35, about 10 s]. Requests over it are refused before they start.
    #[arg(long, global = true, help_heading = LIMITS_HEADING, value_name = "OPS")]
    pub max_work: Option<Count>,
    /// Largest input file read, in bytes (configs, blocks, answers, state) [default: 64M].
    #[arg(long, global = true, help_heading = LIMITS_HEADING, value_name = "BYTES")]
    pub max_file_size: Option<Count>,
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
    /// A real trained model (GGUF or a Hugging Face directory): its file, its tokenizer on a real embedding table, next-token prediction, and where token order enters.
    #[command(subcommand)]
    Model(model::ModelCommand),
    /// The prediction-first practical: predict each result, then see it computed (progress is kept).
    Session(session::SessionArgs),
    /// The lab in the browser: a local server for the page and the JSON API (POST /api/<command>).
    Serve(serve::ServeArgs),
}

/// The limits of this run (the defaults, raised or lowered by `--max-memory`, `--max-work`,
/// `--max-file-size`).
pub fn limits() -> Limits {
    LIMITS.get().copied().unwrap_or_default()
}

static LIMITS: std::sync::OnceLock<Limits> = std::sync::OnceLock::new();

/// Set while a prompt waits for the student: Ctrl-C then exits at once (exit 130), since the
/// progress is saved after every step and a blocked read would never see the flag.
pub fn exit_on_interrupt() -> &'static AtomicBool {
    static FLAG: AtomicBool = AtomicBool::new(false);
    &FLAG
}

/// Runs one parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    let defaults = Limits::default();
    let limits = Limits {
        max_memory: cli.max_memory.map_or(defaults.max_memory, Count::get),
        max_work: cli.max_work.map_or(defaults.max_work, Count::get),
        max_file_bytes: cli
            .max_file_size
            .map_or(defaults.max_file_bytes, Count::get),
    };
    let _ = LIMITS.set(limits);
    if let Some(n) = cli.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build_global()
            .map_err(|e| anyhow::anyhow!("cannot start {n} worker threads: {e}"))?;
    }
    // The server handles Ctrl-C itself (graceful shutdown).
    if let Command::Serve(a) = cli.command {
        return serve::run(a);
    }
    // Ctrl-C asks long computations to stop at their next check; a second Ctrl-C exits.
    let _ = ctrlc::set_handler(|| {
        let again = interrupted().swap(true, std::sync::atomic::Ordering::SeqCst);
        if again || exit_on_interrupt().load(std::sync::atomic::Ordering::SeqCst) {
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
        Command::Model(cmd) => model::run(cmd),
        Command::Serve(a) => serve::run(a),
    }
}
