"""A whole FunctionGraph as one pure function of its inputs' values, built from the nodes' JAX
functions (:func:`~arignote.link.jax.dispatch.basic.jax_funcify`).

``funcify_fgraph(fgraph)`` (also ``jax_funcify(fgraph)``) returns ``fn(*inputs) -> tuple``:
the values of ``fgraph.outputs`` computed from the values of ``fgraph.inputs``. It is the body
that :class:`~arignote.link.jax.linker.JAXLinker` hands to ``jax.jit``, and the way inner
graphs (``OpFromGraph``, ``IfElse`` branches, a ``Composite``'s scalar body) are inlined into
the function of the graph around them. Each node's function is chosen once, here; calling
``fn`` only runs them in topological order. Under ``jax.jit`` that loop runs once, while
tracing, so its Python cost is paid at compile time, never per call.

A node whose JAX function fails while tracing (a shape JAX cannot know abstractly, a dtype
JAX refuses) raises :class:`JAXNodeError` naming the node, its input Types and the user's line
that created it, with the original error chained.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.utils import format_site
from arignote.link.jax.dispatch.basic import jax_funcify

__all__ = ["JAXNodeError", "funcify_fgraph", "node_label"]


class JAXNodeError(RuntimeError):
    """A node of the graph could not be computed (or traced) by its JAX function."""

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


def _constant_value(var: Constant) -> Any:
    """A constant's value as the traced function uses it: NumPy data stay NumPy (JAX takes
    them as compile-time constants); other values (a slice, None) as they are."""
    data = var.data
    if isinstance(data, np.ndarray | np.generic):
        return data
    return data


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
    steps: list[tuple[Apply, Callable, tuple, tuple]] = []
    for node in nodes:
        try:
            fn = jax_funcify(node.op, node=node, **kwargs)
        except NotImplementedError:
            raise
        except Exception as err:
            raise JAXNodeError(f"No JAX function for {node_label(node)}: {err}", node) from err
        steps.append((node, fn, tuple(node.inputs), tuple(node.outputs)))
    constants = {
        v: _constant_value(v)
        for node in nodes
        for v in node.inputs
        if isinstance(v, Constant) and v not in set(ins)
    }
    for v in outs:
        if isinstance(v, Constant):
            constants[v] = _constant_value(v)
    n_in = len(ins)

    def graph_fn(*values: Any) -> tuple:
        if len(values) != n_in:
            raise TypeError(f"this graph takes {n_in} input(s), got {len(values)}")
        env: dict[Variable, Any] = dict(constants)
        env.update(zip(ins, values))
        for node, fn, node_ins, node_outs in steps:
            try:
                result = fn(*[env[v] for v in node_ins])
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
                env[node_outs[0]] = result
            else:
                if not isinstance(result, tuple | list) or len(result) != len(node_outs):
                    raise JAXNodeError(
                        f"The JAX function of {node_label(node)} returned {type(result).__name__}, "
                        f"expected a tuple of {len(node_outs)} values",
                        node,
                    )
                env.update(zip(node_outs, result))
        return tuple(env[v] for v in outs)

    graph_fn.__name__ = "arignote_graph"
    return graph_fn


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
    return JAXNodeError(f"JAX could not compute {node_label(node)}: {kind}: {err}{hint}", node)


@jax_funcify.register(FunctionGraph)
def _funcify_function_graph(fgraph: FunctionGraph, node: Apply | None = None, **kwargs: Any) -> Callable:
    return funcify_fgraph(fgraph, **kwargs)
