//! CLI tests of `attnlab rope identity|period|resolve|audit` (through the binary).

mod common;

use common::{attnlab, json};

/// Expects exit 2 and a one-line `error: …` on stderr mentioning `needle`.
fn bad(args: &[&str], needle: &str) {
    common::bad(args, &[needle]);
}

#[test]
fn period_of_pi_over_2_is_4() {
    let v = json(&["rope", "period", "--omega", "pi/2", "--json"], 0);
    assert_eq!(v["exact"], true);
    assert_eq!(v["first_repeat"], 4);
    assert_eq!(v["omega"]["label"], "pi/2");
    assert!((v["wavelength"].as_f64().unwrap() - 4.0).abs() < 1e-15);
    let last = v["near_repeats"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["separation"].as_u64(), last["phase_error"].as_f64()),
        (Some(4), Some(0.0))
    );
    assert_eq!(v["first_within_tol"], 4);
}

#[test]
fn period_of_one_radian_lists_convergents() {
    let v = json(
        &["rope", "period", "--omega", "1", "--tol", "1e-4", "--json"],
        0,
    );
    assert_eq!(v["exact"], false);
    assert!(v["first_repeat"].is_null());
    let seps: Vec<u64> = v["near_repeats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["separation"].as_u64().unwrap())
        .collect();
    // Convergent denominators of 1/2π = [0; 6, 3, 1, 1, 7, 2, 146, …].
    assert_eq!(&seps[..8], &[1, 6, 19, 25, 44, 333, 710, 103993]);
    // 710 rad is 6.03e-5 rad past 113 turns: the first separation within 1e-4.
    assert_eq!(v["first_within_tol"], 710);
}

#[test]
fn resolve_exact_set_common_period_12() {
    let v = json(
        &[
            "rope",
            "resolve",
            "--omega",
            "pi/2,pi/3",
            "--context",
            "13",
            "--json",
        ],
        1, // a check: the set aliases at 12 < 13, so it fails
    );
    assert_eq!(
        (
            v["common_period"].as_u64(),
            v["first_alias"].as_u64(),
            v["resolves"].as_bool()
        ),
        (Some(12), Some(12), Some(false))
    );
    assert_eq!(
        (v["min_margin"].as_f64(), v["margin_at"].as_u64()),
        (Some(0.0), Some(12))
    );
    let v = json(
        &[
            "rope",
            "resolve",
            "--omega",
            "pi/2,pi/3",
            "--context",
            "12",
            "--json",
        ],
        0,
    );
    assert_eq!(v["resolves"], true);
    assert!(v["first_alias"].is_null());
    assert_eq!(v["frequencies"].as_array().unwrap().len(), 2);
}

#[test]
fn resolve_float_set() {
    let v = json(
        &[
            "rope",
            "resolve",
            "--base",
            "10000",
            "--dim",
            "128",
            "--context",
            "2^16",
            "--json",
        ],
        0,
    );
    assert_eq!(v["context"], 65536);
    assert_eq!(v["resolves"], true);
    assert!(v["common_period"].is_null());
    // margin(1) = max_k ω_k = 1 rad (plane 0), and no separation comes closer to a full turn in all planes.
    assert_eq!(v["margin_at"], 1);
    assert!((v["min_margin"].as_f64().unwrap() - 1.0).abs() < 1e-12);
}

#[test]
fn identity_holds_and_low_precision_error_grows() {
    let v = json(
        &[
            "rope", "identity", "--base", "10000", "--dim", "64", "--seed", "3", "--trials", "100",
            "--json",
        ],
        0,
    );
    let r = &v;
    assert_eq!(r["holds"], true);
    assert_eq!(r["seed"], 3);
    assert!(r["max_abs_error"].as_f64().unwrap() < 1e-12);
    let rows = r["invariance"].as_array().unwrap();
    assert_eq!(rows.last().unwrap()["shift"], 1_000_000_000);
    let err = |i: usize, k: &str| rows[i]["errors"][k].as_f64().unwrap();
    let last = rows.len() - 1;
    // f32 angles lose ~t·2^-24 rad: at t = 1e9 phases are wrong by radians, at t = 1 by ~1e-4.
    assert!(err(last, "f32") > 100.0 * err(0, "f32"));
    assert!(err(last, "bf16") > 10.0 * err(0, "bf16"));
    // The accurately reduced f64 score is translation invariant at round-off at every shift.
    assert!(rows
        .iter()
        .all(|row| row["errors"]["f64_exact"].as_f64().unwrap() < 1e-12));
}

#[test]
fn identity_table_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("id.svg");
    let out = attnlab()
        .args([
            "rope",
            "identity",
            "--omega",
            "pi/2,0.3",
            "--trials",
            "20",
            "--max-shift",
            "1e6",
            "--plot",
        ])
        .arg(&svg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("holds") && text.contains("bf16") && text.contains("1000000"),
        "{text}"
    );
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.contains("<svg") && s.contains("f32"));
}

#[test]
fn audit_llama2_like_base_and_dim() {
    let dir = tempfile::tempdir().unwrap();
    let v = json(
        &[
            "rope",
            "audit",
            "--base",
            "10000",
            "--dim",
            "128",
            "--context",
            "4096",
            "--json",
            "--plot",
            dir.path().to_str().unwrap(),
        ],
        0,
    );
    assert_eq!(v["context"], 4096);
    assert_eq!(v["planes_full_turn"], 46); // Liu et al. 2023: 92 critical dims
    let planes = v["planes"].as_array().unwrap();
    assert_eq!(planes.len(), 64);
    for key in ["index", "inv_freq", "wavelength", "full_turn_in_context"] {
        assert!(planes[5].get(key).is_some(), "{key}");
    }
    assert_eq!(v["attention_factor"], 1.0);
    assert_eq!(v["resolves"], true);
    assert!(v["min_margin"].as_f64().is_some() && v["margin_at"].as_u64().is_some());
    // B(m) = Σcos(m·10000^(-k/64)) first dips below 0 at m = 1707 (also found by a direct scan in the unit tests).
    let first = v["decay_first_negative"].as_u64().unwrap();
    assert!(first < 4096);
    let mb = v["min_base_for_context"].as_f64().unwrap();
    assert!(
        mb > 10000.0,
        "base 10000 fails the criterion at 4096, so the bound is above it: {mb}"
    );
    for d in ["f64", "f32", "bf16", "f16"] {
        let p = &v["precision"][d];
        for key in ["distinct_positions", "distinct_rows", "first_duplicate_row"] {
            assert!(p.get(key).is_some(), "{d}.{key}");
        }
    }
    // bf16 represents 0..256 exactly, then 128 values per binade (every 2nd, 4th, 8th, 16th integer);
    // 4095 rounds up to 4096: 257 + 4·128 distinct ids.
    assert_eq!(v["precision"]["bf16"]["distinct_positions"], 257 + 4 * 128);
    assert_eq!(v["precision"]["f32"]["distinct_positions"], 4096);
    assert!(v["verdict"].as_str().unwrap().contains("46 of 64 planes"));
    for f in ["wavelengths.svg", "decay.svg", "precision.svg"] {
        assert!(
            std::fs::read_to_string(dir.path().join(f))
                .unwrap()
                .contains("<svg"),
            "{f}"
        );
    }
}

#[test]
fn audit_exact_omegas_and_table_output() {
    let out = attnlab()
        .args([
            "rope",
            "audit",
            "--omega",
            "pi/2,pi/3",
            "--context",
            "100",
            "--dtype",
            "f16",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // The verdict comes first, then the details.
    let verdict_at = text
        .find("Separation 12 is indistinguishable")
        .expect("verdict names the alias");
    assert!(verdict_at < text.find("inv_freq").unwrap());
}

#[test]
fn audit_f16_overflow_is_reported() {
    let v = json(
        &[
            "rope",
            "audit",
            "--base",
            "10000",
            "--dim",
            "8",
            "--context",
            "70000",
            "--dtype",
            "f16",
            "--skip-min-base",
            "--json",
        ],
        0,
    );
    assert_eq!(v["precision"]["f16"]["first_overflow_position"], 65520);
    assert!(v["min_base_for_context"].is_null());
}

#[test]
fn bad_inputs_exit_2_with_one_line() {
    bad(&["rope", "period", "--omega", "0"], "frequency");
    bad(&["rope", "period", "--omega", "inf"], "frequency");
    bad(&["rope", "period", "--omega", "abc"], "frequency");
    bad(
        &["rope", "period", "--omega", "pi/2,pi/3"],
        "single frequency",
    );
    bad(&["rope", "period", "--omega", "1", "--tol", "0"], "tol");
    bad(&["rope", "period", "--omega", "1", "--tol", "-1"], "tol");
    bad(
        &["rope", "period", "--omega", "1", "--max-sep", "x"],
        "max-sep",
    );
    bad(
        &[
            "rope",
            "resolve",
            "--base",
            "1",
            "--dim",
            "8",
            "--context",
            "10",
        ],
        "base",
    );
    bad(
        &[
            "rope",
            "resolve",
            "--base",
            "0.5",
            "--dim",
            "8",
            "--context",
            "10",
        ],
        "base",
    );
    bad(
        &[
            "rope",
            "resolve",
            "--base",
            "nan",
            "--dim",
            "8",
            "--context",
            "10",
        ],
        "base",
    );
    bad(
        &[
            "rope",
            "resolve",
            "--base",
            "10000",
            "--dim",
            "7",
            "--context",
            "10",
        ],
        "rotary dimension",
    );
    bad(
        &[
            "rope",
            "resolve",
            "--base",
            "10000",
            "--dim",
            "8",
            "--context",
            "0",
        ],
        "context",
    );
    bad(
        &["rope", "resolve", "--base", "10000", "--dim", "8"],
        "context",
    );
    bad(
        &[
            "rope",
            "resolve",
            "--base",
            "10000",
            "--dim",
            "8",
            "--context",
            "10",
            "--tol",
            "0",
        ],
        "tol",
    );
    bad(
        &["rope", "resolve", "--base", "10000", "--context", "10"],
        "--dim",
    );
    bad(
        &[
            "rope",
            "resolve",
            "--omega",
            "pi/2",
            "--base",
            "10000",
            "--dim",
            "8",
            "--context",
            "10",
        ],
        "exactly one",
    );
    bad(&["rope", "resolve", "--context", "10"], "frequency source");
    bad(
        &["rope", "resolve", "--omega", "pi/0", "--context", "10"],
        "frequency",
    );
    bad(
        &[
            "rope",
            "audit",
            "--base",
            "10000",
            "--dim",
            "8",
            "--context",
            "0",
        ],
        "context",
    );
    bad(
        &["rope", "audit", "--base", "10000", "--dim", "8"],
        "context",
    );
    bad(
        &[
            "rope",
            "audit",
            "--base",
            "10000",
            "--dim",
            "8",
            "--context",
            "16",
            "--dtype",
            "f8",
        ],
        "dtype",
    );
    bad(
        &[
            "rope",
            "audit",
            "--omega",
            "pi/2",
            "--config",
            "/nonexistent/config.json",
            "--context",
            "16",
        ],
        "exactly one",
    );
    bad(
        &[
            "rope",
            "audit",
            "--base",
            "10000",
            "--dim",
            "8",
            "--context",
            "16",
            "--min-base-grid",
            "1",
        ],
        "min-base-grid",
    );
    bad(&["rope", "identity", "--omega", "0"], "frequency");
    bad(&["rope", "identity", "--trials", "0"], "trials");
    bad(&["rope", "identity", "--max-shift", "0"], "max shift");
    bad(&["rope", "identity", "--base", "-3", "--dim", "8"], "base");
}
