"""attnlab.check_equivariance on the caller's own layers: verdicts, diagnosis, controls, errors."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import attnlab
from conftest import course_inputs, index_bias, numpy_attention


def random_layer(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Ws = [rng.standard_normal((d, d)) for _ in range(3)]
    return X, numpy_attention(*Ws)


# --- correct layers hold, broken ones break ---------------------------------------------------


def test_course_attention_holds_in_float64():
    X, Wq, Wk, Wv = course_inputs()
    r = attnlab.check_equivariance(numpy_attention(Wq, Wk, Wv), X)
    assert r.holds and r.verdict == "holds"
    assert r.property == "equivariance"
    assert r.permutations_checked == 24 and r.permutations.mode == "exhaustive"
    assert 0 <= r.max_abs_error <= r.tolerance and r.margin < 1
    assert [c.ok for c in r.controls] == [True, True]
    assert r.diagnosis is not None and r.diagnosis.conclusion in ("round-off", "exact")


def test_float32_equivariant_layer_holds_with_round_off():
    # n = 6, d = 16: the softmax sum and the weighted sum run over 6 reordered terms, so the
    # float32 run shows round-off of order eps32 and the float64 copy of order eps64.
    X, f = random_layer(6, 16, seed=3)
    r = attnlab.check_equivariance(f, X.astype(np.float32))
    assert r.holds and r.dtype == "f32"
    assert r.tolerance == pytest.approx(8 * np.finfo(np.float32).eps * (6 + 16) * np.abs(f(X.astype(np.float32))).max(), rel=1e-12)
    d = r.diagnosis
    assert d is not None and d.conclusion == "round-off", r
    assert d.f32_error > 0 and d.f32_error / max(d.f64_error, 1e-300) > 1e3


@pytest.mark.parametrize("scale", [1e-3, 1e-6])
def test_index_bias_breaks_at_float64_and_is_structural(scale):
    X, Wq, Wk, Wv = course_inputs()
    r = attnlab.check_equivariance(index_bias(numpy_attention(Wq, Wk, Wv), scale), X)
    assert not r.holds and r.verdict == "breaks"
    assert r.margin > 1e3, r
    assert r.diagnosis is not None and r.diagnosis.conclusion == "structural", r
    # The error does not fall with the precision (round-off would fall by ~5.4e8).
    assert r.diagnosis.ratio < 10


def test_index_bias_breaks_at_float32_too():
    X, f = random_layer(5, 8, seed=1)
    r = attnlab.check_equivariance(index_bias(f, 1e-3), X.astype(np.float32))
    assert not r.holds
    assert r.diagnosis.conclusion == "structural"


def test_rowwise_maps_hold_exactly():
    X, _ = random_layer(5, 3, seed=0)
    r = attnlab.check_equivariance(lambda H: np.tanh(H) * 2, X)
    assert r.holds and r.max_abs_error == 0 and r.diagnosis.conclusion == "exact"


def test_mean_readout_checks_invariance():
    X, Wq, Wk, Wv = course_inputs()
    f = numpy_attention(Wq, Wk, Wv)
    r = attnlab.check_equivariance(f, X, readout="mean")
    assert r.holds and r.property == "invariance" and r.readout == "mean"
    # A row readout picks a position: not invariant.
    r = attnlab.check_equivariance(f, X, readout="row:0")
    assert not r.holds and r.diagnosis.conclusion == "structural"


def test_causal_prefix_invariance():
    X, Wq, Wk, Wv = course_inputs(n=6)
    f = numpy_attention(Wq, Wk, Wv, causal=True)
    r = attnlab.check_equivariance(f, X, mask="causal")
    assert r.holds and r.property == "prefix_invariance" and r.prefix == 5
    assert r.permutations_checked == 120
    assert r.worst_difference.first_row == 5 and r.worst_difference.values.shape == (1, 4)
    # The same layer is not equivariant (the mask sees the order) ...
    assert not attnlab.check_equivariance(f, X).holds
    # ... and with an index signal the prefix check breaks too.
    r = attnlab.check_equivariance(index_bias(f, 1e-3), X, mask="causal", prefix=3)
    assert not r.holds and r.prefix == 3 and r.permutations_checked == 6


def test_permutation_choices():
    X, Wq, Wk, Wv = course_inputs(n=9)
    f = numpy_attention(Wq, Wk, Wv)
    r = attnlab.check_equivariance(f, X)
    assert r.permutations.mode == "random" and r.permutations_checked == 100
    r = attnlab.check_equivariance(f, X, samples=7, seed=4)
    assert (r.permutations.mode, r.permutations.count, r.permutations.seed) == ("random", 7, 4)
    one = [8, 0, 1, 2, 3, 4, 5, 6, 7]
    r = attnlab.check_equivariance(f, X, perms=one)
    assert r.permutations.mode == "given" and r.permutations_checked == 1 and r.worst.perm == one
    r = attnlab.check_equivariance(f, X, perms=[one, list(range(9))])
    assert r.permutations_checked == 2 and r.permutations.count == 2


def test_one_token_says_the_check_shows_nothing():
    r = attnlab.check_equivariance(lambda H: H * 3, np.ones((1, 4)))
    assert r.holds and r.permutations_checked == 1
    assert "only the identity" in r.note


def test_negative_control_that_cannot_break_is_reported():
    # Row centring removes the index signal p·1.0 (the same constant on every entry of a row),
    # so the negative control cannot break: the report must say so, not hide it.
    X, _ = random_layer(4, 5, seed=2)
    r = attnlab.check_equivariance(lambda H: H - H.mean(axis=1, keepdims=True), X)
    assert r.holds
    assert r.controls[1].ok is False
    assert "negative control did not break" in r.note


def test_a_layer_that_only_accepts_one_dtype_gets_no_diagnosis_and_a_reason():
    X, Wq, Wk, Wv = course_inputs()

    def f64_only(H):  # float64 weights: float32 inputs give float64 outputs
        return numpy_attention(Wq, Wk, Wv)(H.astype(np.float64))

    r = attnlab.check_equivariance(f64_only, X)
    assert r.holds and r.diagnosis is None
    assert "float32 copy" in r.diagnosis_unavailable and "float64" in r.diagnosis_unavailable
    assert "not diagnosed" in repr(r)


# --- the callable's failures are Python exceptions --------------------------------------------


def test_a_raising_callable_chains_the_original_exception():
    X, _, _, _ = course_inputs()

    def broken(H):
        return H / 0 if H[0, 0] > 99 else {}["missing"]

    with pytest.raises(attnlab.LayerError) as info:
        attnlab.check_equivariance(broken, X)
    e = info.value
    assert isinstance(e, RuntimeError)
    assert "f raised KeyError" in str(e) and "'missing'" in str(e)
    assert "4×4 float64 input" in str(e)
    assert isinstance(e.__cause__, KeyError)
    frames = traceback.extract_tb(e.__cause__.__traceback__)
    assert any(fr.name == "broken" for fr in frames), frames


def test_the_stage_of_a_failure_is_named():
    X, Wq, Wk, Wv = course_inputs()
    f = numpy_attention(Wq, Wk, Wv)

    def refuses_shifted_rows(H):
        # The check and the positive control pass rows of X; the negative control X[p] + P.
        if not all(any(np.array_equal(h, x) for x in X) for h in H):
            raise ValueError("no positions please")
        return f(H)

    with pytest.raises(attnlab.LayerError, match="in the negative control") as info:
        attnlab.check_equivariance(refuses_shifted_rows, X)
    assert isinstance(info.value.__cause__, ValueError)


def test_keyboard_interrupt_passes_through_unchanged():
    def interrupted(H):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        attnlab.check_equivariance(interrupted, np.ones((3, 2)))


@pytest.mark.parametrize(
    "out, exc, needles",
    [
        (lambda H: H[:, 0], ValueError, ["shape (4,)", "expected (4, d′)"]),
        (lambda H: H[:3], ValueError, ["shape (3, 4)"]),
        (lambda H: H * np.nan, ValueError, ["non-finite", "NaN at [0, 0]"]),
        (lambda H: np.where(H > 0, np.inf, H), ValueError, ["non-finite", "inf"]),
        (lambda H: H.astype(np.float32), TypeError, ["returned float32", "astype(X.dtype)"]),
        (lambda H: (H > 0), TypeError, ["returned bool"]),
        (lambda H: "not an array", ValueError, ["shape ()"]),
        (lambda H: None, TypeError, ["returned None", "return its result"]),
    ],
)
def test_wrong_outputs_are_clear_errors(out, exc, needles):
    X, _, _, _ = course_inputs()
    with pytest.raises(exc) as info:
        attnlab.check_equivariance(out, X)
    for needle in needles:
        assert needle in str(info.value), str(info.value)


def test_lists_are_accepted_as_outputs():
    r = attnlab.check_equivariance(lambda H: (H * 2).tolist(), np.eye(3))
    assert r.holds


@pytest.mark.parametrize(
    "X, exc, needle",
    [
        (np.ones((3, 2), dtype=np.int64), TypeError, "dtype int64"),
        (np.ones((3, 2), dtype=np.float16), TypeError, "dtype float16"),
        (np.ones(3), ValueError, "2-D array"),
        (np.ones((2, 2, 2)), ValueError, "shape (2, 2, 2)"),
        (np.zeros((0, 3)), ValueError, "(0, 3)"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), ValueError, "X[0, 1]: NaN"),
        (np.array([[1.0, 0.0], [-np.inf, 1.0]]), ValueError, "X[1, 0]: -inf"),
    ],
)
def test_bad_inputs_are_clear_errors(X, exc, needle):
    with pytest.raises(exc, match=None) as info:
        attnlab.check_equivariance(lambda H: H, X)
    assert needle in str(info.value), str(info.value)


@pytest.mark.parametrize(
    "kw, exc, needle",
    [
        (dict(perms=[0, 1]), ValueError, "a permutation of the 3 positions"),
        (dict(perms=[0, 0, 1]), ValueError, "each of 0..2 exactly once"),
        (dict(perms=[[0, 1, 2], [1, 0]]), ValueError, "equal length"),
        (dict(perms=[0.5, 1, 2]), TypeError, "integer indices"),
        (dict(perms="2,0,1"), TypeError, "string"),
        (dict(samples=3, exhaustive=True), ValueError, "at most one of perms, samples, exhaustive"),
        (dict(samples=0), ValueError, "samples: 0"),
        (dict(seed=-1), ValueError, "non-negative"),
        (dict(readout="max"), ValueError, "none, mean or row:I"),
        (dict(readout="row:3"), ValueError, "readout row: 3"),
        (dict(mask="future"), ValueError, "none, causal"),
        (dict(mask="causal", readout="mean"), ValueError, "none with mask='causal'"),
        (dict(prefix=2), ValueError, "without mask='causal'"),
        (dict(mask="causal", prefix=3), ValueError, "2..2"),
    ],
)
def test_bad_options_are_clear_errors(kw, exc, needle):
    with pytest.raises(exc) as info:
        attnlab.check_equivariance(lambda H: H, np.eye(3), **kw)
    assert needle in str(info.value), str(info.value)


def test_exhaustive_beyond_eight_positions_is_refused():
    with pytest.raises(ValueError, match="at most 8 positions"):
        attnlab.check_equivariance(lambda H: H, np.ones((9, 2)), exhaustive=True)


def test_f_must_be_callable():
    with pytest.raises(TypeError, match="f must be a callable"):
        attnlab.check_equivariance(np.eye(3), np.eye(3))


# --- the report --------------------------------------------------------------------------------


def test_report_text_html_dict_and_assert():
    X, Wq, Wk, Wv = course_inputs()
    f = numpy_attention(Wq, Wk, Wv)
    r = attnlab.check_equivariance(f, X)
    text = repr(r)
    assert text.startswith("f(ΠH) = Π f(H): HOLDS") and str(r) == text
    assert "round-off or structure?" in text and "identity permutation" in text
    html = r._repr_html_()
    assert "<table>" in html and "<svg" in html and "HOLDS" in html
    d = r.to_dict()
    assert d["holds"] is True and d["worst"]["perm"] == r.worst.perm
    assert d["controls"][0]["name"] == "identity permutation"
    d["holds"] = "changed"  # a copy: the report is unchanged
    assert r.to_dict()["holds"] is True
    assert isinstance(r.worst, attnlab.Worst) and isinstance(r.controls[0], attnlab.Control)
    assert isinstance(r.diagnosis, attnlab.Diagnosis)
    assert r.worst_difference.values.shape == (4, 4)
    assert attnlab.assert_equivariant(f, X).holds
    with pytest.raises(AssertionError) as info:
        attnlab.assert_equivariant(index_bias(f, 1e-3), X)
    assert "BREAKS" in str(info.value) and "structural" in str(info.value)


def test_large_outputs_keep_a_window_around_the_worst_entry():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((40, 50))
    r = attnlab.check_equivariance(index_bias(np.tanh, 1e-3), X, samples=3)
    w = r.worst_difference
    assert w.values.shape == (32, 32)
    assert w.first_row <= r.worst.row < w.first_row + 32
    assert w.first_col <= r.worst.col < w.first_col + 32
    assert abs(w.values[r.worst.row - w.first_row, r.worst.col - w.first_col]) == pytest.approx(r.max_abs_error)
