"""The report of :func:`attnlab.check_equivariance`: typed fields, the CLI's JSON, text and HTML."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np


@dataclass(frozen=True)
class Worst:
    """Where the largest difference occurred."""

    perm: List[int]
    """The permutation, as numpy's ``X[perm]`` index list."""
    row: int
    """Output row (position) of the largest difference."""
    col: int
    """Output column of the largest difference."""
    lhs: float
    """The left-hand side there, e.g. ``f(X[perm])[row, col]``."""
    rhs: float
    """The right-hand side there, e.g. ``f(X)[perm][row, col]``."""


@dataclass(frozen=True)
class PermutationSet:
    """Which permutations the check ran over."""

    mode: str
    """``"given"``, ``"exhaustive"`` or ``"random"``."""
    count: int
    """How many were given, exist (exhaustive) or were drawn (random)."""
    seed: Optional[int]
    """Seed of the random permutations (random only)."""


@dataclass(frozen=True)
class Control:
    """A control run beside the check."""

    name: str
    """What the control is."""
    expectation: str
    """What it must show."""
    max_abs_error: float
    """Its largest absolute difference."""
    margin: float
    """Its ``max_abs_error / tolerance``."""
    ok: bool
    """Whether it showed what it must."""


@dataclass(frozen=True)
class Diagnosis:
    """Round-off or structure: the same check in float32 and in float64."""

    f32_error: float
    """The check's largest difference in float32."""
    f64_error: float
    """The check's largest difference in float64."""
    ratio: float
    """``f32_error / f64_error`` (``inf`` when the float64 error is exactly 0)."""
    eps_ratio: float
    """eps(float32) / eps(float64), the ratio round-off shows (about 5.4e8)."""
    conclusion: str
    """``"exact"``, ``"round-off"``, ``"structural"``, ``"lower-precision"`` (the layer
    computes internally in a lower precision: ``internal_dtype``) or ``"nondeterministic"``
    (the identity control failed: no verdict on symmetry)."""
    explanation: str
    """One sentence saying why."""
    internal_dtype: Optional[str] = None
    """The precision the layer computes in internally (``"f32"``, ``"f16"``, ``"bf16"``), for
    ``"lower-precision"``."""


@dataclass(frozen=True)
class DifferenceMap:
    """``lhs − rhs`` of the worst permutation (at most 32 × 32 entries around the worst)."""

    perm: List[int]
    """The permutation."""
    first_row: int
    """Output position of the first row."""
    first_col: int
    """Output column of the first column."""
    values: np.ndarray
    """The differences (float64)."""


@dataclass(frozen=True, repr=False)
class Report:
    """The evidence of a permutation check: ``repr(report)`` is the text rendering,
    ``report.to_dict()`` the JSON the CLI prints for the same check, and in Jupyter the report
    shows as a table with the heat map of the worst difference.
    """

    holds: bool
    """Whether the property holds within the tolerance (the verdict as a bool)."""
    verdict: str
    """``"holds"``, ``"breaks"`` or ``"undecided"`` (a nondeterministic layer)."""
    property: str
    """``"equivariance"``, ``"invariance"`` or ``"prefix_invariance"``."""
    equation: str
    """The equation checked, e.g. ``f(ΠH) = Π f(H)``."""
    max_abs_error: float
    """max |lhs − rhs| over entries and permutations (in float64)."""
    max_rel_error: float
    """Normwise relative error of the worst permutation."""
    max_ulps: int
    """Largest distance in units in the last place of X's dtype."""
    tolerance: float
    """The absolute tolerance ``k·eps·(n+d)·max|f(X)|``."""
    tolerance_derivation: str
    """The tolerance's formula with its numbers."""
    margin: float
    """``max_abs_error / tolerance``: below 1 holds."""
    permutations_checked: int
    """How many permutations were compared."""
    permutations: PermutationSet
    """Which permutations."""
    worst: Worst
    """Where the largest difference occurred."""
    mask: str
    """``"causal"`` for the prefix check, else ``"none"``."""
    readout: str
    """``"none"``, ``"mean"`` or ``"row:I"``."""
    dtype: str
    """The dtype of X, which the check ran in: ``"f32"`` or ``"f64"``."""
    n: int
    """Rows of X."""
    dim: int
    """Columns of X."""
    output_dim: int
    """Columns of f(X)."""
    prefix: Optional[int]
    """The prefix length t of the causal check."""
    controls: List[Control]
    """The positive control (identity permutation) and the negative control (f on X + p·1.0)."""
    diagnosis: Optional[Diagnosis]
    """Round-off or structure (None when f failed on the other precision)."""
    diagnosis_unavailable: Optional[str]
    """Why there is no diagnosis."""
    note: Optional[str]
    """A caveat about what the check can show."""
    worst_difference: DifferenceMap
    """The worst permutation's difference, for the heat map."""
    future_independence: Optional[Dict[str, Any]]
    """``mask="causal"``: the check that outputs before a cut do not move when the tokens
    from the cut on change (its JSON: verdict, errors, tolerance, margin)."""
    looks_causal: bool
    """An unmasked check broke, and no output depends on later positions: the layer looks
    causal (check it with ``mask="causal"``)."""
    _json: str = field(compare=False)
    _text: str = field(compare=False)
    _html: str = field(compare=False)

    @classmethod
    def _from_rendered(cls, rendered: "tuple[str, str, str]") -> "Report":
        text_json, text, html = rendered
        d = json.loads(text_json)
        diff = d["worst_difference"]
        return cls(
            holds=d["holds"],
            verdict=d["verdict"],
            property=d["property"],
            equation=d["equation"],
            max_abs_error=d["max_abs_error"],
            max_rel_error=d["max_rel_error"],
            max_ulps=d["max_ulps"],
            tolerance=d["tolerance"],
            tolerance_derivation=d["tolerance_derivation"],
            margin=d["margin"],
            permutations_checked=d["permutations_checked"],
            permutations=PermutationSet(**d["permutations"]),
            worst=Worst(**d["worst"]),
            mask=d["mask"],
            readout=d["readout"],
            dtype=d["dtype"],
            n=d["n"],
            dim=d["dim"],
            output_dim=d["output_dim"],
            prefix=d["prefix"],
            controls=[Control(**c) for c in d["controls"]],
            diagnosis=Diagnosis(**d["diagnosis"]) if d["diagnosis"] is not None else None,
            diagnosis_unavailable=d["diagnosis_unavailable"],
            note=d["note"],
            future_independence=d.get("future_independence"),
            looks_causal=bool(d.get("looks_causal", False)),
            worst_difference=DifferenceMap(
                perm=diff["perm"],
                first_row=diff["first_row"],
                first_col=diff["first_col"],
                values=np.asarray(diff["values"], dtype=np.float64).reshape(
                    len(diff["values"]), -1
                ),
            ),
            _json=text_json,
            _text=text,
            _html=html,
        )

    def to_dict(self) -> Dict[str, Any]:
        """The report as the CLI's JSON (``attnlab equivariance --json`` for the same check)."""
        return copy.deepcopy(json.loads(self._json))

    def to_json(self) -> str:
        """The report as one line of JSON."""
        return self._json

    def __repr__(self) -> str:
        return self._text

    def __str__(self) -> str:
        return self._text

    def _repr_html_(self) -> str:
        return self._html
