"""Gemm, Gemv and Ger (``arignote.tensor.blas``): values against NumPy, the in-place
variants, the errors naming the input, ``infer_shape`` and the gradients (finite
differences; the pushforwards are in the pushforward catalogue)."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.gradient import verify_grad
from arignote.tensor import blas
from arignote.tensor.blas import (
    Gemm,
    Gemv,
    Ger,
    gemm_inplace,
    gemm_no_inplace,
    gemv_inplace,
    gemv_no_inplace,
    ger,
    ger_destructive,
)
from tests.tensor.utils import assert_infer_shape

#: no rewrites: the node as built runs (through the Python backend's BLAS thunk)
UNREWRITTEN = arignote.Mode(optimizer=None)
DTYPES = ["float32", "float64"]


def _rand(*shape, dtype="float64", seed=0):
    return np.random.default_rng(seed + sum(shape)).normal(size=shape).astype(dtype)


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}


def _eval(out, inputs, values):
    """The compiled node's value, checked against ``perform`` called directly (the
    definition) on copies of the values (an in-place Op overwrites its first input)."""
    node = out.owner
    given = dict(zip(inputs, values))
    cell = [None]
    node.op.perform(node, [np.array(given[v]) for v in node.inputs], [cell])
    if node.op.inplace:  # its first input is given as mutable
        target = node.inputs[0]
        inputs = [arignote.In(v, mutable=True) if v is target else v for v in inputs]
    f = arignote.function(inputs, out, mode=UNREWRITTEN, accept_inplace=True)
    got = f(*[np.array(v) for v in values])
    np.testing.assert_allclose(got, cell[0], **_tol(out.type.dtype))
    assert got.dtype == cell[0].dtype
    return got


def _sym(dtype):
    return (
        pt.matrix("z", dtype=dtype),
        pt.scalar("a", dtype=dtype),
        pt.matrix("x", dtype=dtype),
        pt.matrix("y", dtype=dtype),
        pt.scalar("b", dtype=dtype),
    )


def test_the_instances_are_pytensors():
    assert gemm_no_inplace == Gemm(inplace=False) and gemm_inplace == Gemm(inplace=True)
    assert gemv_no_inplace == Gemv() and gemv_inplace == Gemv(inplace=True)
    assert ger == Ger() and ger_destructive == Ger(inplace=True)
    assert gemm_inplace.destroy_map == {0: [0]} and gemm_no_inplace.destroy_map == {}
    assert gemv_inplace.destroy_map == {0: [0]} and ger_destructive.destroy_map == {0: [0]}
    assert Gemm.__props__ == Gemv.__props__ == Ger.__props__ == ("inplace",)
    assert hash(Gemm(True)) == hash(gemm_inplace) and gemm_inplace != gemm_no_inplace
    assert blas.Gemm is Gemm


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha, beta", [(2.0, 0.5), (1.0, 1.0), (-0.1, 1.0), (3.0, 0.0)])
def test_gemm_values(dtype, alpha, beta):
    z, a, x, y, b = _sym(dtype)
    Z, X, Y = _rand(3, 4, dtype=dtype), _rand(3, 5, dtype=dtype, seed=1), _rand(5, 4, dtype=dtype, seed=2)
    A, B = np.asarray(alpha, dtype), np.asarray(beta, dtype)
    for op in (gemm_no_inplace, gemm_inplace):
        got = _eval(op(z, a, x, y, b), [z, a, x, y, b], [Z.copy(), A, X, Y, B])
        assert got.dtype == dtype and got.shape == (3, 4)
        np.testing.assert_allclose(got, B * Z + A * (X @ Y), **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_and_ger_values(dtype):
    y, A, x = pt.vector("y", dtype=dtype), pt.matrix("A", dtype=dtype), pt.vector("x", dtype=dtype)
    a, b = pt.scalar("a", dtype=dtype), pt.scalar("b", dtype=dtype)
    Y, M, X = _rand(3, dtype=dtype), _rand(3, 4, dtype=dtype, seed=1), _rand(4, dtype=dtype, seed=2)
    al, be = np.asarray(1.5, dtype), np.asarray(-2.0, dtype)
    for op in (gemv_no_inplace, gemv_inplace):
        got = _eval(op(y, a, A, x, b), [y, a, A, x, b], [Y.copy(), al, M, X, be])
        assert got.dtype == dtype
        np.testing.assert_allclose(got, be * Y + al * (M @ X), **_tol(dtype))
    u = pt.vector("u", dtype=dtype)
    U = _rand(3, dtype=dtype, seed=3)
    for op in (ger, ger_destructive):
        got = _eval(op(A, a, u, x), [A, a, u, x], [M.copy(), al, U, X])
        assert got.dtype == dtype
        np.testing.assert_allclose(got, M + al * np.outer(U, X), **_tol(dtype))


def test_in_place_writes_into_the_first_input_and_the_copy_does_not():
    dt = "float64"
    Z, X, Y = _rand(3, 4), _rand(3, 5, seed=1), _rand(5, 4, seed=2)
    want = 0.5 * Z + 2.0 * X @ Y
    for op, same in ((gemm_inplace, True), (gemm_no_inplace, False)):
        zin = Z.copy()
        node = op.make_node(zin, 2.0, X, Y, 0.5)
        cell = [None]
        op.perform(node, [zin, np.asarray(2.0), X, Y, np.asarray(0.5)], [cell])
        np.testing.assert_allclose(cell[0], want)
        assert (cell[0] is zin) is same
        np.testing.assert_array_equal(zin, want if same else Z)
    # z aliasing an operand: the product is computed before z is written
    M = _rand(4, 4)
    zin = M.copy()
    cell = [None]
    gemm_inplace.perform(
        gemm_inplace.make_node(zin, 1.0, zin, M, 1.0), [zin, np.asarray(1.0), zin, M, np.asarray(1.0)], [cell]
    )
    np.testing.assert_allclose(cell[0], M + M @ M)
    assert np.dtype(dt) == cell[0].dtype


def test_beta_zero_does_not_read_z():
    z, a, x, y, b = _sym("float64")
    Z = np.full((2, 2), np.nan)
    got = _eval(gemm_no_inplace(z, a, x, y, b), [z, a, x, y, b], [Z, 1.0, np.eye(2), np.eye(2), 0.0])
    np.testing.assert_array_equal(got, np.eye(2))


def test_python_numbers_become_constants_of_the_dtype():
    z, _, x, y, _ = _sym("float32")
    node = gemm_no_inplace(z, 0.1, x, y, 1).owner
    assert node.inputs[1].type.dtype == node.inputs[4].type.dtype == "float32"
    assert node.outputs[0].type.dtype == "float32"


def test_static_shapes_combine():
    z = pt.matrix("z", dtype="float64", shape=(None, 4))
    x = pt.matrix("x", dtype="float64", shape=(3, None))
    y = pt.dmatrix("y")
    assert gemm_no_inplace(z, 1.0, x, y, 1.0).type.shape == (3, 4)
    A = pt.matrix("A", dtype="float64", shape=(None, 5))
    assert gemv_no_inplace(pt.dvector(), 1.0, A, pt.dvector(), 1.0).type.shape == (None,)
    assert ger(A, 1.0, pt.vector(dtype="float64", shape=(2,)), pt.dvector()).type.shape == (2, 5)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: gemm_no_inplace(pt.dvector("z"), 1.0, pt.dmatrix(), pt.dmatrix(), 1.0), "input z"),
        (lambda: gemm_no_inplace(pt.dmatrix(), 1.0, pt.dtensor3("x"), pt.dmatrix(), 1.0), "input x"),
        (lambda: gemm_no_inplace(pt.imatrix("z"), 1, pt.imatrix(), pt.imatrix(), 1), "float32 or float64"),
        (lambda: gemm_no_inplace(pt.fmatrix(), 1.0, pt.dmatrix("x"), pt.fmatrix(), 1.0), "input x"),
        (lambda: gemm_no_inplace(pt.fmatrix(), pt.dscalar("a"), pt.fmatrix(), pt.fmatrix(), 1.0), "alpha"),
        (lambda: gemm_no_inplace(pt.dmatrix(), pt.dvector("a"), pt.dmatrix(), pt.dmatrix(), 1.0), "alpha"),
        (lambda: gemm_no_inplace(pt.dmatrix(), 1.0, pt.dmatrix(), pt.dmatrix(), "b"), "beta"),
        (lambda: gemv_no_inplace(pt.dmatrix("y"), 1.0, pt.dmatrix(), pt.dvector(), 1.0), "input y"),
        (lambda: gemv_no_inplace(pt.dvector(), 1.0, pt.dvector("A"), pt.dvector(), 1.0), "input A"),
        (lambda: ger(pt.dmatrix(), 1.0, pt.dmatrix("x"), pt.dvector()), "input x"),
        (lambda: ger(pt.cmatrix("A"), 1.0, pt.cvector(), pt.cvector()), "float32 or float64"),
    ],
)
def test_bad_inputs_name_the_input(build, message):
    with pytest.raises(TypeError, match=message):
        build()


def test_static_shape_mismatch_is_an_error():
    M = lambda *s: pt.matrix(dtype="float64", shape=s)  # noqa: E731
    with pytest.raises(ValueError, match="inner lengths"):
        gemm_no_inplace(M(2, 2), 1.0, M(2, 3), M(4, 2), 1.0)
    with pytest.raises(ValueError, match="rows.*z has length 2 and x has length 3"):
        gemm_no_inplace(M(2, 2), 1.0, M(3, 3), M(3, 2), 1.0)
    with pytest.raises(ValueError, match="columns"):
        ger(M(2, 2), 1.0, pt.vector(dtype="float64", shape=(2,)), pt.vector(dtype="float64", shape=(3,)))


def test_runtime_shape_mismatch_is_an_error():
    z, a, x, y, b = _sym("float64")
    f = arignote.function([z, a, x, y, b], gemm_no_inplace(z, a, x, y, b), mode=UNREWRITTEN)
    with pytest.raises(ValueError, match="inner lengths"):
        f(np.zeros((2, 2)), 1.0, np.zeros((2, 3)), np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="rows"):
        f(np.zeros((3, 2)), 1.0, np.zeros((2, 3)), np.zeros((3, 2)), 1.0)
    A, u, v = pt.dmatrix("A"), pt.dvector("u"), pt.dvector("v")
    g = arignote.function([A, u, v], gemv_no_inplace(u, 1.0, A, v, 1.0), mode=UNREWRITTEN)
    with pytest.raises(ValueError, match="Gemv"):
        g(np.zeros((2, 3)), np.zeros(2), np.zeros(2))
    h = arignote.function([A, u, v], ger(A, 1.0, u, v), mode=UNREWRITTEN)
    with pytest.raises(ValueError, match="Ger: the columns"):
        h(np.zeros((2, 3)), np.zeros(2), np.zeros(2))


def test_empty_operands():
    z, a, x, y, b = _sym("float64")
    got = _eval(
        gemm_no_inplace(z, a, x, y, b),
        [z, a, x, y, b],
        [np.ones((2, 3)), 2.0, np.zeros((2, 0)), np.zeros((0, 3)), 0.5],
    )
    np.testing.assert_array_equal(got, np.full((2, 3), 0.5))


def test_infer_shape():
    z, a, x, y, b = _sym("float64")
    vals = {z: _rand(3, 4), a: 1.0, x: _rand(3, 5), y: _rand(5, 4), b: 1.0}
    assert_infer_shape(gemm_no_inplace(z, a, x, y, b), vals)
    A, u, v = pt.dmatrix("A"), pt.dvector("u"), pt.dvector("v")
    assert_infer_shape(
        gemv_no_inplace(u, a, A, v, b), {u: _rand(3), a: 1.0, A: _rand(3, 4), v: _rand(4), b: 2.0}
    )
    assert_infer_shape(ger(A, a, u, v), {A: _rand(3, 4), a: 1.0, u: _rand(3), v: _rand(4)})
    f = arignote.function([z, a, x, y, b], gemm_no_inplace(z, a, x, y, b).shape)
    assert tuple(f(*vals.values())) == (3, 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients(dtype):
    rng = np.random.default_rng(7)
    r = lambda *s: rng.normal(size=s).astype(dtype)  # noqa: E731
    s = lambda v: np.asarray(v, dtype)  # noqa: E731
    verify_grad(gemm_no_inplace, [r(3, 4), s(0.7), r(3, 2), r(2, 4), s(-1.3)], rng=rng)
    verify_grad(gemv_no_inplace, [r(3), s(0.7), r(3, 4), r(4), s(1.1)], rng=rng)
    verify_grad(ger, [r(3, 4), s(-0.4), r(3), r(4)], rng=rng)
