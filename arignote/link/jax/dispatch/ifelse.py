"""JAX function of :class:`arignote.ifelse.IfElse`: ``jax.lax.cond``.

Under ``jax.jit`` the condition is a traced value, so both branches' values have the same
shapes and dtypes (``lax.cond``'s rule; a clear error names the node otherwise). The values
that only one branch uses are computed before the node, as the graph says (the reference VM
skips the untaken branch's nodes; XLA may skip them too once it sees the select). A
condition known when compiling (a constant) picks its branch directly, and then the branches
may differ in shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.ifelse import IfElse
from arignote.link.jax.dispatch.basic import jax_funcify

__all__: list[str] = []


@jax_funcify.register(IfElse)
def _funcify_ifelse(op: IfElse, node: Apply | None = None, **kwargs: Any) -> Callable:
    n = op.n_outs
    dtypes = (
        [np.dtype(v.type.dtype) if hasattr(v.type, "dtype") else None for v in node.outputs] if node else None
    )

    def cast(values: tuple) -> tuple:
        if dtypes is None:
            return values
        return tuple(v if d is None else jnp.asarray(v, dtype=d) for v, d in zip(values, dtypes))

    def ifelse(cond: Any, *branches: Any) -> Any:
        then, other = cast(branches[:n]), cast(branches[n:])
        if not isinstance(cond, jax.core.Tracer):
            out = then if bool(np.asarray(cond)) else other
        else:
            for k, (a, b) in enumerate(zip(then, other)):
                if jnp.shape(a) != jnp.shape(b):
                    raise ValueError(
                        f"{op}: output {k} has shape {jnp.shape(a)} in the then branch and "
                        f"{jnp.shape(b)} in the else branch; under jax.jit (lax.cond) both branches "
                        "must give the same shapes"
                    )
            out = jax.lax.cond(jnp.asarray(cond).astype(bool), lambda: then, lambda: other)
        return out[0] if n == 1 else tuple(out)

    return ifelse
