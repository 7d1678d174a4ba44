//! `attnlab rope score` through the binary: values, JSON fields, plot, and bad input (exit 2).

mod common;

use common::attnlab;
use predicates::prelude::*;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let full: Vec<&str> = ["rope", "score"]
        .into_iter()
        .chain(args.iter().copied())
        .chain(["--json"])
        .collect();
    common::json(&full, 0)
}

fn means(v: &Value) -> Vec<f64> {
    v["separations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["mean"].as_f64().unwrap())
        .collect()
}

#[test]
fn seed_values_for_pi_over_2() {
    // The seed: ω = π/2 gives 1, 0, −1, 0, 1 at s = 0..4 — exactly, since the phases are reduced
    // exactly (a quarter turn gives sin 0 = 0, not cos of a rounded π/2 = 6.1e-17).
    let v = json(&["--omega", "pi/2", "--max-sep", "4"]);
    assert_eq!(means(&v), vec![1.0, 0.0, -1.0, 0.0, 1.0]);
    assert_eq!(v["equal_to_zero_separation"], serde_json::json!([4]));
    assert_eq!(v["omegas"][0]["label"], "pi/2");
    assert_eq!(v["omegas"][0]["exact"], true);
    assert_eq!(
        v["omegas"][0]["value"].as_f64().unwrap(),
        std::f64::consts::FRAC_PI_2
    );
    let row = &v["separations"][2];
    assert_eq!(row["separation"], 2);
    assert_eq!(row["scores"], serde_json::json!([-1.0]));
}

#[test]
fn default_max_sep_is_8_and_the_table_shows_the_values() {
    let v = json(&["--omega", "pi/2"]);
    assert_eq!(v["separations"].as_array().unwrap().len(), 9);
    assert_eq!(v["equal_to_zero_separation"], serde_json::json!([4, 8]));
    attnlab()
        .args(["rope", "score", "--omega", "pi/2", "--max-sep", "4"])
        .assert()
        .success()
        .stdout(predicate::str::contains("cos(s·pi/2)"))
        .stdout(predicate::str::contains("-1"))
        .stdout(predicate::str::contains(
            "scoring like s = 0 (every phase within 1e-9 rad of a full turn): 4.",
        ));
}

#[test]
fn several_frequencies_give_the_mean() {
    // {π/2, π/3}: mean at s = 1 is (0 + 1/2)/2 = 1/4 up to the rounding of cos(π/3) (1 ulp of
    // 0.5 → 2.8e-17 in the mean); the set first returns to 1 at lcm(4, 6) = 12.
    let v = json(&["--omega", "pi/2,pi/3", "--max-sep", "12"]);
    let m = means(&v);
    assert!((m[1] - 0.25).abs() < 1e-16, "{}", m[1]);
    assert!((m[2] + 0.75).abs() < 1e-16, "{}", m[2]);
    assert_eq!(m[12], 1.0);
    assert_eq!(v["equal_to_zero_separation"], serde_json::json!([12]));
    for row in v["separations"].as_array().unwrap() {
        let s = row["scores"].as_array().unwrap();
        let mean = (s[0].as_f64().unwrap() + s[1].as_f64().unwrap()) / 2.0;
        assert_eq!(mean, row["mean"].as_f64().unwrap());
    }
}

#[test]
fn base_and_dim_as_the_frequency_source() {
    // ω_k = 10000^(−2k/8): k = 0..4; at s = 1 the mean is (cos 1 + cos 0.1 + cos 0.01 + cos 0.001)/4
    // (f64 round-off of a few terms: 1e-15).
    let v = json(&["--base", "10000", "--dim", "8", "--max-sep", "1"]);
    assert_eq!(v["omegas"].as_array().unwrap().len(), 4);
    let want = (1f64.cos() + 0.1f64.cos() + 0.01f64.cos() + 0.001f64.cos()) / 4.0;
    assert!((means(&v)[1] - want).abs() < 1e-15);
    assert_eq!(v["equal_to_zero_separation"], serde_json::json!([]));
}

#[test]
fn plot_writes_an_svg() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("score.svg");
    attnlab()
        .args(["rope", "score", "--omega", "pi/2,pi/3", "--plot"])
        .arg(&path)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.contains("<svg") && svg.contains("score vs separation"));
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["--omega", "0"], "frequency"),
        (&["--omega", "foo"], "foo"),
        (&["--omega", "pi/2", "--max-sep", "0"], "max separation"),
        (&["--base", "1", "--dim", "8"], "base"),
        (&["--base", "10000", "--dim", "7"], "rotary dimension: 7"),
        (&["--omega", "inf"], "frequency"),
    ];
    for (args, needle) in cases {
        let out = attnlab()
            .args(["rope", "score"])
            .args(*args)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // Usage errors (clap) also exit 2.
    attnlab().args(["rope", "score"]).assert().code(2);
    attnlab()
        .args(["rope", "score", "--base", "10000"])
        .assert()
        .code(2);
    attnlab()
        .args([
            "rope", "score", "--omega", "pi/2", "--base", "10", "--dim", "4",
        ])
        .assert()
        .code(2);
}
