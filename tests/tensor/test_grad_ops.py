"""Gradient rules of the tensor Ops (shape, alloc, join, products, special, sort, extra_ops,
math): each pullback against central finite differences of ``sum(op(...) * w)``, in float64
and (looser) float32; shape-only inputs disconnected; integer-valued Ops give zeros; the
pushforwards against finite-difference Jacobian-vector products.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import arignote.scalar as ps
import arignote.tensor as pt
from arignote import function
from arignote.gradient import DisconnectedInputError, DisconnectedType, disconnected_type, grad
from arignote.graph.basic import Constant
from arignote.tensor.alloc import Alloc, Eye, Repeat, RepeatGrad
from arignote.tensor.basic import ScalarFromTensor, TensorFromScalar, scalar_from_tensor, tensor_from_scalar
from arignote.tensor.extra_ops import CumOp, Flip, Nonzero
from arignote.tensor.join import Join, Split
from arignote.tensor.math import All, Any_, Argmax, Argmin
from arignote.tensor.products import Dot, MatMul
from arignote.tensor.ranges import ARange
from arignote.tensor.shape import MakeVector, Reshape, Shape, Shape_i, SpecifyShape
from arignote.tensor.sort import ArgSortOp, PermuteAlongAxis, SortOp
from arignote.tensor.special import LogSoftmax, Softmax
from tests.tensor.utils import assert_infer_shape

# --- finite differences ------------------------------------------------------------------------

TOLS = {
    "float64": {"eps": 1e-6, "rtol": 1e-5, "atol": 1e-6},
    "float32": {"eps": 1e-2, "rtol": 2e-2, "atol": 2e-2},
}


def _fd(f: Callable[..., Any], values: list[np.ndarray], i: int, eps: float) -> np.ndarray:
    """Central differences of the scalar ``f(*values)`` with respect to ``values[i]``."""
    vals = [np.array(v, copy=True) for v in values]
    x = vals[i]
    out = np.zeros(x.shape, dtype="float64")
    for idx in np.ndindex(*x.shape):
        old = x[idx]
        x[idx] = old + eps
        up, f_up = float(x[idx]), float(f(*vals))
        x[idx] = old - eps
        down, f_down = float(x[idx]), float(f(*vals))
        x[idx] = old
        out[idx] = (f_up - f_down) / (up - down)
    return out


def check_grad(
    build: Callable[..., Any],
    inputs: Sequence[tuple[Any, Any]],
    wrt: Sequence[int] | None = None,
    dtype: str | None = None,
    seed: int = 0,
) -> list[np.ndarray]:
    """``grad(sum(build(*vars) * w), vars[wrt])`` against central finite differences.

    ``inputs`` pairs each Variable with its test value; ``wrt`` defaults to the float
    inputs. Returns the symbolic gradients' values.
    """
    variables = [v for v, _ in inputs]
    values = [np.asarray(val, dtype=v.type.dtype) for v, val in inputs]
    if wrt is None:
        wrt = [i for i, v in enumerate(variables) if v.type.dtype.startswith("float")]
    dtype = dtype or variables[wrt[0]].type.dtype
    tol = TOLS[dtype]
    out = build(*variables)
    out_value = function(variables, out, on_unused_input="ignore")(*values)
    w_dtype = out.type.dtype if out.type.dtype.startswith("float") else "float64"
    w = pt.constant(np.random.default_rng(seed).normal(size=np.shape(out_value)).astype(w_dtype))
    cost = pt.sum(out * w)
    grads = grad(cost, [variables[i] for i in wrt])
    fn = function(variables, [cost, *grads], on_unused_input="ignore")
    results = fn(*values)
    got = results[1:]
    for i, g, g_var in zip(wrt, got, grads):
        x = variables[i]
        assert g.shape == values[i].shape, f"gradient of input {i} has shape {g.shape}"
        assert g_var.type.ndim == x.type.ndim
        if x.type.dtype.startswith("float"):
            assert g.dtype == x.type.dtype, f"gradient of input {i} is {g.dtype}, input is {x.type.dtype}"
        expected = _fd(lambda *v: fn(*v)[0], values, i, tol["eps"])
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        np.testing.assert_allclose(
            g, expected, rtol=tol["rtol"], atol=tol["atol"] * scale, err_msg=f"input {i}"
        )
    return got


def rand(*shape: int, seed: int = 1, dtype: str = "float64") -> np.ndarray:
    return np.random.default_rng(seed + 17 * len(shape)).normal(size=shape).astype(dtype)


def distinct(*shape: int, seed: int = 2) -> np.ndarray:
    """Values with no ties (for sort), well apart."""
    n = int(np.prod(shape))
    return np.random.default_rng(seed).permutation(n).reshape(shape).astype("float64") * 0.5 + 0.1


def ev(out: Any, givens: dict) -> np.ndarray:
    """``out.eval(givens)``, where the gradient graph may not need every given input."""
    return function(list(givens), out, on_unused_input="ignore")(*givens.values())


DTYPES = ["float64", "float32"]


def tensor(name: str, shape: tuple, dtype: str = "float64") -> Any:
    return pt.tensor(name, dtype=dtype, shape=shape)


# --- shape.py ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "in_shape, new_shape",
    [((2, 3), (3, 2)), ((6,), (2, 3)), ((2, 3, 4), (-1, 4)), ((), (1, 1)), ((4, 1), (4,))],
)
def test_reshape_grad(dtype: str, in_shape: tuple, new_shape: tuple) -> None:
    x = tensor("x", (None,) * len(in_shape), dtype)
    check_grad(lambda x: pt.reshape(x, new_shape), [(x, rand(*in_shape, dtype=dtype))])


def test_reshape_symbolic_shape_is_disconnected() -> None:
    x = pt.dmatrix("x")
    n = pt.lscalar("n")
    y = pt.reshape(x, (n, -1))
    assert isinstance(y.owner.op, Reshape)
    check_grad(lambda x, n: pt.reshape(x, (n, -1)), [(x, rand(2, 6)), (n, 4)], wrt=[0])
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(y), n)
    zero = grad(pt.sum(y), n, disconnected_inputs="ignore")
    assert float(zero.eval({n: 3})) == 0.0


def test_reshape_grad_keeps_static_shape() -> None:
    x = pt.tensor("x", dtype="float64", shape=(1, 3))
    g = grad(pt.sum(pt.reshape(x, (3,)) ** 2), x)
    assert g.type.shape == (1, 3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_specify_shape_grad(dtype: str) -> None:
    x = tensor("x", (None, None), dtype)
    n = pt.lscalar("n")
    check_grad(
        lambda x, n: pt.specify_shape(x, (n, None)) * 2.0, [(x, rand(2, 3, dtype=dtype)), (n, 2)], wrt=[0]
    )
    y = pt.specify_shape(x, (n, None))
    assert isinstance(y.owner.op, SpecifyShape)
    g = grad(pt.sum(y), x)
    assert g.owner is not None
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(y), n)


def test_specify_shape_grad_asserts_the_shape() -> None:
    x = pt.dmatrix("x")
    y = pt.specify_shape(x, (2, 3))
    g = grad(pt.sum(y * y), x)
    assert g.type.shape == (2, 3)
    np.testing.assert_allclose(g.eval({x: np.ones((2, 3))}), 2 * np.ones((2, 3)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_make_vector_grad(dtype: str) -> None:
    a, b, c = (pt.scalar(name, dtype=dtype) for name in "abc")
    v = pt.stack([a, b, c])
    assert isinstance(v.owner.op, MakeVector)
    check_grad(
        lambda a, b, c: pt.stack([a, b, c]) ** 2,
        [(a, np.asarray(0.5, dtype)), (b, np.asarray(-1.5, dtype)), (c, np.asarray(2.0, dtype))],
    )


def test_make_vector_of_mixed_inputs_and_repeated_input() -> None:
    a = pt.dscalar("a")
    b = pt.fscalar("b")  # upcast to float64 inside the vector; its gradient is float32
    check_grad(lambda a, b: pt.stack([a, b, a]) * pt.stack([a, a, b]), [(a, 1.5), (b, -0.5)], wrt=[0])
    g = grad(pt.sum(pt.stack([a, b])), b)
    assert g.type.dtype == "float32"


def test_make_vector_of_integers_has_zero_gradient() -> None:
    i = pt.lscalar("i")
    x = pt.dscalar("x")
    v = pt.stack([i, i])
    assert v.type.dtype == "int64"
    g = grad(pt.sum(v * x), [i, x])
    assert float(g[0].eval({i: 3})) == 0.0
    assert float(g[1].eval({i: 3, x: 2.0})) == 6.0


@pytest.mark.parametrize("make", [lambda x: x.shape, lambda x: Shape_i(1)(x)])
def test_shape_and_shape_i_are_disconnected(make: Callable) -> None:
    x = pt.dmatrix("x")
    cost = pt.sum(make(x) * 1.0)
    assert isinstance(make(x).owner.op, (Shape, Shape_i))
    with pytest.raises(DisconnectedInputError):
        grad(cost, x)
    g = grad(cost, x, disconnected_inputs="ignore")
    np.testing.assert_array_equal(g.eval({x: np.ones((2, 3))}), np.zeros((2, 3)))


def test_shape_grad_when_also_used_by_value() -> None:
    x = pt.dvector("x")
    cost = pt.sum(x * x) * pt.cast(Shape_i(0)(x), "float64")
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(grad(cost, x).eval({x: v}), 2 * v * 3)


# --- basic.py: scalar <-> tensor -------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_tensor_round_trip_grad(dtype: str) -> None:
    x = pt.scalar("x", dtype=dtype)
    check_grad(lambda x: tensor_from_scalar(scalar_from_tensor(x)) ** 3, [(x, np.asarray(1.25, dtype))])
    s = scalar_from_tensor(x)
    assert isinstance(s.owner.op, ScalarFromTensor)
    assert isinstance(tensor_from_scalar(s).owner.op, TensorFromScalar)


def test_grad_with_respect_to_a_scalar_variable() -> None:
    s = ps.float64("s")
    t = tensor_from_scalar(s)
    g = grad(pt.sum(t * t * 3.0), s)
    assert isinstance(g.type, ps.ScalarType) and g.type.dtype == "float64"
    assert float(function([s], g)(2.0)) == pytest.approx(12.0)


def test_integer_scalar_gets_float_zero_gradient() -> None:
    # as in PyTensor: the tensor of an integer scalar is integer-valued, so no gradient
    # passes back to the scalar (a zero in floatX), while the integer tensor itself gets
    # the gradient of cast(t) * x as if it were real (the seeds' example 5)
    i = ps.int64("i")
    x = pt.dscalar("x")
    t = tensor_from_scalar(i)
    cost = pt.cast(t, "float64") * x
    gi, gt = grad(cost, i), grad(cost, t)
    assert gi.type.dtype.startswith("float") and gt.type.dtype.startswith("float")
    assert float(function([i], gi)(3)) == 0.0
    assert float(function([i, x], gt, on_unused_input="ignore")(3, 2.0)) == pytest.approx(2.0)


# --- alloc.py --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "v_static, v_value_shape, lengths",
    [
        ((None,), (3,), (2, 3)),
        ((1, None), (1, 3), (4, 3)),
        ((), (), (2, 3)),
        ((None, 1), (2, 1), (5, 2, 4)),
        ((None, None), (2, 3), (2, 3)),
    ],
)
def test_alloc_grad(dtype: str, v_static: tuple, v_value_shape: tuple, lengths: tuple) -> None:
    v = tensor("v", v_static, dtype)
    out = pt.alloc(v, *lengths)
    assert isinstance(out.owner.op, Alloc)
    check_grad(lambda v: pt.alloc(v, *lengths), [(v, rand(*v_value_shape, dtype=dtype))])
    g = grad(pt.sum(out), v)
    assert [s == 1 for s in g.type.shape] == [s == 1 for s in v.type.shape]


def test_alloc_symbolic_lengths_are_disconnected() -> None:
    v = pt.dvector("v")
    n = pt.lscalar("n")
    out = pt.alloc(v, n, 3)
    check_grad(lambda v, n: pt.alloc(v, n, 3), [(v, rand(3)), (n, 4)], wrt=[0])
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(out), n)
    g = grad(pt.sum(out), [v, n], disconnected_inputs="ignore")
    assert float(g[1].eval({n: 2})) == 0.0


def test_alloc_grad_keeps_broadcastable_pattern() -> None:
    v = pt.tensor("v", dtype="float64", shape=(1, None))
    g = grad(pt.sum(pt.alloc(v, 4, 3) ** 2), v)
    assert g.type.shape[0] == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_zeros_ones_full_like_grad(dtype: str) -> None:
    x = tensor("x", (None, None), dtype)
    check_grad(lambda x: pt.full_like(x, 2.0) * x + pt.ones_like(x) * x, [(x, rand(2, 3, dtype=dtype))])


def test_eye_is_disconnected() -> None:
    n = pt.lscalar("n")
    x = pt.dscalar("x")
    e = pt.eye(n)
    assert isinstance(e.owner.op, Eye)
    cost = pt.sum(e * x)
    with pytest.raises(DisconnectedInputError):
        grad(cost, n)
    assert float(grad(cost, x).eval({n: 3, x: 1.0})) == 3.0
    assert float(grad(cost, n, disconnected_inputs="ignore").eval({n: 3})) == 0.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_arange_grad(dtype: str) -> None:
    start, stop, step = (pt.scalar(name, dtype=dtype) for name in ("start", "stop", "step"))
    out = pt.arange(start, stop, step)
    assert isinstance(out.owner.op, ARange)
    values = [np.asarray(v, dtype) for v in (0.25, 3.1, 0.5)]
    check_grad(lambda a, b, c: pt.arange(a, b, c) ** 2, list(zip((start, stop, step), values)), wrt=[0, 2])
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(out), stop)


def test_integer_arange_has_zero_gradient() -> None:
    start = pt.lscalar("start")
    x = pt.dscalar("x")
    g = grad(pt.sum(pt.arange(start, 10) * x), start)
    assert g.type.dtype.startswith("float")
    assert float(g.eval({start: 2})) == 0.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, repeats, axis",
    [
        ((3, 4), [2, 0, 3], 0),
        ((3, 4), [1, 2, 1, 3], 1),
        ((3, 4), 2, 0),
        ((3, 4), 3, None),
        ((2, 3, 2), [0, 0, 4], 1),
        ((4,), [2], 0),
    ],
)
def test_repeat_grad(dtype: str, shape: tuple, repeats: Any, axis: Any) -> None:
    x = tensor("x", (None,) * len(shape), dtype)
    check_grad(lambda x: pt.repeat(x, repeats, axis=axis), [(x, rand(*shape, dtype=dtype))])


def test_repeat_op_grad_and_disconnected_repeats() -> None:
    x = pt.dmatrix("x")
    r = pt.lvector("r")
    out = Repeat(0)(x, r)
    check_grad(lambda x, r: Repeat(0)(x, r) ** 2, [(x, rand(3, 2)), (r, [3, 1, 2])], wrt=[0])
    r1 = pt.tensor("r1", dtype="int64", shape=(1,))  # one entry for every slice
    check_grad(lambda x, r: Repeat(1)(x, r) ** 2, [(x, rand(3, 2)), (r1, [4])], wrt=[0])
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(out), r)


def test_repeat_grad_op_and_its_own_pullback() -> None:
    g = pt.dmatrix("g")
    r = pt.lvector("r")
    out = RepeatGrad(0)(g, r, 3)
    assert out.type.shape == (3, None)
    value = function([g, r], out)(np.arange(12.0).reshape(6, 2), np.array([2, 0, 4]))
    np.testing.assert_allclose(value, [[2.0, 4.0], [0.0, 0.0], [28.0, 32.0]])
    # RepeatGrad is linear in g; its pullback is Repeat
    check_grad(lambda g, r: RepeatGrad(1)(g, r, 2), [(g, rand(2, 5)), (r, [2, 3])], wrt=[0])
    r1 = pt.tensor("r1", dtype="int64", shape=(1,))
    check_grad(lambda g, r: RepeatGrad(0)(g, r, 3), [(g, rand(6, 2)), (r1, [2])], wrt=[0])


def test_repeat_second_order() -> None:
    x = pt.dvector("x")
    cost = pt.sum(pt.repeat(x, [2, 1, 3]) ** 3)
    gx = grad(cost, x)
    hv = grad(pt.sum(gx * pt.constant(np.array([1.0, -1.0, 2.0]))), x)
    v = np.array([0.5, -1.0, 2.0])
    # cost = sum r_i x_i^3: gradient 3 r_i x_i^2, Hessian diag 6 r_i x_i
    np.testing.assert_allclose(hv.eval({x: v}), 6 * np.array([2, 1, 3]) * v * np.array([1.0, -1.0, 2.0]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, reps", [((2, 3), (2, 2)), ((3,), (2, 1, 2)), ((2, 1, 2), 3)])
def test_tile_grad(dtype: str, shape: tuple, reps: Any) -> None:
    x = tensor("x", (None,) * len(shape), dtype)
    check_grad(lambda x: pt.tile(x, reps), [(x, rand(*shape, dtype=dtype))])


# --- join.py ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shapes, axis",
    [([(2, 3), (1, 3)], 0), ([(2, 3), (2, 4), (2, 1)], 1), ([(2, 3), (2, 2)], -1), ([(3,), (2,)], 0)],
)
def test_join_grad(dtype: str, shapes: list, axis: int) -> None:
    vs = [tensor(f"x{i}", (None,) * len(s), dtype) for i, s in enumerate(shapes)]
    out = pt.concatenate(vs, axis=axis)
    assert isinstance(out.owner.op, Join)
    check_grad(
        lambda *xs: pt.concatenate(list(xs), axis=axis) ** 2,
        [(v, rand(*s, seed=i, dtype=dtype)) for i, (v, s) in enumerate(zip(vs, shapes))],
    )


def test_join_symbolic_axis_is_disconnected() -> None:
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    ax = pt.lscalar("ax")
    out = pt.join(ax, a, b)
    for axis, shapes in ((0, [(2, 3), (1, 3)]), (1, [(2, 3), (2, 2)]), (-1, [(2, 1), (2, 2)])):
        check_grad(
            lambda a, b, ax: pt.join(ax, a, b) ** 2,
            [(a, rand(*shapes[0])), (b, rand(*shapes[1], seed=5)), (ax, axis)],
            wrt=[0, 1],
        )
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(out), ax)


def test_join_mixed_dtypes_and_static_ones() -> None:
    a = pt.tensor("a", dtype="float32", shape=(1, 3))
    b = pt.dmatrix("b")
    ga, gb = grad(pt.sum(pt.concatenate([a, b]) ** 2), [a, b])
    assert ga.type.dtype == "float32" and ga.type.shape == (1, 3)
    assert gb.type.dtype == "float64"
    check_grad(
        lambda a, b: pt.concatenate([a, b]) ** 2, [(a, rand(1, 3, dtype="float32")), (b, rand(2, 3))], wrt=[1]
    )


def test_join_of_an_integer_and_a_float() -> None:
    i = pt.lvector("i")
    x = pt.dvector("x")
    gi = grad(pt.sum(pt.concatenate([i, x]) * pt.concatenate([x, x])), i)
    assert gi.type.dtype.startswith("float")
    np.testing.assert_allclose(ev(gi, {i: np.array([1, 2]), x: np.array([3.0, 4.0])}), [3.0, 4.0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_stack_grad(dtype: str) -> None:
    a, b = tensor("a", (None, None), dtype), tensor("b", (None, None), dtype)
    for axis in (0, 1, 2):
        check_grad(
            lambda a, b, axis=axis: pt.stack([a, b], axis=axis) ** 2,
            [(a, rand(2, 3, dtype=dtype)), (b, rand(2, 3, seed=3, dtype=dtype))],
        )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "sizes, axis, used", [([1, 2, 3], 0, [0, 1, 2]), ([2, 2], 1, [1]), ([3, 0, 1], 0, [0, 2])]
)
def test_split_grad(dtype: str, sizes: list, axis: int, used: list) -> None:
    shape = [4, 4]
    shape[axis] = sum(sizes)
    x = tensor("x", (None, None), dtype)

    def build(x: Any) -> Any:
        pieces = pt.split(x, sizes, axis=axis)
        assert isinstance(pieces[0].owner.op, Split)
        return pt.concatenate([pieces[k] ** 2 for k in used], axis=axis)

    check_grad(build, [(x, rand(*shape, dtype=dtype))])


def test_split_sizes_and_axis_are_disconnected() -> None:
    x = pt.dvector("x")
    s = pt.lvector("s")
    ax = pt.lscalar("ax")
    a, b = pt.split(x, s, 2, axis=ax)
    cost = pt.sum(a**2) + pt.sum(b * 3.0)
    check_grad(
        lambda x, s, ax: pt.split(x, s, 2, axis=ax)[1] ** 2, [(x, rand(5)), (s, [2, 3]), (ax, 0)], wrt=[0]
    )
    for v in (s, ax):
        with pytest.raises(DisconnectedInputError):
            grad(cost, v)
    g = grad(cost, x).eval({x: np.arange(5.0), s: np.array([2, 3]), ax: 0})
    np.testing.assert_allclose(g, [0.0, 2.0, 3.0, 3.0, 3.0])


# --- products.py -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "x_shape, y_shape", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((1, 3), (3, 1))]
)
def test_dot_grad(dtype: str, x_shape: tuple, y_shape: tuple) -> None:
    x = tensor("x", (None,) * len(x_shape), dtype)
    y = tensor("y", (None,) * len(y_shape), dtype)
    assert isinstance(pt.dot(x, y).owner.op, Dot)
    check_grad(pt.dot, [(x, rand(*x_shape, dtype=dtype)), (y, rand(*y_shape, seed=4, dtype=dtype))])


def test_dot_grad_mixed_dtypes_and_integer_operand() -> None:
    x = pt.fmatrix("x")
    y = pt.dmatrix("y")
    gx, gy = grad(pt.sum(pt.dot(x, y)), [x, y])
    assert gx.type.dtype == "float32" and gy.type.dtype == "float64"
    i = pt.lvector("i")
    v = pt.dvector("v")
    gi = grad(pt.dot(i, v), i)  # the seeds' example 2: as if i were real
    np.testing.assert_allclose(ev(gi, {i: np.array([1, 2]), v: np.array([3.0, 4.0])}), [3.0, 4.0])
    j = pt.lvector("j")
    gj = grad(pt.dot(i, j) * 1.0, j)  # example 1: integer output, zero gradient
    np.testing.assert_array_equal(ev(gj, {i: np.array([1, 2]), j: np.array([3, 4])}), [0.0, 0.0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "x_static, x_shape, y_static, y_shape",
    [
        ((None, None, None), (2, 2, 3), (None, None, None), (2, 3, 4)),
        ((None, None, None), (5, 2, 3), (1, None, None), (1, 3, 4)),
        ((1, None, None), (1, 2, 3), (None, None, None), (4, 3, 2)),
        ((None, None), (2, 3), (None, None, None), (4, 3, 2)),
        ((None, 1, None, None), (3, 1, 2, 3), (1, None, None, None), (1, 2, 3, 2)),
    ],
)
def test_matmul_grad(dtype: str, x_static: tuple, x_shape: tuple, y_static: tuple, y_shape: tuple) -> None:
    x = tensor("x", x_static, dtype)
    y = tensor("y", y_static, dtype)
    out = pt.matmul(x, y)
    assert isinstance(out.owner.op, MatMul)
    check_grad(pt.matmul, [(x, rand(*x_shape, dtype=dtype)), (y, rand(*y_shape, seed=6, dtype=dtype))])
    gx, gy = grad(pt.sum(out), [x, y])
    assert gx.type.shape[: len(x_static) - 2] == tuple(1 if s == 1 else None for s in x_static[:-2])
    assert gy.type.shape[: len(y_static) - 2] == tuple(1 if s == 1 else None for s in y_static[:-2])


@pytest.mark.parametrize(
    "x_shape, y_shape", [((3,), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 3), (3,)), ((3,), (3,))]
)
def test_matmul_with_vectors_grad(x_shape: tuple, y_shape: tuple) -> None:
    x = tensor("x", (None,) * len(x_shape))
    y = tensor("y", (None,) * len(y_shape))
    check_grad(pt.matmul, [(x, rand(*x_shape)), (y, rand(*y_shape, seed=6))])


def test_tensordot_and_friends_grad() -> None:
    a = pt.tensor3("a", dtype="float64")
    b = pt.tensor3("b", dtype="float64")
    check_grad(
        lambda a, b: pt.tensordot(a, b, [[1, 2], [0, 1]]), [(a, rand(2, 3, 4)), (b, rand(3, 4, 2, seed=8))]
    )
    u, v = pt.dvector("u"), pt.dvector("v")
    check_grad(pt.outer, [(u, rand(3)), (v, rand(2, seed=9))])
    m = pt.dmatrix("m")
    check_grad(pt.vecdot, [(m, rand(2, 3)), (u, rand(3, seed=9))])


# --- special.py ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [pt.special.softmax, pt.special.log_softmax])
@pytest.mark.parametrize(
    "shape, axis", [((5,), None), ((2, 4), -1), ((2, 4), 0), ((2, 3, 2), (0, 2)), ((3, 2), None)]
)
def test_softmax_grads(dtype: str, fn: Callable, shape: tuple, axis: Any) -> None:
    x = tensor("x", (None,) * len(shape), dtype)
    assert isinstance(fn(x, axis=axis).owner.op, (Softmax, LogSoftmax))
    check_grad(lambda x: fn(x, axis=axis), [(x, rand(*shape, dtype=dtype))])


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_grads_are_finite_for_large_inputs(dtype: str) -> None:
    x = tensor("x", (None, None), dtype)
    value = np.array([[1e3, 1e3 - 1.0, -1e3], [1e3, 0.0, 1e3]], dtype=dtype)
    w = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    for fn in (pt.special.softmax, pt.special.log_softmax):
        g = grad(pt.sum(fn(x, axis=-1) * w), x).eval({x: value})
        assert np.all(np.isfinite(g)), (fn, g)
        # against the same gradient at the shifted input (softmax is shift invariant per row)
        shifted = (value.astype("float64") - value.astype("float64").max(axis=-1, keepdims=True)).astype(
            dtype
        )
        g_ref = grad(pt.sum(fn(x, axis=-1) * w), x).eval({x: shifted})
        np.testing.assert_allclose(g, g_ref, rtol=1e-5, atol=1e-6)


def test_softmax_grad_matches_formula() -> None:
    x = pt.dmatrix("x")
    v = rand(3, 4)
    w = rand(3, 4, seed=5)
    s = np.exp(v - v.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    g = grad(pt.sum(pt.special.softmax(x, axis=-1) * w), x).eval({x: v})
    np.testing.assert_allclose(g, w * s - s * np.sum(w * s, -1, keepdims=True), rtol=1e-12)
    gl = grad(pt.sum(pt.special.log_softmax(x, axis=-1) * w), x).eval({x: v})
    np.testing.assert_allclose(gl, w - s * np.sum(w, -1, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("fn", [pt.special.softmax, pt.special.log_softmax])
def test_softmax_second_order(fn: Callable) -> None:
    x = pt.dvector("x")
    w = pt.constant(rand(4, seed=3))
    u = pt.constant(rand(4, seed=4))

    def grad_dot_u(x: Any) -> Any:
        return pt.sum(grad(pt.sum(fn(x) * w), x) * u)

    check_grad(grad_dot_u, [(x, rand(4))])


def test_softmax_of_integers_grad_is_float() -> None:
    i = pt.lvector("i")
    g = grad(pt.sum(pt.special.softmax(i) * pt.constant(np.array([1.0, 2.0]))), i)
    assert g.type.dtype.startswith("float")
    assert np.all(np.isfinite(g.eval({i: np.array([1, 2])})))


# --- sort.py ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, axis, kind", [((5,), -1, None), ((3, 4), 0, None), ((3, 4), 1, "stable"), ((2, 3, 2), None, None)]
)
def test_sort_grad(dtype: str, shape: tuple, axis: Any, kind: Any) -> None:
    x = tensor("x", (None,) * len(shape), dtype)
    assert isinstance(pt.sort(x, axis=axis, kind=kind).owner.op, SortOp)
    check_grad(lambda x: pt.sort(x, axis=axis, kind=kind) ** 2, [(x, distinct(*shape).astype(dtype))])


def test_sort_symbolic_axis_and_disconnected_axis() -> None:
    x = pt.dmatrix("x")
    ax = pt.lscalar("ax")
    for axis in (0, 1, -2):
        check_grad(lambda x, ax: pt.sort(x, axis=ax) ** 2, [(x, distinct(3, 4)), (ax, axis)], wrt=[0])
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(pt.sort(x, axis=ax)), ax)


def test_sort_grad_with_ties_is_a_subgradient() -> None:
    x = pt.dvector("x")
    w = np.array([1.0, 2.0, 3.0])
    g = grad(pt.sum(pt.sort(x) * w), x).eval({x: np.array([2.0, 1.0, 2.0])})
    assert sorted(g.tolist()) == [1.0, 2.0, 3.0]
    assert g[1] == 1.0


def test_permute_along_axis_op() -> None:
    x = pt.dmatrix("x")
    p = pt.lmatrix("p")
    perm = np.array([[2, 0, 1], [1, 2, 0]])
    out = PermuteAlongAxis()(x, p, 1)
    v = rand(2, 3)
    np.testing.assert_allclose(out.eval({x: v, p: perm}), np.take_along_axis(v, perm, 1))
    check_grad(lambda x, p: PermuteAlongAxis()(x, p, 1) ** 2, [(x, v), (p, perm)], wrt=[0])
    check_grad(
        lambda x, p: PermuteAlongAxis()(x, p, 0) ** 2,
        [(x, v), (p, np.array([[1, 0, 1], [0, 1, 0]]))],
        wrt=[0],
    )
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(out), p)
    # second order: the pullback is a permutation again
    gx = grad(pt.sum(out**3), x)
    h = grad(pt.sum(gx), x).eval({x: v, p: perm})
    np.testing.assert_allclose(h, 6 * v)


def test_argsort_gradient_is_zero() -> None:
    x = pt.dmatrix("x")
    out = pt.argsort(x, axis=0)
    assert isinstance(out.owner.op, ArgSortOp)
    g = grad(pt.sum(out * pt.constant(rand(3, 2))), x)
    assert g.type.dtype == "float64"
    np.testing.assert_array_equal(g.eval({x: distinct(3, 2)}), np.zeros((3, 2)))


# --- extra_ops.py ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, axis", [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 2), None), ((2, 3, 2), 1)]
)
def test_cumsum_grad(dtype: str, shape: tuple, axis: Any) -> None:
    x = tensor("x", (None,) * len(shape), dtype)
    assert isinstance(pt.cumsum(x, axis=axis).owner.op, CumOp)
    check_grad(lambda x: pt.cumsum(x, axis=axis), [(x, rand(*shape, dtype=dtype))])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, axis", [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 2), None)])
def test_cumprod_grad(dtype: str, shape: tuple, axis: Any) -> None:
    x = tensor("x", (None,) * len(shape), dtype)
    value = rand(*shape, dtype=dtype) * 0.5 + np.asarray(1.0, dtype)
    check_grad(lambda x: pt.cumprod(x, axis=axis), [(x, value)])


@pytest.mark.parametrize(
    "value",
    [
        [2.0, 0.0, 3.0, 4.0],
        [0.0, 2.0, 3.0, -1.5],
        [1.5, 2.0, 3.0, 0.0],
        [2.0, 0.0, 3.0, 0.0, 5.0],
        [0.0, 0.0, 2.0],
        [0.0, 0.0, 1.0, 2.0, 3.0],
        [0.0, 2.0, 0.0, 3.0, 0.0],
        [0.0],
    ],
)
def test_cumprod_grad_with_zeros(value: list) -> None:
    x = pt.dvector("x")
    got = check_grad(pt.cumprod, [(x, value)])
    assert np.all(np.isfinite(got[0]))


def test_cumprod_grad_with_zeros_in_a_matrix() -> None:
    x = pt.dmatrix("x")
    value = np.array([[1.5, 0.0, 2.0], [0.0, 3.0, 0.0], [2.0, -1.0, 0.5]])
    for axis in (0, 1):
        check_grad(lambda x, axis=axis: pt.cumprod(x, axis=axis), [(x, value)])


@pytest.mark.parametrize(
    "value",
    [
        [2.0, 3.0, -1.0, 1.5],
        [2.0, 0.0, -1.0, 1.5],
        [0.0, 0.0, 1.0, 2.0],
        [1.0, 2.0, 0.0, 0.0],
        [0.0, 2.0, 0.0, 3.0],
    ],
)
def test_cumprod_second_order_with_zeros(value: list) -> None:
    x = pt.dvector("x")
    w = pt.constant(rand(4, seed=3))
    u = pt.constant(rand(4, seed=4))

    def grad_dot_u(x: Any) -> Any:
        return pt.sum(grad(pt.sum(pt.cumprod(x) * w), x) * u)

    check_grad(grad_dot_u, [(x, value)])


def test_integer_cumsum_has_zero_gradient() -> None:
    i = pt.lvector("i")
    g = grad(pt.sum(pt.cumsum(i) * 1.5), i)
    assert g.type.dtype.startswith("float")
    np.testing.assert_array_equal(g.eval({i: np.array([1, 2, 3])}), [0.0, 0.0, 0.0])


def test_flip_op_and_cumsum_second_order() -> None:
    x = pt.dmatrix("x")
    v = rand(2, 3)
    np.testing.assert_allclose(Flip(1)(x).eval({x: v}), v[:, ::-1])
    check_grad(lambda x: Flip(0)(x) ** 2, [(x, v)])
    # second order through the reversed cumsum
    cost = pt.sum(pt.cumsum(x, axis=1) ** 2)
    h = grad(pt.sum(grad(cost, x)), x).eval({x: v})
    # sum(grad) = 2 * sum_j (j + 1) * cumsum(x)_j, so d/dx_k = 2 * sum_{j >= k} (j + 1)
    np.testing.assert_allclose(h, np.tile([12.0, 10.0, 6.0], (2, 1)))


def test_nonzero_is_disconnected() -> None:
    x = pt.dvector("x")
    (idx,) = pt.nonzero(x)
    assert isinstance(idx.owner.op, Nonzero)
    cost = pt.sum(idx * 1.0)
    with pytest.raises(DisconnectedInputError):
        grad(cost, x)
    g = grad(cost, x, disconnected_inputs="ignore")
    np.testing.assert_array_equal(g.eval({x: np.array([1.0, 0.0, 2.0])}), [0.0, 0.0, 0.0])


# --- math.py ---------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [pt.argmax, pt.argmin])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_argmax_argmin_gradient_is_zero(make: Callable, axis: Any) -> None:
    x = pt.dmatrix("x")
    out = make(x, axis=axis)
    assert isinstance(out.owner.op, (Argmax, Argmin))
    g = grad(pt.sum(out * 1.5) + pt.sum(x) * 0.0, x)
    assert g.type.dtype == "float64"
    np.testing.assert_array_equal(g.eval({x: rand(3, 2)}), np.zeros((3, 2)))
    # alone in the cost: connected (not disconnected), zero
    np.testing.assert_array_equal(grad(pt.sum(out * 1.5), x).eval({x: rand(3, 2)}), np.zeros((3, 2)))


@pytest.mark.parametrize("make", [pt.all, pt.any])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_all_any_gradient_is_zero(make: Callable, dtype: str) -> None:
    x = pt.matrix("x", dtype=dtype)
    out = make(x, axis=0)
    assert isinstance(out.owner.op, (All, Any_))
    g = grad(pt.sum(out * 2.0), x)
    assert g.type.dtype.startswith("float")
    if dtype.startswith("float"):
        assert g.type.dtype == dtype
    np.testing.assert_array_equal(g.eval({x: np.ones((2, 3), dtype=dtype)}), np.zeros((2, 3)))


# --- several Ops in one graph ----------------------------------------------------------------


def test_chain_of_rules() -> None:
    x = pt.dmatrix("x")
    y = pt.dvector("y")

    def build(x: Any, y: Any) -> Any:
        a = pt.concatenate([x, pt.alloc(y, 1, 3)], axis=0)  # (3, 3)
        b = pt.special.softmax(pt.dot(a, pt.reshape(x, (3, 2))), axis=-1)
        c = pt.cumsum(pt.sort(b, axis=0), axis=1)
        return pt.repeat(c, [1, 2, 0], axis=0)

    check_grad(build, [(x, rand(2, 3)), (y, rand(3, seed=4))])


# --- pushforwards ----------------------------------------------------------------------------


def _check_pushforward(out: Any, inputs: list, values: list, tangents: list, eps: float = 1e-6) -> None:
    """``op.pushforward`` of ``out``'s node, at the point ``values`` of ``inputs`` and in the
    direction ``tangents`` (one per input of the node; None: no tangent), against central
    differences of the node's Op."""
    node = out.owner
    k_out = node.outputs.index(out)
    evs = [
        disconnected_type() if t is None else pt.constant(np.asarray(t, dtype=i.type.dtype))
        for i, t in zip(node.inputs, tangents)
    ]
    jvp = node.op.pushforward(list(node.inputs), list(node.outputs), evs)[k_out]
    got = function(inputs, jvp, on_unused_input="ignore")(*values)
    free = [k for k, i in enumerate(node.inputs) if not isinstance(i, Constant)]
    base = function(inputs, [node.inputs[k] for k in free], on_unused_input="ignore")(*values)
    args = list(node.inputs)
    for k in free:
        args[k] = node.inputs[k].type()
    perturbed = function([args[k] for k in free], node.op.make_node(*args).outputs[k_out])

    def at(step: float) -> np.ndarray:
        moved = [
            b if tangents[k] is None else b + step * np.asarray(tangents[k], dtype=b.dtype)
            for b, k in zip(base, free)
        ]
        return np.asarray(perturbed(*moved), dtype="float64")

    expected = (at(eps) - at(-eps)) / (2 * eps)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "case",
    [
        "reshape",
        "specify_shape",
        "alloc",
        "repeat",
        "join",
        "split",
        "dot_mm",
        "dot_vm",
        "matmul",
        "softmax",
        "log_softmax",
        "cumsum",
        "sort",
        "flip",
        "make_vector",
        "arange",
        "repeat_grad",
    ],
)
def test_pushforward(case: str) -> None:
    x = pt.dmatrix("x")
    y = pt.dmatrix("y")
    v = pt.dvector("v")
    xv, yv, vv = rand(2, 3), rand(3, 4, seed=3), rand(3, seed=4)
    tx, ty, tv = rand(2, 3, seed=7), rand(3, 4, seed=8), rand(3, seed=9)
    if case == "reshape":
        _check_pushforward(pt.reshape(x, (3, 2)), [x], [xv], [tx, None])
    elif case == "specify_shape":
        _check_pushforward(pt.specify_shape(x, (2, 3)), [x], [xv], [tx, None, None])
    elif case == "alloc":
        _check_pushforward(pt.alloc(v, 2, 3), [v], [vv], [tv, None, None])
    elif case == "repeat":
        _check_pushforward(Repeat(1)(x, pt.constant(np.array([1, 0, 2]))), [x], [xv], [tx, None])
    elif case == "join":
        z = pt.dmatrix("z")
        out = pt.concatenate([x, z], axis=0)
        _check_pushforward(out, [x, z], [xv, rand(1, 3, seed=5)], [None, tx, rand(1, 3, seed=6)])
        _check_pushforward(out, [x, z], [xv, rand(1, 3, seed=5)], [None, None, rand(1, 3, seed=6)])
    elif case == "split":
        a, b = pt.split(v, [1, 2])
        _check_pushforward(b, [v], [vv], [tv, None, None])
    elif case == "dot_mm":
        _check_pushforward(pt.dot(x, y), [x, y], [xv, yv], [tx, ty])
        _check_pushforward(pt.dot(x, y), [x, y], [xv, yv], [None, ty])
    elif case == "dot_vm":
        _check_pushforward(pt.dot(v, y), [v, y], [vv, yv], [tv, ty])
    elif case == "matmul":
        a = pt.tensor3("a", dtype="float64")
        b = pt.tensor3("b", dtype="float64")
        _check_pushforward(
            pt.matmul(a, b),
            [a, b],
            [rand(2, 2, 3), rand(2, 3, 4, seed=2)],
            [rand(2, 2, 3, seed=5), rand(2, 3, 4, seed=6)],
        )
    elif case == "softmax":
        _check_pushforward(pt.special.softmax(x, axis=-1), [x], [xv], [tx])
    elif case == "log_softmax":
        _check_pushforward(pt.special.log_softmax(x, axis=0), [x], [xv], [tx])
    elif case == "cumsum":
        _check_pushforward(pt.cumsum(x, axis=1), [x], [xv], [tx])
    elif case == "sort":
        _check_pushforward(pt.sort(x, axis=1), [x], [distinct(2, 3)], [tx, None])
    elif case == "flip":
        _check_pushforward(Flip(0)(x), [x], [xv], [tx])
    elif case == "make_vector":
        a, b = pt.dscalar("a"), pt.dscalar("b")
        _check_pushforward(pt.stack([a, b]), [a, b], [1.0, 2.0], [0.5, None])
    elif case == "repeat_grad":
        _check_pushforward(RepeatGrad(1)(y, pt.constant(np.array([1, 3])), 2), [y], [yv], [ty, None, None])
    elif case == "arange":
        a, b = pt.dscalar("a"), pt.dscalar("b")
        out = pt.arange(a, 3.1, b)
        _check_pushforward(out, [a, b], [0.25, 0.5], [0.01, None, -0.02])
        _check_pushforward(out, [a, b], [0.25, 0.5], [None, None, 0.03])


def test_infer_shape_of_the_gradient_ops() -> None:
    g = pt.dmatrix("g")
    r = pt.lvector("r")
    n = pt.lscalar("n")
    givens = {g: rand(6, 2), r: np.array([2, 0, 4]), n: 3}
    assert_infer_shape(RepeatGrad(0)(g, r, n), givens)
    assert_infer_shape(Flip(1)(g), {g: rand(2, 3)})
    p = pt.lmatrix("p")
    assert_infer_shape(PermuteAlongAxis()(g, p, 0), {g: rand(2, 3), p: np.array([[1, 0, 1], [0, 1, 0]])})


def test_pushforward_all_disconnected() -> None:
    x = pt.dmatrix("x")
    out = pt.reshape(x, (3, 2))
    (r,) = out.owner.op.pushforward(out.owner.inputs, out.owner.outputs, [disconnected_type()] * 2)
    assert isinstance(r.type, DisconnectedType)
    s = x.shape
    (r,) = s.owner.op.pushforward(s.owner.inputs, s.owner.outputs, [pt.constant(np.ones((2, 3)))])
    assert isinstance(r.type, DisconnectedType)


@pytest.mark.parametrize(
    "build, shapes",
    [
        (lambda x: pt.reshape(x, (3, 2)), [(2, 3)]),
        (lambda x: pt.alloc(x, 4, 2, 3), [(2, 3)]),
        (lambda x, y: pt.dot(x, y), [(2, 3), (3, 2)]),
        (lambda x, y: pt.matmul(x, y), [(2, 2, 3), (2, 3, 2)]),
        (lambda x, y: pt.concatenate([x, y], axis=1), [(2, 3), (2, 1)]),
        (lambda x: pt.special.softmax(x, axis=-1), [(2, 3)]),
        (lambda x: pt.special.log_softmax(x, axis=None), [(2, 3)]),
        (lambda x: pt.cumsum(x, axis=0), [(2, 3)]),
        (lambda x: pt.cumprod(x, axis=1), [(2, 3)]),
        (lambda x: pt.sort(x, axis=1), [(2, 3)]),
        (lambda x: pt.split(x, [2, 1], 2, axis=1)[0], [(2, 3)]),
    ],
)
def test_op_pushforwards_agree_with_two_pullbacks(build: Callable, shapes: list) -> None:
    from arignote import gradient

    if "use_op_pushforward" not in getattr(gradient.pushforward, "__code__", ()).co_varnames:
        pytest.skip("arignote.gradient.pushforward has no use_op_pushforward")
    xs = [pt.tensor(f"x{k}", dtype="float64", shape=(None,) * len(s)) for k, s in enumerate(shapes)]
    values = [distinct(*s, seed=k) for k, s in enumerate(shapes)]
    tangents = [pt.constant(rand(*s, seed=10 + k)) for k, s in enumerate(shapes)]
    out = build(*xs)
    direct = gradient.pushforward(out, xs, tangents, use_op_pushforward=None)
    twice = gradient.pushforward(out, xs, tangents, use_op_pushforward=False)
    np.testing.assert_allclose(
        ev(direct, dict(zip(xs, values))), ev(twice, dict(zip(xs, values))), rtol=1e-10
    )
    if not isinstance(out.owner.op, CumOp) or out.owner.op.mode == "add":
        gradient.pushforward(out, xs, tangents, use_op_pushforward=True)  # the Op's own rule


# --- verify_grad, when arignote.gradient has it --------------------------------------------


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda x: pt.reshape(x, (6,)), [(2, 3)]),
        (lambda x, y: pt.dot(x, y), [(2, 3), (3, 2)]),
        (lambda x, y: pt.matmul(x, y), [(2, 2, 3), (2, 3, 2)]),
        (lambda x: pt.special.softmax(x, axis=-1), [(2, 3)]),
        (lambda x: pt.special.log_softmax(x, axis=0), [(2, 3)]),
        (lambda x: pt.cumprod(x, axis=1), [(2, 3)]),
        (lambda x: pt.repeat(x, [1, 2], axis=0), [(2, 3)]),
        (lambda x, y: pt.concatenate([x, y], axis=1), [(2, 3), (2, 1)]),
        (lambda x: pt.split(x, [1, 2], 2, axis=1)[1], [(2, 3)]),
        (lambda x: pt.alloc(x, 2, 3), [(3,)]),
        (lambda x: pt.sort(x, axis=0), [(3, 2)]),
        (lambda x: pt.tile(x, (2, 1)), [(2, 3)]),
        (lambda a, b: pt.stack([a, b]), [(), ()]),
    ],
)
def test_verify_grad(fn: Callable, shapes: list) -> None:
    from arignote import gradient

    verify_grad = getattr(gradient, "verify_grad", None)
    if verify_grad is None:
        pytest.skip("arignote.gradient.verify_grad is not there yet")
    rng = np.random.default_rng(42)
    verify_grad(fn, [rng.normal(size=s) + 2.0 for s in shapes], rng=rng)
