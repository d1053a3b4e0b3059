"""Softmax and LogSoftmax against scipy.special."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.special

import arignote.tensor as pt
from arignote.tensor.math import logsumexp as math_logsumexp
from arignote.tensor.special import LogSoftmax, Softmax, log_softmax, logsumexp, softmax
from tests.tensor.utils import assert_infer_shape

RNG = np.random.default_rng(7)

FUNCS = [(softmax, scipy.special.softmax, Softmax), (log_softmax, scipy.special.log_softmax, LogSoftmax)]


def tol(dtype):
    return {"float32": 1e-5, "float64": 1e-12}[np.dtype(dtype).name]


def oracle(fn, x, axis):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(x, axis=axis)


@pytest.mark.parametrize("ours, theirs, op", FUNCS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "shape, axis",
    [((5,), None), ((5,), -1), ((5,), 0), ((3, 4), None), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), (0, 2))],
)
def test_values(ours, theirs, op, dtype, shape, axis):
    x = pt.tensor("x", dtype=dtype, shape=(None,) * len(shape))
    out = ours(x, axis=axis)
    assert isinstance(out.owner.op, op)
    assert out.type.dtype == dtype
    X = RNG.normal(size=shape).astype(dtype) * 3
    got = out.eval({x: X})
    expected = theirs(X, axis=axis)
    assert got.dtype == np.dtype(dtype) and got.shape == X.shape
    np.testing.assert_allclose(got, expected, rtol=tol(dtype), atol=tol(dtype))


@pytest.mark.parametrize("ours, theirs, op", FUNCS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_inputs_do_not_overflow(ours, theirs, op, dtype):
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    X = np.array([[1e3, 1e3 - 1, 1e3 - 2], [-1e3, 0.0, 1e3]], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warnings either
        got = ours(x, axis=-1).eval({x: X})
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, theirs(X, axis=-1), rtol=tol(dtype), atol=tol(dtype))


@pytest.mark.parametrize("ours, theirs, op", FUNCS)
@pytest.mark.parametrize(
    "row",
    [
        [-np.inf, -np.inf, -np.inf],
        [-np.inf, 1.0, 2.0],
        [np.inf, 1.0, 2.0],
        [np.inf, np.inf, 0.0],
        [np.nan, 1.0, 2.0],
        [-np.inf, np.inf, 0.0],
    ],
)
def test_infinities_like_scipy(ours, theirs, op, row):
    x = pt.dmatrix("x")
    X = np.array([row, [0.0, 1.0, 2.0]])
    got = ours(x, axis=1).eval({x: X})
    np.testing.assert_allclose(got, oracle(theirs, X, 1), rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("ours, theirs, op", FUNCS)
def test_0d_and_empty(ours, theirs, op):
    s = pt.dscalar("s")
    got = ours(s).eval({s: np.array(3.5)})
    assert got.shape == () and got == theirs(np.array(3.5))
    x = pt.dmatrix("x")
    for shape in [(0, 3), (2, 0), (0, 0)]:
        for axis in [None, 0, 1]:
            got = ours(x, axis=axis).eval({x: np.zeros(shape)})
            assert got.shape == shape and got.dtype == np.float64


@pytest.mark.parametrize("ours, theirs, op", FUNCS)
@pytest.mark.parametrize(
    "dtype, out_dtype",
    [("int8", "float32"), ("int64", "float64"), ("uint16", "float32"), ("bool", "float32")],
)
def test_integer_inputs_give_floats(ours, theirs, op, dtype, out_dtype):
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    out = ours(x, axis=1)
    assert out.type.dtype == out_dtype
    X = RNG.integers(0, 2, size=(2, 3)).astype(dtype)
    got = out.eval({x: X})
    assert got.dtype == np.dtype(out_dtype)
    np.testing.assert_allclose(got, theirs(X.astype("float64"), axis=1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", [Softmax, LogSoftmax])
def test_static_shape_props_and_infer_shape(op):
    x = pt.tensor3("x", shape=(2, None, 4))
    out = op(axis=1)(x)
    assert out.type.shape == (2, None, 4)
    assert op(axis=1) == op(axis=(1,)) and op(axis=1) != op(axis=2) and op(axis=None) != op(axis=0)
    assert str(op(axis=1)) == f"{op.__name__}{{axis=(1,)}}"
    y = pt.tensor3("y")
    assert_infer_shape(op(axis=(0, 2))(y), {y: RNG.normal(size=(2, 3, 4))})


@pytest.mark.parametrize("fn", [softmax, log_softmax])
def test_axis_is_normalized(fn):
    x = pt.dmatrix("x")
    assert fn(x, axis=-1).owner.op.axis == (1,)
    assert fn(x, axis=[1, 0]).owner.op.axis == (0, 1)
    assert fn(x).owner.op.axis is None


@pytest.mark.parametrize("fn", [softmax, log_softmax])
def test_bad_axis(fn):
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        fn(x, axis=2)
    with pytest.raises(ValueError, match="repeated"):
        fn(x, axis=(0, 0))
    with pytest.raises(ValueError, match="out of bounds"):
        fn(pt.dscalar("s"), axis=-1)
    with pytest.raises(TypeError, match="axis"):
        fn(x, axis="rows")
    with pytest.raises(ValueError, match="out of bounds"):
        Softmax(axis=3)(x)


def test_logsumexp_is_reexported():
    assert logsumexp is math_logsumexp
    x = pt.dmatrix("x")
    X = RNG.normal(size=(3, 4)) * 100
    np.testing.assert_allclose(logsumexp(x, axis=1).eval({x: X}), scipy.special.logsumexp(X, axis=1))


def test_module_is_reachable_from_pt():
    assert pt.special.softmax is softmax and pt.special.log_softmax is log_softmax
