"""What the printers share: recognising compiled functions and Ops that hold a graph."""

from __future__ import annotations

from typing import Any

from arignote.graph.fg import FunctionGraph
from arignote.graph.op import HasInnerGraph


def _is_function(obj: Any) -> bool:
    """A compiled function: anything with ``maker.fgraph`` (duck-typed)."""
    return isinstance(getattr(getattr(obj, "maker", None), "fgraph", None), FunctionGraph)


def _inner_graph_op(op: Any) -> Any:
    """The Op holding an inner graph for a node of ``op``: itself, or the scalar/core op
    wrapped by an Elemwise/Blockwise; ``None`` if there is none."""
    if isinstance(op, HasInnerGraph):
        return op
    for attr in ("scalar_op", "core_op"):
        inner = getattr(op, attr, None)
        if isinstance(inner, HasInnerGraph):
            return inner
    return None
