"""JAX implementations of the array utilities of :mod:`arignote.tensor.extra_ops`'s homes:
cumulative sums and products and ``Flip`` (``cumulative.py``), diagonals (``diag.py``), flat and multi-dimensional indices
(``index_utils.py``) and ``CheckValues`` (``checks.py``).

The ``dims`` of an index conversion decide the shape of its result, so they must be static:
constants of the graph, or concrete values outside ``jax.jit``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import concrete, raise_unless, static_input
from arignote.tensor.checks import CheckValues
from arignote.tensor.cumulative import CumOp, Flip
from arignote.tensor.diag import AllocDiag, ExtractDiag
from arignote.tensor.index_utils import RavelMultiIndex, UnravelIndex

__all__: list[str] = []


@jax_funcify.register(CumOp)
def _cumop(op: CumOp, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    axis, dtype = op.axis, node.outputs[0].type.numpy_dtype
    fn = jnp.cumsum if op.mode == "add" else jnp.cumprod
    return lambda x: fn(jnp.asarray(x), axis=axis, dtype=dtype)


@jax_funcify.register(Flip)
def _flip(op: Flip, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    axis = op.axis
    return lambda x: jnp.flip(x, axis)


@jax_funcify.register(ExtractDiag)
def _extract_diag(op: ExtractDiag, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    offset, a1, a2 = op.offset, op.axis1, op.axis2
    return lambda x: jnp.diagonal(x, offset, a1, a2)


@jax_funcify.register(AllocDiag)
def _alloc_diag(op: AllocDiag, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    offset = op.offset
    ndim = node.outputs[0].type.ndim
    a1, a2 = op.axis1 % ndim, op.axis2 % ndim
    row0, col0 = max(-offset, 0), max(offset, 0)

    def alloc_diag(x: Any) -> Any:
        x = jnp.asarray(x)
        n = x.shape[-1]
        size = n + abs(offset)
        # built with the diagonal axes last, then moved where the Op puts them
        block = jnp.zeros((*x.shape[:-1], size, size), x.dtype)
        t = jnp.arange(n)
        block = block.at[..., t + row0, t + col0].set(x)
        return jnp.moveaxis(block, (-2, -1), (a1, a2))

    return alloc_diag


def _static_ints(node: Apply, i: int, value: Any, what: str) -> tuple[int, ...]:
    fixed = static_input(node, i)
    got = fixed if fixed is not None else concrete(value, node, what)
    return tuple(int(d) for d in np.ravel(got))


@jax_funcify.register(RavelMultiIndex)
def _ravel_multi_index(op: RavelMultiIndex, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    n_index = len(node.inputs) - 1
    modes = (op.mode,) * n_index if isinstance(op.mode, str) else tuple(op.mode)
    order = op.order

    def ravel(*inputs: Any) -> Any:
        *index, dims_value = inputs
        dims = _static_ints(node, n_index, dims_value, "dims")
        if len(dims) != n_index:
            raise ValueError(f"{op}: dims {dims} has {len(dims)} entries for {n_index} index arrays")
        parts = []
        for i, d, mode in zip(index, dims, modes):
            i = jnp.asarray(i).astype("int64")
            if mode == "wrap":
                i = jnp.mod(i, d)
            elif mode == "clip":
                i = jnp.clip(i, 0, d - 1)
            else:
                raise_unless(
                    jnp.all((i >= 0) & (i < d)), f"{op}: invalid entry in coordinates array (dims {dims})"
                )
            parts.append(i)
        axes = range(n_index) if order == "C" else reversed(range(n_index))
        flat = jnp.zeros((), "int64")
        for k in axes:
            flat = flat * dims[k] + parts[k]
        return flat.astype("int64")

    return ravel


@jax_funcify.register(UnravelIndex)
def _unravel_index(op: UnravelIndex, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    order = op.order

    def unravel(indices: Any, dims_value: Any) -> tuple:
        dims = _static_ints(node, 1, dims_value, "dims")
        if len(dims) != len(node.outputs):
            raise ValueError(f"{op}: dims {dims} has {len(dims)} entries, expected {len(node.outputs)}")
        idx = jnp.asarray(indices).astype("int64")
        size = int(np.prod(dims))
        raise_unless(
            jnp.all((idx >= 0) & (idx < size)), f"{op}: index out of bounds for array with size {size}"
        )
        out: list[Any] = [None] * len(dims)
        axes = reversed(range(len(dims))) if order == "C" else range(len(dims))
        for k in axes:
            out[k] = idx % dims[k]
            idx = idx // dims[k]
        return tuple(o.astype("int64") for o in out)

    return unravel


@jax_funcify.register(CheckValues)
def _check_values(op: CheckValues, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    message = op.message

    def detail(x: np.ndarray, cond: np.ndarray) -> str:
        if np.shape(cond) == np.shape(x) and np.ndim(x):
            where = np.argwhere(~np.asarray(cond))[:3]
            shown = ", ".join(f"{x[tuple(w)]!r} at {tuple(int(i) for i in w)}" for w in where)
            return f"{message}; got {shown}"
        return f"{message}; got {x!r}" if np.shape(cond) == np.shape(x) else message

    def check(x: Any, cond: Any) -> Any:
        raise_unless(jnp.all(cond), detail, x, cond)
        return x

    return check
