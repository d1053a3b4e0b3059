"""JAX functions of the array-building and shape Ops: :mod:`arignote.tensor.shape` (Shape,
Shape_i, MakeVector, SpecifyShape, Reshape), :mod:`~arignote.tensor.alloc` (Alloc, Eye,
Repeat, RepeatGrad), :mod:`~arignote.tensor.join` (Join, Split),
:mod:`~arignote.tensor.conversion` (TensorFromScalar, ScalarFromTensor),
:mod:`~arignote.tensor.ranges` (ARange), and the identity-valued Ops of gradients
(:mod:`arignote._gradient.ops`) and printing (``Print``).

Shapes are static under ``jax.jit``: ``Shape``/``Shape_i`` give NumPy values read from the
traced arrays' shapes, so shapes computed from them stay concrete. A length, an axis or a
split that comes from a function input is a traced value: :func:`static_int` then raises
the error that makes :class:`~arignote.link.jax.linker.JAXLinker` retry with integer inputs
as static arguments, or fail naming the node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote._gradient.ops import ViewOp
from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import as_dtype, concrete, kept_errors, static_input
from arignote.printing.print_op import Print
from arignote.tensor.alloc import Alloc, Eye, Repeat, RepeatGrad
from arignote.tensor.conversion import ScalarFromTensor, TensorFromScalar
from arignote.tensor.join import Join, Split
from arignote.tensor.ranges import ARange
from arignote.tensor.shape import MakeVector, Reshape, Shape, Shape_i, SpecifyShape

__all__ = ["static_int", "static_ints"]


def static_int(value: Any, node: Apply | None = None, what: str = "a length") -> int:
    """A Python int from a concrete scalar (a constant, a shape); a traced value raises
    :class:`~arignote.link.jax.dispatch.static.DataDependentShapeError` naming ``node``
    (the linker's cue to make integer inputs static)."""
    return int(concrete(value, node, what))


def static_ints(values: Any, node: Apply | None = None, what: str = "a shape") -> tuple[int, ...]:
    """:func:`static_int` of each entry of a vector (or of each of several scalars)."""
    if isinstance(values, list | tuple):
        return tuple(static_int(v, node, what) for v in values)
    return tuple(int(v) for v in concrete(values, node, what).reshape(-1))


def _static_at(node: Apply | None, i: int, value: Any, what: str) -> np.ndarray:
    """Input ``i``'s value, known when compiling: the node's constant (a traced argument
    then does not matter: the node says what it is), else the value itself when concrete."""
    c = static_input(node, i)
    return c if c is not None else concrete(value, node, what)


def _concrete(value: Any) -> np.ndarray | None:
    """``value`` as NumPy when it is concrete (not a tracer), else None."""
    try:
        return np.asarray(value)
    except Exception:  # a tracer: only known when the compiled function runs
        return None


@jax_funcify.register(Shape)
def _funcify_shape(op: Shape, node: Apply | None = None, **kwargs: Any) -> Callable:
    def shape(x: Any) -> Any:
        return np.asarray(jnp.shape(x), dtype=np.int64)

    return shape


@jax_funcify.register(Shape_i)
def _funcify_shape_i(op: Shape_i, node: Apply | None = None, **kwargs: Any) -> Callable:
    i = op.i

    def shape_i(x: Any) -> Any:
        return np.asarray(jnp.shape(x)[i], dtype=np.int64)

    return shape_i


@jax_funcify.register(MakeVector)
def _funcify_make_vector(op: MakeVector, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = np.dtype(op.dtype)

    def make_vector(*xs: Any) -> Any:
        values = [_concrete(x) for x in xs]
        if all(v is not None for v in values):  # keep shapes concrete
            return np.asarray(values, dtype=dtype).reshape(len(xs))
        return jnp.stack([as_dtype(x, dtype) for x in xs]) if xs else jnp.zeros(0, dtype)

    return make_vector


@jax_funcify.register(SpecifyShape)
def _funcify_specify_shape(op: SpecifyShape, node: Apply | None = None, **kwargs: Any) -> Callable:
    def specify_shape(x: Any, *shape: Any) -> Any:
        for d, s in enumerate(shape):
            c = static_input(node, 1 + d)
            value = c if c is not None else _concrete(s)
            if value is None or value.dtype == object or value.ndim:
                continue  # (None: any length; a traced length cannot be checked when compiling)
            if int(value) != x.shape[d]:
                raise ValueError(
                    f"SpecifyShape: dimension {d} of the input has length {x.shape[d]}, expected "
                    f"{int(value)} (input shape {tuple(x.shape)})"
                )
        return x

    return specify_shape


@jax_funcify.register(Reshape)
def _funcify_reshape(op: Reshape, node: Apply | None = None, **kwargs: Any) -> Callable:
    def reshape(x: Any, shape: Any) -> Any:
        return jnp.reshape(x, tuple(int(v) for v in _static_at(node, 1, shape, "the new shape").reshape(-1)))

    return reshape


@jax_funcify.register(Alloc)
def _funcify_alloc(op: Alloc, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = np.dtype(node.outputs[0].type.dtype) if node is not None else None

    def alloc(value: Any, *shape: Any) -> Any:
        sizes = tuple(int(_static_at(node, 1 + d, s, "the shape")) for d, s in enumerate(shape))
        bad = [d for d, s in enumerate(sizes) if s < 0]
        if bad:
            raise ValueError(f"Alloc: negative length {sizes[bad[0]]} for output dimension {bad[0]}")
        return jnp.broadcast_to(as_dtype(value, dtype), sizes)

    return alloc


@jax_funcify.register(Eye)
def _funcify_eye(op: Eye, node: Apply | None = None, **kwargs: Any) -> Callable:
    def eye(n: Any, m: Any, k: Any) -> Any:
        return jnp.eye(
            static_int(n, node), static_int(m, node), static_int(k, node, "the diagonal"), dtype=op.dtype
        )

    return eye


@jax_funcify.register(Repeat)
def _funcify_repeat(op: Repeat, node: Apply | None = None, **kwargs: Any) -> Callable:
    axis = op.axis

    def repeat(x: Any, repeats: Any) -> Any:
        counts = tuple(int(c) for c in _static_at(node, 1, repeats, "the repeat counts").reshape(-1))
        if len(counts) == 1:
            return jnp.repeat(x, counts[0], axis=axis)
        return jnp.repeat(x, np.asarray(counts), axis=axis, total_repeat_length=sum(counts))

    return repeat


@jax_funcify.register(RepeatGrad)
def _funcify_repeat_grad(op: RepeatGrad, node: Apply | None = None, **kwargs: Any) -> Callable:
    axis = op.axis
    one = node is not None and node.inputs[1].type.shape[0] == 1

    def repeat_grad(g: Any, repeats: Any, n: Any) -> Any:
        n = int(_static_at(node, 2, n, "the length n"))
        counts = as_dtype(repeats, jnp.int64).reshape(-1)
        if one:
            counts = jnp.full(n, counts[0], dtype=jnp.int64)
        # each slice of g goes to the slice of the input it copies (the total is g's length,
        # static: the counts themselves may be traced)
        moved = jnp.moveaxis(g, axis, 0)
        owner = jnp.repeat(jnp.arange(n), counts, total_repeat_length=moved.shape[0])
        out = jnp.zeros((n, *moved.shape[1:]), g.dtype).at[owner].add(moved)
        return jnp.moveaxis(out, 0, axis)

    return repeat_grad


@jax_funcify.register(Join)
def _funcify_join(op: Join, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = np.dtype(node.outputs[0].type.dtype) if node is not None else None

    def join(axis: Any, *arrays: Any) -> Any:
        ax = int(_static_at(node, 0, axis, "the axis"))
        return jnp.concatenate([as_dtype(a, dtype) for a in arrays], axis=ax)

    return join


@jax_funcify.register(Split)
def _funcify_split(op: Split, node: Apply | None = None, **kwargs: Any) -> Callable:
    def split(x: Any, axis: Any, splits: Any) -> tuple:
        ax = int(_static_at(node, 1, axis, "the axis"))
        sizes = tuple(int(v) for v in _static_at(node, 2, splits, "the split sizes").reshape(-1))
        if sum(sizes) != x.shape[ax]:
            raise ValueError(
                f"{op}: the split sizes {list(sizes)} sum to {sum(sizes)}, but the input has length "
                f"{x.shape[ax]} on axis {ax}"
            )
        pieces = jnp.split(x, np.cumsum(sizes[:-1]).tolist(), axis=ax)
        return tuple(pieces) if len(pieces) > 1 else pieces[0]

    return split


@jax_funcify.register(TensorFromScalar)
@jax_funcify.register(ScalarFromTensor)
def _funcify_scalar_tensor(op: Any, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = np.dtype(node.outputs[0].type.dtype) if node is not None else None

    def convert(x: Any) -> Any:
        c = _concrete(x) if isinstance(x, np.ndarray | np.generic | int | float) else None
        if c is not None:  # (a shape stays concrete)
            return np.asarray(c, dtype=dtype)
        return as_dtype(x, dtype)

    return convert


@jax_funcify.register(ARange)
def _funcify_arange(op: ARange, node: Apply | None = None, **kwargs: Any) -> Callable:
    def arange(start: Any, stop: Any, step: Any) -> Any:
        a, b, s = (
            _static_at(node, i, v, "arange's bounds").item() for i, v in enumerate((start, stop, step))
        )
        if s == 0:
            raise ValueError(f"ARange: step is 0 (start={a}, stop={b})")
        return jnp.arange(a, b, s, dtype=op.dtype)

    return arange


@jax_funcify.register(ViewOp)
def _funcify_view(op: ViewOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    """ViewOp and the gradient markers built on it (ZeroGrad, GradClip, ...): the forward
    value is the input; their effect is on arignote's symbolic gradients, already taken."""

    def view(x: Any) -> Any:
        return x

    return view


@jax_funcify.register(Print)
def _funcify_print(op: Print, node: Apply | None = None, **kwargs: Any) -> Callable:
    """The value is the input; the Op's ``global_fn`` (by default, printing the message and
    the value) runs on the host when the value arrives."""

    def on_host(value: Any) -> None:
        op.global_fn(op, np.asarray(value))

    def print_(x: Any) -> Any:
        jax.debug.callback(kept_errors(on_host), x)
        return x

    return print_
