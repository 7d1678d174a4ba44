"""The course's numpy program (seed 000), verbatim in its maths, parameterised by seed, n, d.

Prints one JSON object: the drawn Wq, Wk, Wv, X, the attention output and weights, and
np.allclose(out_perm, out[perm]) for the given permutation. Used by tests/numpy_crosscheck.rs.
"""
import json
import sys

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


seed, n, d = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
perm = [int(p) for p in sys.argv[4].split(",")]
np.random.seed(seed)
Wq, Wk, Wv = np.random.randn(d, d), np.random.randn(d, d), np.random.randn(d, d)
X = np.random.randn(n, d)
out, weights = self_attention(X, Wq, Wk, Wv)
out_perm, _ = self_attention(X[perm], Wq, Wk, Wv)
print(json.dumps({
    "Wq": Wq.tolist(), "Wk": Wk.tolist(), "Wv": Wv.tolist(), "X": X.tolist(),
    "output": out.tolist(), "weights": weights.tolist(),
    "allclose": bool(np.allclose(out_perm, out[perm])),
    "max_abs_error": float(np.max(np.abs(out_perm - out[perm]))),
}))
