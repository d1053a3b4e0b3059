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

    # -- gradients (reversed cumsum of the output gradient) are attached here ---------------

    def __str__(self) -> str:
        return f"{'Cumsum' if self.mode == 'add' else 'Cumprod'}{{axis={self.axis}}}"


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

    # -- gradients (undefined: the outputs are indices) are attached here -------------------


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
