"""pad against numpy.pad: every mode and its keywords, widths of every form (wider than
the axis too), dtypes, symbolic widths, static shapes, gradients, errors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from tests.tensor.test_grad_ops import check_grad

RNG = np.random.default_rng(4)

MODES = [
    ("constant", {}),
    ("constant", {"constant_values": ((1.5, -2), (3, 4))}),
    ("edge", {}),
    ("wrap", {}),
    ("reflect", {}),
    ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {}),
    ("symmetric", {"reflect_type": "odd"}),
    ("mean", {}),
    ("mean", {"stat_length": 2}),
    ("median", {"stat_length": ((1, 3), (2, 2))}),
    ("maximum", {"stat_length": (1, 2)}),
    ("minimum", {}),
    ("linear_ramp", {}),
    ("linear_ramp", {"end_values": ((5, -1), (2, 7))}),
]
WIDTHS = [2, (1, 3), ((0, 2), (3, 0)), ((7, 2), (1, 9))]  # the last is wider than the axes


def _mode_id(case):
    mode, kw = case
    return mode + ("-" + "-".join(kw) if kw else "")


def ev(out, givens=None):
    return out.eval(givens or {})


def test_module_path():
    # (as in PyTensor, the attribute pt.pad is the function; the module is importable)
    assert importlib.import_module("arignote.tensor.pad").pad is pt.pad


@pytest.mark.parametrize("case", MODES, ids=_mode_id)
@pytest.mark.parametrize("width", WIDTHS, ids=str)
def test_pad_matrix_matches_numpy(case, width):
    mode, kw = case
    x = pt.dmatrix("x")
    X = RNG.normal(size=(3, 4))
    got = ev(pt.pad(x, width, mode=mode, **kw), {x: X})
    expected = np.pad(X, width, mode=mode, **kw)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("case", MODES, ids=_mode_id)
@pytest.mark.parametrize("dtype", ["int32", "float32", "uint8"])
def test_pad_dtypes_vector_and_3d(case, dtype):
    mode, kw = case
    if dtype == "uint8" and ("constant_values" in kw or "end_values" in kw or "odd" in kw.values()):
        return  # negative pad values and odd reflections do not fit unsigned integers
    v = pt.vector("v", dtype=dtype)
    V = RNG.integers(0, 50, size=5).astype(dtype)
    if "stat_length" in kw or "end_values" in kw or "constant_values" in kw:
        kw = {
            k: np.asarray(val).reshape(-1)[:2].tolist() if k != "stat_length" else 2 for k, val in kw.items()
        }
    out = pt.pad(v, (4, 6), mode=mode, **kw)
    assert out.type.dtype == dtype
    got, expected = ev(out, {v: V}), np.pad(V, (4, 6), mode=mode, **kw)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    t = pt.tensor("t", dtype=dtype, shape=(None, None, None))
    T = RNG.integers(0, 50, size=(2, 3, 2)).astype(dtype)
    width = ((1, 0), (2, 3), (0, 4))
    got = ev(pt.pad(t, width, mode=mode, **kw), {t: T})
    np.testing.assert_allclose(got, np.pad(T, width, mode=mode, **kw), rtol=1e-6)


def test_pad_static_shapes_0d_and_empty():
    x = pt.tensor("x", dtype="float64", shape=(3, 4))
    for mode in ("constant", "edge", "wrap", "reflect", "mean", "linear_ramp"):
        assert pt.pad(x, ((1, 2), (0, 5)), mode=mode).type.shape == (6, 9)
    assert pt.pad(pt.dmatrix(), ((1, 2), (0, 5))).type.shape == (None, None)
    s = pt.dscalar("s")
    assert ev(pt.pad(s, 3), {s: 2.0}) == np.pad(np.float64(2.0), 3)
    e = pt.dmatrix("e")
    got = ev(pt.pad(e, 1, constant_values=7.0), {e: np.zeros((0, 2))})
    np.testing.assert_array_equal(got, np.pad(np.zeros((0, 2)), 1, constant_values=7.0))
    r = pt.dvector("r")
    np.testing.assert_array_equal(ev(pt.pad(r, 2, mode="reflect"), {r: np.array([4.0])}), [4.0] * 5)


@pytest.mark.parametrize("case", MODES, ids=_mode_id)
def test_pad_mixed_widths_keep_static_shapes(case):
    # constant widths beside symbolic ones keep the static lengths they give
    mode, kw = case
    x, k = pt.tensor("x", dtype="float64", shape=(3, 4, 2)), pt.lscalar("k")
    widths = ((k, 1), (pt.constant(2), np.int64(3)), (0, 0))  # constants of any kind
    out = pt.pad(x, widths, mode=mode, **_per_axis(kw, 3))
    assert out.type.shape == (None, 9, 2)
    X = RNG.normal(size=(3, 4, 2))
    expected = np.pad(X, ((2, 1), (2, 3), (0, 0)), mode=mode, **_per_axis(kw, 3))
    np.testing.assert_allclose(ev(out, {x: X, k: 2}), expected, rtol=1e-13, atol=1e-13)


def _per_axis(kw, ndim):
    """``kw`` with its per-axis pairs (given for 2 axes) repeated to ``ndim`` axes."""
    return {k: v if np.ndim(v) < 2 else tuple(v) + (v[-1],) * (ndim - len(v)) for k, v in kw.items()}


def test_pad_mixed_keywords_and_entry_errors():
    x, c, n = pt.dmatrix("x"), pt.dscalar("c"), pt.lscalar("n")
    X = RNG.normal(size=(3, 4))
    got = ev(pt.pad(x, 1, constant_values=((c, 2.0), (0, c))), {x: X, c: -3.0})
    np.testing.assert_array_equal(got, np.pad(X, 1, constant_values=((-3.0, 2.0), (0, -3.0))))
    got = ev(pt.pad(x, 2, mode="maximum", stat_length=((n, 1), (2, n))), {x: X, n: 2})
    np.testing.assert_array_equal(got, np.pad(X, 2, mode="maximum", stat_length=((2, 1), (2, 2))))
    k = pt.lscalar("k")
    with pytest.raises(ValueError, match="each entry of pad_width must be a scalar, got v of Type"):
        pt.pad(x, ((k, pt.lvector("v")), (0, 0)))
    with pytest.raises(TypeError, match="pad_width must be integers, got 1.5"):
        pt.pad(x, ((k, 1.5), (0, 0)))
    with pytest.raises(TypeError, match="pad_width must be integers, got d of Type"):
        pt.pad(x, ((k, pt.dscalar("d")), (0, 0)))
    with pytest.raises(ValueError, match="pad_width must be non-negative, got -1"):
        pt.pad(x, ((k, -1), (0, 0)))
    with pytest.raises(ValueError, match="stat_length of 0"):
        pt.pad(x, 1, mode="mean", stat_length=((k, 0), (1, 1)))
    fn = function([x, k], pt.pad(x, ((k, 1), (0, 0))))
    with pytest.raises(ValueError, match="pad: pad_width must be non-negative; got"):
        fn(X, -2)


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "symmetric", "reflect", "mean", "linear_ramp"])
def test_pad_symbolic_widths(mode):
    x, w = pt.dmatrix("x"), pt.lmatrix("w")
    X = RNG.normal(size=(3, 4))
    W = np.array([[2, 5], [0, 3]])
    fn = function([x, w], pt.pad(x, w, mode=mode))
    np.testing.assert_allclose(fn(X, W), np.pad(X, W, mode=mode), rtol=1e-13)
    with pytest.raises(ValueError, match="pad: pad_width must be non-negative; got"):
        fn(X, np.array([[1, -1], [0, 0]]))
    k = pt.lscalar("k")
    np.testing.assert_allclose(ev(pt.pad(x, k, mode=mode), {x: X, k: 2}), np.pad(X, 2, mode=mode), rtol=1e-13)
    mixed = ev(pt.pad(x, ((k, 1), (0, k)), mode=mode), {x: X, k: 3})
    np.testing.assert_allclose(mixed, np.pad(X, ((3, 1), (0, 3)), mode=mode), rtol=1e-13)
    c = pt.dscalar("c")
    if mode == "constant":
        got = ev(pt.pad(x, 1, constant_values=c), {x: X, c: -3.0})
        np.testing.assert_array_equal(got, np.pad(X, 1, constant_values=-3.0))


def test_pad_errors():
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="unknown mode 'bogus'"):
        pt.pad(x, 1, mode="bogus")
    with pytest.raises(ValueError, match="mode 'edge' takes \\[\\] as keywords, got \\['constant_values'\\]"):
        pt.pad(x, 1, mode="edge", constant_values=2)
    with pytest.raises(ValueError, match="pad_width must be non-negative"):
        pt.pad(x, ((1, -1), (0, 0)))
    with pytest.raises(TypeError, match="pad_width must be integers"):
        pt.pad(x, 1.5)
    with pytest.raises(TypeError, match="pad_width must be integers"):
        pt.pad(x, pt.dvector())
    with pytest.raises(ValueError, match=r"pad_width of shape \(3,\) does not give"):
        pt.pad(x, (1, 2, 3))
    with pytest.raises(ValueError, match="pad_width must have at most 2 dimensions"):
        pt.pad(x, pt.ltensor3())
    with pytest.raises(ValueError, match="reflect_type must be 'even' or 'odd'"):
        pt.pad(x, 1, mode="reflect", reflect_type="sideways")
    with pytest.raises(ValueError, match="stat_length of 0"):
        pt.pad(x, 1, mode="maximum", stat_length=0)
    with pytest.raises(ValueError, match="cannot extend the empty axis 0"):
        pt.pad(pt.tensor(dtype="float64", shape=(0, 3)), 1, mode="edge")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "mode, kw",
    [
        ("constant", {}),
        ("edge", {}),
        ("wrap", {}),
        ("reflect", {"reflect_type": "odd"}),
        ("symmetric", {}),
        ("mean", {"stat_length": 2}),
        ("maximum", {}),
        ("linear_ramp", {"end_values": 1.0}),
    ],
)
def test_pad_grad(mode, kw, dtype):
    x = pt.matrix("x", dtype=dtype)
    X = np.array([[0.3, -1.2, 2.5], [1.1, 0.2, -0.4]])
    check_grad(lambda x: pt.pad(x, ((1, 3), (2, 1)), mode=mode, **kw), [(x, X)])


def test_pad_grad_constant_values():
    x, c = pt.dvector("x"), pt.dscalar("c")
    check_grad(lambda x, c: pt.pad(x, (2, 1), constant_values=c), [(x, [1.0, 2.0]), (c, 0.5)])
