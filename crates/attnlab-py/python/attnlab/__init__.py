"""attnlab: check your own attention layer for permutation equivariance, and read a model's RoPE.

    >>> import numpy as np, attnlab
    >>> rng = np.random.default_rng(0)
    >>> X, Wq, Wk, Wv = (rng.standard_normal((4, 4)) for _ in range(4))
    >>> def layer(H):
    ...     S = (H @ Wq) @ (H @ Wk).T / 2.0
    ...     A = np.exp(S - S.max(axis=1, keepdims=True))
    ...     return (A / A.sum(axis=1, keepdims=True)) @ (H @ Wv)
    >>> attnlab.check_equivariance(layer, X).holds
    True

The checks are attnlab's (the Rust core the ``attnlab`` CLI runs): every permutation of up to
six positions (else 100 random ones, 20 for more than 256), a tolerance derived from the dtype and the sizes, the
worst case with its margin, a positive and a negative control, and — by evaluating ``f`` in
the other precision too — whether a difference is floating-point round-off or structure.
"""

from __future__ import annotations

import json as _json
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import _attnlab
from ._attnlab import LayerError, __version__
from ._report import Control, Diagnosis, DifferenceMap, PermutationSet, Report, Worst
from . import model, rope

__all__ = [
    "check_equivariance",
    "assert_equivariant",
    "attention",
    "run",
    "Report",
    "Worst",
    "Control",
    "Diagnosis",
    "PermutationSet",
    "DifferenceMap",
    "LayerError",
    "rope",
    "model",
    "__version__",
]

ArrayLike = Any
Layer = Callable[[np.ndarray], Any]


def _perm_list(perms: Any) -> Optional[list]:
    """``perms`` as a list of permutations (lists of ints): one permutation or several."""
    if perms is None:
        return None
    if isinstance(perms, (str, bytes)):
        raise TypeError(
            "perms must be a permutation (a sequence of ints, e.g. [2, 0, 3, 1]) or a sequence "
            f"of them; got the string {perms!r}"
        )
    try:
        arr = np.asarray(perms)
    except ValueError as e:
        raise ValueError(
            "perms must be one permutation (e.g. [2, 0, 3, 1]) or a sequence of permutations of "
            "equal length"
        ) from e
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(
            "perms must be one permutation (e.g. [2, 0, 3, 1]) or a sequence of permutations of "
            f"equal length; got an array of shape {arr.shape}"
        )
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(
            f"perms must hold integer indices (e.g. [2, 0, 3, 1]); got dtype {arr.dtype}"
        )
    if arr.size and int(arr.min()) < 0:
        raise ValueError(f"perms must hold indices 0..n-1; got {int(arr.min())}")
    return [[int(i) for i in row] for row in arr]


def _count(name: str, value: Any) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int; got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative int; got {value}")
    return int(value)


def _option(name: str, value: Any) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{name} must be a string or None; got {type(value).__name__} {value!r}")


def _torch_layer(f: Any, X: Any, positioned: bool) -> Tuple[Callable[..., Any], Any]:
    """A torch module, or a callable on tensors, as a layer on numpy arrays.

    Returns ``(g, X)``: ``g`` converts each numpy input to a tensor of its dtype, calls ``f``
    without gradients, and returns the result (the first element of a tuple, as torch's
    attention modules return ``(output, weights)``) as a numpy array of the input's dtype.
    A module is called through a copy in each precision (``copy.deepcopy(m).float()`` /
    ``.double()``, in eval mode only if it already was), so the diagnosis can evaluate it
    in the other precision; a plain callable gets tensors of each precision as they come.
    ``X`` is returned as numpy (a tensor is detached and moved to the CPU).
    """
    import copy

    import torch

    if isinstance(X, torch.Tensor):
        X = X.detach().cpu().numpy()
    copies: Dict[Any, Any] = {}
    is_module = isinstance(f, torch.nn.Module)

    def module_for(dtype: Any) -> Any:
        if not is_module:
            return f
        if dtype not in copies:
            m = copy.deepcopy(f)
            copies[dtype] = m.to(dtype)
        return copies[dtype]

    # The dtype the check runs in (the caller's callable holds weights of this precision).
    check_dtype = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64}.get(
        getattr(np.asarray(X), "dtype", None)
    )

    def g(H: np.ndarray, *pos: np.ndarray) -> np.ndarray:
        t = torch.from_numpy(np.ascontiguousarray(H))
        m = module_for(t.dtype)
        args = [t] + [torch.from_numpy(np.asarray(p)) for p in pos]
        with torch.no_grad():
            if is_module or t.dtype == check_dtype:
                out = m(*args)
            else:
                # A callable on tensors holds its weights in the check's precision: run it in
                # the other one op by op (every tensor of the check's dtype it touches is
                # converted, its own explicit casts kept).
                with _precision_mode(torch, check_dtype, t.dtype):
                    out = m(*args)
        if isinstance(out, (tuple, list)):
            out = out[0]
        if isinstance(out, torch.Tensor):
            out = out.detach().cpu()
            if out.dtype in (torch.float16, torch.bfloat16):
                out = out.to(t.dtype)
            out = out.numpy()
        return out

    return g, X


def _precision_mode(torch: Any, src: Any, dst: Any) -> Any:
    """A ``TorchFunctionMode`` converting every floating tensor of dtype ``src`` that a torch
    function receives to ``dst`` (the other precision's run of a callable whose weights were
    built in ``src``); explicit casts (``softmax(..., dtype=torch.float32)``, ``.to(...)``) are
    the layer's own and stay."""
    from torch.overrides import TorchFunctionMode

    def conv(a: Any) -> Any:
        if isinstance(a, torch.Tensor) and a.dtype == src:
            return a.to(dst)
        if isinstance(a, (tuple, list)):
            return type(a)(conv(x) for x in a)
        if isinstance(a, dict):
            return {k: conv(v) for k, v in a.items()}
        return a

    class Precision(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            return func(*conv(tuple(args)), **conv(dict(kwargs or {})))

    return Precision()


def _is_torch(f: Any, X: Any) -> bool:
    """Whether f is a torch module or X a torch tensor (torch imported by the caller)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return False
    return isinstance(f, torch.nn.Module) or isinstance(X, torch.Tensor)


def check_equivariance(
    f: Layer,
    X: ArrayLike,
    *,
    perms: Union[Sequence[int], Sequence[Sequence[int]], None] = None,
    samples: Optional[int] = None,
    exhaustive: bool = False,
    seed: int = 0,
    readout: Optional[str] = None,
    mask: Optional[str] = None,
    prefix: Optional[int] = None,
    positions: Optional[ArrayLike] = None,
) -> Report:
    """Check that ``f(X[p]) == f(X)[p]`` for permutations ``p`` of the rows of ``X``.

    ``f`` is any callable mapping an (n, d) array to an (n, d′) array of the same dtype: a
    numpy function, a ``torch.nn.Module``, or a callable on tensors (when ``X`` is a
    ``torch.Tensor``). Torch inputs and outputs are converted for you (a tuple output's first
    element is the output), and a module is copied to float32 and float64 so the diagnosis can
    run it in the other precision (a callable on tensors runs there op by op: every tensor of
    the check's dtype it touches, its captured weights included, is converted). It is called
    with fresh arrays and the GIL held.

    Args:
        f: the layer under test.
        X: the input, an (n, d) float32 or float64 array (or tensor) with finite entries. The
            check runs in X's dtype; the diagnosis also evaluates ``f`` on the other precision's
            copy of X (float64 for float32, float32 for float64).
        perms: one permutation (``[2, 0, 3, 1]``, numpy's ``X[perm]`` order) or a sequence of
            them. Default: every permutation for n ≤ 6, else 100 random ones (20 for
            n > 256, where one forward pass is no longer instant).
        samples: check K random non-identity permutations instead.
        exhaustive: check all n! permutations (n ≤ 8).
        seed: seed of the random permutations (the CLI's ``--perm-seed``).
        readout: ``"mean"`` or ``"row:I"`` reads the output out first and checks invariance
            ``R(f(X[p])) == R(f(X))`` instead.
        mask: ``"causal"`` checks what a causal layer guarantees instead: permuting the first
            t rows leaves the outputs at positions ≥ t unchanged, *and* no future leakage —
            the outputs before a cut do not move when the tokens from the cut on change (an
            unmasked or anti-causal layer fails it).
        prefix: t for ``mask="causal"`` (default n − 1).
        positions: the position ids of X's rows (n ints). ``f`` is then called as
            ``f(X, positions)`` and every permutation moves the positions with the tokens:
            ``f(X[p], positions[p]) == f(X, positions)[p]`` — what a rotary (RoPE) layer
            satisfies, since its scores depend only on (token, position) pairs.

    Returns:
        A :class:`Report`: ``.holds``, the errors in absolute terms and in ULPs, the derived
        tolerance and margin, the worst permutation and entry, the controls and the diagnosis.
        Its conclusions beyond round-off and structure: ``"lower-precision"`` (the error sits
        at float32 round-off in a float64 run — the layer computes internally in float32, as
        transformers' eager softmax does — so it holds to float32 precision and the tolerance
        is sized for float32), and ``"nondeterministic"`` (the identity control failed,
        f(X) ≠ f(X): verdict ``"undecided"``; use ``model.eval()`` and fixed seeds). An
        unmasked check that breaks on a layer whose outputs never depend on later positions
        has ``looks_causal`` set and a note suggesting ``mask="causal"``.

    Raises:
        TypeError: ``f`` is not callable, X or f's output has the wrong dtype.
        ValueError: bad shapes, NaN/inf in X or in f's output, bad options.
        LayerError: ``f`` raised; the original exception is chained as ``__cause__``.
    """
    if _is_torch(f, X):
        f, X = _torch_layer(f, X, positions is not None)
    pos = None
    if positions is not None:
        try:
            import sys

            torch = sys.modules.get("torch")
            if torch is not None and isinstance(positions, torch.Tensor):
                positions = positions.detach().cpu().numpy()
            p = np.asarray(positions)
        except (TypeError, ValueError) as e:
            raise TypeError(f"positions must be a sequence of ints; got {positions!r}") from e
        if p.ndim != 1 or (p.size and not np.issubdtype(p.dtype, np.integer)):
            raise TypeError(
                f"positions must be a 1-d sequence of ints (one per row of X); got shape "
                f"{p.shape}, dtype {p.dtype}"
            )
        pos = [int(i) for i in p]
    rendered = _attnlab.check_layer(
        f,
        X,
        _perm_list(perms),
        _count("samples", samples),
        bool(exhaustive),
        _count("seed", seed) or 0,
        _option("readout", readout),
        _option("mask", mask),
        _count("prefix", prefix),
        pos,
    )
    return Report._from_rendered(rendered)


def assert_equivariant(f: Layer, X: ArrayLike, **kwargs: Any) -> Report:
    """:func:`check_equivariance`, raising ``AssertionError`` (the report's text) if it breaks.

    Returns the report when the check holds, so ``assert_equivariant(f, X).margin`` works.
    """
    report = check_equivariance(f, X, **kwargs)
    if not report.holds:
        raise AssertionError("\n" + str(report))
    return report


def attention(
    X: ArrayLike,
    Wq: ArrayLike,
    Wk: ArrayLike,
    Wv: ArrayLike,
    *,
    heads: int = 1,
    Wo: Optional[ArrayLike] = None,
    mask: Optional[str] = None,
    weights: bool = True,
    max_memory: Optional[int] = None,
) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """Scaled dot-product self-attention, as the course's numpy program computes it.

    ``Q, K, V = X Wq, X Wk, X Wv``; each head h attends with ``A_h = softmax(Q_h K_hᵀ / √d_k)``
    (row-wise, the row maximum subtracted first) over its block of columns; the output is
    ``A V`` (one head) or ``concat_h(A_h V_h) Wo``.

    Args:
        X: (n, d) input. Wq, Wk: (d, d_k·heads). Wv: (d, d_v·heads). All the same dtype,
            float32 or float64.
        heads: number of heads (must divide the projections' widths).
        Wo: (d_v·heads, d_out) output projection, required for more than one head.
        mask: ``None``/``"none"``, or ``"causal"`` (query i attends to keys j ≤ i).
        weights: ``True`` (the default, as before this option existed): also form and return
            every head's n × n weights (the output is then ``A V`` with exactly the returned
            ``A``). ``False``: the fused online-softmax kernel, which never forms an n × n
            matrix — the fast path, and the only one for long sequences; the weights slot of
            the result is ``None``.
        max_memory: the memory budget in bytes (default 1 GiB, the CLI's ``--max-memory``).
            A call whose estimate exceeds it raises ``MemoryError`` before allocating anything
            (e.g. n = 60 000 with weights: 2 × 14.4 GB in float32).

    Returns:
        ``(out, weights)``: out is (n, d_out); weights is (n, n) for one head and
        (heads, n, n) for several (each row sums to 1), or ``None`` with ``weights=False``.

    Raises:
        MemoryError: the estimate exceeds ``max_memory``.
    """
    out, w = _attnlab.attention(
        X,
        Wq,
        Wk,
        Wv,
        _count("heads", heads),
        Wo,
        _option("mask", mask),
        bool(weights),
        None if max_memory is None else _count("max_memory", max_memory),
    )
    if w is not None and heads == 1:
        w = w[0]
    return out, w


def run(command: str, **options: Any) -> Dict[str, Any]:
    """Run any attnlab command with the CLI's options; returns its JSON report as a dict.

    ``attnlab.run("equivariance", rng="numpy", pos="index")`` returns what
    ``attnlab equivariance --rng numpy --pos index --json`` prints. Option names are the CLI's
    long options with ``_`` for ``-``; unknown options are errors.
    """
    body = _json.dumps(options)
    text_json, _text = _attnlab.run_command(command, body)
    return _json.loads(text_json)
