//! Browser tests: Debian's chromium, driven headless by playwright-core (from npm; no browser is
//! ever downloaded), operates every panel of `attnlab serve` and opens the HTML reports with no
//! network, asserting on the numbers shown and on the absence of console errors and of
//! requests. Screenshots go to `target/browser-artifacts/`.
//!
//! Needs `node`, `/usr/bin/chromium` (or `$CHROMIUM`) and `npm ci` in
//! `crates/attnlab-web/tests/browser/`. Under `CI=true` a missing piece is a failure; elsewhere
//! the test says what is missing and passes.
#![cfg(feature = "serve")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../attnlab-web/tests/browser")
}

fn missing() -> Option<String> {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        return Some(format!("{chromium} (apt-get install -y chromium)"));
    }
    if Command::new("node").arg("--version").output().is_err() {
        return Some("node".into());
    }
    if !browser_dir().join("node_modules/playwright-core").exists() {
        return Some(format!(
            "playwright-core (npm ci in {})",
            browser_dir().display()
        ));
    }
    None
}

#[test]
fn every_panel_and_the_html_reports_in_chromium() {
    if let Some(what) = missing() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("browser tests need {what}; CI must install it (.ci/run does)");
        }
        eprintln!("SKIPPED browser tests: {what} is missing");
        return;
    }
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/browser-artifacts");
    let reports = artifacts.join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    // The HTML reports the browser opens offline.
    for (file, args) in html_reports() {
        let path = reports.join(file);
        let mut full: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        full.push("--html".into());
        full.push(path.display().to_string());
        let out = Command::new(env!("CARGO_BIN_EXE_attnlab"))
            .args(&full)
            .output()
            .unwrap();
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "{full:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(path.exists(), "{full:?} wrote no {}", path.display());
    }
    let status = Command::new("node")
        .args(["--test", "--test-concurrency=1"])
        .current_dir(browser_dir())
        .env("ATTNLAB_BIN", env!("CARGO_BIN_EXE_attnlab"))
        .env("ATTNLAB_ARTIFACTS", &artifacts)
        .env("ATTNLAB_REPORTS", &reports)
        .status()
        .expect("node runs");
    assert!(
        status.success(),
        "browser tests failed (see the node output above)"
    );
}

/// The HTML reports to open: (file name, CLI arguments before `--html FILE`).
fn html_reports() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("lab.html", vec!["lab"]),
        (
            "rope-audit.html",
            vec!["rope", "audit", "--preset", "llama-2-7b", "--skip-min-base"],
        ),
        (
            "equivariance.html",
            vec!["equivariance", "--text", "A B . A", "--perm", "2,0,3,1"],
        ),
    ]
}
