"""torch.nn.MultiheadAttention without positions is permutation equivariant (torch optional)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import attnlab

torch = pytest.importorskip(
    "torch", reason="torch is not installed: the MultiheadAttention check needs it (pip install torch)"
)


def wrap(mha):
    """The module as f(H): a float32 and a float64 copy, so both precisions can be diagnosed."""
    copies = {
        np.float32: copy.deepcopy(mha).float().eval(),
        np.float64: copy.deepcopy(mha).double().eval(),
    }

    def f(H):
        m = copies[H.dtype.type]
        t = torch.from_numpy(H)[None]  # batch of one
        with torch.no_grad():
            out, _ = m(t, t, t, need_weights=False)
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
    # With a causal mask the module sees the order: equivariance breaks, prefix invariance holds.
    causal = torch.nn.Transformer.generate_square_subsequent_mask(6)

    def masked(H):
        t = torch.from_numpy(H)[None]
        with torch.no_grad():
            out, _ = copy.deepcopy(mha).to(t.dtype).eval()(t, t, t, attn_mask=causal.to(t.dtype), need_weights=False)
        return out[0].numpy()

    assert not attnlab.check_equivariance(masked, X).holds
    assert attnlab.check_equivariance(masked, X, mask="causal").holds
