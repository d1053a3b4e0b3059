"""Dot, MatMul and the products built on them (dot, matmul, tensordot, outer, vdot,
vecdot, matvec, vecmat), against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.tensor.products import (
    Dot,
    MatMul,
    dot,
    matmul,
    matvec,
    outer,
    tensordot,
    vdot,
    vecdot,
    vecmat,
)
from tests.tensor.utils import assert_infer_shape

RNG = np.random.default_rng(42)


def value(shape, dtype="float64"):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(0, 5, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return RNG.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dtype).kind == "c":
        return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)
    return RNG.normal(size=shape).astype(dtype)


def var(name, shape, dtype="float64", static=False):
    """A tensor Variable for values of ``shape`` (static lengths only with ``static``)."""
    return pt.tensor(name, dtype=dtype, shape=shape if static else (None,) * len(shape))


def check_close(got, expected, dtype):
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == expected.shape
    if np.dtype(dtype).kind in "fc":
        rtol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, expected)


# --- Dot ---------------------------------------------------------------------------------

DOT_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((1, 1), (1, 1))]
DTYPE_PAIRS = [
    ("float64", "float64"),
    ("float32", "float32"),
    ("float32", "float64"),
    ("int32", "int32"),
    ("int8", "int16"),
    ("int64", "float32"),
    ("uint8", "int8"),
    ("bool", "bool"),
    ("complex128", "float64"),
]


@pytest.mark.parametrize("xs, ys", DOT_SHAPES)
@pytest.mark.parametrize("dx, dy", DTYPE_PAIRS)
def test_dot_values_and_dtype(xs, ys, dx, dy):
    x, y = var("x", xs, dx), var("y", ys, dy)
    out = Dot()(x, y)
    dtype = np.result_type(dx, dy)
    assert out.type.dtype == dtype.name
    assert out.type.ndim == len(xs) + len(ys) - 2
    X, Y = value(xs, dx), value(ys, dy)
    check_close(out.eval({x: X, y: Y}), np.asarray(np.dot(X, Y)), dtype)


@pytest.mark.parametrize("xs, ys", DOT_SHAPES)
def test_dot_static_shape_and_infer_shape(xs, ys):
    x, y = var("x", xs, static=True), var("y", ys, static=True)
    out = Dot()(x, y)
    expected = np.dot(np.zeros(xs), np.zeros(ys)).shape
    assert out.type.shape == expected
    xd, yd = var("x", xs), var("y", ys)
    assert_infer_shape(Dot()(xd, yd), {xd: value(xs), yd: value(ys)})


def test_dot_static_shape_partial():
    x = pt.matrix("x", shape=(2, None))
    y = pt.matrix("y", shape=(None, 5))
    assert Dot()(x, y).type.shape == (2, 5)
    assert Dot()(pt.vector("v", shape=(None,)), y).type.shape == (5,)
    assert Dot()(x, pt.vector("w")).type.shape == (2,)


@pytest.mark.parametrize(
    "xs, ys, expected",
    [((0,), (0,), ()), ((2, 0), (0, 3), (2, 3)), ((0, 3), (3,), (0,)), ((3,), (3, 0), (0,))],
)
def test_dot_empty(xs, ys, expected):
    x, y = var("x", xs), var("y", ys)
    got = Dot()(x, y).eval({x: np.zeros(xs), y: np.zeros(ys)})
    assert got.shape == expected
    np.testing.assert_array_equal(got, np.zeros(expected))


def test_dot_vector_vector_is_0d_array():
    x, y = var("x", (3,)), var("y", (3,))
    got = Dot()(x, y).eval({x: np.arange(3.0), y: np.ones(3)})
    assert isinstance(got, np.ndarray) and got.shape == () and got == 3.0


def test_dot_props_and_str():
    assert Dot() == Dot() and hash(Dot()) == hash(Dot())
    assert str(Dot()) == "Dot"


@pytest.mark.parametrize("bad", [(), (2, 2, 2)])
def test_dot_rejects_other_ranks(bad):
    x, y = var("x", bad), var("y", (2,))
    with pytest.raises(TypeError, match=r"Dot: input 0 .* 1-d or 2-d"):
        Dot()(x, y)
    with pytest.raises(TypeError, match=r"Dot: input 1 .* 1-d or 2-d"):
        Dot()(y, x)


def test_dot_static_inner_mismatch():
    x = pt.matrix("x", shape=(2, 3))
    y = pt.matrix("y", shape=(4, 5))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\)"):
        Dot()(x, y)
    with pytest.raises(ValueError, match=r"inner lengths differ"):
        dot(pt.vector("v", shape=(3,)), pt.vector("w", shape=(2,)))


def test_dot_runtime_inner_mismatch():
    x, y = var("x", (2, 3)), var("y", (4,))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        Dot()(x, y).eval({x: np.zeros((2, 3)), y: np.zeros(4)})


def test_dot_constants_and_lists():
    x = pt.dvector("x")
    got = Dot()(x, [[1.0, 2.0], [3.0, 4.0]]).eval({x: np.array([1.0, 1.0])})
    np.testing.assert_array_equal(got, [4.0, 6.0])


# --- dot (any rank) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "xs, ys",
    [
        ((), ()),
        ((), (2, 3)),
        ((2, 3), ()),
        ((2, 3, 4), (4,)),
        ((2, 3, 4), (4, 5)),
        ((2, 3, 4), (5, 4, 6)),
        ((3,), (2, 3, 4)),
        ((2, 3), (4, 3, 5)),
        ((2, 2, 3, 4), (1, 4, 2)),
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_dot_matches_numpy(xs, ys, dtype):
    x, y = var("x", xs, dtype), var("y", ys, dtype)
    out = dot(x, y)
    X, Y = value(xs, dtype), value(ys, dtype)
    expected = np.asarray(np.dot(X, Y))
    assert out.type.ndim == expected.ndim
    check_close(out.eval({x: X, y: Y}), expected, expected.dtype)
    xs_, ys_ = var("x", xs, dtype, static=True), var("y", ys, dtype, static=True)
    assert dot(xs_, ys_).type.shape == expected.shape


def test_dot_of_2d_is_one_node():
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    out = dot(x, y)
    assert isinstance(out.owner.op, Dot) and out.owner.inputs == [x, y]


# --- MatMul / matmul ---------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)),
    ((6, 5, 2, 3), (5, 3, 4)),
    ((0, 2, 3), (0, 3, 4)),
    ((5, 2, 0), (5, 0, 4)),
]


@pytest.mark.parametrize("xs, ys", MATMUL_SHAPES)
@pytest.mark.parametrize("dx, dy", [("float64", "float64"), ("float32", "float32"), ("int16", "float32")])
def test_matmul_matches_numpy(xs, ys, dx, dy):
    x, y = var("x", xs, dx), var("y", ys, dy)
    out = matmul(x, y)
    X, Y = value(xs, dx), value(ys, dy)
    expected = np.asarray(np.matmul(X, Y))
    check_close(out.eval({x: X, y: Y}), expected, expected.dtype)
    # fully static inputs give a fully static output
    xs_, ys_ = var("x", xs, dx, static=True), var("y", ys, dy, static=True)
    assert matmul(xs_, ys_).type.shape == expected.shape


def test_matmul_broadcasts_static_ones():
    x = pt.tensor3("x", shape=(1, None, None))
    y = pt.tensor4("y", shape=(4, 1, None, None))
    out = matmul(x, y)
    assert isinstance(out.owner.op, MatMul)
    assert out.type.shape == (4, 1, None, None)
    X, Y = value((1, 2, 3)), value((4, 1, 3, 5))
    np.testing.assert_allclose(out.eval({x: X, y: Y}), np.matmul(X, Y))
    z = pt.tensor3("z", shape=(7, None, None))
    assert matmul(x, z).type.shape == (7, None, None)


def test_matmul_infer_shape():
    x = pt.tensor3("x", shape=(1, None, None))
    y = pt.tensor3("y")
    out = matmul(x, y)
    assert_infer_shape(out, {x: value((1, 2, 3)), y: value((4, 3, 5))})
    x2, y2 = pt.tensor4("x2"), pt.tensor3("y2")
    assert_infer_shape(matmul(x2, y2), {x2: value((2, 3, 4, 5)), y2: value((3, 5, 1))})


def test_matmul_operator_dtype_argument():
    x, y = pt.tensor3("x"), pt.tensor3("y")
    out = matmul(x, y, dtype="float32")
    assert out.type.dtype == "float32"
    X, Y = value((2, 2, 2)), value((2, 2, 2))
    np.testing.assert_allclose(out.eval({x: X, y: Y}), np.matmul(X, Y).astype("float32"), rtol=1e-6)


def test_matmul_of_matrices_uses_dot():
    out = matmul(pt.dmatrix("x"), pt.dvector("y"))
    assert isinstance(out.owner.op, Dot)


def test_matmul_rejects_0d():
    with pytest.raises(ValueError, match="operand 0 .* 0-d"):
        matmul(pt.dscalar("s"), pt.dmatrix("m"))
    with pytest.raises(ValueError, match="operand 1 .* 0-d"):
        matmul(pt.dmatrix("m"), 2.0)


def test_matmul_op_rejects_vectors():
    with pytest.raises(TypeError, match=r"MatMul: input 1 .* at least 2-d"):
        MatMul()(pt.dmatrix("m"), pt.dvector("v"))


def test_matmul_static_mismatches():
    x = pt.tensor3("x", shape=(2, 3, 4))
    with pytest.raises(ValueError, match=r"inner lengths differ.*\(2, 3, 4\).*\(2, 5, 6\)"):
        matmul(x, pt.tensor3("y", shape=(2, 5, 6)))
    with pytest.raises(ValueError, match=r"batch dimension 0 .*\(2, 3, 4\).*\(3, 4, 6\)"):
        matmul(x, pt.tensor3("y", shape=(3, 4, 6)))


def test_matmul_runtime_mismatches():
    x, y = pt.tensor3("x"), pt.tensor3("y")
    out = matmul(x, y)
    with pytest.raises(ValueError, match=r"inner lengths differ.*\(2, 3, 4\).*\(2, 5, 6\)"):
        out.eval({x: np.zeros((2, 3, 4)), y: np.zeros((2, 5, 6))})
    with pytest.raises(ValueError, match=r"batch dimension 0 differs"):
        out.eval({x: np.zeros((2, 3, 4)), y: np.zeros((3, 4, 6))})
    # a length-1 batch value is no broadcast unless the Type says so
    with pytest.raises(ValueError, match=r"broadcasts only where the Type says so"):
        out.eval({x: np.zeros((1, 3, 4)), y: np.zeros((3, 4, 6))})


# --- vecdot / matvec / vecmat ------------------------------------------------------------


@pytest.mark.parametrize("xs, ys", [((3,), (3,)), ((4, 3), (3,)), ((3,), (4, 3)), ((2, 4, 3), (2, 4, 3))])
def test_vecdot(xs, ys):
    x, y = var("x", xs), var("y", ys)
    X, Y = value(xs), value(ys)
    np.testing.assert_allclose(vecdot(x, y).eval({x: X, y: Y}), np.vecdot(X, Y))


@pytest.mark.parametrize("xs, ys", [((2, 3), (3,)), ((5, 2, 3), (3,)), ((5, 2, 3), (5, 3))])
def test_matvec(xs, ys):
    x, y = var("x", xs), var("y", ys)
    X, Y = value(xs), value(ys)
    np.testing.assert_allclose(matvec(x, y).eval({x: X, y: Y}), np.matvec(X, Y))


@pytest.mark.parametrize("xs, ys", [((3,), (3, 2)), ((3,), (5, 3, 2)), ((5, 3), (5, 3, 2))])
def test_vecmat(xs, ys):
    x, y = var("x", xs), var("y", ys)
    X, Y = value(xs), value(ys)
    np.testing.assert_allclose(vecmat(x, y).eval({x: X, y: Y}), np.vecmat(X, Y))


def test_vecdot_family_errors():
    with pytest.raises(ValueError, match="at least 1-d"):
        vecdot(pt.dscalar("s"), pt.dvector("v"))
    with pytest.raises(ValueError, match="at least 2-d"):
        matvec(pt.dvector("v"), pt.dvector("w"))
    with pytest.raises(ValueError, match="at least 2-d"):
        vecmat(pt.dvector("v"), pt.dvector("w"))


# --- tensordot ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "xs, ys, axes",
    [
        ((2, 3, 4), (3, 4, 5), 2),
        ((2, 3, 4), (4, 5), 1),
        ((2, 3), (4, 5), 0),
        ((3,), (4,), 0),
        ((2, 3, 4), (2, 3, 4), 3),
        ((2, 3, 4), (5, 6, 4, 3), [[1, 2], [3, 2]]),
        ((2, 3, 4), (4, 2), [[0, -1], [1, 0]]),
        ((2, 3, 4), (3,), [[1], [0]]),
        ((3,), (2, 3, 4), ([0], [1])),
        ((3,), (3,), 1),
        ((), (2, 3), 0),
        ((2, 3), (), 0),
        ((2, 0, 4), (0, 4, 5), 2),
        ((0, 3), (3, 2), 1),
        ((2, 3), (3, 2), (1, 0)),
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_tensordot_matches_numpy(xs, ys, axes, dtype):
    x, y = var("x", xs, dtype), var("y", ys, dtype)
    X, Y = value(xs, dtype), value(ys, dtype)
    expected = np.asarray(np.tensordot(X, Y, axes))
    out = tensordot(x, y, axes)
    assert out.type.ndim == expected.ndim
    check_close(out.eval({x: X, y: Y}), expected, expected.dtype)
    xs_, ys_ = var("x", xs, dtype, static=True), var("y", ys, dtype, static=True)
    assert tensordot(xs_, ys_, axes).type.shape == expected.shape


def test_tensordot_partial_static_shape():
    a = pt.tensor3("a", shape=(2, None, 4))
    b = pt.tensor3("b", shape=(None, 4, 7))
    out = tensordot(a, b, [[1, 2], [0, 1]])
    assert out.type.shape == (2, 7)
    A, B = value((2, 3, 4)), value((3, 4, 7))
    np.testing.assert_allclose(out.eval({a: A, b: B}), np.tensordot(A, B, [[1, 2], [0, 1]]))
    c = pt.tensor4("c", shape=(None, 2, None, 3))
    out = tensordot(c, b, [[2], [1]])  # merged free axes of partly known lengths
    assert out.type.shape == (None, 2, 3, None, 7)
    C = value((5, 2, 4, 3))
    np.testing.assert_allclose(out.eval({c: C, b: B}), np.tensordot(C, B, [[2], [1]]))


def test_tensordot_default_axes():
    x, y = pt.tensor3("x"), pt.tensor3("y")
    X, Y = value((2, 3, 4)), value((3, 4, 5))
    np.testing.assert_allclose(tensordot(x, y).eval({x: X, y: Y}), np.tensordot(X, Y))


def test_tensordot_static_mismatch():
    a = pt.tensor3("a", shape=(2, 3, 4))
    b = pt.matrix("b", shape=(5, 6))
    with pytest.raises(ValueError, match=r"summed lengths differ.*\(2, 3, 4\).*\(5, 6\)"):
        tensordot(a, b, 1)


def test_tensordot_runtime_mismatch_of_merged_axes():
    # (2, 3) against (3, 2): the sizes agree once merged, the lengths do not
    a, b = pt.tensor3("a"), pt.tensor3("b")
    out = tensordot(a, b, 2)
    with pytest.raises(ValueError, match="does not match"):
        out.eval({a: np.zeros((4, 2, 3)), b: np.zeros((3, 2, 5))})
    c, d = pt.matrix("c"), pt.matrix("d")
    with pytest.raises(ValueError, match="inner lengths differ"):
        tensordot(c, d, 1).eval({c: np.zeros((2, 3)), d: np.zeros((4, 5))})


@pytest.mark.parametrize(
    "axes, exc, msg",
    [
        (3, ValueError, "axes=3"),
        (-1, ValueError, "axes=-1"),
        ([[0, 1], [0]], ValueError, "as many axes"),
        ([[5], [0]], ValueError, "out of bounds"),
        ([[0, 0], [0, 1]], ValueError, "repeated"),
        (1.5, TypeError, "pair of axis sequences"),
        ([["a"], [0]], TypeError, "must be an int"),
    ],
)
def test_tensordot_bad_axes(axes, exc, msg):
    with pytest.raises(exc, match=msg):
        tensordot(pt.dmatrix("a"), pt.dmatrix("b"), axes)


# --- outer / vdot ------------------------------------------------------------------------


@pytest.mark.parametrize("xs, ys", [((3,), (4,)), ((2, 3), (4,)), ((0,), (2,)), ((), (2,))])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_outer(xs, ys, dtype):
    x, y = var("x", xs, dtype), var("y", ys, dtype)
    X, Y = value(xs, dtype), value(ys, dtype)
    expected = np.outer(X, Y)
    check_close(outer(x, y).eval({x: X, y: Y}), expected, expected.dtype)
    assert outer(var("x", xs, dtype, True), var("y", ys, dtype, True)).type.shape == expected.shape


@pytest.mark.parametrize("dtype", ["float64", "complex128", "int8"])
def test_vdot(dtype):
    x, y = var("x", (2, 3), dtype), var("y", (6,), dtype)
    X, Y = value((2, 3), dtype), value((6,), dtype)
    expected = np.asarray(np.vdot(X, Y))
    check_close(vdot(x, y).eval({x: X, y: Y}), expected, expected.dtype)


# --- the public namespace ----------------------------------------------------------------


def test_exported_from_arignote_tensor():
    for name in ["dot", "matmul", "tensordot", "outer", "vecdot", "matvec", "vecmat", "dense_dot"]:
        assert getattr(pt, name) is globals().get(name, getattr(pt, name))
    assert pt.dot is dot and pt.matmul is matmul and pt.tensordot is tensordot


def test_tensordot_infer_shape():
    a, b = pt.tensor3("a"), pt.tensor3("b")
    givens = {a: value((2, 3, 4)), b: value((3, 5, 6))}
    assert_infer_shape(tensordot(a, b, [[1], [0]]), givens)
    assert_infer_shape(tensordot(a, b, 0), givens)


@pytest.mark.skipif(not hasattr(pt.math, "matmul"), reason="x @ y / x.dot not wired to products yet")
def test_methods_and_operators():
    x, y, v = pt.dmatrix("x"), pt.dmatrix("y"), pt.dvector("v")
    t = pt.tensor3("t")
    X, Y, V, T = value((2, 3)), value((3, 4)), value((3,)), value((5, 4, 3))
    givens = {x: X, y: Y, v: V, t: T}
    np.testing.assert_allclose((x @ y).eval(givens, on_unused_input="ignore"), X @ Y)
    np.testing.assert_allclose((x @ v).eval(givens, on_unused_input="ignore"), X @ V)
    np.testing.assert_allclose((v @ y).eval(givens, on_unused_input="ignore"), V @ Y)
    np.testing.assert_allclose((t @ v).eval(givens, on_unused_input="ignore"), T @ V)
    np.testing.assert_allclose((X @ y).eval(givens, on_unused_input="ignore"), X @ Y)  # __rmatmul__
    np.testing.assert_allclose(x.dot(y).eval(givens, on_unused_input="ignore"), X.dot(Y))
    np.testing.assert_allclose(t.dot(v).eval(givens, on_unused_input="ignore"), T.dot(V))
    assert isinstance((x @ y).owner.op, Dot) and isinstance((t @ t.mT).owner.op, MatMul)
