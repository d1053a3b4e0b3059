"""SortOp / sort and ArgSortOp / argsort against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.tensor.sort import ArgSortOp, SortOp, argsort, sort
from tests.tensor.utils import assert_infer_shape

RNG = np.random.default_rng(3)


def value(shape, dtype):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(0, 4, size=shape).astype(dtype)  # many ties
    if np.dtype(dtype).kind == "b":
        return RNG.integers(0, 2, size=shape).astype(bool)
    return RNG.normal(size=shape).astype(dtype)


SHAPES_AXES = [((5,), -1), ((5,), 0), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((0, 3), 0), ((3, 0), -1)]


@pytest.mark.parametrize("shape, axis", SHAPES_AXES + [((3, 4), None), ((2, 3, 4), None), ((), None)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool"])
def test_sort(shape, axis, dtype):
    x = pt.tensor("x", dtype=dtype, shape=(None,) * len(shape))
    out = sort(x, axis=axis)
    assert out.type.dtype == dtype
    X = value(shape, dtype)
    got = out.eval({x: X})
    expected = np.sort(X, axis=axis)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("shape, axis", SHAPES_AXES + [((3, 4), None), ((), None)])
@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("kind", ["stable", "mergesort"])
def test_argsort(shape, axis, dtype, kind):
    x = pt.tensor("x", dtype=dtype, shape=(None,) * len(shape))
    out = argsort(x, axis=axis, kind=kind)
    assert out.type.dtype == "int64"
    X = value(shape, dtype)
    got = out.eval({x: X})
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argsort(X, axis=axis, kind=kind))


@pytest.mark.parametrize("kind", ["quicksort", "heapsort"])
def test_argsort_unstable_kinds_sort(kind):
    x = pt.dmatrix("x")
    X = value((4, 5), "float64")
    idx = argsort(x, kind=kind).eval({x: X})
    np.testing.assert_array_equal(np.take_along_axis(X, idx, axis=-1), np.sort(X, axis=-1))


def test_nan_sorts_last():
    x = pt.dvector("x")
    X = np.array([3.0, np.nan, -1.0, np.inf])
    np.testing.assert_array_equal(sort(x).eval({x: X}), np.sort(X))
    np.testing.assert_array_equal(argsort(x).eval({x: X}), np.argsort(X))


def test_stable_argument():
    x = pt.dvector("x")
    assert argsort(x, stable=True).owner.op.kind == "stable"
    assert sort(x, stable=True).owner.op.kind == "stable"
    with pytest.raises(ValueError, match="not both"):
        sort(x, kind="heapsort", stable=True)
    with pytest.raises(ValueError, match="order"):
        sort(x, order=["f"])


def test_static_shapes():
    x = pt.tensor3("x", dtype="float32", shape=(2, None, 4))
    assert sort(x, axis=1).type == x.type
    assert argsort(x, axis=1).type.shape == (2, None, 4)
    assert sort(x, axis=None).type.shape == (None,)
    y = pt.tensor3("y", dtype="float32", shape=(2, 3, 4))
    assert sort(y, axis=None).type.shape == (24,)
    assert argsort(y, axis=None).type.shape == (24,)


@pytest.mark.parametrize("op", [SortOp("quicksort"), ArgSortOp("quicksort")])
def test_infer_shape(op):
    x = pt.tensor3("x")
    X = value((2, 3, 4), "float64")
    assert_infer_shape(op(x, 1), {x: X})
    assert_infer_shape(op(x, -1), {x: X})


def test_symbolic_axis():
    x = pt.dmatrix("x")
    a = pt.lscalar("a")
    X = value((3, 4), "float64")
    out = SortOp("quicksort")(x, a)
    np.testing.assert_array_equal(out.eval({x: X, a: np.int64(0)}), np.sort(X, axis=0))
    np.testing.assert_array_equal(out.eval({x: X, a: np.int64(-1)}), np.sort(X, axis=-1))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        out.eval({x: X, a: np.int64(2)})
    idx = ArgSortOp("stable")(x, a)
    np.testing.assert_array_equal(idx.eval({x: X, a: np.int64(0)}), np.argsort(X, axis=0, kind="stable"))


def test_props_and_str():
    assert SortOp("quicksort") == SortOp("quicksort") != SortOp("stable")
    assert SortOp("stable") != ArgSortOp("stable")
    assert str(SortOp("stable")) == "SortOp{stable}"
    x = pt.dvector("x")
    assert sort(x).owner.op == SortOp("quicksort")
    # the same constant axis whatever int type it was given as
    assert sort(x, 0).owner.inputs[1].type.dtype == "int64"


@pytest.mark.parametrize("fn", [sort, argsort])
def test_bad_axis(fn):
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        fn(x, axis=2)
    with pytest.raises(ValueError, match="out of bounds"):
        fn(x, axis=-3)
    with pytest.raises(ValueError, match="out of bounds"):
        fn(pt.dscalar("s"), axis=-1 if fn is sort else 1)  # argsort of a 0-d is [0], as NumPy's
    with pytest.raises(TypeError, match="integer scalar"):
        fn(x, axis=1.0)
    with pytest.raises(TypeError, match="integer scalar"):
        fn(x, axis=pt.lvector("v"))


def test_bad_kind():
    with pytest.raises(ValueError, match="kind must be one of"):
        sort(pt.dvector("x"), kind="bogo")
    with pytest.raises(ValueError, match="kind must be one of"):
        ArgSortOp("bogo")


def test_op_axis_none_is_an_error():
    with pytest.raises(TypeError, match="axis=None"):
        SortOp("quicksort")(pt.dvector("x"), None)


def test_exported():
    assert pt.sort is sort and pt.argsort is argsort


@pytest.mark.skipif(not hasattr(pt.dvector(), "sort"), reason="TensorVariable methods not wired yet")
def test_methods():
    x = pt.dmatrix("x")
    X = value((3, 4), "float64")
    np.testing.assert_array_equal(x.sort().eval({x: X}), np.sort(X))
    np.testing.assert_array_equal(x.sort(axis=0).eval({x: X}), np.sort(X, axis=0))
    np.testing.assert_array_equal(x.argsort(axis=None).eval({x: X}), np.argsort(X, axis=None))
    assert x.sort(kind="stable").owner.op.kind == "stable"


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_argsort_of_a_0d_tensor_is_numpys(axis):
    s = pt.dscalar("s")
    out = pt.argsort(s, axis=axis)
    want = np.argsort(np.array(0.3), axis=axis)
    assert out.type.shape == want.shape and out.type.dtype == want.dtype
    np.testing.assert_array_equal(out.eval({s: 0.3}), want)
    with pytest.raises(np.exceptions.AxisError):
        pt.argsort(s, axis=1)
