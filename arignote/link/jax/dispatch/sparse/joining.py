"""JAX functions of :mod:`arignote.sparse.joining`: stacking, block diagonals, diagonals
(BCOO values: see :mod:`~arignote.link.jax.dispatch.sparse.values`).

A stacked matrix (``hstack``, ``vstack``, ``block_diag``) holds its blocks' entries one after
the other, each moved by its block's offset, so its number of entries is the sum of theirs. A
block's padding entries stay padding (moved to the result's shape: moved by the offset they
could land inside it). A dense block of ``block_diag`` adds one entry per element, its zeros
padding (SciPy stores none of them). The lengths that must agree are static shapes: a
mismatch raises while tracing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.sparse.indexing import summed
from arignote.link.jax.dispatch.sparse.values import (
    BCOO,
    INDEX_DTYPE,
    coordinates,
    from_dense,
    keeps_entries,
    padded,
    padding,
)
from arignote.sparse.joining import Diag, SparseBlockDiagonal, SquareDiagonal, _Stack

# the diagonal's n entries in column order, zeros included, as SciPy's csc_matrix of perform
keeps_entries(SquareDiagonal)


def _joined(blocks: Sequence[BCOO], offsets: Sequence[tuple[int, int]], shape: tuple, dtype: Any) -> BCOO:
    """The entries of ``blocks``, each block's moved by its (row, column) offset, in a matrix
    of ``shape`` with values of ``dtype``."""
    data, indices, dropped = [], [], []
    for block, (r0, c0) in zip(blocks, offsets):
        rows, cols = coordinates(block)
        data.append(block.data.astype(dtype))
        indices.append(jnp.stack([rows + r0, cols + c0], axis=1).astype(INDEX_DTYPE).reshape(-1, 2))
        dropped.append(padding(block))
    out = BCOO((jnp.concatenate(data), jnp.concatenate(indices)), shape=shape)
    return padded(out, jnp.concatenate(dropped))


@jax_funcify.register(_Stack)
def _stack(op: _Stack, node: Apply | None = None, **kwargs: Any) -> Callable:
    axis, dtype = op.axis, op.dtype
    other = 1 - axis

    def stack(*blocks: BCOO) -> BCOO:
        lengths = {b.shape[other] for b in blocks}
        if len(lengths) > 1:
            raise ValueError(
                f"{op}: the blocks' lengths along axis {other} differ: {[b.shape for b in blocks]}"
            )
        offsets = []
        start = 0
        for b in blocks:
            offsets.append((0, start) if axis == 1 else (start, 0))
            start += b.shape[axis]
        shape = [0, 0]
        shape[axis], shape[other] = start, lengths.pop()
        return _joined(blocks, offsets, tuple(shape), dtype)

    return stack


@jax_funcify.register(SparseBlockDiagonal)
def _sparse_block_diagonal(op: SparseBlockDiagonal, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def block_diagonal(*matrices: Any) -> BCOO:
        blocks = [m if isinstance(m, BCOO) else from_dense(jnp.asarray(m)) for m in matrices]
        offsets = []
        r0 = c0 = 0
        for b in blocks:
            offsets.append((r0, c0))
            r0, c0 = r0 + b.shape[0], c0 + b.shape[1]
        return _joined(blocks, offsets, (r0, c0), dtype)

    return block_diagonal


@jax_funcify.register(SquareDiagonal)
def _square_diagonal(op: SquareDiagonal, node: Apply | None = None, **kwargs: Any) -> Callable:
    def square_diagonal(diagonal: Any) -> BCOO:
        n = diagonal.shape[0]
        ids = jnp.arange(n, dtype=INDEX_DTYPE)
        return BCOO((jnp.asarray(diagonal), jnp.stack([ids, ids], axis=1)), shape=(n, n))

    return square_diagonal


@jax_funcify.register(Diag)
def _diag(op: Diag, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def diag(x: BCOO) -> Any:
        n = x.shape[0]
        if n != x.shape[1]:
            raise ValueError(f"{op}: the matrix must be square, got shape {x.shape}")
        rows, cols = coordinates(x)
        # the entries on the diagonal add up (duplicates, as SciPy's); padding lies outside
        on = (rows == cols) & ~padding(x)
        return summed(x.data, jnp.where(on, rows, n), n).astype(dtype)

    return diag
