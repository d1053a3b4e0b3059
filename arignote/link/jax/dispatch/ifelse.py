"""JAX function of :class:`arignote.ifelse.IfElse`: ``jax.lax.cond``, lazily.

Inside a whole graph (:func:`~arignote.link.jax.dispatch.graph.funcify_fgraph`) the nodes
that only one branch of an ``IfElse`` needs are computed inside that branch's function of
``lax.cond`` (:mod:`~arignote.link.jax.dispatch.branches` decides which), so the branch not
taken is not computed, as under the reference VM: its cost is not paid and its errors or
NaNs never happen. Nodes that the rest of the graph (or both branches) also need stay
outside. :func:`choose` is that ``lax.cond``; the node's own JAX function (used node by
node, where the branch values are already computed) calls it with the values in hand.

Under ``jax.jit`` the condition is a traced value, so both branches must give the same
shapes (``lax.cond``'s rule; a clear error names the node otherwise), and their values are
cast to the output Types' dtypes. A condition known when compiling (a NumPy value) picks
its branch directly, and only that branch is traced; then the branches may differ in shape.
Under ``jax.vmap`` with a batched condition, JAX itself turns ``lax.cond`` into a select of
both branches.
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
from arignote.link.jax.dispatch.static import as_dtype, is_tracer

__all__ = ["choose"]


def _caster(node: Apply | None) -> Callable[[tuple], tuple]:
    if node is None:
        return tuple
    dtypes = [np.dtype(v.type.dtype) if hasattr(v.type, "dtype") else None for v in node.outputs]

    def cast(values: tuple) -> tuple:
        return tuple(v if d is None else as_dtype(v, d) for v, d in zip(values, dtypes))

    return cast


def choose(
    op: IfElse, node: Apply | None, cond: Any, then_fn: Callable[[], tuple], else_fn: Callable[[], tuple]
) -> Any:
    """The outputs of the ``IfElse`` ``node``: ``then_fn()`` where ``cond`` holds, else
    ``else_fn()``, each a zero-argument function returning its branch's values. Only the
    chosen function runs for a condition known now; ``lax.cond`` calls both while tracing,
    and runs one."""
    n = op.n_outs
    cast = _caster(node)
    if not is_tracer(cond):
        out = cast(then_fn() if bool(np.asarray(cond)) else else_fn())
        return out[0] if n == 1 else out
    shapes: dict[str, list] = {}

    def branch(name: str, fn: Callable[[], tuple]) -> Callable[[], tuple]:
        def run() -> tuple:
            values = cast(fn())
            shapes[name] = [jnp.shape(v) for v in values]
            return values

        return run

    try:
        out = jax.lax.cond(jnp.asarray(cond).astype(bool), branch("then", then_fn), branch("else", else_fn))
    except TypeError:
        for k, (a, b) in enumerate(zip(shapes.get("then", ()), shapes.get("else", ()))):
            if a != b:
                raise ValueError(
                    f"{op}: output {k} has shape {a} in the then branch and {b} in the else branch; "
                    "under jax.jit (lax.cond) both branches must give the same shapes"
                ) from None
        raise
    return out[0] if n == 1 else tuple(out)


@jax_funcify.register(IfElse)
def _funcify_ifelse(op: IfElse, node: Apply | None = None, **kwargs: Any) -> Callable:
    n = op.n_outs

    def ifelse(cond: Any, *branches: Any) -> Any:
        return choose(op, node, cond, lambda: branches[:n], lambda: branches[n:])

    return ifelse
