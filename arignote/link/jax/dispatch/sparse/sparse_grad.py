"""JAX function of :mod:`arignote.sparse.sparse_grad`: the rows ``x[i]`` of a dense matrix
(its sparse gradient is ``construct_sparse_from_list``'s, in
:mod:`~arignote.link.jax.dispatch.sparse.construction`).

Unlike JAX's own indexing, which clamps, a row outside the matrix raises ``IndexError`` as
``numpy.take`` does: while tracing for static rows, else when the values arrive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.sparse.indexing import checked_indices
from arignote.sparse.sparse_grad import AdvancedSubtensor1SparseGrad


@jax_funcify.register(AdvancedSubtensor1SparseGrad)
def _advanced_subtensor1_sparse_grad(
    op: AdvancedSubtensor1SparseGrad, node: Apply | None = None, **kwargs: Any
) -> Callable:
    def take_rows(x: Any, ilist: Any) -> Any:
        x = jnp.asarray(x)
        return x[checked_indices(ilist, x.shape[0], op, "row")]

    return take_rows
