"""The Rust extension behind :mod:`attnlab` (private: use the functions of ``attnlab``)."""

from typing import Any, Callable, List, Optional, Tuple

import numpy as np

__version__: str

class LayerError(RuntimeError):
    """The layer under test raised; the original exception is chained as ``__cause__``."""

def check_layer(
    f: Callable[[np.ndarray], Any],
    x: Any,
    perms: Optional[List[List[int]]],
    samples: Optional[int],
    exhaustive: bool,
    seed: int,
    readout: Optional[str],
    mask: Optional[str],
    prefix: Optional[int],
    positions: Optional[List[int]] = ...,
) -> Tuple[str, str, str]: ...
def run_command(command: str, options: str) -> Tuple[str, str]: ...
def attention(
    x: Any,
    wq: Any,
    wk: Any,
    wv: Any,
    heads: int,
    wo: Optional[Any],
    mask: Optional[str],
    weights: bool = ...,
    max_memory: Optional[int] = ...,
) -> Tuple[np.ndarray, Optional[np.ndarray]]: ...
def rope_frequencies(
    source: str, context: Optional[int], layer_type: Optional[str] = ...
) -> Tuple[np.ndarray, np.ndarray, float]: ...
def rope_presets() -> List[str]: ...

class Model:
    def config_json(self) -> str: ...
    def tokenize(self, text: str) -> List[Tuple[int, str, str]]: ...
    def piece(self, id: int) -> str: ...
    def predict(
        self, text: Optional[str], ids: Optional[List[int]], top: int, pos: str, model: str
    ) -> Tuple[str, str]: ...
    def logits(self, text: Optional[str], ids: Optional[List[int]], pos: str) -> np.ndarray: ...
    def hidden(
        self, text: Optional[str], ids: Optional[List[int]], layer: int, pos: str
    ) -> np.ndarray: ...
    def layer(self, layer: int, pos: str, mask: str) -> LayerFunction: ...

class LayerFunction:
    def __call__(self, h: Any) -> np.ndarray: ...
    def describe(self) -> Tuple[int, bool, str, int]: ...

def load_model(model: str, max_memory: Optional[int] = None, max_work: Optional[int] = None) -> Model: ...
