#!/usr/bin/env python3
"""Oracle for `rope audit --model FILE.gguf --config C` (crates/attnlab-cli/tests/rope_gguf.rs).

  rope_gguf_oracle.py write OUT.gguf SPEC.json
      Writes a small GGUF with the `gguf` package (llama.cpp's own writer): SPEC gives
      arch, context, embd, heads, base, n_rot, optional "keys" ({"rope.scaling.type": "yarn", ...},
      written with the gguf package's typed adders) and optional "llama3" ({factor, low, high,
      orig}: a `rope_freqs` tensor computed here by convert_hf_to_gguf.py's LlamaModel rule).
      With "from" (a GGUF path) the file copies that file's tensors and metadata instead and only
      changes the rope keys (the SmolLM2 file with other metadata).

  rope_gguf_oracle.py expect FILE.gguf CONFIG.json L
      Prints JSON: llama.cpp's per-plane ω and cos/sin factor for the file, computed in numpy from
      ggml's rope_yarn / ggml_rope_yarn_corr_dims as written in ggml (read through
      gguf.GGUFReader); transformers' ω and attention factor for the config (transformers' own
      ROPE_INIT_FUNCTIONS / compute_default_rope_parameters, float32); and per plane the first
      position m < L at which |a_g e^{i m ω_g} - a_t e^{i m ω_t}| > 2^-8 a_t, by brute force over
      every m (numpy float64).
"""
import json
import math
import sys

import numpy as np


def llama3_factors(base, n_rot, factor, low, high, orig):
    # convert_hf_to_gguf.py, LlamaModel.generate_extra_tensors (llama3 rope_freqs).
    freqs = 1.0 / (base ** (np.arange(0, n_rot, 2, dtype=np.float32) / n_rot))
    low_wl = orig / low
    high_wl = orig / high
    out = []
    for f in freqs:
        wl = 2 * math.pi / f
        if wl < high_wl:
            out.append(1)
        elif wl > low_wl:
            out.append(factor)
        else:
            s = (orig / wl - low) / (high - low)
            out.append(1 / ((1 - s) / factor + s))
    return np.array(out, dtype=np.float32)


def write(out, spec):
    import gguf

    arch = spec.get("arch", "llama")
    if "from" in spec:
        r = gguf.GGUFReader(spec["from"])
        arch = bytes(r.fields["general.architecture"].parts[-1]).decode()
    w = gguf.GGUFWriter(out, arch)
    rope_keys = {f"{arch}.rope.{k}" for k in spec.get("keys", {})}
    if "from" in spec:
        for name, f in r.fields.items():
            if name.startswith("GGUF.") or name == "general.architecture" or name in rope_keys:
                continue
            t = f.types[0]
            if t == gguf.GGUFValueType.ARRAY:
                sub = f.types[-1]
                if sub == gguf.GGUFValueType.STRING:
                    vals = [bytes(f.parts[i]).decode("utf-8", "replace") for i in f.data]
                else:
                    vals = [f.parts[i][0].item() for i in f.data]
                w.add_key_value(name, vals, t, sub_type=sub)
            elif t == gguf.GGUFValueType.STRING:
                w.add_key_value(name, bytes(f.parts[-1]).decode("utf-8", "replace"), t)
            else:
                w.add_key_value(name, f.parts[-1][0].item(), t)
        for t in r.tensors:
            w.add_tensor(t.name, np.asarray(t.data), raw_shape=list(reversed([int(x) for x in t.shape])),
                         raw_dtype=t.tensor_type)
    else:
        w.add_block_count(1)
        w.add_embedding_length(spec["embd"])
        w.add_feed_forward_length(4 * spec["embd"])
        w.add_head_count(spec["heads"])
        w.add_head_count_kv(spec["heads"])
        w.add_context_length(spec["context"])
        w.add_rope_freq_base(float(spec["base"]))
        w.add_rope_dimension_count(spec["n_rot"])
    for k, v in spec.get("keys", {}).items():
        key = f"{arch}.rope.{k}"
        if k == "scaling.type":
            w.add_string(key, v)
        elif k == "scaling.original_context_length":
            w.add_uint32(key, v)
        else:
            w.add_float32(key, float(v))
    if "llama3" in spec:
        l = spec["llama3"]
        w.add_tensor("rope_freqs.weight",
                     llama3_factors(spec["base"], spec["n_rot"], l["factor"], l["low"], l["high"], l["orig"]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def field(r, key, default=None):
    import gguf

    f = r.fields.get(key)
    if f is None:
        return default
    if f.types[0] == gguf.GGUFValueType.STRING:
        return bytes(f.parts[-1]).decode()
    return f.parts[-1][0].item()


def ggml_rope(path, n_ctx):
    """llama.cpp's ω and cos/sin factor for the file, from ggml's code (f64 arithmetic, float32
    where GGUF stores float32)."""
    import gguf

    r = gguf.GGUFReader(path)
    arch = field(r, "general.architecture")
    k = lambda s: f"{arch}.{s}"
    ctx_train = field(r, k("context_length"))
    heads = field(r, k("attention.head_count"))
    head_dim = field(r, k("attention.key_length"), field(r, k("embedding_length")) // heads)
    n_rot = field(r, k("rope.dimension_count"), head_dim)
    base = field(r, k("rope.freq_base"), 10000.0)
    stype = field(r, k("rope.scaling.type"), "linear")
    factor = field(r, k("rope.scaling.factor"), 0.0)
    freq_scale = 1.0 if factor == 0.0 else float(np.float32(1.0) / np.float32(factor))
    if stype == "none":
        freq_scale = 1.0
    orig = field(r, k("rope.scaling.original_context_length"), 0) or ctx_train
    ext = 1.0 if stype == "yarn" else 0.0
    attn = field(r, k("rope.scaling.attn_factor"), 1.0)
    beta_fast = field(r, k("rope.scaling.yarn_beta_fast"), 32.0)
    beta_slow = field(r, k("rope.scaling.yarn_beta_slow"), 1.0)
    tensors = {t.name: np.asarray(t.data, dtype=np.float64) for t in r.tensors if t.name.startswith("rope_")}
    ff = tensors.get("rope_freqs.weight")
    if ff is None:
        ff = tensors.get("rope_factors_long.weight" if n_ctx > orig else "rope_factors_short.weight")
    if ff is None:
        ff = np.ones(n_rot // 2)

    def corr_dim(beta):  # ggml_rope_yarn_corr_dim
        return n_rot * math.log(orig / (beta * 2 * math.pi)) / (2 * math.log(base))

    low = max(0.0, math.floor(corr_dim(beta_fast)))
    high = min(n_rot - 1.0, math.ceil(corr_dim(beta_slow)))
    omegas = []
    for i in range(n_rot // 2):
        theta_extrap = base ** (-2.0 * i / n_rot) / ff[i]
        theta_interp = freq_scale * theta_extrap
        theta = theta_interp
        if ext != 0.0:
            y = (i - low) / max(0.001, high - low)
            ramp = 1 - min(1.0, max(0.0, y))
            mix = ramp * ext
            theta = theta_interp * (1 - mix) + theta_extrap * mix
        omegas.append(theta)
    mscale = attn
    if ext != 0.0:
        mscale *= 1.0 + 0.1 * math.log(1.0 / freq_scale)
    return np.array(omegas), mscale


def hf_rope(config, seq_len):
    import importlib

    import torch  # noqa: F401  (transformers' rope functions return torch tensors)
    from transformers import AutoConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    mt = config["model_type"]
    kwargs = {k: v for k, v in config.items() if k != "model_type"}
    c = AutoConfig.for_model(mt, **kwargs)
    c.standardize_rope_params()
    rt = c.rope_parameters.get("rope_type", "default")
    if rt == "default":
        mod = importlib.import_module(f"transformers.models.{mt}.modeling_{mt}")
        cls = [getattr(mod, n) for n in dir(mod) if n.endswith("RotaryEmbedding")
               and hasattr(getattr(mod, n), "compute_default_rope_parameters")][0]
        inv, attn = cls.compute_default_rope_parameters(c)
    else:
        inv, attn = ROPE_INIT_FUNCTIONS[rt](c, "cpu", seq_len=seq_len)
    return np.array([float(v) for v in inv.tolist()]), float(attn)


def first_differences(wg, ag, wt, at, n):
    m = np.arange(n, dtype=np.float64)
    out = []
    for a, b in zip(wg, wt):
        gap = np.abs(ag * np.exp(1j * m * a) - at * np.exp(1j * m * b))
        idx = np.nonzero(gap > at / 256.0)[0]
        out.append(int(idx[0]) if idx.size else None)
    return out


def main():
    cmd = sys.argv[1]
    if cmd == "write":
        write(sys.argv[2], json.load(open(sys.argv[3])))
    elif cmd == "expect":
        path, cfg, n = sys.argv[2], json.load(open(sys.argv[3])), int(sys.argv[4])
        wg, ag = ggml_rope(path, n)
        wt, at = hf_rope(cfg, n)
        print(json.dumps({
            "ggml_inv_freq": wg.tolist(),
            "ggml_cos_sin_factor": ag,
            "hf_inv_freq": wt.tolist(),
            "hf_attention_factor": at,
            "first_difference": first_differences(wg, ag, wt, at, n),
        }))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
