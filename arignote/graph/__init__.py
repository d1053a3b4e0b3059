"""The graph core: Variables, Applies, Ops, Types, FunctionGraphs and how to walk them."""

from arignote.graph.basic import Apply, Constant, Variable, clone, clone_get_equiv, equal_computations
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.graph.replace import clone_replace, graph_replace, vectorize_graph
from arignote.graph.rewriting.basic import graph_rewriter, node_rewriter
from arignote.graph.rewriting.db import RewriteDatabaseQuery
from arignote.graph.rewriting.utils import rewrite_graph
from arignote.graph.traversal import (
    ancestors,
    applys_between,
    explicit_graph_inputs,
    graph_inputs,
    io_toposort,
    toposort,
)
from arignote.graph.type import Type

__all__ = [
    "Apply",
    "Constant",
    "FunctionGraph",
    "Op",
    "RewriteDatabaseQuery",
    "Type",
    "Variable",
    "ancestors",
    "applys_between",
    "clone",
    "clone_get_equiv",
    "clone_replace",
    "equal_computations",
    "explicit_graph_inputs",
    "graph_inputs",
    "graph_replace",
    "graph_rewriter",
    "io_toposort",
    "node_rewriter",
    "rewrite_graph",
    "toposort",
    "vectorize_graph",
]
