//! The contract, pinned: for each command at fixed inputs, a snapshot of the JSON report (the
//! interface other tools read) and of the text rendering (what a user reads), and a scan of the
//! text for Rust internals. `cargo insta review` after a deliberate change.

mod common;

/// One snapshot test per command line: `<name>_text` and `<name>_json` (the same arguments plus
/// `--json`); the exit code must be `code` both times.
macro_rules! snapshot {
    ($name:ident, $code:expr, [$($arg:expr),* $(,)?]) => {
        #[test]
        fn $name() {
            let args: Vec<&str> = vec![$($arg),*];
            let (code, text, err) = common::run_text(&args);
            assert_eq!(code, $code, "{args:?}: {err}");
            common::assert_no_internals(stringify!($name), &text);
            insta::assert_snapshot!(concat!(stringify!($name), "_text"), text);
            let mut json_args = args.clone();
            json_args.push("--json");
            let (code, json, err) = common::run_text(&json_args);
            assert_eq!(code, $code, "{json_args:?}: {err}");
            let mut value: serde_json::Value =
                serde_json::from_str(&json).expect("--json prints one JSON document");
            common::assert_no_internals_in_json(stringify!($name), &value);
            // Timings are measurements, not results: their names are pinned, not their values.
            common::redact_timings(&mut value);
            insta::assert_snapshot!(
                concat!(stringify!($name), "_json"),
                serde_json::to_string_pretty(&value).unwrap()
            );
        }
    };
}

snapshot!(
    attend_course_text,
    0,
    ["attend", "--rng", "numpy", "--text", "A B ."]
);
snapshot!(
    attend_two_heads,
    0,
    ["attend", "--n", "3", "--dim", "4", "--heads", "2"]
);
snapshot!(
    attend_show_all_rope_causal,
    0,
    ["attend", "--n", "3", "--dim", "2", "--pos", "rope", "--mask", "causal", "--show", "all"]
);
snapshot!(
    attend_show_index_positions,
    0,
    [
        "attend",
        "--text",
        "A B",
        "--pos",
        "index",
        "--show",
        "positions,qkv"
    ]
);
snapshot!(
    equivariance_course_program,
    0,
    [
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
        "2,0,3,1"
    ]
);
snapshot!(
    equivariance_index_breaks,
    1,
    ["equivariance", "--pos", "index", "--samples", "3"]
);
snapshot!(
    equivariance_rnn_breaks,
    1,
    ["equivariance", "--layer", "rnn", "--n", "3"]
);
snapshot!(
    equivariance_mean_readout,
    0,
    ["equivariance", "--readout", "mean", "--n", "3"]
);
snapshot!(lab_default, 0, ["lab"]);
// Issue 11, defect 3: the inputs that used to leak Rust internals into user text (`Some(12)`,
// `s = []`, `(1 planes)`, an empty range "1..0").
snapshot!(regression_lab_context_one, 0, ["lab", "--context", "1"]);
snapshot!(
    regression_lab_single_frequency_set,
    0,
    ["lab", "--omegas", "pi", "--context", "2"]
);
snapshot!(
    regression_rope_score_nothing_like_zero,
    0,
    ["rope", "score", "--omega", "0.3", "--max-sep", "1"]
);
snapshot!(
    regression_rope_resolve_one_plane,
    0,
    [
        "rope",
        "resolve",
        "--base",
        "10000",
        "--dim",
        "2",
        "--context",
        "2"
    ]
);
snapshot!(
    regression_rope_audit_one_plane,
    0,
    [
        "rope",
        "audit",
        "--base",
        "10000",
        "--dim",
        "2",
        "--context",
        "2",
        "--skip-min-base"
    ]
);
snapshot!(
    regression_rope_identity_one_plane,
    0,
    [
        "rope",
        "identity",
        "--base",
        "10000",
        "--dim",
        "2",
        "--trials",
        "3",
        "--max-shift",
        "10"
    ]
);
snapshot!(
    regression_equivariance_one_token,
    0,
    ["equivariance", "--n", "1"]
);
snapshot!(
    regression_attend_one_token,
    0,
    ["attend", "--n", "1", "--dim", "1", "--show", "all"]
);
snapshot!(
    lab_set_aliases,
    0,
    ["lab", "--omegas", "pi/2", "--context", "5"]
);
snapshot!(claims_ledger, 0, ["claims"]);
snapshot!(claims_fault_rope, 1, ["claims", "--inject-fault", "rope"]);
snapshot!(embed_default, 0, ["embed"]);
snapshot!(embed_basis_change, 0, ["embed", "--basis-change"]);
snapshot!(predict_default, 0, ["predict"]);
snapshot!(predict_b_a, 0, ["predict", "--text", "B A ."]);
snapshot!(session_list, 0, ["session", "--list"]);

/// A scripted session from an answers file in `tests/data/`, from a fresh state: snapshots
/// `<name>_text` (stdout) and `<name>_json` (the report); the temporary paths read `<STATE>` and
/// `<ANSWERS>`.
fn session_snapshot(name: &str, answers: &str, want: i32) {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let state = state.to_str().unwrap();
    let answers = format!("{}/tests/data/{answers}", env!("CARGO_MANIFEST_DIR"));
    let args = [
        "session",
        "--answers",
        &answers,
        "--state",
        state,
        "--reset",
    ];
    let redact = |s: &str| s.replace(state, "<STATE>").replace(&answers, "<ANSWERS>");
    let (code, text, err) = common::run_text(&args);
    assert_eq!(code, want, "{args:?}: {err}");
    common::assert_no_internals(name, &text);
    insta::assert_snapshot!(format!("{name}_text"), redact(&text));
    let json_args = [&args[..], &["--json"]].concat();
    let (code, json, err) = common::run_text(&json_args);
    assert_eq!(code, want, "{json_args:?}: {err}");
    let value: serde_json::Value =
        serde_json::from_str(&json).expect("--json prints one JSON document");
    common::assert_no_internals_in_json(name, &value);
    insta::assert_snapshot!(
        format!("{name}_json"),
        redact(&serde_json::to_string_pretty(&value).unwrap())
    );
}

#[test]
fn session_right_answers() {
    session_snapshot("session_right_answers", "session_right.toml", 0);
}

#[test]
fn session_wrong_answers() {
    session_snapshot("session_wrong_answers", "session_wrong.json", 0);
}

/// Two steps missing and one wrong: the rest graded, the missing named, exit 1.
#[test]
fn session_gap_answers() {
    session_snapshot("session_gap_answers", "session_gap.toml", 1);
}
snapshot!(
    rope_identity_exact,
    0,
    [
        "rope",
        "identity",
        "--omega",
        "pi/2,pi/3",
        "--trials",
        "5",
        "--max-shift",
        "100"
    ]
);
snapshot!(
    rope_identity_base_dim,
    0,
    [
        "rope",
        "identity",
        "--base",
        "10000",
        "--dim",
        "8",
        "--seed",
        "3",
        "--trials",
        "5",
        "--max-shift",
        "1000"
    ]
);
snapshot!(
    rope_identity_preset,
    0,
    [
        "rope",
        "identity",
        "--preset",
        "llama-3.1-8b",
        "--trials",
        "2",
        "--max-shift",
        "10"
    ]
);
snapshot!(
    rope_identity_config,
    0,
    [
        "rope",
        "identity",
        "--config",
        "tests/fixtures/dynamic_config.json",
        "--trials",
        "2",
        "--max-shift",
        "10"
    ]
);
snapshot!(
    rope_score_exact,
    0,
    ["rope", "score", "--omega", "pi/2,pi/3", "--max-sep", "12"]
);
snapshot!(
    rope_score_base_dim,
    0,
    [
        "rope",
        "score",
        "--base",
        "10000",
        "--dim",
        "8",
        "--max-sep",
        "4"
    ]
);
snapshot!(
    rope_score_none_like_zero,
    0,
    ["rope", "score", "--omega", "1e-7", "--max-sep", "5"]
);
snapshot!(rope_period_exact, 0, ["rope", "period", "--omega", "pi/2"]);
snapshot!(
    rope_period_float,
    0,
    ["rope", "period", "--omega", "1", "--tol", "1e-4"]
);
snapshot!(
    rope_period_none_within_tol,
    0,
    [
        "rope",
        "period",
        "--omega",
        "0.3",
        "--tol",
        "1e-9",
        "--max-sep",
        "100"
    ]
);
snapshot!(
    rope_resolve_exact_fails,
    1,
    ["rope", "resolve", "--omega", "pi/2,pi/3", "--context", "13"]
);
snapshot!(
    rope_resolve_exact_holds,
    0,
    ["rope", "resolve", "--omega", "pi/2,pi/3", "--context", "12"]
);
snapshot!(
    rope_resolve_base_dim,
    0,
    [
        "rope",
        "resolve",
        "--base",
        "10000",
        "--dim",
        "8",
        "--context",
        "4096"
    ]
);
snapshot!(
    rope_resolve_preset,
    0,
    [
        "rope",
        "resolve",
        "--preset",
        "llama-3.1-8b",
        "--context",
        "4096"
    ]
);
snapshot!(
    rope_resolve_config,
    0,
    [
        "rope",
        "resolve",
        "--config",
        "tests/fixtures/dynamic_config.json"
    ]
);
snapshot!(
    rope_resolve_one_position,
    0,
    ["rope", "resolve", "--omega", "0.3", "--context", "1"]
);
snapshot!(
    rope_audit_exact,
    0,
    [
        "rope",
        "audit",
        "--omega",
        "pi/2,pi/3",
        "--context",
        "24",
        "--skip-min-base"
    ]
);
snapshot!(
    rope_audit_base_dim,
    0,
    [
        "rope",
        "audit",
        "--base",
        "10000",
        "--dim",
        "8",
        "--context",
        "64",
        "--skip-min-base"
    ]
);
snapshot!(
    rope_audit_min_base,
    0,
    [
        "rope",
        "audit",
        "--base",
        "10000",
        "--dim",
        "8",
        "--context",
        "64",
        "--dtype",
        "f16"
    ]
);
snapshot!(
    rope_audit_preset,
    0,
    [
        "rope",
        "audit",
        "--preset",
        "llama-3.1-8b",
        "--context",
        "16",
        "--skip-min-base"
    ]
);
snapshot!(
    rope_audit_config_dynamic,
    0,
    [
        "rope",
        "audit",
        "--config",
        "tests/fixtures/dynamic_config.json",
        "--context",
        "128",
        "--skip-min-base"
    ]
);
snapshot!(
    rope_audit_gemma3_two_sets,
    0,
    [
        "rope",
        "audit",
        "--config",
        "tests/fixtures/gemma3_4b.json",
        "--context",
        "24",
        "--skip-min-base"
    ]
);
snapshot!(
    rope_audit_llama4_high_equals_low,
    0,
    [
        "rope",
        "audit",
        "--config",
        "tests/fixtures/llama4_scout.json",
        "--context",
        "16",
        "--skip-min-base"
    ]
);
snapshot!(
    rope_audit_qwen2_vl_mrope,
    0,
    [
        "rope",
        "audit",
        "--config",
        "tests/fixtures/qwen2_vl_7b.json",
        "--context",
        "16",
        "--skip-min-base"
    ]
);
snapshot!(
    rope_audit_phi_class_default,
    0,
    [
        "rope",
        "audit",
        "--config",
        "tests/fixtures/phi_no_partial.json",
        "--context",
        "16",
        "--skip-min-base"
    ]
);
snapshot!(
    rope_audit_yarn_beyond_trained,
    0,
    [
        "rope",
        "audit",
        "--config",
        "tests/fixtures/tiny_yarn.json",
        "--context",
        "100"
    ]
);
snapshot!(
    rope_audit_deepseek_softmax,
    0,
    [
        "rope",
        "audit",
        "--preset",
        "deepseek-v3",
        "--context",
        "16",
        "--skip-min-base"
    ]
);
snapshot!(
    rope_audit_longrope_switch,
    0,
    [
        "rope",
        "audit",
        "--preset",
        "phi-3.5-mini-instruct",
        "--context",
        "4097",
        "--skip-min-base"
    ]
);
snapshot!(
    rope_engines_phi35,
    0,
    ["rope", "engines", "--preset", "phi-3.5-mini-instruct"]
);
snapshot!(
    rope_engines_gpt_oss,
    0,
    [
        "rope",
        "engines",
        "--preset",
        "gpt-oss-20b",
        "--engine",
        "llamacpp"
    ]
);
