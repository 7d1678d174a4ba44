//! The Llama-family forward against transformers on small random checkpoints of every supported
//! architecture (llama, mistral, qwen2 with q/k/v biases, qwen3 with per-head q/k norms and a
//! head dimension ≠ hidden/heads; grouped-query attention in all; tied and untied outputs).
//!
//! `scripts/llama_oracle.py tiny ARCH DIR` builds each checkpoint with transformers 5.24
//! (`save_pretrained` into a temporary directory, never committed) and writes transformers'
//! hidden states after layer 0 and last-position logits in float32 and float64 (transformers
//! rounds the rotary cos/sin and RMSNorm to float32 even in a float64 model; the script
//! evaluates those in float64 too, so its float64 run is the exact answer to f64 round-off). The oracle is a
//! Python with torch 2.15.0 + transformers 5.24.0 (`ATTNLAB_PYTHON`, else `python3`): without it
//! the test is skipped with a visible `SKIPPED (no oracle)` line, and under CI (`CI` set) it fails.
//!
//! Tolerances. In f64 both sides compute the same real numbers with sums in different orders; a
//! dot product of length m has error ≤ m·eps·Σ|terms|, and the longest sums here are the MLP's
//! (96), the embedding width (64) and the keys (19), so 1e-12 relative to the largest entry is
//! ~2000·eps64 of room — f64 agreement to 1e-12 shows the two compute the same function (a
//! structural difference, a wrong permutation, bias or norm, gives O(1) errors). In f32 we
//! compare with transformers' **f64** run (the exact answer to within 1e-12): our f32 error after
//! one layer is bounded by the same sum-length argument, k·eps32·(d + ffn + n) with k = 8
//! (≈ 1.7e-4 relative to the largest entry), and each further layer can add as much again and
//! amplify what came before by the layer's condition (O(1) for these O(1)-scaled random weights),
//! so the logits get (L + 1) times that. transformers' own f32 run must satisfy the same bound
//! (checked too, so the bound is not tailored to us).

use std::path::Path;
use std::process::Command;

use attnlab_core::limits::Limits;
use attnlab_core::model::{hf, llama::ForwardOptions};
use serde_json::Value;

mod common;
use common::{floats, python_with, rel_err, PINNED_TORCH_TRANSFORMERS};

/// `Some(python)` when the pinned oracle is importable; otherwise a visible skip (a failure under
/// CI).
fn oracle() -> Option<String> {
    python_with(
        "the pinned torch 2.15.0 + transformers 5.24.0",
        PINNED_TORCH_TRANSFORMERS,
    )
}

fn check_arch(root: &Path, arch: &str) {
    let dir = root.join(arch);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("oracle.json")).unwrap()).unwrap();
    let ids: Vec<u32> = doc["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect();
    let w32 = hf::load(&dir, &Limits::default()).unwrap();
    assert_eq!(w32.config.arch.name(), arch);
    let w64 = w32.cast::<f64>();
    let c = &w32.config;
    let n = ids.len();
    let opts = ForwardOptions {
        keep_hidden: true,
        logits_at: vec![n - 1],
        ..ForwardOptions::default()
    };
    let f32_run = w32.forward(&ids, &opts).unwrap();
    let f64_run = w64.forward(&ids, &opts).unwrap();
    let h32: Vec<f64> = f32_run.hidden[0].iter().map(|&x| f64::from(x)).collect();
    let h64: Vec<f64> = f64_run.hidden[0].iter().copied().collect();
    let l32: Vec<f64> = f32_run.logits.iter().map(|&x| f64::from(x)).collect();
    let l64: Vec<f64> = f64_run.logits.iter().copied().collect();
    let hf64 = floats(&doc["f64"]["hidden_after_layer0"]);
    let lf64 = floats(&doc["f64"]["logits_last"]);
    let hf32 = floats(&doc["f32"]["hidden_after_layer0"]);
    let lf32 = floats(&doc["f32"]["logits_last"]);

    // f64: the same function (see the module docs for 1e-12).
    let (eh, el) = (rel_err(&h64, &hf64), rel_err(&l64, &lf64));
    assert!(
        eh < 1e-12 && el < 1e-12,
        "{arch} f64: hidden {eh:e}, logits {el:e}"
    );

    // f32 against the f64 answer: k·eps32·(d + ffn + n) per layer, (L + 1) layers' worth for logits.
    let one = 8.0 * f64::from(f32::EPSILON) * (c.dim + c.ffn_dim + n) as f64;
    let tol_logits = one * (c.layers + 1) as f64;
    for (who, h, l) in [("attnlab", &h32, &l32), ("transformers", &hf32, &lf32)] {
        let (eh, el) = (rel_err(h, &hf64), rel_err(l, &lf64));
        assert!(
            eh < one && el < tol_logits,
            "{arch} {who} f32 vs f64: hidden {eh:e} (tol {one:e}), logits {el:e} (tol {tol_logits:e})"
        );
    }
    eprintln!(
        "{arch}: f64 hidden {eh:.1e} logits {el:.1e}; f32 hidden {:.1e} logits {:.1e} (tol {one:.1e} / {tol_logits:.1e})",
        rel_err(&h32, &hf64),
        rel_err(&l32, &lf64)
    );
    // The argmax agrees (the prediction itself, not only the numbers).
    let arg = |v: &[f64]| {
        v.iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap()
            .0
    };
    assert_eq!(arg(&l32), arg(&lf64), "{arch}: argmax");
}

#[test]
fn tiny_checkpoints_of_every_architecture_match_transformers() {
    let Some(py) = oracle() else { return };
    let archs = ["llama", "mistral", "qwen2", "qwen3"];
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llama_oracle.py");
    let run = Command::new(py)
        .arg(&script)
        .arg("tiny")
        .arg(dir.path())
        .args(archs)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "oracle failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    for arch in archs {
        check_arch(dir.path(), arch);
    }
}
