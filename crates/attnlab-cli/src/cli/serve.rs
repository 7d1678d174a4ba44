//! `attnlab serve`: the lab in the browser (built with the `serve` feature).

use super::Outcome;

/// The lab in the browser: a local server for the page and the JSON API (POST /api/<command>).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on; loopback unless you ask otherwise (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub addr: std::net::SocketAddr,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
    /// Longest one request may compute, in seconds, before it is cancelled (answer 503).
    #[arg(long, default_value_t = 60.0)]
    pub time_limit: f64,
}

#[cfg(feature = "serve")]
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    if !(args.time_limit.is_finite() && args.time_limit > 0.0 && args.time_limit <= 86_400.0) {
        return Err(attnlab_core::Error::invalid(
            "--time-limit",
            args.time_limit,
            "seconds in (0, 86400]",
        )
        .into());
    }
    let limits = attnlab_web::Limits {
        time_limit: std::time::Duration::from_secs_f64(args.time_limit),
        ..attnlab_web::Limits::default()
    };
    attnlab_web::run(attnlab_web::ServeOptions {
        addr: args.addr,
        open: args.open,
        limits,
    })?;
    Ok(Outcome::Holds)
}

#[cfg(not(feature = "serve"))]
pub fn run(_args: Args) -> anyhow::Result<Outcome> {
    Err(anyhow::anyhow!(
        "attnlab serve is not in this build; build it with the serve feature: cargo install --path crates/attnlab-cli --features serve (or, in the repository, cargo run --release --features serve -- serve)"
    ))
}
