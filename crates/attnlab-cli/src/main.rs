//! The `attnlab` command-line front end: parse, call the library, render. No math lives here.

mod cli;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`attnlab … | head`), as Unix filters do, instead of
    // panicking inside println!.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => return usage_error(e),
    };
    match cli::run(args) {
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
            // One line, whatever the message holds (values are escaped where they are echoed;
            // this is the last guard).
            let line = format!("{err:#}").replace(['\n', '\r'], " ");
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
            let _ = e.print();
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
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
            eprintln!("{} (see --help)", parts.join(" "));
            ExitCode::from(2)
        }
    }
}
