"""JAX functions as arignote Ops, with their gradients: :func:`wrap_jax`.

The other direction of :func:`~arignote.link.jax.function.jax_function`: a function written
with ``jax.numpy`` becomes a node of an arignote graph. Its output Types come from
``jax.eval_shape`` (a dimension the inputs' Types leave unknown is a symbolic dimension
there, so the output's length is static exactly when JAX can say it without the data). It
runs everywhere: in ``mode="JAX"`` the function is inlined into the graph's compiled
function; on the other backends ``perform`` calls it (compiled by ``jax.jit`` once per input
shape). Its gradient is JAX's vector-Jacobian product (``jax.vjp``), itself a wrapped JAX
function, so second derivatives work too.

>>> import jax.numpy as jnp
>>> import numpy as np
>>> import arignote, arignote.tensor as pt
>>> @wrap_jax
... def logsumexp(x):
...     return jnp.log(jnp.sum(jnp.exp(x)))
>>> x = pt.dvector("x")
>>> y = logsumexp(x)
>>> f = arignote.function([x], [y, arignote.grad(y, x)])
>>> value, grad = f(np.zeros(2))
>>> float(value), grad.tolist()
(0.6931471805599453, [0.5, 0.5])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.shape import ShapeError
from arignote.tensor.type import TensorType

__all__ = ["JAXOp", "wrap_jax"]


def _abstract(types: Sequence[TensorType]) -> list[jax.ShapeDtypeStruct]:
    """The inputs as JAX abstract values: an unknown length is a symbolic dimension."""
    unknown = [f"d{k}_{d}" for k, t in enumerate(types) for d, s in enumerate(t.shape) if s is None]
    symbols = iter(export.symbolic_shape(", ".join(unknown)) if unknown else ())
    return [
        jax.ShapeDtypeStruct(tuple(next(symbols) if s is None else s for s in t.shape), np.dtype(t.dtype))
        for t in types
    ]


def _output_types(fn: Callable, types: Sequence[TensorType], name: str) -> list[TensorType]:
    try:
        outs = jax.eval_shape(fn, *_abstract(types))
    except Exception as err:
        raise TypeError(
            f"wrap_jax: could not trace {name} on inputs of Types {[str(t) for t in types]}: "
            f"{type(err).__name__}: {err}"
        ) from err
    leaves = outs if isinstance(outs, tuple | list) else (outs,)
    result = []
    for k, leaf in enumerate(leaves):
        if not isinstance(leaf, jax.ShapeDtypeStruct):
            raise TypeError(
                f"wrap_jax: output {k} of {name} is {leaf!r}, not an array (return arrays or a tuple)"
            )
        shape = tuple(s if isinstance(s, int) else None for s in leaf.shape)
        result.append(TensorType(np.dtype(leaf.dtype).name, shape))
    return result


class JAXOp(Op):
    """An Op computing ``jax_fn`` (a function of arrays returning an array or a tuple of
    arrays). ``name`` labels it; ``output_types`` (TensorTypes), when given, are the outputs'
    Types instead of those ``jax.eval_shape`` finds. Ops wrapping the same function (the same
    object) are equal."""

    __props__ = ("jax_fn", "name", "output_types")

    def __init__(
        self, jax_fn: Callable, name: str | None = None, output_types: Sequence[TensorType] | None = None
    ):
        if not callable(jax_fn):
            raise TypeError(f"wrap_jax needs a callable, got {jax_fn!r}")
        self.jax_fn = jax_fn
        self.name = name or getattr(jax_fn, "__name__", "jax_fn")
        self.output_types = None if output_types is None else tuple(output_types)
        self._jitted = jax.jit(jax_fn)

    def __str__(self) -> str:
        return f"JAXOp{{{self.name}}}"

    def make_node(self, *inputs: Any) -> Apply:
        ins = [as_tensor_variable(i) for i in inputs]
        out_types = self.output_types or _output_types(self.jax_fn, [i.type for i in ins], self.name)
        return Apply(self, ins, [t() for t in out_types])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        outs = self._jitted(*inputs)
        outs = outs if isinstance(outs, tuple | list) else (outs,)
        for cell, value, var in zip(output_storage, outs, node.outputs):
            cell[0] = np.array(value, dtype=var.type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        """Static lengths, and lengths that JAX says equal a length of an input (a symbolic
        dimension of ``jax.eval_shape``); another length is only known when the Op runs."""
        types = [i.type for i in node.inputs]
        names = {
            f"d{k}_{d}": shapes[k][d] for k, t in enumerate(types) for d, s in enumerate(t.shape) if s is None
        }
        outs = jax.eval_shape(self.jax_fn, *_abstract(types)) if names else None
        leaves = outs if isinstance(outs, tuple | list) else (outs,)
        result = []
        for k, var in enumerate(node.outputs):
            dims = []
            for d, static in enumerate(var.type.shape):
                if static is not None:
                    dims.append(static)
                    continue
                sym = str(leaves[k].shape[d]) if outs is not None else None
                if sym not in names:
                    raise ShapeError(
                        f"{self}: the length of dimension {d} of output {k} is known when it runs"
                    )
                dims.append(names[sym])
            result.append(tuple(dims))
        return result

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], grads: Sequence[Variable]
    ) -> list:
        """JAX's vector-Jacobian product, as another wrapped JAX function (integer inputs
        get no gradient: disconnected)."""
        diff = [k for k, v in enumerate(inputs) if np.dtype(v.type.dtype).kind in "fc"]
        if not diff:
            return [disconnected_type() for _ in inputs]
        n_in = len(inputs)
        fn = self.jax_fn
        cot_given = [not is_disconnected(g) for g in grads]

        def vjp(*args: Any) -> tuple:
            primals, cots = args[:n_in], list(args[n_in:])

            def of_diff(*xs: Any) -> Any:
                full = list(primals)
                for k, x in zip(diff, xs):
                    full[k] = x
                return fn(*full)

            outs, pullback = jax.vjp(of_diff, *[primals[k] for k in diff])
            leaves = outs if isinstance(outs, tuple | list) else (outs,)
            it = iter(cots)
            cot = [next(it) if given else jnp.zeros_like(o) for o, given in zip(leaves, cot_given)]
            cot = [jnp.broadcast_to(jnp.asarray(c, dtype=o.dtype), o.shape) for c, o in zip(cot, leaves)]
            result = pullback(tuple(cot) if isinstance(outs, tuple | list) else cot[0])
            return tuple(result)

        vjp.__name__ = f"{self.name}_vjp"
        given = [g for g, ok in zip(grads, cot_given) if ok]
        # (the gradients have the inputs' Types: no tracing with independent symbolic lengths)
        terms = JAXOp(vjp, output_types=[inputs[k].type for k in diff])(*inputs, *given)
        terms = terms if isinstance(terms, list) else [terms]
        out: list = [disconnected_type() for _ in inputs]
        for k, t in zip(diff, terms):
            out[k] = t
        return out

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[np.dtype(v.type.dtype).kind in "fc"] * len(node.outputs) for v in node.inputs]


@jax_funcify.register(JAXOp)
def _funcify_jax_op(op: JAXOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    return op.jax_fn


def wrap_jax(jax_fn: Callable | None = None, *, name: str | None = None) -> Any:
    """``wrap_jax(fn)`` (or ``@wrap_jax``): ``fn``, a JAX function of arrays, as a function
    of arignote Variables that builds a :class:`JAXOp` node (its output, or a list of them
    when ``fn`` returns a tuple). See the module's doc for an example."""
    if jax_fn is None:
        return functools.partial(wrap_jax, name=name)
    op = JAXOp(jax_fn, name=name)

    @functools.wraps(jax_fn)
    def build(*inputs: Any) -> Any:
        return op(*inputs)

    build.op = op  # type: ignore[attr-defined]
    return build
