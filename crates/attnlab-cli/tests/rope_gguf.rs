//! `rope audit --model FILE.gguf --config C` and `rope usage` against oracles attnlab did not
//! write:
//!
//! * GGUF files written by the `gguf` Python package (llama.cpp's own writer) with YaRN
//!   metadata or a llama3 `rope_freqs` tensor (`scripts/rope_gguf_oracle.py write`); llama.cpp's
//!   rotation for them recomputed in numpy from ggml's `rope_yarn` as written in ggml, read back
//!   through `gguf.GGUFReader`; transformers' rotation for the config from transformers' own
//!   `ROPE_INIT_FUNCTIONS`; the first differing position per plane by brute force over every
//!   position (`… expect`);
//! * `rope usage`'s numbers recomputed from the SmolLM2 file by `gguf.quants.dequantize` and numpy
//!   (`scripts/rope_usage_oracle.py`).
//!
//! Oracle rule: without the Python packages (`ATTNLAB_PYTHON`, else `python3`) or the model
//! file each test prints a visible `SKIPPED (no oracle)` line locally and fails under CI (`CI`
//! set).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::json;
use serde_json::Value;

fn python() -> String {
    std::env::var("ATTNLAB_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name)
}

/// Whether the oracle can run; under CI its absence is a failure.
fn require(what: &str, ok: bool, why: &str) -> bool {
    if ok {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is required under CI (.ci/run provides it): {why}"
    );
    eprintln!("SKIPPED (no oracle): {what}: {why}");
    false
}

fn have(modules: &str) -> bool {
    let ok = Command::new(python())
        .args(["-c", &format!("import {modules}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    require(
        modules,
        ok,
        &format!("`{} -c \"import {modules}\"` fails", python()),
    )
}

fn smollm2() -> Option<PathBuf> {
    match attnlab_core::model::locate::resolve("smollm2-135m") {
        Ok(p) if p.is_file() => Some(p),
        Ok(p) => {
            require("the SmolLM2 model file", false, &p.display().to_string());
            None
        }
        Err(e) => {
            require("the SmolLM2 model file", false, &e.to_string());
            None
        }
    }
}

fn oracle(script_name: &str, args: &[&str]) -> Value {
    let out = Command::new(python())
        .arg(script(script_name))
        .args(args)
        .output()
        .expect("the oracle runs");
    assert!(
        out.status.success(),
        "{script_name} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn write_json(dir: &Path, name: &str, v: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
    p.display().to_string()
}

/// `rope audit --model gguf --config cfg --skip-min-base --json`'s `gguf` part.
fn compare(gguf: &str, cfg: &str) -> Value {
    let r = json(
        &[
            "rope",
            "audit",
            "--model",
            gguf,
            "--config",
            cfg,
            "--skip-min-base",
            "--json",
        ],
        0,
    );
    r["gguf"].clone()
}

/// Checks the comparison against the oracle: llama.cpp's ω and factor (numpy from ggml's code:
/// both are f64 evaluations of one formula, so within 1e-12 relative), transformers' ω and
/// attention factor (transformers computes float32: the power, and for YaRN the ramp, 1 − ramp,
/// two products and a sum, each rounded by ≤ 2⁻²⁴, the ramp's error amplified by
/// ω_extrap/ω ≤ factor (8 here): within 2⁻¹⁹ relative of our f64 formula), and each plane's first differing position (the
/// brute force uses transformers' float32 ω, whose 2⁻²⁴ rounding may move a position at a
/// boundary by one: ±1).
fn check_against_oracle(c: &Value, o: &Value) {
    let planes = c["planes"].as_array().unwrap();
    let og = o["ggml_inv_freq"].as_array().unwrap();
    let oh = o["hf_inv_freq"].as_array().unwrap();
    assert_eq!(planes.len(), og.len());
    for (p, (g, h)) in planes.iter().zip(og.iter().zip(oh)) {
        let k = &p["plane"];
        let (ours_g, ours_h) = (f(&p["gguf_inv_freq"]), f(&p["transformers_inv_freq"]));
        assert!(
            (ours_g - f(g)).abs() <= 1e-12 * f(g),
            "plane {k}: llama.cpp ω {ours_g} vs ggml's rule {}",
            f(g)
        );
        assert!(
            (ours_h - f(h)).abs() <= 2f64.powi(-19) * f(h),
            "plane {k}: transformers ω {ours_h} vs transformers {}",
            f(h)
        );
    }
    let a = f(&c["gguf"]["rope"]["cos_sin_factor"]);
    assert!((a - f(&o["ggml_cos_sin_factor"])).abs() <= 1e-12 * a, "{a}");
    let at = f(&c["transformers"]["cos_sin_factor"]);
    assert!(
        (at - f(&o["hf_attention_factor"])).abs() <= 1e-6 * at,
        "{at} vs {}",
        o["hf_attention_factor"]
    );
    for (p, want) in planes.iter().zip(o["first_difference"].as_array().unwrap()) {
        match (p["first_difference"].as_u64(), want.as_u64()) {
            (None, None) => {}
            (Some(a), Some(b)) => assert!(a.abs_diff(b) <= 1, "plane {}: {a} vs {b}", p["plane"]),
            (a, b) => panic!("plane {}: ours {a:?}, brute force {b:?}", p["plane"]),
        }
    }
}

fn causes(c: &Value) -> Vec<String> {
    c["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["cause"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_smollm2_gguf_rotates_like_a_config_of_the_same_values() {
    let Some(model) = smollm2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_json(
        dir.path(),
        "config.json",
        &serde_json::json!({"model_type": "llama", "hidden_size": 576, "num_attention_heads": 9,
            "num_key_value_heads": 3, "head_dim": 64, "max_position_embeddings": 8192,
            "rope_theta": 100000.0}),
    );
    let c = compare(model.to_str().unwrap(), &cfg);
    assert_eq!(c["gguf"]["freq_base"], 100000.0);
    assert_eq!(c["gguf"]["n_rot"], 64);
    assert_eq!(c["gguf"]["context_length"], 8192);
    assert_eq!(c["sequence_length"], 8192);
    assert_eq!(c["planes"].as_array().unwrap().len(), 32);
    // The same formula from the same numbers: no difference at all, and none within 8192.
    assert_eq!(c["max_rel_diff"], 0.0);
    assert!(c["first_difference"].is_null(), "{c}");
    assert!(c["causes"].as_array().unwrap().is_empty(), "{c}");
    assert!(c["verdict"]
        .as_str()
        .unwrap()
        .starts_with("This GGUF rotates like the model"));
    // A config with another base is caught, with the cause.
    let other = write_json(
        dir.path(),
        "other.json",
        &serde_json::json!({"model_type": "llama", "hidden_size": 576, "num_attention_heads": 9,
            "num_key_value_heads": 3, "head_dim": 64, "max_position_embeddings": 8192,
            "rope_theta": 10000.0}),
    );
    let c = compare(model.to_str().unwrap(), &other);
    assert_eq!(causes(&c), ["base_differs"]);
    assert!(c["verdict"]
        .as_str()
        .unwrap()
        .contains("rope.freq_base is 100000"));
}

/// A synthetic llama GGUF (1 head of 64 dims, θ 500000, context 8192) with extra rope metadata.
fn synthetic(dir: &Path, name: &str, extra: Value) -> String {
    let mut spec = serde_json::json!({"arch": "llama", "context": 8192, "embd": 64, "heads": 1,
        "base": 500000.0, "n_rot": 64});
    for (k, v) in extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    let spec_path = write_json(dir, &format!("{name}.json"), &spec);
    let out = dir.join(format!("{name}.gguf"));
    oracle(
        "rope_gguf_oracle.py",
        &["write", out.to_str().unwrap(), &spec_path],
    );
    out.display().to_string()
}

fn config(dir: &Path, name: &str, scaling: Option<Value>) -> String {
    let mut c = serde_json::json!({"model_type": "llama", "hidden_size": 64,
        "num_attention_heads": 1, "head_dim": 64, "max_position_embeddings": 8192,
        "rope_theta": 500000.0});
    if let Some(s) = scaling {
        c["rope_scaling"] = s;
    }
    write_json(dir, name, &c)
}

#[test]
fn a_gguf_with_yarn_metadata_is_compared_plane_by_plane_with_the_config() {
    if !have("gguf, numpy, torch, transformers") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let gguf = synthetic(
        dir.path(),
        "yarn",
        serde_json::json!({"keys": {"scaling.type": "yarn", "scaling.factor": 4.0,
            "scaling.original_context_length": 2048}}),
    );
    // The model's own config: YaRN factor 4 over 2048.
    let same = config(
        dir.path(),
        "same.json",
        Some(serde_json::json!({"rope_type": "yarn", "factor": 4.0,
            "original_max_position_embeddings": 2048})),
    );
    let c = compare(&gguf, &same);
    check_against_oracle(
        &c,
        &oracle("rope_gguf_oracle.py", &["expect", &gguf, &same, "8192"]),
    );
    assert!(c["first_difference"].is_null(), "{c}");
    assert!(causes(&c).is_empty(), "{c}");
    // A config without the scaling (the GGUF carries YaRN the model does not have): every plane
    // differs from position 0 through the cos/sin factor 1 + 0.1·ln 4, and the frequencies of
    // the planes the ramp interpolates.
    let plain = config(dir.path(), "plain.json", None);
    let c = compare(&gguf, &plain);
    check_against_oracle(
        &c,
        &oracle("rope_gguf_oracle.py", &["expect", &gguf, &plain, "8192"]),
    );
    assert_eq!(c["first_difference"]["position"], 0);
    assert_eq!(causes(&c), ["scaling_differs", "attention_factor_differs"]);
    let a = f(&c["gguf"]["rope"]["cos_sin_factor"]);
    assert!((a - (1.0 + 0.1 * 4f64.ln())).abs() < 1e-7, "{a}"); // float32 1/factor
    let v = c["verdict"].as_str().unwrap();
    assert!(v.contains("yarn rule") && v.contains("default"), "{v}");
    // A config with another factor and truncate = false: both named.
    let other = config(
        dir.path(),
        "other.json",
        Some(serde_json::json!({"rope_type": "yarn", "factor": 8.0,
            "original_max_position_embeddings": 2048, "truncate": false})),
    );
    let c = compare(&gguf, &other);
    check_against_oracle(
        &c,
        &oracle("rope_gguf_oracle.py", &["expect", &gguf, &other, "8192"]),
    );
    let got = causes(&c);
    for want in [
        "factor_differs",
        "truncate_ignored",
        "attention_factor_differs",
    ] {
        assert!(got.iter().any(|g| g == want), "{want} in {got:?}");
    }
}

#[test]
fn a_gguf_with_a_llama3_rope_freqs_tensor_names_the_planes_it_divides() {
    if !have("gguf, numpy, torch, transformers") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let gguf = synthetic(
        dir.path(),
        "llama3",
        serde_json::json!({"llama3": {"factor": 8.0, "low": 1.0, "high": 4.0, "orig": 2048}}),
    );
    let same = config(
        dir.path(),
        "same.json",
        Some(
            serde_json::json!({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 2048}),
        ),
    );
    let c = compare(&gguf, &same);
    // The audited length for this config is factor × original = 16384.
    assert_eq!(c["sequence_length"], 16384);
    check_against_oracle(
        &c,
        &oracle("rope_gguf_oracle.py", &["expect", &gguf, &same, "16384"]),
    );
    assert!(c["first_difference"].is_null(), "{c}");
    assert!(causes(&c).is_empty(), "{c}");
    // Without llama3 in the config: the planes whose rope_freqs factor is above 1 differ, each
    // from the position the brute force finds; the others never.
    let plain = config(dir.path(), "plain.json", None);
    let c = compare(&gguf, &plain);
    let o = oracle("rope_gguf_oracle.py", &["expect", &gguf, &plain, "8192"]);
    check_against_oracle(&c, &o);
    assert_eq!(causes(&c), ["scaling_differs"]);
    let divided: Vec<u64> = c["planes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| f(&p["gguf_freq_factor"]) > 1.0)
        .map(|p| p["plane"].as_u64().unwrap())
        .collect();
    let differing: Vec<u64> = c["differing_planes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap())
        .collect();
    assert!(!differing.is_empty());
    assert!(
        differing.iter().all(|p| divided.contains(p)),
        "{differing:?} ⊄ {divided:?}"
    );
    let v = c["verdict"].as_str().unwrap();
    assert!(v.contains("llama3 rule"), "{v}");
}

/// Relative agreement of two per-plane vectors, relative to the largest entry of the head (a
/// plane with cancellation is not held to a relative bound of its own).
fn close(ours: &[Value], theirs: &[Value], tol: f64, what: &str) {
    let scale = theirs.iter().map(f).fold(0.0, f64::max);
    for (k, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert!(
            (f(a) - f(b)).abs() <= tol * scale,
            "{what} plane {k}: {} vs {}",
            f(a),
            f(b)
        );
    }
}

#[test]
fn rope_usage_is_recomputed_from_the_dequantized_weights_by_numpy() {
    let Some(model) = smollm2() else { return };
    if !have("gguf, numpy") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let u = json(
        &[
            "rope",
            "usage",
            "--model",
            model.to_str().unwrap(),
            "--text",
            "The capital of France is Paris.",
            "--plot",
            dir.path().to_str().unwrap(),
            "--json",
        ],
        0,
    );
    assert!(dir.path().join("usage_weights.svg").is_file());
    assert!(dir.path().join("usage_text.svg").is_file());
    let ids: Vec<String> = u["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.to_string())
        .collect();
    let o = oracle(
        "rope_usage_oracle.py",
        &[model.to_str().unwrap(), &ids.join(",")],
    );
    let heads = u["heads"].as_array().unwrap();
    assert_eq!(heads.len(), 30 * 9);
    for h in heads {
        let (l, hd) = (
            h["layer"].as_u64().unwrap() as usize,
            h["head"].as_u64().unwrap() as usize,
        );
        // Both sides multiply the same float32 weights in f64; only the summation order
        // differs: 1e-12 of the head's largest plane.
        close(
            h["weight_norm_product"].as_array().unwrap(),
            o["weights"][l][hd].as_array().unwrap(),
            1e-12,
            &format!("weights layer {l} head {hd}"),
        );
        if l == 0 {
            // Ours: the norm and the projections in float32 (576-term GEMM sums, ≤ 576·2⁻²⁴
            // ≈ 3.4e-5 of the summed magnitudes); numpy in f64: 2e-4 of the head's largest
            // plane.
            close(
                h["text_norm_product"].as_array().unwrap(),
                o["text_layer0"][hd].as_array().unwrap(),
                2e-4,
                &format!("text layer 0 head {hd}"),
            );
        }
    }
    // The never-turning planes are those with 2π·θ^(2k/64) > 8192: k ≥ 20 for θ = 100000.
    let slow: Vec<u64> = u["slow_planes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap())
        .collect();
    assert_eq!(slow, (20..32).collect::<Vec<u64>>());
    // The model-wide share recomputed from the oracle's products.
    let (mut slow_e, mut all_e) = (0.0, 0.0);
    for layer in o["weights"].as_array().unwrap() {
        for head in layer.as_array().unwrap() {
            for (k, v) in head.as_array().unwrap().iter().enumerate() {
                let e = f(v) * f(v);
                all_e += e;
                if k >= 20 {
                    slow_e += e;
                }
            }
        }
    }
    let share = f(&u["slow_share_weights"]);
    assert!(
        (share - slow_e / all_e).abs() < 1e-12,
        "{share} vs {}",
        slow_e / all_e
    );
    let c = u["conclusion"].as_str().unwrap();
    assert!(
        c.contains(&format!(
            "{}%",
            attnlab_core::present::number::sig(100.0 * share, 3)
        )) || u["slow_share_text"].is_number(),
        "{c}"
    );
    assert!(c.contains("Barbero et al. 2024"), "{c}");
}
