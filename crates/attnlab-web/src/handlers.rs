//! The routes: the API (generic over the core's commands), the presets, and the page's assets.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use attnlab_core::api::{self, Context, Report, Request, COMMANDS};
use attnlab_core::ErrorKind;
use axum::body::Body;
use axum::body::HttpBody;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use tokio::sync::{watch, Semaphore};
use tokio::time::Instant;

use crate::assets;

/// What one request may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body, in bytes.
    pub body_bytes: usize,
    /// Longest a request may take, waiting for a worker included; past it the computation is
    /// cancelled and the answer is 503.
    pub time_limit: Duration,
    /// Computations running at once (the others wait their turn).
    pub workers: usize,
    /// Connections served at once; one more is answered 503 and closed ([`crate::serve`]).
    pub max_connections: usize,
    /// Longest wait for a request's headers, from the connection's opening or its previous
    /// answer; past it the connection is closed.
    pub header_timeout: Duration,
    /// Longest wait for a request's whole body; past it the answer is 408.
    pub body_timeout: Duration,
}

impl Default for Limits {
    /// 1 MiB bodies, 60 s per request (the slowest request within the core's caps, an audit at
    /// 2³¹ position-planes, takes about 25 s), one worker per core, 256 connections (a
    /// quarter of the usual 1024 file descriptors), 10 s for headers and 10 s for a body (a
    /// page sends a few hundred bytes).
    fn default() -> Self {
        Limits {
            body_bytes: 1 << 20,
            time_limit: Duration::from_secs(60),
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
        }
    }
}

/// Bytes of an oversized body read and dropped before it is answered 413, at most: a client
/// that sends its whole body before reading (most do) then sees the answer instead of a reset
/// connection. Past this (or past the body timeout) the connection is closed after the answer.
pub const DRAIN_BYTES: u64 = 64 << 20;

struct AppState {
    limits: Limits,
    permits: Arc<Semaphore>,
    shutdown: watch::Receiver<bool>,
    /// Keeps the channel open for routers built without a shutdown signal.
    _keep: Option<watch::Sender<bool>>,
}

/// A command's name in URLs: the CLI's spelling with spaces as slashes (`rope audit` →
/// `rope/audit`).
///
/// ```
/// assert_eq!(attnlab_web::url_name("rope audit"), "rope/audit");
/// ```
pub fn url_name(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join("/")
}

/// The application, with no shutdown signal (tests; [`crate::serve`] uses
/// [`router_with_shutdown`]).
pub fn router(limits: Limits) -> Router {
    let (tx, rx) = watch::channel(false);
    build(limits, rx, Some(tx))
}

/// The application; when `shutdown` turns true, running computations are cancelled.
pub fn router_with_shutdown(limits: Limits, shutdown: watch::Receiver<bool>) -> Router {
    build(limits, shutdown, None)
}

fn build(
    limits: Limits,
    shutdown: watch::Receiver<bool>,
    keep: Option<watch::Sender<bool>>,
) -> Router {
    let state = Arc::new(AppState {
        limits,
        permits: Arc::new(Semaphore::new(limits.workers.max(1))),
        shutdown,
        _keep: keep,
    });
    Router::new()
        .route("/", get(|| async { asset("index.html") }))
        .route(
            "/assets/{name}",
            get(|Path(name): Path<String>| async move { asset(&name) }),
        )
        .route("/api/presets", get(presets))
        .route("/api/commands", get(commands))
        .route("/api/{*command}", any(api))
        .fallback(|uri: Uri| async move {
            error(
                StatusCode::NOT_FOUND,
                format!(
                    "no page {}",
                    attnlab_core::present::text::shorten(uri.path())
                ),
            )
        })
        .with_state(state)
}

/// `{"error": message}` with `status`; the message is one line, as the CLI prints it.
fn error(status: StatusCode, message: impl AsRef<str>) -> Response {
    let line = message.as_ref().replace(['\n', '\r'], " ");
    json_response(status, serde_json::json!({ "error": line }).to_string())
}

fn json_response(status: StatusCode, body: String) -> Response {
    let mut r = (status, body).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn asset(name: &str) -> Response {
    match assets::get(name) {
        Some((mime, body)) => {
            let mut r = body.into_response();
            let h = r.headers_mut();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            h.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
                ),
            );
            h.insert(
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            );
            r
        }
        None => error(
            StatusCode::NOT_FOUND,
            format!("no asset {}", attnlab_core::present::text::shorten(name)),
        ),
    }
}

async fn presets() -> Response {
    let list: Vec<serde_json::Value> = attnlab_core::config::preset_names()
        .into_iter()
        .map(|name| {
            serde_json::json!({
                "name": name,
                "source": attnlab_core::config::preset_source(name),
            })
        })
        .collect();
    json_response(StatusCode::OK, serde_json::Value::Array(list).to_string())
}

async fn commands(State(st): State<Arc<AppState>>) -> Response {
    let body = serde_json::json!({
        "commands": COMMANDS.iter().map(|c| serde_json::json!({
            "name": c,
            "url": format!("/api/{}", url_name(c)),
        })).collect::<Vec<_>>(),
        "limits": {
            "body_bytes": st.limits.body_bytes,
            "time_limit_seconds": st.limits.time_limit.as_secs_f64(),
            "workers": st.limits.workers,
            "max_connections": st.limits.max_connections,
            "header_timeout_seconds": st.limits.header_timeout.as_secs_f64(),
            "body_timeout_seconds": st.limits.body_timeout.as_secs_f64(),
        },
    });
    json_response(StatusCode::OK, body.to_string())
}

/// What the answer holds besides the report.
#[derive(Debug, Default, Clone, Copy)]
struct View {
    charts: bool,
    text: bool,
    /// Answer the request's estimated cost instead of running it.
    estimate: bool,
}

impl View {
    fn parse(query: Option<&str>) -> Result<View, String> {
        let mut v = View::default();
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, val) = pair.split_once('=').unwrap_or((pair, ""));
            match (k, val) {
                ("charts", "svg") => v.charts = true,
                ("charts", "none" | "") => {}
                ("text", "1" | "true") => v.text = true,
                ("text", "0" | "false" | "") => {}
                ("estimate", "1" | "true") => v.estimate = true,
                ("estimate", "0" | "false" | "") => {}
                _ => {
                    return Err(format!(
                        "invalid query parameter: {}; expected charts=svg, text=1 or estimate=1",
                        attnlab_core::present::text::shorten(pair)
                    ))
                }
            }
        }
        Ok(v)
    }

    fn wrapped(self) -> bool {
        self.charts || self.text
    }
}

fn human_bytes(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

async fn api(
    State(st): State<Arc<AppState>>,
    Path(path): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let started = Instant::now();
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let Some(command) = COMMANDS.iter().find(|c| url_name(c) == path) else {
        let known: Vec<String> = COMMANDS.iter().map(|c| url_name(c)).collect();
        return error(
            StatusCode::NOT_FOUND,
            format!(
                "invalid command: {}; expected one of {}",
                attnlab_core::present::text::shorten(&path),
                known.join(", ")
            ),
        );
    };
    if method != Method::POST {
        let mut r = error(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("/api/{path} takes POST with the request as a JSON body (got {method})"),
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    let view = match View::parse(uri.query()) {
        Ok(v) => v,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let bytes = match read_body(body, declared, &st.limits).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let value = if bytes.iter().all(u8::is_ascii_whitespace) {
        serde_json::Value::Object(serde_json::Map::new())
    } else {
        match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(v) => v,
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "malformed JSON body: {e}; expected a JSON object of the command's options"
                    ),
                )
            }
        }
    };
    let request = match Request::from_json(command, value) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    if view.estimate {
        return estimate(&st, &request);
    }
    compute(&st, request, view, started).await
}

/// Reads a request body of at most `limits.body_bytes` within `limits.body_timeout`. A body
/// over the limit (declared by its `Content-Length` or found while reading) is answered 413
/// after up to [`DRAIN_BYTES`] of it are read and dropped; a body that does not arrive in
/// time is answered 408.
async fn read_body(
    mut body: Body,
    declared: Option<u64>,
    limits: &Limits,
) -> Result<Vec<u8>, Response> {
    let limit = limits.body_bytes;
    let deadline = Instant::now() + limits.body_timeout;
    let mut bytes = Vec::new();
    let mut seen: u64 = 0;
    let mut over = declared.is_some_and(|n| n > limit as u64);
    let mut ended = false;
    while !(over && seen > DRAIN_BYTES) {
        let next = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx));
        match tokio::time::timeout_at(deadline, next).await {
            Err(_) if over => break,
            Err(_) => {
                let mut r = error(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the request body did not arrive within the server's {} s ({} of it came); send the whole body at once",
                        attnlab_core::present::number::short(limits.body_timeout.as_secs_f64()),
                        human_bytes(usize::try_from(seen).unwrap_or(usize::MAX))
                    ),
                );
                close(&mut r);
                return Err(r);
            }
            Ok(None) => {
                ended = true;
                break;
            }
            Ok(Some(Err(_))) => {
                // The client went away or sent a malformed body: nobody reads an answer.
                let mut r = error(
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read",
                );
                close(&mut r);
                return Err(r);
            }
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    seen = seen.saturating_add(data.len() as u64);
                    if seen > limit as u64 {
                        over = true;
                        bytes = Vec::new();
                    } else {
                        bytes.extend_from_slice(&data);
                    }
                }
            }
        }
    }
    if !over {
        return Ok(bytes);
    }
    let size = match declared {
        Some(n) => format!("a body of {}", attnlab_core::present::number::bytes(n)),
        None => "the body".into(),
    };
    let mut r = error(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "{size} is over this server's limit of {} per request; send the command's options, not data",
            human_bytes(limit)
        ),
    );
    if !ended {
        close(&mut r);
    }
    Err(r)
}

/// Marks an answer as the connection's last.
fn close(r: &mut Response) {
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
}

/// A budget refusal in the server's words: the core names the CLI option that raises the
/// limit, which a page's user cannot pass; the server's limits are fixed, so say so.
fn server_wording(message: &str) -> String {
    let mut m = message.to_string();
    for flag in ["--max-memory", "--max-work", "--max-file-size"] {
        m = m.replace(
            &format!("(raise it with {flag})"),
            "(the most this server runs per request; ask for less)",
        );
    }
    m
}

/// `?estimate=1`: the request's budget (the core's estimate of its peak memory and operations,
/// the numbers `run` checks before allocating) beside this server's limits, without running it,
/// so a page can say what a long request costs before sending it.
fn estimate(st: &AppState, request: &Request) -> Response {
    use attnlab_core::present::number;
    let b = api::budget(request);
    let limits = attnlab_core::limits::Limits::default();
    let within = b.bytes <= limits.max_memory && b.ops <= limits.max_work;
    let body = serde_json::json!({
        "command": request.command(),
        "bytes": b.bytes,
        "ops": b.ops,
        "text": format!(
            "about {} of memory and {} operations (the limits: {} and {})",
            number::bytes(b.bytes),
            number::ops(b.ops),
            number::bytes(limits.max_memory),
            number::ops(limits.max_work)
        ),
        "max_memory": limits.max_memory,
        "max_work": limits.max_work,
        "within_limits": within,
        "time_limit_seconds": st.limits.time_limit.as_secs_f64(),
    });
    json_response(StatusCode::OK, body.to_string())
}

/// Sets the cancellation flag when dropped: when the client goes away (a page's cancel
/// button aborts its fetch), axum drops the handler's future and the computation stops at the
/// core's next check instead of running to its deadline.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The answer of one computation, built on the worker (serialising a large report is work too).
enum Answer {
    Ok { body: String, outcome: &'static str },
    Err(attnlab_core::Error),
}

fn answer(request: &Request, view: View, cancel: &AtomicBool) -> Answer {
    let ctx = Context {
        progress: &|_, _| {},
        cancel: Some(cancel),
        allow_files: false,
        // The core's default work and memory limits: a request over them is a 400 naming the
        // estimate and the limit, like the CLI's exit 2.
        limits: attnlab_core::limits::Limits::default(),
    };
    let report = match api::run_with(request, &ctx) {
        Ok(r) => r,
        Err(e) => return Answer::Err(e),
    };
    let outcome = if report.outcome().holds() {
        "holds"
    } else {
        "fails"
    };
    match body(&report, view, outcome) {
        Ok(body) => Answer::Ok { body, outcome },
        Err(e) => Answer::Err(e),
    }
}

/// The report's JSON exactly as `attnlab <command> --json` prints it (pretty, one trailing
/// newline), or the wrapped view. The report is never round-tripped through
/// `serde_json::Value`, which would widen f32 values.
fn body(report: &Report, view: View, outcome: &str) -> attnlab_core::Result<String> {
    let json = |r: &Report, pretty: bool| {
        if pretty {
            serde_json::to_string_pretty(r)
        } else {
            serde_json::to_string(r)
        }
        .map_err(|e| attnlab_core::Error::write("the report", e))
    };
    if !view.wrapped() {
        let mut s = json(report, true)?;
        s.push('\n');
        return Ok(s);
    }
    let mut s = format!(
        r#"{{"outcome":"{outcome}","report":{}"#,
        json(report, false)?
    );
    if view.charts {
        let mut charts = Vec::new();
        for c in report.charts() {
            charts.push(serde_json::json!({
                "name": c.name,
                "title": c.title,
                "svg": attnlab_render::svg::render(&c)?,
            }));
        }
        s.push_str(&format!(
            r#","charts":{}"#,
            serde_json::Value::Array(charts)
        ));
    }
    if view.text {
        let text = attnlab_render::text::render(report);
        s.push_str(&format!(r#","text":{}"#, serde_json::Value::String(text)));
    }
    s.push('}');
    Ok(s)
}

async fn compute(st: &AppState, request: Request, view: View, started: Instant) -> Response {
    let limit = st.limits.time_limit;
    let deadline = started + limit;
    let over_time = || {
        error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "{} did not finish within the server's time limit of {} s; ask for less work (or start the server with a longer --time-limit)",
                request.command(),
                attnlab_core::present::number::short(limit.as_secs_f64())
            ),
        )
    };
    let permit = match tokio::time::timeout_at(deadline, st.permits.clone().acquire_owned()).await {
        Ok(Ok(p)) => p,
        Ok(Err(_)) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down",
            )
        }
        Err(_) => return over_time(),
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let _cancel_on_drop = CancelOnDrop(Arc::clone(&cancel));
    let req = request.clone();
    let mut task = tokio::task::spawn_blocking(move || {
        // The permit is held until the computation really ends, cancelled or not.
        let _permit = permit;
        answer(&req, view, &flag)
    });
    let mut shutdown = st.shutdown.clone();
    let result = tokio::select! {
        r = &mut task => r,
        () = tokio::time::sleep_until(deadline) => {
            cancel.store(true, Ordering::Relaxed);
            return over_time();
        }
        _ = shutdown.wait_for(|down| *down) => {
            cancel.store(true, Ordering::Relaxed);
            return error(StatusCode::SERVICE_UNAVAILABLE, "the server is shutting down");
        }
    };
    match result {
        Ok(Answer::Ok { body, outcome }) => {
            let mut r = json_response(StatusCode::OK, body);
            r.headers_mut()
                .insert("x-attnlab-outcome", HeaderValue::from_static(outcome));
            r
        }
        Ok(Answer::Err(e)) if e.kind() == ErrorKind::Cancelled => over_time(),
        Ok(Answer::Err(e)) if e.kind() == ErrorKind::Write => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("internal error rendering the report (a bug in attnlab): {e}"),
        ),
        Ok(Answer::Err(e)) if e.kind() == ErrorKind::Limit => {
            error(StatusCode::BAD_REQUEST, server_wording(&e.to_string()))
        }
        Ok(Answer::Err(e)) => error(StatusCode::BAD_REQUEST, e.to_string()),
        Err(join) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "internal error in {} (a bug in attnlab, please report it with the request): {join}",
                request.command()
            ),
        ),
    }
}
