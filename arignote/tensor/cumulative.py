"""Cumulative sums and products along an axis (``CumOp``: ``cumsum``, ``cumprod``, exact
gradients where the input has zeros), ``Flip`` (the reversal their gradients use) and
``diff``, their inverse. PyTensor's path for them is :mod:`arignote.tensor.extra_ops`."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.reductions import sum as tensor_sum
from arignote.tensor.shape import _grad_like, _zero_grad, flatten
from arignote.tensor.ufuncs import cast, eq, neq, switch

__all__ = ["CumOp", "Flip", "cumprod", "cumsum", "diff"]


def diff(x: Any, n: int = 1, axis: int = -1) -> Variable:
    """The ``n``-th discrete difference along ``axis`` (``numpy.diff``): ``x[i+1] - x[i]``
    applied ``n`` times (``!=`` for bools, as NumPy)."""
    x = as_tensor_variable(x)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"diff: order n must be a non-negative int, got {n!r}")
    if x.type.ndim == 0:
        raise ValueError(f"diff: input must be at least one dimensional, got the 0-d {x}")
    (axis,) = normalize_axis(axis, x.type.ndim, "diff: axis")  # type: ignore[misc]
    head = tuple(slice(None) if d != axis else slice(1, None) for d in range(x.type.ndim))
    tail = tuple(slice(None) if d != axis else slice(None, -1) for d in range(x.type.ndim))
    for _ in range(int(n)):
        x = neq(x[head], x[tail]) if x.type.dtype == "bool" else x[head] - x[tail]
    return x


class CumOp(Op):
    """Cumulative sum (``mode="add"``) or product (``mode="mul"``) along a non-negative
    ``axis``. The output keeps the input's dtype (see :func:`cumsum`)."""

    __props__ = ("axis", "mode")

    def __init__(self, axis: int, mode: str = "add"):
        if mode not in ("add", "mul"):
            raise ValueError(f"CumOp: mode must be 'add' or 'mul', got {mode!r}")
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(f"CumOp: axis must be an int, got {axis!r} of type {type(axis).__name__}")
        if axis < 0:
            raise ValueError(f"CumOp: axis must be non-negative (normalize it first), got {axis}")
        self.axis = int(axis)
        self.mode = mode

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.axis >= x.type.ndim:
            raise np.exceptions.AxisError(
                f"{self}: axis {self.axis} is out of bounds for {x} of Type {x.type}"
            )
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        fn = np.cumsum if self.mode == "add" else np.cumprod
        output_storage[0][0] = fn(x, axis=self.axis, dtype=node.outputs[0].type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """cumsum: the gradient's cumulative sum from the end. cumprod: ``x[i]`` gets
        ``sum_{j >= i} g[j] * prod_{k <= j, k != i} x[k]``, exact where ``x`` has zeros.
        An integer result is a step function: zero gradient."""
        (x,), (out,) = inputs, outputs
        if np.dtype(out.type.dtype).kind in "biu":
            return [_zero_grad(x)]
        g = as_tensor_variable(output_grads[0])
        if self.mode == "add":
            return [_grad_like(_reverse_cumsum(g, self.axis), x)]
        gx = _cumprod_pullback(x, out, g, self.axis, exact_second_order=True)
        return [_grad_like(gx, x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """cumsum: the cumulative sum of the tangent. cumprod has no cheap rule exact at
        zeros: NotImplementedError lets :func:`arignote.gradient.pushforward` go through
        the (exact) pullback instead."""
        (v,) = eval_points
        if is_disconnected(v) or np.dtype(outputs[0].type.dtype).kind in "biu":
            return [disconnected_type()]
        if self.mode != "add":
            raise NotImplementedError(f"{self} has no pushforward rule; use the pullback twice")
        return [CumOp(self.axis, "add")(v)]

    def __str__(self) -> str:
        return f"{'Cumsum' if self.mode == 'add' else 'Cumprod'}{{axis={self.axis}}}"


class Flip(Op):
    """``numpy.flip(x, axis)``: the elements of ``x`` in reverse order along ``axis`` (a
    view). The pullback of a cumulative sum needs it (:func:`_reverse_cumsum`)."""

    __props__ = ("axis",)
    view_map = {0: [0]}

    def __init__(self, axis: int):
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or axis < 0:
            raise TypeError(f"Flip: axis must be a non-negative int, got {axis!r}")
        self.axis = int(axis)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.axis >= x.type.ndim:
            raise np.exceptions.AxisError(
                f"{self}: axis {self.axis} is out of bounds for {x} of Type {x.type}"
            )
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = np.flip(inputs[0], self.axis)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [_grad_like(self(output_grads[0]), inputs[0])]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        (v,) = eval_points
        return [disconnected_type() if is_disconnected(v) else self(v)]

    def __str__(self) -> str:
        return f"Flip{{axis={self.axis}}}"


def _cumprod_pullback(
    x: Variable, out: Variable, g: Variable, axis: int, exact_second_order: bool
) -> Variable:
    """``gx[i] = sum_{j >= i} g[j] * prod_{k <= j, k != i} x[k]`` along ``axis``, exact where
    ``x`` has zeros.

    Before the first zero ``z`` of a slice the product is ``out[j] / x[i]``. At ``z`` it is
    the cumulative product with ``x[z]`` set to 1 (later zeros still zero it). After ``z``
    every product contains ``x[z] = 0``; the term is written ``x[z] * q[i]``, with ``q``
    this same gradient at ``x`` with ``x[z]`` set to 1, so that differentiating the
    gradient once more is exact too (``exact_second_order``; ``q`` itself uses 0 there,
    so third derivatives at zeros are not exact). The masks use no bitwise ops: they are
    discrete, and the gradient of this graph must not pass through a bitwise Op.
    """
    is_zero = eq(x, 0)
    # counted in int64: a cumulative sum keeps its input's dtype (of a bool, a running or)
    zeros_so_far = CumOp(axis, "add")(cast(is_zero, "int64"))
    before_first = eq(zeros_so_far, 0)
    first = eq(zeros_so_far * is_zero, 1)  # is the first zero of its slice
    x_one = switch(first, 1, x)
    out_one = CumOp(axis, "mul")(x_one)
    before = _reverse_cumsum(g * out, axis) / switch(is_zero, 1, x)
    at_first = _reverse_cumsum(g * out_one, axis)
    after: Any = 0
    if exact_second_order:
        x_first = tensor_sum(x * first, axis=axis, keepdims=True)  # 0, but it carries d/dx[z]
        after = x_first * _cumprod_pullback(x_one, out_one, g, axis, exact_second_order=False)
    return switch(before_first, before, switch(first, at_first, after))


def _reverse_cumsum(g: Variable, axis: int) -> Variable:
    """``g[..., i, ...] + g[..., i + 1, ...] + ...`` along ``axis`` (the transpose of cumsum)."""
    flip = Flip(axis)
    return flip(CumOp(axis, "add")(flip(g)))


def _cum(x: Any, axis: Any, mode: str) -> Variable:
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = flatten(x), 0
    else:
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(f"axis must be None or an int, got {axis!r}")
        (axis,) = normalize_axis(axis, x.type.ndim)  # type: ignore[misc]
    return CumOp(axis, mode)(x)


def cumsum(x: Any, axis: int | None = None) -> Variable:
    """Cumulative sum along ``axis`` (None: of the flattened tensor), like ``numpy.cumsum``
    with ``dtype=x.dtype``: the result keeps the input's dtype, as PyTensor's (an int8 sum
    wraps around; a bool one is a running logical or). Cast first for a wider accumulator."""
    return _cum(x, axis, "add")


def cumprod(x: Any, axis: int | None = None) -> Variable:
    """Cumulative product along ``axis`` (None: of the flattened tensor), like
    ``numpy.cumprod`` (dtypes as for :func:`cumsum`)."""
    return _cum(x, axis, "mul")


# --- batching rules (vectorize_graph's node step) ---------------------------------------


@register_batch_rule(CumOp, Flip)
def _batch_axis_op(op: Op, node: Apply, args: list, flags: list) -> list:
    new = copy.copy(op)
    new.axis = op.axis + 1
    return [(new(args[0]), True)]
