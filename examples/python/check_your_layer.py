# %% [markdown]
# # Check your own attention layer with attnlab
#
# A notebook in plain Python (`# %%` cells: open it in Jupyter / VS Code, or run it as a
# script — CI does). It checks a hand-written numpy attention for permutation equivariance,
# breaks it with a tiny positional bias, and reads a model's RoPE frequencies from its config.
#
#     pip install ./crates/attnlab-py     # from a checkout: needs pip and the Rust toolchain

# %%
import numpy as np

import attnlab

# %% [markdown]
# ## 1. A hand-written attention layer
#
# The course's self-attention. The weights are cast to the input's dtype so the layer computes
# in float32 for float32 inputs and in float64 for float64 inputs — attnlab evaluates it in
# both to tell round-off from structure.

# %%
rng = np.random.default_rng(0)
n, d = 6, 8
X = rng.standard_normal((n, d))
Wq, Wk, Wv = (rng.standard_normal((d, d)) for _ in range(3))


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention(H):
    q, k, v = (W.astype(H.dtype) for W in (Wq, Wk, Wv))
    Q, K, V = H @ q, H @ k, H @ v
    return softmax(Q @ K.T / np.sqrt(H.dtype.type(d))) @ V


report = attnlab.check_equivariance(attention, X)
print(report)
assert report.holds and report.permutations_checked == 720  # every permutation of 6 tokens

# %% [markdown]
# The same layer in float32: it still holds — the differences are float32 round-off, and the
# float64 run shows they fall by about eps32/eps64 ≈ 5.4e8.

# %%
report32 = attnlab.check_equivariance(attention, X.astype(np.float32))
print(report32.verdict, report32.margin, report32.diagnosis.conclusion)
assert report32.holds and report32.diagnosis.conclusion == "round-off"

# %% [markdown]
# ## 2. The same layer with a positional bias: it breaks
#
# Adding `p · 0.001` to row `p` ties the input to its slot: permuting the tokens no longer
# permutes the output. The error is far above the tolerance and does not fall from float32 to
# float64, so attnlab calls it structural.

# %%
def biased(H):
    P = (1e-3 * np.arange(len(H)))[:, None].astype(H.dtype)
    return attention(H + P)


broken = attnlab.check_equivariance(biased, X)
print(broken)
assert not broken.holds and broken.diagnosis.conclusion == "structural"
try:
    attnlab.assert_equivariant(biased, X)
except AssertionError as e:
    print("assert_equivariant raised AssertionError, as it should:", str(e).splitlines()[1])

# %% [markdown]
# The report is data too: `broken.worst` says which permutation, row and column, and
# `broken.to_dict()` is the JSON `attnlab equivariance --json` prints. In Jupyter the report
# shows as a table with a heat map of the worst difference.

# %%
print("worst:", broken.worst)
print("difference of the worst permutation:\n", broken.worst_difference.values)

# %% [markdown]
# ## 3. A model config's RoPE
#
# `attnlab.rope` reads a Hugging Face config — a path, the JSON text, a dict such as
# `AutoConfig.from_pretrained(name).to_dict()`, or a built-in preset — the way transformers
# does, and computes its frequencies (float32, as the model's `inv_freq` buffer) and its audit.

# %%
config = {  # Llama-3.1-8B's config.json, the fields RoPE reads
    "model_type": "llama",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
}
inv_freq = attnlab.rope.inv_freq(config)
print(inv_freq.dtype, inv_freq.shape, "fastest", inv_freq[0], "slowest", inv_freq[-1])
assert np.array_equal(inv_freq, attnlab.rope.inv_freq("llama-3.1-8b"))  # the preset agrees

audit = attnlab.rope.audit(config, context=8192, skip_min_base=True)
print(audit["verdict"])
print("wavelength of the fastest plane (positions):", attnlab.rope.period(float(inv_freq[0]))["wavelength"])
