"""Making tensors: conversion of Python and NumPy values, constants, scalar<->tensor, and
the layout helpers (transpose, expand_dims, squeeze, flatten, moveaxis, swapaxes).

>>> import arignote.tensor as pt
>>> pt.constant(3).dtype, pt.constant(3.0).dtype, pt.constant(0.1).dtype
('int8', 'float32', 'float64')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
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
    """The dtype of a bare Python number (``None`` for anything else, NumPy scalars included:
    they keep their own dtype). A Python ``bool`` is an error."""
    if isinstance(data, np.generic):
        return None  # np.float64 subclasses float, but keeps its dtype
    if isinstance(data, (bool, int, float, complex)):
        return python_scalar_dtype(data)  # raises for bool: ambiguous
    return None


def _check_sequence(data: Any) -> None:
    """Reject lists/tuples mixing Python bools with numbers (an ambiguous dtype)."""
    flat = _flatten(data)
    bools = [v for v in flat if isinstance(v, bool)]
    if bools and len(bools) != len(flat):
        raise TypeError(
            f"Mixed Python bools and numbers in {data!r}: the dtype is ambiguous; "
            "use numbers, or a NumPy bool array"
        )


def constant(x: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None) -> TensorConstant:
    """A :class:`TensorConstant` holding ``x``.

    A Python int gets the smallest int dtype holding it, a Python float float32 when
    exact (any float that fits, when floatX is float32) else float64. Lists and tuples
    get NumPy's dtype (int64/float64; an empty one is floatX), and NumPy values keep
    theirs. A Python ``bool`` is rejected (use ``numpy.bool_``). An explicit ``dtype``
    must hold a Python value exactly. ``ndim`` left-pads (or squeezes leading 1s) to
    that many dimensions.
    """
    # Python numbers are the constants users write most (``x * 2.0``): the same value
    # gives the same (immutable) constant, which is cheaper to build and to merge.
    key = None
    if name is None and type(x) in (int, float):
        key = (type(x), x, math.copysign(1.0, x), ndim, dtype, config.floatX)
        cached = _scalar_constants.get(key)
        if cached is not None:
            return cached
    result = _make_constant(x, name, ndim, dtype)
    if key is not None:
        if len(_scalar_constants) > 4096:
            _scalar_constants.clear()
        _scalar_constants[key] = result
    return result


_scalar_constants: dict = {}


def _make_constant(x: Any, name: str | None, ndim: int | None, dtype: Any) -> TensorConstant:
    if isinstance(x, Variable):
        raise TypeError(f"constant() needs a value, got the symbolic Variable {x}")
    if isinstance(x, bool):
        raise TypeError(
            f"A Python bool ({x}) is not accepted as a tensor constant: write numpy.bool_({x}) "
            "(or numpy.array(...)) for a boolean tensor, or int(...) for 0/1"
        )
    if isinstance(x, (list, tuple)):
        _check_sequence(x)
    if dtype is not None:
        dtype = np.dtype(dtype).name if dtype != "floatX" else config.floatX
        if isinstance(x, np.ndarray):
            arr = x.astype(dtype, copy=False)
        else:
            orig = np.asarray(x)
            if orig.dtype.kind not in "biufc":
                raise TypeError(
                    f"Cannot make a tensor constant from {type(x).__name__} (NumPy dtype {orig.dtype})"
                )
            try:
                with np.errstate(all="ignore"):
                    arr = np.asarray(x, dtype=dtype)
            except (OverflowError, TypeError, ValueError):  # NumPy 2: 300 into int8, 1j into float
                arr = None
            if arr is None or not _same_values(orig, arr):
                raise TypeError(f"Value {x!r} cannot be represented exactly in dtype {dtype}")
    else:
        auto = _python_dtype(x)
        if auto is not None:
            with np.errstate(all="ignore"):
                arr = np.asarray(x, dtype=auto)  # rounds to float32 on purpose when floatX is
        else:
            arr = np.asarray(x)
            if arr.size == 0 and isinstance(x, (list, tuple)):
                arr = arr.astype(config.floatX)
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

    ``ndim`` adjusts the number of dimensions: leading broadcastable dimensions are
    added or dropped (any other mismatch is an error); ``dtype=`` casts a constant and
    must match a Variable's dtype.
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
            if x.type.ndim < ndim:  # pad on the left with broadcastable dimensions
                return x.dimshuffle(["x"] * (ndim - x.type.ndim) + list(range(x.type.ndim)))
            if all(b for b in x.type.broadcastable[: x.type.ndim - ndim]):
                return x.dimshuffle(list(range(x.type.ndim - ndim, x.type.ndim)))
            raise ValueError(
                f"{x} of Type {x.type} is {x.type.ndim}-d and its leading dimensions are not "
                f"broadcastable; a {ndim}-d tensor is needed here"
            )
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
    return constant(x, name=name, ndim=ndim, dtype=dtype)


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

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The gradient as a scalar (in the input's dtype when that is a float)."""
        return [_scalar_grad(output_grads[0], inputs[0])]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        (e,) = eval_points
        if isinstance(getattr(e, "type", None), ScalarType):
            return [tensor_from_scalar(e)]
        return [e]  # already a tensor, or disconnected


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

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The gradient as a 0-d tensor (in the input's dtype when that is a float)."""
        (g,) = output_grads
        if isinstance(getattr(g, "type", None), ScalarType):
            g = tensor_from_scalar(g)
        if isinstance(getattr(g, "type", None), TensorType):
            from arignote.tensor.shape import _grad_like

            return [_grad_like(g, inputs[0])]
        return [g]  # disconnected or undefined

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        (e,) = eval_points
        if isinstance(getattr(e, "type", None), TensorType):
            return [scalar_from_tensor(e)]
        return [e]


def _scalar_grad(g: Any, s: Variable) -> Any:
    """The 0-d tensor gradient ``g`` as a scalar for the scalar ``s`` (cast to ``s``'s float
    dtype; an integer ``s`` gets a float gradient, zero when ``g`` is)."""
    if not isinstance(getattr(g, "type", None), TensorType):
        return g  # disconnected or undefined: passed on as it is
    from arignote.tensor.math import cast

    kind = np.dtype(s.type.dtype).kind
    if kind in "fc" and g.type.dtype != s.type.dtype:
        g = cast(g, s.type.dtype)
    return scalar_from_tensor(g)


tensor_from_scalar = TensorFromScalar()
scalar_from_tensor = ScalarFromTensor()


def get_underlying_scalar_constant_value(
    v: Any,
    *,
    elemwise: bool = True,
    only_process_constants: bool = False,
    max_recur: int = 10,
    raise_not_constant: bool = True,
) -> Any:
    """The value of ``v`` if it is statically a known scalar, else
    :class:`NotScalarConstantError` (or ``v`` itself with ``raise_not_constant=False``).

    Looks through DimShuffles, TensorFromScalar/ScalarFromTensor, ``Shape_i`` of a static
    length and (with ``elemwise``) Elemwise ops (casts, arithmetic) of constant scalars;
    a Constant whose elements are all equal gives that value. ``only_process_constants``
    looks at Constants only. The result is a NumPy scalar.
    """
    try:
        return _underlying_scalar(v, elemwise, only_process_constants, max_recur)
    except NotScalarConstantError:
        if raise_not_constant:
            raise
        return v


def _underlying_scalar(v: Any, elemwise: bool, only_constants: bool, max_recur: int) -> Any:
    from arignote.tensor.elemwise import Elemwise
    from arignote.tensor.shape import Shape_i

    for _ in range(10_000):  # DimShuffle chains; Elemwise nesting is bounded by max_recur
        if not isinstance(v, Variable):
            arr = np.asarray(v) if not isinstance(v, (bool, np.bool_)) else np.asarray(v, dtype=bool)
            if arr.dtype.kind not in "biufc" or arr.size != 1:
                raise NotScalarConstantError(f"{v!r} is not a numeric scalar")
            return arr.reshape(())[()]
        if isinstance(v, Constant):
            data = np.asarray(v.data)
            if data.dtype.kind not in "biufc" or data.size == 0:
                raise NotScalarConstantError(f"{v} is not a numeric scalar")
            flat = data.reshape(-1)
            if data.size > 1 and not (flat == flat[0]).all():
                raise NotScalarConstantError(f"{v} holds {data.size} different values, not one")
            return flat[0]
        node = v.owner
        if node is None or only_constants:
            raise NotScalarConstantError(f"{v} is not a constant")
        op = node.op
        if isinstance(op, (TensorFromScalar, ScalarFromTensor, DimShuffle)):
            v = node.inputs[0]
            continue
        if isinstance(op, Shape_i):
            length = node.inputs[0].type.shape[op.i]
            if length is None:
                raise NotScalarConstantError(f"dimension {op.i} of {node.inputs[0]} is not known statically")
            return np.int64(length)
        length = _static_shape_entry(node)
        if length is not None:
            return np.int64(length)
        if elemwise and isinstance(op, Elemwise) and op.nout == 1 and node.inputs and max_recur > 0:
            values = [_underlying_scalar(i, elemwise, only_constants, max_recur - 1) for i in node.inputs]
            with np.errstate(all="ignore"):
                out = np.asarray(op.scalar_op.impl(*values), dtype=v.type.dtype)
            return out.reshape(())[()]
        raise NotScalarConstantError(f"{v} is computed by {op}; its value is not known statically")
    raise NotScalarConstantError(f"{v}: too deep to be a known constant")


def _static_shape_entry(node: Apply) -> int | None:
    """``x.shape[k]`` (a constant int index into a Shape) where ``x``'s length ``k`` is static."""
    from arignote.tensor.shape import Shape
    from arignote.tensor.subtensor import Subtensor

    if not isinstance(node.op, Subtensor) or len(node.op.idx_list) != 1:
        return None
    (k,) = node.op.idx_list
    src = node.inputs[0].owner
    if not isinstance(k, (int, np.integer)) or src is None or not isinstance(src.op, Shape):
        return None
    shape = src.inputs[0].type.shape
    return shape[k] if -len(shape) <= k < len(shape) else None


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
    normalize_axis(src, nd, "source")  # range and repeats (it returns them sorted)
    normalize_axis(dst, nd, "destination")
    src = [normalize_axis(s, nd, "source")[0] for s in src]  # type: ignore[index]
    dst = [normalize_axis(d, nd, "destination")[0] for d in dst]  # type: ignore[index]
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def expand_dims(x: Any, axis: int | Sequence[int]) -> TensorVariable:
    """Insert length-1 (broadcastable) dimensions at ``axis``."""
    x = as_tensor_variable(x)
    axes = list(axis) if isinstance(axis, (list, tuple, np.ndarray)) else [axis]
    out_ndim = x.type.ndim + len(axes)
    new = normalize_axis(axes, out_ndim) or ()
    order: list = []
    it = iter(range(x.type.ndim))
    for d in range(out_ndim):
        order.append("x" if d in new else next(it))
    return DimShuffle(input_ndim=x.type.ndim, new_order=order)(x)


def squeeze(x: Any, axis: int | Sequence[int] | None = None) -> TensorVariable:
    """Drop length-1 dimensions: all the broadcastable ones, or those in ``axis``.

    An ``axis`` whose length is not known statically is asserted to be 1 at run time
    (through ``specify_shape``, as in PyTensor 3); one statically longer is an error.
    """
    x = as_tensor_variable(x)
    if axis is None:
        drop = [d for d, b in enumerate(x.type.broadcastable) if b]
    else:
        drop = list(normalize_axis(axis, x.type.ndim) or ())
        bad = [d for d in drop if x.type.shape[d] not in (1, None)]
        if bad:
            lengths = ", ".join(f"dimension {d} has length {x.type.shape[d]}" for d in bad)
            raise ValueError(f"squeeze: cannot squeeze {x} of Type {x.type}: {lengths}, not 1")
        unknown = [d for d in drop if x.type.shape[d] is None]
        if unknown:
            from arignote.tensor.shape import specify_shape

            x = specify_shape(x, tuple(1 if d in unknown else None for d in range(x.type.ndim)))
    if not drop:
        return x
    return DimShuffle(input_ndim=x.type.ndim, new_order=[d for d in range(x.type.ndim) if d not in drop])(x)


def flatten(x: Any, ndim: int = 1) -> TensorVariable:
    """Keep the first ``ndim - 1`` dimensions and merge the rest into one."""
    x = as_tensor_variable(x)
    if not 1 <= ndim <= max(1, x.type.ndim):
        raise ValueError(f"flatten: ndim={ndim} is not between 1 and {max(1, x.type.ndim)} for {x.type}")
    from arignote.tensor.shape import reshape, shape_i

    if ndim == 1:
        return reshape(x, (-1,))
    # the kept lengths: static ints where known, else Shape_i (no indexing of x.shape)
    return reshape(x, [shape_i(x, i) for i in range(ndim - 1)] + [-1])


# PyTensor keeps allocation and joining in ``pytensor.tensor.basic``; here each lives in a
# module of its own (alloc.py, join.py, shape.py) and is re-exported under the PyTensor
# path, so ``from arignote.tensor.basic import zeros, stack, MakeVector`` works.
from arignote.tensor.alloc import *  # noqa: E402, F403
from arignote.tensor.join import *  # noqa: E402, F403
from arignote.tensor.math import fill, second  # noqa: E402, F401
from arignote.tensor.shape import MakeVector, make_vector  # noqa: E402, F401

# PyTensor users import these from ``pytensor.tensor.basic``; they live in diag.py,
# shape_utils.py, index_utils.py and basic_extra.py, which need this module first, so they
# are looked up on first use.
_LAZY_EXPORTS = {
    "arignote.tensor.basic_extra": [
        "choose",
        "inverse_permutation",
        "mgrid",
        "nonzero_values",
        "ogrid",
        "permute_row_elements",
        "take_along_axis",
    ],
    "arignote.tensor.diag": [
        "AllocDiag",
        "ExtractDiag",
        "alloc_diag",
        "diag",
        "diagonal",
        "extract_diag",
        "trace",
    ],
    "arignote.tensor.index_utils": ["tril_indices", "tril_indices_from", "triu_indices", "triu_indices_from"],
    "arignote.tensor.shape_utils": [
        "atleast_1d",
        "atleast_2d",
        "atleast_3d",
        "atleast_Nd",
        "empty",
        "empty_like",
        "get_scalar_constant_value",
        "get_vector_length",
        "roll",
        "shape_padaxis",
        "shape_padleft",
        "shape_padright",
        "specify_broadcastable",
    ],
}
_LAZY_HOME = {name: module for module, names in _LAZY_EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    home = _LAZY_HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(home), name)
