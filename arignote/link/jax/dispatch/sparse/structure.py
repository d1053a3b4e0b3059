"""JAX functions of :mod:`arignote.sparse.structure`: transpose, cast, stored zeros, index
order (BCOO values: see :mod:`~arignote.link.jax.dispatch.sparse.values`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.sparse.values import BCOO, coordinates, keeps_entries, padded, with_data
from arignote.sparse.structure import Cast, EnsureSortedIndices, Remove0, Transpose

keeps_entries(Transpose, Cast, EnsureSortedIndices)


@jax_funcify.register(Transpose)
def _transpose(op: Transpose, node: Apply | None = None, **kwargs: Any) -> Callable:
    # the entries keep their order: a CSR matrix's transpose is read as CSC with its parts
    def transpose(x: BCOO) -> BCOO:
        return x.T

    return transpose


@jax_funcify.register(Cast)
def _cast(op: Cast, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = op.out_type

    def cast(x: BCOO) -> BCOO:
        return with_data(x, x.data.astype(dtype))

    return cast


@jax_funcify.register(Remove0)
def _remove0(op: Remove0, node: Apply | None = None, **kwargs: Any) -> Callable:
    def remove0(x: BCOO) -> BCOO:
        return padded(x, x.data == 0)

    return remove0


@jax_funcify.register(EnsureSortedIndices)
def _ensure_sorted_indices(op: EnsureSortedIndices, node: Apply | None = None, **kwargs: Any) -> Callable:
    fmt = node.inputs[0].type.format

    def ensure_sorted_indices(x: BCOO) -> BCOO:
        rows, cols = coordinates(x)
        major, minor = (rows, cols) if fmt == "csr" else (cols, rows)
        order = jnp.lexsort((minor, major))
        return BCOO((x.data[order], x.indices[order]), shape=x.shape)

    return ensure_sorted_indices
