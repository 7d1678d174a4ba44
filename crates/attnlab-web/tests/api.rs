//! The API through the router (tower's `oneshot`, no socket): every command answers exactly
//! what the core's report serialises to (the CLI prints the same; `attnlab-cli/tests/serve.rs`
//! compares with the binary), and bad input of every kind gets 400 with the CLI's message.

use std::time::Duration;

use attnlab_core::api::{self, Request, COMMANDS};
use attnlab_web::testing::without_timings;
use attnlab_web::{router, url_name, Limits};
use axum::body::Body;
use axum::http::{Method, Request as HttpRequest, StatusCode};
use tower::ServiceExt;

struct Answer {
    status: StatusCode,
    content_type: String,
    outcome: Option<String>,
    body: String,
}

async fn call_with(limits: Limits, method: Method, uri: &str, body: impl Into<Body>) -> Answer {
    let req = HttpRequest::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(body.into())
        .unwrap();
    let res = router(limits).oneshot(req).await.unwrap();
    let status = res.status();
    let header = |n: &str| {
        res.headers()
            .get(n)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let content_type = header("content-type").unwrap_or_default();
    let outcome = header("x-attnlab-outcome");
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    Answer {
        status,
        content_type,
        outcome,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

async fn post(uri: &str, body: &str) -> Answer {
    call_with(Limits::default(), Method::POST, uri, body.to_string()).await
}

fn error_of(a: &Answer) -> String {
    let v: serde_json::Value = serde_json::from_str(&a.body).expect("errors are JSON");
    v["error"].as_str().expect("an error field").to_string()
}

/// What `attnlab <command> --json` prints for `body`: the report's pretty JSON and a newline,
/// or the error message.
fn expected(command: &str, body: &str) -> Result<(String, &'static str), String> {
    let value: serde_json::Value = serde_json::from_str(body).unwrap();
    let req = Request::from_json(command, value).map_err(|e| e.to_string())?;
    let ctx = api::Context {
        allow_files: false,
        ..Default::default()
    };
    let report = api::run_with(&req, &ctx).map_err(|e| e.to_string())?;
    let outcome = if report.outcome().holds() {
        "holds"
    } else {
        "fails"
    };
    Ok((
        serde_json::to_string_pretty(&report).unwrap() + "\n",
        outcome,
    ))
}

async fn assert_same(command: &str, body: &str) {
    let a = post(&format!("/api/{}", url_name(command)), body).await;
    match expected(command, body) {
        Ok((json, outcome)) => {
            assert_eq!(a.status, StatusCode::OK, "{command} {body}: {}", a.body);
            assert_eq!(a.content_type, "application/json");
            assert!(a.body.ends_with('\n'), "{command} {body}: the CLI's layout");
            assert_eq!(
                without_timings(&a.body),
                without_timings(&json),
                "{command} {body}"
            );
            assert_eq!(a.outcome.as_deref(), Some(outcome));
        }
        Err(message) => {
            assert_eq!(
                a.status,
                StatusCode::BAD_REQUEST,
                "{command} {body}: {}",
                a.body
            );
            assert_eq!(error_of(&a), message);
        }
    }
}

#[tokio::test]
async fn every_command_answers_its_report_for_the_defaults() {
    for command in COMMANDS {
        assert_same(command, "{}").await;
    }
}

#[tokio::test]
async fn requests_with_options_answer_the_same_report() {
    for (command, body) in [
        (
            "equivariance",
            r#"{"rng": "numpy", "seed": 0, "n": 4, "dim": 4, "perm": [2, 0, 3, 1]}"#,
        ),
        (
            "equivariance",
            r#"{"text": "A B . A", "perm": "2,0,3,1", "pos": "index"}"#,
        ),
        (
            "equivariance",
            r#"{"layer": "rnn", "n": 3, "exhaustive": true}"#,
        ),
        (
            "equivariance",
            r#"{"mask": "causal", "dtype": "f32", "samples": 5, "perm_seed": 3}"#,
        ),
        ("attend", r#"{"text": "A B .", "pos": "rope", "heads": 1}"#),
        ("attend", r#"{"blocks": {"X": [[1, 0], [0, 1], [1, 1]]}}"#),
    ] {
        assert_same(command, body).await;
    }
}

#[tokio::test]
async fn an_empty_body_means_the_defaults() {
    let a = post("/api/equivariance", "").await;
    let (json, _) = expected("equivariance", "{}").unwrap();
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(without_timings(&a.body), without_timings(&json));
}

#[tokio::test]
async fn malformed_json_is_a_400_with_a_message() {
    let a = post("/api/equivariance", "{\"n\": 4,").await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert!(
        error_of(&a).starts_with("malformed JSON body: "),
        "{}",
        a.body
    );
    let a = post("/api/equivariance", "[1, 2]").await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert!(error_of(&a).contains("a JSON object"), "{}", a.body);
}

#[tokio::test]
async fn wrong_types_and_unknown_fields_are_400s_naming_them() {
    let a = post("/api/equivariance", r#"{"n": "four"}"#).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert!(error_of(&a).contains("four"), "{}", a.body);
    let a = post("/api/equivariance", r#"{"nn": 4}"#).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    let e = error_of(&a);
    assert!(e.contains("nn") && e.contains("perm"), "{e}");
    let a = post("/api/equivariance", r#"{"perm": [0, 0, 1, 2]}"#).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    assert_eq!(
        Some(error_of(&a)),
        expected("equivariance", r#"{"perm": [0, 0, 1, 2]}"#).err()
    );
}

#[tokio::test]
async fn values_over_the_cores_caps_are_400s() {
    // No token cap any more: the budget refuses n = 10⁸, in the server's words.
    let a = post("/api/equivariance", r#"{"n": 100000000}"#).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    let e = error_of(&a);
    assert!(
        e.contains("n = 100000000") && e.contains("the most this server runs"),
        "{e}"
    );
    for body in [r#"{"exhaustive": true, "n": 12}"#, r#"{"heads": 0}"#] {
        let a = post("/api/equivariance", body).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{body}: {}", a.body);
        assert_eq!(
            Some(error_of(&a)),
            expected("equivariance", body).err(),
            "{body}"
        );
    }
}

#[tokio::test]
async fn an_oversized_body_is_a_413_stating_the_limit() {
    let limits = Limits::default();
    let big = format!(r#"{{"text": "{}"}}"#, "A ".repeat(limits.body_bytes));
    let a = call_with(limits, Method::POST, "/api/attend", big).await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        error_of(&a).contains("over this server's limit of 1 MiB per request"),
        "{}",
        a.body
    );
}

#[tokio::test]
async fn budget_refusals_say_what_the_server_allows_not_cli_options() {
    let a = post("/api/attend", r#"{"n": 4096, "dim": 4096}"#).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    let e = error_of(&a);
    assert!(
        e.contains("over the limit of 1 GiB")
            && e.contains("the most this server runs per request")
            && !e.contains("--max-"),
        "{e}"
    );
}

#[tokio::test]
async fn requests_cannot_name_files() {
    let a = post("/api/attend", r#"{"blocks": "/etc/passwd"}"#).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    let e = error_of(&a);
    assert!(
        e.contains("/etc/passwd") && e.contains("reads no files"),
        "{e}"
    );
}

#[tokio::test]
async fn unknown_commands_and_wrong_methods_are_json_errors() {
    let a = post("/api/nope", "{}").await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert!(error_of(&a).contains("equivariance"));
    let a = call_with(
        Limits::default(),
        Method::GET,
        "/api/equivariance",
        Body::empty(),
    )
    .await;
    assert_eq!(a.status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(error_of(&a).contains("POST"));
    let a = call_with(Limits::default(), Method::GET, "/nowhere", Body::empty()).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert!(a.content_type.starts_with("application/json"));
    let a = post("/api/equivariance?charts=png", "{}").await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert!(error_of(&a).contains("charts=svg"));
}

#[tokio::test]
async fn the_time_limit_cancels_and_answers_503() {
    let limits = Limits {
        time_limit: Duration::from_millis(1),
        ..Limits::default()
    };
    let a = call_with(
        limits,
        Method::POST,
        "/api/equivariance",
        r#"{"n": 8, "exhaustive": true}"#,
    )
    .await;
    assert_eq!(a.status, StatusCode::SERVICE_UNAVAILABLE, "{}", a.body);
    assert!(error_of(&a).contains("time limit of 0.001 s"), "{}", a.body);
}

#[tokio::test]
async fn the_wrapped_view_holds_the_report_its_charts_and_text() {
    let body = r#"{"text": "A B . A", "perm": [1, 0, 2, 3]}"#;
    let a = post("/api/equivariance?charts=svg&text=1", body).await;
    assert_eq!(a.status, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    let (json, outcome) = expected("equivariance", body).unwrap();
    assert_eq!(
        without_timings(&v["report"].to_string()),
        without_timings(&json)
    );
    assert_eq!(v["outcome"], outcome);
    let req = Request::from_json("equivariance", serde_json::from_str(body).unwrap()).unwrap();
    let r = api::run(&req).unwrap();
    assert_eq!(v["text"], attnlab_render::text::render(&r));
    let charts = v["charts"].as_array().unwrap();
    assert_eq!(charts.len(), r.charts().len());
    for (c, spec) in charts.iter().zip(r.charts()) {
        assert_eq!(c["svg"], attnlab_render::svg::render(&spec).unwrap());
    }
}

#[tokio::test]
async fn presets_and_commands_are_listed() {
    let a = call_with(
        Limits::default(),
        Method::GET,
        "/api/presets",
        Body::empty(),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, attnlab_core::config::preset_names());
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["source"].is_string()));
    let a = call_with(
        Limits::default(),
        Method::GET,
        "/api/commands",
        Body::empty(),
    )
    .await;
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    let names: Vec<&str> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, COMMANDS);
    assert_eq!(v["limits"]["body_bytes"], 1 << 20);
}

#[tokio::test]
async fn the_page_and_its_assets_are_served_from_the_binary_with_no_external_reference() {
    for (path, mime) in [
        ("/", "text/html"),
        ("/assets/app.js", "text/javascript"),
        ("/assets/style.css", "text/css"),
    ] {
        let a = call_with(Limits::default(), Method::GET, path, Body::empty()).await;
        assert_eq!(a.status, StatusCode::OK, "{path}");
        assert!(
            a.content_type.starts_with(mime),
            "{path}: {}",
            a.content_type
        );
        // The SVG namespace is a name, not an address anything fetches.
        let body = a.body.replace("'http://www.w3.org/2000/svg'", "");
        for banned in ["http://", "https://", "//cdn", "@import"] {
            assert!(!body.contains(banned), "{path} mentions {banned}");
        }
    }
    let a = call_with(
        Limits::default(),
        Method::GET,
        "/assets/../Cargo.toml",
        Body::empty(),
    )
    .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_estimate_is_the_cores_budget_without_running() {
    let body = r#"{"omega": "pi/2,pi/3", "context": "1M"}"#;
    let a = post("/api/rope/audit?estimate=1", body).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    let req = Request::from_json("rope audit", serde_json::from_str(body).unwrap()).unwrap();
    let budget = api::budget(&req);
    assert_eq!(v["bytes"].as_u64(), Some(budget.bytes));
    assert_eq!(v["ops"].as_u64(), Some(budget.ops));
    assert_eq!(v["command"], "rope audit");
    let text = v["text"].as_str().unwrap();
    assert!(
        text.contains(&attnlab_core::present::number::ops(budget.ops)),
        "{text}"
    );
    // A bad request is refused before any estimate.
    let bad = post("/api/rope/audit?estimate=1", r#"{"omega": 3}"#).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn seeds_travel_as_strings_with_every_digit() {
    // 2⁵³ + 1 is not a binary64 number: as a string it reaches the generator exactly.
    let a = post(
        "/api/equivariance",
        r#"{"rng": "std", "seed": "9007199254740993", "perm": [2, 0, 3, 1]}"#,
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(a.body.contains("\"seed\": 9007199254740993,"), "{}", a.body);
    let bad = post("/api/equivariance", r#"{"seed": "12x"}"#).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(error_of(&bad).contains("invalid seed: 12x"), "{}", bad.body);
}
