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
            let value: serde_json::Value =
                serde_json::from_str(&json).expect("--json prints one JSON document");
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
