//! `attnlab predict` through the binary: the hand-derivable default run, the JSON fields, blocks
//! replacing the defaults, and bad inputs (exit 2, one line).

mod common;

use common::matrix;
use serde_json::Value;

fn run(args: &[&str]) -> (i32, String, String) {
    let full: Vec<&str> = std::iter::once("predict")
        .chain(args.iter().copied())
        .collect();
    common::run_text(&full)
}

fn vector(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[test]
fn a_b_with_the_default_blocks_is_derivable_by_hand() {
    let (code, out, err) = run(&["--text", "A B", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    for key in [
        "tokens",
        "ids",
        "H",
        "Q",
        "K",
        "V",
        "scores",
        "weights",
        "output",
        "readout",
        "logits",
        "probabilities",
        "prediction",
    ] {
        assert!(!v[key].is_null(), "missing {key}");
    }
    assert_eq!(v["tokens"], serde_json::json!(["A", "B"]));
    assert_eq!(v["ids"], serde_json::json!([0, 1]));
    // With E's rows for A and B, H = I₂; identity projections give Q = K = V = I₂ exactly.
    let eye = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
    for key in ["H", "Q", "K", "V"] {
        assert_eq!(matrix(&v[key]), eye, "{key}");
    }
    // scores = I₂/√2 with the entry above the diagonal masked (null = −∞).
    let r = 1.0 / 2f64.sqrt();
    assert_eq!(v["scores"], serde_json::json!([[r, null], [0.0, r]]));
    // Causal weights: row 0 sees only itself (exactly 1); row 1 = softmax(0, 1/√2) =
    // (σ(−1/√2), σ(1/√2)). Tolerance 4 ulp of 1: exp, a sum and a division, each rounded once.
    let w = matrix(&v["weights"]);
    assert_eq!(w[0], vec![1.0, 0.0]);
    let tol = 4.0 * f64::EPSILON;
    assert!((w[1][0] - sigmoid(-r)).abs() < tol && (w[1][1] - sigmoid(r)).abs() < tol);
    // V = I₂: output = weights, and the readout is the last row.
    assert_eq!(matrix(&v["output"]), w);
    let readout = vector(&v["readout"]);
    assert_eq!(readout, w[1]);
    // Tied unembedding: logits = readout·Eᵀ = (w₁₀, w₁₁, (w₁₀ + w₁₁)/2 = 1/2); the last is a
    // two-term sum of weights that add to 1 (2 ulp).
    let logits = vector(&v["logits"]);
    assert_eq!(&logits[..2], &readout[..]);
    assert!((logits[2] - 0.5).abs() < 2.0 * f64::EPSILON);
    // Probabilities: softmax over the three logits (8 ulp for exp, sum and divide), summing to 1.
    let p = vector(&v["probabilities"]);
    let z: f64 = logits.iter().map(|l| l.exp()).sum();
    for (pi, li) in p.iter().zip(&logits) {
        assert!((pi - li.exp() / z).abs() < 8.0 * f64::EPSILON);
    }
    assert!((p.iter().sum::<f64>() - 1.0).abs() < 4.0 * f64::EPSILON);
    // σ(1/√2) ≈ 0.67 > 1/2 > σ(−1/√2): B is predicted.
    assert_eq!(v["prediction"], "B");
    assert_eq!(v["sources"]["U"], "default: Eᵀ (tied embeddings)");
}

#[test]
fn the_table_output_shows_every_stage() {
    let (code, out, _) = run(&["--text", "B A"]);
    assert_eq!(code, 0);
    for needle in [
        "H = E[labels]",
        "Q = H·Wq",
        "K = H·Wk",
        "V = H·Wv",
        "scores = Q·Kᵀ/√d_k, causal mask",
        "−∞ (masked)",
        "weights = softmax_row(scores)",
        "output = weights·V",
        "readout = output row 1",
        "U, unembedding [default: Eᵀ (tied embeddings)]",
        "logit = readout·U",
        "prediction: \"A\"",
    ] {
        assert!(out.contains(needle), "{needle:?} not in\n{out}");
    }
}

#[test]
fn blocks_replace_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    // A 4-token vocabulary in 3 dimensions, a value projection that swaps the first two
    // components, and an explicit U that scores only the first component.
    let f = dir.path().join("b.json");
    std::fs::write(
        &f,
        r#"{"vocab": ["x", "y", "z", "w"],
            "E": [[1,0,0],[0,1,0],[0,0,1],[1,1,1]],
            "Wv": [[0,1,0],[1,0,0],[0,0,1]],
            "U": [[1,0,0,0],[0,0,0,0],[0,0,0,0]]}"#,
    )
    .unwrap();
    let (code, out, err) = run(&["--text", "x y", "--blocks", f.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["sources"]["Wv"], "blocks file");
    assert_eq!(v["sources"]["Wq"], "default: identity");
    // V = H·Wv swaps x's and y's components: V = [[0,1,0],[1,0,0]] exactly.
    assert_eq!(
        matrix(&v["V"]),
        vec![vec![0.0, 1.0, 0.0], vec![1.0, 0.0, 0.0]]
    );
    // The readout is (w₁₁, w₁₀, 0); U keeps its first component as the logit of x, the rest 0.
    let w = matrix(&v["weights"]);
    let logits = vector(&v["logits"]);
    assert_eq!(logits, vec![w[1][1], 0.0, 0.0, 0.0]);
    // w₁₁ = σ(1/√3) > 0, so x has the largest logit.
    assert_eq!(v["prediction"], "x");
}

#[test]
fn bad_inputs_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let wide = dir.path().join("wide.json");
    // Wv maps 2 → 3 dimensions, so the default U = Eᵀ (2 × 3) does not fit.
    std::fs::write(&wide, r#"{"Wv": [[1,0,0],[0,1,0]]}"#).unwrap();
    let bad_u = dir.path().join("u.json");
    std::fs::write(&bad_u, r#"{"U": [[1,0],[0,1]]}"#).unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--text".into(), "A C".into()], "invalid token: \"C\""),
        (vec!["--text".into(), "  ".into()], "at least one token"),
        (
            vec!["--blocks".into(), wide.display().to_string()],
            "without a U block",
        ),
        (
            vec!["--blocks".into(), bad_u.display().to_string()],
            "block U", // the user's block is named (was "unembedding U")
        ),
        (
            vec![
                "--blocks".into(),
                dir.path().join("none.json").display().to_string(),
            ],
            "none.json",
        ),
    ];
    for (args, needle) in cases {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = run(&refs);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
}

/// Issue 11, defect 4: `predict --text "B A ."` ties three ways (⅓ each); the output says it is
/// a tie and lists the tied tokens instead of announcing one of them.
#[test]
fn regression_predict_b_a_dot_is_reported_as_a_tie() {
    let out = common::run_ok(&["predict", "--text", "B A ."], 0);
    assert!(
        out.contains("prediction: a tie — \"A\", \"B\" and \".\" are equally probable"),
        "{out}"
    );
    assert_eq!(out.matches(" ◀").count(), 3, "{out}");
    let v = common::json(&["predict", "--text", "B A .", "--json"], 0);
    assert_eq!(v["tied"], serde_json::json!(["A", "B", "."]));
    assert!(v["tie_tolerance"].as_f64().unwrap() > 0.0);
    let v = common::json(&["predict", "--json"], 0);
    assert_eq!(v["tied"], serde_json::json!(["B"]));
}
