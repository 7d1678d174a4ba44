"""Type stubs of attnlab.model (the implementation is model.py and the Rust core)."""

import os
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Union

import numpy as np

Text = Union[str, Sequence[int]]

class Token(NamedTuple):
    id: int
    piece: str
    text: str

class TopEntry(NamedTuple):
    id: int
    piece: Optional[str]
    logit: float
    prob: float

class Prediction:
    ids: List[int]
    pieces: Optional[List[str]]
    pos: str
    top: List[TopEntry]
    json: Dict[str, Any]
    text: str

class Layer:
    index: int
    rope: bool
    mask: str
    dim: int
    @property
    def pos(self) -> str: ...
    def __call__(self, H: Any) -> np.ndarray: ...

class Model:
    name: str
    def info(self) -> Dict[str, Any]: ...
    def tokenize(self, text: str) -> List[Token]: ...
    def piece(self, id: int) -> str: ...
    def predict(self, text: Text, top: int = ..., pos: str = ...) -> Prediction: ...
    def logits(self, text: Text, pos: str = ...) -> np.ndarray: ...
    def hidden(self, text: Text, layer: int = ..., pos: str = ...) -> np.ndarray: ...
    def layer(self, index: int, *, pos: str = ..., mask: str = ...) -> Layer: ...

def load(model: Union[str, "os.PathLike[str]"] = ...) -> Model: ...
