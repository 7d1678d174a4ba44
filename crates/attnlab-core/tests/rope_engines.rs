//! `rope engines`: each engine's numbers pinned against vectors derived by hand from the
//! engine's published code (the derivation: numpy in f64, f32 where a GGUF rule stores float32,
//! and a brute-force scan of positions for the first difference; the values are pasted here).
//! The files are those of the vLLM 0.33.0 and SGLang 0.5.23 wheels on PyPI and the llama.cpp
//! files named in `attnlab_core::engines::llamacpp::SOURCES`.

use attnlab_core::api::rope::engines::{EngineReport, EnginesReport, EnginesRequest, Verdict};
use attnlab_core::api::rope::ConfigSource;
use attnlab_core::api::{self, Report, Request};
use attnlab_core::engines::{Cause, Engine, Switching};

fn run(req: EnginesRequest) -> EnginesReport {
    match api::run(&Request::RopeEngines(req)).unwrap() {
        Report::RopeEngines(r) => *r,
        _ => unreachable!("rope engines answers with its report"),
    }
}

fn preset(name: &str) -> EnginesReport {
    run(EnginesRequest {
        preset: Some(name.into()),
        ..Default::default()
    })
}

fn inline(v: serde_json::Value) -> EnginesReport {
    let serde_json::Value::Object(m) = v else {
        unreachable!()
    };
    run(EnginesRequest {
        config: Some(ConfigSource::Inline(m)),
        ..Default::default()
    })
}

fn engine(r: &EnginesReport, e: Engine) -> &EngineReport {
    r.engines.iter().find(|x| x.engine == e).unwrap()
}

/// Relative agreement of two f64 computations of the same formula written differently (a few
/// roundings apart).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 8.0 * f64::EPSILON * b.abs()
}

#[test]
fn gpt_oss_llamacpp_floors_the_correction_range_and_differs_from_position_18() {
    // Derived by hand from llama.cpp ggml/src/ggml.c@1f08e2d6 ggml_rope_yarn_corr_dims (floor/ceil
    // always) and transformers' yarn with truncate = false: d(r) = 64·ln(4096/(2πr))/(2·ln 150000)
    // gives (8.0928, 17.398) unrounded, (8, 18) in llama.cpp; plane 12's ω is
    // 0.006794959489732219 (transformers) and 0.007015713910504388 (llama.cpp, freq_scale =
    // f32(1/32)); a brute-force scan of positions 0..2000 over all planes finds the first gap
    // above a/256 at position 18, plane 12.
    let r = preset("gpt-oss-20b");
    let cpp = engine(&r, Engine::Llamacpp);
    let rope = cpp.rope.as_ref().unwrap();
    assert!(
        close(rope.inv_freq[12], 0.007015713910504388),
        "{}",
        rope.inv_freq[12]
    );
    let hf = engine(&r, Engine::Transformers).rope.as_ref().unwrap();
    assert!(
        close(hf.inv_freq[12], 0.006794959489732219),
        "{}",
        hf.inv_freq[12]
    );
    assert_eq!(
        cpp.verdict,
        Verdict::Differs {
            from_position: 18,
            sequence_length: 131072,
            plane: Some(12)
        }
    );
    assert_eq!(cpp.causes, [Cause::TruncateIgnored]);
    // vLLM 0.33.0 and SGLang 0.5.23 pass truncate through (get_rope / factory.py): same.
    for e in [Engine::Vllm, Engine::Sglang] {
        assert_eq!(engine(&r, e).verdict, Verdict::Same, "{e}");
        assert!(engine(&r, e).causes.is_empty());
    }
    // cos/sin factor 0.1·ln 32 + 1 everywhere (llama.cpp's hard-wired mscale with f32(1/32)).
    assert!((rope.cos_sin_factor - 1.3465735902799727).abs() < 1e-7);
}

#[test]
fn phi35_longrope_static_in_vllm_and_llamacpp_per_batch_in_sglang() {
    // Derived by hand from vLLM 0.33.0 phi3_long_rope_scaled_rope.py (use_long_rope =
    // max_model_len > original, so 131072 > 4096 → long factors for every sequence) and SGLang
    // 0.5.23 rope_variant.py (long when any(positions > 4096)): for a 4096-token sequence
    // transformers uses short factor 1.0 on plane 0 (ω = 1), vLLM long 1.0800000429153442
    // (ω = 0.9259…); with a = sqrt(1 + ln 32/ln 4096) = 1.1902380714238083 on both, the gap
    // a·|e^{imω_e} − e^{imω_r}| exceeds a/256 first at m = 1.
    let r = preset("phi-3.5-mini-instruct");
    assert_eq!(r.sequence_lengths, [4096, 4097, 4098, 131072]);
    let hf = engine(&r, Engine::Transformers);
    assert_eq!(hf.switching, Switching::BySequenceLength { from: 4097 });
    for e in [Engine::Vllm, Engine::Llamacpp] {
        let x = engine(&r, e);
        assert_eq!(
            x.switching,
            Switching::ByServedContext {
                original: 4096,
                long: true
            }
        );
        assert_eq!(
            x.verdict,
            Verdict::Differs {
                from_position: 1,
                sequence_length: 4096,
                plane: Some(0)
            },
            "{e}"
        );
        assert_eq!(
            x.causes[0],
            Cause::LongropeLongForEverySequence {
                served: 131072,
                original: 4096
            }
        );
        // Same factor as transformers (llama.cpp's stored as float32: within 2⁻²⁴).
        let a = x.rope.as_ref().unwrap().cos_sin_factor;
        assert!((a - 1.1902380714238083).abs() < 1.2e-7, "{a}");
    }
    // SGLang: a 4097-token sequence (positions ≤ 4096) stays short where transformers is long.
    let s = engine(&r, Engine::Sglang);
    assert_eq!(
        s.verdict,
        Verdict::Differs {
            from_position: 1,
            sequence_length: 4097,
            plane: Some(0)
        }
    );
    assert_eq!(s.causes, [Cause::LongropeBatchSwitch { original: 4096 }]);
    // Served within the original context, vLLM and llama.cpp keep the short factors: same.
    let short = run(EnginesRequest {
        preset: Some("phi-3.5-mini-instruct".into()),
        context: Some("4096".parse().unwrap()),
        ..Default::default()
    });
    assert_eq!(engine(&short, Engine::Vllm).verdict, Verdict::Same);
    assert_eq!(engine(&short, Engine::Llamacpp).verdict, Verdict::Same);
}

#[test]
fn deepseek_v3_softmax_multiplier_in_every_engine() {
    // transformers / vLLM deepseek_v2.py / SGLang compute_mla_mscale_scaling:
    // (0.1·1·ln 40 + 1)² = 1.8738542070926265; llama.cpp: (1 + f32(0.1)·ln(1/f32(1/40)))² =
    // 1.87385421806219 (yarn_log_multiplier stored as float32); cos/sin exactly 1 everywhere
    // (mscale = mscale_all_dim; llama.cpp cancels its hard-wired mscale).
    let r = preset("deepseek-v3");
    for e in [Engine::Transformers, Engine::Vllm, Engine::Sglang] {
        let x = engine(&r, e).rope.as_ref().unwrap();
        assert!(close(x.softmax_scale_multiplier, 1.8738542070926265), "{e}");
        assert_eq!(x.cos_sin_factor, 1.0, "{e}");
        assert_eq!(engine(&r, e).verdict, Verdict::Same, "{e}");
    }
    let c = engine(&r, Engine::Llamacpp).rope.as_ref().unwrap();
    assert!(close(c.softmax_scale_multiplier, 1.87385421806219));
    assert_eq!(c.cos_sin_factor, 1.0);
    assert_eq!(engine(&r, Engine::Llamacpp).verdict, Verdict::Same);
}

#[test]
fn llama31_and_qwen3_yarn4_rotate_the_same_everywhere() {
    // Llama-3.1: the converter's float32 rope_freqs (convert_hf_to_gguf.py generate_extra_tensors)
    // for planes 29..34 are 1.2074840068817139, 1.5534145832061768, 2.026313066482544,
    // 2.6945300102233887, 3.684252977371216, 5.257326602935791 (numpy, float32 freqs as the
    // converter computes them); the rest 1 or 8.
    let p = attnlab_core::config::preset("llama-3.1-8b").unwrap();
    let attnlab_core::position::frequencies::RopeScaling::Llama3(l) = &p.scaling else {
        unreachable!()
    };
    let ff = attnlab_core::engines::llamacpp::llama3_rope_freqs(l, 500000.0, 128);
    let expected = [
        1.2074840068817139,
        1.5534145832061768,
        2.026313066482544,
        2.6945300102233887,
        3.684252977371216,
        5.257326602935791,
    ];
    for (k, want) in (29..35).zip(expected) {
        // float32 rounding of the same blend from f64 vs f32 frequencies: within 2 f32 ulps.
        assert!(
            (ff[k] - want).abs() <= 2.0 * f64::from(f32::EPSILON) * want,
            "{k}: {}",
            ff[k]
        );
    }
    assert!(ff[..29].iter().all(|&x| x == 1.0) && ff[35..].iter().all(|&x| x == 8.0));
    let r = preset("llama-3.1-8b");
    for e in &r.engines {
        assert_eq!(e.verdict, Verdict::Same, "{}", e.engine);
        assert!(e.causes.is_empty());
    }
    // Qwen3 with YaRN factor 4: every engine uses 0.1·ln 4 + 1 = 1.138629436111989 and the
    // floored/ceiled range (truncate defaults to true): the same.
    let q = preset("qwen3-8b-yarn4");
    assert_eq!(q.served_context, 131072);
    for e in &q.engines {
        assert_eq!(e.verdict, Verdict::Same, "{}", e.engine);
        let a = e.rope.as_ref().unwrap().cos_sin_factor;
        assert!((a - 1.138629436111989).abs() < 1e-7, "{}", e.engine);
    }
}

#[test]
fn yarn_attention_keys_each_engine_reads_differently() {
    let base = serde_json::json!({"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 8, "head_dim": 128,
        "max_position_embeddings": 32768, "rope_theta": 1000000});
    // An explicit attention_factor 1.0: transformers and vLLM 0.33.0 (get_rope passes
    // attention_factor) use 1.0; SGLang 0.5.23 (factory.py does not pass it) and llama.cpp
    // (hard-wired) use 0.1·ln 4 + 1 = 1.1386: all planes differ from position 0.
    let mut c = base.clone();
    c["rope_scaling"] = serde_json::json!({"rope_type": "yarn", "factor": 4.0,
        "original_max_position_embeddings": 8192, "attention_factor": 1.0});
    let r = inline(c);
    assert_eq!(engine(&r, Engine::Vllm).verdict, Verdict::Same);
    for e in [Engine::Sglang, Engine::Llamacpp] {
        let x = engine(&r, e);
        assert_eq!(
            x.verdict,
            Verdict::Differs {
                from_position: 0,
                sequence_length: 32768,
                plane: None
            },
            "{e}"
        );
        assert!(
            matches!(
                x.causes[..],
                [Cause::AttentionFactorIgnored { config, engine }] if config == 1.0 && (engine - 1.138629436111989).abs() < 1e-7
            ),
            "{e}: {:?}",
            x.causes
        );
    }
    // attn_factor 0.8 (DeepSeek-R1-0528-Qwen3-8B's key): SGLang multiplies (0.8·1.1386 =
    // 0.91090…), transformers and vLLM 0.33.0 do not read it.
    let mut c = base;
    c["rope_scaling"] = serde_json::json!({"rope_type": "yarn", "factor": 4.0,
        "original_max_position_embeddings": 8192, "attn_factor": 0.8});
    let r = inline(c);
    assert_eq!(engine(&r, Engine::Vllm).verdict, Verdict::Same);
    let s = engine(&r, Engine::Sglang);
    assert!(close(
        s.rope.as_ref().unwrap().cos_sin_factor,
        0.8 * 1.138629436111989
    ));
    assert_eq!(s.causes, [Cause::AttnFactorMultiplied { attn_factor: 0.8 }]);
}

#[test]
fn dynamic_ntk_is_static_in_vllm_and_sglang_and_missing_in_llamacpp() {
    // vLLM 0.33.0 dynamic_ntk_scaling_rope.py: base·((f·max/max_trained) − (f−1))^(d/(d−2)) with
    // max_trained = max → base unchanged; SGLang 0.5.23 rope_variant.py: base·(f² − f + 1)^(d/(d−2))
    // = 10000·3^(128/126) = 30527.7367488067 for f = 2, d = 128.
    let r = inline(
        serde_json::json!({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
        "max_position_embeddings": 4096, "rope_theta": 10000,
        "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}),
    );
    // Served at 4096: transformers keeps the base; vLLM agrees, SGLang does not.
    assert_eq!(engine(&r, Engine::Vllm).verdict, Verdict::Same);
    assert!(matches!(
        engine(&r, Engine::Vllm).causes[..],
        [Cause::DynamicStatic { engine_base }] if engine_base == 10000.0
    ));
    let s = engine(&r, Engine::Sglang);
    assert!(matches!(
        s.causes[..],
        [Cause::DynamicStatic { engine_base }] if close(engine_base, 30527.7367488067)
    ));
    assert!(matches!(s.verdict, Verdict::Differs { .. }));
    assert!(matches!(
        engine(&r, Engine::Llamacpp).verdict,
        Verdict::TypeNotSupported { .. }
    ));
    // Served at 8192, transformers stretches the base from 4097 tokens on (by (2·4097/4096 − 1)^(128/126)
    // ≈ 1.0005 at once, enough for a slow plane to drift 2⁻⁸ within the sequence); vLLM does not.
    let r = run(EnginesRequest {
        config: r_config(),
        context: Some("8192".parse().unwrap()),
        engine: vec![Engine::Vllm],
        ..Default::default()
    });
    assert_eq!(r.engines.len(), 2, "transformers is always the reference");
    assert!(matches!(
        engine(&r, Engine::Vllm).verdict,
        Verdict::Differs {
            sequence_length: 4097,
            ..
        }
    ));
}

fn r_config() -> Option<ConfigSource> {
    let serde_json::Value::Object(m) = serde_json::json!({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
        "max_position_embeddings": 4096, "rope_theta": 10000,
        "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})
    else {
        unreachable!()
    };
    Some(ConfigSource::Inline(m))
}

#[test]
fn bad_requests_name_the_rule() {
    let e = |req: EnginesRequest| {
        api::run(&Request::RopeEngines(req))
            .unwrap_err()
            .to_string()
    };
    assert!(e(EnginesRequest::default()).contains("--preset"));
    let m = e(EnginesRequest {
        preset: Some("llama-3.1-8b".into()),
        context: Some("0".parse().unwrap()),
        ..Default::default()
    });
    assert!(m.contains("context") && m.contains("1..="), "{m}");
    let m = Request::from_json(
        "rope engines",
        serde_json::json!({"preset": "llama-3.1-8b", "engine": ["trt"]}),
    )
    .unwrap_err()
    .to_string();
    assert!(m.contains("trt"), "{m}");
}

fn audit(v: serde_json::Value, context: &str) -> attnlab_core::api::rope::audit::AuditReport {
    let serde_json::Value::Object(m) = v else {
        unreachable!()
    };
    let req = attnlab_core::api::rope::audit::AuditRequest {
        source: attnlab_core::api::rope::FrequencySource {
            config: Some(ConfigSource::Inline(m)),
            ..Default::default()
        },
        context: Some(context.parse().unwrap()),
        skip_min_base: true,
        ..Default::default()
    };
    match api::run(&Request::RopeAudit(req)).unwrap() {
        Report::RopeAudit(r) => *r,
        _ => unreachable!(),
    }
}

#[test]
fn audit_reports_ministral3_query_scaling_llama4_temperature_and_nested_truncate() {
    use attnlab_core::spectrum::extrapolation::QueryScalingKind;
    // Ministral-3's class defaults (configuration_ministral3.py): yarn factor 16, original
    // 16384, llama_4_scaling_beta 0.1: q ·= 1 + 0.1·ln(1 + ⌊p/16384⌋) — 1.0693147 at 16384,
    // 1.1386294 at 49152 (ln 4), 1.2079442 at 114688 (ln 8), 1.2197225 at 131071 (ln 9).
    let r = audit(
        serde_json::json!({"model_type": "ministral3", "hidden_size": 5120, "num_attention_heads": 32, "head_dim": 128,
            "max_position_embeddings": 262144,
            "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 16.0, "original_max_position_embeddings": 16384,
                "beta_fast": 32, "beta_slow": 1, "mscale": 1, "mscale_all_dim": 1, "llama_4_scaling_beta": 0.1}}),
        "131072",
    );
    let q = r.query_scaling.unwrap();
    assert_eq!(q.kind, QueryScalingKind::Llama4ScalingBeta);
    let at: Vec<(u64, f64)> = q.factors.iter().map(|f| (f.position, f.factor)).collect();
    assert_eq!(at[1].0, 16384);
    assert!((at[1].1 - (1.0 + 0.1 * 2f64.ln())).abs() < 1e-15);
    assert_eq!(at.last().unwrap().0, 131071);
    assert!((at.last().unwrap().1 - (1.0 + 0.1 * 8f64.ln())).abs() < 1e-15);
    // Liu et al.: T_train is the original 16384 with base 1e6, d = 128:
    // 64·ln(16384/2π)/ln 1e6 = 36.4 → d_extra = 74.
    assert_eq!(r.critical_dimension.unwrap().d_extra, 74);
    // Llama-4's NoPE layers: 1 + 0.1·ln(1 + ⌊(p+1)/8192⌋) = 1.2833 at p = 131071.
    let r = audit(
        serde_json::json!({"model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40, "head_dim": 128,
            "num_hidden_layers": 4, "max_position_embeddings": 131072, "rope_theta": 500000}),
        "131072",
    );
    let q = r.query_scaling.unwrap();
    assert_eq!(q.kind, QueryScalingKind::Llama4AttnTemperature);
    assert!((q.factors.last().unwrap().factor - (1.0 + 0.1 * 17f64.ln())).abs() < 1e-15);
    // truncate nested under a layer type: transformers does not read it there.
    let r = audit(
        serde_json::json!({"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 8,
            "max_position_embeddings": 8192, "layer_types": ["full_attention"],
            "rope_parameters": {"full_attention": {"rope_type": "yarn", "rope_theta": 10000, "factor": 2.0,
                "original_max_position_embeddings": 4096, "truncate": false}}}),
        "8192",
    );
    assert!(
        r.config_notes
            .iter()
            .any(|n| n.contains("truncate inside nested rope_parameters (full_attention)")),
        "{:?}",
        r.config_notes
    );
}
