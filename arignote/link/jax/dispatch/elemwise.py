"""JAX functions of :mod:`arignote.tensor.elemwise` (Elemwise, DimShuffle, CAReduce and the
reductions built on it) and :mod:`arignote.tensor.reductions` (Argmax, Argmin, All, Any).

An Elemwise runs its scalar op's JAX function on the whole arrays (``jnp`` broadcasts the
way Elemwise does); a fused ``Composite`` body is inlined the same way. In-place variants
compute the same values (JAX arrays are immutable; XLA reuses buffers on its own). Runtime
broadcasting of a length-1 dimension the Type does not declare broadcastable is not checked,
as in PyTensor's JAX backend: JAX broadcasts it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.scalar import basic as ps
from arignote.scalar.type import get_scalar_type
from arignote.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from arignote.tensor.reductions import Argmax, Argmin, _BoolReduce

__all__: list[str] = []


@jax_funcify.register(Elemwise)
def _funcify_elemwise(op: Elemwise, node: Apply | None = None, **kwargs: Any) -> Callable:
    scalar_fn = jax_funcify(op.scalar_op, node=node, **kwargs)
    if node is None:
        return scalar_fn
    ndim = node.outputs[0].type.ndim
    nout = len(node.outputs)

    def elemwise(*args: Any) -> Any:
        out = scalar_fn(*args)
        # a body that ignores some inputs (a constant output) still has the output's shape
        outs = out if nout > 1 else (out,)
        if any(jnp.ndim(o) != ndim for o in outs):
            shape = jnp.broadcast_shapes(*(jnp.shape(a) for a in args))
            outs = tuple(jnp.broadcast_to(o, shape) for o in outs)
            return outs if nout > 1 else outs[0]
        return out

    return elemwise


@jax_funcify.register(DimShuffle)
def _funcify_dimshuffle(op: DimShuffle, node: Apply | None = None, **kwargs: Any) -> Callable:
    perm = tuple(op.shuffle + op.drop)
    kept = len(op.shuffle)
    augment = tuple(op.augment)
    identity_perm = perm == tuple(range(op.input_ndim))

    def dimshuffle(x: Any) -> Any:
        x = jnp.asarray(x)
        if not identity_perm:
            x = jnp.transpose(x, perm)
        if op.drop:
            x = jnp.reshape(x, x.shape[:kept])
        if augment:
            x = jnp.expand_dims(x, augment)
        return x

    return dimshuffle


#: scalar op class -> the jnp reduction doing it
_REDUCTIONS: dict[type, Callable] = {
    ps.Add: jnp.sum,
    ps.Mul: jnp.prod,
    ps.Maximum: jnp.max,
    ps.Minimum: jnp.min,
}

_BITWISE: dict[type, tuple[Callable, Callable]] = {
    # (bool reduction, integer reduction)
    ps.AND: (jnp.all, lambda x, axis: jax.lax.reduce(x, np.array(-1, x.dtype), jax.lax.bitwise_and, axis)),
    ps.OR: (jnp.any, lambda x, axis: jax.lax.reduce(x, np.array(0, x.dtype), jax.lax.bitwise_or, axis)),
    ps.XOR: (
        lambda x, axis: jnp.sum(x, axis=axis) % 2 == 1,
        lambda x, axis: jax.lax.reduce(x, np.array(0, x.dtype), jax.lax.bitwise_xor, axis),
    ),
}


@jax_funcify.register(CAReduce)
def _funcify_careduce(op: CAReduce, node: Apply | None = None, **kwargs: Any) -> Callable:
    if node is None:
        raise ValueError("CAReduce's JAX function needs its node")
    in_dtype = node.inputs[0].type.dtype
    out_dtype = np.dtype(node.outputs[0].type.dtype)
    ndim = node.inputs[0].type.ndim
    axis = tuple(range(ndim)) if op.axis is None else tuple(op.axis)
    acc = op.acc_dtype
    scalar_cls = type(op.scalar_op)
    reduce_fn = _REDUCTIONS.get(scalar_cls)
    if reduce_fn is not None and reduce_fn in (jnp.sum, jnp.prod):

        def reduce(x: Any) -> Any:
            return reduce_fn(jnp.asarray(x), axis=axis, dtype=acc).astype(out_dtype)

    elif reduce_fn is not None:

        def reduce(x: Any) -> Any:
            x = jnp.asarray(x)
            if acc is not None:
                x = x.astype(acc)
            return reduce_fn(x, axis=axis).astype(out_dtype)

    elif scalar_cls in _BITWISE:
        bool_fn, int_fn = _BITWISE[scalar_cls]
        fn = bool_fn if in_dtype == "bool" else int_fn

        def reduce(x: Any) -> Any:
            return jnp.asarray(fn(jnp.asarray(x), axis)).astype(out_dtype)

    else:
        reduce = _generic_reduce(op, node, axis, out_dtype, **kwargs)
    return reduce


def _generic_reduce(op: CAReduce, node: Apply, axis: tuple, out_dtype: np.dtype, **kwargs: Any) -> Callable:
    """``lax.reduce`` with the scalar op's JAX function (its identity as the start value)."""
    dtype = node.inputs[0].type.dtype
    scalar = get_scalar_type(dtype)
    fake = op.scalar_op.make_node(scalar(), scalar())
    binary = jax_funcify(op.scalar_op, node=fake, **kwargs)
    identity = op.scalar_op.identity

    def reduce(x: Any) -> Any:
        x = jnp.asarray(x)
        if identity is None:
            if any(x.shape[a] == 0 for a in axis):
                raise ValueError(f"{op}: cannot reduce an empty axis: {op.scalar_op} has no identity")
            moved = jnp.moveaxis(x, axis, tuple(range(len(axis))))
            flat = moved.reshape((-1, *moved.shape[len(axis) :]))
            res = (
                jax.lax.reduce(flat[1:], flat[0], lambda a, b: binary(a, b), (0,))
                if flat.shape[0] > 1
                else flat[0]
            )
            return res.astype(out_dtype)
        return jax.lax.reduce(x, np.array(identity, x.dtype), binary, axis).astype(out_dtype)

    return reduce


@jax_funcify.register(_BoolReduce)
def _funcify_bool_reduce(op: _BoolReduce, node: Apply | None = None, **kwargs: Any) -> Callable:
    fn = jnp.all if isinstance(op.scalar_op, ps.AND) else jnp.any
    axis = op.axis

    def reduce(x: Any) -> Any:
        return fn(jnp.asarray(x), axis=axis)

    return reduce


@jax_funcify.register(Argmax)
def _funcify_argmax(op: Argmax, node: Apply | None = None, **kwargs: Any) -> Callable:
    fn = jnp.argmin if isinstance(op, Argmin) else jnp.argmax
    axis = op.axis

    def arg(x: Any) -> Any:
        x = jnp.asarray(x)
        if axis is None:
            return fn(x.reshape(-1)).astype(jnp.int64)
        keep = [d for d in range(x.ndim) if d not in axis]
        moved = jnp.transpose(x, keep + list(axis))
        n = int(np.prod([x.shape[a] for a in axis], dtype=np.int64))
        flat = moved.reshape([x.shape[d] for d in keep] + [n])
        return fn(flat, axis=-1).astype(jnp.int64)

    return arg
