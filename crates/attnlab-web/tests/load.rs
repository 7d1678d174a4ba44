//! A bounded load test on loopback: 8 concurrent clients send 2,000 requests that mix cheap
//! and expensive endpoints to a real server; every answer must be byte-for-byte the expected
//! one, and the server must still answer promptly afterwards. Prints requests/s and p50/p99.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use attnlab_core::api::{self, Request};
use attnlab_web::testing::{get, post, without_timings};
use attnlab_web::{serve, Limits};

const CLIENTS: usize = 8;
const REQUESTS: usize = 2000;

/// (method, path, body, expected status, expected body).
type Case = (&'static str, &'static str, &'static str, u16, String);

fn report(command: &str, body: &str) -> String {
    let req = Request::from_json(command, serde_json::from_str(body).unwrap()).unwrap();
    serde_json::to_string_pretty(&api::run(&req).unwrap()).unwrap() + "\n"
}

fn cases() -> Vec<Case> {
    let presets = {
        let list: Vec<serde_json::Value> = attnlab_core::config::preset_names()
            .into_iter()
            .map(|n| serde_json::json!({"name": n, "source": attnlab_core::config::preset_source(n)}))
            .collect();
        serde_json::Value::Array(list).to_string()
    };
    let bad = r#"{"perm": [0, 0]}"#;
    let bad_msg = {
        let req = Request::from_json("equivariance", serde_json::from_str(bad).unwrap()).unwrap();
        let e = api::run(&req).unwrap_err().to_string();
        serde_json::json!({ "error": e }).to_string()
    };
    let cheap_attend = r#"{"text": "A B . A"}"#;
    let score = r#"{"omega": "pi/2,pi/3", "max_sep": 64}"#;
    let perm = r#"{"text": "A B . A", "perm": [2, 0, 3, 1], "pos": "index"}"#;
    // Expensive: all 120 permutations of 5 positions, with controls and the f32 diagnosis
    // (~0.15 s in a debug build, ~100 times the cheap requests).
    let exhaustive = r#"{"n": 5, "exhaustive": true}"#;
    vec![
        ("GET", "/api/presets", "", 200, presets),
        (
            "POST",
            "/api/attend",
            cheap_attend,
            200,
            report("attend", cheap_attend),
        ),
        (
            "POST",
            "/api/equivariance",
            perm,
            200,
            report("equivariance", perm),
        ),
        ("POST", "/api/equivariance", bad, 400, bad_msg),
        (
            "POST",
            "/api/equivariance",
            exhaustive,
            200,
            report("equivariance", exhaustive),
        ),
        (
            "POST",
            "/api/rope/score",
            score,
            200,
            report("rope score", score),
        ),
    ]
}

/// Which case the i-th request uses: one in twenty expensive, the rest cheap.
fn pick(i: usize) -> usize {
    match i % 20 {
        0 => 4,
        1..=3 => 0,
        4 | 5 => 5,
        6..=11 => 1,
        12..=17 => 2,
        _ => 3,
    }
}

#[test]
fn eight_clients_two_thousand_requests_all_correct_and_still_responsive() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = runtime.spawn(serve(listener, Limits::default(), async {
        let _ = stop_rx.await;
    }));

    let cases = Arc::new(cases());
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(REQUESTS)));
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (cases, latencies, next) = (cases.clone(), latencies.clone(), next.clone());
            std::thread::spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= REQUESTS {
                    return;
                }
                let (method, path, body, status, expected) = &cases[pick(i)];
                let t = Instant::now();
                let a = if *method == "GET" {
                    get(addr, path)
                } else {
                    post(addr, path, body)
                }
                .unwrap_or_else(|e| panic!("request {i} {path}: {e}"));
                let dt = t.elapsed();
                assert_eq!(a.status, *status, "request {i} {path} {body}: {}", a.body);
                assert_eq!(
                    without_timings(&a.body),
                    without_timings(expected),
                    "request {i} {path} {body}"
                );
                latencies.lock().unwrap().push((pick(i), dt));
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a client failed");
    }
    let elapsed = started.elapsed();

    // Still responsive: the page and a cheap request answer at once.
    let t = Instant::now();
    assert_eq!(get(addr, "/").unwrap().status, 200);
    assert_eq!(get(addr, "/api/presets").unwrap().status, 200);
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "slow after the load: {:?}",
        t.elapsed()
    );

    let mut all: Vec<Duration> = latencies.lock().unwrap().iter().map(|l| l.1).collect();
    assert_eq!(all.len(), REQUESTS);
    all.sort();
    let q =
        |v: &[Duration], p: f64| v[((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1];
    let mut cheap: Vec<Duration> = latencies
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.0 != 4)
        .map(|l| l.1)
        .collect();
    cheap.sort();
    eprintln!(
        "load: {REQUESTS} requests from {CLIENTS} clients in {:.2} s = {:.0} requests/s; latency p50 {:.1} ms, p99 {:.1} ms (cheap requests only: p50 {:.1} ms, p99 {:.1} ms; {} build)",
        elapsed.as_secs_f64(),
        REQUESTS as f64 / elapsed.as_secs_f64(),
        q(&all, 0.50).as_secs_f64() * 1e3,
        q(&all, 0.99).as_secs_f64() * 1e3,
        q(&cheap, 0.50).as_secs_f64() * 1e3,
        q(&cheap, 0.99).as_secs_f64() * 1e3,
        if cfg!(debug_assertions) { "debug" } else { "release" },
    );

    let _ = stop_tx.send(());
    runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), server).await })
        .expect("graceful shutdown within 10 s")
        .unwrap()
        .unwrap();
}
