"""ExtractDiag, AllocDiag and the diagonal helpers (diag, diagonal, trace, fill_diagonal,
fill_diagonal_offset), checked against NumPy: values over dtypes and shapes, static
shapes, infer_shape, gradients, pushforwards, batching and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from arignote.gradient import DisconnectedInputError, grad, jacobian
from arignote.graph.replace import batch_graph
from arignote.graph.traversal import apply_ancestors
from arignote.tensor.batching import Batched
from arignote.tensor.diag import AllocDiag, ExtractDiag
from arignote.tensor.linalg.operands import diag_embed, diag_part
from tests.tensor.test_grad_ops import _check_pushforward, check_grad
from tests.tensor.utils import assert_infer_shape

DTYPES = ["float64", "float32", "int8", "int64", "uint8", "bool", "complex128"]


def _value(dtype: str, shape: tuple, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("complex"):
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    return (rng.random(shape) * 10).astype(dtype)


def _ops(v: Any) -> list:
    return [n.op for n in apply_ancestors([v])]


# --- ExtractDiag / diagonal ------------------------------------------------------------------

DIAGONAL_CASES = [
    ((3, 3), 0, 0, 1),
    ((3, 4), 1, 0, 1),
    ((3, 4), -2, 0, 1),
    ((4, 3), 5, 0, 1),
    ((4, 3), -4, 0, 1),
    ((0, 3), 0, 0, 1),
    ((2, 3, 4), 1, 0, 2),
    ((2, 3, 4), -1, 2, 0),
    ((2, 3, 4), 0, -1, -2),
    ((2, 3, 4, 5), 2, 1, 3),
]


@pytest.mark.parametrize("shape, offset, axis1, axis2", DIAGONAL_CASES)
def test_diagonal_values_static_shape_and_infer_shape(shape, offset, axis1, axis2):
    xv = _value("float64", shape)
    expected = np.diagonal(xv, offset, axis1, axis2)
    static = pt.tensor("s", dtype="float64", shape=shape)
    out = pt.diagonal(static, offset, axis1, axis2)
    assert out.type.shape == expected.shape
    np.testing.assert_array_equal(out.eval({static: xv}), expected)
    x = pt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    out = pt.diagonal(x, offset, axis1, axis2)
    assert out.type.shape == (None,) * expected.ndim
    np.testing.assert_array_equal(out.eval({x: xv}), expected)
    assert_infer_shape(out, {x: xv})


@pytest.mark.parametrize("dtype", DTYPES)
def test_diagonal_keeps_the_dtype(dtype):
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    xv = _value(dtype, (3, 4))
    out = pt.diagonal(x, 1)
    got = out.eval({x: xv})
    assert out.type.dtype == dtype and got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.diagonal(xv, 1))


def test_static_diagonal_length_from_one_known_length():
    x = pt.tensor("x", dtype="float64", shape=(2, None))
    assert pt.diagonal(x, -2).type.shape == (0,)  # starts below the last row
    assert pt.diagonal(x, -1).type.shape == (None,)
    y = pt.tensor("y", dtype="float64", shape=(None, 3))
    assert pt.diagonal(y, 3).type.shape == (0,)


def test_diagonal_is_a_read_only_view_unless_view_false():
    x = pt.dmatrix("x")
    xv = np.arange(9.0).reshape(3, 3)
    node = pt.diagonal(x).owner
    assert node.op.view_map == {0: [0]}
    cell = [[None]]
    node.op.perform(node, [xv], cell)
    assert np.shares_memory(cell[0][0], xv) and not cell[0][0].flags.writeable
    copy_op = ExtractDiag(view=False)
    assert copy_op.view_map == {}
    copy_op.perform(copy_op.make_node(x), [xv], cell)
    assert not np.shares_memory(cell[0][0], xv)
    np.testing.assert_array_equal(cell[0][0], [0.0, 4.0, 8.0])


def test_swapped_axes_give_one_canonical_op():
    x = pt.dtensor3("x")
    xv = _value("float64", (3, 4, 5))
    a = pt.diagonal(x, 2, 2, 0)
    b = pt.diagonal(x, -2, 0, 2)
    assert a.owner.op == b.owner.op == ExtractDiag(-2, 0, 2)
    np.testing.assert_array_equal(a.eval({x: xv}), np.diagonal(xv, 2, 2, 0))


def test_extract_diag_and_method():
    x = pt.dmatrix("x")
    xv = _value("float64", (3, 4))
    np.testing.assert_array_equal(pt.extract_diag(x).eval({x: xv}), np.diagonal(xv))
    np.testing.assert_array_equal(x.diagonal(-1).eval({x: xv}), np.diagonal(xv, -1))
    t = pt.dtensor3("t")
    tv = _value("float64", (2, 3, 4))
    np.testing.assert_array_equal(t.diagonal(1, 1, 2).eval({t: tv}), tv.diagonal(1, 1, 2))


def test_extract_diag_errors():
    with pytest.raises(ValueError, match="at least 2"):
        pt.diagonal(pt.dvector("v"))
    with pytest.raises(ValueError, match="same axis"):
        pt.diagonal(pt.dmatrix("m"), 0, 1, -1)
    with pytest.raises(ValueError, match="axis2=2 is out of range"):
        pt.diagonal(pt.dmatrix("m"), 0, 0, 2)
    with pytest.raises(TypeError, match="offset must be an int known when the graph is built"):
        pt.diagonal(pt.dmatrix("m"), pt.lscalar("k"))
    with pytest.raises(TypeError, match="offset must be an int"):
        ExtractDiag(1.5)
    with pytest.raises(ValueError, match="axis1=3 is out of range"):
        ExtractDiag(0, 3, 1)(pt.dmatrix("m"))
    with pytest.raises(ValueError, match="same axis"):
        ExtractDiag(0, 1, -1)(pt.dmatrix("m"))
    assert str(ExtractDiag(1, 0, 2)) == "ExtractDiag{offset=1, axis1=0, axis2=2, view=True}"


# --- AllocDiag / diag ------------------------------------------------------------------------

ALLOC_CASES = [
    ((3,), 0, 0, 1),
    ((3,), 2, 0, 1),
    ((3,), -1, 1, 0),
    ((0,), 1, 0, 1),
    ((2, 3), -1, 0, 2),
    ((2, 3), 1, 1, 2),
    ((2, 4, 3), 0, -1, 1),
]


@pytest.mark.parametrize("shape, offset, axis1, axis2", ALLOC_CASES)
def test_alloc_diag_is_the_inverse_of_diagonal(shape, offset, axis1, axis2):
    xv = _value("float64", shape) + 1.0
    op = AllocDiag(axis1=axis1, axis2=axis2, offset=offset)
    x = pt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    out = op(x)
    got = out.eval({x: xv})
    assert got.ndim == xv.ndim + 1
    n = shape[-1] + abs(offset)
    assert got.shape[axis1] == got.shape[axis2] == n
    rest = [s for d, s in enumerate(got.shape) if d not in (axis1 % got.ndim, axis2 % got.ndim)]
    assert tuple(rest) == shape[:-1]
    np.testing.assert_array_equal(np.diagonal(got, offset, axis1, axis2), xv)
    assert np.count_nonzero(got) == xv.size  # zeros off the diagonal
    assert_infer_shape(out, {x: xv})
    static = pt.tensor("s", dtype="float64", shape=shape)
    assert op(static).type.shape == got.shape


def test_alloc_diag_known_layout():
    v = pt.dvector("v")
    out = AllocDiag(axis1=0, axis2=2, offset=-1)(pt.dmatrix("m"))
    m = out.owner.inputs[0]
    mv = np.arange(1.0, 7.0).reshape(2, 3)
    expected = np.zeros((4, 2, 4))
    for b in range(2):
        for t in range(3):
            expected[t + 1, b, t] = mv[b, t]
    np.testing.assert_array_equal(out.eval({m: mv}), expected)
    np.testing.assert_array_equal(pt.diag(v, 1).eval({v: np.array([1.0, 2.0])}), np.diag([1.0, 2.0], 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [-2, 0, 1])
def test_diag_matches_numpy(dtype, k):
    vv = _value(dtype, (3,))
    mv = _value(dtype, (3, 4))
    v = pt.tensor("v", dtype=dtype, shape=(None,))
    m = pt.tensor("m", dtype=dtype, shape=(None, None))
    got = pt.diag(v, k).eval({v: vv})
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.diag(vv, k))
    np.testing.assert_array_equal(pt.diag(m, k).eval({m: mv}), np.diag(mv, k))
    assert pt.diag(pt.tensor("s", dtype=dtype, shape=(3,)), k).type.shape == (3 + abs(k),) * 2


def test_diag_and_alloc_diag_errors():
    with pytest.raises(ValueError, match="1-d or 2-d"):
        pt.diag(pt.dscalar("s"))
    with pytest.raises(ValueError, match="1-d or 2-d"):
        pt.diag(pt.dtensor3("t"))
    with pytest.raises(TypeError, match="k must be an int"):
        pt.diag(pt.dvector("v"), pt.lscalar("k"))
    with pytest.raises(ValueError, match="at least 1 dimension"):
        AllocDiag()(pt.dscalar("s"))
    with pytest.raises(ValueError, match="axis2=3 is out of range"):
        AllocDiag(axis1=0, axis2=3)(pt.dvector("v"))
    with pytest.raises(TypeError, match="axis1 must be an int"):
        AllocDiag(axis1=None)
    assert str(AllocDiag(offset=2)) == "AllocDiag{offset=2, axis1=0, axis2=1}"


# --- trace -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "int32", "uint8", "bool", "complex128"])
def test_trace_dtype_and_value_like_numpy(dtype):
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    xv = _value(dtype, (3, 4))
    expected = np.trace(xv, 1)
    out = pt.trace(x, 1)
    got = out.eval({x: xv})
    assert out.type.dtype == expected.dtype.name and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("shape, offset, axis1, axis2", DIAGONAL_CASES)
def test_trace_of_tensors(shape, offset, axis1, axis2):
    x = pt.tensor("x", dtype="float64", shape=shape)
    xv = _value("float64", shape)
    expected = np.trace(xv, offset, axis1, axis2)
    out = pt.trace(x, offset, axis1, axis2)
    assert out.type.shape == np.shape(expected)
    np.testing.assert_allclose(out.eval({x: xv}), expected)


def test_trace_method_is_the_linalg_trace():
    x = pt.dtensor3("x")
    xv = _value("float64", (2, 3, 3))
    np.testing.assert_allclose(x.trace().eval({x: xv}), np.trace(xv, axis1=-2, axis2=-1))
    assert pt.trace is not pt.linalg.trace


# --- gradients, pushforwards -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "shape, offset, axis1, axis2", DIAGONAL_CASES + [((3, 10), 2, 0, 1), ((3, 2), -1, 1, 0)]
)
def test_diagonal_grad(dtype, shape, offset, axis1, axis2):
    for static in (shape, (None,) * len(shape)):
        x = pt.tensor("x", dtype=dtype, shape=static)
        check_grad(lambda x: pt.diagonal(x, offset, axis1, axis2), [(x, _value(dtype, shape))])


def test_square_diagonal_grad_is_one_alloc_diag():
    x = pt.tensor("x", dtype="float64", shape=(3, 3))
    g = grad(pt.sum(pt.diagonal(x) ** 2), x)
    assert any(isinstance(op, AllocDiag) for op in _ops(g))
    xv = _value("float64", (3, 3))
    np.testing.assert_allclose(g.eval({x: xv}), np.diag(2 * np.diag(xv)))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape, offset, axis1, axis2", ALLOC_CASES)
def test_alloc_diag_grad(dtype, shape, offset, axis1, axis2):
    x = pt.tensor("x", dtype=dtype, shape=(None,) * len(shape))
    op = AllocDiag(axis1=axis1, axis2=axis2, offset=offset)
    check_grad(lambda x: op(x), [(x, _value(dtype, shape))])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_diag_and_trace_grad(dtype):
    v = pt.tensor("v", dtype=dtype, shape=(None,))
    m = pt.tensor("m", dtype=dtype, shape=(None, None))
    check_grad(lambda v: pt.diag(v, -1) ** 2, [(v, _value(dtype, (3,)))])
    check_grad(lambda m: pt.diag(m, 1) ** 2, [(m, _value(dtype, (3, 4)))])
    check_grad(lambda m: pt.trace(m, -1) ** 2, [(m, _value(dtype, (4, 3)))])


def test_second_order_through_both_ops():
    x = pt.dmatrix("x")
    xv = _value("float64", (3, 4))
    w = _value("float64", (3, 4), seed=3)
    g = grad(pt.sum(pt.diagonal(x, 1) ** 3), x)
    h = grad(pt.sum(g * pt.constant(w)), x)  # a Hessian-vector product
    expected = np.zeros((3, 4))
    for t in range(3):
        expected[t, t + 1] = 6 * xv[t, t + 1] * w[t, t + 1]
    np.testing.assert_allclose(h.eval({x: xv}), expected)


def test_pushforwards():
    x = pt.dtensor3("x")
    xv, tv = _value("float64", (2, 3, 4)), _value("float64", (2, 3, 4), seed=1)
    _check_pushforward(pt.diagonal(x, 1, 0, 2), [x], [xv], [tv])
    v = pt.dmatrix("v")
    vv, tv = _value("float64", (2, 3)), _value("float64", (2, 3), seed=1)
    _check_pushforward(AllocDiag(axis1=2, axis2=0, offset=-1)(v), [v], [vv], [tv])
    from arignote.gradient import disconnected_type

    assert isinstance(
        pt.diagonal(x).owner.op.pushforward([x], [], [disconnected_type()])[0].type,
        type(disconnected_type().type),
    )


def test_integer_input_gets_a_zero_gradient():
    x = pt.lmatrix("x")
    xv = np.arange(6).reshape(2, 3)
    cost = pt.sum(pt.diagonal(x) * 1.5)
    g = grad(cost, x)
    np.testing.assert_array_equal(g.eval({x: xv}), np.zeros((2, 3)))
    v = pt.lvector("v")
    g = grad(pt.sum(pt.diag(v) * 1.5), v)
    np.testing.assert_array_equal(g.eval({v: np.arange(3)}), np.zeros(3))


# --- batching --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build, shape",
    [
        (lambda x: pt.diagonal(x, 1), (3, 4)),
        (lambda x: pt.diagonal(x, -1, 2, 0), (3, 2, 4)),
        (lambda x: pt.diag(x, -1), (3,)),
        (lambda x: AllocDiag(axis1=2, axis2=0, offset=1)(x), (2, 3)),
        (lambda x: pt.trace(x) * x, (3, 3)),
    ],
)
def test_batch_rules(build, shape):
    x = pt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    xs = pt.tensor("xs", dtype="float64", shape=(None,) * (len(shape) + 1))
    out = build(x)
    (batched,) = batch_graph([out], {x: xs})
    assert not any(isinstance(op, Batched) for op in _ops(batched))
    xsv = _value("float64", (3, *shape))
    got = function([xs], batched)(xsv)
    single = function([x], out)
    for r in range(3):
        np.testing.assert_allclose(got[r], single(xsv[r]))


def test_vectorised_jacobian_of_diagonal():
    x = pt.dmatrix("x")
    xv = _value("float64", (3, 3))
    j = jacobian(pt.diagonal(x) ** 2, x)
    assert not any(isinstance(op, Batched) for op in _ops(j))
    expected = np.zeros((3, 3, 3))
    for t in range(3):
        expected[t, t, t] = 2 * xv[t, t]
    np.testing.assert_allclose(j.eval({x: xv}), expected)


# --- fill_diagonal ---------------------------------------------------------------------------


def _np_fill(a: np.ndarray, val: Any) -> np.ndarray:
    out = a.copy()
    np.fill_diagonal(out, val)
    return out


@pytest.mark.parametrize("shape", [(3, 3), (5, 2), (2, 5), (0, 3), (1, 1), (3, 3, 3), (2, 2, 2, 2)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128"])
def test_fill_diagonal_matches_numpy(shape, dtype):
    av = _value(dtype, shape)
    a = pt.tensor("a", dtype=dtype, shape=(None,) * len(shape))
    out = pt.fill_diagonal(a, 7)
    got = out.eval({a: av})
    assert out.type.dtype == dtype and got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, _np_fill(av, 7))
    np.testing.assert_array_equal(av, _value(dtype, shape))  # the input is not written
    static = pt.tensor("s", dtype=dtype, shape=shape)
    assert pt.fill_diagonal(static, 7).type.shape == shape


def test_fill_diagonal_value_dtype_rules():
    f32 = pt.fmatrix("f")
    assert pt.fill_diagonal(f32, 0.5).type.dtype == "float32"  # exact in float32
    assert pt.fill_diagonal(pt.dmatrix("d"), pt.iscalar("i")).type.dtype == "float64"
    assert pt.fill_diagonal(pt.lmatrix("l"), pt.bscalar("b")).type.dtype == "int64"
    with pytest.raises(TypeError, match="dtype float64 cannot be written into f of dtype float32"):
        pt.fill_diagonal(f32, 0.1)
    with pytest.raises(TypeError, match="without loss"):
        pt.fill_diagonal(pt.imatrix("i"), pt.lscalar("l"))
    with pytest.raises(TypeError, match="without loss"):
        pt.fill_diagonal(pt.imatrix("i"), 5.5)
    with pytest.raises(TypeError, match="without loss"):
        pt.fill_diagonal(pt.dmatrix("d"), np.complex128(1 + 2j))
    with pytest.raises(TypeError, match="without loss"):
        pt.fill_diagonal(pt.bmatrix("b"), 300)
    nan = pt.fill_diagonal(f32, np.float64("nan"))
    assert nan.type.dtype == "float32"
    assert np.isnan(nan.eval({f32: np.zeros((2, 2), "float32")})).sum() == 2
    s = pt.iscalar("s")
    out = pt.fill_diagonal(pt.dmatrix("d"), s)
    np.testing.assert_array_equal(out.eval({"d": np.zeros((2, 2)), s: 3}), 3 * np.eye(2))


def test_fill_diagonal_errors():
    with pytest.raises(TypeError, match="at least 2 dimensions"):
        pt.fill_diagonal(pt.dvector("v"), 1.0)
    with pytest.raises(TypeError, match="val must be a scalar"):
        pt.fill_diagonal(pt.dmatrix("m"), pt.dvector("v"))
    with pytest.raises(ValueError, match="same length"):
        pt.fill_diagonal(pt.tensor("t", dtype="float64", shape=(2, 3, None)), 1.0)
    t = pt.dtensor3("t")
    with pytest.raises(ValueError, match=r"dimension 1 is 3, expected 2"):
        pt.fill_diagonal(t, 1.0).eval({t: np.zeros((2, 3, 2))})


@pytest.mark.parametrize("offset", [-4, -3, -1, 0, 2, 3, 4, 7])
@pytest.mark.parametrize("symbolic", [False, True])
def test_fill_diagonal_offset_matches_numpy(offset, symbolic):
    av = _value("float64", (3, 4))
    expected = av.copy()
    expected[np.eye(3, 4, offset, dtype=bool)] = 9.0
    a = pt.dmatrix("a")
    k = pt.lscalar("k")
    out = pt.fill_diagonal_offset(a, 9.0, k if symbolic else offset)
    got = function([a, k], out, on_unused_input="ignore")(av, offset)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(av, _value("float64", (3, 4)))


def test_fill_diagonal_offset_errors():
    with pytest.raises(TypeError, match="a must be a matrix"):
        pt.fill_diagonal_offset(pt.dtensor3("t"), 1.0, 0)
    with pytest.raises(TypeError, match="offset must be a 0-d integer"):
        pt.fill_diagonal_offset(pt.dmatrix("m"), 1.0, 1.0)
    with pytest.raises(TypeError, match="offset must be an integer"):
        pt.fill_diagonal_offset(pt.dmatrix("m"), 1.0, True)
    with pytest.raises(TypeError, match="without loss"):
        pt.fill_diagonal_offset(pt.imatrix("m"), 1.5, 0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fill_diagonal_grads(dtype):
    a = pt.tensor("a", dtype=dtype, shape=(None, None))
    t = pt.tensor("t", dtype=dtype, shape=(None, None, None))
    s = pt.tensor("s", dtype=dtype, shape=())
    k = pt.lscalar("k")
    check_grad(lambda a, s: pt.fill_diagonal(a, s) ** 2, [(a, _value(dtype, (3, 4))), (s, 2.0)])
    check_grad(lambda t, s: pt.fill_diagonal(t, s) ** 2, [(t, _value(dtype, (3, 3, 3))), (s, 2.0)])
    for offset in (-1, 2, 5):
        check_grad(
            lambda a, s, k: pt.fill_diagonal_offset(a, s, k) ** 2,
            [(a, _value(dtype, (3, 4))), (s, 2.0), (k, offset)],
            wrt=[0, 1],
        )
        check_grad(
            lambda a, s, k=offset: pt.fill_diagonal_offset(a, s, k) * a,
            [(a, _value(dtype, (4, 3))), (s, 2.0)],
        )


def test_fill_diagonal_offset_is_disconnected_from_the_offset():
    a, k = pt.dmatrix("a"), pt.lscalar("k")
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(pt.fill_diagonal_offset(a, 1.0, k)), k)


# --- the linear algebra helpers use the Ops --------------------------------------------------


def test_linalg_diag_helpers_use_the_ops():
    v = pt.dvector("v")
    m = pt.dmatrix("m")
    e, p = diag_embed(v), diag_part(m)
    assert isinstance(e.owner.op, AllocDiag) and isinstance(p.owner.op, ExtractDiag)
    np.testing.assert_array_equal(e.eval({v: np.array([1.0, 2.0])}), np.diag([1.0, 2.0]))
    mv = _value("float64", (3, 3))
    np.testing.assert_array_equal(p.eval({m: mv}), np.diag(mv))
    s = pt.dtensor3("s")
    sv = _value("float64", (2, 3, 3))
    np.testing.assert_array_equal(diag_part(s).eval({s: sv}), np.diagonal(sv, axis1=-2, axis2=-1))


def test_alloc_diag_folds_only_small_constants():
    small = pt.diag(pt.constant(np.arange(3.0)))
    big = pt.diag(pt.constant(np.arange(100.0)))
    sym = pt.diag(pt.dvector("v"))
    assert small.owner.op.do_constant_folding(None, small.owner)
    assert not big.owner.op.do_constant_folding(None, big.owner)
    assert not sym.owner.op.do_constant_folding(None, sym.owner)
    np.testing.assert_array_equal(function([], big)(), np.diag(np.arange(100.0)))
