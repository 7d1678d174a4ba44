#!/usr/bin/env python3
"""Reference RoPE vectors from Hugging Face transformers itself, for tests/hf_rope.rs.

Pinned environment (CPU is enough; PyPI's torch wheel pulls its CUDA libraries but runs on CPU):

    python3 -m venv /tmp/hfvenv
    /tmp/hfvenv/bin/pip install torch==2.15.0 transformers==5.24.0 numpy

    /tmp/hfvenv/bin/python scripts/gen_hf_rope_vectors.py tests/data/hf_rope_vectors.json

For every case the script builds the model's real config class from the config.json fields
(`AutoConfig.for_model`), then calls transformers' own code. `CASES` (the first part of the
file):

* rope type "default": the model's `<Model>RotaryEmbedding.compute_default_rope_parameters`
  (transformers 5.x has no generic "default" entry; families differ on partial rotary);
* any other type: `transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS[rope_type](config,
  "cpu", seq_len=...)`;
* DeepSeek-V2/V3: also `yarn_apply_mscale(config.rope_parameters, 1.0)` from the model's
  modeling file, i.e. the softmax-scale multiplier mscale².

`CLASS_CASES` (configs with keys left to their class defaults, several rope sets per model,
mrope, proportional): the text model's `<Model>RotaryEmbedding(config)` itself, reading its
`inv_freq` / `<layer_type>_inv_freq` and attention-scaling buffers, one case per layer type.

`--defaults OUT` instead writes the rope-relevant defaults of every config class
(`AutoConfig.for_model(model_type)` without arguments; `crates/attnlab-core/data/
hf_config_defaults.json`, which the config reader embeds).

torch's float32 `pow` differs by CPU capability: its scalar ("default") kernel rounds like the
C library's `powf` (and numpy's float32 power), its AVX2 / AVX-512 kernels (SLEEF) are within
1 ulp of it but not always equal (measured: 18 of 1560 test values differ). So the script runs
transformers twice: in this process with `ATEN_CPU_CAPABILITY=default` (the recorded
`inv_freq_f32_bits`, which attnlab must equal bit for bit), and in a child process on the
machine's own vectorised kernel (`inv_freq_f32_bits_vectorized`, with the capability's name in
`vectorized_capability`; attnlab is within 1 ulp of it).

It records inv_freq as float32 bit patterns (hex) and repr-exact decimals, the attention
factor (a Python float, repr-exact), and an independent float64 numpy evaluation of the same
formula (`inv_freq_f64`), computed from the resolved parameters that transformers' config
produced (numpy's float64 `power` is CPU-dispatched too: AVX-512 machines differ from AVX2 ones
by up to 3 ulp, so the drift check compares it to 4 ulp). Output is deterministic (no timestamps), so a fresh run can be compared with the
committed file. Exit code 3: the installed versions are not the pinned ones.
"""

import json
import math
import os
import struct
import subprocess
import sys

PINNED = {"torch": "2.15.0", "transformers": "5.24.0"}

LLAMA2 = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 32,
          "max_position_embeddings": 4096, "rope_theta": 10000.0, "rope_scaling": None}

PHI35_LONG = [
    1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601, 1.5899999141693115,
    1.600000023841858, 1.6200000047683716, 2.620000123977661, 3.2300000190734863, 3.2300000190734863,
    4.789999961853027, 7.400000095367432, 7.700000286102295, 9.09000015258789, 12.199999809265137,
    17.670000076293945, 24.46000099182129, 28.57000160217285, 30.420001983642578, 30.840002059936523,
    32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992, 50.340003967285156,
    50.45000457763672, 57.55000305175781, 57.93000411987305, 58.21000289916992, 60.1400032043457,
    62.61000442504883, 62.62000274658203, 62.71000289916992, 63.1400032043457, 63.1400032043457,
    63.77000427246094, 63.93000411987305, 63.96000289916992, 63.970001220703125, 64.02999877929688,
    64.06999969482422, 64.08000183105469, 64.12000274658203, 64.41000366210938, 64.4800033569336,
    64.51000213623047, 64.52999877929688, 64.83999633789062]
PHI35_SHORT = [
    1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842, 1.0499999523162842,
    1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0699999332427979, 1.0999999046325684,
    1.1099998950958252, 1.1599998474121094, 1.1599998474121094, 1.1699998378753662, 1.2899998426437378,
    1.339999794960022, 1.679999828338623, 1.7899998426437378, 1.8199998140335083, 1.8499997854232788,
    1.8799997568130493, 1.9099997282028198, 1.9399996995925903, 1.9899996519088745, 2.0199997425079346,
    2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
    2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0799996852874756,
    2.0899996757507324, 2.189999580383301, 2.2199995517730713, 2.5899994373321533, 2.729999542236328,
    2.749999523162842, 2.8399994373321533]
PHI35 = {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "num_key_value_heads": 32,
         "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
         "rope_scaling": {"type": "longrope", "long_factor": PHI35_LONG, "short_factor": PHI35_SHORT}}
GPT_OSS = {"model_type": "gpt_oss", "hidden_size": 2880, "num_attention_heads": 64, "head_dim": 64,
           "max_position_embeddings": 131072, "rope_theta": 150000,
           "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                            "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": False}}
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128,
               "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
               "max_position_embeddings": 163840, "rope_theta": 10000,
               "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                                "original_max_position_embeddings": 4096, "type": "yarn"}}


def with_(base, **changes):
    out = json.loads(json.dumps(base))
    out.update(changes)
    return out


# (name, source, config.json fields, seq_len)
CASES = [
    ("llama-2-7b", "meta-llama/Llama-2-7b-hf config.json", LLAMA2, None),
    ("qwen3-8b-yarn4", "Qwen/Qwen3-8B config.json with the model card's YaRN factor 4",
     {"model_type": "qwen3", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
      "max_position_embeddings": 40960, "rope_theta": 1000000,
      "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}, None),
    ("mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1 config.json",
     {"model_type": "mistral", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
      "max_position_embeddings": 32768, "rope_theta": 10000.0, "sliding_window": 4096}, None),
    ("qwen2-7b-instruct", "Qwen/Qwen2-7B-Instruct config.json",
     {"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
      "max_position_embeddings": 32768, "rope_theta": 1000000.0, "rope_scaling": None}, None),
    ("gpt-neox-20b (partial rotary 0.25)", "EleutherAI/gpt-neox-20b config.json",
     {"model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64, "max_position_embeddings": 2048,
      "rotary_pct": 0.25, "rotary_emb_base": 10000}, None),
    ("phi-2 (partial rotary 0.4)", "microsoft/phi-2 config.json",
     {"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32, "max_position_embeddings": 2048,
      "partial_rotary_factor": 0.4, "rope_theta": 10000.0}, None),
    ("llama-3.1-8b", "meta-llama/Llama-3.1-8B config.json",
     {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
      "max_position_embeddings": 131072, "rope_theta": 500000.0,
      "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 8192, "rope_type": "llama3"}}, None),
    ("linear x4 on llama-2-7b", "synthetic: llama-2-7b config.json + rope_scaling linear factor 4",
     with_(LLAMA2, rope_scaling={"type": "linear", "factor": 4.0}), None),
    ("linear x2 with partial rotary 0.5 (llama)", "synthetic: scaled types honour partial_rotary_factor",
     with_(LLAMA2, partial_rotary_factor=0.5, rope_scaling={"rope_type": "linear", "factor": 2.0}), None),
    ("dynamic x2 at init", "synthetic: llama-2-7b + dynamic factor 2",
     with_(LLAMA2, rope_scaling={"type": "dynamic", "factor": 2.0}), None),
    ("dynamic x2 at seq_len 16384", "synthetic: llama-2-7b + dynamic factor 2",
     with_(LLAMA2, rope_scaling={"type": "dynamic", "factor": 2.0}), 16384),
    ("dynamic x2 at seq_len 5000", "synthetic: llama-2-7b + dynamic factor 2",
     with_(LLAMA2, rope_scaling={"type": "dynamic", "factor": 2.0}), 5000),
    ("deepseek-v3", "deepseek-ai/DeepSeek-V3 config.json", DEEPSEEK_V3, None),
    ("deepseek-v2-lite-like (mscale 0.707)", "synthetic: DeepSeek-V3 layout with DeepSeek-V2-Lite's mscale 0.707",
     with_(DEEPSEEK_V3, model_type="deepseek_v2",
           rope_scaling={"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707,
                         "original_max_position_embeddings": 4096, "type": "yarn"}), None),
    ("gpt-oss-20b (yarn, truncate false)", "openai/gpt-oss-20b config.json", GPT_OSS, None),
    ("gpt-oss-20b with truncate true", "synthetic: gpt-oss-20b with truncate removed (default true)",
     with_(GPT_OSS, rope_scaling={k: v for k, v in GPT_OSS["rope_scaling"].items() if k != "truncate"}), None),
    ("yarn mscale ratio, factor from max/original", "synthetic: llama, yarn without factor, mscale 1 / mscale_all_dim 0.5",
     with_(LLAMA2, max_position_embeddings=65536,
           rope_scaling={"rope_type": "yarn", "factor": None, "original_max_position_embeddings": 4096,
                         "mscale": 1.0, "mscale_all_dim": 0.5, "beta_fast": 16, "beta_slow": 2}), None),
    ("yarn explicit attention_factor", "synthetic: llama, yarn factor 4 with attention_factor 1.25",
     with_(LLAMA2, rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048,
                                 "attention_factor": 1.25}), None),
    ("phi-3.5-mini-instruct (short factors, init)", "microsoft/Phi-3.5-mini-instruct config.json", PHI35, None),
    ("phi-3.5-mini-instruct at seq_len 4096 (short)", "microsoft/Phi-3.5-mini-instruct config.json", PHI35, 4096),
    ("phi-3.5-mini-instruct at seq_len 4097 (long)", "microsoft/Phi-3.5-mini-instruct config.json", PHI35, 4097),
]


# Configs read through the model's own rotary-embedding class (`<Model>RotaryEmbedding(config)`),
# one case per layer type whose rope differs: (name, source, config.json fields, layer type or None).
LLAMA4_SCOUT_TEXT = {"model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40, "head_dim": 128,
                     "num_hidden_layers": 48, "max_position_embeddings": 10485760, "rope_theta": 500000.0,
                     "attention_chunk_size": 8192, "no_rope_layer_interval": 4,
                     "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                                      "original_max_position_embeddings": 8192, "rope_type": "llama3"}}
GEMMA3_4B_TEXT = {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
                  "num_hidden_layers": 34, "max_position_embeddings": 131072, "rope_theta": 1000000.0,
                  "rope_local_base_freq": 10000.0, "sliding_window": 1024, "sliding_window_pattern": 6,
                  "rope_scaling": {"factor": 8.0, "rope_type": "linear"}}
GEMMA3_V5_TEXT = {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
                  "num_hidden_layers": 34, "max_position_embeddings": 131072, "sliding_window": 1024,
                  "layer_types": ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(34)],
                  "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                                      "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}
GEMMA4_TEXT = {"model_type": "gemma4_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
               "global_head_dim": 512, "num_hidden_layers": 30, "max_position_embeddings": 131072,
               "sliding_window": 512,
               "rope_parameters": {"full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                                                      "rope_theta": 1000000.0},
                                   "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}
QWEN2_VL_7B = {"model_type": "qwen2_vl", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
               "max_position_embeddings": 32768, "rope_theta": 1000000.0,
               "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}

CLASS_CASES = [
    ("llama-4-scout (llama3, high == low)", "meta-llama/Llama-4-Scout-17B-16E text_config (rope keys)",
     {"model_type": "llama4", "text_config": LLAMA4_SCOUT_TEXT}, "chunked_attention"),
    ("phi without partial_rotary_factor (class default 0.5)", "synthetic: phi config.json without the key",
     {"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32, "max_position_embeddings": 2048}, None),
    ("stablelm without partial_rotary_factor (class default 0.25)", "synthetic: stablelm config.json without the key",
     {"model_type": "stablelm", "hidden_size": 2560, "num_attention_heads": 32, "max_position_embeddings": 4096}, None),
    ("glm without partial_rotary_factor (class default 0.5)", "synthetic: glm config.json without the key",
     {"model_type": "glm", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128,
      "max_position_embeddings": 131072}, None),
    ("nemotron without partial_rotary_factor (class default 0.5)", "synthetic: nemotron config.json without the key",
     {"model_type": "nemotron", "hidden_size": 6144, "num_attention_heads": 48, "head_dim": 128,
      "max_position_embeddings": 4096}, None),
    ("mixtral without rope_theta (class default 1e6)", "synthetic: mixtral config.json without rope_theta",
     {"model_type": "mixtral", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 32768}, None),
    ("cohere without rope_theta (class default 5e5)", "synthetic: cohere config.json without rope_theta",
     {"model_type": "cohere", "hidden_size": 8192, "num_attention_heads": 64, "max_position_embeddings": 8192}, None),
    ("llama4 text without rope_theta (class default 5e5)", "synthetic: llama4 text_config without rope_theta",
     {"model_type": "llama4", "text_config": {k: v for k, v in LLAMA4_SCOUT_TEXT.items()
                                              if k not in ("rope_theta", "rope_scaling")}}, "chunked_attention"),
    ("gemma3 without rope_theta (class defaults 1e6 / 1e4), full", "synthetic: gemma3 text_config without thetas",
     {"model_type": "gemma3", "text_config": {k: v for k, v in GEMMA3_4B_TEXT.items()
                                              if k not in ("rope_theta", "rope_local_base_freq", "rope_scaling")}},
     "full_attention"),
    ("gemma3 without rope_theta (class defaults 1e6 / 1e4), sliding", "synthetic: gemma3 text_config without thetas",
     {"model_type": "gemma3", "text_config": {k: v for k, v in GEMMA3_4B_TEXT.items()
                                              if k not in ("rope_theta", "rope_local_base_freq", "rope_scaling")}},
     "sliding_attention"),
    ("gemma-3-4b v4 keys, full (linear x8, 1e6)", "google/gemma-3-4b-it text_config (rope keys)",
     {"model_type": "gemma3", "text_config": GEMMA3_4B_TEXT}, "full_attention"),
    ("gemma-3-4b v4 keys, sliding (rope_local_base_freq 1e4)", "google/gemma-3-4b-it text_config (rope keys)",
     {"model_type": "gemma3", "text_config": GEMMA3_4B_TEXT}, "sliding_attention"),
    ("gemma-3-4b v5 rope_parameters, full", "synthetic: gemma-3-4b in the v5 nested layout",
     {"model_type": "gemma3_text", **{k: v for k, v in GEMMA3_V5_TEXT.items() if k != "model_type"}}, "full_attention"),
    ("gemma-3-4b v5 rope_parameters, sliding", "synthetic: gemma-3-4b in the v5 nested layout",
     {"model_type": "gemma3_text", **{k: v for k, v in GEMMA3_V5_TEXT.items() if k != "model_type"}},
     "sliding_attention"),
    ("qwen2-vl-7b (mrope)", "Qwen/Qwen2-VL-7B-Instruct config.json (rope keys)", QWEN2_VL_7B, None),
    ("qwen2-vl without rope_theta (text config default_theta 1e6)", "synthetic: Qwen2-VL-7B without rope_theta",
     {k: v for k, v in QWEN2_VL_7B.items() if k != "rope_theta"}, None),
    ("gemma3 text_config without head_dim (Gemma3TextConfig default 256)", "synthetic: gemma-3-4b without head_dim",
     {"model_type": "gemma3", "text_config": {k: v for k, v in GEMMA3_4B_TEXT.items() if k != "head_dim"}},
     "full_attention"),
    ("glm4 without head_dim (Glm4Config default 128)", "synthetic: glm4 config.json without head_dim",
     {"model_type": "glm4", "hidden_size": 4096, "num_attention_heads": 16, "max_position_embeddings": 131072}, None),
    ("qwen3.5 with YaRN x4 and mrope_section (class default [11, 11, 10])",
     "synthetic: Qwen/Qwen3.5-27B-like text_config with YaRN factor 4 and no mrope_section",
     {"model_type": "qwen3_5", "text_config": {"model_type": "qwen3_5_text", "hidden_size": 4096,
      "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "num_hidden_layers": 8,
      "max_position_embeddings": 262144,
      "rope_parameters": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 262144,
                          "rope_theta": 10000000, "partial_rotary_factor": 0.25}}}, None),
    ("qwen3.5 with YaRN x4 and mrope_section [12, 10, 10]",
     "synthetic: Qwen/Qwen3.5-27B-like text_config with YaRN factor 4 and its own mrope_section",
     {"model_type": "qwen3_5", "text_config": {"model_type": "qwen3_5_text", "hidden_size": 4096,
      "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "num_hidden_layers": 8,
      "max_position_embeddings": 262144,
      "rope_parameters": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 262144,
                          "rope_theta": 10000000, "partial_rotary_factor": 0.25,
                          "mrope_section": [12, 10, 10], "mrope_interleaved": True}}}, None),
    ("gemma-4-like, full (proportional 0.25, head 512)", "synthetic: transformers' Gemma4TextConfig layout",
     {"model_type": "gemma4", "text_config": GEMMA4_TEXT}, "full_attention"),
    ("gemma-4-like, sliding (default 1e4, head 256)", "synthetic: transformers' Gemma4TextConfig layout",
     {"model_type": "gemma4", "text_config": GEMMA4_TEXT}, "sliding_attention"),
]

# Rope-relevant class defaults of every config class (AutoConfig.for_model(model_type) without arguments).
DEFAULT_KEYS = ["hidden_size", "num_attention_heads", "head_dim", "max_position_embeddings", "sliding_window",
                "global_head_dim"]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def numpy_f64(rp, dim, max_pos, seq_len, rope_type):
    """The same formulas in float64 (numpy), from the parameters transformers resolved."""
    import numpy as np

    base = float(rp["rope_theta"])
    e = np.arange(0, dim, 2, dtype=np.float64) / dim
    if rope_type == "default":
        return 1.0 / base ** e
    if rope_type == "linear":
        return 1.0 / base ** e / rp["factor"]
    if rope_type == "dynamic":
        s = max_pos if seq_len is None else max(seq_len, max_pos)
        f = rp["factor"]
        b = base * ((f * s / max_pos) - (f - 1)) ** (dim / (dim - 2))
        return 1.0 / b ** e
    if rope_type == "yarn":
        orig = rp["original_max_position_embeddings"]
        factor = rp["factor"] if rp.get("factor") is not None else max_pos / orig
        bf = rp.get("beta_fast") or 32
        bs = rp.get("beta_slow") or 1
        corr = lambda r: (dim * math.log(orig / (r * 2 * math.pi))) / (2 * math.log(base))
        low, high = corr(bf), corr(bs)
        if rp.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
        p = base ** e
        extra = 1 - ramp
        return (1.0 / (factor * p)) * (1 - extra) + (1.0 / p) * extra
    if rope_type == "longrope":
        orig = rp["original_max_position_embeddings"]
        ext = rp["long_factor"] if (seq_len and seq_len > orig) else rp["short_factor"]
        return 1.0 / (np.asarray(ext, dtype=np.float64) * base ** e)
    if rope_type == "llama3":
        inv = 1.0 / base ** e
        old = rp["original_max_position_embeddings"]
        lo, hi, f = rp["low_freq_factor"], rp["high_freq_factor"], rp["factor"]
        wl = 2 * math.pi / inv
        inv_l = np.where(wl > old / lo, inv / f, inv)
        smooth = (old / wl - lo) / (hi - lo)
        smoothed = (1 - smooth) * inv_l / f + smooth * inv_l
        medium = ~(wl < old / hi) & ~(wl > old / lo)
        return np.where(medium, smoothed, inv_l)
    if rope_type == "proportional":
        n = int(rp.get("partial_rotary_factor", 1.0) * dim // 2)
        inv = np.zeros(dim // 2)
        inv[:n] = 1.0 / base ** (np.arange(0, 2 * n, 2, dtype=np.float64) / dim)
        return inv / rp.get("factor", 1.0)
    raise ValueError(rope_type)


def rotary_class(config, model_type):
    """The text model's `<Model>RotaryEmbedding` class (not a vision one) for a config."""
    import importlib
    import inspect

    mod = importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
    names = sorted(n for n in dir(mod) if n.endswith("RotaryEmbedding") and "Vision" not in n
                   and inspect.isclass(getattr(mod, n)))
    for n in names:
        try:
            return getattr(mod, n)(config), n
        except Exception:
            continue
    raise RuntimeError(f"no rotary class for {model_type}: {names}")


def class_case(name, source, fields, layer_type):
    """One (config, layer type) read through the model's rotary class: inv_freq and attention scaling buffers."""
    from transformers import AutoConfig

    kwargs = {k: v for k, v in fields.items() if k != "model_type"}
    config = AutoConfig.for_model(fields["model_type"], **json.loads(json.dumps(kwargs)))
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    module_type = fields["model_type"].removesuffix("_text")
    rope, cls = rotary_class(text, module_type)
    prefix = f"{layer_type}_" if layer_type and hasattr(rope, f"{layer_type}_inv_freq") else ""
    inv = getattr(rope, f"{prefix}inv_freq")
    attn = getattr(rope, f"{prefix}attention_scaling")
    rp = text.rope_parameters
    rp = rp[layer_type] if layer_type and layer_type in rp else rp
    lt = getattr(text, "layer_types", None)
    vals = [float(v) for v in inv.tolist()]
    extra = {}
    if getattr(rope, "mrope_section", None) is not None:
        # The sections the class splits the planes by (its default when the config has none).
        extra["mrope_section"] = [int(x) for x in rope.mrope_section]
    return {
        **extra,
        "name": name,
        "source": source,
        "called": f"{cls}(config).{prefix}inv_freq",
        "config": fields,
        "seq_len": None,
        "layer_type": layer_type,
        "layers": lt.count(layer_type) if lt and layer_type else None,
        "num_layers": len(lt) if lt else None,
        "rope_type": rp.get("rope_type", "default"),
        "rope_theta": float(rp["rope_theta"]),
        "rotary_dim": 2 * len(vals),
        "inv_freq_f32_bits": [f"{f32_bits(v):08x}" for v in vals],
        "inv_freq_f32": vals,
        "attention_factor": float(attn),
        "inv_freq_f64": [float(v) for v in numpy_f64(rp, 2 * len(vals), text.max_position_embeddings, None,
                                                     rp.get("rope_type", "default"))],
    }


def class_defaults():
    """Per model type: the rope-relevant defaults of its config class, and whether its default rope honours
    `partial_rotary_factor` (read from the source of `compute_default_rope_parameters`)."""
    import importlib
    import inspect

    from transformers import CONFIG_MAPPING

    out = {}
    for mt in sorted(CONFIG_MAPPING.keys()):
        try:
            c = CONFIG_MAPPING[mt]()
        except Exception:
            continue
        d = {}
        sub = getattr(CONFIG_MAPPING[mt], "sub_configs", {}) or {}
        if "text_config" in sub and getattr(c, "text_config", None) is not None:
            d["text_config"] = c.text_config.model_type
        rp = getattr(c, "rope_parameters", None)
        if not rp and "text_config" not in d:
            continue
        theta = getattr(c, "default_theta", None)
        if isinstance(theta, dict):
            d["default_theta"] = {k: float(v) for k, v in theta.items()}
        elif theta is not None:
            d["default_theta"] = float(theta)
        if rp:
            d["rope_parameters"] = json.loads(json.dumps(rp))
        for k in DEFAULT_KEYS:
            try:
                v = getattr(c, k, None)
            except Exception:
                v = None
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                d[k] = v
        lt = getattr(c, "layer_types", None)
        if lt and len(set(lt)) > 1:
            d["layer_types"] = sorted(set(lt))
        try:
            plc = c.per_layer_config
            full = [i for i, t in enumerate(lt or []) if t == "full_attention"]
            if full:
                d["full_attention_head_dim"] = plc[full[0]].head_dim
        except Exception:
            pass
        try:
            base = mt.removesuffix("_text")
            mod = importlib.import_module(f"transformers.models.{base}.modeling_{base}")
            src = "".join(inspect.getsource(getattr(mod, n).compute_default_rope_parameters) for n in dir(mod)
                          if n.endswith("RotaryEmbedding") and "Vision" not in n
                          and hasattr(getattr(mod, n), "compute_default_rope_parameters"))
            if src:
                d["default_honours_partial"] = "partial_rotary_factor" in src
        except Exception:
            pass
        out[mt] = d
    return out


def main():
    if "--bits-only" not in sys.argv:
        # Must be set before torch is first imported (ATen reads it once).
        os.environ["ATEN_CPU_CAPABILITY"] = "default"
    import importlib

    import numpy
    import torch
    import transformers
    from transformers import AutoConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    versions = {"torch": torch.__version__.split("+")[0], "transformers": transformers.__version__}
    if versions != PINNED and "--allow-other-version" not in sys.argv:
        print(f"pinned {PINNED}, found {versions}", file=sys.stderr)
        sys.exit(3)
    out_path = next((a for a in sys.argv[1:] if not a.startswith("--")), None)

    cases = []
    for name, source, fields, seq_len in CASES:
        kwargs = {k: v for k, v in fields.items() if k != "model_type"}
        config = AutoConfig.for_model(fields["model_type"], **json.loads(json.dumps(kwargs)))
        config.standardize_rope_params()
        rp = config.rope_parameters
        rope_type = rp.get("rope_type", "default")
        if rope_type == "default":
            mod = importlib.import_module(f"transformers.models.{fields['model_type']}.modeling_{fields['model_type']}")
            cls = [getattr(mod, n) for n in dir(mod) if n.endswith("RotaryEmbedding")
                   and hasattr(getattr(mod, n), "compute_default_rope_parameters")][0]
            inv, attn = cls.compute_default_rope_parameters(config)
            called = f"{cls.__name__}.compute_default_rope_parameters"
        else:
            inv, attn = ROPE_INIT_FUNCTIONS[rope_type](config, "cpu", seq_len=seq_len)
            called = f"ROPE_INIT_FUNCTIONS[{rope_type!r}]"
        assert inv.dtype == torch.float32
        vals = [float(v) for v in inv.tolist()]
        case = {
            "name": name,
            "source": source,
            "called": called,
            "config": fields,
            "seq_len": seq_len,
            "rope_type": rope_type,
            "rotary_dim": 2 * len(vals),
            "inv_freq_f32_bits": [f"{f32_bits(v):08x}" for v in vals],
            "inv_freq_f32": vals,
            "attention_factor": float(attn),
            "inv_freq_f64": [float(v) for v in numpy_f64(rp, 2 * len(vals), config.max_position_embeddings,
                                                         seq_len, rope_type)],
        }
        if fields["model_type"] in ("deepseek_v2", "deepseek_v3"):
            mod = importlib.import_module(f"transformers.models.{fields['model_type']}.modeling_{fields['model_type']}")
            case["softmax_scale_multiplier"] = float(mod.yarn_apply_mscale(rp, 1.0))
        cases.append(case)

    for name, source, fields, layer_type in CLASS_CASES:
        cases.append(class_case(name, source, fields, layer_type))

    capability = torch.backends.cpu.get_cpu_capability()
    if "--bits-only" in sys.argv:
        json.dump({"capability": capability, "bits": [c["inv_freq_f32_bits"] for c in cases]}, sys.stdout)
        return
    assert capability == "DEFAULT", capability
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    child = subprocess.run([sys.executable, __file__, "--bits-only", *[a for a in sys.argv[1:] if a.startswith("--")]],
                           env=env, check=True, capture_output=True, text=True)
    vectorized = json.loads(child.stdout)
    for case, bits in zip(cases, vectorized["bits"], strict=True):
        case["inv_freq_f32_bits_vectorized"] = bits

    if "--defaults" in sys.argv:
        text = json.dumps({"generator": "scripts/gen_hf_rope_vectors.py --defaults: the config classes of "
                           "transformers (AutoConfig.for_model(model_type) without arguments)",
                           "versions": versions, "classes": class_defaults()}, indent=0, sort_keys=True) + "\n"
        with open(out_path, "w") as f:
            f.write(text)
        return

    doc = {
        "generator": "scripts/gen_hf_rope_vectors.py: real Hugging Face transformers code (ROPE_INIT_FUNCTIONS and "
                     "<Model>RotaryEmbedding.compute_default_rope_parameters) on CPU; inv_freq_f64 is a numpy float64 "
                     "evaluation of the same formulas",
        "versions": {**versions, "numpy": numpy.__version__},
        "capability": "DEFAULT (inv_freq_f32_bits: ATEN_CPU_CAPABILITY=default, the scalar powf path)",
        "vectorized_capability": vectorized["capability"],
        "cases": cases,
    }
    text = json.dumps(doc, indent=1) + "\n"
    if out_path:
        with open(out_path, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
