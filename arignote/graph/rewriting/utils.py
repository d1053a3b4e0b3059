"""Rewriting a graph outside ``function()``, and comparing graphs.

:func:`rewrite_graph` runs stages of the compilation pipeline (``optdb``, selected by
tags: by default canonicalize) on a Variable, a list of them or a FunctionGraph, and
returns the rewritten graph; :func:`is_same_graph` says whether two graphs compute the
same thing node by node.

>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> y = rewrite_graph(pt.exp(x) + pt.exp(x), include=("merge",))
>>> y.owner.inputs[0] is y.owner.inputs[1]
True
>>> is_same_graph(pt.exp(x) + 1, pt.exp(x) + 1)
True
>>> z = pt.dvector("z")
>>> is_same_graph(pt.exp(x) + 1, pt.exp(z) + 1), is_same_graph(pt.exp(x) + 1, pt.exp(z) + 1, givens={x: z})
(False, True)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from arignote.graph.basic import Apply, Variable, equal_computations
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.replace import clone_replace
from arignote.graph.rewriting.basic import in2out
from arignote.graph.rewriting.db import RewriteDatabaseQuery, default_database
from arignote.graph.rewriting.merge import merge_graph
from arignote.graph.rewriting.registry import rewriter_kind

__all__ = ["get_clients_at_depth", "is_same_graph", "is_same_graph_with_merge", "rewrite_graph"]


def rewrite_graph(
    graph: Variable | Sequence[Variable] | FunctionGraph,
    include: Sequence[str] = ("canonicalize",),
    custom_rewrite: Any = None,
    clone: bool = False,
    **kwargs: Any,
) -> Any:
    """Rewrite ``graph`` with the pipeline stages (and, inside them, the rules) whose tags
    ``include`` selects (``exclude=``/``require=`` as for a ``RewriteDatabaseQuery``),
    then with ``custom_rewrite`` (a graph or node rewriter) if given.

    Returns the rewritten Variable (or list, or the FunctionGraph itself, as given). With
    ``clone=False`` (PyTensor's default) the nodes of ``graph`` may be changed in place.
    """
    optdb = default_database.get("optdb")
    if optdb is None:  # pragma: no cover - ``import arignote`` sets it
        raise RuntimeError("rewrite_graph needs the pipeline: import arignote first")
    if isinstance(graph, FunctionGraph):
        fgraph = graph
    else:
        outputs = [graph] if isinstance(graph, Variable) else list(graph)
        fgraph = FunctionGraph(outputs=outputs, clone=clone)
    optdb.query(RewriteDatabaseQuery(include=include, **kwargs)).rewrite(fgraph)
    if custom_rewrite is not None:
        rewriter = in2out(custom_rewrite) if rewriter_kind(custom_rewrite) == "node" else custom_rewrite
        rewriter.rewrite(fgraph)
    if isinstance(graph, FunctionGraph):
        return fgraph
    if isinstance(graph, Variable):
        return fgraph.outputs[0]
    return list(fgraph.outputs)


def is_same_graph(var1: Variable, var2: Variable, givens: Mapping[Variable, Variable] | None = None) -> bool:
    """Whether ``var1`` and ``var2`` compute the same thing: equal Ops on equal inputs,
    node by node, the same graph inputs (or equal constants). ``givens`` maps Variables of
    ``var1``'s graph to the Variables of ``var2``'s that count as the same."""
    if not givens:
        return equal_computations([var1], [var2])
    givens = dict(givens)
    if equal_computations([var1], [var2], in_xs=list(givens), in_ys=list(givens.values())):
        return True
    # a given may stand for an intermediate Variable: compare var1 with it substituted
    replaced = clone_replace(var1, givens)
    return equal_computations([replaced], [var2])  # type: ignore[list-item]


def is_same_graph_with_merge(
    var1: Variable, var2: Variable, givens: Mapping[Variable, Variable] | None = None
) -> bool:
    """Whether ``var1`` and ``var2`` become one Variable when their graphs are merged
    (equal constants and equal nodes on equal inputs are one), after ``givens`` replaced
    Variables of ``var1``'s graph. The graphs are copied: neither is changed."""
    for v in (var1, var2):
        if not isinstance(v, Variable):
            raise TypeError(f"is_same_graph_with_merge compares Variables, got {type(v).__name__} {v!r}")
    if givens:
        var1 = clone_replace(var1, dict(givens))  # type: ignore[assignment]
    fgraph = FunctionGraph(outputs=[var1, var2], clone=True)
    merge_graph(fgraph)
    return fgraph.outputs[0] is fgraph.outputs[1]


def get_clients_at_depth(fgraph: FunctionGraph, node: Apply, depth: int) -> Iterator[Apply]:
    """The nodes ``depth`` steps downstream of ``node`` in ``fgraph`` (``depth=0``: the
    node itself, once per output; 1: the nodes that use its outputs; ...). The ``Output``
    nodes that mark the graph's outputs are not counted."""
    if depth < 0:
        raise ValueError(f"get_clients_at_depth: depth must be >= 0, got {depth}")
    frontier = [(node, depth)]
    while frontier:
        current, left = frontier.pop()
        if left == 0:
            yield from (current for _ in current.outputs)
            continue
        followers = [
            (client, left - 1)
            for out in current.outputs
            for client, _ in fgraph.clients[out]
            if not isinstance(client.op, Output)
        ]
        frontier.extend(reversed(followers))
