"""Type stubs of attnlab.rope."""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

Config = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Omega = Union[float, str]

def inv_freq(
    config: Config, *, context: Optional[int] = ..., layer_type: Optional[str] = ...
) -> np.ndarray:
    """transformers' float32 ``inv_freq`` for the config (at sequence length ``context``; of
    the rope set of ``layer_type`` for models with several): bit for bit what transformers
    computes on torch's scalar kernels (within 1 ulp on its AVX2 kernels, whose ``pow`` is not
    always correctly rounded)."""

def attention_factor(config: Config, *, layer_type: Optional[str] = ...) -> float:
    """The factor transformers multiplies cos and sin by."""

def audit(
    config: Config,
    *,
    context: Optional[int] = ...,
    dtype: str = ...,
    tol: Optional[float] = ...,
    skip_min_base: bool = ...,
) -> Dict[str, Any]:
    """``attnlab rope audit --json`` for the config."""

def period(omega: Omega, *, tol: Optional[float] = ..., max_sep: Optional[int] = ...) -> Dict[str, Any]:
    """``attnlab rope period --json``."""

def resolve(
    omegas: Union[str, Sequence[Omega], np.ndarray], context: int, *, tol: Optional[float] = ...
) -> Dict[str, Any]:
    """``attnlab rope resolve --json``."""

def presets() -> List[str]:
    """The names of the built-in model presets."""
