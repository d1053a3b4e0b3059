"""JAX functions of :mod:`arignote.sparse.comparison`: ``==``, ``!=``, ``<``, ``>``, ``<=``,
``>=`` with a sparse operand, as ``uint8`` (BCOO values: see
:mod:`~arignote.link.jax.dispatch.sparse.values`).

Both operands are compared densified (a duplicate counts as the sum of its values). A
comparison of two sparse matrices is sparse, and which entries it stores depends on the
values, so its number of entries is a bound: ``!=``, ``<`` and ``>`` are false where
neither operand stores anything (``0 op 0``), so they keep one entry per coordinate either
operand stores (``nse(x) + nse(y)``, repeated coordinates and false results made padding);
``==``, ``<=`` and ``>=`` are true there too, so their bound is every element of the matrix.
A comparison with a dense matrix is dense. Operands of different shapes raise a ValueError
while tracing (shapes are static under ``jax.jit``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.sparse.values import (
    BCOO,
    INDEX_DTYPE,
    coordinates,
    from_dense,
    padded,
    padding,
)
from arignote.sparse.arithmetic import _check_same_shape
from arignote.sparse.comparison import _OPERATORS, ComparisonSD, ComparisonSS

#: the comparisons that are false where both operands are zero
_FALSE_AT_ZERO = {"neq", "lt", "gt"}


def _at_stored(result: Any, x: BCOO, y: BCOO) -> BCOO:
    """The dense ``result`` kept at the coordinates ``x`` or ``y`` stores, each once: an
    entry per entry of the two, the repeated ones (and padding, and zeros) made padding."""
    z = BCOO((jnp.zeros(x.nse + y.nse, result.dtype), jnp.concatenate([x.indices, y.indices])), shape=x.shape)
    n_rows, n_cols = z.shape
    rows, cols = coordinates(z)
    drop = padding(z)
    # the position of each coordinate's first entry (a scatter-min over the flat positions;
    # padding is sent past the end and dropped)
    # (flat positions past int32 for a matrix of 2**31 elements or more)
    flat_dtype = INDEX_DTYPE if n_rows * n_cols < 2**31 - 1 else jnp.int64
    flat = jnp.where(drop, n_rows * n_cols, rows.astype(flat_dtype) * n_cols + cols)
    position = jnp.arange(z.nse, dtype=INDEX_DTYPE)
    first = jnp.full(n_rows * n_cols, z.nse, INDEX_DTYPE).at[flat].min(position, mode="drop")
    repeated = first.at[flat].get(mode="fill", fill_value=-1) != position
    values = result.at[rows, cols].get(mode="fill", fill_value=0)
    return padded(BCOO((values, z.indices), shape=z.shape), drop | repeated | (values == 0))


@jax_funcify.register(ComparisonSS)
def _comparison_ss(op: ComparisonSS, node: Apply | None = None, **kwargs: Any) -> Callable:
    compare, name = _OPERATORS[op.name], op.name

    def comparison_ss(x: BCOO, y: BCOO) -> BCOO:
        _check_same_shape(op, x, y)
        result = compare(x.todense(), y.todense()).astype(jnp.uint8)
        if name in _FALSE_AT_ZERO:
            return _at_stored(result, x, y)
        return from_dense(result)

    return comparison_ss


@jax_funcify.register(ComparisonSD)
def _comparison_sd(op: ComparisonSD, node: Apply | None = None, **kwargs: Any) -> Callable:
    compare = _OPERATORS[op.name]

    def comparison_sd(x: BCOO, y: Any) -> Any:
        _check_same_shape(op, x, y)
        return compare(x.todense(), jnp.asarray(y)).astype(jnp.uint8)

    return comparison_sd
