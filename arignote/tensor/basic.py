"""Making tensors: conversion of Python and NumPy values, constants, scalar<->tensor, and
the layout helpers (transpose, expand_dims, squeeze, flatten, moveaxis, swapaxes).

>>> import arignote.tensor as pt
>>> pt.constant(3).dtype, pt.constant(3.0).dtype, pt.constant(0.1).dtype
('int8', 'float32', 'float64')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import Op
from arignote.scalar.type import ScalarType, get_scalar_type, python_scalar_dtype
from arignote.tensor.elemwise import DimShuffle, normalize_axis
from arignote.tensor.type import TensorType
from arignote.tensor.variable import TensorConstant, TensorVariable

__all__ = [
    "as_tensor_variable",
    "as_tensor",
    "constant",
    "TensorFromScalar",
    "ScalarFromTensor",
    "tensor_from_scalar",
    "scalar_from_tensor",
    "get_underlying_scalar_constant_value",
    "NotScalarConstantError",
    "transpose",
    "matrix_transpose",
    "expand_dims",
    "squeeze",
    "flatten",
    "swapaxes",
    "moveaxis",
]


class NotScalarConstantError(Exception):
    """The Variable is not a constant scalar (so its value is not known statically)."""


def _python_dtype(data: Any) -> str | None:
    """The dtype for Python numbers and nested lists/tuples of them (None for others)."""
    if isinstance(data, (bool, np.bool_)) and not isinstance(data, np.bool_):
        return python_scalar_dtype(data)  # raises: Python bools are ambiguous
    if isinstance(data, (int, float, complex)):
        return python_scalar_dtype(data)
    if isinstance(data, (list, tuple)):
        flat: list = []
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, (list, tuple)):
                stack.extend(item)
            else:
                flat.append(item)
        if flat and all(isinstance(v, (int, float, complex)) and not isinstance(v, bool) for v in flat):
            dtypes = [python_scalar_dtype(v) for v in flat]
            return np.result_type(*dtypes).name
        if any(isinstance(v, bool) for v in flat) and not all(isinstance(v, bool) for v in flat):
            raise TypeError(f"Mixed Python bools and numbers in {data!r}; use numbers, or a NumPy bool array")
    return None


def constant(x: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None) -> TensorConstant:
    """A :class:`TensorConstant` holding ``x``.

    Python ints get the smallest int dtype holding them, Python floats float32 when exact
    (floatX when it is float32) else float64; NumPy values keep their dtype. A Python
    ``bool`` is rejected (use ``numpy.bool_``). ``ndim`` left-pads (or squeezes leading 1s)
    to that many dimensions.
    """
    if isinstance(x, Variable):
        raise TypeError(f"constant() needs a value, got the symbolic Variable {x}")
    if isinstance(x, bool):
        raise TypeError(
            f"A Python bool ({x}) is not accepted as a tensor constant: write numpy.bool_({x}) "
            "(or numpy.array(...)) for a boolean tensor, or int(...) for 0/1"
        )
    if dtype is None:
        dtype = _python_dtype(x)
    if dtype is not None:
        arr = np.asarray(x, dtype=dtype) if not isinstance(x, np.ndarray) else x.astype(dtype, copy=False)
        if not isinstance(x, np.ndarray) and not _same_values(np.asarray(x), arr):
            raise TypeError(f"Value {x!r} cannot be represented exactly in dtype {dtype}")
    else:
        arr = np.asarray(x)
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"Cannot make a tensor constant from {type(x).__name__} (NumPy dtype {arr.dtype})")
    if ndim is not None:
        if arr.ndim > ndim:
            extra = arr.ndim - ndim
            if any(s != 1 for s in arr.shape[:extra]):
                raise ValueError(f"Cannot make a {ndim}-d constant from a value of shape {arr.shape}")
            arr = arr.reshape(arr.shape[extra:])
        elif arr.ndim < ndim:
            arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    ttype = TensorType(arr.dtype, arr.shape)
    return TensorConstant(ttype, arr, name=name)


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    with np.errstate(all="ignore"):
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except TypeError:
            return False


def as_tensor_variable(
    x: Any, name: str | None = None, ndim: int | None = None, **kwargs: Any
) -> TensorVariable:
    """``x`` as a tensor Variable: tensor Variables as they are, scalar Variables through
    :func:`tensor_from_scalar`, everything else as a constant.

    ``ndim`` checks (and for constants, adjusts) the number of dimensions; ``dtype=``
    casts a constant.
    """
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError(f"as_tensor_variable: unexpected arguments {sorted(kwargs)}")
    if isinstance(x, Apply):
        x = x.default_output()
    if isinstance(x, Variable):
        if isinstance(x.type, ScalarType):
            x = tensor_from_scalar(x)
        elif not isinstance(x.type, TensorType):
            raise TypeError(f"Cannot use {x} of Type {x.type} as a tensor")
        if ndim is not None and x.type.ndim != ndim:
            if x.type.ndim > ndim and all(b for b in x.type.broadcastable[: x.type.ndim - ndim]):
                return x.dimshuffle(list(range(x.type.ndim - ndim, x.type.ndim)))
            raise ValueError(f"{x} of Type {x.type} is {x.type.ndim}-d; a {ndim}-d tensor is needed here")
        if dtype is not None and x.type.dtype != np.dtype(dtype).name:
            raise TypeError(f"{x} has dtype {x.type.dtype}, expected {np.dtype(dtype).name}")
        return x  # type: ignore[return-value]
    if isinstance(x, (list, tuple)) and any(isinstance(v, Variable) for v in _flatten(x)):
        parts = [as_tensor_variable(v) for v in x]
        if all(p.type.ndim == 0 for p in parts):
            from arignote.tensor.shape import make_vector

            return make_vector(*parts)
        from arignote.tensor.join import stack

        return stack(parts)
    if dtype is not None and not isinstance(x, np.ndarray):
        arr = np.asarray(x)
        if arr.dtype.kind in "biufc":
            cast_arr = arr.astype(dtype)
            if not _same_values(arr, cast_arr):
                raise TypeError(f"Value {x!r} cannot be represented exactly in dtype {np.dtype(dtype).name}")
            x = cast_arr
    return constant(x, name=name, ndim=ndim)


as_tensor = as_tensor_variable


def _flatten(items: Sequence) -> list:
    out, stack = [], list(items)
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            out.append(v)
    return out


# --- scalar <-> tensor -------------------------------------------------------------------


class TensorFromScalar(Op):
    """A 0-d tensor holding a scalar's value."""

    __props__ = ()

    def make_node(self, s: Any) -> Apply:
        if not isinstance(getattr(s, "type", None), ScalarType):
            raise TypeError(f"TensorFromScalar needs a scalar Variable, got {s!r}")
        return Apply(self, [s], [TensorType(s.type.dtype, ())()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = np.asarray(inputs[0], dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [()]


class ScalarFromTensor(Op):
    """The scalar held by a 0-d tensor."""

    __props__ = ()

    def make_node(self, t: Any) -> Apply:
        t = as_tensor_variable(t)
        if t.type.ndim != 0:
            raise TypeError(f"ScalarFromTensor needs a 0-d tensor, got {t.type}")
        return Apply(self, [t], [get_scalar_type(t.type.dtype)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[0][()]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [()]


tensor_from_scalar = TensorFromScalar()
scalar_from_tensor = ScalarFromTensor()


def get_underlying_scalar_constant_value(v: Any) -> Any:
    """The value of ``v`` if it is a known constant scalar (through casts, DimShuffles,
    TensorFromScalar and ScalarFromTensor), else :class:`NotScalarConstantError`."""
    seen = 0
    while True:
        seen += 1
        if not isinstance(v, Variable):
            arr = np.asarray(v)
            if arr.size == 1:
                return arr.reshape(())[()]
            raise NotScalarConstantError(f"{v!r} is not a scalar")
        if isinstance(v, Constant):
            data = np.asarray(v.data)
            if data.size != 1:
                raise NotScalarConstantError(f"{v} holds {data.size} values, not one")
            return data.reshape(())[()]
        node = v.owner
        if node is None or seen > 1000:
            raise NotScalarConstantError(f"{v} is not a constant")
        op = node.op
        if isinstance(op, (TensorFromScalar, ScalarFromTensor, DimShuffle)):
            v = node.inputs[0]
            continue
        raise NotScalarConstantError(f"{v} is computed by {op}; its value is not known statically")


# --- layout ------------------------------------------------------------------------------


def transpose(x: Any, axes: Sequence[int] | None = None) -> TensorVariable:
    """Reverse the dimensions (or put them in the order ``axes``)."""
    x = as_tensor_variable(x)
    if axes is None:
        axes = list(range(x.type.ndim))[::-1]
    else:
        axes = list(axes)
        if (
            sorted(normalize_axis(axes, x.type.ndim) or ()) != list(range(x.type.ndim))
            or len(axes) != x.type.ndim
        ):
            raise ValueError(
                f"transpose axes {tuple(axes)} are not a permutation of {x.type.ndim} dimensions"
            )
        axes = [a % x.type.ndim for a in axes]
    if axes == list(range(x.type.ndim)):
        return x
    return DimShuffle(input_ndim=x.type.ndim, new_order=axes)(x)


def matrix_transpose(x: Any) -> TensorVariable:
    """Swap the last two dimensions."""
    x = as_tensor_variable(x)
    if x.type.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got {x.type}")
    return swapaxes(x, -1, -2)


def swapaxes(x: Any, axis1: int, axis2: int) -> TensorVariable:
    x = as_tensor_variable(x)
    a1, a2 = (normalize_axis(a, x.type.ndim)[0] for a in (axis1, axis2))  # type: ignore[index]
    order = list(range(x.type.ndim))
    order[a1], order[a2] = order[a2], order[a1]
    return transpose(x, order)


def moveaxis(x: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> TensorVariable:
    """Move axes to new positions, the rest keeping their order (NumPy's ``moveaxis``)."""
    x = as_tensor_variable(x)
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    nd = x.type.ndim
    src = [normalize_axis(s, nd, "source")[0] for s in src]  # type: ignore[index]
    dst = [normalize_axis(d, nd, "destination")[0] for d in dst]  # type: ignore[index]
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def expand_dims(x: Any, axis: int | Sequence[int]) -> TensorVariable:
    """Insert length-1 (broadcastable) dimensions at ``axis``."""
    x = as_tensor_variable(x)
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    out_ndim = x.type.ndim + len(axes)
    new = normalize_axis(axes, out_ndim) or ()
    order: list = []
    it = iter(range(x.type.ndim))
    for d in range(out_ndim):
        order.append("x" if d in new else next(it))
    return DimShuffle(input_ndim=x.type.ndim, new_order=order)(x)


def squeeze(x: Any, axis: int | Sequence[int] | None = None) -> TensorVariable:
    """Drop broadcastable dimensions (all of them, or those in ``axis``, which must be)."""
    x = as_tensor_variable(x)
    if axis is None:
        drop = [d for d, b in enumerate(x.type.broadcastable) if b]
    else:
        drop = list(normalize_axis(axis, x.type.ndim) or ())
        bad = [d for d in drop if not x.type.broadcastable[d]]
        if bad:
            raise ValueError(
                f"squeeze: dimension(s) {bad} of {x.type} are not statically of length 1; "
                "use specify_shape first if you know they are"
            )
    if not drop:
        return x
    return DimShuffle(input_ndim=x.type.ndim, new_order=[d for d in range(x.type.ndim) if d not in drop])(x)


def flatten(x: Any, ndim: int = 1) -> TensorVariable:
    """Keep the first ``ndim - 1`` dimensions and merge the rest into one."""
    x = as_tensor_variable(x)
    if not 1 <= ndim <= max(1, x.type.ndim):
        raise ValueError(f"flatten: ndim={ndim} is not between 1 and {max(1, x.type.ndim)} for {x.type}")
    from arignote.tensor.shape import reshape, shape

    if ndim == 1:
        return reshape(x, (-1,))
    sh = shape(x)
    return reshape(x, [sh[i] for i in range(ndim - 1)] + [-1])
