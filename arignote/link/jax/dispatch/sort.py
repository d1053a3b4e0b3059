"""JAX implementations of sorting (:mod:`arignote.tensor.sort`): ``SortOp``, ``ArgSortOp``
and ``PermuteAlongAxis``.

The axis is an input of these Ops; JAX needs it static (a constant of the graph, or a
concrete value outside ``jax.jit``). Sorts are stable whatever ``kind`` says: NumPy leaves the
order of ties to its algorithm, and a stable order is one of those it may give.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import concrete, static_input
from arignote.tensor.sort import ArgSortOp, PermuteAlongAxis, SortOp

__all__ = ["static_axis"]


def static_axis(node: Apply, i: int, value: Any, ndim: int) -> int:
    """The axis that input ``i`` of ``node`` gives (a constant, or concrete), checked."""
    fixed = static_input(node, i)
    axis = int(fixed if fixed is not None else concrete(value, node, "the axis"))
    if not -ndim <= axis < ndim:
        raise ValueError(f"{node.op}: axis {axis} is out of bounds for a value of {ndim} dimension(s)")
    return axis


@jax_funcify.register(SortOp)
def _sort(op: SortOp, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    def sort(x: Any, axis: Any) -> Any:
        x = jnp.asarray(x)
        return jnp.sort(x, axis=static_axis(node, 1, axis, x.ndim), stable=True)

    return sort


@jax_funcify.register(ArgSortOp)
def _argsort(op: ArgSortOp, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    def argsort(x: Any, axis: Any) -> Any:
        x = jnp.asarray(x)
        return jnp.argsort(x, axis=static_axis(node, 1, axis, x.ndim), stable=True).astype("int64")

    return argsort


@jax_funcify.register(PermuteAlongAxis)
def _permute_along_axis(op: PermuteAlongAxis, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    def permute(x: Any, perm: Any, axis: Any) -> Any:
        x = jnp.asarray(x)
        return jnp.take_along_axis(x, jnp.asarray(perm), axis=static_axis(node, 2, axis, x.ndim))

    return permute
