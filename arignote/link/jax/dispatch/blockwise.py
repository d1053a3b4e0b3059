"""JAX implementations of the Ops that map a core Op over batch dimensions:
:class:`~arignote.tensor.blockwise.Blockwise` and
:class:`~arignote.tensor.batching.Batched`, both as ``jax.vmap`` of the core Op's own JAX
function (one vectorised computation, where their ``perform`` loops over the batch).

Blockwise broadcasts the batch dimensions of its inputs like NumPy: inputs are broadcast to
the common batch shape, except that an input with no batch dimensions, or a length 1 that
broadcasts, is not copied but shared by every entry (``in_axes=None`` for that level).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.tensor.batching import Batched
from arignote.tensor.blockwise import Blockwise

__all__: list[str] = []


def _batch_shape(shapes: list[tuple], op: Any) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{op}: the batch shapes {shapes} of the inputs do not broadcast together") from None


@jax_funcify.register(Blockwise)
def _blockwise(op: Blockwise, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    core_node = op.core_node(node.inputs)
    core_fn = jax_funcify(op.core_op, node=core_node, **kwargs)
    core_ndims = [len(s) for s in op.inputs_sig]
    n_out = len(node.outputs)

    def blockwise(*inputs: Any) -> Any:
        inputs = [jnp.asarray(x) for x in inputs]
        batch_shapes = [x.shape[: x.ndim - n] for x, n in zip(inputs, core_ndims)]
        batch = _batch_shape(batch_shapes, op)
        nb = len(batch)
        # each input with nb batch dimensions: a missing leading one becomes a length 1
        padded = [x.reshape((1,) * (nb - len(s)) + x.shape) for x, s in zip(inputs, batch_shapes)]
        fn = core_fn
        # vmap from the innermost batch dimension out; an input of length 1 there is shared,
        # and a dimension of length 1 for all (mapped by no vmap) is put back at the end
        for d in reversed(range(nb)):
            axes = tuple(0 if x.shape[d] == batch[d] != 1 else None for x in padded)
            if any(a is not None for a in axes):
                fn = jax.vmap(fn, in_axes=axes)
        args = []
        for x in padded:  # the shared inputs' length-1 batch dimensions are left out
            drop = tuple(d for d in range(nb) if not x.shape[d] == batch[d] != 1)
            args.append(jnp.squeeze(x, axis=drop) if drop else x)
        result = fn(*args)
        unit = tuple(d for d in range(nb) if batch[d] == 1)
        if not unit:
            return result
        results = result if n_out > 1 else (result,)
        fixed = tuple(jnp.expand_dims(r, unit) for r in results)
        return fixed if n_out > 1 else fixed[0]

    return blockwise


@jax_funcify.register(Batched)
def _batched(op: Batched, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    core_node = op._core_node(node.inputs)
    core_fn = jax_funcify(op.core_op, node=core_node, **kwargs)
    axes = tuple(0 if b else None for b in op.batched)
    return jax.vmap(core_fn, in_axes=axes)
