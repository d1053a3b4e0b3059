"""Merging (common subexpression elimination): the pass :func:`merge_graph`, the
incremental :class:`MergeFeature` and PyTensor's :class:`MergeOptimizer`.

>>> import arignote.tensor as pt
>>> from arignote.graph.fg import FunctionGraph
>>> x = pt.dvector("x")
>>> fg = FunctionGraph([x], [pt.exp(x) + pt.exp(x)])
>>> MergeOptimizer().rewrite(fg)
1
>>> len(fg.apply_nodes)
2
"""

from __future__ import annotations

from collections import deque
from typing import Any

from arignote.configdefaults import config
from arignote.graph.basic import Apply, AtomicVariable, OpInterner, Variable, merge_key
from arignote.graph.features import AlreadyThere, Feature
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.rewriting.engine import GraphRewriter
from arignote.graph.utils import InconsistencyError

__all__ = ["MergeFeature", "MergeOptimizer", "merge_graph"]


# --- merging (CSE) ------------------------------------------------------------------------


def _node_key(node: Apply) -> Any:
    """Key of a node for merging: ``(op, inputs)`` (None if the Op is not hashable)."""
    try:
        key = (node.op, tuple(node.inputs))
        hash(key)
    except TypeError:
        return None
    return key


def _merge_into(fgraph: FunctionGraph, node: Apply, other: Apply) -> bool:
    """Make the clients of ``node`` use ``other``'s outputs (same Op, same inputs)."""
    if any(o.type != n.type for o, n in zip(node.outputs, other.outputs)):
        return False
    pairs = list(zip(node.outputs, other.outputs))
    if getattr(fgraph, "destroy_handler", None) is not None:
        # after the in-place stage two equal nodes may each have a destroyer: merging them
        # would give one value two destroyers, which the DestroyHandler refuses
        try:
            fgraph.replace_all_validate(pairs, reason="merge")  # type: ignore[attr-defined]
        except InconsistencyError:
            return False
        return True
    fgraph.replace_all(pairs, reason="merge", verbose=config.optimizer_verbose)
    return True


def merge_graph(fgraph: FunctionGraph) -> int:
    """Merge equal constants and nodes computing the same thing (same Op, same inputs).

    One pass in topological order keeps a table keyed by ``(op, inputs)``; merging
    makes the inputs of later nodes identical, so the table finds their duplicates
    too. Returns the number of merges.
    """
    merges = 0
    const_table: dict = {}
    for var in list(fgraph.variables):
        if isinstance(var, AtomicVariable) and var in fgraph.variables:
            key = merge_key(var)
            if key is None:
                continue
            first = const_table.setdefault(key, var)
            if first is not var:
                fgraph.replace(var, first, reason="merge", verbose=config.optimizer_verbose)
                merges += 1
    table: dict = {}
    interner = OpInterner()
    apply_nodes = fgraph.apply_nodes
    for node in fgraph.toposort():
        if node not in apply_nodes:
            continue
        key = interner.key(node.op, node.inputs)
        if key is None:
            continue
        other = table.get(key)
        if other is None or other not in apply_nodes:
            table[key] = node
            continue
        if _merge_into(fgraph, node, other):
            merges += 1
    return merges


class MergeFeature(Feature):
    """Keeps the graph's ``(op, inputs)`` table (and its constants') up to date as the
    graph changes, and the duplicates it finds, for :class:`MergeOptimizer` to merge:
    the cost of a merge after a few changes is that of the changes, not of the graph.
    Attached, ``fgraph.merge_feature`` is this feature."""

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if hasattr(fgraph, "merge_feature"):
            raise AlreadyThere("a MergeFeature is already attached")
        fgraph.merge_feature = self  # type: ignore[attr-defined]
        self.table: dict = {}
        self.key_of: dict = {}
        self.const_table: dict = {}
        self.pending: deque = deque()
        for var in list(fgraph.variables):
            if isinstance(var, AtomicVariable):
                self._add_const(var)
        for node in fgraph.toposort():
            self._add_node(node)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        del fgraph.merge_feature  # type: ignore[attr-defined]
        self.table, self.key_of, self.const_table, self.pending = {}, {}, {}, deque()

    def clone(self) -> MergeFeature:
        return MergeFeature()

    def _add_const(self, var: Variable) -> None:
        key = merge_key(var)
        if key is None:
            return
        first = self.const_table.setdefault(key, var)
        if first is not var:
            self.pending.append((var, first))

    def _add_node(self, node: Apply) -> None:
        key = _node_key(node)
        if key is None:
            return
        self.key_of[node] = key
        other = self.table.get(key)
        if other is None:
            self.table[key] = node
        elif other is not node:
            self.pending.append((node, other))

    def _drop_node(self, node: Apply) -> None:
        key = self.key_of.pop(node, None)
        if key is not None and self.table.get(key) is node:
            del self.table[key]

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        for inp in node.inputs:
            if isinstance(inp, AtomicVariable):
                self._add_const(inp)
        self._add_node(node)

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        self._drop_node(node)

    def on_change_input(
        self, fgraph: FunctionGraph, node: Apply, i: int, var: Variable, new_var: Variable, reason: Any = None
    ) -> None:
        if isinstance(node.op, Output):
            return
        if isinstance(new_var, AtomicVariable):
            self._add_const(new_var)
        self._drop_node(node)
        self._add_node(node)

    def merge(self, fgraph: FunctionGraph) -> int:
        """Merge the duplicates found since the last call; returns how many."""
        merges = 0
        while self.pending:
            dup, first = self.pending.popleft()
            if isinstance(dup, Variable):
                if dup in fgraph.variables and first in fgraph.variables:
                    fgraph.replace(dup, first, reason="merge", verbose=config.optimizer_verbose)
                    merges += 1
                continue
            if dup not in fgraph.apply_nodes:
                continue
            if first not in fgraph.apply_nodes or _node_key(dup) != _node_key(first):
                self._drop_node(dup)
                self._add_node(dup)  # it may now be the first of its key
                continue
            if _merge_into(fgraph, dup, first):
                merges += 1
        return merges


class MergeOptimizer(GraphRewriter):
    """The merge pass (common subexpressions and equal constants) as a GraphRewriter.

    ``rewrite(fgraph)`` attaches a :class:`MergeFeature` and merges what it found, so
    later ``apply`` calls only look at what changed since; ``apply`` on a graph without
    the feature is one pass of :func:`merge_graph`.
    """

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        if not hasattr(fgraph, "merge_feature"):
            fgraph.attach_feature(MergeFeature())

    def apply(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> int:
        """Merge; returns the number of merges."""
        feature = getattr(fgraph, "merge_feature", None)
        if feature is None:
            return merge_graph(fgraph)
        return feature.merge(fgraph)
