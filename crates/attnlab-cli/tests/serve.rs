//! `attnlab serve` against the binary itself: `POST /api/<command>` answers exactly what
//! `attnlab <command> --json` prints for the same options (or the same one-line error), a
//! non-loopback address is warned about, Ctrl-C stops it cleanly; without the `serve` feature
//! the command says how to enable it.

mod common;

#[cfg(feature = "serve")]
mod with_feature {
    use std::io::{BufRead, BufReader};
    use std::net::SocketAddr;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use attnlab_core::api::COMMANDS;
    use attnlab_web::testing::{get, post};

    use super::common::run_text;

    pub struct Server {
        pub child: Child,
        pub addr: SocketAddr,
        pub first_lines: Vec<String>,
    }

    /// Starts `attnlab serve --addr ADDR` and waits for its `listening on` line.
    pub fn start(addr: &str) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_attnlab"))
            .args(["serve", "--addr", addr])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("attnlab serve starts");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut first_lines = Vec::new();
        let addr = loop {
            let line = lines.next().expect("a listening line").unwrap();
            first_lines.push(line.clone());
            if let Some(rest) = line.split("listening on http://").nth(1) {
                let a = rest.split('/').next().unwrap();
                break a.parse().unwrap();
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server {
            child,
            addr,
            first_lines,
        }
    }

    impl Server {
        /// Sends Ctrl-C (SIGINT) and returns the exit code.
        pub fn interrupt(mut self) -> Option<i32> {
            // SAFETY: signalling our own child process by its id.
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
            }
            let start = Instant::now();
            loop {
                if let Some(status) = self.child.try_wait().unwrap() {
                    return status.code();
                }
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "no exit after Ctrl-C"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// The CLI's arguments for a JSON body: each field as its long option (booleans as flags,
    /// lists comma-joined).
    fn cli_args(command: &str, body: &serde_json::Value) -> Vec<String> {
        let mut args: Vec<String> = command.split(' ').map(String::from).collect();
        for (k, v) in body.as_object().unwrap() {
            let flag = format!("--{}", k.replace('_', "-"));
            match v {
                serde_json::Value::Bool(true) => args.push(flag),
                serde_json::Value::Bool(false) => {}
                serde_json::Value::Array(items) => {
                    args.push(flag);
                    args.push(
                        items
                            .iter()
                            .map(|i| i.as_str().map_or_else(|| i.to_string(), String::from))
                            .collect::<Vec<_>>()
                            .join(","),
                    );
                }
                serde_json::Value::String(s) => {
                    args.push(flag);
                    args.push(s.clone());
                }
                other => {
                    args.push(flag);
                    args.push(other.to_string());
                }
            }
        }
        args.push("--json".into());
        args
    }

    /// Asserts the server and the CLI agree on `command` with `body`. An `answers` object (the
    /// session's) goes to the CLI as an `--answers` file, with a fresh `--state` file.
    fn agree(addr: SocketAddr, command: &str, body: &str) {
        let mut value: serde_json::Value = serde_json::from_str(body).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let answers = value.as_object_mut().unwrap().remove("answers");
        let mut args = cli_args(command, &value);
        if let Some(answers) = answers {
            let file = dir.path().join("answers.json");
            std::fs::write(&file, answers.to_string()).unwrap();
            let state = dir.path().join("state.json");
            let at = args.len() - 1; // before --json
            args.splice(
                at..at,
                [
                    "--answers".to_string(),
                    file.display().to_string(),
                    "--state".to_string(),
                    state.display().to_string(),
                ],
            );
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = run_text(&argv);
        let a = post(
            addr,
            &format!("/api/{}", attnlab_web::url_name(command)),
            body,
        )
        .unwrap();
        match code {
            0 | 1 => {
                assert_eq!(a.status, 200, "{argv:?}: {}", a.body);
                // The same document, apart from the time each run took (`timings`).
                let json = |text: &str| serde_json::from_str(text).unwrap();
                assert_eq!(
                    super::common::without_timings(json(&a.body)),
                    super::common::without_timings(json(&stdout)),
                    "{argv:?}"
                );
                let outcome = if code == 0 { "holds" } else { "fails" };
                assert_eq!(a.header("x-attnlab-outcome"), Some(outcome));
            }
            _ => {
                assert_eq!(
                    a.status, 400,
                    "{argv:?} exits {code} ({stderr}) but the server says {}",
                    a.body
                );
                let error = a.json()["error"].as_str().unwrap().to_string();
                let line = stderr.trim_end();
                match line
                    .strip_prefix("error: ")
                    .filter(|l| !l.ends_with("(see --help)"))
                {
                    // The core's message: the same line.
                    Some(line) => assert_eq!(error, line, "{argv:?}"),
                    // clap refused the command line before the core saw it (a required option
                    // missing): the server's message comes from the core and names the options.
                    None => assert!(
                        error.contains("--omega") || error.contains("expected"),
                        "{argv:?}: {error} (CLI: {stderr})"
                    ),
                }
            }
        }
    }

    #[test]
    fn the_api_answers_what_the_cli_prints() {
        let server = start("127.0.0.1:0");
        // Every command with its defaults (the session's default is the interactive prompt,
        // which has no request: it is compared with its answers below).
        // The model commands (and `rope usage`) read a model file, which the server never does
        // (its refusal is tested in crates/attnlab-web/tests/api.rs); the CLI reads it.
        for command in COMMANDS
            .iter()
            .filter(|c| **c != "session" && !c.starts_with("model ") && **c != "rope usage")
        {
            agree(server.addr, command, "{}");
        }
        for (command, body) in [
            (
                "equivariance",
                r#"{"rng": "numpy", "seed": 0, "n": 4, "dim": 4, "perm": [2, 0, 3, 1]}"#,
            ),
            (
                "equivariance",
                r#"{"text": "A B . A", "perm": [2, 0, 3, 1], "pos": "index", "index_scale": 0.5}"#,
            ),
            (
                "equivariance",
                r#"{"layer": "rnn", "n": 3, "exhaustive": true}"#,
            ),
            (
                "equivariance",
                r#"{"mask": "causal", "dtype": "f32", "samples": 5, "perm_seed": 3}"#,
            ),
            ("equivariance", r#"{"perm": [0, 0, 1, 2]}"#),
            ("equivariance", r#"{"n": 3, "perm": [0, 1, 2, 3]}"#),
            ("attend", r#"{"text": "A B .", "pos": "rope"}"#),
            (
                "attend",
                r#"{"n": 3, "dim": 2, "heads": 2, "rng": "numpy"}"#,
            ),
            ("attend", r#"{"text": "A C"}"#),
            ("session", r#"{"list": true}"#),
            (
                "session",
                r#"{"answers": {"embedding_dim": "no", "shuffle_attention": {"answer": "yes", "reason": "shuffled rows"}}}"#,
            ),
            ("session", r#"{"answers": {"embedding_dim": "maybe"}}"#),
            ("rope score", r#"{"omega": "pi/2,pi/3", "max_sep": 12}"#),
            ("rope period", r#"{"omega": "2*pi/7"}"#),
            (
                "rope identity",
                r#"{"omega": "pi/2", "trials": 20, "max_shift": 1000}"#,
            ),
            ("rope resolve", r#"{"omega": "pi/2,pi/3", "context": 13}"#),
            (
                "rope audit",
                r#"{"preset": "llama-2-7b", "skip_min_base": true, "context": "1024"}"#,
            ),
            (
                "rope audit",
                r#"{"base": 10000, "dim": 64, "context": "2k", "dtype": "f16", "skip_min_base": true}"#,
            ),
            ("rope audit", r#"{"preset": "no-such-model"}"#),
            ("lab", r#"{"omegas": "pi/2", "context": 5}"#),
            ("predict", r#"{"text": "B A ."}"#),
            ("embed", r#"{"basis_change": true}"#),
        ] {
            agree(server.addr, command, body);
        }
        assert_eq!(server.interrupt(), Some(0));
    }

    /// The requests the page's panels send (`crates/attnlab-web/assets/app.js`), as it sends
    /// them: the numbers the page shows are the CLI's for the same options.
    #[test]
    fn every_panels_requests_answer_what_the_cli_prints() {
        let server = start("127.0.0.1:0");
        for (command, body) in [
            // Shuffle: the course program (its default), the product, the attention maps.
            (
                "equivariance",
                r#"{"pos": "none", "mask": "none", "dtype": "f64", "rng": "numpy", "seed": "0", "n": 4, "dim": 4, "layer": "attention", "perm": [2, 0, 3, 1], "product": true}"#,
            ),
            (
                "equivariance",
                r#"{"pos": "index", "index_scale": 0.1, "mask": "causal", "dtype": "f32", "rng": "std", "seed": "9007199254740993", "text": "A B . A", "layer": "attention", "perm": [1, 0, 3, 2], "product": true}"#,
            ),
            (
                "equivariance",
                r#"{"pos": "rope", "mask": "none", "dtype": "f64", "rng": "numpy", "seed": "3", "n": 5, "dim": 6, "layer": "rnn", "perm": [4, 3, 2, 1, 0], "product": true}"#,
            ),
            (
                "equivariance",
                r#"{"rng": "numpy", "seed": "0", "n": 4, "dim": 4, "perm": [0, 1, 2, 3], "product": true}"#,
            ),
            (
                "attend",
                r#"{"pos": "none", "mask": "none", "dtype": "f64", "rng": "numpy", "seed": "0", "n": 4, "dim": 4}"#,
            ),
            (
                "attend",
                r#"{"pos": "index", "index_scale": 0.1, "mask": "none", "dtype": "f64", "rng": "numpy", "seed": "0", "text": ". A B A"}"#,
            ),
            // Rotation: the scores, each frequency's period, the identity, the resolution in L.
            ("rope score", r#"{"omega": "pi/2,pi/3", "max_sep": 24}"#),
            ("rope score", r#"{"omega": "pi/2", "max_sep": 100000}"#),
            ("rope period", r#"{"omega": "pi/3"}"#),
            ("rope identity", r#"{"omega": "pi/2,pi/3", "trials": 200}"#),
            ("rope resolve", r#"{"omega": "pi/2,pi/3", "context": "16"}"#),
            // Resolution & audit: each source, and the resolution beside it.
            (
                "rope audit",
                r#"{"dtype": "bf16", "context": "13", "omega": "pi/2,pi/3"}"#,
            ),
            ("rope resolve", r#"{"context": "13", "omega": "pi/2,pi/3"}"#),
            (
                "rope audit",
                r#"{"dtype": "f16", "context": "2k", "base": 10000, "dim": "64"}"#,
            ),
            (
                "rope resolve",
                r#"{"context": "2k", "base": 10000, "dim": "64"}"#,
            ),
            (
                "rope audit",
                r#"{"dtype": "bf16", "context": "1024", "preset": "llama-2-7b"}"#,
            ),
            (
                "rope resolve",
                r#"{"context": "1024", "preset": "llama-2-7b"}"#,
            ),
            // Errors the page shows: the same line.
            ("rope score", r#"{"omega": "abc", "max_sep": 24}"#),
            ("rope score", r#"{"omega": "pi/2", "max_sep": 2000000}"#),
            (
                "equivariance",
                r#"{"rng": "numpy", "seed": "18446744073709551615", "perm": [2, 0, 3, 1], "product": true}"#,
            ),
            // Session: a refused answer and a graded one.
            (
                "session",
                r#"{"answers": {"rope_repeat_half_pi": {"answer": "-4"}}}"#,
            ),
            (
                "session",
                r#"{"answers": {"rope_scores": {"answer": "0.5, 0.5, 0.5, 0.5, 0.5"}}}"#,
            ),
        ] {
            agree(server.addr, command, body);
        }
        assert_eq!(server.interrupt(), Some(0));
    }

    /// The Real model panel's requests (the server opens the models known by name; the CLI the
    /// same file from the cache). Needs the SmolLM2 GGUF (`scripts/fetch-smollm2`): without it a
    /// visible skip, and a failure under CI.
    #[test]
    fn the_model_panels_requests_answer_what_the_cli_prints() {
        if let Err(e) = attnlab_core::model::locate::resolve("smollm2-135m") {
            assert!(
                std::env::var_os("CI").is_none(),
                "the model panel test needs the SmolLM2 GGUF under CI: {e}"
            );
            eprintln!("SKIPPED (no model): {e}");
            return;
        }
        let server = start("127.0.0.1:0");
        for (command, body) in [
            ("model info", r#"{"model": "smollm2-135m"}"#),
            (
                "model tokenize",
                r#"{"model": "smollm2-135m", "text": "the cat sat on the mat", "values": 0}"#,
            ),
            (
                "model attention",
                r#"{"model": "smollm2-135m", "text": "the cat sat on the mat", "layer": 0, "head": 3, "pos": "none"}"#,
            ),
            (
                "model order",
                r#"{"model": "smollm2-135m", "text": "the cat sat on the mat", "top": 5}"#,
            ),
            // The panel's refusals: a permutation that is not one, a head the model lacks.
            (
                "model order",
                r#"{"model": "smollm2-135m", "text": "the cat sat on the mat", "perm": "0,0,1", "top": 5}"#,
            ),
            (
                "model attention",
                r#"{"model": "smollm2-135m", "text": "the cat sat", "layer": 0, "head": 9, "pos": "rope"}"#,
            ),
        ] {
            agree(server.addr, command, body);
        }
        // A path is not opened by the server, whatever it names.
        let a = post(
            server.addr,
            "/api/model/info",
            r#"{"model": "/etc/passwd"}"#,
        )
        .unwrap();
        assert_eq!(a.status, 400, "{}", a.body);
        assert!(a.body.contains("smollm2-135m"), "{}", a.body);
        assert_eq!(server.interrupt(), Some(0));
    }

    #[test]
    fn ctrl_c_stops_the_server_cleanly_and_the_page_is_served_until_then() {
        let server = start("127.0.0.1:0");
        assert!(server.first_lines.iter().all(|l| !l.contains("warning")));
        let a = get(server.addr, "/").unwrap();
        assert_eq!(a.status, 200);
        assert!(a.body.contains("<title>attnlab"));
        assert_eq!(server.interrupt(), Some(0));
    }

    #[test]
    fn a_non_loopback_address_is_warned_about() {
        let server = start("0.0.0.0:0");
        let warning = server
            .first_lines
            .iter()
            .find(|l| l.starts_with("warning: "))
            .expect("a warning");
        assert!(warning.contains("other machines can reach"), "{warning}");
        assert_eq!(server.interrupt(), Some(0));
    }
}

#[cfg(not(feature = "serve"))]
#[test]
fn without_the_feature_serve_says_how_to_enable_it() {
    common::bad(
        &["serve"],
        &[
            "cargo install --path crates/attnlab-cli --features serve",
            "cargo run --release --features serve -- serve",
        ],
    );
}
