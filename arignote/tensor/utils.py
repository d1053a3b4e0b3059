"""Small helpers at ``pytensor.tensor.utils``'s path: static broadcasting of lengths, axis
normalisation for reductions, gufunc signatures, array hashing, and the numeric shapes of a
graph's variables for given input shapes.

>>> normalize_reduce_axis(-1, 3)
(2,)
>>> broadcast_static_dim_lengths([1, None, 4])
4
>>> safe_signature([2, 0], [1])
'(i00,i01),()->(o00)'
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Constant, Variable
from arignote.graph.fg import FunctionGraph

__all__ = [
    "broadcast_static_dim_lengths",
    "faster_broadcast_to",
    "faster_ndindex",
    "get_static_shape_from_size_variables",
    "hash_from_ndarray",
    "normalize_reduce_axis",
    "safe_signature",
    "shape_of_variables",
]


def broadcast_static_dim_lengths(dim_lengths: Sequence[int | None]) -> int | None:
    """The broadcast length of one dimension from the inputs' static lengths (``None``:
    unknown): the length other than 1 that they agree on, 1 if all are 1, None if it is not
    known. Two different lengths other than 1 are a ValueError."""
    known = {n for n in dim_lengths if n is not None and n != 1}
    if len(known) > 1:
        raise ValueError(f"static lengths {list(dim_lengths)} cannot be broadcast together")
    if known:
        return known.pop()
    return None if any(n is None for n in dim_lengths) else 1


def faster_broadcast_to(x: Any, shape: Sequence[int]) -> np.ndarray:
    """``np.broadcast_to(x, shape)`` (a read-only view)."""
    return np.broadcast_to(x, shape)


def faster_ndindex(shape: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """The indices of an array of ``shape`` in C order, as ``np.ndindex`` gives them."""
    return itertools.product(*(range(int(n)) for n in shape))


def get_static_shape_from_size_variables(size_vars: Sequence[Any]) -> tuple[int | None, ...]:
    """Each length of a ``size`` given as Variables: its value when it is a constant, else
    None."""
    out: list[int | None] = []
    for v in size_vars:
        if isinstance(v, Constant):
            out.append(int(np.asarray(v.data)))
        elif isinstance(v, (int, np.integer)):
            out.append(int(v))
        else:
            out.append(None)
    return tuple(out)


def hash_from_ndarray(data: Any) -> str:
    """A hex digest of an array's contents, shape and dtype (equal arrays, whatever their
    memory layout, hash alike)."""
    arr = np.ascontiguousarray(data)
    h = hashlib.sha256()
    h.update(str(arr.dtype).encode())
    h.update(str(arr.shape).encode())
    h.update(arr.tobytes())
    return h.hexdigest()


def normalize_reduce_axis(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """``axis`` of a reduction over ``ndim`` dimensions as a tuple of non-negative ints, in
    the order given (None stays None: every axis). An axis out of range is NumPy's
    AxisError; a repeated one a ValueError."""
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        axes: tuple = (axis,)
    elif isinstance(axis, (list, tuple)):
        axes = tuple(axis)
    else:
        raise TypeError(f"axis must be an int or a sequence of ints, got {axis!r}")
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)):
            raise TypeError(f"axis must be an int or a sequence of ints, got {axis!r}")
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(int(a), ndim)
        out.append(int(a) % ndim if ndim else int(a))
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis!r}")
    return tuple(out)


def safe_signature(core_inputs_ndim: Sequence[int], core_outputs_ndim: Sequence[int]) -> str:
    """A gufunc signature for inputs and outputs of these core dimensions, each dimension
    its own name (``i<input><dim>``, ``o<output><dim>``): nothing is assumed equal."""

    def part(prefix: str, ndims: Sequence[int]) -> str:
        return ",".join(
            "(" + ",".join(f"{prefix}{k}{d}" for d in range(n)) + ")" for k, n in enumerate(ndims)
        )

    return f"{part('i', core_inputs_ndim)}->{part('o', core_outputs_ndim)}"


def shape_of_variables(fgraph: FunctionGraph, input_shapes: dict) -> dict[Variable, tuple[int, ...]]:
    """The numeric shape of every variable of ``fgraph`` (inputs and computed ones) for the
    given ``{input: shape}``, from each Op's ``infer_shape``; nothing is computed. A shape
    that depends on input values, not only on their shapes, is a ValueError naming it.

    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> fg = FunctionGraph([x], [x[:, :2].sum(axis=0)], clone=False)
    >>> shapes = shape_of_variables(fg, {x: (4, 5)})
    >>> shapes[fg.outputs[0]]
    (2,)
    """
    missing = [i for i in input_shapes if i not in fgraph.inputs]
    if missing:
        raise ValueError(
            f"shape_of_variables: {missing} are not inputs of the FunctionGraph (it clones its graph "
            "unless built with clone=False: use fgraph.inputs)"
        )
    shapes: dict[Variable, tuple] = {}
    for v in fgraph.inputs:
        if v in input_shapes:
            shapes[v] = tuple(int(n) for n in input_shapes[v])
        elif getattr(v.type, "shape", None) is not None and None not in v.type.shape:
            shapes[v] = tuple(v.type.shape)
    for v in fgraph.variables:
        if isinstance(v, Constant) and hasattr(v.data, "shape"):
            shapes[v] = tuple(np.shape(v.data))
    for node in fgraph.toposort():
        for v in node.inputs:
            if v not in shapes and isinstance(v, Constant):
                shapes[v] = tuple(np.shape(v.data))
        try:
            in_shapes = [shapes[v] if hasattr(v.type, "ndim") else None for v in node.inputs]
        except KeyError as err:
            raise ValueError(f"shape_of_variables: the shape of input {err.args[0]} is not given") from None
        out_shapes = node.op.infer_shape(fgraph, node, in_shapes)
        for out, shp in zip(node.outputs, out_shapes):
            if shp is None:
                continue
            dims = []
            for d in shp:
                if isinstance(d, Variable):
                    try:
                        d = d.eval() if not isinstance(d, Constant) else d.data
                    except Exception as err:
                        raise ValueError(
                            f"shape_of_variables: the shape of {out} (output of {node.op}) depends on "
                            f"the values of the inputs, not only on their shapes ({type(err).__name__})"
                        ) from None
                dims.append(int(d))
            shapes[out] = tuple(dims)
    return shapes
