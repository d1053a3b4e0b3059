"""JAX implementations of the ``scipy.optimize`` Ops (:mod:`arignote.optimize`): ``MinimizeOp``,
``MinimizeScalarOp``, ``RootOp``, ``RootScalarOp``.

JAX has no equivalent of SciPy's solvers (``jax.scipy.optimize`` has BFGS alone), so the Op's
own SciPy solve runs on the host, through ``jax.pure_callback``, on the values that arrive:
it works under ``jax.jit`` and ``jax.vmap`` (one solve per batch entry), with the solution's
shape that of the starting point, and its ``success`` flag a boolean scalar. The derivatives
of the solution are arignote's own graphs (the implicit function theorem), compiled like any
other graph, so JAX never differentiates through the callback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import kept_errors
from arignote.optimize import ScipyWrapperOp

__all__: list[str] = []


@jax_funcify.register(ScipyWrapperOp)  # MinimizeOp, MinimizeScalarOp, RootOp, RootScalarOp
def _scipy_optimize(op: ScipyWrapperOp, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    n_vars = op.n_vars
    dtypes = [np.dtype(o.type.dtype) for o in node.outputs]

    def solve_on_host(*values: Any) -> tuple:
        storage: list[list[Any]] = [[None] for _ in node.outputs]
        op.perform(node, [np.asarray(v) for v in values], storage)
        return tuple(np.asarray(cell[0], dtype=d) for cell, d in zip(storage, dtypes))

    def solve(*inputs: Any) -> tuple:
        inputs = tuple(jnp.asarray(x) for x in inputs)
        shapes = [jax.ShapeDtypeStruct(x.shape, d) for x, d in zip(inputs[:n_vars], dtypes)]
        shapes.append(jax.ShapeDtypeStruct((), dtypes[-1]))
        return tuple(
            jax.pure_callback(kept_errors(solve_on_host), tuple(shapes), *inputs, vmap_method="sequential")
        )

    return solve
