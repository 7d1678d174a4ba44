//! The forward on the real SmolLM2-135M GGUF against transformers 5.24 loading the same file
//! (`AutoModelForCausalLM.from_pretrained(dir, gguf_file=…, dtype=torch.float32)`, which
//! dequantizes every tensor to f32 and undoes llama.cpp's q/k row permutation). The prompts are
//! not ours: the first three lines of the course spec (seed 000) of 40 to 200 characters.
//!
//! Oracle: the model file (`scripts/fetch-smollm2`; `ATTNLAB_MODEL_DIR` names the cache) and a
//! Python with torch 2.15.0 + transformers 5.24.0 + gguf + accelerate (`ATTNLAB_PYTHON`);
//! without them a visible `SKIPPED (no oracle)` line, and a failure under CI (`CI` set).
//!
//! Tolerance (relative to the largest |entry|): both runs are f32 on the same dequantized weights
//! with sums in different orders. One layer's round-off is at most k·eps32·(d + ffn + n)
//! (k = 8; d = 576, ffn = 1536), and over L = 30 layers each adds as much again, so logits get
//! (L + 1)·k·eps32·(d + ffn + n) ≈ 6 % — a worst-case bound; the measured gap is printed.
//! The sharp check is the prediction itself: the top-10 ids in order, where two neighbours may
//! swap only when their logits are closer than the bound.

use std::path::{Path, PathBuf};
use std::process::Command;

use attnlab_core::limits::Limits;
use attnlab_core::model::gguf::GgufFile;
use attnlab_core::model::gguf_weights::{self, QkRows};
use attnlab_core::model::llama::{top_k, ForwardOptions};
use attnlab_core::model::tokenizer::ModelTokenizer;
use serde_json::Value;

mod common;
use common::{floats, python_with, rel_err, smollm2, spec_lines, PINNED_TORCH_TRANSFORMERS};

fn setup() -> Option<(PathBuf, String)> {
    let path = smollm2()?;
    let py = python_with(
        "the pinned torch 2.15.0 + transformers 5.24.0 with gguf and accelerate",
        &format!("{PINNED_TORCH_TRANSFORMERS}; import gguf, accelerate"),
    )?;
    Some((path, py))
}

#[test]
fn smollm2_matches_transformers_on_the_spec_lines() {
    let Some((path, py)) = setup() else { return };
    let prompts = spec_lines(3);
    assert_eq!(prompts.len(), 3);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oracle.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llama_oracle.py");
    let run = Command::new(&py)
        .arg(&script)
        .arg("gguf")
        .arg(&path)
        .arg(&out)
        .args(&prompts)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "oracle: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();

    let limits = Limits::default();
    let f = GgufFile::open(&path, &limits).unwrap();
    let tok = ModelTokenizer::from_gguf(&f).unwrap();
    let w = gguf_weights::load(&f, QkRows::HalfSplit, &limits).unwrap();
    let stored = gguf_weights::load(&f, QkRows::AsStored, &limits).unwrap();
    let c = &w.config;
    for case in doc["cases"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let want_ids: Vec<u32> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        let ids: Vec<u32> = tok
            .encode(text, &limits)
            .unwrap()
            .into_iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(ids, want_ids, "token ids of {text:?}");
        let n = ids.len();
        let opts = ForwardOptions {
            keep_hidden: true,
            logits_at: vec![n - 1],
            ..ForwardOptions::default()
        };
        let a = w.forward(&ids, &opts).unwrap();
        let one = 8.0 * f64::from(f32::EPSILON) * (c.dim + c.ffn_dim + n) as f64;
        let tol = one * (c.layers + 1) as f64;
        let h: Vec<f64> = a.hidden[0].iter().map(|&x| f64::from(x)).collect();
        let l: Vec<f64> = a.logits.iter().map(|&x| f64::from(x)).collect();
        let (eh, el) = (
            rel_err(&h, &floats(&case["hidden_after_layer0"])),
            rel_err(&l, &floats(&case["logits_last"])),
        );
        eprintln!("{n} tokens: hidden after layer 0 {eh:.1e} (tol {one:.1e}), logits {el:.1e} (tol {tol:.1e})");
        assert!(
            eh < one && el < tol,
            "{text:?}: hidden {eh:e}, logits {el:e}"
        );
        let ours: Vec<usize> = top_k(a.logits.row(0), 10)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        let theirs: Vec<usize> = case["top10"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
        let lt = floats(&case["logits_last"]);
        let scale = lt.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (k, (x, y)) in ours.iter().zip(&theirs).enumerate() {
            assert!(
                x == y || (lt[*x] - lt[*y]).abs() < tol * scale,
                "{text:?}: rank {k}: {x} vs {y}"
            );
        }
        assert_eq!(ours[0], theirs[0], "{text:?}: the argmax");

        // The two rotary layouts on the real checkpoint: adjacent pairs on the stored q/k rows and
        // halves on the unpermuted rows give the same scores, so the same layer output; only the
        // head dot products' summation order differs (k·eps32·head_dim per score).
        let h0 = w.embed(&ids).unwrap();
        let r1 = w
            .rope_table(n, &attnlab_core::model::llama::Positions::Rope)
            .unwrap();
        let r2 = stored
            .rope_table(n, &attnlab_core::model::llama::Positions::Rope)
            .unwrap();
        let o1 = w
            .attention(
                0,
                h0.view(),
                r1.as_ref(),
                attnlab_core::attention::Mask::Causal,
            )
            .unwrap();
        let o2 = stored
            .attention(
                0,
                h0.view(),
                r2.as_ref(),
                attnlab_core::attention::Mask::Causal,
            )
            .unwrap();
        let v1: Vec<f64> = o1.iter().map(|&x| f64::from(x)).collect();
        let v2: Vec<f64> = o2.iter().map(|&x| f64::from(x)).collect();
        let e = rel_err(&v2, &v1);
        let layout_tol = 8.0 * f64::from(f32::EPSILON) * (c.dim + c.head_dim + n) as f64;
        assert!(
            e < layout_tol,
            "layouts differ by {e:e} (tol {layout_tol:e})"
        );

        // One head's attention weights (what `model attention` shows) against transformers'
        // eager `output_attentions`. The hidden state entering layer l carries l layers of
        // round-off, its q/k projections one more; as the sums' errors are independent, each
        // layer adds k·eps32·√(d + ffn + n) relative (the random-walk size of the worst case
        // above; the worst case, 0.3 here, would not tell a wrong head from the right one).
        // A score q·k/√d then moves by rel·|q|max·|k|max/√d, and a softmax weight by at most
        // twice the largest score change (|Δw_ij| ≤ w_ij·(|Δs_ij| + max_k|Δs_ik|)).
        let (al, ah) = (
            case["attn_layer"].as_u64().unwrap() as usize,
            case["attn_head"].as_u64().unwrap() as usize,
        );
        let entering = w
            .forward(
                &ids,
                &ForwardOptions {
                    layers: Some(al),
                    ..ForwardOptions::default()
                },
            )
            .unwrap()
            .last;
        let (q, k, _) = w.projections(al, entering.view(), r1.as_ref()).unwrap();
        let dh = c.head_dim;
        let g = ah / (c.heads / c.kv_heads);
        let norm_max = |m: &ndarray::Array2<f32>, col: usize| {
            m.rows()
                .into_iter()
                .map(|r| {
                    r.iter()
                        .skip(col * dh)
                        .take(dh)
                        .map(|&x| f64::from(x).powi(2))
                        .sum::<f64>()
                        .sqrt()
                })
                .fold(0.0f64, f64::max)
        };
        let walk = 8.0 * f64::from(f32::EPSILON) * ((c.dim + c.ffn_dim + n) as f64).sqrt();
        let ds = (al + 1) as f64 * walk * norm_max(&q, ah) * norm_max(&k, g) / (dh as f64).sqrt();
        let theirs = case["attn"].as_array().unwrap();
        let gap = |head: usize| {
            let ours = w
                .attention_weights(
                    al,
                    entering.view(),
                    r1.as_ref(),
                    head,
                    attnlab_core::attention::Mask::Causal,
                )
                .unwrap();
            let mut worst = 0.0f64;
            for (i, row) in theirs.iter().enumerate() {
                for (j, x) in floats(row).iter().enumerate() {
                    worst = worst.max((f64::from(ours[[i, j]]) - x).abs());
                }
            }
            worst
        };
        let (worst, neighbour) = (gap(ah), gap(ah + 1));
        eprintln!(
            "layer {al} head {ah} weights: max |Δ| {worst:.1e} (bound {:.1e}; head {} against it: {neighbour:.1e})",
            2.0 * ds,
            ah + 1
        );
        assert!(
            worst <= 2.0 * ds,
            "{text:?}: attention weights differ by {worst:e}"
        );
        // The bound tells heads apart: the neighbouring head's weights fall outside it.
        assert!(
            neighbour > 2.0 * ds,
            "{text:?}: head {} within the bound",
            ah + 1
        );
    }
}
