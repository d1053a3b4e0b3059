"""Special functions of whole axes: ``softmax``, ``log_softmax`` (and ``logsumexp``); this
module also gives ``pytensor.tensor.special``'s elementwise ones (``beta``, ``betaln``,
``poch``, ``factorial``, ``logit``, ``xlogy``, ``xlog1py``: :mod:`arignote.tensor.special_composed`).

Both are stable by construction: the maximum over the axis is subtracted before
exponentiating, so inputs of 1e3 do not overflow. Infinities and NaNs give what
``scipy.special.softmax`` / ``log_softmax`` give (a row of ``-inf`` gives NaNs). As in
PyTensor 3, ``axis=None`` (the default) normalizes over all elements.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> softmax(x).eval({x: np.array([1000.0, 1000.0])})
array([0.5, 0.5])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.scalar.op import float_dtype_for
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.reductions import logsumexp
from arignote.tensor.reductions import sum as tsum
from arignote.tensor.shape import _grad_like
from arignote.tensor.special_composed import beta, betaln, factorial, logit, poch, xlog1py, xlogy
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import exp

__all__ = [
    "LogSoftmax",
    "Softmax",
    "beta",
    "betaln",
    "factorial",
    "log_softmax",
    "logit",
    "logsumexp",
    "poch",
    "softmax",
    "xlog1py",
    "xlogy",
]


def _axis_prop(axis: Any) -> tuple[int, ...] | None:
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        return (int(axis),)
    try:
        return tuple(int(a) for a in axis)
    except TypeError:
        raise TypeError(f"axis must be None, an int or a sequence of ints, got {axis!r}") from None


class _SoftmaxBase(Op):
    """What Softmax and LogSoftmax share: the ``axis`` prop, types and shapes."""

    __props__ = ("axis",)

    def __init__(self, *, axis: Any):
        self.axis = _axis_prop(axis)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.axis is not None:
            normalize_axis(self.axis, x.type.ndim, f"{type(self).__name__} axis")
        out_dtype = float_dtype_for(x.type.dtype)
        return Apply(self, [x], [TensorType(out_dtype, x.type.shape)()])

    def _prepare(self, node: Apply, x: np.ndarray) -> np.ndarray | None:
        """``x`` in the output dtype, or None when there is nothing to compute (empty)."""
        dtype = node.outputs[0].type.numpy_dtype
        if x.dtype != dtype:
            x = x.astype(dtype)
        return x if x.size else None

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def __str__(self) -> str:
        return f"{type(self).__name__}{{axis={self.axis}}}"


class Softmax(_SoftmaxBase):
    """``exp(x) / sum(exp(x), axis)``, computed as ``exp(x - max) / sum(exp(x - max))``.

    ``axis`` is None (all axes), an int or a tuple of ints. Integer and boolean inputs
    give floats (float32 up to 16 bits, float64 above), as ``exp`` does. An empty input gives an empty output.
    """

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        x = self._prepare(node, inputs[0])
        if x is None:
            output_storage[0][0] = np.empty(inputs[0].shape, node.outputs[0].type.numpy_dtype)
            return
        with np.errstate(invalid="ignore", over="ignore"):
            e = np.exp(x - np.max(x, axis=self.axis, keepdims=True))
            e /= np.sum(e, axis=self.axis, keepdims=True)
        output_storage[0][0] = np.asarray(e)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``g*s - s * sum(g*s, axis)`` with ``s`` the (bounded) output: no overflow."""
        (x,), (s,) = inputs, outputs
        gs = as_tensor_variable(output_grads[0]) * s
        return [_grad_like(gs - s * tsum(gs, axis=self.axis, keepdims=True), x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``s * (v - sum(s*v, axis))``."""
        ((s,), (v,)) = outputs, eval_points
        if is_disconnected(v):
            return [disconnected_type()]
        return [s * (v - tsum(s * v, axis=self.axis, keepdims=True))]


class LogSoftmax(_SoftmaxBase):
    """``x - logsumexp(x, axis)``, with the maximum subtracted first.

    As in SciPy, an infinite maximum is not subtracted (so ``[inf, 1]`` gives
    ``[nan, -inf]``), and a slice of ``-inf`` gives NaNs.
    """

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        x = self._prepare(node, inputs[0])
        if x is None:
            output_storage[0][0] = np.empty(inputs[0].shape, node.outputs[0].type.numpy_dtype)
            return
        m = np.max(x, axis=self.axis, keepdims=True)
        if x.dtype.kind == "c":
            m = np.real(m)
        m = np.where(np.isfinite(m), m, 0)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            shifted = x - m
            shifted -= np.log(np.sum(np.exp(shifted), axis=self.axis, keepdims=True))
        output_storage[0][0] = np.asarray(shifted)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``g - exp(out) * sum(g, axis)``: ``exp(out)`` is the softmax, at most 1."""
        (x,), (out,) = inputs, outputs
        g = as_tensor_variable(output_grads[0])
        return [_grad_like(g - exp(out) * tsum(g, axis=self.axis, keepdims=True), x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``v - sum(softmax * v, axis)``."""
        ((out,), (v,)) = outputs, eval_points
        if is_disconnected(v):
            return [disconnected_type()]
        return [v - tsum(exp(out) * v, axis=self.axis, keepdims=True)]


def softmax(c: Any, axis: Any = None) -> Variable:
    """``exp(c) / sum(exp(c), axis)``, stable for large inputs (see :class:`Softmax`).

    ``axis=None`` (the default, as in PyTensor 3 and SciPy) normalizes over all elements;
    pass ``axis=-1`` for rows.
    """
    c = as_tensor_variable(c)
    if axis is not None:
        axis = normalize_axis(axis, c.type.ndim)
    return Softmax(axis=axis)(c)


def log_softmax(c: Any, axis: Any = None) -> Variable:
    """``c - logsumexp(c, axis)``, stable for large inputs (see :class:`LogSoftmax`).

    ``axis=None`` (the default, as in PyTensor 3 and SciPy) normalizes over all elements.
    """
    c = as_tensor_variable(c)
    if axis is not None:
        axis = normalize_axis(axis, c.type.ndim)
    return LogSoftmax(axis=axis)(c)
