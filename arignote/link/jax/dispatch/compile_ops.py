"""JAX implementations of ``arignote.compile.ops``: ``DeepCopyOp`` and ``FromFunctionOp``
(the Python function of ``as_op``/``wrap_py``, run on the host).

A ``FromFunctionOp`` runs its function on the values: at once outside ``jax.jit``; inside,
through ``jax.pure_callback`` when the node's output shapes are static or its
``infer_shape`` gives them, else a
:class:`~arignote.link.jax.dispatch.static.DataDependentShapeError` names the node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote.compile.ops import DeepCopyOp, FromFunctionOp
from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import concrete, is_tracer, kept_errors

__all__: list[str] = []


@jax_funcify.register(DeepCopyOp)
def _deep_copy(op: DeepCopyOp, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    return lambda x: jnp.array(x, copy=True)


@jax_funcify.register(FromFunctionOp)
def _from_function(op: FromFunctionOp, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    outputs = node.outputs
    shapes = [getattr(o.type, "shape", None) for o in outputs]
    static = all(s is not None and None not in s for s in shapes)

    def on_host(*values: Any) -> tuple:
        cells: list[list[Any]] = [[None] for _ in outputs]
        op.perform(node, [np.asarray(v) for v in values], cells)
        return tuple(np.asarray(c[0], dtype=o.type.numpy_dtype) for c, o in zip(cells, outputs))

    def run(*inputs: Any) -> Any:
        if any(map(is_tracer, inputs)):
            out_shapes = shapes
            if not static and op._infer_shape is not None:  # the Op's infer_shape, on static shapes
                found = op._infer_shape(None, node, [tuple(np.shape(x)) for x in inputs])
                out_shapes = [tuple(int(d) for d in s) for s in found]
            elif not static:
                concrete(
                    inputs[0], node, "the output shapes of the Python function (give as_op an infer_shape)"
                )
            specs = tuple(jax.ShapeDtypeStruct(s, o.type.numpy_dtype) for s, o in zip(out_shapes, outputs))
            res = jax.pure_callback(kept_errors(on_host), specs, *inputs, vmap_method="sequential")
        else:
            res = tuple(jnp.asarray(r) for r in on_host(*inputs))
        return res if len(res) > 1 else res[0]

    return run
