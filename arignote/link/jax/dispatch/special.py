"""JAX implementations of :mod:`arignote.tensor.special`'s Ops: ``Softmax`` and
``LogSoftmax`` (``axis=None``: over all the entries)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.tensor.special import LogSoftmax, Softmax

__all__: list[str] = []


@jax_funcify.register(Softmax)
def _softmax(op: Softmax, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    axis, dtype = op.axis, node.outputs[0].type.numpy_dtype
    return lambda x: jax.nn.softmax(jnp.asarray(x).astype(dtype), axis=axis)


@jax_funcify.register(LogSoftmax)
def _log_softmax(op: LogSoftmax, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    axis, dtype = op.axis, node.outputs[0].type.numpy_dtype
    return lambda x: jax.nn.log_softmax(jnp.asarray(x).astype(dtype), axis=axis)
