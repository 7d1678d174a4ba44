//! Regression tests for the rotary review: bounded inputs (exit 2, one line naming the value
//! and the accepted range), readable frequency parse errors, conflicting options, resolve's
//! exit code, config notes, and compact number display. All through the binary.

mod common;

use common::{attnlab, bad, json, run_ok as run};

fn write_config(dir: &tempfile::TempDir, text: &str) -> String {
    let p = dir.path().join("config.json");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn huge_frequencies_are_rejected_instead_of_misreduced() {
    // 1e20 rad/position used to list phase errors of −742 rad and separation 1 twice.
    bad(
        &["rope", "period", "--omega", "1e20"],
        &["1e20", "≤ 1e4", "mod 2π"],
    );
    bad(
        &["rope", "identity", "--omega", "1e5", "--max-shift", "10"],
        &["100000", "≤ 1e4"],
    );
    // At the bounds the reduction stays inside a half turn and the convergents strictly
    // increase (no duplicated separation).
    let v = json(&["rope", "period", "--omega", "1e4", "--json"], 0);
    let reps = v["near_repeats"].as_array().unwrap();
    let mut last = 0;
    for r in reps {
        let e = r["phase_error"].as_f64().unwrap();
        assert!(e.abs() <= std::f64::consts::PI, "{r}");
        let s = r["separation"].as_u64().unwrap();
        assert!(s > last, "separations must increase: {reps:?}");
        last = s;
    }
}

#[test]
fn identity_reference_holds_at_the_max_shift_cap() {
    // Positions up to 2^40 with ω up to 1e4: |m·ω/2π| < 2^51, the reduction is accurate and
    // the check holds (it used to FAIL at 4e15 because the reference reduction broke).
    let v = json(
        &[
            "rope",
            "identity",
            "--omega",
            "1e4,0.3",
            "--max-shift",
            "2^40",
            "--trials",
            "100",
            "--json",
        ],
        0,
    );
    assert_eq!(v["holds"], true);
    bad(
        &["rope", "identity", "--max-shift", "4e15"],
        &["max shift", "4000000000000000", "2^40"],
    );
}

#[test]
fn oversized_inputs_exit_2_naming_the_value_and_the_range() {
    bad(
        &["rope", "score", "--base", "10000", "--dim", "100000000"],
        &["rotary dimension", "100000000", "2..=32768"],
    );
    bad(
        &[
            "rope",
            "resolve",
            "--base",
            "10000",
            "--dim",
            "1e8",
            "--context",
            "100",
        ],
        &["rotary dimension", "100000000"],
    );
    bad(
        &["rope", "identity", "--base", "10000", "--dim", "1e8"],
        &["rotary dimension", "100000000"],
    );
    bad(
        &[
            "rope",
            "audit",
            "--base",
            "10000",
            "--dim",
            "128",
            "--context",
            "2^27",
            "--skip-min-base",
        ],
        &["context", "134217728", "16777216"],
    );
    bad(
        &[
            "rope",
            "resolve",
            "--omega",
            "pi/2,0.3",
            "--context",
            "1e11",
        ],
        &["context", "100000000000", "1073741824"],
    );
    bad(
        &[
            "rope",
            "resolve",
            "--base",
            "10000",
            "--dim",
            "128",
            "--context",
            "2^30",
        ],
        &["context", "at most 268435456 positions for 64 planes"],
    );
    bad(
        &["rope", "identity", "--trials", "1e11"],
        &["trials", "100000000000", "1000000"],
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
            "64",
            "--min-base-grid",
            "1.0000000001",
        ],
        &["min-base-grid", "1.0000000001", "[1.0001, 2]"],
    );
    bad(
        &[
            "rope",
            "score",
            "--base",
            "10000",
            "--dim",
            "32768",
            "--max-sep",
            "2000",
        ],
        &[
            "max separation",
            "2000",
            "at most 1023 for 16384 frequencies",
        ],
    );
    bad(
        &["rope", "period", "--omega", "1", "--max-sep", "2^41"],
        &["max-sep", "2^40"],
    );
}

#[test]
fn oversized_config_values_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_config(
        &dir,
        r#"{"model_type": "llama", "hidden_size": 40000000000, "num_attention_heads": 32,
            "max_position_embeddings": 4096}"#,
    );
    bad(
        &["rope", "audit", "--config", &p],
        &["head dimension", "hidden_size 40000000000", "32768"],
    );
    let p = write_config(
        &dir,
        r#"{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
            "max_position_embeddings": 1e12}"#,
    );
    bad(
        &["rope", "audit", "--config", &p],
        &[
            "1000000000000",
            "max_position_embeddings",
            "--context",
            "16777216",
        ],
    );
    // With an explicit context within the cap the same config audits.
    let v = json(
        &[
            "rope",
            "audit",
            "--config",
            &p,
            "--context",
            "4096",
            "--skip-min-base",
            "--json",
        ],
        0,
    );
    assert_eq!(v["context"], 4096);
}

#[test]
fn frequency_parse_errors_read_well() {
    let expected = "expected an expression like pi/2, 2*pi/7, 0.25 or pi*3/8";
    bad(
        &["rope", "period", "--omega", "sqrt(2)"],
        &["invalid frequency: \"sqrt(2)\" (", expected],
    );
    bad(
        &["rope", "period", "--omega", "nan"],
        &["invalid frequency: \"nan\" (", "not a number", expected],
    );
    bad(
        &["rope", "score", "--omega", "pi/2,"],
        &["frequency list", "element 2 is empty"],
    );
    bad(
        &["rope", "period", "--omega", "5e-324"],
        &["5e-324", "≥ 1e-300", "wavelength"],
    );
}

#[test]
fn negative_and_decimal_multiples_of_pi_are_exact() {
    let v = json(&["rope", "period", "--omega", "-pi/2", "--json"], 0);
    assert_eq!(
        (v["exact"].as_bool(), v["first_repeat"].as_u64()),
        (Some(true), Some(4))
    );
    assert_eq!(v["omega"]["label"], "-pi/2");
    for text in ["pi*0.5", "0.5*pi", "pi/2e0"] {
        let v = json(&["rope", "period", "--omega", text, "--json"], 0);
        assert_eq!(v["first_repeat"], 4, "{text}");
    }
    let v = json(&["rope", "period", "--omega", "pi/1e9", "--json"], 0);
    assert_eq!(v["first_repeat"], 2_000_000_000u64);
}

#[test]
fn conflicting_or_misused_options_are_errors() {
    let out = attnlab()
        .args(["rope", "score", "--omega", "pi/2", "--dim", "8"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
    let out = attnlab()
        .args([
            "rope",
            "audit",
            "--base",
            "10000",
            "--dim",
            "8",
            "--context",
            "64",
            "--skip-min-base",
            "--min-base-grid",
            "1.001",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    bad(
        &["rope", "identity", "--seed", "-1"],
        &["seed", "-1", "e.g. 0 or 42"],
    );
    bad(
        &[
            "rope",
            "resolve",
            "--omega",
            "pi/2",
            "--base",
            "10",
            "--context",
            "8",
        ],
        &["exactly one"],
    );
}

#[test]
fn resolve_exit_code_is_the_check_result() {
    let text = run(
        &["rope", "resolve", "--omega", "pi/2,pi/3", "--context", "13"],
        1,
    );
    assert!(text.contains("does not resolve: separation 12"), "{text}");
    let text = run(
        &["rope", "resolve", "--omega", "pi/2,pi/3", "--context", "12"],
        0,
    );
    assert!(text.contains("resolves"), "{text}");
    // The audit is a report: exit 0 even when the set aliases.
    json(
        &[
            "rope",
            "audit",
            "--omega",
            "pi/2,pi/3",
            "--context",
            "13",
            "--skip-min-base",
            "--json",
        ],
        0,
    );
    let help = run(&["rope", "resolve", "--help"], 0);
    assert!(help.contains("exit 1"), "{help}");
}

#[test]
fn config_notes_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    // No rope_theta: the reader applies the class default and notes it.
    let p = write_config(
        &dir,
        r#"{"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8,
            "max_position_embeddings": 256}"#,
    );
    // The class default of LlamaConfig, named with the transformers version it comes from
    // (the note used to say only "class default 10000").
    let note = "no rope_theta: class default 10000 of model type llama (transformers 5.24.0)";
    let text = run(&["rope", "audit", "--config", &p, "--skip-min-base"], 0);
    let verdict_at = text.find("Every separation").expect("verdict");
    let notes_at = text.find("config notes:").expect("notes section");
    assert!(notes_at > verdict_at && text.contains(note), "{text}");
    let v = json(
        &["rope", "audit", "--config", &p, "--skip-min-base", "--json"],
        0,
    );
    assert_eq!(v["config_notes"], serde_json::json!([note]));
    let v = json(&["rope", "resolve", "--config", &p, "--json"], 0);
    assert_eq!(v["config_notes"], serde_json::json!([note]));
    assert!(run(&["rope", "resolve", "--config", &p], 0).contains(note));
    let v = json(
        &[
            "rope", "identity", "--config", &p, "--trials", "5", "--json",
        ],
        0,
    );
    assert_eq!(v["config_notes"], serde_json::json!([note]));
    // Explicit sources have no notes (an empty array, not a missing key).
    let v = json(
        &[
            "rope",
            "resolve",
            "--omega",
            "0.3",
            "--context",
            "8",
            "--json",
        ],
        0,
    );
    assert_eq!(v["config_notes"], serde_json::json!([]));
}

#[test]
fn audit_header_is_not_repeated_and_shows_the_effective_dynamic_base() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_config(
        &dir,
        r#"{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
            "max_position_embeddings": 4096, "rope_theta": 10000,
            "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}"#,
    );
    let text = run(
        &[
            "rope",
            "audit",
            "--config",
            &p,
            "--context",
            "16384",
            "--skip-min-base",
        ],
        0,
    );
    let header = text.lines().next().unwrap();
    assert_eq!(header.matches("rotary dim").count(), 1, "{header}");
    // base' = 10000·(2·16384/4096 − 1)^(128/126) = 10000·7^(64/63), computed here independently.
    let eff = 10000.0 * 7f64.powf(128.0 / 126.0);
    let v = json(
        &[
            "rope",
            "audit",
            "--config",
            &p,
            "--context",
            "16384",
            "--skip-min-base",
            "--json",
        ],
        0,
    );
    assert_eq!(v["base"], 10000.0);
    let got = v["effective_base"].as_f64().unwrap();
    assert!((got - eff).abs() <= 1e-9 * eff, "{got} vs {eff}");
    assert!(
        text.contains("base 10000 as configured; effective base"),
        "{text}"
    );
    // Plain base/dim sources still state their dimensions once.
    let text = run(
        &[
            "rope",
            "audit",
            "--base",
            "10000",
            "--dim",
            "8",
            "--context",
            "64",
            "--skip-min-base",
        ],
        0,
    );
    assert_eq!(
        text.lines().next().unwrap().matches("dim").count(),
        1,
        "{text}"
    );
    // Explicit frequencies do not name a dimension in their source: the header adds it.
    let text = run(
        &[
            "rope",
            "audit",
            "--omega",
            "pi/2,0.3",
            "--context",
            "64",
            "--skip-min-base",
        ],
        0,
    );
    assert!(
        text.starts_with("RoPE audit — pi/2,0.3 (rotary dim 4, head dim 4), context 64"),
        "{text}"
    );
}

#[test]
fn decay_null_is_disambiguated() {
    // base 10000, d = 128: B(m) = Σ_k cos(m·ω_k) first turns negative at some m₀ < 4096. Below
    // m₀ the field is null *because* nothing within L is negative, which the boolean states.
    let args = |l: &'static str| {
        vec![
            "rope",
            "audit",
            "--base",
            "10000",
            "--dim",
            "128",
            "--context",
            l,
            "--skip-min-base",
            "--json",
        ]
    };
    let v = json(&args("4096"), 0);
    assert_eq!(v["decay_first_negative_within_context"], true);
    let m0 = v["decay_first_negative"]
        .as_u64()
        .expect("negative within 4096");
    // Independent direct sum: B(m₀) < 0 and B(m₀ − 1) ≥ 0 (|B| ≫ 64 ulp of round-off here).
    let b = |m: u64| -> f64 {
        (0..64)
            .map(|k| (m as f64 * 10000f64.powf(-(2.0 * k as f64) / 128.0)).cos())
            .sum()
    };
    assert!(b(m0) < 0.0 && b(m0 - 1) >= 0.0, "B({m0}) = {}", b(m0));
    let short = (m0 - 1).to_string();
    let v = json(&args(Box::leak(short.into_boxed_str())), 0);
    assert!(v["decay_first_negative"].is_null());
    assert_eq!(v["decay_first_negative_within_context"], false);
}

#[test]
fn huge_and_tiny_numbers_print_compactly() {
    let text = run(
        &[
            "rope",
            "score",
            "--base",
            "1e308",
            "--dim",
            "4",
            "--max-sep",
            "2",
        ],
        0,
    );
    assert!(text.contains("cos(s·1e308^(-2/4))"), "{text}");
    assert!(!text.contains("0000000000"), "{text}");
    let text = run(&["rope", "period", "--omega", "1e-300"], 0);
    assert!(
        text.starts_with("ω = 1e-300 = 1e-300 rad/position"),
        "{text}"
    );
    assert!(
        text.contains("a binary64 ω is a rational number of radians"),
        "{text}"
    );
}

#[test]
fn score_and_resolve_agree_on_what_scores_like_zero() {
    // ω = 1e-7: every s ≤ 5 is > 1e-9 rad from a full turn, so resolve distinguishes them and
    // score must not list them (it used to, with |cos − 1| ≤ 1e-12 ≈ 1.4e-6 rad).
    let v = json(
        &[
            "rope",
            "score",
            "--omega",
            "1e-7",
            "--max-sep",
            "5",
            "--json",
        ],
        0,
    );
    assert_eq!(v["equal_to_zero_separation"], serde_json::json!([]));
    let v = json(
        &[
            "rope",
            "resolve",
            "--omega",
            "1e-7",
            "--context",
            "6",
            "--json",
        ],
        0,
    );
    assert_eq!(v["resolves"], true);
    assert_eq!(v["tol"], v["tol"].as_f64().unwrap());
}

#[test]
fn negative_frequencies_resolve_like_their_mirror() {
    // |s·(−ω) mod 2π| = |s·ω mod 2π|: the margins of a mirrored set are identical.
    let args = |set: &'static str| {
        vec![
            "rope",
            "resolve",
            "--omega",
            set,
            "--context",
            "100000",
            "--json",
        ]
    };
    let a = json(&args("-0.3,1.1"), 0);
    let b = json(&args("0.3,1.1"), 0);
    for key in ["min_margin", "margin_at", "first_alias"] {
        assert_eq!(a[key], b[key], "{key}");
    }
}

#[test]
fn audit_json_keeps_f32_fields_in_f32_form() {
    // inv_freq_f32 of plane 1 for base 10000, d = 8 is the f32 nearest 0.1; serialised as an
    // f32 it prints as 0.1, not as its f64 widening 0.10000000149011612.
    let out = run(
        &[
            "rope",
            "audit",
            "--base",
            "10000",
            "--dim",
            "8",
            "--context",
            "64",
            "--skip-min-base",
            "--json",
        ],
        0,
    );
    assert!(out.contains("\"inv_freq_f32\": 0.1,"), "{out}");
    assert!(!out.contains("0.10000000149011612"));
}
