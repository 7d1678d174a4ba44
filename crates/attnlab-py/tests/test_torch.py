"""torch.nn.MultiheadAttention without positions is permutation equivariant (torch optional)."""

from __future__ import annotations

import copy
import os

import numpy as np
import pytest

import attnlab

try:
    import torch
except ImportError:  # an oracle: a visible skip locally, a failure under CI (.ci/run installs torch)
    if os.environ.get("CI"):
        raise
    pytest.skip("torch is not installed: the MultiheadAttention check needs it (pip install torch)",
                allow_module_level=True)


def wrap(mha, attn_mask=None):
    """The module as f(H): a float32 and a float64 copy, so both precisions can be diagnosed."""
    copies = {
        np.float32: copy.deepcopy(mha).float().eval(),
        np.float64: copy.deepcopy(mha).double().eval(),
    }

    def f(H):
        m = copies[H.dtype.type]
        t = torch.from_numpy(H)[None]  # a batch of one sequence
        mask = None if attn_mask is None else attn_mask.to(t.dtype)
        with torch.no_grad():
            out, _ = m(t, t, t, attn_mask=mask, need_weights=False)
        return out[0].numpy()

    return f


def test_multihead_attention_without_positions_holds():
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
    X = np.random.default_rng(0).standard_normal((6, 8))
    f = wrap(mha)
    for dtype in (np.float32, np.float64):
        r = attnlab.check_equivariance(f, X.astype(dtype))
        assert r.holds, r
        assert r.diagnosis is not None and r.diagnosis.conclusion in ("round-off", "exact"), r
    # A positional bias breaks it, and the diagnosis says structure.
    P = 1e-3 * np.arange(6)[:, None]
    r = attnlab.check_equivariance(lambda H: f(H + P.astype(H.dtype)), X)
    assert not r.holds and r.diagnosis.conclusion == "structural", r


def test_causal_multihead_attention_is_prefix_invariant_not_equivariant():
    torch.manual_seed(1)
    mha = torch.nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
    causal = torch.triu(torch.full((6, 6), float("-inf")), diagonal=1)
    f = wrap(mha, attn_mask=causal)
    X = np.random.default_rng(1).standard_normal((6, 8))
    assert not attnlab.check_equivariance(f, X).holds
    r = attnlab.check_equivariance(f, X, mask="causal")
    assert r.holds, r
