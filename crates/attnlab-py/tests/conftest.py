"""Shared helpers of the attnlab Python tests: the course's numpy layer, its inputs, the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]


def course_inputs(seed=0, n=4, d=4):
    """The course program's draws: np.random.seed(seed); Wq, Wk, Wv (d×d), then X (n×d)."""
    np.random.seed(seed)
    Wq, Wk, Wv = np.random.randn(d, d), np.random.randn(d, d), np.random.randn(d, d)
    X = np.random.randn(n, d)
    return X, Wq, Wk, Wv


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def numpy_attention(Wq, Wk, Wv, causal=False):
    """The course's self_attention as a layer f(H), computing in H's dtype."""

    def f(H):
        q, k, v = (W.astype(H.dtype) for W in (Wq, Wk, Wv))
        Q, K, V = H @ q, H @ k, H @ v
        scores = Q @ K.T / np.sqrt(H.dtype.type(Q.shape[-1]))
        if causal:
            n = H.shape[0]
            scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
        return softmax(scores, axis=-1) @ V

    return f


def index_bias(f, scale):
    """f after adding p·scale to every entry of row p (the course's crude positional signal),
    computed in float64 and rounded to H's dtype, as `attnlab --pos index` does."""

    def g(H):
        P = (np.arange(H.shape[0], dtype=np.float64) * scale).astype(H.dtype)[:, None]
        return f(H + P)

    return g


def cli_binary():
    """The attnlab binary: $ATTNLAB_BIN, else the checkout's target/{debug,release}/attnlab,
    else `attnlab` on PATH. Under CI a missing binary fails; elsewhere the test is skipped."""
    candidates = [os.environ.get("ATTNLAB_BIN")]
    candidates += [str(REPO / "target" / p / "attnlab") for p in ("debug", "release")]
    candidates += [shutil.which("attnlab")]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    if os.environ.get("CI"):
        pytest.fail("the attnlab binary is required under CI (cargo build it, or set ATTNLAB_BIN)")
    pytest.skip("the attnlab binary is not built (cargo build, or set ATTNLAB_BIN)")


def cli_json(*args):
    """`attnlab ARGS --json`, parsed (exit 0 holds, 1 breaks)."""
    out = subprocess.run([cli_binary(), *args, "--json"], capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)
