"""JAX functions of :mod:`arignote.sparse.indexing`: slices, single entries, rows and lists of
entries of a sparse matrix, and their gradients (BCOO values: see
:mod:`~arignote.link.jax.dispatch.sparse.values`).

What is special:

* A slice ``x[a:b:s, c:d:t]`` keeps ``x``'s number of entries: the entries outside the slice
  become padding and the others move to their place in the result (any step, negative ones
  included). Its bounds decide the result's shape, so they must be static (constants, or
  integer inputs, which the linker then makes static arguments).
* The rows ``x[rows]`` are a BCOO whose number of entries is a bound known when tracing: the
  entries times the largest number of times a row is asked for (known when ``rows`` is
  static, else ``len(rows)``), or, when smaller, ``len(rows)`` times the entries a row can
  hold once duplicates are summed. The unused ones are padding.
* ``x[i, j]`` and ``x[rows, cols]`` read dense values: every entry at a position adds up
  (duplicates, as SciPy's), padding counts for nothing.
* Indices count from the end when negative; one outside the matrix raises ``IndexError`` as
  SciPy does: while tracing when the index is static, else when the values arrive
  (:func:`~arignote.link.jax.dispatch.static.raise_unless`). The gradients take indices
  modulo the length, as their ``perform`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.sparse.values import (
    BCOO,
    INDEX_DTYPE,
    coordinates,
    dense,
    padded,
    padding,
)
from arignote.link.jax.dispatch.static import concrete, is_tracer, raise_unless, shape_value, static_input
from arignote.sparse.indexing import (
    GetItem2d,
    GetItem2dGrad,
    GetItem2Lists,
    GetItem2ListsGrad,
    GetItemList,
    GetItemListGrad,
    GetItemScalar,
)

__all__ = ["checked_indices", "summed"]


def checked_indices(i: Any, n: int, op: Any, what: str) -> Any:
    """The integer indices ``i`` into a length ``n``, negative ones counted from the end,
    after checking that each lies in ``[-n, n)`` (``IndexError`` otherwise, as SciPy's and
    NumPy's indexing): at once for concrete indices (a NumPy array is returned), when the
    values arrive for traced ones."""
    if not is_tracer(i):
        a = np.asarray(i).astype(np.int64)
        bad = (a < -n) | (a >= n)
        if bad.any():
            raise IndexError(f"{op}: {what} {a[bad].flat[0]} is out of bounds for length {n}")
        return np.where(a < 0, a + n, a)
    i = i.astype(jnp.int64)  # (a narrow dtype could not hold n)
    ok = (i >= -n) & (i < n)

    def message(values: Any, good: Any) -> str:
        return f"{op}: {what} {np.asarray(values)[~np.asarray(good)].flat[0]} is out of bounds for length {n}"

    raise_unless(jnp.all(ok), message, i, ok, error=IndexError)
    return jnp.where(i < 0, i + n, i)


def summed(data: Any, slots: Any, n: int) -> Any:
    """``n`` sums: ``data[e]`` added into ``slots[e]`` (slots outside ``[0, n)`` dropped), in
    ``data``'s dtype (wrapping around as SciPy's integer sums do)."""
    return jnp.zeros(n, data.dtype).at[slots].add(data, mode="drop")


# --- slices -------------------------------------------------------------------------------------


def _slice_bounds(
    given: tuple[bool, ...], node: Apply, x: BCOO, bounds: tuple, first: int
) -> tuple[slice, slice]:
    """The two slices of ``x[...]`` (``bounds``: the node's inputs from ``first`` on), their
    bounds static: constants of the graph, computed from static shapes, or concrete values."""
    shapes = {node.inputs[0]: x.shape}
    values = []
    for k, b in enumerate(bounds):
        known = static_input(node, first + k)
        if known is None and is_tracer(b):
            known = shape_value(node.inputs[first + k], shapes)
        values.append(known if known is not None else concrete(b, node, f"slice bound {k}"))
    return GetItem2d(given).slices(values)


def _positions(ids: Any, sl: slice, n: int) -> tuple[Any, Any]:
    """For coordinates ``ids`` along an axis of length ``n``: each one's position in the
    result of the slice ``sl``, and whether the slice keeps it (``range(n)[sl]`` holds
    ``start + k * step`` for ``0 <= k < length``)."""
    start, stop, step = sl.indices(n)
    length = len(range(start, stop, step))
    offset = ids - start
    k = offset // step  # (floor division: with a negative step too)
    kept = (offset % step == 0) & (k >= 0) & (k < length)
    return k, kept


@jax_funcify.register(GetItem2d)
def _get_item_2d(op: GetItem2d, node: Apply | None = None, **kwargs: Any) -> Callable:
    def get_item_2d(x: BCOO, *bounds: Any) -> BCOO:
        rows_sl, cols_sl = _slice_bounds(op.given, node, x, bounds, 1)  # (a zero step raises ValueError)
        n_rows, n_cols = x.shape
        shape = (len(range(n_rows)[rows_sl]), len(range(n_cols)[cols_sl]))
        rows, cols = coordinates(x)
        new_rows, keep_rows = _positions(rows, rows_sl, n_rows)
        new_cols, keep_cols = _positions(cols, cols_sl, n_cols)
        # padding lies outside [0, n): no slice keeps it
        out = BCOO((x.data, jnp.stack([new_rows, new_cols], axis=1).astype(INDEX_DTYPE)), shape=shape)
        return padded(out, ~(keep_rows & keep_cols))

    return get_item_2d


@jax_funcify.register(GetItem2dGrad)
def _get_item_2d_grad(op: GetItem2dGrad, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def get_item_2d_grad(x: BCOO, gz: BCOO, *bounds: Any) -> BCOO:
        rows_sl, cols_sl = _slice_bounds(op.given, node, x, bounds, 2)
        (r0, _, r_step), (c0, _, c_step) = rows_sl.indices(x.shape[0]), cols_sl.indices(x.shape[1])
        lengths = (len(range(x.shape[0])[rows_sl]), len(range(x.shape[1])[cols_sl]))
        if gz.shape[0] > lengths[0] or gz.shape[1] > lengths[1]:
            raise IndexError(f"{op}: a gradient of shape {gz.shape} for a slice of shape {lengths}")
        rows, cols = coordinates(gz)
        # position k of the slice is start + k * step of x
        indices = jnp.stack([r0 + rows * r_step, c0 + cols * c_step], axis=1).astype(INDEX_DTYPE)
        out = BCOO((gz.data.astype(dtype), indices), shape=x.shape)
        return padded(out, padding(gz))

    return get_item_2d_grad


# --- single entries, rows, lists of entries -----------------------------------------------------


@jax_funcify.register(GetItemScalar)
def _get_item_scalar(op: GetItemScalar, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def get_item_scalar(x: BCOO, i: Any, j: Any) -> Any:
        i = checked_indices(i, x.shape[0], op, "row")
        j = checked_indices(j, x.shape[1], op, "column")
        rows, cols = coordinates(x)
        at = (rows == i) & (cols == j)  # (padding never matches: i, j are inside the matrix)
        return jnp.sum(jnp.where(at, x.data, jnp.zeros((), x.data.dtype))).astype(dtype)

    return get_item_scalar


@jax_funcify.register(GetItemList)
def _get_item_list(op: GetItemList, node: Apply | None = None, **kwargs: Any) -> Callable:
    def get_item_list(x: BCOO, rows: Any) -> BCOO:
        n_rows, n_cols = x.shape
        n_out = rows.shape[0]
        rows = checked_indices(rows, n_rows, op, "row")
        shape = (n_out, n_cols)
        nse = x.nse
        # the bound of the result's entries: every entry as many times as its row is asked
        # for, or (duplicates summed) each output row full
        repeats = n_out if is_tracer(rows) else int(np.bincount(rows, minlength=1).max(initial=0))
        by_entries, by_rows = nse * repeats, n_out * min(n_cols, nse)
        if by_rows < by_entries:
            x = x.sum_duplicates(nse=nse)
        bound = min(by_entries, by_rows)
        if bound == 0:
            return BCOO((jnp.zeros(0, x.data.dtype), jnp.zeros((0, 2), INDEX_DTYPE)), shape=shape)
        entry_rows, entry_cols = coordinates(x)
        entry_rows = jnp.where(padding(x), n_rows, entry_rows)  # padding sorts last, matches nothing
        order = jnp.argsort(entry_rows, stable=True)
        sorted_rows = entry_rows[order]
        first = jnp.searchsorted(sorted_rows, rows, side="left")
        count = jnp.searchsorted(sorted_rows, rows, side="right") - first
        ends = jnp.cumsum(count)
        # slot t of the result is entry t - (ends[k] - count[k]) of output row k's run
        t = jnp.arange(bound)
        k = jnp.minimum(jnp.searchsorted(ends, t, side="right"), n_out - 1)
        source = order[jnp.clip(first[k] + t - (ends[k] - count[k]), 0, nse - 1)]
        indices = jnp.stack([k, entry_cols[source]], axis=1).astype(INDEX_DTYPE)
        out = BCOO((x.data[source], indices), shape=shape)
        return padded(out, t >= ends[-1])

    return get_item_list


@jax_funcify.register(GetItemListGrad)
def _get_item_list_grad(op: GetItemListGrad, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def get_item_list_grad(x: BCOO, rows: Any, gz: BCOO) -> BCOO:
        n_rows, n_cols = x.shape
        if gz.shape[0] > rows.shape[0] or gz.shape[1] > n_cols:
            raise IndexError(f"{op}: a gradient of shape {gz.shape} for {rows.shape[0]} rows of {x.shape}")
        if n_rows == 0 or rows.shape[0] == 0:  # (no entry can be stored)
            return BCOO((gz.data.astype(dtype), jnp.full((gz.nse, 2), x.shape, INDEX_DTYPE)), shape=x.shape)
        g_rows, g_cols = coordinates(gz)
        dropped = padding(gz)
        # modulo, as perform's (negative rows count from the end)
        targets = jnp.remainder(jnp.asarray(rows).astype(jnp.int64), n_rows)
        new_rows = targets[jnp.clip(g_rows, 0, rows.shape[0] - 1)]
        out = BCOO(
            (gz.data.astype(dtype), jnp.stack([new_rows, g_cols], axis=1).astype(INDEX_DTYPE)), shape=x.shape
        )
        return padded(out, dropped)

    return get_item_list_grad


@jax_funcify.register(GetItem2Lists)
def _get_item_2lists(op: GetItem2Lists, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def get_item_2lists(x: BCOO, rows: Any, cols: Any) -> Any:
        if len(rows) != len(cols):
            raise ValueError(f"{op}: {len(rows)} row indices but {len(cols)} column indices")
        n = len(rows)
        if n == 0:
            return jnp.zeros(0, dtype)
        n_rows, n_cols = x.shape
        rows = checked_indices(rows, n_rows, op, "row")
        cols = checked_indices(cols, n_cols, op, "column")
        # each entry's value is added into the slot of the first query of its position (the
        # queries sorted by position), which every query of that position then reads
        wanted = jnp.asarray(rows) * n_cols + jnp.asarray(cols)
        sorted_wanted = jnp.sort(wanted)
        entry_rows, entry_cols = coordinates(x)
        keys = entry_rows.astype(jnp.int64) * n_cols + entry_cols
        slot = jnp.searchsorted(sorted_wanted, keys, side="left")
        hit = (sorted_wanted[jnp.minimum(slot, n - 1)] == keys) & ~padding(x)
        sums = summed(x.data, jnp.where(hit, slot, n), n)
        return sums[jnp.searchsorted(sorted_wanted, wanted, side="left")].astype(dtype)

    return get_item_2lists


@jax_funcify.register(GetItem2ListsGrad)
def _get_item_2lists_grad(op: GetItem2ListsGrad, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def get_item_2lists_grad(x: BCOO, rows: Any, cols: Any, gz: Any) -> BCOO:
        gz = dense(gz)
        if not len(rows) == len(cols) == len(gz):
            raise ValueError(f"{op}: {len(rows)} rows, {len(cols)} columns and {len(gz)} values")
        n_rows, n_cols = x.shape
        if len(rows) and (n_rows == 0 or n_cols == 0):
            raise IndexError(f"{op}: an index into an empty matrix of shape {x.shape}")
        # modulo, as perform's (negative indices count from the end)
        new_rows = jnp.remainder(jnp.asarray(rows).astype(jnp.int64), max(n_rows, 1))
        new_cols = jnp.remainder(jnp.asarray(cols).astype(jnp.int64), max(n_cols, 1))
        indices = jnp.stack([new_rows, new_cols], axis=1).astype(INDEX_DTYPE).reshape(-1, 2)
        return BCOO((jnp.asarray(gz).astype(dtype), indices), shape=x.shape)

    return get_item_2lists_grad
