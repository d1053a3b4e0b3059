"""JAX functions of the scalar ops (:mod:`arignote.scalar.basic`) and of fused ``Composite``
bodies, which are inlined.

A scalar op's JAX function computes elementwise on arrays (``jnp`` broadcasts), so the same
function serves a scalar node, the body of a ``Composite`` and an ``Elemwise`` node (which
passes its own node: only the inputs' and outputs' dtypes are read from it).

Dtypes follow the graph, not JAX's promotion rules (which differ from NumPy's: JAX computes
``int64 + float32`` in float32): the inputs are cast to the dtype NumPy would compute in
(:func:`compute_dtype`) before the op, and the result to the output's Type dtype after it,
so a JAX function gives the dtype, and the precision, that the reference VM gives.

Ops whose ``ufunc`` is a NumPy ufunc with a ``jax.numpy`` namesake (``exp``, ``add``, ...)
or a SciPy ufunc with a ``jax.scipy.special`` namesake are found by that name; the others are
registered one by one below. Integer division and remainder by zero cannot raise inside a
compiled function: they give what XLA gives, as in PyTensor's JAX backend.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.graph import funcify_fgraph
from arignote.link.jax.dispatch.static import as_dtype, kept_errors
from arignote.scalar import basic as ps
from arignote.scalar.composite import Composite
from arignote.scalar.op import ScalarOp

__all__ = ["compute_dtype", "elementwise", "jax_ufunc", "host_elementwise"]


def _dtypes(node: Apply | None) -> tuple[list[str], list[str]]:
    if node is None:
        raise ValueError("a scalar op's JAX function needs its node (for the dtypes)")
    return [v.type.dtype for v in node.inputs], [v.type.dtype for v in node.outputs]


def compute_dtype(in_dtypes: Sequence[str], out_dtype: str) -> str | None:
    """The dtype the inputs are cast to before the op (None: as they are).

    Integer or bool inputs of an op with a float/complex result are computed in that result's
    dtype (``exp`` of int8 in float32, as the reference does); inputs of different dtypes in
    NumPy's promotion of them (which JAX's own rules do not always give).
    """
    kinds = {np.dtype(d).kind for d in in_dtypes}
    if np.dtype(out_dtype).kind in "fc" and kinds <= set("biu"):
        return out_dtype
    if len(set(in_dtypes)) > 1:
        return np.result_type(*in_dtypes).name
    return None


def elementwise(fn: Callable, node: Apply | None, cast_inputs: bool = True) -> Callable:
    """``fn`` (a ``jnp`` function of arrays) with the node's dtypes: inputs cast to
    :func:`compute_dtype` (unless ``cast_inputs`` is false), the result cast to the output's
    dtype."""
    in_dtypes, out_dtypes = _dtypes(node)
    work = compute_dtype(in_dtypes, out_dtypes[0]) if cast_inputs else None
    out_dtype = np.dtype(out_dtypes[0])

    if len(out_dtypes) > 1:

        def multi(*args: Any) -> tuple:
            if work is not None:
                args = tuple(as_dtype(a, work) for a in args)
            return tuple(jnp.asarray(r).astype(d) for r, d in zip(fn(*args), out_dtypes))

        return multi

    if work is None:

        def apply(*args: Any) -> Any:
            r = jnp.asarray(fn(*args))
            return r if r.dtype == out_dtype else r.astype(out_dtype)

        return apply

    def cast_apply(*args: Any) -> Any:
        r = jnp.asarray(fn(*(as_dtype(a, work) for a in args)))
        return r if r.dtype == out_dtype else r.astype(out_dtype)

    return cast_apply


def jax_ufunc(op: ScalarOp) -> Callable | None:
    """The ``jax.numpy`` or ``jax.scipy.special`` namesake of ``op.ufunc``, or None."""
    ufunc = getattr(op, "ufunc", None)
    if not isinstance(ufunc, np.ufunc):
        return None
    name = ufunc.__name__
    fn = getattr(jnp, name, None) or getattr(jss, name, None)
    if fn is not None and ufunc.nin == 2 and op.nin != 2:  # add/mul of any number of inputs

        def chain(*args: Any) -> Any:
            return functools.reduce(fn, args)

        return chain
    return fn


def host_elementwise(op: ScalarOp, node: Apply | None) -> Callable:
    """The op computed on the host by its NumPy/SciPy ``impl`` through ``jax.pure_callback``:
    for the special functions that neither ``jax.numpy`` nor ``jax.scipy`` has (Bessel
    functions of real order, inverse incomplete gamma/beta, ...). It works under ``jit``,
    ``vmap`` and on every device (the values make a round trip to the host)."""
    in_dtypes, out_dtypes = _dtypes(node)

    def fn(*args: Any) -> Any:
        args = [as_dtype(a, d) for a, d in zip(args, in_dtypes)]
        shape = jnp.broadcast_shapes(*(a.shape for a in args))
        specs = [jax.ShapeDtypeStruct(shape, np.dtype(d)) for d in out_dtypes]

        def host(*values: Any) -> Any:
            results = op.impl(*(np.asarray(v) for v in values))
            if len(out_dtypes) == 1:
                results = (results,)
            outs = [
                np.broadcast_to(np.asarray(r, dtype=d), shape).copy() for r, d in zip(results, out_dtypes)
            ]
            return outs[0] if len(outs) == 1 else tuple(outs)

        result_shape = specs[0] if len(specs) == 1 else tuple(specs)
        return jax.pure_callback(kept_errors(host), result_shape, *args, vmap_method="broadcast_all")

    return fn


@jax_funcify.register(ScalarOp)
def _funcify_scalar_op(op: ScalarOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    fn = jax_ufunc(op)
    if fn is None:
        raise NotImplementedError(
            f"{type(op).__name__} ({op}) has no JAX implementation: its ufunc {op.ufunc!r} has no "
            "jax.numpy or jax.scipy.special namesake; register one with "
            f"arignote.link.jax.dispatch.jax_funcify.register({type(op).__name__})"
        )
    return elementwise(fn, node)


def _register(cls: type, fn: Callable, cast_inputs: bool = True) -> None:
    """Register the elementwise ``fn`` for the scalar op class ``cls``."""

    def funcify(op: ScalarOp, node: Apply | None = None, **kwargs: Any) -> Callable:
        return elementwise(fn, node, cast_inputs)

    jax_funcify.register(cls)(funcify)


def _round_half_away(a: Any) -> Any:
    t = jnp.trunc(a)
    return jnp.where(jnp.abs(a - t) >= 0.5, t + jnp.sign(a), t)


_register(ps.TrueDiv, jnp.true_divide)
_register(ps.IntDiv, jnp.floor_divide)
_register(ps.Mod, jnp.remainder)
_register(ps.Reciprocal, jnp.reciprocal)
_register(ps.Sqr, jnp.square)
_register(ps.Clip, lambda a, lo, hi: jnp.minimum(jnp.maximum(a, lo), hi))
_register(ps.RoundHalfAwayFromZero, _round_half_away)
_register(ps.ArcTan2, jnp.arctan2)
_register(ps.Real, jnp.real, cast_inputs=False)
_register(ps.Imag, jnp.imag, cast_inputs=False)
_register(
    ps.Angle, lambda a: jnp.angle(jnp.asarray(a, dtype=jnp.result_type(a, np.float64))), cast_inputs=False
)
_register(ps.Identity, lambda a: a)


@jax_funcify.register(ps.Switch)
def _funcify_switch(op: ScalarOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    _, (out_dtype,) = _dtypes(node)

    def switch(cond: Any, a: Any, b: Any) -> Any:
        return jnp.where(cond, as_dtype(a, out_dtype), as_dtype(b, out_dtype))

    return switch


@jax_funcify.register(ps.Second)
def _funcify_second(op: ScalarOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    _, (out_dtype,) = _dtypes(node)

    def second(a: Any, b: Any) -> Any:
        b = as_dtype(b, out_dtype)
        return jnp.broadcast_to(b, jnp.broadcast_shapes(jnp.shape(a), b.shape))

    return second


@jax_funcify.register(ps.Cast)
def _funcify_cast(op: ScalarOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = np.dtype(op.o_type.dtype)

    def cast(a: Any) -> Any:
        return jnp.asarray(a).astype(dtype)

    return cast


def _real_parts(a: Any, b: Any, node: Apply | None) -> tuple[Any, Any]:
    _, (out_dtype,) = _dtypes(node)
    real = "float32" if out_dtype == "complex64" else "float64"
    return as_dtype(a, real), as_dtype(b, real)


@jax_funcify.register(ps.Complex)
def _funcify_complex(op: ScalarOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    _, (out_dtype,) = _dtypes(node)

    def complex_(a: Any, b: Any) -> Any:
        re, im = _real_parts(a, b, node)
        return jax.lax.complex(re, im).astype(out_dtype)

    return complex_


@jax_funcify.register(ps.ComplexFromPolar)
def _funcify_complex_from_polar(op: ScalarOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    _, (out_dtype,) = _dtypes(node)

    def from_polar(r: Any, theta: Any) -> Any:
        r, theta = _real_parts(r, theta, node)
        return jax.lax.complex(r * jnp.cos(theta), r * jnp.sin(theta)).astype(out_dtype)

    return from_polar


@jax_funcify.register(Composite)
def _funcify_composite(op: Composite, node: Apply | None = None, **kwargs: Any) -> Callable:
    """A fused body, inlined: its scalar graph's functions run on the whole arrays."""
    body = funcify_fgraph(op.fgraph, **kwargs)
    out_dtypes = [v.type.dtype for v in node.outputs] if node is not None else None

    def composite(*args: Any) -> Any:
        outs = body(*args)
        if out_dtypes is not None:
            outs = tuple(jnp.asarray(o).astype(d) for o, d in zip(outs, out_dtypes))
        return outs[0] if len(outs) == 1 else outs

    return composite
