//! Audits of real configs through `--config`. These need `config::load_config` and
//! `RopeConfig::frequencies`, which are written in another branch: they fail until it is merged.

use assert_cmd::Command;
use serde_json::Value;

fn audit_json(cfg: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    std::fs::write(&path, cfg).unwrap();
    let out = Command::cargo_bin("attnlab")
        .unwrap()
        .args(["rope", "audit", "--config"])
        .arg(&path)
        .args(["--json", "--skip-min-base"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Llama-2-7B's config.json (the rope-relevant keys, as published on the Hugging Face hub).
const LLAMA2: &str = r#"{
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 32,
  "max_position_embeddings": 4096, "rope_theta": 10000.0, "rope_scaling": null,
  "torch_dtype": "float16", "vocab_size": 32000, "num_hidden_layers": 32
}"#;

/// Llama-3.1-8B's config.json (rope-relevant keys).
const LLAMA31: &str = r#"{
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
  "max_position_embeddings": 131072, "rope_theta": 500000.0,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "torch_dtype": "bfloat16", "vocab_size": 128256, "num_hidden_layers": 32
}"#;

#[test]
fn llama2_default_config() {
    let v = audit_json(LLAMA2, &[]);
    // The context defaults to max_position_embeddings.
    assert_eq!(v["context"], 4096);
    assert_eq!(v["rotary_dim"], 128);
    // Liu et al. 2023: 46 planes (92 dims) complete a period within 4096 at base 1e4.
    assert_eq!(v["planes_full_turn"], 46);
    assert_eq!(v["attention_factor"], 1.0);
    // ω_1 = 10000^(−2/128); f64 evaluation of the formula, relative 1e-12.
    let w1 = v["planes"][1]["inv_freq"].as_f64().unwrap();
    assert!((w1 / 10000f64.powf(-2.0 / 128.0) - 1.0).abs() < 1e-12);
    assert_eq!(v["decay_first_negative"], 1707);
}

#[test]
fn llama31_scaled_config() {
    let v = audit_json(LLAMA31, &[]);
    assert_eq!(v["context"], 131072);
    let planes = v["planes"].as_array().unwrap();
    assert_eq!(planes.len(), 64);
    let default = |k: usize| 500000f64.powf(-(2.0 * k as f64) / 128.0);
    let tau = std::f64::consts::TAU;
    for (k, p) in planes.iter().enumerate() {
        let w = p["inv_freq"].as_f64().unwrap();
        let wl = tau / default(k);
        // llama3: wavelengths < 8192/4 = 2048 untouched, > 8192/1 divided by 8, blended between.
        if wl < 2048.0 {
            assert!((w / default(k) - 1.0).abs() < 1e-12, "plane {k}");
        } else if wl > 8192.0 {
            assert!((w / (default(k) / 8.0) - 1.0).abs() < 1e-12, "plane {k}");
        } else {
            assert!(w < default(k) && w > default(k) / 8.0, "plane {k}");
        }
    }
    // The slowest plane's wavelength is 8 × 2π·500000^(126/128) ≈ 2.0e7 > 131072: no full turn.
    assert_eq!(planes[63]["full_turn_in_context"], false);
    assert_eq!(v["precision"]["bf16"]["first_inexact_position"], 257);
}

#[test]
fn resolve_takes_a_config_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    std::fs::write(&path, LLAMA2).unwrap();
    let out = Command::cargo_bin("attnlab")
        .unwrap()
        .args(["rope", "resolve", "--config"])
        .arg(&path)
        .args(["--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["context"].as_u64(), v["resolves"].as_bool()),
        (Some(4096), Some(true))
    );
}
