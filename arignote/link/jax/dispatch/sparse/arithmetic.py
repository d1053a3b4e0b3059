"""JAX functions of :mod:`arignote.sparse.arithmetic`: sums, differences, products and
reductions with sparse operands (BCOO values: see
:mod:`~arignote.link.jax.dispatch.sparse.values`).

What is special:

* ``sparse + sparse`` (:class:`AddSS`) concatenates the two operands' entries: its number of
  entries is the bound ``nse(x) + nse(y)``, and coordinates both store are duplicates whose
  values add up (summed on the host, or by an Op that reads the parts).
* ``sparse * sparse`` (:class:`MulSS`) keeps an entry wherever both operands store one: the
  operand with fewer entries gives the coordinates (the bound is the smaller ``nse``), the
  other is densified and read there, and coordinates the other does not store become padding.
* Products with a dense operand, negation and :class:`StructuredAddSV` change ``data`` only
  and keep their sparse input's entries (``keeps_entries``). An Op that adds something per
  stored entry (:class:`StructuredAddSV`) first sums the duplicates of an input that may hold
  them, since a duplicate counts once in SciPy's matrix.
* :class:`AddSSData` checks that the operands have the same structure, as SciPy's parts
  say (their ``indices`` and ``indptr``), when the values arrive; for operands computed with
  a bound on their entries it compares the sets of stored coordinates instead.
* Shapes are static under ``jax.jit``: operands of different shapes raise a ValueError while
  tracing, with the message the reference ``perform`` gives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.sparse.values import (
    BCOO,
    coordinates,
    exact,
    from_parts,
    keeps_entries,
    padded,
    padding,
    parts,
    with_data,
)
from arignote.link.jax.dispatch.static import as_dtype, raise_unless
from arignote.sparse.arithmetic import (
    AddSD,
    AddSS,
    AddSSData,
    MulSD,
    MulSS,
    MulSV,
    Neg,
    SpSum,
    StructuredAddSV,
    _check_same_shape,
)

keeps_entries(AddSSData, MulSD, MulSV, Neg, StructuredAddSV)


def _read_at(matrix: Any, x: BCOO) -> Any:
    """The dense ``matrix`` read at each entry of ``x`` (zero at a padding entry, whose
    coordinates are outside the matrix)."""
    rows, cols = coordinates(x)
    return matrix.at[rows, cols].get(mode="fill", fill_value=0)


def _read_columns(y: Any, x: BCOO, dtype: str) -> Any:
    """The vector ``y`` (as ``dtype``) read at the column of each entry of ``x`` (zero at a
    padding entry)."""
    _, cols = coordinates(x)
    return as_dtype(y, dtype).at[cols].get(mode="fill", fill_value=0)


def _both(x: BCOO, y: BCOO, dtype: str) -> BCOO:
    """The entries of ``x`` and of ``y`` in one matrix, values as ``dtype``: a coordinate both
    store is a duplicate, whose two values add up."""
    data = jnp.concatenate([x.data.astype(dtype), y.data.astype(dtype)])
    return BCOO((data, jnp.concatenate([x.indices, y.indices])), shape=x.shape)


def _stored(x: BCOO) -> Any:
    """A dense boolean matrix: where ``x`` stores an entry (a duplicated coordinate once,
    padding not at all)."""
    ones = jnp.where(padding(x), 0, 1).astype(jnp.int32)
    return with_data(x, ones).todense() > 0


def _check_vector(op: Any, x: BCOO, y: Any) -> None:
    if x.shape[1] != y.shape[0]:  # static shapes: raised while tracing
        raise ValueError(f"{op}: the matrix has {x.shape[1]} columns but the vector has length {y.shape[0]}")


# --- addition --------------------------------------------------------------------------------


@jax_funcify.register(AddSS)
def _add_ss(op: AddSS, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def add_ss(x: BCOO, y: BCOO) -> BCOO:
        _check_same_shape(op, x, y)
        return _both(x, y, dtype)  # the union of the entries

    return add_ss


@jax_funcify.register(AddSD)
def _add_sd(op: AddSD, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def add_sd(x: BCOO, y: Any) -> Any:
        _check_same_shape(op, x, y)
        rows, cols = coordinates(x)
        # a scatter-add: duplicates add up, padding entries (outside the matrix) are dropped
        return as_dtype(y, dtype).at[rows, cols].add(x.data.astype(dtype), mode="drop")

    return add_sd


@jax_funcify.register(AddSSData)
def _add_ss_data(op: AddSSData, node: Apply | None = None, **kwargs: Any) -> Callable:
    fmt = node.inputs[0].type.format
    dtype = node.outputs[0].type.dtype
    known = exact(node.inputs[0]) and exact(node.inputs[1])
    mismatch = f"{op}: the operands do not have the same structure (indices and indptr differ)"

    def add_ss_data(x: BCOO, y: BCOO) -> BCOO:
        _check_same_shape(op, x, y)
        if known:
            if x.nse != y.nse:  # SciPy's numbers of stored entries: static
                raise ValueError(f"{mismatch}: {x.nse} and {y.nse} stored entries")
            # SciPy's parts of each (the two may hold their entries in different orders, e.g.
            # one converted from the other format), compared and added entry for entry
            x_data, x_indices, x_indptr = parts(x, fmt)
            y_data, y_indices, y_indptr = parts(y, fmt)
            same = jnp.array_equal(x_indices, y_indices) & jnp.array_equal(x_indptr, y_indptr)
            raise_unless(same, mismatch)
            return from_parts((x_data + y_data).astype(dtype), x_indices, x_indptr, x.shape, fmt)
        # operands with duplicates or padding: their SciPy parts are not at hand, so the
        # structures are compared as sets of stored coordinates, and the entries concatenated
        raise_unless(jnp.array_equal(_stored(x), _stored(y)), mismatch)
        return _both(x, y, dtype)

    return add_ss_data


@jax_funcify.register(StructuredAddSV)
def _structured_add_sv(op: StructuredAddSV, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype
    known = exact(node.inputs[0])

    def structured_add_sv(x: BCOO, y: Any) -> BCOO:
        _check_vector(op, x, y)
        if not known:
            # y[j] is added once per stored entry of SciPy's matrix: duplicates summed first
            x = x.sum_duplicates(nse=x.nse)
        return with_data(x, x.data.astype(dtype) + _read_columns(y, x, dtype))

    return structured_add_sv


@jax_funcify.register(Neg)
def _neg(op: Neg, node: Apply | None = None, **kwargs: Any) -> Callable:
    def neg(x: BCOO) -> BCOO:
        return with_data(x, -x.data)

    return neg


# --- multiplication ----------------------------------------------------------------------------


@jax_funcify.register(MulSS)
def _mul_ss(op: MulSS, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def mul_ss(x: BCOO, y: BCOO) -> BCOO:
        _check_same_shape(op, x, y)
        # the product is elementwise, so the operands commute: the one with fewer entries
        # (static) gives the coordinates, the other is read densified there (its duplicates
        # summed by todense; a duplicate of the first multiplies and still adds up)
        few, many = (x, y) if x.nse <= y.nse else (y, x)
        values = few.data.astype(dtype) * _read_at(many.todense().astype(dtype), few)
        # where the other operand stores nothing SciPy stores nothing either: padding there
        return padded(with_data(few, values), ~_read_at(_stored(many), few))

    return mul_ss


@jax_funcify.register(MulSD)
def _mul_sd(op: MulSD, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def mul_sd(x: BCOO, y: Any) -> BCOO:
        y = as_dtype(y, dtype)
        if y.ndim == 0:
            return with_data(x, x.data.astype(dtype) * y)
        _check_same_shape(op, x, y)
        return with_data(x, x.data.astype(dtype) * _read_at(y, x))

    return mul_sd


@jax_funcify.register(MulSV)
def _mul_sv(op: MulSV, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def mul_sv(x: BCOO, y: Any) -> BCOO:
        _check_vector(op, x, y)
        return with_data(x, x.data.astype(dtype) * _read_columns(y, x, dtype))

    return mul_sv


# --- sums ------------------------------------------------------------------------------------


@jax_funcify.register(SpSum)
def _sp_sum(op: SpSum, node: Apply | None = None, **kwargs: Any) -> Callable:
    axis, dtype = op.axis, node.outputs[0].type.dtype

    def sp_sum(x: BCOO) -> Any:
        # padding entries may carry a value (JAX's sum_duplicates adds padding together)
        data = jnp.where(padding(x), jnp.zeros((), x.data.dtype), x.data).astype(dtype)
        if axis is None:
            return jnp.sum(data, dtype=dtype)
        rows, cols = coordinates(x)
        keys = cols if axis == 0 else rows
        # a scatter-add over the other axis's index: duplicates add, padding is dropped
        return jnp.zeros(x.shape[1 - axis], dtype=dtype).at[keys].add(data, mode="drop")

    return sp_sum
