//! The command line: the global options (clap derive), and the command tree generated from the
//! core's command table (`attnlab_core::for_each_command!`). Each command lives in its own file,
//! `cli/<file>.rs` (the table's `file` name), holding its clap `Args` (the struct's doc comment is
//! the command's help) and `run(Args)`, which returns an [`Outcome`]; errors become one line on
//! stderr and exit code 2 (see `main.rs`).

mod common;
mod exec;
mod model;
mod rope;
mod serve;

use clap::{ArgMatches, Args as _, CommandFactory as _, FromArgMatches as _, Parser};

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
}

/// One command of the table: its name as the CLI spells it, its grammar and how it runs.
struct Entry {
    name: &'static str,
    args: fn(clap::Command) -> clap::Command,
    run: fn(&ArgMatches) -> anyhow::Result<Outcome>,
}

/// The CLI's half of the command table: `mod <file>;` for each command and the table of entries
/// (a command without its `cli/<file>.rs`, or whose file lacks `Args` or `run`, does not
/// compile).
macro_rules! entries {
    ($(
        $(#[$meta:meta])*
        $variant:ident / $file:ident = $name:literal => $($module:ident)::+ :: { $req:ident, $rep:ident }
    ),+ $(,)?) => {
        $( mod $file; )+

        const TABLE: &[Entry] = &[$(
            Entry {
                name: $name,
                args: $file::Args::augment_args,
                run: |m| $file::run($file::Args::from_arg_matches(m)?),
            },
        )+];
    };
}

attnlab_core::for_each_command!(entries);

/// The help of each command group (`attnlab rope`, `attnlab model`; one sentence, no final
/// period, as clap writes a doc comment's).
const GROUPS: &[(&str, &str)] = &[
    (
        "rope",
        "Rotary position embeddings: the relative-position identity, scores, periods, resolution, audits",
    ),
    (
        "model",
        "A real trained model (GGUF or a Hugging Face directory): its file, its tokenizer on a real embedding table, next-token prediction, and where token order enters",
    ),
];

/// The command line's grammar: the global options, then every command of the table in its
/// order (a name with a space is a subcommand of its group), then `serve`.
pub fn command() -> clap::Command {
    let mut cli = Cli::command()
        .subcommand_required(true)
        .arg_required_else_help(true);
    for entry in TABLE {
        let cmd = |name: &'static str| (entry.args)(clap::Command::new(name));
        cli = match entry.name.split_once(' ') {
            None => cli.subcommand(cmd(entry.name)),
            Some((group, sub)) => {
                if cli.find_subcommand(group).is_none() {
                    let about = GROUPS.iter().find(|(g, _)| *g == group).map(|(_, a)| *a);
                    cli = cli.subcommand(
                        clap::Command::new(group)
                            .subcommand_required(true)
                            .arg_required_else_help(true)
                            .about(about)
                            .long_about(None::<&str>),
                    );
                }
                cli.mut_subcommand(group, |g| g.subcommand(cmd(sub)))
            }
        };
    }
    cli.subcommand(serve::Args::augment_args(clap::Command::new("serve")))
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

/// Runs one parsed command line: `cli` holds the global options, `matches` the whole line.
pub fn run(cli: Cli, matches: &ArgMatches) -> anyhow::Result<Outcome> {
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
    let Some((name, m)) = matches.subcommand() else {
        anyhow::bail!("no command given (see --help)");
    };
    if name == "serve" {
        return serve::run(serve::Args::from_arg_matches(m)?);
    }
    // Ctrl-C asks long computations to stop at their next check; a second Ctrl-C exits.
    let _ = ctrlc::set_handler(|| {
        let again = interrupted().swap(true, std::sync::atomic::Ordering::SeqCst);
        if again || exit_on_interrupt().load(std::sync::atomic::Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    // A group's subcommand is named "group sub" in the table.
    let (name, m) = match m.subcommand() {
        Some((sub, leaf)) => (format!("{name} {sub}"), leaf),
        None => (name.to_string(), m),
    };
    let entry = TABLE
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| anyhow::anyhow!("unknown command {name} (see --help)"))?;
    (entry.run)(m)
}

#[cfg(test)]
mod tests {
    /// The generated tree: clap's own consistency checks pass, every command of the core's
    /// table is reachable under its name, and every command and group has its help line (a new
    /// group without a line in `GROUPS` fails here).
    #[test]
    fn every_command_of_the_table_is_in_the_tree_with_its_help() {
        let cli = super::command();
        cli.clone().debug_assert();
        for name in attnlab_core::api::COMMANDS {
            let mut cmd = &cli;
            for part in name.split(' ') {
                cmd = cmd
                    .find_subcommand(part)
                    .unwrap_or_else(|| panic!("`{name}` is not in the command tree"));
                assert!(
                    cmd.get_about().is_some(),
                    "`{part}` of `{name}` has no help"
                );
            }
            assert_eq!(cmd.get_subcommands().count(), 0, "`{name}` is a leaf");
        }
        assert!(cli.find_subcommand("serve").is_some());
    }
}
