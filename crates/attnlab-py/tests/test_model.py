"""attnlab.model on the real SmolLM2-135M GGUF, against transformers loading the same file.

Oracle: transformers 5.24 + torch 2.15 + gguf + accelerate (``AutoModelForCausalLM`` /
``AutoTokenizer.from_pretrained(dir, gguf_file=…)``, which dequantize every tensor to float32
and undo llama.cpp's q/k row permutation) and the model file in attnlab's model cache
(``scripts/fetch-smollm2``). Without either: a visible skip locally, a failure under CI.

Tolerances (relative to the largest |entry|): both sides are float32 on the same dequantized
weights with sums in different orders. One layer's round-off is at most k·eps32·(d + ffn + n)
(k = 8, d = 576, ffn = 1536), each of L layers adds as much again, so the logits get
(L + 1)·k·eps32·(d + ffn + n) (the bound of crates/attnlab-core/tests/smollm2_oracle.rs).
The attention sublayer alone: RMSNorm, three projections of d terms, scores of head_dim terms,
softmax over n and W_o of 576 terms, bounded by k·eps32·(d + n).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import attnlab

EPS32 = float(np.finfo(np.float32).eps)
CI = bool(os.environ.get("CI"))


def _skip(why):
    if CI:
        pytest.fail(f"required under CI: {why}")
    pytest.skip(why)


@pytest.fixture(scope="module")
def model():
    try:
        return attnlab.model.load("smollm2-135m")
    except FileNotFoundError as e:
        _skip(f"the SmolLM2 model is not in the cache (scripts/fetch-smollm2): {e}")


@pytest.fixture(scope="module")
def hf(model):
    try:
        import torch
        import transformers
        import gguf  # noqa: F401  (transformers' GGUF loader needs it)
        import accelerate  # noqa: F401
    except ImportError as e:
        _skip(f"transformers' GGUF loader needs torch, transformers, gguf and accelerate: {e}")
    if transformers.__version__ != "5.24.0" or torch.__version__.split("+")[0] != "2.15.0":
        _skip(f"the oracle is pinned to transformers 5.24.0 + torch 2.15.0; found "
              f"{transformers.__version__} + {torch.__version__}")
    path = Path(model.info()["file"]["path"]).expanduser()
    tok = transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    m = transformers.AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32
    ).eval()
    return tok, m


def spec_lines(k=4):
    """Prompts we did not choose: the first lines of 40–200 characters of the course spec."""
    spec = next((Path(__file__).resolve().parents[3] / "spec").glob("002_*"))
    lines = [l.strip() for l in spec.read_text().splitlines()]
    return [l for l in lines if 40 <= len(l) <= 200][:k]


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def test_info_is_smollm2s(model):
    i = model.info()
    assert (i["architecture"], i["layers"], i["heads"], i["kv_heads"], i["head_dim"]) == ("llama", 30, 9, 3, 64)
    assert (i["embedding"], i["feed_forward"], i["vocab"], i["context_length"]) == (576, 1536, 49152, 8192)
    assert i["rope_base"] == 100000.0 and i["rope_dims"] == 64 and i["tied_embeddings"] is True
    # The parameter count is the file's (every tensor's elements), the same as model info's.
    assert i["parameters"] == attnlab.run("model info", model="smollm2-135m")["parameters"]


def test_tokenize_gives_transformers_ids(model, hf):
    tok, _ = hf
    texts = spec_lines(6) + ["  two  spaces\tand a tab\n", "naïve café, 東京, emoji 🙂🚀", "x = f(3.14159) ** 2  # code"]
    for t in texts:
        ours = [x.id for x in model.tokenize(t)]
        assert ours == tok.encode(t, add_special_tokens=False), t
        assert [x.piece for x in model.tokenize(t)] == tok.convert_ids_to_tokens(ours), t


def test_predict_and_logits_match_transformers(model, hf):
    import torch

    tok, m = hf
    c = model.info()
    for text in spec_lines(3):
        ids = tok.encode(text, add_special_tokens=False)
        n = len(ids)
        with torch.no_grad():
            want = m(torch.tensor([ids]), logits_to_keep=1).logits[0, -1].numpy()
        ours = model.logits(text)
        assert ours.shape == (c["vocab"],) and ours.dtype == np.float32
        tol = (c["layers"] + 1) * 8 * EPS32 * (c["embedding"] + c["feed_forward"] + n)
        err = rel(ours, want)
        print(f"{n} tokens: logits rel err {err:.1e} (tol {tol:.1e})")
        assert err < tol, text
        p = model.predict(text, top=10)
        theirs = list(np.argsort(-want, kind="stable")[:10])
        scale = float(np.max(np.abs(want)))
        assert p.top[0].id == theirs[0], text
        for k, (e, t) in enumerate(zip(p.top, theirs)):
            # Neighbours may swap only when transformers' own logits are closer than the bound.
            assert e.id == t or abs(want[e.id] - want[t]) < tol * scale, (text, k)
        # The prediction is the CLI's report, and its probabilities a softmax of the logits.
        assert p.ids == ids and p.json["top"][0]["id"] == p.top[0].id
        probs = np.exp(ours.astype(np.float64) - ours.max())
        probs /= probs.sum()
        assert p.top[0].prob == pytest.approx(probs[p.top[0].id], rel=1e-12)


def test_hidden_states_match_transformers(model, hf):
    import torch

    tok, m = hf
    text = spec_lines(1)[0]
    ids = tok.encode(text, add_special_tokens=False)
    with torch.no_grad():
        hs = m(torch.tensor([ids]), output_hidden_states=True).hidden_states
    n, d, f = len(ids), 576, 1536
    assert np.array_equal(model.hidden(text, 0), hs[0][0].numpy())  # the embedding rows: exact
    for layer in (1, 2):
        tol = layer * 8 * EPS32 * (d + f + n)
        assert rel(model.hidden(text, layer), hs[layer][0].numpy()) < tol, layer


def hf_attention(m, layer, H, rope, causal):
    """transformers' own layer: input_layernorm, then LlamaAttention with the model's rotary
    embedding at positions 0…n−1 (or cos = 1, sin = 0), causal or an all-zero additive mask."""
    import torch

    blk = m.model.layers[layer]
    x = torch.from_numpy(H)[None]
    n = H.shape[0]
    pos = torch.arange(n)[None]
    with torch.no_grad():
        h = blk.input_layernorm(x)
        cos, sin = m.model.rotary_emb(h, pos)
        if not rope:
            cos, sin = torch.ones_like(cos), torch.zeros_like(sin)
        mask = None if causal else torch.zeros(1, 1, n, n)
        out, _ = blk.self_attn(hidden_states=h, position_embeddings=(cos, sin), attention_mask=mask)
    return out[0].numpy()


@pytest.mark.parametrize("pos,mask", [("none", "none"), ("rope", "none"), ("rope", "causal"), ("none", "causal")])
def test_layer_is_transformers_attention_sublayer(model, hf, pos, mask):
    _, m = hf
    text = spec_lines(1)[0]
    H = model.hidden(text, 3)
    f = model.layer(3, pos=pos, mask=mask)
    ours = f(H)
    assert ours.shape == H.shape and ours.dtype == np.float32
    want = hf_attention(m, 3, H, pos == "rope", mask == "causal")
    tol = 8 * EPS32 * (H.shape[1] + H.shape[0])
    assert rel(ours, want) < tol
    # The float64 path computes the same function (the weights rounded once to float64).
    ours64 = f(H.astype(np.float64))
    assert ours64.dtype == np.float64 and rel(ours64, want) < tol


def test_the_checker_on_a_real_layer(model):
    """The course's claims on trained weights: bare attention (no mask, no rotation) is
    equivariant on the real hidden states entering layer 0; with RoPE it is not."""
    H = model.hidden("the cat sat on the mat", 0)
    bare = attnlab.check_equivariance(model.layer(0), H)
    assert bare.holds, bare
    rope = attnlab.check_equivariance(model.layer(0, pos="rope"), H, samples=20)
    assert not rope.holds
    # Causal without rope: permuting the first t rows leaves the later rows unchanged.
    causal = attnlab.check_equivariance(model.layer(0, mask="causal"), H, mask="causal")
    assert causal.holds


def test_bad_input_is_one_clear_error(model):
    with pytest.raises(ValueError, match="0 … 29"):
        model.layer(30)
    with pytest.raises(ValueError, match="576"):
        model.layer(0)(np.zeros((3, 5), np.float32))
    with pytest.raises(TypeError, match="float32 or float64"):
        model.layer(0)(np.zeros((3, 576), np.int64))
    with pytest.raises(ValueError, match="vocabulary size 49152"):
        model.predict([1, 49152])
    with pytest.raises(ValueError, match="rope"):
        model.predict("a", pos="alibi")
    with pytest.raises(ValueError, match="8192"):
        model.predict([1] * 8193)
    with pytest.raises(FileNotFoundError):
        attnlab.model.load("/nonexistent/model.gguf")


def test_the_budgets_are_load_options_named_in_python_words(model):
    # A 512-token prefill is about 1.3e11 operations: over the default work budget (3.4e10), and
    # the refusal names load's option, not the CLI's --max-work.
    ids = [1] * 512
    with pytest.raises(ValueError, match=r"max_work=") as e:
        model.predict(ids)
    assert "--max-work" not in str(e.value)
    big = attnlab.model.load("smollm2-135m", max_work=1e12)
    top = big.predict(ids, top=3).top
    assert len(top) == 3 and all(np.isfinite(t.logit) and 0 < t.prob < 1 for t in top)
    # The memory budget applies to the load itself (540 MB of f32 weights).
    with pytest.raises(ValueError, match=r"max_memory="):
        attnlab.model.load("smollm2-135m", max_memory=100_000_000)
    for bad in (0, -1, float("nan"), "1G", True):
        with pytest.raises(ValueError, match="max_work must be a positive number"):
            attnlab.model.load("smollm2-135m", max_work=bad)
