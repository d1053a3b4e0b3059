"""The JAX function of :class:`~arignote.scalar.loop.ScalarLoop`: one ``jax.lax.while_loop``
over the whole (broadcast) arrays, each element stepping while its own count lasts and its
own ``until`` has not stopped it (a ``where`` keeps the finished elements), so the loop
traces under ``jax.jit`` with ``n_steps`` a run-time value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.graph import funcify_fgraph
from arignote.link.jax.dispatch.static import as_dtype, raise_unless
from arignote.scalar.loop import ScalarLoop

__all__: list[str] = []


@jax_funcify.register(ScalarLoop)
def _funcify_scalar_loop(op: ScalarLoop, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    step = funcify_fgraph(op.fgraph, **kwargs)
    k = op.n_update
    dtypes = [v.type.dtype for v in op.update]

    def loop(n_steps: Any, *inputs: Any) -> Any:
        if not op.is_while:
            raise_unless(
                jnp.all(jnp.asarray(n_steps) >= 0),
                f"{op}: n_steps is negative; a loop without until needs n_steps >= 0",
            )
        shape = jnp.broadcast_shapes(*(jnp.shape(v) for v in (n_steps, *inputs)))
        count = jnp.broadcast_to(jnp.asarray(n_steps), shape)
        state = tuple(jnp.broadcast_to(as_dtype(s, d), shape) for s, d in zip(inputs[:k], dtypes))
        constant = inputs[k:]

        def cond(carry: tuple) -> Any:
            i, _, done = carry
            return jnp.any((i < count) & ~done)

        def body(carry: tuple) -> tuple:
            i, state, done = carry
            active = (i < count) & ~done
            out = step(*state, *constant)
            new = tuple(
                jnp.where(active, jnp.asarray(o).astype(d), s) for o, s, d in zip(out[:k], state, dtypes)
            )
            if op.is_while:
                done = done | (active & as_dtype(out[k], bool))
            return i + 1, new, done

        start = (jnp.zeros((), count.dtype), state, jnp.zeros(shape, dtype=bool))
        _, state, done = jax.lax.while_loop(cond, body, start)
        results = (*state, done) if op.is_while else state
        return results[0] if len(results) == 1 else results

    return loop
