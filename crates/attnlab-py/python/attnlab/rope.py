"""attnlab.rope: a model's rotary position embedding, read from its Hugging Face config.

    >>> import attnlab
    >>> inv_freq = attnlab.rope.inv_freq("llama-2-7b")       # a preset; or a path, JSON, dict
    >>> inv_freq.dtype, inv_freq.shape
    (dtype('float32'), (64,))
    >>> attnlab.rope.period("pi/3")["first_repeat"]
    6

``config`` is any of: a path to a ``config.json``, the JSON text itself, a dict (what
``transformers.AutoConfig.from_pretrained(name).to_dict()`` gives), the transformers config
object itself (read through its ``to_dict()``) or the name of a built-in preset (``attnlab rope audit --help`` lists them). The core reads every ``rope_scaling`` /
``rope_parameters`` type (default, linear, dynamic, yarn, longrope, llama3), partial rotary
factors and ``head_dim`` as transformers does; the dicts returned are the JSON the CLI's
``attnlab rope … --json`` prints for the same options.
"""

from __future__ import annotations

import json as _json
import os
from collections.abc import Mapping as _Mapping
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _attnlab

__all__ = ["inv_freq", "attention_factor", "audit", "period", "resolve", "presets"]

Config = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Omega = Union[float, str]


def _source(config: Config) -> Dict[str, Any]:
    """The rope commands' source fields for ``config``: ``{"config": …}`` or ``{"preset": …}``."""
    to_dict = getattr(config, "to_dict", None)
    if not isinstance(config, (str, os.PathLike, _Mapping)) and callable(to_dict):
        # A transformers config object (PretrainedConfig): read it as its to_dict() would be.
        config = to_dict()
        if not isinstance(config, _Mapping):
            raise TypeError(f"config.to_dict() returned {type(config).__name__}, not a dict")
    if isinstance(config, _Mapping):
        # Round-trip through JSON: values such as a torch dtype become their string form.
        return {"config": _json.loads(_json.dumps(dict(config), default=str))}
    if isinstance(config, os.PathLike):
        return {"config": os.fspath(config)}
    if not isinstance(config, str):
        raise TypeError(
            "config must be a path, a JSON string, a dict (AutoConfig.to_dict()), a transformers "
            f"config object or a preset name; got {type(config).__name__}"
        )
    text = config.strip()
    if text.startswith("{"):
        try:
            return {"config": _json.loads(text)}
        except ValueError as e:
            raise ValueError(f"config looks like JSON but does not parse: {e}") from e
    if os.path.exists(text):
        return {"config": text}
    if os.sep in text or "/" in text or text.endswith(".json"):
        raise FileNotFoundError(f"config file {text!r} does not exist")
    return {"preset": text}


def presets() -> List[str]:
    """The names of the built-in model presets (typed from public config.json files)."""
    return list(_attnlab.rope_presets())


def _context(context: Optional[int]) -> Optional[int]:
    if context is None:
        return None
    if isinstance(context, bool) or not isinstance(context, (int, np.integer)):
        raise TypeError(f"context must be an int (a number of positions); got {context!r}")
    if context < 1:
        raise ValueError(f"context must be a number of positions ≥ 1; got {context}")
    return int(context)


def inv_freq(config: Config, *, context: Optional[int] = None, layer_type: Optional[str] = None) -> np.ndarray:
    """The rotary frequencies ``inv_freq`` (float32, one per rotary plane) exactly as
    transformers' ``<Model>RotaryEmbedding`` builds them: at initialisation, or at sequence
    length ``context`` for the types that depend on it (dynamic NTK, LongRoPE). For a model with
    several rope sets (Gemma-3's sliding and full-attention layers), ``layer_type`` chooses one
    (default: the full-attention set)."""
    f32, _f64, _factor = _attnlab.rope_frequencies(
        _json.dumps(_source(config)), _context(context), layer_type
    )
    return f32


def attention_factor(config: Config, *, layer_type: Optional[str] = None) -> float:
    """The factor transformers multiplies cos and sin by (YaRN's / LongRoPE's temperature;
    1.0 for the other rope types), of the set of ``layer_type`` for models with several."""
    _f32, _f64, factor = _attnlab.rope_frequencies(_json.dumps(_source(config)), None, layer_type)
    return factor


def _run(command: str, options: Dict[str, Any]) -> Dict[str, Any]:
    body = {k: v for k, v in options.items() if v is not None}
    text_json, _text = _attnlab.run_command(command, _json.dumps(body))
    return _json.loads(text_json)


def audit(
    config: Config,
    *,
    context: Optional[int] = None,
    dtype: str = "bf16",
    tol: Optional[float] = None,
    skip_min_base: bool = False,
) -> Dict[str, Any]:
    """``attnlab rope audit``: wavelengths, full turns within the context, what the set
    resolves, the long-distance decay criterion and the smallest base that meets it, and what
    bf16/f16/f32 do to positions, cos/sin caches and translation invariance. Returns the CLI's
    audit JSON. ``context`` defaults to the config's ``max_position_embeddings``."""
    return _run(
        "rope audit",
        {
            **_source(config),
            "context": _context(context),
            "dtype": dtype,
            "tol": tol,
            "skip_min_base": bool(skip_min_base) or None,
        },
    )


def _omega_text(omega: Omega) -> str:
    if isinstance(omega, str):
        return omega
    if isinstance(omega, bool) or not isinstance(omega, (int, float, np.floating, np.integer)):
        raise TypeError(
            f"a frequency must be a number or an expression such as 'pi/3'; got {omega!r}"
        )
    return repr(float(omega))  # shortest text that reads back as the same float64


def period(
    omega: Omega, *, tol: Optional[float] = None, max_sep: Optional[int] = None
) -> Dict[str, Any]:
    """``attnlab rope period``: the first separation at which ω repeats (exact for rational
    multiples of π written as expressions, e.g. ``"2*pi/7"``), its near-repeats and the first
    separation within ``tol`` radians of a full turn."""
    return _run("rope period", {"omega": _omega_text(omega), "tol": tol, "max_sep": max_sep})


def resolve(
    omegas: Union[str, Sequence[Omega], np.ndarray],
    context: int,
    *,
    tol: Optional[float] = None,
) -> Dict[str, Any]:
    """``attnlab rope resolve``: whether the frequency set distinguishes every separation
    1..context−1 from 0 (the smallest margin and where; the first alias if not).
    ``omegas`` is a list of numbers / expressions, a numpy array or ``"pi/2,pi/3"``."""
    if isinstance(omegas, str):
        items = omegas
    else:
        items = ",".join(_omega_text(w) for w in np.asarray(omegas, dtype=object).ravel())
    return _run("rope resolve", {"omega": items, "context": _context(context), "tol": tol})
