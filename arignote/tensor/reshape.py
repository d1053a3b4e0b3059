"""Packing several tensors into one and back (PyTensor 3's ``pytensor.tensor.reshape``).

:func:`pack` ravels the middle dimensions of each tensor (all but the kept leading and
trailing ones) and concatenates the results along that raveled axis; :func:`unpack`, given
the same ``keep_axes`` and the raveled shapes ``pack`` returned, restores the tensors. A
typical use: one flat parameter vector for an optimiser, and the parameters back from it.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x, y = pt.dmatrix("x"), pt.dvector("y")
>>> flat, shapes = pack(x, y)
>>> flat.eval({x: np.ones((2, 3)), y: np.arange(2.0)})
array([1., 1., 1., 1., 1., 1., 0., 1.])
>>> x2, y2 = unpack(flat, shapes)
>>> x2.type.ndim, y2.type.ndim
(2, 1)

Kept axes: ``None`` keeps none; non-negative axes must run from 0 without gaps (leading
axes kept), negative ones end at -1 (trailing axes kept), and both may be given together.
The kept axes must have the same length in every tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.tensor.conversion import (
    NotScalarConstantError,
    as_tensor_variable,
    get_underlying_scalar_constant_value,
)
from arignote.tensor.join import join, split
from arignote.tensor.reductions import prod
from arignote.tensor.shape import MakeVector, make_vector, shape_tuple
from arignote.tensor.shape_utils import join_dims, split_dims

__all__ = ["join_dims", "pack", "split_dims", "unpack"]


def _kept(keep_axes: int | Sequence[int] | None) -> tuple[int, int]:
    """``keep_axes`` -> (how many leading axes are kept, how many trailing)."""
    if keep_axes is None:
        return 0, 0
    axes = [keep_axes] if isinstance(keep_axes, (int, np.integer)) else list(keep_axes)
    if not all(isinstance(a, (int, np.integer)) for a in axes):
        raise TypeError(f"keep_axes must be ints, got {keep_axes!r}")
    front = sorted(int(a) for a in axes if a >= 0)
    back = sorted(int(a) for a in axes if a < 0)
    if len(set(axes)) != len(axes):
        raise ValueError(f"keep_axes {keep_axes!r} names an axis twice")
    if front and front != list(range(len(front))):
        raise ValueError(
            f"keep_axes {keep_axes!r}: the non-negative kept axes must be 0, 1, ... without gaps "
            "(to keep trailing axes, use negative ones)"
        )
    if back and back != list(range(-len(back), 0)):
        raise ValueError(
            f"keep_axes {keep_axes!r}: the negative kept axes must end at -1 without gaps "
            "(to keep leading axes, use non-negative ones)"
        )
    return len(front), len(back)


def _as_tensors(tensors: tuple) -> list[Variable]:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise ValueError("pack: no tensors to pack")
    return [as_tensor_variable(t) for t in tensors]


def pack(*tensors: Any, keep_axes: int | Sequence[int] | None = None) -> tuple[Variable, list[Variable]]:
    """The tensors with their non-kept dimensions raveled, joined along the raveled axis;
    and, per tensor, the shape of what was raveled (an int64 vector) for :func:`unpack`."""
    ts = _as_tensors(tensors)
    front, back = _kept(keep_axes)
    parts, shapes = [], []
    for k, t in enumerate(ts):
        ndim = t.type.ndim
        if ndim < front + back:
            raise ValueError(
                f"pack: input {k} ({t}) has {ndim} dimension(s), but keep_axes={keep_axes!r} keeps "
                f"{front + back}"
            )
        entries = shape_tuple(t)[front : ndim - back]
        shapes.append(make_vector(*entries, dtype="int64") if entries else np.zeros(0, dtype="int64"))
        parts.append(join_dims(t, front, len(entries)))
    return join(front, *parts), [as_tensor_variable(s) for s in shapes]


def unpack(
    packed_input: Any, packed_shapes: Sequence[Any], keep_axes: int | Sequence[int] | None = None
) -> list[Variable]:
    """The tensors :func:`pack` packed: ``packed_input`` split along the raveled axis and
    each piece given back its raveled dimensions (``packed_shapes``, from ``pack``)."""
    packed = as_tensor_variable(packed_input)
    front, back = _kept(keep_axes)
    if packed.type.ndim != front + back + 1:
        raise ValueError(
            f"unpack: {packed} ({packed.type}) should have {front + back + 1} dimensions for "
            f"keep_axes={keep_axes!r}"
        )
    shapes = [as_tensor_variable(s) for s in packed_shapes]
    for k, s in enumerate(shapes):
        if s.type.ndim != 1 or s.type.shape[0] is None:
            raise ValueError(f"unpack: packed shape {k} ({s}, {s.type}) must be a vector of known length")
    sizes = [_size(s) for s in shapes]
    pieces = [packed] if len(shapes) == 1 else split(packed, sizes, len(shapes), axis=front)
    return [split_dims(p, _entries(s), axis=front) for p, s in zip(pieces, shapes)]


def _entries(s: Variable) -> list:
    # the entries themselves where pack built the vector: static lengths stay static
    items = list(s.owner.inputs) if s.owner is not None and isinstance(s.owner.op, MakeVector) else None
    out: list = []
    for i in range(s.type.shape[0]):
        e = items[i] if items is not None else s[i]
        try:
            out.append(int(get_underlying_scalar_constant_value(e)))
        except NotScalarConstantError:
            out.append(e)
    return out


def _size(s: Variable) -> Any:
    return prod(s) if s.type.shape[0] else np.int64(1)
