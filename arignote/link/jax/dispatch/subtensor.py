"""JAX implementations of indexing: basic (:class:`Subtensor`, :class:`IncSubtensor`) and
advanced (integer arrays, boolean masks) reads, increments and writes.

Each Op's ``idx_list`` is read once, when the function is made: ints, ``None`` and
``Ellipsis`` stay in the index as they are, and the index inputs fill their slots at run
time. JAX indexes with traced integers and integer arrays, but the bounds of a slice and a
boolean mask decide the shape of the result, so they must be static: a constant of the graph,
or concrete values outside ``jax.jit`` (inside, a
:class:`~arignote.link.jax.dispatch.static.DataDependentShapeError` names the node). One
exception: writing a value of one element through a single traced mask is a ``where``.

As everywhere in JAX, an integer index out of bounds is clamped when reading and dropped when
writing, where NumPy (and arignote's other backends) raise ``IndexError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import (
    DataDependentShapeError,
    as_dtype,
    concrete,
    shape_value,
    static_input,
)
from arignote.tensor.indexing.advanced import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
)
from arignote.tensor.indexing.basic import IncSubtensor, Subtensor
from arignote.tensor.indexing.index import is_full_slice, is_mask, is_placeholder

__all__ = ["index_maker"]

IndexFn = Callable[[Sequence[Any]], tuple]


def _slots(idx_list: Sequence[Any]) -> list[tuple[int, int, str]]:
    """(entry position, slice part 0-2 or -1, kind) for each index input, in input order;
    kind is "part" (a slice bound), "int", "array" or "mask"."""
    slots = []
    for pos, e in enumerate(idx_list):
        if isinstance(e, slice):
            slots.extend(
                (pos, k, "part") for k, p in enumerate((e.start, e.stop, e.step)) if is_placeholder(p)
            )
        elif is_placeholder(e):
            kind = "mask" if is_mask(e) else ("int" if e.ndim == 0 else "array")
            slots.append((pos, -1, kind))
    return slots


def index_maker(node: Apply, idx_list: Sequence[Any], first_index_input: int) -> IndexFn:
    """A function from the values of the node's index inputs (those from
    ``first_index_input`` on) to the JAX index for ``idx_list``. Constant index inputs are
    read here; a slice bound computed from static shapes (``x[: x.shape[0] - 1]``) is computed
    from ``shapes`` (the shapes of the node's input values); other slice bounds and masks must
    be concrete when it runs."""
    slots = _slots(idx_list)
    template = list(idx_list)
    fixed: dict[int, Any] = {}  # slot number -> its static value
    for s, (_, _, kind) in enumerate(slots):
        value = static_input(node, first_index_input + s)
        if value is not None and kind in ("part", "mask"):
            fixed[s] = int(value) if kind == "part" else value

    def make(values: Sequence[Any], shapes: dict | None = None) -> tuple:
        out = template.copy()
        for s, ((pos, k, kind), v) in enumerate(zip(slots, values)):
            if s in fixed:
                v = fixed[s]
            elif kind == "part":
                known = None if shapes is None else shape_value(node.inputs[first_index_input + s], shapes)
                what = f"the slice bound of index entry {pos}"
                v = int(known) if known is not None else int(concrete(v, node, what))
            elif kind == "mask":
                v = concrete(v, node, f"the boolean mask of index entry {pos}")
            if k >= 0:
                e = out[pos]
                parts = [e.start, e.stop, e.step]
                parts[k] = v
                out[pos] = slice(*parts)
            else:
                out[pos] = v
        return tuple(out)

    return make


def input_shapes(node: Apply, values: Sequence[Any]) -> dict:
    """The shapes of the node's input values, by input Variable (static under ``jax.jit``)."""
    return {v: np.shape(a) for v, a in zip(node.inputs, values)}


def _reader(node: Apply, idx_list: Sequence[Any]) -> Callable[..., Any]:
    index = index_maker(node, idx_list, 1)

    def read(x: Any, *idx: Any) -> Any:
        return jnp.asarray(x)[index(idx, input_shapes(node, (x, *idx)))]

    return read


@jax_funcify.register(Subtensor)
def _subtensor(op: Subtensor, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    return _reader(node, op.idx_list)


@jax_funcify.register(AdvancedSubtensor)
def _advanced_subtensor(
    op: AdvancedSubtensor, node: Apply | None = None, **kwargs: Any
) -> Callable[..., Any]:
    return _reader(node, op.idx_list)


@jax_funcify.register(AdvancedSubtensor1)
def _advanced_subtensor1(
    op: AdvancedSubtensor1, node: Apply | None = None, **kwargs: Any
) -> Callable[..., Any]:
    def take_rows(x: Any, i: Any) -> Any:
        return jnp.asarray(x)[i]

    return take_rows


def _single_mask_where(idx_list: Sequence[Any], node: Apply) -> Callable[..., Any] | None:
    """For ``x[mask] = y`` / ``+= y`` with one mask entry (then only ``:``) and a ``y`` of one
    element: the write as a ``where``, which needs no static mask. None otherwise."""
    entries = [e for e in idx_list if not is_full_slice(e)]
    if len(entries) != 1 or not is_mask(entries[0]) or idx_list[0] is not entries[0]:
        return None
    if any(s != 1 for s in node.inputs[1].type.shape):
        return None
    mask_ndim = entries[0].ndim
    x_ndim = node.inputs[0].type.ndim

    def where(x: Any, y: Any, mask: Any, set_instead_of_inc: bool) -> Any:
        m = jnp.reshape(mask, mask.shape + (1,) * (x_ndim - mask_ndim))
        value = jnp.reshape(y, ()).astype(x.dtype)
        return jnp.where(m, value if set_instead_of_inc else x + value, x)

    return where


def _set_last_wins(x: Any, i: Any, y: Any) -> Any:
    """``x[i] = y`` where a place written more than once keeps the last write, as NumPy's.

    JAX applies repeated updates of one scatter in any order (on a GPU they race), so the
    last write of each place is found first (a scatter-max of the writes' positions, which
    is order-free) and only it is added, onto places first set to zero (-0.0: adding it
    changes no value, signed zeros included)."""
    entries = i if isinstance(i, tuple) else (i,)
    if not any(getattr(e, "ndim", 0) > 0 and jnp.issubdtype(e.dtype, jnp.integer) for e in entries):
        return x.at[i].set(y)  # slices, integers and masks name each place once
    part = x[i]
    y = jnp.broadcast_to(y, part.shape)
    pos = jnp.arange(part.size, dtype=jnp.int32).reshape(part.shape)
    last = jnp.full(x.shape, -1, dtype=jnp.int32).at[i].max(pos)
    winner = last[i] == pos
    if x.dtype == jnp.bool_:
        return x.at[i].set(False).at[i].max(jnp.where(winner, y, False))
    zero = jnp.array(-0.0 if jnp.issubdtype(x.dtype, jnp.inexact) else 0, dtype=x.dtype)
    return x.at[i].set(zero).at[i].add(jnp.where(winner, y, zero))


def _writer(
    op: Any, node: Apply, idx_list: Sequence[Any], set_instead_of_inc: bool, ignore_duplicates: bool = False
) -> Callable[..., Any]:
    index = index_maker(node, idx_list, 2)
    where = _single_mask_where(idx_list, node)

    def write(x: Any, y: Any, *idx: Any) -> Any:
        x = jnp.asarray(x)
        if where is not None and isinstance(idx[0], jax.core.Tracer) and static_input(node, 2) is None:
            return where(x, y, idx[0], set_instead_of_inc)
        try:
            i = index(idx, input_shapes(node, (x, y, *idx)))
        except DataDependentShapeError as err:
            raise DataDependentShapeError(
                f"{err} (a mask write is a `where` only for a single mask and a value of one element)"
            ) from None
        y = as_dtype(y, x.dtype)
        if set_instead_of_inc:
            return _set_last_wins(x, i, y)
        if ignore_duplicates:  # the last write to a repeated place wins, as NumPy's x[i] += y
            return _set_last_wins(x, i, x[i] + y)
        return x.at[i].add(y)  # repeated places accumulate (numpy.add.at)

    return write


@jax_funcify.register(IncSubtensor)
def _inc_subtensor(op: IncSubtensor, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    return _writer(op, node, op.idx_list, op.set_instead_of_inc)


@jax_funcify.register(AdvancedIncSubtensor)
def _advanced_inc_subtensor(
    op: AdvancedIncSubtensor, node: Apply | None = None, **kwargs: Any
) -> Callable[..., Any]:
    return _writer(op, node, op.idx_list, op.set_instead_of_inc, op.ignore_duplicates)


@jax_funcify.register(AdvancedIncSubtensor1)
def _advanced_inc_subtensor1(
    op: AdvancedIncSubtensor1, node: Apply | None = None, **kwargs: Any
) -> Callable[..., Any]:
    set_instead_of_inc = op.set_instead_of_inc

    def write_rows(x: Any, y: Any, i: Any) -> Any:
        x = jnp.asarray(x)
        y = as_dtype(y, x.dtype)
        return _set_last_wins(x, i, y) if set_instead_of_inc else x.at[i].add(y)

    return write_rows
