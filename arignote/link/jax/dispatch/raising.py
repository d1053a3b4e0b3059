"""The JAX function of ``CheckAndRaise``/``Assert`` (:mod:`arignote.tensor.raising`): the value
passes through, and a false condition raises the Op's exception (at once outside ``jax.jit``;
inside, through a host callback, so the call fails with the message)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import as_dtype, raise_unless
from arignote.tensor.raising import CheckAndRaise

__all__: list[str] = []


@jax_funcify.register(CheckAndRaise)
def _check_and_raise(op: CheckAndRaise, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    def check_and_raise(value: Any, *conds: Any) -> Any:
        if conds:
            ok = jnp.all(jnp.stack([as_dtype(c, bool) for c in conds]))
            raise_unless(ok, op.msg, error=op.exc_type)
        return value

    return check_and_raise
