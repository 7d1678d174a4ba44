"""attnlab.model: a real trained model in memory — its tokenizer, its next-token prediction, and
one layer's attention as a function the equivariance checker accepts.

    >>> import attnlab
    >>> m = attnlab.model.load("smollm2-135m")     # or a path to a .gguf, or a HF checkpoint dir
    >>> m.info()["layers"], m.info()["heads"], m.info()["kv_heads"]
    (30, 9, 3)
    >>> [t.id for t in m.tokenize("the cat sat")]
    [1195, 2644, 2643]
    >>> m.predict("The capital of France is", top=3).top[0].piece
    'ĠParis'
    >>> H = m.hidden("the cat sat on the mat", layer=0)        # the residual stream entering layer 0
    >>> attnlab.check_equivariance(m.layer(0), H).holds        # bare attention: no mask, no rope
    True
    >>> attnlab.check_equivariance(m.layer(0, pos="rope"), H).holds
    False

The weights are read and dequantized once (to float32, as the ``gguf`` package does) by
:func:`load`; every call runs attnlab's Rust forward (the one ``attnlab model predict`` runs)
without the GIL. ``smollm2-135m`` is the SmolLM2-135M-Instruct GGUF that ``scripts/fetch-smollm2``
puts in the model cache (``$ATTNLAB_MODEL_DIR``, else ``~/.cache/attnlab/models``).
"""

from __future__ import annotations

import json as _json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _attnlab

__all__ = ["load", "Model", "Layer", "Token", "TopEntry", "Prediction"]

Text = Union[str, Sequence[int]]


class Token(NamedTuple):
    """One token: its id (the row of the embedding table it selects), its vocabulary entry
    (``Ġcat``, the byte alphabet's spelling) and the text it stands for (``" cat"``)."""

    id: int
    piece: str
    text: str


class TopEntry(NamedTuple):
    """One entry of a next-token distribution."""

    id: int
    piece: Optional[str]
    logit: float
    prob: float


@dataclass(frozen=True)
class Prediction:
    """The next-token distribution at the last position: ``model predict``'s report.

    ``top`` is most likely first; ``json`` is exactly ``attnlab model predict --json``'s object
    for the same input; ``str(prediction)`` is the CLI's text.
    """

    ids: List[int]
    pieces: Optional[List[str]]
    pos: str
    top: List[TopEntry]
    json: Dict[str, Any] = field(repr=False)
    text: str = field(repr=False)

    def __str__(self) -> str:
        return self.text


def _text_or_ids(text: Text) -> Tuple[Optional[str], Optional[List[int]]]:
    if isinstance(text, str):
        return text, None
    if isinstance(text, (bytes, bytearray)):
        raise TypeError("text must be a str (decode bytes first) or a sequence of token ids")
    try:
        arr = np.asarray(text)
    except Exception as e:  # pragma: no cover - numpy raises many kinds
        raise TypeError(f"text must be a str or a sequence of token ids; got {type(text).__name__}") from e
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(
            "text must be a str or a 1-D sequence of integer token ids; "
            f"got {type(text).__name__} of shape {arr.shape} and dtype {arr.dtype}"
        )
    if arr.size and int(arr.min()) < 0:
        raise ValueError(f"token ids must be ≥ 0; got {int(arr.min())}")
    return None, [int(i) for i in arr]


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int; got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be ≥ 0; got {value}")
    return int(value)


class Layer:
    """Layer ``L``'s attention sublayer of a real model, as a function of hidden states:

    ``f(H) = Attn_L(RMSNorm(H))`` — the layer's input RMSNorm, its q/k/v projections, the
    rotation (``pos="rope"``: queries and keys of row i rotated at position i; ``pos="none"``:
    cos = 1, sin = 0), grouped-query attention over all heads under ``mask`` (``"none"`` or
    ``"causal"``) and ``W_o``; no residual addition and no MLP.

    Call it with ``H`` of shape ``(n, dim)`` (``dim`` = the model's embedding width, 576 for
    SmolLM2), float32 or float64 (the weights are held in both: float32 as dequantized, and the
    same values in float64 for the checker's round-off-or-structure diagnosis); it returns an
    array of H's shape and dtype. That is the contract :func:`attnlab.check_equivariance` asks
    of ``f``. RMSNorm acts on each row alone, so with ``pos="none", mask="none"`` the function
    is permutation-equivariant on trained weights; with ``pos="rope"`` it is not (the position
    of a row, not of its token, sets its rotation).
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.index, self.rope, self.mask, self.dim = inner.describe()

    @property
    def pos(self) -> str:
        """``"rope"`` or ``"none"``."""
        return "rope" if self.rope else "none"

    def __call__(self, H: Any) -> np.ndarray:
        return self._inner(H)

    def __repr__(self) -> str:
        return f"Layer({self.index}, pos={self.pos!r}, mask={self.mask!r}, dim={self.dim})"


class Model:
    """A checkpoint in memory (returned by :func:`load`)."""

    def __init__(self, inner: Any, name: str) -> None:
        self._inner = inner
        self.name = name
        self._config = _json.loads(inner.config_json())

    def __repr__(self) -> str:
        c = self._config
        return (
            f"Model({self.name!r}: {c['arch']}, {c['layers']} layers, {c['heads']} heads / "
            f"{c['kv_heads']} KV heads, dim {c['dim']}, vocab {c['vocab']})"
        )

    def info(self) -> Dict[str, Any]:
        """The model's numbers: ``architecture``, ``layers``, ``heads``, ``kv_heads``,
        ``head_dim``, ``embedding``, ``feed_forward``, ``vocab``, ``context_length``,
        ``rms_norm_eps``, ``rope_base`` (θ of the frequencies θ^(−2i/d), from the inverse
        frequencies the forward uses), ``rope_dims`` (rotated dims per head), ``tied_embeddings``
        and ``parameters``; for a GGUF file also ``file``: the whole report of
        ``attnlab model info --json`` (tensor types and sizes, rope metadata, tokenizer kind)."""
        c = self._config
        inv = c["inv_freq"]
        out: Dict[str, Any] = {
            "architecture": c["arch"],
            "layers": c["layers"],
            "heads": c["heads"],
            "kv_heads": c["kv_heads"],
            "head_dim": c["head_dim"],
            "embedding": c["dim"],
            "feed_forward": c["ffn_dim"],
            "vocab": c["vocab"],
            "context_length": c["context_length"],
            "rms_norm_eps": c["rms_eps"],
            # inv_freq[1] = θ^(−2/r) with r = 2·len(inv_freq) rotated dims: θ = inv_freq[1]^(−r/2).
            "rope_base": float(inv[1] ** (-len(inv))) if len(inv) > 1 else None,
            "rope_dims": 2 * len(inv),
            "tied_embeddings": c["tied"],
        }
        path = self.name
        if not os.path.isdir(os.path.expanduser(path)):
            file = _json.loads(_attnlab.run_command("model info", _json.dumps({"model": path}))[0])
            out["parameters"] = file["parameters"]
            out["rope_base"] = file["rope"]["freq_base"]
            out["file"] = file
        return out

    def tokenize(self, text: str) -> List[Token]:
        """The model's tokens of ``text`` (no beginning-of-sequence token added: the ids
        transformers gives with ``add_special_tokens=False``)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str; got {type(text).__name__}")
        return [Token(*t) for t in self._inner.tokenize(text)]

    def piece(self, id: int) -> str:
        """The vocabulary entry of token ``id``."""
        return self._inner.piece(_int("id", id))

    def predict(self, text: Text, top: int = 10, pos: str = "rope") -> Prediction:
        """The next-token distribution at the last position of ``text`` (a str, or token ids):
        the ``top`` most likely tokens with their logits and softmax probabilities.
        ``pos="none"`` runs the same model with the rotation removed (cos = 1, sin = 0 in every
        layer). The same numbers as ``attnlab model predict``."""
        t, ids = _text_or_ids(text)
        js, rendered = self._inner.predict(t, ids, _int("top", top), pos, self.name)
        d = _json.loads(js)
        return Prediction(
            ids=d["ids"],
            pieces=d["pieces"],
            pos=d["pos"],
            top=[TopEntry(e["id"], e["piece"], e["logit"], e["prob"]) for e in d["top"]],
            json=d,
            text=rendered,
        )

    def logits(self, text: Text, pos: str = "rope") -> np.ndarray:
        """The logits at the last position of ``text``, shape ``(vocab,)``, float32."""
        t, ids = _text_or_ids(text)
        return self._inner.logits(t, ids, pos)

    def hidden(self, text: Text, layer: int = 0, pos: str = "rope") -> np.ndarray:
        """The residual stream entering layer ``layer`` for ``text``: shape ``(n, dim)``,
        float32 (``layer=0``: the embedding rows the ids address; ``layer=L``: the output of
        layer L − 1; ``layer`` = the layer count: the last layer's output, before the final
        norm). The input :meth:`layer` expects, on real text."""
        t, ids = _text_or_ids(text)
        return self._inner.hidden(t, ids, _int("layer", layer), pos)

    def layer(self, index: int, *, pos: str = "none", mask: str = "none") -> Layer:
        """Layer ``index``'s attention sublayer as a :class:`Layer` callable ``f(H)``, for
        :func:`attnlab.check_equivariance` (defaults: no rotation, no mask — the course's bare
        attention)."""
        return Layer(self._inner.layer(_int("index", index), pos, mask))


def load(
    model: Union[str, "os.PathLike[str]"] = "smollm2-135m",
    *,
    max_memory: Optional[int] = None,
    max_work: Optional[float] = None,
) -> Model:
    """Loads a checkpoint: a GGUF file (llama, mistral, qwen2, qwen3; every quantization
    attnlab dequantizes), a Hugging Face checkpoint directory (``config.json``,
    ``*.safetensors``, ``tokenizer.json``), or ``"smollm2-135m"`` (the cached SmolLM2; when it is
    missing the error says how to fetch it). A GGUF whose rope metadata is scaled (linear, YaRN,
    a ``rope_freqs`` tensor) runs with the rotation llama.cpp computes from it.

    Args:
        max_memory: the memory budget in bytes of the load and of every request on the model
            (default 1 GiB, the CLI's ``--max-memory``).
        max_work: the operation budget of each forward (default 3.4e10, the CLI's
            ``--max-work``; a 512-token prefill of SmolLM2 is about 1.3e11).

    Raises:
        FileNotFoundError: no such file, or the named model is not in the cache.
        ValueError: an unsupported architecture (named, with the supported list), a damaged
            file, weights or a request over a budget (the message says which option to raise).
    """
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, str):
        raise TypeError(f"model must be a path or a model name; got {type(model).__name__}")

    def budget(name: str, v: Any) -> Optional[int]:
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or v != v or v >= 2**64:
            raise ValueError(f"{name} must be a positive number below 2**64; got {v!r}")
        return int(v)

    return Model(_attnlab.load_model(model, budget("max_memory", max_memory), budget("max_work", max_work)), model)
