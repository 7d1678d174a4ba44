#!/usr/bin/env python3
"""Side-by-side timing: attnlab's attention forward pass vs the course's numpy code, same shapes,
same machine, same run. Prints medians and the ratio numpy / attnlab (> 1: attnlab is faster).

Usage: python3 bench/compare_attention.py [--quick]
Needs numpy (pip install numpy) and a Rust toolchain. Numbers vary with the machine and its load;
the ratio, measured in one run, is what to read.
"""
import json
import os
import subprocess
import sys
import timeit

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = [(64, 64), (256, 64), (1024, 128), (4096, 128)]
if "--quick" in sys.argv:
    SHAPES = [(64, 64), (256, 64)]


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V


def numpy_median(n, d, dtype, reps):
    rng = np.random.RandomState(0)
    Wq, Wk, Wv = (rng.randn(d, d).astype(dtype) for _ in range(3))
    X = rng.randn(n, d).astype(dtype)
    self_attention(X, Wq, Wk, Wv)
    times = timeit.repeat(lambda: self_attention(X, Wq, Wk, Wv), number=1, repeat=reps)
    return sorted(times)[len(times) // 2]


def main():
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "attnlab-core", "--example", "attention_timing"], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "examples", "attention_timing")
    try:
        from threadpoolctl import threadpool_info  # optional: which BLAS numpy runs
        blas = ", ".join(f"{i['internal_api']} {i.get('num_threads')} threads" for i in threadpool_info())
    except Exception:
        blas = "unknown (pip install threadpoolctl to see it)"
    print(f"numpy {np.__version__} ({blas}) vs attnlab (matrixmultiply GEMM, 1 thread)")
    print(f"{'shape':>14} {'dtype':>5} {'numpy (ms)':>11} {'attnlab (ms)':>13} {'numpy/attnlab':>14}")
    for n, d in SHAPES:
        reps = 30 if n <= 256 else (7 if n <= 1024 else 3)
        for dtype in ("f64", "f32"):
            npt = numpy_median(n, d, np.float64 if dtype == "f64" else np.float32, reps)
            out = subprocess.run([exe, str(n), str(d), dtype, str(reps)], capture_output=True, text=True, check=True)
            rt = json.loads(out.stdout)["median_s"]
            print(f"{f'n={n} d={d}':>14} {dtype:>5} {npt * 1e3:11.3f} {rt * 1e3:13.3f} {npt / rt:14.2f}")


if __name__ == "__main__":
    main()
