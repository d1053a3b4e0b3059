"""JAX implementations of searching and counting (:mod:`arignote.tensor.searching`):
``SearchsortedOp``, ``Bincount``, ``Nonzero`` and ``Unique``.

The lengths of ``nonzero``'s, ``unique``'s and (unless it is static) ``bincount``'s results
depend on the values, which ``jax.jit`` does not see: outside ``jit`` they are computed from
the concrete values; inside, a
:class:`~arignote.link.jax.dispatch.static.DataDependentShapeError` names the node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import concrete, raise_unless, static_input
from arignote.tensor.searching import Bincount, Nonzero, SearchsortedOp, Unique

__all__: list[str] = []


@jax_funcify.register(SearchsortedOp)
def _searchsorted(op: SearchsortedOp, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    side = op.side

    def searchsorted(x: Any, v: Any, *sorter: Any) -> Any:
        x = jnp.asarray(x)
        if sorter:
            (s,) = sorter
            if np.shape(s) != x.shape:
                raise ValueError(f"{op}: sorter has shape {np.shape(s)}, x has shape {x.shape}")
            raise_unless(
                jnp.all((s >= 0) & (s < x.shape[0])),
                f"{op}: sorter holds an index out of range for x of length {x.shape[0]}",
            )
            x = x[s]
        return jnp.searchsorted(x, v, side=side).astype("int64")

    return searchsorted


@jax_funcify.register(Bincount)
def _bincount(op: Bincount, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    dtype = node.outputs[0].type.numpy_dtype
    static_length = node.outputs[0].type.shape[0]
    fixed_min = static_input(node, 1)

    def bincount(x: Any, minlength: Any, *weights: Any) -> Any:
        x = jnp.asarray(x).astype("int64")
        raise_unless(jnp.all(x >= 0), "bincount: x must be non-negative")
        w = jnp.asarray(weights[0]) if weights else None
        if w is not None and w.shape != x.shape:
            raise ValueError(f"bincount: weights have length {w.shape[0]}, x has length {x.shape[0]}")
        length = static_length
        if length is None:
            low = int(fixed_min) if fixed_min is not None else int(concrete(minlength, node, "minlength"))
            if low < 0:
                raise ValueError(f"bincount: minlength must not be negative, got {low}")
            values = concrete(x, node, "the largest value of x (the output length)")
            length = max(low, int(values.max()) + 1 if values.size else 0)
        return jnp.bincount(x, w, length=length).astype(dtype)

    return bincount


@jax_funcify.register(Nonzero)
def _nonzero(op: Nonzero, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    def nonzero(a: Any) -> Any:
        count = int(np.count_nonzero(concrete(a, node, "the number of nonzero entries")))
        out = tuple(i.astype("int64") for i in jnp.nonzero(a, size=count))
        return out if len(out) > 1 else out[0]

    return nonzero


@jax_funcify.register(Unique)
def _unique(op: Unique, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    flags = {
        "return_index": op.return_index,
        "return_inverse": op.return_inverse,
        "return_counts": op.return_counts,
    }
    axis = op.axis
    dtypes = [o.type.numpy_dtype for o in node.outputs]

    def unique(x: Any) -> Any:
        values = concrete(x, node, "the number of distinct values")
        count = np.unique(values, axis=axis).shape[0 if axis is None else axis]
        res = jnp.unique(jnp.asarray(x), axis=axis, size=count, **flags)
        res = tuple(res) if isinstance(res, tuple) or len(dtypes) > 1 else (res,)
        out = [
            r.astype(d) if k == 0 else r.reshape(-1).astype(d) for k, (r, d) in enumerate(zip(res, dtypes))
        ]
        return tuple(out) if len(out) > 1 else out[0]

    return unique
