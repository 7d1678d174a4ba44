//! Cross-check against real numpy: the course's program (tests/python/seed000.py) and
//! `attnlab attend --rng numpy` must draw the same matrices and compute the same attention.
//!
//! numpy is installed by `.ci/run`; under CI a missing numpy is a failure, elsewhere the test
//! prints a skip note on stderr that the harness does not swallow (`common::oracle`).

use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

mod common;

use common::matrix;

fn max_diff(a: &Value, b: &Value) -> f64 {
    let (a, b) = (matrix(a), matrix(b));
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(&b)
        .flat_map(|(r, s)| {
            assert_eq!(r.len(), s.len());
            r.iter().zip(s).map(|(x, y)| (x - y).abs())
        })
        .fold(0.0, f64::max)
}

#[test]
fn seed_program_is_reproduced_for_seeds_0_1_42() {
    if !common::oracle("numpy") {
        return;
    }
    for (seed, n, d, perm) in [
        (0, 4, 4, "2,0,3,1"),
        (1, 4, 4, "2,0,3,1"),
        (42, 4, 4, "2,0,3,1"),
        (42, 6, 3, "5,0,4,1,3,2"),
    ] {
        let py = Command::new(common::python())
            .args([
                concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/python/seed000.py"),
                &seed.to_string(),
                &n.to_string(),
                &d.to_string(),
                perm,
            ])
            .output()
            .expect("python3 runs");
        assert!(
            py.status.success(),
            "{}",
            String::from_utf8_lossy(&py.stderr)
        );
        let want: Value = serde_json::from_slice(&py.stdout).unwrap();
        let out = cargo_bin_cmd!("attnlab")
            .args([
                "attend",
                "--rng",
                "numpy",
                "--seed",
                &seed.to_string(),
                "--n",
                &n.to_string(),
                "--dim",
                &d.to_string(),
                "--json",
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        // The draws are bit-identical (same MT19937 stream, same polar method); the outputs may
        // differ only by the order numpy's BLAS and our GEMM sum 4-term dot products, a few ulps
        // of values of size ~10: 1e-12 absolute is the acceptance bound and leaves ~100× room.
        for key in ["Wq", "Wk", "Wv", "X"] {
            assert_eq!(
                max_diff(&got[key], &want[key]),
                0.0,
                "seed {seed}: {key} must be drawn bit for bit"
            );
        }
        for key in ["output", "weights"] {
            let e = max_diff(&got[key], &want[key]);
            assert!(e <= 1e-12, "seed {seed}: {key} differs by {e:e}");
        }
        // And the equivariance check agrees with numpy's allclose verdict.
        assert!(want["allclose"].as_bool().unwrap());
        let eq = cargo_bin_cmd!("attnlab")
            .args([
                "equivariance",
                "--rng",
                "numpy",
                "--seed",
                &seed.to_string(),
                "--n",
                &n.to_string(),
                "--dim",
                &d.to_string(),
                "--perm",
                perm,
                "--json",
            ])
            .output()
            .unwrap();
        assert_eq!(eq.status.code(), Some(0));
        let r: Value = serde_json::from_slice(&eq.stdout).unwrap();
        assert_eq!(r["holds"], true);
    }
}

/// Issue 11, defect 2: a cross-check whose oracle is missing is skipped with a visible reason
/// locally and fails under CI — it never counts as passed because its oracle could not run.
#[test]
fn regression_a_missing_oracle_skips_locally_and_fails_under_ci() {
    let module = "attnlab_no_such_oracle_module";
    let mut note = Vec::new();
    assert!(!common::oracle_with("python3", module, false, &mut note));
    let note = String::from_utf8(note).unwrap();
    assert!(
        note.starts_with("SKIPPED (no oracle)") && note.contains(module),
        "{note}"
    );
    let under_ci =
        std::panic::catch_unwind(|| common::oracle_with("python3", module, true, &mut Vec::new()));
    let msg = under_ci.expect_err("a missing oracle must fail under CI");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("required under CI"), "{msg}");
    // A Python that does not exist is a missing oracle too (not a pass).
    assert!(!common::oracle_with(
        "/nonexistent/python3",
        "json",
        false,
        &mut Vec::new()
    ));
}
