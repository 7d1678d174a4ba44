//! What the core's oracle tests share: the Python that runs the oracles, the rule for an oracle
//! that is missing (a visible `SKIPPED (no oracle)` line locally, a failure under CI), the cached
//! SmolLM2 file, the course's spec lines used as prompts, and the relative error they compare by.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// The import line that checks the pinned torch 2.15.0 and transformers 5.24.0.
pub const PINNED_TORCH_TRANSFORMERS: &str = "import torch, transformers; assert torch.__version__.split('+')[0] == '2.15.0' and transformers.__version__ == '5.24.0'";

/// The Python that runs the oracles: `ATTNLAB_PYTHON` if set, else `python3`.
pub fn python() -> String {
    std::env::var("ATTNLAB_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether an oracle (`what`) can run. When it cannot: a failure under CI (`CI` set: `.ci/run`
/// installs every oracle), else a `SKIPPED (no oracle)` line straight to the process's stderr,
/// past the harness's capture, so a skip is seen.
pub fn require(what: &str, ok: bool, why: &str) -> bool {
    if ok {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is required under CI (.ci/run provides it): {why}"
    );
    let _ = writeln!(std::io::stderr(), "SKIPPED (no oracle): {what}: {why}");
    false
}

/// `Some(python)` when `python -c code` succeeds (the oracle's imports and version checks),
/// otherwise [`require`]'s skip or failure for `what`.
pub fn python_with(what: &str, code: &str) -> Option<String> {
    let py = python();
    let ok = Command::new(&py)
        .args(["-c", code])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    require(what, ok, &format!("`{py} -c \"{code}\"` fails")).then_some(py)
}

/// The cached SmolLM2-135M GGUF (`scripts/fetch-smollm2`), or [`require`]'s skip or failure.
pub fn smollm2() -> Option<PathBuf> {
    match attnlab_core::model::locate::resolve("smollm2-135m") {
        Ok(p) => Some(p),
        Err(e) => {
            require("the SmolLM2 model file", false, &e.to_string());
            None
        }
    }
}

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The first `k` lines of 40 to 200 characters of the course's seed 000 (text attnlab's
/// authors did not write), trimmed.
pub fn spec_lines(k: usize) -> Vec<String> {
    let spec = std::fs::read_dir(root().join("spec"))
        .expect("the spec directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("000_"))
        })
        .expect("seed 000 in spec/");
    std::fs::read_to_string(spec)
        .expect("a readable spec file")
        .lines()
        .map(str::trim)
        .filter(|l| (40..=200).contains(&l.len()))
        .take(k)
        .map(String::from)
        .collect()
}

/// A JSON array of numbers.
pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// `max |a − b| / max |b|`.
pub fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}
