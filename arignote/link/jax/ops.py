"""JAX functions as arignote Ops, with their gradients: :class:`JAXOp` and :func:`wrap_jax`
(PyTensor 3's ``pytensor.link.jax.ops``).

The other direction of :func:`~arignote.link.jax.function.jax_function`: a function written
with ``jax.numpy`` becomes a node of an arignote graph. It runs everywhere: in
``mode="JAX"`` the function is inlined into the graph's compiled function; on the other
backends ``perform`` calls it (compiled by ``jax.jit`` once per input shape). Its gradient
is JAX's vector-Jacobian product (``jax.vjp``), itself a JAXOp, so second derivatives work
too.

:func:`wrap_jax` takes any nesting of arguments and results (a pytree: tuples, lists,
dicts, ...): the arignote Variables among the arguments are the node's inputs, every other
argument is a constant of the function; the arrays among the results are the node's
outputs, put back in the same structure. Output Types come from ``jax.eval_shape`` with a
symbolic dimension for each length the inputs' Types leave unknown, so an output's length
is static exactly where JAX can say it without the data.

>>> import jax.numpy as jnp
>>> import numpy as np
>>> import arignote, arignote.tensor as pt
>>> @wrap_jax
... def logsumexp(x, scale=1.0):
...     return {"lse": scale * jnp.log(jnp.sum(jnp.exp(x)))}
>>> x = pt.dvector("x")
>>> y = logsumexp(x, scale=2.0)["lse"]
>>> f = arignote.function([x], [y, arignote.grad(y, x)])
>>> value, grad = f(np.zeros(2))
>>> float(value), grad.tolist()
(1.3862943611198906, [1.0, 1.0])
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
from arignote.graph.type import Type
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import as_dtype
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.shape import ShapeError
from arignote.tensor.type import TensorType

__all__ = ["JAXOp", "wrap_jax"]


def _abstract(types: Sequence[TensorType], one_symbol: bool = False) -> list[jax.ShapeDtypeStruct]:
    """The inputs as JAX abstract values: an unknown length is a symbolic dimension, one of
    its own (``d<input>_<axis>``), or with ``one_symbol`` the same one for all (JAX then
    takes unknown lengths for equal where the function needs them so: ``x + y`` of two
    vectors)."""
    unknown = [f"d{k}_{d}" for k, t in enumerate(types) for d, s in enumerate(t.shape) if s is None]
    if one_symbol and unknown:
        (n,) = export.symbolic_shape("n")
        symbols = iter([n] * len(unknown))
    else:
        symbols = iter(export.symbolic_shape(", ".join(unknown)) if unknown else ())
    return [
        jax.ShapeDtypeStruct(tuple(next(symbols) if s is None else s for s in t.shape), np.dtype(t.dtype))
        for t in types
    ]


def _as_tuple(results: Any) -> tuple:
    return tuple(results) if isinstance(results, tuple | list) else (results,)


class JAXOp(Op):
    """An Op computing ``jax_function``, a JAX function of arrays of ``input_types``
    returning a tuple of arrays of ``output_types`` (one array is taken as a tuple of one).
    ``name`` labels it. Two JAXOps of the same function and Types are equal.

    >>> import jax.numpy as jnp
    >>> import numpy as np
    >>> import arignote, arignote.tensor as pt
    >>> vector = pt.TensorType("float64", shape=(None,))
    >>> op = JAXOp([vector, vector], [pt.TensorType("float64", shape=())],
    ...            lambda x, y: (jnp.sum(x * y),), name="dot")
    >>> x, y = pt.dvector("x"), pt.dvector("y")
    >>> arignote.function([x, y], arignote.grad(op(x, y), x))(np.ones(2), np.array([2.0, 3.0]))
    array([2., 3.])
    """

    __props__ = ("input_types", "output_types", "jax_func")

    def __init__(
        self,
        input_types: Sequence[Type],
        output_types: Sequence[Type],
        jax_function: Callable,
        name: str | None = None,
    ):
        if not callable(jax_function):
            raise TypeError(f"JAXOp needs a callable JAX function, got {jax_function!r}")
        for what, types in (("input", input_types), ("output", output_types)):
            bad = [t for t in types if not isinstance(t, TensorType)]
            if bad:
                raise TypeError(f"JAXOp's {what} types must be TensorTypes, got {bad}")
        self.input_types = tuple(input_types)
        self.output_types = tuple(output_types)
        self.jax_func = jax_function
        self.name = name or getattr(jax_function, "__name__", "jax_function")
        self.jitted_func = jax.jit(jax_function)

    def __str__(self) -> str:
        return f"JAXOp{{{self.name}}}"

    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != len(self.input_types):
            raise ValueError(f"{self} takes {len(self.input_types)} inputs, got {len(inputs)}")
        ins = [t.filter_variable(as_tensor_variable(i)) for i, t in zip(inputs, self.input_types)]
        return Apply(self, ins, [t() for t in self.output_types])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        results = _as_tuple(self.jitted_func(*inputs))
        if len(results) != len(output_storage):
            raise ValueError(
                f"{self}'s function returned {len(results)} outputs, expected {len(output_storage)}"
            )
        for cell, value, t in zip(output_storage, results, self.output_types):
            cell[0] = np.array(value, dtype=t.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        """Static lengths, and lengths that JAX says equal a length of an input (a symbolic
        dimension of ``jax.eval_shape``); another length is only known when the Op runs."""
        names = {
            f"d{k}_{d}": shapes[k][d]
            for k, t in enumerate(self.input_types)
            for d, s in enumerate(t.shape)
            if s is None
        }
        leaves: tuple = ()
        if names:
            try:
                leaves = _as_tuple(jax.eval_shape(self.jax_func, *_abstract(self.input_types)))
            except Exception:  # (traced only with example shapes: see wrap_jax's allow_eval)
                leaves = ()
        result = []
        for k, var in enumerate(node.outputs):
            dims = []
            for d, static in enumerate(var.type.shape):
                if static is not None:
                    dims.append(static)
                    continue
                sym = str(leaves[k].shape[d]) if leaves else None
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
        """JAX's vector-Jacobian product, as another JAXOp (integer inputs get no gradient:
        disconnected; a disconnected output gradient is a zero cotangent)."""
        diff = [k for k, t in enumerate(self.input_types) if np.dtype(t.dtype).kind in "fc"]
        if not diff:
            return [disconnected_type() for _ in inputs]
        n_in = len(inputs)
        fn = self.jax_func
        given = [k for k, g in enumerate(grads) if not is_disconnected(g)]
        out_types = self.output_types

        def vjp(*args: Any) -> tuple:
            primals, cots = args[:n_in], dict(zip(given, args[n_in:]))

            def of_diff(*xs: Any) -> tuple:
                full = list(primals)
                for k, x in zip(diff, xs):
                    full[k] = x
                return _as_tuple(fn(*full))

            results, pullback = jax.vjp(of_diff, *[primals[k] for k in diff])
            cot = tuple(
                jnp.broadcast_to(as_dtype(cots[k], r.dtype), r.shape) if k in cots else jnp.zeros_like(r)
                for k, r in enumerate(results)
            )
            return tuple(pullback(cot))

        vjp.__name__ = f"{self.name}_vjp"
        vjp_op = JAXOp(
            [*self.input_types, *(out_types[k] for k in given)],
            [self.input_types[k] for k in diff],
            vjp,
            name=vjp.__name__,
        )
        terms = vjp_op(*inputs, *(grads[k] for k in given), return_list=True)
        out: list = [disconnected_type() for _ in inputs]
        for k, t in zip(diff, terms):
            out[k] = t
        return out

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[np.dtype(t.dtype).kind in "fc"] * len(node.outputs) for t in self.input_types]


@jax_funcify.register(JAXOp)
def _funcify_jax_op(op: JAXOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    if len(op.output_types) != 1:
        return op.jax_func

    def single(*args: Any) -> Any:
        return _as_tuple(op.jax_func(*args))[0]

    return single


def _first_line(err: BaseException) -> str:
    """``Type: message`` of an error, its first line (JAX's shape errors go on for a page)."""
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0] if lines else ''}"


def _is_array(leaf: Any) -> bool:
    """Whether a result of the wrapped function is an output of the node (an array; under
    tracing, a tracer), rather than a Python value carried to the result as it is."""
    return isinstance(leaf, jax.Array | np.ndarray | np.generic)


class _Wrapped:
    """One call of a wrapped function: the arignote Variables among its arguments (the
    node's inputs, in the order ``jax.tree`` flattens the arguments), the other arguments
    (constants of the function) and, once traced, the structure of its results."""

    def __init__(self, func: Callable, name: str, args: tuple, kwargs: dict):
        self.func = func
        self.__name__ = name  # (the JAXOp's function: its name labels the node)
        self.leaves, self.treedef = jax.tree.flatten(
            (args, kwargs), is_leaf=lambda v: isinstance(v, Variable)
        )
        self.positions = [k for k, leaf in enumerate(self.leaves) if isinstance(leaf, Variable)]
        self.variables = [as_tensor_variable(self.leaves[k]) for k in self.positions]
        self.out_treedef: Any = None
        self.out_static: list = []  # the results' leaves, None where an output goes

    def __call__(self, *values: Any) -> tuple:
        """The function of the node's inputs' values, returning the arrays among its results."""
        leaves = list(self.leaves)
        for k, v in zip(self.positions, values):
            leaves[k] = v
        args, kwargs = jax.tree.unflatten(self.treedef, leaves)
        out_leaves, self.out_treedef = jax.tree.flatten(self.func(*args, **kwargs))
        self.out_static = [None if _is_array(leaf) else leaf for leaf in out_leaves]
        return tuple(leaf for leaf in out_leaves if _is_array(leaf))

    def output_types(self, allow_eval: bool) -> list[TensorType]:
        """The outputs' Types, from ``jax.eval_shape`` with a symbolic dimension for each
        unknown length; where JAX cannot trace the function so, with one symbolic
        dimension for all of them; then, with ``allow_eval``, with example lengths computed
        from the inputs (their shapes must depend on constants and shared variables only),
        every length of the outputs then unknown. A length that is not a number is unknown."""
        types = [v.type for v in self.variables]
        try:
            outs = jax.eval_shape(self, *_abstract(types))
        except Exception as err:
            if all(None not in t.shape for t in types):
                raise TypeError(
                    f"wrap_jax: could not trace {self.__name__} on inputs of Types "
                    f"{[str(t) for t in types]}: {_first_line(err)}"
                ) from err
            try:
                outs = jax.eval_shape(self, *_abstract(types, one_symbol=True))
            except Exception:
                if not allow_eval:
                    raise ValueError(
                        f"wrap_jax: {self.__name__} cannot be traced with unknown lengths "
                        f"({_first_line(err)}); give the inputs static shapes, with "
                        "pt.specify_shape (or let allow_eval compute example lengths)"
                    ) from err
                examples = jax.eval_shape(self, *self._examples(types, err))
                return [TensorType(np.dtype(o.dtype).name, (None,) * len(o.shape)) for o in examples]
        return [
            TensorType(np.dtype(o.dtype).name, tuple(s if isinstance(s, int) else None for s in o.shape))
            for o in outs
        ]

    def _examples(self, types: list[TensorType], cause: Exception) -> list[jax.ShapeDtypeStruct]:
        try:
            shapes = [tuple(int(n) for n in v.shape.eval()) for v in self.variables]
        except Exception as err:
            raise ValueError(
                f"wrap_jax: {self.__name__} cannot be traced with unknown lengths "
                f"({_first_line(cause)}), and the inputs' lengths cannot be computed "
                "ahead (they depend on inputs of the graph): give the inputs static shapes, "
                "with pt.specify_shape"
            ) from err
        return [jax.ShapeDtypeStruct(s, np.dtype(t.dtype)) for s, t in zip(shapes, types)]

    def rebuild(self, outputs: list[Variable]) -> Any:
        """The results' structure, with the node's outputs where the arrays were."""
        it = iter(outputs)
        leaves = [next(it) if static is None else static for static in self.out_static]
        return jax.tree.unflatten(self.out_treedef, leaves)


def wrap_jax(
    jax_function: Callable | None = None, *, allow_eval: bool = True, name: str | None = None
) -> Any:
    """``wrap_jax(fn)`` (or ``@wrap_jax``): ``fn``, a JAX function, as a function of
    arignote Variables that builds a :class:`JAXOp` node and returns its outputs in the
    structure ``fn`` returns (see the module's doc). Arguments may nest Variables in
    tuples, lists and dicts; an argument that is not a Variable is a constant of the
    function. ``allow_eval``: where ``fn`` cannot be traced with unknown lengths, compute
    example lengths from the inputs (see :meth:`_Wrapped.output_types`); ``name`` labels
    the node (``fn``'s name by default)."""
    if jax_function is None:
        return functools.partial(wrap_jax, allow_eval=allow_eval, name=name)
    if not callable(jax_function):
        raise TypeError(f"wrap_jax needs a callable, got {jax_function!r}")
    label = name or getattr(jax_function, "__name__", "jax_function")

    @functools.wraps(jax_function)
    def build(*args: Any, **kwargs: Any) -> Any:
        call = _Wrapped(jax_function, label, args, kwargs)
        out_types = call.output_types(allow_eval)
        if not out_types:
            raise TypeError(f"wrap_jax: {label} returned no array, so the node would have no output")
        op = JAXOp([v.type for v in call.variables], out_types, call, name=label)
        return call.rebuild(op(*call.variables, return_list=True))

    return build
