#!/usr/bin/env python3
"""Oracle for `rope usage` (crates/attnlab-cli/tests/rope_gguf.rs): the same numbers from the
GGUF file by an independent path — gguf.GGUFReader and gguf.quants.dequantize (llama.cpp's own
Python package), numpy float64.

  rope_usage_oracle.py FILE.gguf [IDS]

Prints JSON {"weights": [[layer][head][plane]], "text_layer0": [[head][plane]] (with IDS,
comma-separated token ids: layer 0's mean |q_k|·|k_k| over those tokens)}.

Per layer: W_q, W_k dequantized, rows put back in Hugging Face's order (the inverse of
convert_hf_to_gguf.py's LlamaModel.permute: reshape (heads, d/2, 2, in), swap axes 1 and 2),
the attention RMSNorm gain g folded in (W·diag(g)); plane k of a head = rows k and k + d/2;
the product of the two Frobenius norms, key head = query head // (heads / kv_heads).
"""
import json
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize


def field(r, key, default=None):
    f = r.fields.get(key)
    if f is None:
        return default
    return f.parts[-1][0].item()


def main():
    path = sys.argv[1]
    ids = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else None
    r = GGUFReader(path)
    arch = bytes(r.fields["general.architecture"].parts[-1]).decode()
    assert arch == "llama", arch
    heads = field(r, f"{arch}.attention.head_count")
    kv = field(r, f"{arch}.attention.head_count_kv", heads)
    layers = field(r, f"{arch}.block_count")
    embd = field(r, f"{arch}.embedding_length")
    eps = field(r, f"{arch}.attention.layer_norm_rms_epsilon")
    hd = embd // heads
    half = hd // 2
    t = {x.name: x for x in r.tensors}

    def mat(name):
        x = t[name]
        v = dequantize(x.data, x.tensor_type).astype(np.float64)
        rows = int(x.shape[1]) if len(x.shape) > 1 else 1
        return v.reshape(rows, -1) if len(x.shape) > 1 else v.reshape(-1)

    def unpermute(w, n):
        return w.reshape(n, half, 2, w.shape[1]).swapaxes(1, 2).reshape(w.shape)

    def plane_norms(w, n):  # [head][plane] Frobenius norms of rows (k, k + half)
        w = w.reshape(n, hd, -1)
        sq = (w ** 2).sum(axis=2)
        return np.sqrt(sq[:, :half] + sq[:, half:])

    group = heads // kv
    out = {"weights": []}
    for l in range(layers):
        g = mat(f"blk.{l}.attn_norm.weight")
        wq = unpermute(mat(f"blk.{l}.attn_q.weight"), heads) * g
        wk = unpermute(mat(f"blk.{l}.attn_k.weight"), kv) * g
        qn, kn = plane_norms(wq, heads), plane_norms(wk, kv)
        out["weights"].append([(qn[h] * kn[h // group]).tolist() for h in range(heads)])
        if l == 0 and ids is not None:
            e = mat("token_embd.weight")[ids]
            x = e / np.sqrt((e ** 2).mean(axis=1, keepdims=True) + eps)
            q = x @ wq.T  # gain already folded into wq, wk
            k = x @ wk.T
            qp = np.sqrt((q.reshape(len(ids), heads, hd)[:, :, :half] ** 2)
                         + (q.reshape(len(ids), heads, hd)[:, :, half:] ** 2))
            kp = np.sqrt((k.reshape(len(ids), kv, hd)[:, :, :half] ** 2)
                         + (k.reshape(len(ids), kv, hd)[:, :, half:] ** 2))
            out["text_layer0"] = [(qp[:, h, :] * kp[:, h // group, :]).mean(axis=0).tolist()
                                  for h in range(heads)]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
