//! The core commands through the binary: seed 000's verified output and exercises, readouts,
//! masks, and every bad input → one line on stderr and exit 2.

mod common;

use assert_cmd::cargo::cargo_bin_cmd;
use common::run_json as run;

#[test]
fn seed_program_check_holds_at_round_off() {
    let (code, v, _) = run(&[
        "equivariance",
        "--rng",
        "numpy",
        "--seed",
        "0",
        "--n",
        "4",
        "--dim",
        "4",
        "--perm",
        "2,0,3,1",
        "--json",
    ]);
    assert_eq!(code, 0);
    for key in [
        "holds",
        "max_abs_error",
        "max_rel_error",
        "max_ulps",
        "tolerance",
        "margin",
        "permutations_checked",
        "worst",
        "layer",
        "pos",
        "mask",
        "dtype",
        "seed",
    ] {
        assert!(!v[key].is_null(), "missing {key}");
    }
    assert_eq!(v["holds"], true);
    assert_eq!(v["permutations_checked"], 1);
    assert_eq!(v["worst"]["perm"], serde_json::json!([2, 0, 3, 1]));
    // Round-off level: a few ulps of outputs of size ~4 (ulp(4) = 8.9e-16).
    assert!(v["max_abs_error"].as_f64().unwrap() < 1e-14);
    assert_eq!(v["controls"][0]["ok"], true);
    assert_eq!(v["controls"][1]["ok"], true);
    assert_eq!(v["diagnosis"]["conclusion"], "round-off");
}

#[test]
fn exercise_1_any_seed_length_and_permutation() {
    for (seed, n, perm) in [("7", "5", "4,3,2,1,0"), ("123", "3", "1,2,0")] {
        let (code, v, _) = run(&[
            "equivariance",
            "--seed",
            seed,
            "--n",
            n,
            "--perm",
            perm,
            "--json",
        ]);
        assert_eq!(code, 0, "{v}");
    }
    // Exhaustive over all 7! permutations, and random samples, in f32 as well.
    let (code, v, _) = run(&[
        "equivariance",
        "--n",
        "7",
        "--exhaustive",
        "--dtype",
        "f32",
        "--json",
    ]);
    assert_eq!((code, v["permutations_checked"].as_u64()), (0, Some(5040)));
    let (code, v, _) = run(&["equivariance", "--n", "12", "--samples", "25", "--json"]);
    assert_eq!((code, v["permutations_checked"].as_u64()), (0, Some(25)));
}

#[test]
fn exercise_2_the_rnn_breaks_it_by_far() {
    let (code, v, _) = run(&["equivariance", "--layer", "rnn", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["holds"], false);
    // Structural: the error is O(1) against a tolerance of ~1e-14.
    assert!(v["margin"].as_f64().unwrap() > 1e6);
    assert_eq!(v["diagnosis"]["conclusion"], "structural");
}

#[test]
fn exercise_3_positions_and_the_causal_mask_break_it() {
    for extra in [
        ["--pos", "index"],
        ["--pos", "sinusoidal"],
        ["--pos", "learned"],
        ["--pos", "rope"],
        ["--mask", "causal"],
    ] {
        let mut args = vec!["equivariance", "--json"];
        args.extend_from_slice(&extra);
        let (code, v, _) = run(&args);
        assert_eq!(code, 1, "{extra:?} should break the symmetry");
        assert!(
            v["margin"].as_f64().unwrap() > 1e6,
            "{extra:?}: {}",
            v["margin"]
        );
    }
}

#[test]
fn readouts_mean_is_invariant_row_is_not() {
    let (code, v, _) = run(&["equivariance", "--readout", "mean", "--json"]);
    assert_eq!((code, v["property"].as_str()), (0, Some("invariance")));
    let (code, _, _) = run(&["equivariance", "--readout", "row:0", "--json"]);
    assert_eq!(code, 1);
}

#[test]
fn attend_from_text_uses_the_course_table() {
    let (code, v, _) = run(&["attend", "--text", "A B", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["X"], serde_json::json!([[1.0, 0.0], [0.0, 1.0]]));
    assert_eq!(v["tokens"], serde_json::json!(["A", "B"]));
    let w: Vec<Vec<f64>> = serde_json::from_value(v["weights"].clone()).unwrap();
    for row in w {
        // Rows of a softmax sum to 1 within a couple of ulps.
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 4.0 * f64::EPSILON);
    }
    let (code, v, _) = run(&[
        "attend", "--n", "6", "--dim", "8", "--heads", "2", "--mask", "causal", "--json",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["weights_per_head"].as_array().unwrap().len(), 2);
    assert_eq!(v["weights"][0][1], 0.0, "causal: query 0 cannot see key 1");
}

#[test]
fn embed_selects_rows_and_absorbs_basis_changes() {
    let (code, v, _) = run(&["embed", "--text", "A B .", "--basis-change", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["one_hot_times_E_equals_row"], true);
    assert_eq!(
        v["H"],
        serde_json::json!([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    );
    let cases = v["basis_change"]["cases"].as_array().unwrap();
    assert_eq!(cases[0]["interface"], "linear");
    assert_eq!(cases[0]["unchanged"], true);
    assert!(cases[1..].iter().any(|c| c["unchanged"] == false));
}

#[test]
fn bad_inputs_exit_2_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let nan = dir.path().join("nan.json");
    std::fs::write(&nan, r#"{"Wq": [[1, 2], [3, "NaN"]]}"#).unwrap();
    let nan_s = nan.to_str().unwrap();
    let wrong = dir.path().join("wrong.json");
    std::fs::write(&wrong, r#"{"Wq": [[1, 2, 3], [3, 4, 5]]}"#).unwrap();
    let wrong_s = wrong.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["equivariance", "--perm", "0,0,1,2"], "permutation"),
        (vec!["equivariance", "--perm", "1,0"], "length"),
        (vec!["equivariance", "--perm", "a,b,c,d"], "permutation"),
        (vec!["equivariance", "--n", "0"], "--n"),
        (vec!["equivariance", "--dim", "0"], "--dim"),
        (vec!["attend", "--n", "1000000"], "n = 1000000"),
        (vec!["attend", "--n", "-1"], "-1"),
        (vec!["equivariance", "--index-scale", "0.5"], "--pos index"),
        (
            vec!["equivariance", "--pos", "index", "--index-scale", "1e200"],
            // The same refusal as attend's (one message for one overflow).
            "is not finite",
        ),
        (
            vec!["equivariance", "--layer", "rnn", "--heads", "2"],
            "--heads",
        ),
        (vec!["equivariance", "--samples", "100001"], "--samples"),
        (vec!["attend", "--dim", "100000"], "--dim"),
        (vec!["attend", "--text", "A B", "--dim", "3"], "--dim"),
        (vec!["attend", "--text", "A C"], "\"C\""),
        (vec!["attend", "--mask", "diagonal"], "diagonal"),
        (vec!["attend", "--pos", "spiral"], "spiral"),
        (vec!["attend", "--dtype", "f16"], "f16"),
        (vec!["attend", "--blocks", nan_s], "non-finite"),
        (vec!["attend", "--blocks", wrong_s, "--dim", "2"], "Wq"),
        (
            vec!["attend", "--blocks", "/nonexistent/blocks.json"],
            "cannot read",
        ),
        (vec!["attend", "--heads", "3"], "--heads"),
        (
            vec!["attend", "--rng", "numpy", "--seed", "4294967296"],
            "seed",
        ),
        (vec!["equivariance", "--readout", "row:9"], "readout"),
        (vec!["equivariance", "--readout", "max"], "readout"),
        (vec!["equivariance", "--samples", "0"], "--samples"),
        (vec!["equivariance", "--n", "9", "--exhaustive"], "1..=8"),
        (
            vec!["equivariance", "--layer", "rnn", "--pos", "rope"],
            "rope",
        ),
        (vec!["equivariance", "--index-scale", "inf"], "index-scale"),
        (vec!["embed", "--text", "A Z"], "\"Z\""),
        (vec!["embed", "--text", "   "], "text"),
    ];
    for (args, needle) in cases {
        let out = cargo_bin_cmd!("attnlab").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: {err:?} should mention {needle:?}"
        );
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
        if !err.starts_with("error: unexpected") && !err.contains("Usage:") {
            assert_eq!(
                err.trim_end().lines().count(),
                1,
                "{args:?}: {err:?} should be one line"
            );
        }
    }
}

#[test]
fn regression_degenerate_permutation_sets_are_not_dressed_up() {
    // n = 2 has one non-identity permutation: five samples check it once, not five times.
    let (code, v, _) = run(&["equivariance", "--n", "2", "--samples", "5", "--json"]);
    assert_eq!((code, v["permutations_checked"].as_u64()), (0, Some(1)));
    // n = 1: only the identity exists, and the report says so.
    let (code, v, _) = run(&["equivariance", "--n", "1", "--json"]);
    assert_eq!(code, 0);
    assert!(v["note"].as_str().unwrap().contains("only the identity"));
    // n = 4 and the identity given: other permutations exist, the identity was chosen.
    let (code, v, _) = run(&["equivariance", "--perm", "0,1,2,3", "--json"]);
    assert_eq!(code, 0);
    let note = v["note"].as_str().unwrap();
    assert!(
        note.contains("the identity permutation was chosen") && !note.contains("only the identity"),
        "{note}"
    );
}

#[test]
fn the_product_is_f_of_the_shuffled_input_beside_the_shuffled_output() {
    let (code, v, _) = run(&["equivariance", "--perm", "2,0,3,1", "--product", "--json"]);
    assert_eq!(code, 0);
    let p = &v["product"];
    let m = |k: &str| -> Vec<Vec<f64>> { serde_json::from_value(p[k].clone()).unwrap() };
    let (fpx, pfx, diff) = (m("f_of_permuted"), m("permuted_f"), m("difference"));
    let mut largest = 0f64;
    for i in 0..4 {
        for j in 0..4 {
            // The difference is the two matrices' entry-by-entry difference, exactly.
            assert_eq!(diff[i][j], fpx[i][j] - pfx[i][j]);
            largest = largest.max(diff[i][j].abs());
        }
    }
    // The same forward pass as the check: its largest entry is the check's error.
    assert_eq!(largest, v["max_abs_error"].as_f64().unwrap());
    // Without one --perm there is no product to show.
    let out = cargo_bin_cmd!("attnlab")
        .args(["equivariance", "--product"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn regression_large_matrices_are_elided_in_tables() {
    let out = cargo_bin_cmd!("attnlab")
        .args(["attend", "--n", "20", "--dim", "16"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("… 8 more rows") && text.contains("… 8 more"),
        "{text}"
    );
    // --json still carries every entry.
    let (_, v, _) = run(&["attend", "--n", "20", "--dim", "16", "--json"]);
    assert_eq!(v["weights"].as_array().unwrap().len(), 20);
    assert_eq!(v["weights"][0].as_array().unwrap().len(), 20);
}

/// Issue 11, item 7: the default generator is numpy, so `attnlab equivariance` and `attnlab
/// attend` with no options are the course program (np.random.seed(0), n = d = 4); `--rng std`
/// stays available and draws other matrices.
#[test]
fn with_no_options_the_commands_run_the_course_program() {
    let course = [
        "--rng", "numpy", "--seed", "0", "--n", "4", "--dim", "4", "--json",
    ];
    for cmd in ["attend", "equivariance"] {
        let default = common::json(&[cmd, "--json"], 0);
        let explicit = common::json(&[&[cmd][..], &course[..]].concat(), 0);
        // Equal reports, but for the seconds each run took.
        assert_eq!(
            common::without_timings(default.clone()),
            common::without_timings(explicit),
            "{cmd}"
        );
        assert_eq!(default["rng"], "numpy");
    }
    let std = common::json(&["attend", "--rng", "std", "--json"], 0);
    assert_ne!(std["X"], common::json(&["attend", "--json"], 0)["X"]);
    let help = common::run_ok(&["equivariance", "--help"], 0);
    assert!(help.contains("[default: numpy]"), "{help}");
}

/// Issue 11, item 9: `attend --show` prints the intermediates a student asks for, in the order
/// of the computation; `--json` holds them all.
#[test]
fn attend_shows_the_intermediates_asked_for() {
    let out = common::run_ok(
        &[
            "attend",
            "--text",
            "A B .",
            "--pos",
            "index",
            "--show",
            "scores,qkv,positions",
        ],
        0,
    );
    let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("no {s:?} in {out}"));
    assert!(at("positional table added (index)") < at("Q = H·Wq"));
    assert!(at("V = H·Wv") < at("scores = Q·Kᵀ/√d_k"));
    assert!(!out.contains("X (input rows)") && !out.contains("output (A·V)"));
    let all = common::run_ok(&["attend", "--pos", "rope", "--show", "all"], 0);
    for part in [
        "X (input rows)",
        "Wq (4×4)",
        "Q rotated",
        "scores =",
        "weights A",
        "output (A·V)",
    ] {
        assert!(all.contains(part), "{part}: {all}");
    }
    assert!(
        all.contains("RoPE rotates each head's queries and keys"),
        "{all}"
    );
    let v = common::json(&["attend", "--mask", "causal", "--json"], 0);
    for key in ["Q", "K", "V", "scores", "positions", "Q_rotated"] {
        assert!(v.get(key).is_some(), "{key}");
    }
    assert!(v["scores"][0][1].is_null(), "masked entries are null");
    common::bad(&["attend", "--show", "everything"], &["--show", "qkv"]);
}

/// `--json` carries the time of each part and the rate (issue 12); the text shows them only
/// with `--timings`, so the normal text stays the same from run to run.
#[test]
fn equivariance_reports_timings_in_json_and_on_request_in_text() {
    let (code, v, _) = run(&["equivariance", "--n", "5", "--dim", "4", "--json"]);
    assert_eq!(code, 0);
    let t = &v["timings"];
    for part in [
        "inputs_s",
        "forwards_s",
        "comparisons_s",
        "weight_form_s",
        "controls_s",
        "diagnosis_s",
        "total_s",
        "permutations_per_second",
    ] {
        let x = t[part]
            .as_f64()
            .unwrap_or_else(|| panic!("timings.{part}: {t}"));
        assert!(x.is_finite() && x >= 0.0, "timings.{part} = {x}");
    }
    assert!(t["permutations_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(v["permutations_checked"], 120);
    let plain = common::run_ok(&["equivariance", "--n", "5", "--dim", "4"], 0);
    assert!(!plain.contains("time:"), "{plain}");
    let timed = common::run_ok(&["equivariance", "--n", "5", "--dim", "4", "--timings"], 0);
    let line = timed.lines().last().unwrap();
    assert!(
        line.starts_with("time: inputs ") && line.ends_with(" permutations/s"),
        "{line}"
    );
    // The rest of the text is the plain text, line for line.
    assert_eq!(timed.strip_suffix(&format!("{line}\n")).unwrap(), plain);
}
