//! Helpers shared by the CLI's integration tests: run the binary, read its JSON, assert the
//! one-line error contract, and require an external oracle (numpy, torch) honestly.
#![allow(dead_code)]

use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

/// The `attnlab` binary under test.
pub fn attnlab() -> Command {
    Command::cargo_bin("attnlab").expect("binary builds")
}

/// Runs `attnlab args`: (exit code, stdout parsed as JSON or `Null`, stderr).
pub fn run_json(args: &[&str]) -> (i32, Value, String) {
    let out = attnlab().args(args).output().expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Runs `attnlab args`: (exit code, stdout, stderr).
pub fn run_text(args: &[&str]) -> (i32, String, String) {
    let out = attnlab().args(args).output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Runs `attnlab args`, asserts the exit code, returns stdout.
pub fn run_ok(args: &[&str], code: i32) -> String {
    let out = attnlab().args(args).output().expect("runs");
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Runs `attnlab args`, asserts the exit code, parses stdout as one JSON document.
pub fn json(args: &[&str], code: i32) -> Value {
    serde_json::from_str(&run_ok(args, code)).expect("stdout is one JSON object")
}

/// Expects exit 2 quickly (no work is started before validation), nothing on stdout, and a
/// one-line `error: …` on stderr containing every needle.
pub fn bad(args: &[&str], needles: &[&str]) {
    let start = Instant::now();
    let out = attnlab()
        .args(args)
        .timeout(Duration::from_secs(20))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?} → {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: not one line: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    for n in needles {
        assert!(lines[0].contains(n), "{args:?}: {err} should mention {n}");
    }
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{args:?} took {:?} before failing",
        start.elapsed()
    );
}

/// A nested JSON array as rows.
pub fn matrix(v: &Value) -> Vec<Vec<f64>> {
    serde_json::from_value(v.clone()).expect("a nested array")
}

/// Whether `python3 -c "import <module>"` works (`ATTNLAB_PYTHON` names another Python). A
/// missing oracle is a visible skip locally and a failure under CI (`CI` set, as `.ci/run`
/// does, which installs it): a cross-check never passes without its oracle.
pub fn oracle(module: &str) -> bool {
    oracle_with(
        &python(),
        module,
        std::env::var_os("CI").is_some(),
        &mut std::io::stderr().lock(),
    )
}

/// The Python the cross-checks run: `ATTNLAB_PYTHON`, else `python3`.
pub fn python() -> String {
    std::env::var("ATTNLAB_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// [`oracle`] with the Python, the CI flag and where the skip note goes given. The import is
/// tried with its output captured (no traceback on the terminal); [`oracle`] writes the note
/// straight to the process's stderr, past the test harness's capture, so a skipped cross-check
/// is seen in every run.
///
/// # Panics
/// Under CI when the import fails.
pub fn oracle_with(python: &str, module: &str, ci: bool, note: &mut dyn std::io::Write) -> bool {
    let ok = StdCommand::new(python)
        .args(["-c", &format!("import {module}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        assert!(
            !ci,
            "the oracle `{module}` is required under CI (.ci/run installs it), but `{python} -c \"import {module}\"` fails"
        );
        let _ = writeln!(
            note,
            "SKIPPED (no oracle): `{python} -c \"import {module}\"` fails; install {module} to run this cross-check"
        );
    }
    ok
}

/// Fails when user-facing text shows Rust internals: `Some(…)`, `None`, an empty `[]`, a
/// singular/plural slip such as `(1 planes)`, or an empty range `1..0`.
pub fn assert_no_internals(context: &str, text: &str) {
    let leaks = [
        "Some(",
        "None",
        "Ok(",
        "Err(",
        "[]",
        "(1 planes)",
        "1 planes",
        "1..0",
        "{:?}",
        "\\\"",
    ];
    for leak in leaks {
        assert!(
            !text.contains(leak),
            "{context}: user text shows the Rust internal {leak:?}:\n{text}"
        );
    }
}

/// [`assert_no_internals`] on every string of a JSON report (its prose fields: statements,
/// explanations, derivations, notes). Field names and numbers are not scanned.
pub fn assert_no_internals_in_json(context: &str, v: &Value) {
    match v {
        Value::String(s) => assert_no_internals(context, s),
        Value::Array(a) => a
            .iter()
            .for_each(|x| assert_no_internals_in_json(context, x)),
        Value::Object(o) => o
            .values()
            .for_each(|x| assert_no_internals_in_json(context, x)),
        _ => {}
    }
}

/// Replaces every value under a `timings` object (measurements of one run, which vary from run
/// to run) by `"[measured]"`, keeping the field names: the redaction of JSON snapshots.
pub fn redact_timings(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, x) in map.iter_mut() {
                match (k.as_str(), &mut *x) {
                    ("timings", Value::Object(t)) => {
                        for (_, m) in t.iter_mut() {
                            *m = Value::String("[measured]".into());
                        }
                    }
                    _ => redact_timings(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_timings),
        _ => {}
    }
}

/// `v` without its `timings` objects (at any depth): two runs of one request agree on
/// everything but the seconds they took.
pub fn without_timings(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("timings");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}
