"""Type stubs of attnlab's public API (the implementation is in __init__.py and the Rust core)."""

from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np


from . import model as model
from . import rope as rope
from ._attnlab import LayerError as LayerError
from ._report import Control as Control
from ._report import Diagnosis as Diagnosis
from ._report import DifferenceMap as DifferenceMap
from ._report import PermutationSet as PermutationSet
from ._report import Report as Report
from ._report import Worst as Worst

__version__: str

ArrayLike = Any
Layer = Callable[[np.ndarray], Any]

def check_equivariance(
    f: Layer,
    X: ArrayLike,
    *,
    perms: Union[Sequence[int], Sequence[Sequence[int]], None] = ...,
    samples: Optional[int] = ...,
    exhaustive: bool = ...,
    seed: int = ...,
    readout: Optional[str] = ...,
    mask: Optional[str] = ...,
    prefix: Optional[int] = ...,
    positions: Optional[ArrayLike] = ...,
) -> Report:
    """Check ``f(X[p]) == f(X)[p]`` with attnlab's tolerance, controls and diagnosis.

    ``f`` may be a numpy function, a torch module or a callable on tensors; with
    ``positions`` it is called as ``f(X, positions)`` and the positions move with the tokens.
    Conclusions: round-off, structural, exact, lower-precision (holds to float32 precision;
    the layer computes internally in float32) and nondeterministic (no verdict).
    """

def assert_equivariant(f: Layer, X: ArrayLike, **kwargs: Any) -> Report:
    """:func:`check_equivariance`, raising ``AssertionError`` with the report's text if it breaks."""

def attention(
    X: ArrayLike,
    Wq: ArrayLike,
    Wk: ArrayLike,
    Wv: ArrayLike,
    *,
    heads: int = ...,
    Wo: Optional[ArrayLike] = ...,
    mask: Optional[str] = ...,
    weights: bool = ...,
    max_memory: Optional[int] = ...,
) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """Scaled dot-product self-attention: ``(out, weights)`` (weights ``None`` with
    ``weights=False``: the fused kernel)."""

def run(command: str, **options: Any) -> Dict[str, Any]:
    """Run an attnlab command with the CLI's options; its JSON report as a dict."""
