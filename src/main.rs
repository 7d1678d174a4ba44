//! The `attnlab` command-line front end: parse, call the library, render. No math lives here.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`attnlab … | head`), as Unix filters do, instead of
    // panicking inside println!.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = cli::Cli::parse();
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
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
