"""JAX function of :class:`arignote.compile.builders.OpFromGraph`: its inner graph, inlined
into the function of the graph around it (XLA sees one program, and optimises across it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arignote.compile.builders import OpFromGraph
from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.graph import funcify_fgraph

__all__: list[str] = []


@jax_funcify.register(OpFromGraph)
def _funcify_op_from_graph(op: OpFromGraph, node: Apply | None = None, **kwargs: Any) -> Callable:
    body = funcify_fgraph(op.fgraph, **kwargs)
    single = len(op.fgraph.outputs) == 1

    def op_from_graph(*args: Any) -> Any:
        outs = body(*args)
        return outs[0] if single else outs

    return op_from_graph
