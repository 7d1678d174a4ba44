"""Python's checks equal the CLI's JSON for the same inputs.

Two layers on the course program's X (`--rng numpy --seed 0`):

* ``attnlab.attention`` (the core's own arithmetic through the Python boundary): every field
  that describes the check is bit-identical to ``attnlab equivariance --json`` — holds,
  verdict, property, equation, max_abs_error, max_rel_error, max_ulps, tolerance,
  tolerance_derivation, margin, permutations_checked, permutations, worst, mask, readout,
  dtype, n, dim, the positive control and the diagnosis' own-dtype error. The CLI computes
  its negative control (f(X + P) is its "attention + index signal p·1.0") and the other
  dtype's check on the fused kernel (issue 12), the function runs the weights path: the
  negative control's structural error and margin agree to the dtype's round-off, the
  diagnosis' conclusion is the same.
* a numpy re-implementation (numpy's BLAS sums in another order than the core's GEMM): the
  structure of the check is identical (holds, verdict, property, equation, permutations,
  permutations_checked, n, dim, dtype, mask, readout, the diagnosis' conclusion); the tolerance
  (k·eps·(n+d)·max|f(X)|) agrees to a few ulps of max|f(X)|; round-off-level errors are only
  bounded by the tolerance on both sides; for a broken layer the structural error, its margin
  and the worst (permutation, row, column) agree because they are far above round-off.
"""

from __future__ import annotations

import numpy as np
import pytest

import attnlab
from conftest import cli_json, course_inputs, index_bias, numpy_attention

CHECK_FIELDS = [
    "holds",
    "verdict",
    "property",
    "equation",
    "max_abs_error",
    "max_rel_error",
    "max_ulps",
    "tolerance",
    "tolerance_derivation",
    "margin",
    "permutations_checked",
    "permutations",
    "worst",
    "mask",
    "readout",
    "dtype",
    "n",
    "dim",
]
STRUCTURE_FIELDS = [
    "holds",
    "verdict",
    "property",
    "equation",
    "permutations_checked",
    "permutations",
    "mask",
    "readout",
    "dtype",
    "n",
    "dim",
]


def core_attention(Wq, Wk, Wv):
    def f(H):
        out, _ = attnlab.attention(H, Wq.astype(H.dtype), Wk.astype(H.dtype), Wv.astype(H.dtype))
        return out

    return f


def assert_same_check(py, cli, dtype):
    for k in CHECK_FIELDS:
        assert py[k] == cli[k], k
    assert py["controls"][0] == cli["controls"][0]
    assert_same_controls_and_diagnosis(py, cli, dtype)


def assert_same_controls_and_diagnosis(py, cli, dtype):
    # The CLI runs its broken-layer control and the other dtype's check on the fused kernel
    # (issue 12: each forward once, the fast path for the extra evidence), the caller's layer
    # here runs attnlab.attention (the weights path): the same mathematics, rounded
    # differently. The broken layer's error is structural (≫ round-off), so it agrees to the
    # dtype's round-off; the other dtype's round-off error is not comparable bit for bit, its
    # conclusion is.
    rel = 1e-4 if dtype == "f32" else 1e-10
    assert py["controls"][1]["ok"] == cli["controls"][1]["ok"]
    for k in ("max_abs_error", "margin"):
        assert py["controls"][1][k] == pytest.approx(cli["controls"][1][k], rel=rel), k
    assert_same_diagnosis(py, cli, dtype)


def assert_same_diagnosis(py, cli, dtype):
    assert py["diagnosis"]["conclusion"] == cli["diagnosis"]["conclusion"]
    own = "f64_error" if dtype == "f64" else "f32_error"
    assert py["diagnosis"][own] == cli["diagnosis"][own]


CASES = [
    # (CLI options, Python keywords, input dtype)
    ([], {}, np.float64),
    (["--dtype", "f32"], {}, np.float32),
    (["--readout", "mean"], {"readout": "mean"}, np.float64),
    (["--perm", "2,0,3,1"], {"perms": [2, 0, 3, 1]}, np.float64),
    (["--n", "9", "--samples", "12", "--perm-seed", "3"], {"samples": 12, "seed": 3}, np.float64),
]


@pytest.mark.parametrize("cli_args, kw, dtype", CASES)
def test_core_attention_equals_the_cli_json(cli_args, kw, dtype):
    n = int(cli_args[cli_args.index("--n") + 1]) if "--n" in cli_args else 4
    X, Wq, Wk, Wv = course_inputs(n=n)
    cli = cli_json("equivariance", "--rng", "numpy", *cli_args)
    py = attnlab.check_equivariance(core_attention(Wq, Wk, Wv), X.astype(dtype), **kw).to_dict()
    assert_same_check(py, cli, py["dtype"])


def test_attnlab_run_is_the_cli_json():
    X, Wq, Wk, Wv = course_inputs()
    cli = cli_json("equivariance", "--rng", "numpy", "--pos", "index")
    # Equal reports, but for the seconds each run took (`timings`: measurements, not results).
    ran = attnlab.run("equivariance", rng="numpy", pos="index")
    assert set(ran["timings"]) == set(cli["timings"])
    assert {k: v for k, v in ran.items() if k != "timings"} == {k: v for k, v in cli.items() if k != "timings"}
    # And the function form of the same layer (index signal 0.1) gives the same check.
    f = index_bias(core_attention(Wq, Wk, Wv), 0.1)
    py = attnlab.check_equivariance(f, X).to_dict()
    for k in CHECK_FIELDS:
        assert py[k] == cli[k], k
    # (Its negative control is f + p·1.0 on a layer that already adds p·0.1: not the CLI's.)
    assert_same_diagnosis(py, cli, "f64")


def test_numpy_reimplementation_agrees_with_the_cli():
    X, Wq, Wk, Wv = course_inputs()
    cli = cli_json("equivariance", "--rng", "numpy")
    py = attnlab.check_equivariance(numpy_attention(Wq, Wk, Wv), X).to_dict()
    for k in STRUCTURE_FIELDS:
        assert py[k] == cli[k], k
    # max|f(X)| differs by a few ulps between numpy's BLAS and the core's GEMM.
    assert py["tolerance"] == pytest.approx(cli["tolerance"], rel=1e-14)
    for r in (py, cli):
        assert r["max_abs_error"] <= r["tolerance"] and r["margin"] < 1
        assert r["diagnosis"]["conclusion"] in ("round-off", "exact")
    assert [c["ok"] for c in py["controls"]] == [c["ok"] for c in cli["controls"]]


@pytest.mark.parametrize("dtype, flag", [(np.float64, "f64"), (np.float32, "f32")])
def test_numpy_reimplementation_of_a_broken_layer_agrees_with_the_cli(dtype, flag):
    X, Wq, Wk, Wv = course_inputs()
    cli = cli_json("equivariance", "--rng", "numpy", "--pos", "index", "--dtype", flag)
    f = index_bias(numpy_attention(Wq, Wk, Wv), 0.1)
    py = attnlab.check_equivariance(f, X.astype(dtype)).to_dict()
    for k in STRUCTURE_FIELDS:
        assert py[k] == cli[k], k
    assert py["worst"]["perm"] == cli["worst"]["perm"]
    assert (py["worst"]["row"], py["worst"]["col"]) == (cli["worst"]["row"], cli["worst"]["col"])
    # The structural error is ~1; round-off moves it by a few eps of the outputs (~4).
    eps = float(np.finfo(dtype).eps)
    assert py["max_abs_error"] == pytest.approx(cli["max_abs_error"], abs=64 * eps * 4)
    assert py["margin"] == pytest.approx(cli["margin"], rel=1e-3 if flag == "f32" else 1e-10)
    assert py["diagnosis"]["conclusion"] == cli["diagnosis"]["conclusion"] == "structural"
