//! Starting and stopping the server: bind, warn about non-loopback addresses, serve until
//! Ctrl-C, then let running requests finish (their computations are cancelled).

use std::future::Future;
use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::handlers::{router_with_shutdown, Limits};

/// The address `attnlab serve` listens on unless told otherwise (loopback only).
pub const DEFAULT_ADDR: &str = "127.0.0.1:8787";

/// How `attnlab serve` runs.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Where to listen (port 0 picks a free port; the chosen address is printed).
    pub addr: SocketAddr,
    /// Open the page in the default browser once listening.
    pub open: bool,
    /// Per-request limits.
    pub limits: Limits,
}

/// Serves on `listener` until `shutdown` completes; then running computations are cancelled
/// and open requests answered before it returns.
///
/// # Errors
/// The listener fails.
pub async fn serve(
    listener: TcpListener,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (tx, rx) = watch::channel(false);
    let app = router_with_shutdown(limits, rx);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            let _ = tx.send(true);
        })
        .await
}

/// Runs `attnlab serve`: binds `opts.addr`, prints `listening on http://ADDR/` on stderr (a
/// warning first when the address is not loopback), serves until Ctrl-C.
///
/// # Errors
/// The address cannot be bound, or the runtime cannot start.
pub fn run(opts: ServeOptions) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(opts.limits.workers.max(1) + 2)
        .thread_name("attnlab-serve")
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(opts.addr).await.map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot listen on {}: {e}", opts.addr))
        })?;
        let addr = listener.local_addr()?;
        if !addr.ip().is_loopback() {
            eprintln!(
                "warning: listening on {addr}, which other machines can reach; attnlab serve has no authentication (use 127.0.0.1 unless you mean to share it)"
            );
        }
        // Registered before the address is announced, so a Ctrl-C right after it is not lost.
        let stop = interrupt()?;
        let url = format!("http://{addr}/");
        eprintln!("attnlab serve: listening on {url} (Ctrl-C stops)");
        if opts.open {
            open_browser(&url);
        }
        serve(listener, opts.limits, async move {
            stop.await;
            eprintln!("attnlab serve: stopping (finishing open requests)");
        })
        .await
    })
}

/// A future that completes on Ctrl-C (SIGINT) or SIGTERM, listening from the moment it is made.
#[cfg(unix)]
fn interrupt() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
    })
}

/// A future that completes on Ctrl-C.
#[cfg(not(unix))]
fn interrupt() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// Asks the desktop to open `url`; says so on stderr when it cannot.
fn open_browser(url: &str) {
    let tries: &[(&str, &[&str])] = if cfg!(target_os = "macos") {
        &[("open", &[])]
    } else if cfg!(windows) {
        &[("cmd", &["/C", "start", ""])]
    } else {
        &[("xdg-open", &[]), ("sensible-browser", &[])]
    };
    for (program, args) in tries {
        let spawned = std::process::Command::new(program)
            .args(*args)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if spawned.is_ok() {
            return;
        }
    }
    eprintln!("attnlab serve: could not open a browser; open {url} yourself");
}
