"""Pushforward catalogue, part 1: the array Ops (shape, allocation, joins, indexing, sorting,
reductions, products, softmax, the gradient-changing identities, Print, IfElse,
OpFromGraph). Each builder takes a float dtype and returns a :class:`Case`; the checks
are in ``test_pushforward_catalogue_harness.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote
import arignote.scalar as ps
import arignote.tensor as pt
from arignote._gradient.ops import ViewOp, grad_clip, grad_scale, zero_grad
from arignote.assumptions import assume
from arignote.compile.builders import OpFromGraph, SymbolicOp
from arignote.compile.ops import DeepCopyOp
from arignote.ifelse import ifelse
from arignote.printing.print_op import Print
from arignote.tensor.alloc import Eye, Repeat, RepeatGrad
from arignote.tensor.basic import scalar_from_tensor, tensor_from_scalar
from arignote.tensor.blas import gemm_no_inplace, gemv_no_inplace, ger
from arignote.tensor.checks import CheckValues
from arignote.tensor.elemwise import CAReduce
from arignote.tensor.extra_ops import Flip
from arignote.tensor.products import MatMul
from arignote.tensor.raising import Assert, CheckAndRaise
from arignote.tensor.ranges import ARange
from arignote.tensor.sort import PermuteAlongAxis
from arignote.tensor.symbolic import TensorSymbolicOp
from tests.test_pushforward_catalogue_harness import (
    Builder,
    Case,
    case_params,
    distinct,
    integer_outputs,
    rand,
    run_case,
    run_each_input,
    run_integer_outputs,
    several_inputs,
)


def T(name: str, shape: tuple, dtype: str) -> Any:
    """A tensor Variable of ``dtype`` with unknown lengths (``shape`` gives the ndim only)."""
    return pt.tensor(name, dtype=dtype, shape=(None,) * len(shape))


def unary(fn: Any, shape: tuple = (3, 4), values: Any = None, **kw: Any) -> Builder:
    """A case ``fn(x)`` for one float tensor ``x`` (random values unless ``values``)."""

    def build(dtype: str) -> Case:
        x = T("x", shape, dtype)
        out = fn(x)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        val = rand(*shape, dtype=dtype) if values is None else np.asarray(values, dtype=dtype)
        return Case([x], [val], outs, **kw)

    return build


def binary(fn: Any, shape_a: tuple, shape_b: tuple, **kw: Any) -> Builder:
    def build(dtype: str) -> Case:
        a, b = T("a", shape_a, dtype), T("b", shape_b, dtype)
        out = fn(a, b)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        return Case([a, b], [rand(*shape_a, dtype=dtype), rand(*shape_b, seed=1, dtype=dtype)], outs, **kw)

    return build


def index_of(f: Any) -> Any:
    """An int64 index computed from a float (truncation: locally constant, so its tangent is 0)."""
    return pt.cast(f, "int64")


# --- shape.py, basic.py --------------------------------------------------------------------


def _reshape_symbolic(dtype: str) -> Case:
    x, n = T("x", (2, 6), dtype), pt.lscalar("n")
    return Case([x, n], [rand(2, 6, dtype=dtype), 4], [pt.reshape(x, (n, -1))])


def _make_vector(dtype: str) -> Case:
    a, b = pt.scalar("a", dtype=dtype), pt.scalar("b", dtype=dtype)
    return Case([a, b], [np.asarray(0.5, dtype), np.asarray(-1.5, dtype)], [pt.make_vector(a, b, a * b)])


def _scalar_from_tensor(dtype: str) -> Case:
    s = pt.scalar("s", dtype=dtype)
    return Case([s], [np.asarray(0.7, dtype)], [scalar_from_tensor(s * s)])


def _tensor_from_scalar(dtype: str) -> Case:
    s = pt.scalar("s", dtype=dtype)
    out = tensor_from_scalar(scalar_from_tensor(s)) * s
    return Case([s], [np.asarray(0.3, dtype)], [out])


def _squeeze(dtype: str) -> Case:
    x = pt.tensor("x", dtype=dtype, shape=(None, 1, None))
    return Case([x], [rand(3, 1, 2, dtype=dtype)], [pt.squeeze(x)])


SHAPE_CASES: dict[str, list[Builder]] = {
    "arignote.tensor.shape.Reshape": [unary(lambda x: pt.reshape(x, (4, 3))), _reshape_symbolic],
    "arignote.tensor.shape.SpecifyShape": [unary(lambda x: pt.specify_shape(x, (3, None)))],
    "arignote.tensor.shape.Shape": [unary(lambda x: pt.shape(x))],
    "arignote.tensor.shape.Shape_i": [unary(lambda x: pt.shape_i(x, 1))],
    "arignote.tensor.shape.MakeVector": [_make_vector],
    "arignote.tensor.conversion.ScalarFromTensor": [_scalar_from_tensor],
    "arignote.tensor.conversion.TensorFromScalar": [_tensor_from_scalar],
    "arignote.tensor.elemwise.DimShuffle": [
        unary(lambda x: x.T),
        unary(lambda x: pt.expand_dims(x, (0, 2))),
        _squeeze,
    ],
}


# --- alloc.py ----------------------------------------------------------------------------------


def _alloc_symbolic(dtype: str) -> Case:
    s, n = pt.scalar("s", dtype=dtype), pt.lscalar("n")
    return Case([s, n], [np.asarray(1.5, dtype), 3], [pt.alloc(s, n, 2)])


def _arange(dtype: str) -> Case:
    start, stop, step = (pt.scalar(k, dtype=dtype) for k in ("start", "stop", "step"))
    out = ARange(dtype)(start, stop, step)
    vals = [np.asarray(v, dtype) for v in (0.3, 4.1, 0.7)]  # 6 entries, far from a 7th
    return Case([start, stop, step], vals, [out])


def _eye(dtype: str) -> Case:
    f = pt.scalar("f", dtype=dtype)
    n = index_of(f)
    return Case([f], [np.asarray(3.25, dtype)], [Eye(dtype)(n, n + 1, index_of(f - 3))])


def _repeat(dtype: str) -> Case:
    x, r = T("x", (3, 2), dtype), pt.lvector("r")
    return Case([x, r], [rand(3, 2, dtype=dtype), np.array([1, 0, 3])], [Repeat(0)(x, r)])


def _repeat_grad(dtype: str) -> Case:
    g, r = T("g", (2, 5), dtype), pt.lvector("r")
    return Case([g, r], [rand(2, 5, dtype=dtype), np.array([2, 3])], [RepeatGrad(1)(g, r, 2)])


ALLOC_CASES: dict[str, list[Builder]] = {
    "arignote.tensor.alloc.Alloc": [
        unary(lambda v: pt.alloc(v, 2, 4), shape=(4,)),
        unary(lambda x: pt.alloc(x, 2, 3, 1), shape=(3, 1)),
        _alloc_symbolic,
    ],
    "arignote.tensor.ranges.ARange": [_arange],
    "arignote.tensor.alloc.Eye": [_eye],
    "arignote.tensor.alloc.Repeat": [_repeat],
    "arignote.tensor.alloc.RepeatGrad": [_repeat_grad],
}


# --- join.py -------------------------------------------------------------------------------------


def _join_three(dtype: str) -> Case:
    a, b, c = T("a", (2, 3), dtype), T("b", (1, 3), dtype), T("c", (2, 3), dtype)
    vals = [rand(2, 3, dtype=dtype), rand(1, 3, seed=1, dtype=dtype), rand(2, 3, seed=2, dtype=dtype)]
    return Case([a, b, c], vals, [pt.concatenate([a, b, c], axis=0)])


def _join_symbolic_axis(dtype: str) -> Case:
    a, b, ax = T("a", (2, 3), dtype), T("b", (2, 1), dtype), pt.lscalar("axis")
    vals = [rand(2, 3, dtype=dtype), rand(2, 1, seed=1, dtype=dtype), 1]
    return Case([a, b, ax], vals, [pt.join(ax, a, b)])


def _split(dtype: str) -> Case:
    x = T("x", (6, 2), dtype)
    return Case([x], [rand(6, 2, dtype=dtype)], pt.split(x, [1, 3, 2], 3, axis=0))


def _split_symbolic(dtype: str) -> Case:
    x, sizes = T("x", (5,), dtype), pt.lvector("sizes")
    return Case([x, sizes], [rand(5, dtype=dtype), np.array([2, 0, 3])], pt.split(x, sizes, 3))


JOIN_CASES: dict[str, list[Builder]] = {
    "arignote.tensor.join.Join": [
        binary(lambda a, b: pt.concatenate([a, b], axis=1), (2, 3), (2, 4)),
        _join_three,
        _join_symbolic_axis,
    ],
    "arignote.tensor.join.Split": [_split, _split_symbolic],
}


# --- subtensor.py, subtensor_advanced.py --------------------------------------------------------


def _subtensor_symbolic(dtype: str) -> Case:
    x, i = T("x", (4, 3), dtype), pt.lscalar("i")
    return Case([x, i], [rand(4, 3, dtype=dtype), 1], [x[i:, i]])


def _inc(fn: Any, x_shape: tuple, y_shape: tuple, index: Any, y_static: tuple | None = None) -> Builder:
    """``fn(index(x), y)``: inc_subtensor or set_subtensor of ``y`` into a part of ``x``
    (``y_static``: y's static shape, to broadcast it along a length 1)."""

    def build(dtype: str) -> Case:
        x = T("x", x_shape, dtype)
        y = pt.tensor("y", dtype=dtype, shape=y_static or (None,) * len(y_shape))
        vals = [rand(*x_shape, dtype=dtype), rand(*y_shape, seed=1, dtype=dtype)]
        return Case([x, y], vals, [fn(index(x), y)])

    return build


REPEATED = np.array([2, 0, 2, 1])  # position 2 appears twice
ROWS, COLS = np.array([0, 2, 0]), np.array([1, 3, 1])  # (0, 1) appears twice


SUBTENSOR_CASES: dict[str, list[Builder]] = {
    "arignote.tensor.indexing.basic.Subtensor": [
        unary(lambda x: x[1:, ::-2]),
        unary(lambda x: x[-1]),
        _subtensor_symbolic,
    ],
    "arignote.tensor.indexing.basic.IncSubtensor": [
        _inc(pt.inc_subtensor, (3, 4), (2, 4), lambda x: x[1:]),
        _inc(pt.set_subtensor, (3, 4), (3,), lambda x: x[:, 2]),
        _inc(pt.inc_subtensor, (3, 4), (1, 2), lambda x: x[::2, 1:3], y_static=(1, None)),
    ],
    "arignote.tensor.indexing.advanced.AdvancedSubtensor1": [
        unary(lambda v: v[pt.constant(REPEATED)], shape=(4,)),
        unary(lambda x: x[pt.constant(np.array([1, 1, 0]))], shape=(2, 3)),
    ],
    "arignote.tensor.indexing.advanced.AdvancedSubtensor": [
        unary(lambda x: x[ROWS[::-1], COLS[::-1]]),
        unary(lambda x: x[1:, pt.constant(np.array([3, 0]))]),
        unary(lambda x: x[x > 0.2]),
    ],
    "arignote.tensor.indexing.advanced.AdvancedIncSubtensor1": [
        _inc(pt.inc_subtensor, (4,), (4,), lambda v: v[pt.constant(REPEATED)]),
        _inc(pt.set_subtensor, (4,), (4,), lambda v: v[pt.constant(REPEATED)]),
        _inc(pt.set_subtensor, (4, 2), (2,), lambda v: v[pt.constant(np.array([3, 1]))]),
    ],
    "arignote.tensor.indexing.advanced.AdvancedIncSubtensor": [
        _inc(pt.inc_subtensor, (3, 4), (3,), lambda x: x[ROWS, COLS]),
        _inc(pt.set_subtensor, (3, 4), (3,), lambda x: x[ROWS, COLS]),
        _inc(pt.set_subtensor, (3, 4), (2, 2), lambda x: x[1:, pt.constant(np.array([3, 0]))]),
    ],
}


# --- sort.py, extra_ops.py, extra_ops_more.py, index_utils.py --------------------------------------


def _permute(dtype: str) -> Case:
    x, p = T("x", (2, 4), dtype), pt.lmatrix("p")
    perm = np.array([[3, 0, 2, 1], [1, 2, 3, 0]])
    return Case([x, p], [rand(2, 4, dtype=dtype), perm], [PermuteAlongAxis()(x, p, 1)])


def _bincount(dtype: str) -> Case:
    i, w = pt.lvector("i"), T("w", (5,), dtype)
    return Case([i, w], [np.array([0, 3, 3, 1, 5]), rand(5, dtype=dtype)], [pt.bincount(i, w, minlength=7)])


def _check_values(dtype: str) -> Case:
    v = T("v", (4,), dtype)
    out = CheckValues("v must be positive")(v, pt.gt(v, 0))
    return Case([v], [rand(4, dtype=dtype, low=0.5)], [out])


def _assert(dtype: str) -> Case:
    v = T("v", (4,), dtype)
    return Case([v], [rand(4, dtype=dtype, low=0.5)], [Assert("v must be positive")(v, pt.all(pt.gt(v, 0)))])


def _check_and_raise(dtype: str) -> Case:
    v, w = T("v", (4,), dtype), T("w", (4,), dtype)
    out = CheckAndRaise(ValueError, "v and w must be positive")(v * w, pt.all(v > 0), pt.all(w > 0))
    return Case([v, w], [rand(4, dtype=dtype, low=0.5), rand(4, dtype=dtype, low=0.5)], [out])


def _searchsorted(dtype: str) -> Case:
    a, q = T("a", (5,), dtype), T("q", (3,), dtype)
    vals = [np.sort(distinct(5, dtype=dtype)), np.asarray([0.1, 1.1, 9.0], dtype)]
    return Case([a, q], vals, [pt.searchsorted(a, q), pt.searchsorted(a, q, side="right")])


# unique is differentiable only along directions that keep equal values equal (any other
# direction splits them): the tangents move tied entries together.


def _unique_flat(dtype: str) -> Case:
    x = T("x", (2, 3), dtype)
    val = np.asarray([[0.5, -1.0, 0.5], [2.0, -1.0, 3.0]], dtype)
    tangent = np.asarray([[0.3, -1.2, 0.3], [0.7, -1.2, -0.4]], dtype)
    outs = pt.unique(x, return_index=True, return_inverse=True, return_counts=True)
    return Case([x], [val], outs, tangents=[tangent])


def _unique_axis(dtype: str) -> Case:
    x = T("x", (3, 2), dtype)
    val = np.asarray([[1.0, 2.0], [0.5, 3.0], [1.0, 2.0]], dtype)
    tangent = np.asarray([[0.4, -0.9], [1.3, 0.2], [0.4, -0.9]], dtype)
    return Case([x], [val], pt.unique(x, return_inverse=True, axis=0), tangents=[tangent])


def _ravel_multi_index(dtype: str) -> Case:
    f = T("f", (3,), dtype)
    i = index_of(f)
    out = pt.ravel_multi_index((i, 2 - i), (3, 4))
    return Case([f], [np.asarray([0.2, 1.4, 2.6], dtype)], [out])


def _unravel_index(dtype: str) -> Case:
    f = T("f", (3,), dtype)
    return Case([f], [np.asarray([0.2, 5.4, 11.6], dtype)], list(pt.unravel_index(index_of(f), (3, 4))))


SORT_CASES: dict[str, list[Builder]] = {
    "arignote.tensor.sort.SortOp": [
        unary(lambda x: pt.sort(x, axis=0), values=distinct(12).reshape(3, 4)),
        unary(lambda x: pt.sort(x, axis=None), values=distinct(12, seed=1).reshape(3, 4)),
    ],
    "arignote.tensor.sort.ArgSortOp": [
        unary(lambda x: pt.argsort(x, axis=1), values=distinct(12).reshape(3, 4))
    ],
    "arignote.tensor.sort.PermuteAlongAxis": [_permute],
    "arignote.tensor.cumulative.CumOp": [
        unary(lambda x: pt.cumsum(x, axis=0)),
        # cumprod has no pushforward (its rule declines, so Rop goes through the pullback)
        unary(lambda x: pt.cumprod(x, axis=1), rop_not_implemented=True),
        unary(
            lambda x: pt.cumprod(x),
            values=np.array([[1.5, 0.0, 2.0], [-0.5, 3.0, 0.0]]),
            rop_not_implemented=True,
        ),
    ],
    "arignote.tensor.cumulative.Flip": [unary(lambda x: Flip(1)(x))],
    "arignote.tensor.searching.Nonzero": [
        unary(lambda v: pt.nonzero(v), shape=(5,), values=[0.0, 1.5, 0.0, -2.0, 3.0])
    ],
    "arignote.tensor.searching.Bincount": [_bincount],
    "arignote.tensor.checks.CheckValues": [_check_values],
    "arignote.tensor.raising.Assert": [_assert],
    "arignote.tensor.raising.CheckAndRaise": [_check_and_raise],
    "arignote.tensor.searching.SearchsortedOp": [_searchsorted],
    "arignote.tensor.searching.Unique": [_unique_flat, _unique_axis],
    "arignote.tensor.index_utils.RavelMultiIndex": [_ravel_multi_index],
    "arignote.tensor.index_utils.UnravelIndex": [_unravel_index],
}


# --- math.py (reductions), products.py, special.py ----------------------------------------------


def _matmul_broadcast(dtype: str) -> Case:
    a, b = pt.tensor("a", dtype=dtype, shape=(1, None, None)), T("b", (3, 3, 2), dtype)
    vals = [rand(1, 2, 3, dtype=dtype), rand(3, 3, 2, seed=1, dtype=dtype)]
    return Case([a, b], vals, [MatMul()(a, b)])


def _blas(op: Any, shapes: tuple) -> Builder:
    """A case of a BLAS update Op (Gemm, Gemv, Ger): ``()`` in ``shapes`` is alpha/beta."""

    def build(dtype: str) -> Case:
        ins = [pt.tensor(f"i{k}", dtype=dtype, shape=(None,) * len(s)) for k, s in enumerate(shapes)]
        vals = [rand(*s, seed=k, dtype=dtype) for k, s in enumerate(shapes)]
        return Case(ins, vals, [op(*ins)])

    return build


GRID = distinct(12, seed=3).reshape(3, 4) - 2.0  # no ties: max/min/argmax have one winner


MATH_CASES: dict[str, list[Builder]] = {
    "arignote.tensor.reductions.Sum": [unary(lambda x: pt.sum(x, axis=0)), unary(lambda x: pt.sum(x))],
    "arignote.tensor.reductions.Prod": [
        unary(lambda x: pt.prod(x, axis=1)),
        unary(lambda x: pt.prod(x, axis=0), values=np.array([[1.5, 0.0, 2.0], [0.0, 3.0, -1.0]])),
        unary(lambda x: pt.prod(x, axis=0), values=np.array([[0.0, 2.0], [0.0, 3.0], [1.5, 0.0]])),
    ],
    "arignote.tensor.reductions.Max": [
        unary(lambda x: pt.max(x, axis=1), values=GRID),
        unary(lambda x: pt.max(x), values=GRID),
    ],
    "arignote.tensor.reductions.Min": [unary(lambda x: pt.min(x, axis=0), values=GRID)],
    "arignote.tensor.reductions.Argmax": [unary(lambda x: pt.argmax(x, axis=1), values=GRID)],
    "arignote.tensor.reductions.Argmin": [unary(lambda x: pt.argmin(x), values=GRID)],
    "arignote.tensor.reductions.All": [unary(lambda x: pt.all(pt.gt(x, -5.0), axis=0))],
    "arignote.tensor.reductions.Any_": [unary(lambda x: pt.any(pt.gt(x, 0.0)))],
    "arignote.tensor.elemwise.CAReduce": [
        unary(lambda x: CAReduce(ps.add, axis=(1,))(x)),
        unary(lambda x: CAReduce(ps.mul, axis=(0,))(x)),
        unary(lambda x: CAReduce(ps.maximum, axis=(1,))(x), values=GRID),
        unary(lambda x: CAReduce(ps.minimum, axis=None)(x), values=GRID),
    ],
    "arignote.tensor.products.Dot": [
        binary(pt.dot, (2, 3), (3, 4)),
        binary(pt.dot, (3,), (3, 2)),
        binary(pt.dot, (2, 3), (3,)),
        binary(pt.dot, (3,), (3,)),
    ],
    "arignote.tensor.products.MatMul": [
        binary(lambda a, b: MatMul()(a, b), (2, 2, 3), (2, 3, 4)),
        binary(lambda a, b: MatMul()(a, b), (2, 3), (3, 2)),
        _matmul_broadcast,
    ],
    "arignote.tensor.gemm.Gemm": [_blas(gemm_no_inplace, ((2, 4), (), (2, 3), (3, 4), ()))],
    "arignote.tensor.gemm.Gemv": [_blas(gemv_no_inplace, ((2,), (), (2, 3), (3,), ()))],
    "arignote.tensor.gemm.Ger": [_blas(ger, ((2, 3), (), (2,), (3,)))],
    "arignote.tensor.special.Softmax": [
        unary(lambda x: pt.special.softmax(x, axis=1)),
        unary(lambda x: pt.special.softmax(x, axis=None)),
    ],
    "arignote.tensor.special.LogSoftmax": [
        unary(lambda x: pt.special.log_softmax(x, axis=0)),
        unary(lambda x: pt.special.log_softmax(x, axis=None)),
    ],
}


# --- the gradient-changing identities, Print, IfElse, OpFromGraph ------------------------------------


def _ifelse(cond_value: float) -> Builder:
    def build(dtype: str) -> Case:
        c, x, y = pt.scalar("c", dtype=dtype), T("x", (3,), dtype), T("y", (3,), dtype)
        outs = ifelse(pt.gt(c, 0), [x * y, pt.exp(x), y], [x + y, x, pt.ones_like(y)])
        vals = [np.asarray(cond_value, dtype), rand(3, dtype=dtype), rand(3, seed=1, dtype=dtype)]
        return Case([c, x, y], vals, list(outs))

    return build


def _ofg(**overrides: Any) -> Builder:
    def build(dtype: str) -> Case:
        a, b = T("a", (3,), dtype), T("b", (3,), dtype)
        op = OpFromGraph([a, b], [a * b, pt.exp(a) - b], **overrides)
        x, y = T("x", (3,), dtype), T("y", (3,), dtype)
        outs = op(pt.sin(x), y)
        return Case([x, y], [rand(3, dtype=dtype), rand(3, seed=1, dtype=dtype)], list(outs))

    return build


def _ofg_rop(inputs: list, tangents: list) -> list:
    """The Jacobian-vector product of ``(a * b, exp(a) - b)``, written out by hand."""
    a, b = inputs
    ta, tb = tangents
    return [ta * b + a * tb, pt.exp(a) * ta - tb]


def _ofg_lop(inputs: list, outputs: list, grads: list) -> list:
    a, b = inputs
    g0, g1 = grads
    return [g0 * b + g1 * pt.exp(a), g0 * a - g1]


class _SymbolicPair(SymbolicOp):
    """A SymbolicOp (inputs as given) with the inner graph of ``_ofg``."""

    def build_inner_graph(self, a: Any, b: Any) -> list:
        return [a * b, pt.exp(a) - b]


class _TensorSymbolicPair(TensorSymbolicOp):
    def build_inner_graph(self, a: Any, b: Any) -> list:
        return [a * b, pt.exp(a) - b]


def _symbolic(op_class: type) -> Builder:
    def build(dtype: str) -> Case:
        x, y = T("x", (3,), dtype), T("y", (3,), dtype)
        outs = op_class()(pt.sin(x), y)
        return Case([x, y], [rand(3, dtype=dtype), rand(3, seed=1, dtype=dtype)], list(outs))

    return build


def _scan(build_dtype: str) -> Case:
    """A recurrence with a sequence tap, a two-tap state and a non-sequence."""
    x, h0, w = T("x", (5,), build_dtype), T("h0", (2,), build_dtype), pt.scalar("w", dtype=build_dtype)
    hs, _ = arignote.scan(
        lambda a, h2, h1, w: pt.tanh(h1 * w + a) + 0.5 * h2,
        sequences=[x],
        outputs_info=[{"initial": h0, "taps": [-2, -1]}],
        non_sequences=[w],
    )
    vals = [rand(5, dtype=build_dtype), rand(2, seed=1, dtype=build_dtype), np.asarray(0.7, build_dtype)]
    return Case([x, h0, w], vals, [hs])


def _silent(op: Any, value: Any) -> None:
    """A Print hook that keeps the test output clean."""


GRADIENT_OP_CASES: dict[str, list[Builder]] = {
    "arignote._gradient.ops.ViewOp": [unary(lambda x: ViewOp()(x) * x)],
    "arignote.compile.ops.DeepCopyOp": [unary(lambda x: DeepCopyOp()(x) * x)],
    # zero_grad / grad_scale change the derivative on purpose: both routes see the change,
    # finite differences do not.
    "arignote._gradient.ops.ZeroGrad": [unary(lambda x: zero_grad(x) * x, fd=False)],
    "arignote._gradient.ops.GradScale": [unary(lambda x: grad_scale(x, 3.0) * x, fd=False)],
    "arignote._gradient.ops.GradClip": [unary(lambda x: grad_clip(x, -1.0, 2.0) * x)],
    "arignote.printing.print_op.Print": [unary(lambda x: Print("x", global_fn=_silent)(pt.exp(x)))],
    "arignote.ifelse.IfElse": [_ifelse(1.0), _ifelse(-1.0)],
    "arignote.scan.op.Scan": [_scan],
    "arignote.compile.builders.OpFromGraph": [
        _ofg(),
        _ofg(rop_overrides=_ofg_rop, lop_overrides=_ofg_lop),
        _ofg(inline=True),
    ],
    "arignote.compile.builders.SymbolicOp": [_symbolic(_SymbolicPair)],
    "arignote.tensor.symbolic.TensorSymbolicOp": [_symbolic(_TensorSymbolicPair)],
    "arignote.assumptions.specify.SpecifyAssumptions": [
        unary(lambda x: assume(x, symmetric=False, lower_triangular=False) * pt.exp(x), shape=(3, 3))
    ],
}


OPS_CASES: dict[str, list[Builder]] = {
    **SHAPE_CASES,
    **ALLOC_CASES,
    **JOIN_CASES,
    **SUBTENSOR_CASES,
    **SORT_CASES,
    **MATH_CASES,
    **GRADIENT_OP_CASES,
}

# Known mismatches: "ClassName[i]" -> what is wrong (strict xfails; the lead fixes the rule).
OPS_XFAIL: dict[str, str] = {}
OPS_XFAIL_EACH: dict[str, str] = {}
OPS_XFAIL_INT: dict[str, str] = {}

F32 = ["Dot[0]", "Softmax[0]", "Prod[1]", "AdvancedIncSubtensor1[1]", "IfElse[0]", "Join[1]", "CumOp[1]"]


@pytest.mark.parametrize("name, builder", case_params(OPS_CASES, OPS_XFAIL))
def test_pushforward_matches_pullback(name: str, builder: Builder) -> None:
    run_case(name, builder)


@pytest.mark.parametrize("name, builder", case_params(OPS_CASES, OPS_XFAIL_EACH, keep=several_inputs))
def test_pushforward_matches_pullback_each_input(name: str, builder: Builder) -> None:
    run_each_input(name, builder)


@pytest.mark.parametrize("name, builder", [p for p in case_params(OPS_CASES, OPS_XFAIL) if p.id in F32])
def test_pushforward_matches_pullback_float32(name: str, builder: Builder) -> None:
    run_case(name, builder, "float32")


@pytest.mark.parametrize("name, builder", case_params(OPS_CASES, OPS_XFAIL_INT, keep=integer_outputs))
def test_integer_outputs_disconnected_alike(name: str, builder: Builder) -> None:
    run_integer_outputs(name, builder)
