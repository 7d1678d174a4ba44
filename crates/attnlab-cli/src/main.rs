//! The `attnlab` command-line front end: parse, call the library, render. No math lives here.

mod cli;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::FromArgMatches;

/// The longest error line printed (the core's messages are far shorter; this is the last guard
/// against a value echoed whole).
const MAX_LINE: usize = 400;

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`attnlab … | head`), as Unix filters do, instead of
    // panicking inside println!.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let (args, matches) = match command()
        .try_get_matches()
        .and_then(|m| Ok((cli::Cli::from_arg_matches(&m)?, m)))
    {
        Ok(parsed) => parsed,
        Err(e) => return usage_error(e),
    };
    match cli::run(args, &matches) {
        Ok(cli::Outcome::Holds) => ExitCode::SUCCESS,
        Ok(cli::Outcome::Fails) => ExitCode::from(1),
        Err(err) => {
            // A closed pipe (`attnlab … | head`) is not an error worth reporting.
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            let cancelled = err
                .downcast_ref::<attnlab_core::Error>()
                .is_some_and(|e| e.kind() == attnlab_core::ErrorKind::Cancelled);
            let line = error_line(&err);
            if cancelled {
                eprintln!("interrupted: {line}");
                return ExitCode::from(130);
            }
            eprintln!("error: {line}");
            ExitCode::from(2)
        }
    }
}

/// Prints `--help`/`--version` as clap renders them; folds any usage error into one line on
/// stderr (exit 2), keeping clap's hint about the accepted values.
fn usage_error(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            if let Err(io) = e.print() {
                if io.kind() != std::io::ErrorKind::BrokenPipe {
                    eprintln!("error: cannot write standard output: {io}");
                    return ExitCode::from(2);
                }
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
        ErrorKind::ValueValidation => {
            use clap::error::{ContextKind, ContextValue};
            let text = |k| match e.get(k) {
                Some(ContextValue::String(s)) => Some(s.clone()),
                _ => None,
            };
            let arg = text(ContextKind::InvalidArg).unwrap_or_default();
            // `--context <CONTEXT>` → `--context`.
            let arg = arg.split(' ').next().unwrap_or_default().to_string();
            let value = attnlab_core::present::text::shorten(
                &text(ContextKind::InvalidValue).unwrap_or_default(),
            );
            let reason = std::error::Error::source(&e)
                .map(ToString::to_string)
                .unwrap_or_else(|| "not accepted".into());
            // The core's messages echo the (shortened) value themselves: say it once.
            let line = if reason.contains(&value) {
                format!("invalid value for {arg}: {reason} (see --help)")
            } else {
                format!("invalid value '{value}' for {arg}: {reason} (see --help)")
            };
            eprintln!("error: {}", cap(&line));
            ExitCode::from(2)
        }
        _ => {
            let text = e.render().to_string();
            let parts: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| {
                    !l.is_empty()
                        && !l.starts_with("For more information")
                        && !l.starts_with("Usage:")
                })
                .collect();
            eprintln!(
                "{}",
                cap(&format!(
                    "{} (see --help)",
                    shorten_quoted(&parts.join(" "))
                ))
            );
            ExitCode::from(2)
        }
    }
}

/// The command line's grammar (`cli::command`), with every option that takes a value
/// accepting a negative number as its value (`--max-sep -3` is then refused by the option's
/// own parser, naming the option, instead of being read as an unknown flag `-3`).
fn command() -> clap::Command {
    fn negatives(cmd: clap::Command) -> clap::Command {
        let cmd = cmd.mut_args(|a| {
            if a.get_action().takes_values() {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        });
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        names
            .iter()
            .fold(cmd, |c, name| c.mut_subcommand(name, negatives))
    }
    negatives(cli::command())
}

/// One line for an error: the message, then each cause whose text it does not already
/// contain (core errors carry their source's text in their message), control characters
/// escaped, at most [`MAX_LINE`] characters.
fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    cap(&line)
}

/// Control characters escaped (a raw newline never splits the line), cut to [`MAX_LINE`].
fn cap(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if out.chars().count() > MAX_LINE {
        let cut: String = out.chars().take(MAX_LINE - 1).collect();
        return format!("{cut}…");
    }
    out
}

/// clap quotes the values it complains about (`invalid value '…' for '--n <N>'`): each quoted
/// part is shortened like every echoed value.
fn shorten_quoted(text: &str) -> String {
    text.split('\'')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                attnlab_core::present::text::shorten(part)
            } else {
                part.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("'")
}
