//! Starting and stopping the server: bind, warn about non-loopback addresses, serve until
//! Ctrl-C, then let running requests finish (their computations are cancelled).
//!
//! The accept loop is ours (hyper's HTTP/1 connection on tokio), so that a hostile client
//! cannot hold the server's resources:
//! * at most [`Limits::max_connections`] connections are served at once; one more is answered
//!   at once with 503 and `{"error": …}` naming the limit and closed (at most
//!   [`REFUSING`] such answers are in flight; past that a connection is closed unanswered), so
//!   the open file descriptors stay bounded whatever a client opens;
//! * a connection must send a request's headers within [`Limits::header_timeout`] of opening or
//!   of its previous answer (hyper's header read timeout, which also closes idle keep-alive
//!   connections), and its body within [`Limits::body_timeout`] (answered 408 by the handler).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

use crate::handlers::{router_with_shutdown, Limits};

/// Connections over the cap being answered 503 at once, at most (the rest are closed).
pub const REFUSING: usize = 64;

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
    let app = router_with_shutdown(limits, rx.clone());
    let connections = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let refusing = Arc::new(Semaphore::new(REFUSING));
    let mut tasks = tokio::task::JoinSet::new();
    let shutdown = std::pin::pin!(shutdown);
    let mut shutdown = shutdown;
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut shutdown => break,
        };
        while tasks.try_join_next().is_some() {}
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of file descriptors or a connection reset before it was accepted: wait a
            // little (the descriptors come back as connections close) and go on.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            if let Ok(slot) = Arc::clone(&refusing).try_acquire_owned() {
                tasks.spawn(async move {
                    let _slot = slot;
                    refuse(stream, limits.max_connections).await;
                });
            }
            continue;
        };
        let service = TowerToHyperService::new(app.clone());
        let mut down = rx.clone();
        tasks.spawn(async move {
            let _permit = permit;
            let _ = stream.set_nodelay(true);
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .keep_alive(true);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = down.wait_for(|d| *d) => {}
            }
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        });
    }
    let _ = tx.send(true);
    drop(listener);
    while tasks.join_next().await.is_some() {}
    Ok(())
}

/// Answers a connection over the cap with 503 and closes it: the answer is written, the
/// sending side shut, and what the client sent read and dropped for up to a second (so the
/// close does not reset the connection before the client has read the answer).
async fn refuse(mut stream: TcpStream, cap: usize) {
    let body = serde_json::json!({
        "error": format!(
            "the server has {cap} connections open, its limit; try again when one has closed"
        )
    })
    .to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\nretry-after: 1\r\n\r\n{body}",
        body.len()
    );
    let linger = async {
        if stream.write_all(answer.as_bytes()).await.is_ok() {
            let _ = stream.shutdown().await;
            let mut sink = [0u8; 4096];
            while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), linger).await;
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
