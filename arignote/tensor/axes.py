"""Reordering, adding and dropping axes (each a DimShuffle): ``transpose``,
``matrix_transpose``, ``swapaxes``, ``moveaxis``, ``expand_dims``, ``squeeze``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import DimShuffle, normalize_axis
from arignote.tensor.shape import specify_shape

if TYPE_CHECKING:
    from arignote.tensor.variable import TensorVariable

__all__ = ["expand_dims", "matrix_transpose", "moveaxis", "squeeze", "swapaxes", "transpose"]


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
            x = specify_shape(x, tuple(1 if d in unknown else None for d in range(x.type.ndim)))
    if not drop:
        return x
    return DimShuffle(input_ndim=x.type.ndim, new_order=[d for d in range(x.type.ndim) if d not in drop])(x)
