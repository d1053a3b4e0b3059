"""Rules about indexing: lengths read from a shape, indexings that keep everything or only
drop dimensions of length 1, increments into such dimensions made sums, and sums of
increments into zeros made one chain of increments."""

from __future__ import annotations

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.scalar.basic import Add, Mul
from arignote.tensor.conversion import constant
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.indexing.advanced import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    advanced_subtensor1,
)
from arignote.tensor.indexing.basic import IncSubtensor, Subtensor
from arignote.tensor.indexing.increments import (
    constant_place,
    increment_at_points,
    is_point_increment,
    is_zeros,
)
from arignote.tensor.indexing.index import is_full_slice, is_mask, is_placeholder
from arignote.tensor.reductions import sum as tensor_sum
from arignote.tensor.rewriting.elemwise import elemwise_of, exact_cast, scalar_op_of
from arignote.tensor.shape import Shape, Shape_i, reshape, shape_tuple
from arignote.tensor.ufuncs import add, mul, second


def _shape_entry(node: Apply) -> tuple[Variable, int] | None:
    """``(x, i)`` when ``node`` is ``Shape(x)[i]`` for a constant ``i`` (made non-negative)."""
    shape_var = node.inputs[0]
    idx_list = node.op.idx_list
    if shape_var.owner is None or not isinstance(shape_var.owner.op, Shape):
        return None
    if len(idx_list) != 1 or not isinstance(idx_list[0], int):
        return None
    x = shape_var.owner.inputs[0]
    return x, idx_list[0] % x.type.ndim  # in bounds: Subtensor checked it against the static length


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Subtensor])
def local_subtensor_of_static_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``Shape(x)[i]`` where ``x``'s length ``i`` is static: that length, as a constant."""
    entry = _shape_entry(node)
    if entry is None:
        return None
    x, i = entry
    length = x.type.shape[i]
    if length is None:
        return None
    return [constant(np.int64(length))]


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Subtensor])
def local_subtensor_of_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``Shape(x)[i]`` (``x.shape[i]``) with a constant ``i``: ``Shape_i(i)(x)``, which
    reads one length instead of building the whole shape vector."""
    entry = _shape_entry(node)
    if entry is None:
        return None
    x, i = entry
    if x.type.shape[i] is not None:
        return None  # a constant (the rule above)
    return [Shape_i(i)(x)]


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Subtensor])
def local_useless_subtensor(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``x[:]``, ``x[::1, :]``...: an indexing by full slices only is ``x`` itself."""
    if not all(is_full_slice(e) for e in node.op.idx_list):
        return None
    x = node.inputs[0]
    if x.type != node.outputs[0].type:
        return None
    return [x]


def _length_one_places(idx_list: tuple, x: Variable) -> list[int] | None:
    """The dimensions ``idx_list`` indexes at the constant 0 or -1 when ``x``'s length there
    is 1 by its Type, every other entry being a full slice; None when there are none or an
    entry is anything else (a place that may be out of range keeps its error)."""
    places = []
    for d, e in enumerate(idx_list):
        if is_full_slice(e):
            continue
        is_int = isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_))
        if not (is_int and e in (0, -1) and x.type.shape[d] == 1):
            return None
        places.append(d)
    return places or None


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Subtensor])
def local_subtensor_of_length_one_dims(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``x[:, 0]`` where ``x``'s second length is 1 by its Type (``m[:, 0]`` of
    ``m = x.max(axis=1, keepdims=True)``): a DimShuffle dropping that dimension, which the
    DimShuffle rules then merge with the one that made it (none is left of ``m[:, 0]``)."""
    x = node.inputs[0]
    places = _length_one_places(node.op.idx_list, x)
    if places is None:
        return None
    new = DimShuffle(input_ndim=x.type.ndim, new_order=[d for d in range(x.type.ndim) if d not in places])(x)
    return [new] if new.type == node.outputs[0].type else None


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([IncSubtensor])
def local_inc_subtensor_of_length_one_dims(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``inc_subtensor(x[:, 0], y)`` where ``x``'s second length is 1 by its Type: the part
    is all of ``x``, so this is ``x + y`` with ``y`` given that dimension back (a
    ``set_subtensor``: ``y`` broadcast to ``x``'s shape) — an Elemwise that fuses with its
    neighbours instead of a copy of ``x`` and an indexed write. This is the gradient of
    ``m[:, 0]`` for a ``m`` kept 2-d (``keepdims=True``) added to ``m``'s other gradients."""
    op = node.op
    x, y = node.inputs[:2]
    places = _length_one_places(op.idx_list, x)
    if places is None or op.inplace:
        return None
    view = [d for d in range(x.type.ndim) if d not in places]  # the dims x[idx] keeps
    pad = len(view) - y.type.ndim  # y broadcasts to the part from the right
    if pad < 0:
        return None
    order = ["x" if d in places or view.index(d) < pad else view.index(d) - pad for d in range(x.type.ndim)]
    y_full = DimShuffle(input_ndim=y.type.ndim, new_order=order)(y)
    new = second(x, y_full) if op.set_instead_of_inc else add(x, y_full)
    return [new] if new.type == node.outputs[0].type else None


# --- increments into zeros, summed: one chain of increments --------------------------------


_INCREMENTS = (IncSubtensor, AdvancedIncSubtensor1, AdvancedIncSubtensor)


@register_rewrite("canonicalize", "fast_run")
@node_rewriter(elemwise_of(Add), needs=_INCREMENTS)
def serialize_increments_into_zeros(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``inc(zeros, a, i) + inc(zeros, b, j) + c`` → ``inc(inc(c, a, i), b, j)``: the same
    sum, as one chain of increments into one buffer (which the in-place stage then writes
    in place). This is the shape of the gradient of many indexed terms; without it each
    term allocates and sums a whole buffer (quadratic time and memory in the terms)."""
    if not isinstance(node.op.scalar_op, Add) or node.op.inplace_pattern:
        return None
    (out,) = node.outputs
    increments, others = [], []
    for term in node.inputs:
        owner = term.owner
        if (
            owner is not None
            and isinstance(owner.op, _INCREMENTS)
            and not owner.op.set_instead_of_inc
            and term.type == out.type
            and is_zeros(owner.inputs[0])
            and len(fgraph.clients.get(term, ())) == 1
        ):
            increments.append(owner)
        else:
            others.append(term)
    if not increments or (len(increments) == 1 and not others):
        return None
    points = [inc for inc in increments if is_point_increment(inc)] if out.type.ndim == 1 else []
    if len(points) > 1 and any(inc.inputs[1].type.dtype != out.type.dtype for inc in points):
        points = []
    if others:
        base = others[0] if len(others) == 1 else add(*others)
        if base.type != out.type:
            return None  # the other terms broadcast up to the output: keep the sum
    elif len(points) > 1:
        base = points[0].inputs[0]  # the zeros
    else:
        base = increments.pop(0).outputs[0]
    if len(points) > 1:
        # many ``v[k] += a`` at constant places: one vectorized increment (a place named
        # twice gets both terms, in order), one node instead of a chain of len(points)
        base = increment_at_points(base, points)
        taken = set(points)
        increments = [inc for inc in increments if inc not in taken]
    for inc in increments:
        base = inc.op.make_node(base, *inc.inputs[1:]).outputs[0]
    return [base]


#: a sum gathers the terms reading one vector from this many on
GATHER_FROM = 8


@register_rewrite("canonicalize", "fast_run")
@node_rewriter(elemwise_of(Add), needs=(Subtensor,), roots_first=True)
def gather_indexed_terms(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``v[0]*a + v[3]*b + ... + rest`` → ``sum(v[[0, 3, ...]] * [a, b, ...]) + rest``: a
    float scalar sum of many terms that read one vector at constant places (each alone,
    or times a constant) as one gather, one product and one sum, instead of three nodes
    per term. This is a model written term by term; its gradient, many increments at
    constant places, is what :func:`serialize_increments_into_zeros` makes one
    increment. Only the order of the additions changes. Offered roots first (after the
    sum is flattened there), so that the terms it gathers are never visited."""
    if not isinstance(node.op.scalar_op, Add) or node.op.inplace_pattern or len(node.inputs) < GATHER_FROM:
        return None
    (out,) = node.outputs
    dtype = out.type.dtype
    if out.type.ndim != 0 or dtype not in ("float32", "float64"):
        return None
    clients = fgraph.clients
    groups: dict[Variable, list] = {}  # vector -> [(place, scale or None, position)]
    for k, term in enumerate(node.inputs):
        found = _indexed_term(term, dtype, clients)
        if found is not None:
            groups.setdefault(found[0], []).append((*found[1:], k))
    taken: set[int] = set()
    parts = []
    for v, terms in groups.items():
        if len(terms) < GATHER_FROM:
            continue
        places = constant(np.array([p for p, _, _ in terms], dtype="int64"))
        gathered = advanced_subtensor1(v, places)
        if any(scale is not None for _, scale, _ in terms):
            scales = np.array([1 if scale is None else scale for _, scale, _ in terms], dtype=dtype)
            gathered = mul(gathered, constant(scales))
        parts.append(tensor_sum(gathered))
        taken.update(k for _, _, k in terms)
    if not parts:
        return None
    parts += [t for k, t in enumerate(node.inputs) if k not in taken]
    new = parts[0] if len(parts) == 1 else add(*parts)
    return [new] if new.type == out.type else None


def _indexed_term(term: Variable, dtype: str, clients: dict) -> tuple | None:
    """``(v, place, scale)`` when ``term`` is ``v[place]`` (scale None) or ``v[place] * c``
    (read only by the sum) of a ``dtype`` vector ``v``, a constant place and a constant
    ``c`` that ``dtype`` holds exactly; else None."""
    if term.type.dtype != dtype or term.type.ndim != 0:
        return None
    place = _constant_read(term, dtype)
    if place is not None:
        return (*place, None)
    owner = term.owner
    if not isinstance(scalar_op_of(owner), Mul) or len(owner.inputs) != 2 or len(clients.get(term, ())) != 1:
        return None
    for read, c in (owner.inputs, owner.inputs[::-1]):
        place = _constant_read(read, dtype)
        if place is None or not isinstance(c, Constant) or c.type.ndim != 0:
            continue
        scale = exact_cast(np.asarray(c.data), dtype)
        if scale is not None:
            return (*place, scale.item())
    return None


def _constant_read(var: Variable, dtype: str) -> tuple[Variable, int] | None:
    """``(v, k)`` when ``var`` is ``v[k]`` of a ``dtype`` vector ``v`` at a constant ``k``."""
    owner = var.owner
    if owner is None or type(owner.op) is not Subtensor or len(owner.inputs) != 1:
        return None
    (v,) = owner.inputs
    k = constant_place(owner.op)
    if v.type.ndim != 1 or v.type.dtype != dtype or k is None:
        return None
    return v, k


@register_rewrite("specialize", "fast_run")
@node_rewriter([AdvancedSubtensor, AdvancedIncSubtensor])
def rows_by_a_raveled_index(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``x[i]`` for one integer array ``i`` of rank 2 or more, which picks rows of ``x``
    (an embedding lookup ``E[tokens]``): ``x[i.ravel()]`` (AdvancedSubtensor1) reshaped to
    ``i.shape + x.shape[1:]``; and its increment ``inc_subtensor(x[i], y)`` (or set): the
    increment of the rows ``x[i.ravel()]`` by ``y`` with its index dimensions merged. The
    same values in the same order (NumPy's advanced indexing runs over ``i`` in C order), on
    the row gather and scatter that the backends implement directly (the Numba backend
    has no general advanced increment, and NumPy's ``add.at`` is faster on a vector index)."""
    op = node.op
    if len(op.idx_list) != 1:
        return None
    (entry,) = op.idx_list
    if not is_placeholder(entry) or is_mask(entry) or entry.ndim < 2:
        return None
    inc = isinstance(op, AdvancedIncSubtensor)
    if inc and (op.inplace or op.ignore_duplicates):
        return None
    x = node.inputs[0]
    i = node.inputs[2 if inc else 1]
    flat_i = reshape(i, (-1,))
    lengths = shape_tuple(i)
    if not inc:
        new = reshape(advanced_subtensor1(x, flat_i), [*lengths, *shape_tuple(x)[1:]])
    else:
        y = node.inputs[1]
        k = i.type.ndim
        # y must have its index dimensions in full: a length broadcast there (static 1,
        # against i's longer one) would not survive the merge
        if y.type.ndim != k + x.type.ndim - 1:
            return None
        if any(ys == 1 and s != 1 for ys, s in zip(y.type.shape[:k], i.type.shape)):
            return None
        flat_y = reshape(y, [-1, *shape_tuple(y)[k:]])
        new = AdvancedIncSubtensor1(set_instead_of_inc=op.set_instead_of_inc)(x, flat_y, flat_i)
    (out,) = node.outputs
    return [new] if out.type.is_super(new.type) else None
