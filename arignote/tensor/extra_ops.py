"""Array operations beyond elementwise math: cumulative sums/products and ``nonzero``.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.bvector("x")
>>> y = cumsum(x)
>>> y.type
TensorType(int64, shape=(None,))
>>> y.eval({x: np.array([100, 100, 100], dtype="int8")})
array([100, 200, 300])
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.tensor.basic import as_tensor_variable, expand_dims, flatten
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.shape import _disconnected, _grad_like, _no_grad, _zero_grad
from arignote.tensor.type import TensorType

__all__ = ["cumsum", "cumprod", "nonzero", "flatnonzero"]  # the Ops are reached through this module


def _m() -> Any:
    return importlib.import_module("arignote.tensor.math")


def _cum_dtype(dtype: str) -> str:
    """The dtype NumPy's cumsum/cumprod give: small ints accumulate in int64, unsigned
    ints in uint64, everything else keeps its dtype."""
    if dtype == "bool" or dtype in ("int8", "int16", "int32", "int64"):
        return "int64"
    if dtype in ("uint8", "uint16", "uint32", "uint64"):
        return "uint64"
    return dtype


class CumOp(Op):
    """Cumulative sum (``mode="add"``) or product (``mode="mul"``) along a non-negative
    ``axis``. Output dtypes follow NumPy (see :func:`cumsum`)."""

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
            raise ValueError(f"{self}: axis {self.axis} is out of bounds for {x} of Type {x.type}")
        return Apply(self, [x], [TensorType(_cum_dtype(x.type.dtype), x.type.shape)()])

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
        if _disconnected(v) or np.dtype(outputs[0].type.dtype).kind in "biu":
            return [_no_grad()]
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
            raise ValueError(f"{self}: axis {self.axis} is out of bounds for {x} of Type {x.type}")
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
        return [_no_grad() if _disconnected(v) else self(v)]

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
    m = _m()
    is_zero = m.eq(x, 0)
    zeros_so_far = CumOp(axis, "add")(is_zero)
    before_first = m.eq(zeros_so_far, 0)
    first = m.eq(zeros_so_far * is_zero, 1)  # is the first zero of its slice
    x_one = m.switch(first, 1, x)
    out_one = CumOp(axis, "mul")(x_one)
    before = _reverse_cumsum(g * out, axis) / m.switch(is_zero, 1, x)
    at_first = _reverse_cumsum(g * out_one, axis)
    after: Any = 0
    if exact_second_order:
        x_first = m.sum(x * first, axis=axis, keepdims=True)  # 0, but it carries d/dx[z]
        after = x_first * _cumprod_pullback(x_one, out_one, g, axis, exact_second_order=False)
    return m.switch(before_first, before, m.switch(first, at_first, after))


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
    """Cumulative sum along ``axis`` (None: of the flattened tensor), like ``numpy.cumsum``:
    bool and signed ints accumulate in int64, unsigned ints in uint64."""
    return _cum(x, axis, "add")


def cumprod(x: Any, axis: int | None = None) -> Variable:
    """Cumulative product along ``axis`` (None: of the flattened tensor), like
    ``numpy.cumprod`` (dtypes as for :func:`cumsum`)."""
    return _cum(x, axis, "mul")


# --- nonzero -----------------------------------------------------------------------------


class Nonzero(Op):
    """The indices of the nonzero elements: one int64 vector per input dimension, as
    ``numpy.nonzero`` returns them (NaN counts as nonzero). 0-d inputs are an error."""

    __props__ = ()

    def make_node(self, a: Any) -> Apply:
        a = as_tensor_variable(a)
        if a.type.ndim == 0:
            raise ValueError(f"Nonzero: input {a} is 0-d ({a.type}); only tensors of 1 or more dimensions")
        return Apply(self, [a], [TensorType("int64", (None,))() for _ in range(a.type.ndim)])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        for cell, idx in zip(output_storage, np.nonzero(inputs[0])):
            cell[0] = idx.astype("int64", copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        m = _m()
        count = m.sum(m.neq(node.inputs[0], 0), dtype="int64")
        return [(count,)] * len(node.outputs)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False] * len(node.outputs)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """No gradient: the outputs are positions, not values of the input."""
        return [_no_grad()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [_no_grad() for _ in outputs]


_nonzero = Nonzero()


def nonzero(a: Any, return_matrix: bool = False) -> tuple[Variable, ...] | Variable:
    """The indices of the nonzero elements of ``a``.

    By default a tuple of int64 vectors, one per dimension (``numpy.nonzero``); with
    ``return_matrix=True`` a ``(ndim, count)`` matrix of them.
    """
    res = _nonzero(a, return_list=True)
    if not return_matrix:
        return tuple(res)
    if len(res) == 1:
        return expand_dims(res[0], 0)
    from arignote.tensor.join import stack

    return stack(res)


def flatnonzero(a: Any) -> Variable:
    """The indices of the nonzero elements of ``a`` flattened (``numpy.flatnonzero``)."""
    a = as_tensor_variable(a)
    if a.type.ndim == 0:
        raise ValueError(f"flatnonzero: input {a} is 0-d ({a.type}); only tensors of 1 or more dimensions")
    return _nonzero(flatten(a), return_list=True)[0]


# PyTensor users import these from ``pytensor.tensor.extra_ops``; they live in diag.py,
# shape_utils.py, index_utils.py and extra_ops_more.py, which need this module first, so they
# are looked up on first use.
_LAZY_HOME = {
    "bartlett": "extra_ops_more",
    "bincount": "extra_ops_more",
    "compress": "extra_ops_more",
    "diff": "extra_ops_more",
    "geomspace": "extra_ops_more",
    "logspace": "extra_ops_more",
    "searchsorted": "extra_ops_more",
    "unique": "extra_ops_more",
    "fill_diagonal": "diag",
    "fill_diagonal_offset": "diag",
    "RavelMultiIndex": "index_utils",
    "UnravelIndex": "index_utils",
    "ravel_multi_index": "index_utils",
    "unravel_index": "index_utils",
    "broadcast_arrays": "shape_utils",
    "broadcast_shape": "shape_utils",
    "broadcast_to": "shape_utils",
    "concat_with_broadcast": "shape_utils",
}


def __getattr__(name: str) -> Any:
    home = _LAZY_HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"arignote.tensor.{home}"), name)
