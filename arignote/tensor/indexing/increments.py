"""Increments into zeros, what the gradient of indexing builds: recognising them, and
many increments at constant places of one vector summed as one vectorized increment.

The gradient of ``v[0] * a + v[3] * b + ...`` is a sum of ``inc_subtensor`` of zeros at
each place. Summed term by term, that is one buffer per term; as one
``AdvancedIncSubtensor1`` it is one node and one pass over the values. The gradient pass
sums that way (:func:`sum_increments`), and the rewrite that serializes increments into
zeros uses the same pieces.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import Op
from arignote.tensor.alloc import Alloc
from arignote.tensor.conversion import constant
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.indexing.advanced import AdvancedIncSubtensor1
from arignote.tensor.indexing.basic import IncSubtensor
from arignote.tensor.join import stack
from arignote.tensor.ufuncs import add, second

__all__ = ["is_zeros", "constant_place", "is_point_increment", "increment_at_points", "sum_increments"]

#: the gradient pass sums point increments into one vector as one increment from this many on
POINTS_FROM = 8


def is_zeros(x: Variable) -> bool:
    """Whether ``x`` is all zeros by construction (a zero constant, ``alloc(0, ...)``,
    ``fill(v, 0)`` or a dimshuffle of one of those), whatever its shape."""
    if isinstance(x, Constant):
        return not np.any(np.asarray(x.data))
    owner = x.owner
    if owner is None:
        return False
    if isinstance(owner.op, Alloc):
        return is_zeros(owner.inputs[0])
    if owner.op == second:
        return is_zeros(owner.inputs[1])
    if isinstance(owner.op, DimShuffle):
        return is_zeros(owner.inputs[0])
    return False


def constant_place(op: Op) -> int | None:
    """``k`` when ``op`` (a ``Subtensor`` or ``IncSubtensor``) indexes its first dimension
    only, at the constant ``k``."""
    idx_list = getattr(op, "idx_list", ())
    (entry,) = idx_list if len(idx_list) == 1 else (None,)
    if isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
        return int(entry)
    return None


def is_point_increment(node: Apply) -> bool:
    """Whether ``node`` is ``inc_subtensor(v[k], a)`` of a vector at a constant ``k``."""
    op = node.op
    if type(op) is not IncSubtensor or op.set_instead_of_inc or len(node.inputs) != 2:
        return False
    return constant_place(op) is not None and node.inputs[1].type.ndim == 0


def increment_at_points(base: Variable, points: Sequence[Apply]) -> Variable | None:
    """``base`` with the value of each point increment in ``points`` added at its place,
    as one ``AdvancedIncSubtensor1`` (a place named twice gets both values, in order);
    None when the values are not of ``base``'s dtype. Constant values make one constant."""
    values = [inc.inputs[1] for inc in points]
    dtype = base.type.dtype
    if any(v.type.dtype != dtype for v in values):
        return None
    if all(isinstance(v, Constant) for v in values):
        stacked = constant(np.array([v.data for v in values], dtype=dtype))
    else:
        stacked = stack(values)
    places = constant(np.array([constant_place(inc.op) for inc in points], dtype="int64"))
    return AdvancedIncSubtensor1()(base, stacked, places)


def sum_increments(terms: Sequence[Variable]) -> Variable | None:
    """The sum of ``terms`` with the point increments into one zeros vector (at least
    :data:`POINTS_FROM` of them, each of the sum's Type) made one increment, the other
    terms added to it; None when there are not that many.

    This is how the gradient pass sums the terms of a vector read at many constant places:
    ``grad(v[0] * a + v[3] * b + ..., v)`` is one increment of zeros, not a sum of one
    increment per term.
    """
    by_zeros: dict[Variable, list[Apply]] = {}
    for t in terms:
        owner = t.owner
        if owner is not None and is_point_increment(owner) and t.type.ndim == 1:
            by_zeros.setdefault(owner.inputs[0], []).append(owner)
    zeros, points = max(by_zeros.items(), key=lambda kv: len(kv[1]), default=(None, []))
    if len(points) < POINTS_FROM or not is_zeros(zeros):
        return None
    out_type = points[0].outputs[0].type
    if any(p.outputs[0].type != out_type for p in points):
        return None
    total = increment_at_points(zeros, points)
    if total is None or total.type != out_type:
        return None
    taken = {p.outputs[0] for p in points}
    others = [t for t in terms if t not in taken]
    return add(total, *others) if others else total
