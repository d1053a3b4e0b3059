"""CumOp (cumsum, cumprod) and Nonzero (nonzero, flatnonzero) against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.tensor.extra_ops import CumOp, Nonzero, cumprod, cumsum, flatnonzero, nonzero
from tests.tensor.utils import assert_infer_shape

RNG = np.random.default_rng(11)


def value(shape, dtype):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(0, 4, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return RNG.integers(0, 2, size=shape).astype(bool)
    return RNG.normal(size=shape).astype(dtype)


# --- cumsum / cumprod --------------------------------------------------------------------

DTYPES = ["float64", "float32", "int8", "int32", "int64", "uint8", "uint32", "bool", "complex64"]


@pytest.mark.parametrize("fn, np_fn", [(cumsum, np.cumsum), (cumprod, np.cumprod)])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, axis",
    [
        ((5,), None),
        ((5,), 0),
        ((5,), -1),
        ((3, 4), None),
        ((3, 4), 0),
        ((3, 4), 1),
        ((2, 3, 4), -2),
        ((), None),
    ],
)
def test_values_and_dtypes(fn, np_fn, dtype, shape, axis):
    x = pt.tensor("x", dtype=dtype, shape=(None,) * len(shape))
    out = fn(x, axis=axis)
    X = value(shape, dtype)
    # The result keeps the input's dtype, as PyTensor's: NumPy's with dtype=x.dtype.
    expected = np_fn(X, axis=axis, dtype=X.dtype)
    assert out.type.dtype == dtype
    got = out.eval({x: X})
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_int8_keeps_int8_as_pytensor():
    x = pt.bvector("x")
    X = np.array([100, 100, 100], dtype="int8")
    for fn, np_fn in [(cumsum, np.cumsum), (cumprod, np.cumprod)]:
        out = fn(x)
        assert out.type.dtype == "int8"
        got = out.eval({x: X})
        assert got.dtype == np.int8
        np.testing.assert_array_equal(got, np_fn(X, dtype=np.int8))


def test_bool_cumsum_is_a_running_or():
    x = pt.tensor("x", dtype="bool", shape=(4,))
    X = np.array([False, True, False, False])
    got = cumsum(x).eval({x: X})
    assert cumsum(x).type.dtype == "bool" and got.dtype == np.bool_
    np.testing.assert_array_equal(got, np.cumsum(X, dtype=bool))


@pytest.mark.parametrize("fn", [cumsum, cumprod])
def test_empty(fn):
    x = pt.dmatrix("x")
    for axis in [None, 0, 1]:
        got = fn(x, axis=axis).eval({x: np.zeros((0, 3))})
        assert got.shape == np.cumsum(np.zeros((0, 3)), axis=axis).shape


def test_static_shapes():
    x = pt.tensor3("x", dtype="float32", shape=(2, None, 4))
    assert cumsum(x, axis=1).type.shape == (2, None, 4)
    assert cumprod(x, axis=-1).type == x.type
    y = pt.matrix("y", shape=(3, 4))
    assert cumsum(y).type.shape == (12,)


@pytest.mark.parametrize("mode", ["add", "mul"])
def test_infer_shape(mode):
    x = pt.tensor3("x")
    assert_infer_shape(CumOp(1, mode)(x), {x: value((2, 3, 4), "float64")})


def test_props_and_str():
    assert CumOp(0) == CumOp(0, "add") != CumOp(0, "mul")
    assert CumOp(1) != CumOp(0)
    assert str(CumOp(1)) == "Cumsum{axis=1}" and str(CumOp(0, "mul")) == "Cumprod{axis=0}"
    x = pt.dmatrix("x")
    assert cumsum(x, axis=-1).owner.op == CumOp(1, "add")


def test_bad_arguments():
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        cumsum(x, axis=2)
    with pytest.raises(ValueError, match="out of bounds"):
        cumprod(x, axis=-3)
    with pytest.raises(TypeError, match="axis must be None or an int"):
        cumsum(x, axis=(0, 1))
    with pytest.raises(ValueError, match="out of bounds"):
        CumOp(2)(x)
    with pytest.raises(ValueError, match="non-negative"):
        CumOp(-1)
    with pytest.raises(TypeError, match="axis must be an int"):
        CumOp(1.0)
    with pytest.raises(ValueError, match="mode"):
        CumOp(0, "max")
    with pytest.raises(ValueError, match="out of bounds"):
        cumsum(pt.dscalar("s"), axis=0)


# --- nonzero / flatnonzero ---------------------------------------------------------------


@pytest.mark.parametrize("shape", [(6,), (3, 4), (2, 3, 4), (0,), (0, 3)])
@pytest.mark.parametrize("dtype", ["float64", "int8", "bool", "complex128"])
def test_nonzero(shape, dtype):
    x = pt.tensor("x", dtype=dtype, shape=(None,) * len(shape))
    X = value(shape, dtype)
    if X.size:
        X.flat[0] = 0
    res = nonzero(x)
    assert isinstance(res, tuple) and len(res) == len(shape)
    assert all(r.type.dtype == "int64" and r.type.shape == (None,) for r in res)
    expected = np.nonzero(X)
    for r, e in zip(res, expected):
        got = r.eval({x: X})
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, e)
    flat = flatnonzero(x)
    np.testing.assert_array_equal(flat.eval({x: X}), np.flatnonzero(X))


def test_nonzero_nan_is_nonzero():
    x = pt.dvector("x")
    X = np.array([0.0, np.nan, -0.0, 2.0])
    np.testing.assert_array_equal(nonzero(x)[0].eval({x: X}), [1, 3])


@pytest.mark.parametrize("dtype", ["float64", "bool", "complex128", "uint8"])
def test_nonzero_infer_shape(dtype):
    x = pt.matrix("x", dtype=dtype)
    X = np.array([[0, 1, 2], [3, 0, 0]]).astype(dtype)
    res = nonzero(x)
    assert res[0].owner is res[1].owner
    assert_infer_shape(res[0], {x: X})


def test_nonzero_return_matrix_1d():
    x = pt.dvector("x")
    X = np.array([0.0, 1.0, 0.0, 3.0])
    m = nonzero(x, return_matrix=True)
    assert m.type.ndim == 2 and m.type.shape[0] == 1
    np.testing.assert_array_equal(m.eval({x: X}), np.array(np.nonzero(X)))


def test_nonzero_return_matrix_nd():
    pytest.importorskip("arignote.tensor.join")
    x = pt.dmatrix("x")
    X = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]])
    m = nonzero(x, return_matrix=True)
    np.testing.assert_array_equal(m.eval({x: X}), np.array(np.nonzero(X)))


def test_nonzero_of_0d_is_an_error():
    with pytest.raises(ValueError, match="0-d"):
        nonzero(pt.dscalar("s"))
    with pytest.raises(ValueError, match="0-d"):
        flatnonzero(pt.dscalar("s"))


def test_nonzero_props():
    assert Nonzero() == Nonzero()


def test_exported():
    assert pt.cumsum is cumsum and pt.cumprod is cumprod
    assert pt.nonzero is nonzero and pt.flatnonzero is flatnonzero


@pytest.mark.skipif(not hasattr(pt.dvector(), "cumsum"), reason="TensorVariable methods not wired yet")
def test_methods():
    x = pt.dmatrix("x")
    X = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 4.0]])
    np.testing.assert_array_equal(x.cumsum().eval({x: X}), np.cumsum(X))
    np.testing.assert_array_equal(x.cumsum(axis=1).eval({x: X}), np.cumsum(X, axis=1))
    np.testing.assert_array_equal(x.cumprod(axis=0).eval({x: X}), np.cumprod(X, axis=0))
    for r, e in zip(x.nonzero(), X.nonzero()):
        np.testing.assert_array_equal(r.eval({x: X}), e)


def test_unique_op_at_extra_ops_path():
    from arignote.tensor.extra_ops import Unique

    x = pt.dvector("x")
    xv = np.array([1, 2.0, 3, 4, 3, 2, 1.0])
    got = Unique(True, True, False)(x)
    want = np.unique(xv, return_index=True, return_inverse=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.eval({x: xv}), w)
