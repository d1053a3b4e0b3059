"""A whole FunctionGraph as one pure function of its inputs' values, built from the nodes' JAX
functions (:func:`~arignote.link.jax.dispatch.basic.jax_funcify`).

``funcify_fgraph(fgraph)`` (also ``jax_funcify(fgraph)``) returns ``fn(*inputs) -> tuple``:
the values of ``fgraph.outputs`` computed from the values of ``fgraph.inputs``. It is the body
that :class:`~arignote.link.jax.linker.JAXLinker` hands to ``jax.jit``, and the way inner
graphs (``OpFromGraph``, ``IfElse`` branches, a ``Composite``'s scalar body) are inlined into
the function of the graph around them. Each node's function is chosen once, here; calling
``fn`` only runs them in topological order. Under ``jax.jit`` that loop runs once, while
tracing, so its Python cost is paid at compile time, never per call.

Values known while tracing stay known: a node whose inputs are all small NumPy values (a
shape read from a traced array, a constant, arithmetic on them) is computed on the host by
the Op's own ``perform`` (:func:`host_computed`), not staged into the compiled function,
where JAX would make its result a traced value. So ``alloc(0, x.shape[0] + 1)`` has a static
length under ``jax.jit``, as shapes computed in Python have in hand-written JAX code.

A node whose JAX function fails while tracing (a shape JAX cannot know abstractly, a dtype
JAX refuses) raises :class:`JAXNodeError` naming the node, its input Types and the user's line
that created it, with the original error chained.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import HasInnerGraph, has_own_thunk
from arignote.graph.utils import format_site
from arignote.ifelse import IfElse
from arignote.link.jax.dispatch.basic import jax_funcify, jax_typify
from arignote.link.jax.dispatch.branches import Location, branch_locations
from arignote.link.jax.dispatch.ifelse import choose
from arignote.link.jax.dispatch.sparse.values import is_sparse
from arignote.link.jax.dispatch.static import is_tracer
from arignote.tensor.alloc import Alloc

__all__ = ["JAXNodeError", "funcify_fgraph", "host_computed", "node_label"]

#: the most elements a node's NumPy inputs may have for it to be computed on the host while
#: tracing (shape arithmetic is a few numbers; larger constants are XLA's to fold). An
#: ``Alloc`` of more elements (a gradient's fill of a batch's shape) is left to its JAX
#: function too: computed here, it would be embedded in the program as a constant that size
#: (a value read as a constant, a mask say, stays known: only fills are staged)
HOST_MAX_ELEMENTS = 256

_HOST_VALUES = (np.ndarray, np.generic)


class JAXNodeError(RuntimeError):
    """A node of the graph could not be computed (or traced) by its JAX function.

    Raised from a standard error (a ``ValueError`` for a shape that does not fit, a
    ``TypeError``, an ``IndexError``, ``numpy.linalg.LinAlgError``...), it is an instance of
    that error's class too, so that code catching it works under every backend alike."""

    def __init__(self, message: str, node: Apply):
        super().__init__(message)
        self.node = node


def node_label(node: Apply) -> str:
    """``node`` for messages: the node, its inputs' Types and where the user created it."""
    types = ", ".join(str(getattr(v, "type", "?")) for v in node.inputs)
    site = getattr(getattr(node.outputs[0], "tag", None), "trace", None) if node.outputs else None
    where = ""
    if site:
        try:
            where = f"\n  created at {format_site(site).splitlines()[0]}"
        except Exception:  # a trace in another format: leave it out, the node is named
            where = ""
    return f"{node} (inputs: {types or 'none'}){where}"


def _host_able(node: Apply) -> bool:
    """Whether ``node`` may be computed by its ``perform`` when its inputs are known: a
    plain Op (no thunk of its own, no inner graph, nothing overwritten) of arrays."""
    op = node.op
    if has_own_thunk(op) or isinstance(op, HasInnerGraph) or getattr(op, "destroy_map", None):
        return False
    if any(is_sparse(o) for o in node.outputs):  # a BCOO inside the program, not SciPy's
        return False
    return all(type(getattr(o.type, "dtype", None)) is str for o in node.outputs) and bool(node.inputs)


def host_computed(node: Apply, values: list) -> list | None:
    """The node's outputs computed on the host by ``perform`` when all ``values`` are small
    NumPy values, else None (the node's JAX function computes it)."""
    size = 0
    for v in values:
        if not isinstance(v, _HOST_VALUES):
            return None
        size += v.size
    if size > HOST_MAX_ELEMENTS:
        return None
    cells: list[list] = [[None] for _ in node.outputs]
    with np.errstate(all="ignore"):
        node.op.perform(node, values, cells)
    results = [c[0] for c in cells]
    if isinstance(node.op, Alloc) and results[0].size > HOST_MAX_ELEMENTS:
        return None  # a large fill: see HOST_MAX_ELEMENTS
    return results


def _constant_value(var: Constant) -> Any:
    """A constant's value as the traced function uses it: :func:`jax_typify` of its data
    (NumPy data stay NumPy, a SciPy matrix becomes a BCOO of NumPy parts and a NumPy
    Generator a JAX key, as the linker makes them of inputs)."""
    return jax_typify(var.data)


def funcify_fgraph(
    fgraph: FunctionGraph,
    *,
    inputs: Sequence[Variable] | None = None,
    outputs: Sequence[Variable] | None = None,
    **kwargs: Any,
) -> Callable[..., tuple]:
    """The pure function ``fn(*input_values) -> tuple of output values`` of ``fgraph``.

    ``inputs``/``outputs`` default to the graph's. ``kwargs`` are passed on to every
    node's :func:`jax_funcify`.
    """
    ins = list(fgraph.inputs if inputs is None else inputs)
    outs = list(fgraph.outputs if outputs is None else outputs)
    nodes = fgraph.toposort()
    where = branch_locations(nodes, outs)
    # the steps of each location (see branches.py): the top level's, and each IfElse
    # branch's, run inside that branch's function of lax.cond
    blocks: dict[Location, list[_Step]] = {(): []}
    for node in nodes:
        try:
            fn = jax_funcify(node.op, node=node, **kwargs)
        except NotImplementedError:
            raise
        except Exception as err:
            raise JAXNodeError(f"No JAX function for {node_label(node)}: {err}", node) from err
        loc = where.get(node, ())
        branches = None
        if isinstance(node.op, IfElse) and where:
            branches = (
                blocks.setdefault((*loc, (node, 0)), []),
                blocks.setdefault((*loc, (node, 1)), []),
            )
        step = (
            node,
            fn,
            tuple(node.inputs),
            tuple(node.outputs),
            _host_able(node) and branches is None,
            branches,
        )
        blocks.setdefault(loc, []).append(step)
    top = blocks[()]
    in_set = set(ins)
    constants = {
        v: _constant_value(v)
        for node in nodes
        for v in node.inputs
        if isinstance(v, Constant) and v not in in_set
    }
    for v in outs:
        if isinstance(v, Constant):
            constants[v] = _constant_value(v)
    n_in = len(ins)

    def graph_fn(*values: Any) -> tuple:
        if len(values) != n_in:
            raise TypeError(f"this graph takes {n_in} input(s), got {len(values)}")
        env: dict[Variable, Any] = dict(constants)
        for var, value in zip(ins, values):
            if isinstance(value, int | float | complex) and isinstance(getattr(var.type, "dtype", None), str):
                # a static argument of jax.jit comes as a Python scalar: as a NumPy value
                # of its Type, the nodes reading it are computed on the host (host_computed)
                # and stay known while tracing, as the constants are
                value = np.asarray(value, dtype=var.type.dtype)
            env[var] = value
        _run(top, env)
        return tuple(env[v] for v in outs)

    graph_fn.__name__ = "arignote_graph"
    return graph_fn


#: a node's step: (node, its JAX function, inputs, outputs, whether it may be computed on
#: the host, and for a lazy IfElse the steps of its then and else branches)
_Step = tuple[Apply, Callable, tuple, tuple, bool, "tuple[list, list] | None"]


def _run(block: list[_Step], env: dict[Variable, Any]) -> None:
    """Run ``block``'s steps, reading and writing the values of ``env``."""
    for node, fn, node_ins, node_outs, host, branches in block:
        try:
            if branches is not None:
                result = _lazy_ifelse(node, branches, env)
            else:
                args = [env[v] for v in node_ins]
                known = host_computed(node, args) if host else None
                if known is not None:
                    env.update(zip(node_outs, known))
                    continue
                result = fn(*args)
        except JAXNodeError:
            raise
        except KeyError as err:
            if isinstance(err.args[0], Variable):
                raise JAXNodeError(
                    f"{node_label(node)} needs {err.args[0]}, which is not an input of the graph",
                    node,
                ) from None
            raise _node_error(node, err) from err
        except Exception as err:
            raise _node_error(node, err) from err
        if len(node_outs) == 1:
            env[node_outs[0]] = _fresh_if_empty(result)
        else:
            if not isinstance(result, tuple | list) or len(result) != len(node_outs):
                raise JAXNodeError(
                    f"The JAX function of {node_label(node)} returned {type(result).__name__}, "
                    f"expected a tuple of {len(node_outs)} values",
                    node,
                )
            env.update(zip(node_outs, map(_fresh_if_empty, result)))


def _fresh_if_empty(value: Any) -> Any:
    """An empty traced array as a new array of zeros (exact: it holds no value), so that
    what computed it is left to XLA's dead-code removal: XLA's CPU compiler of jaxlib 0.10
    aborts the process on a slice that empties a concatenation with an empty operand
    (``concatenate([x, empty])[len(x):]``, the result of a loop run zero times)."""
    if is_tracer(value) and getattr(value, "size", 1) == 0:
        return jnp.zeros(value.shape, value.dtype)
    return value


def _lazy_ifelse(node: Apply, branches: tuple[list, list], env: dict[Variable, Any]) -> Any:
    """An IfElse whose branch-only nodes run inside ``lax.cond``'s branch functions. Those
    nodes' values are used nowhere else (branches.py), so they may go into ``env``."""
    n = node.op.n_outs
    then_block, else_block = branches

    def branch(block: list[_Step], values: tuple) -> Callable[[], tuple]:
        def run() -> tuple:
            _run(block, env)
            return tuple(env[v] for v in values)

        return run

    return choose(
        node.op,
        node,
        env[node.inputs[0]],
        branch(then_block, node.inputs[1 : 1 + n]),
        branch(else_block, node.inputs[1 + n :]),
    )


def _node_error(node: Apply, err: Exception) -> JAXNodeError:
    kind = type(err).__name__
    hint = ""
    if kind in (
        "ConcretizationTypeError",
        "TracerIntegerConversionError",
        "TracerBoolConversionError",
        "TracerArrayConversionError",
        "NonConcreteBooleanIndexError",
        "DataDependentShapeError",
    ):
        hint = (
            "\nJAX needs the shapes of all values when it compiles (jax.jit traces with abstract "
            "values): this node's output shape depends on the value of one of its inputs. Make "
            "that value a constant of the graph (a function's integer scalar inputs already become "
            "static arguments of jax.jit when a node needs their values), or run this graph with "
            "another mode."
        )
    error_class = _node_error_class(err)
    return error_class(f"JAX could not compute {node_label(node)}: {kind}: {err}{hint}", node)


#: the standard errors a JAXNodeError is also an instance of, when its cause is one (the first
#: that applies), so that ``except ValueError`` catches a bad shape under every backend alike
_ALSO = (np.linalg.LinAlgError, IndexError, KeyError, ValueError, TypeError, ArithmeticError)
_ERROR_CLASSES: dict[tuple[type, ...], type] = {}


def _node_error_class(err: Exception) -> type:
    """JAXNodeError, made also a subclass of the standard error ``err`` is (see :data:`_ALSO`)."""
    also = next((c for c in _ALSO if isinstance(err, c)), None)
    if also is None:
        return JAXNodeError
    bases: tuple[type, ...] = (also,)
    if also is TypeError and "shape" in str(err):
        # JAX reports shapes that do not fit as a TypeError (shapes are part of its types),
        # where NumPy and the other backends raise ValueError: the error is both
        bases = (ValueError, TypeError)
    cls = _ERROR_CLASSES.get(bases)
    if cls is None:
        cls = _ERROR_CLASSES[bases] = type("JAXNodeError", (JAXNodeError, *bases), {"__module__": __name__})
    return cls


@jax_funcify.register(FunctionGraph)
def _funcify_function_graph(fgraph: FunctionGraph, node: Apply | None = None, **kwargs: Any) -> Callable:
    return funcify_fgraph(fgraph, **kwargs)
