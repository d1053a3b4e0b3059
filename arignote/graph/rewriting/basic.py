"""The rewrite engine: node rewriters applied through a worklist, and merging (CSE).

A node rewriter is a small function ``rewrite(fgraph, node)`` that returns ``None``/
``False`` (no change), a list of replacements for ``node.outputs``, or a dict
``{old_variable: new_variable}``. It says which Ops it concerns (``tracks``) so the
engine only offers it matching nodes (the rules of a pass are indexed by Op type:
:class:`~arignote.graph.rewriting.db.RulesByOp`), and every application is attributable:
with ``config.trace_rewrites`` the engine prints which rule fired and where it is defined.

>>> import arignote.tensor as pt
>>> from arignote.graph.fg import FunctionGraph
>>> x = pt.dvector("x")
>>> fg = FunctionGraph([x], [pt.exp(x) + pt.exp(x)])
>>> merge_graph(fg)
1
>>> len(fg.apply_nodes)
2
"""

from __future__ import annotations

import inspect
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from arignote.configdefaults import config
from arignote.graph.basic import Apply, AtomicVariable, Constant, Variable
from arignote.graph.features import Feature
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.rewriting.db import RulesByOp, register_rewrite

__all__ = [
    "NodeRewriter",
    "RewriteError",
    "apply_node_rewriters",
    "constant_folding",
    "merge_graph",
    "node_rewriter",
]


class RewriteError(Exception):
    """A rewrite rule raised or returned something invalid; names the rule and the node."""


class NodeRewriter:
    """A named rule over nodes of the tracked Op types (or instances); ``None``: all."""

    def __init__(self, fn: Callable, tracks: Sequence[Any] | None = None, name: str | None = None):
        self.fn = fn
        self.tracks = tuple(tracks) if tracks else None
        self.name = name or fn.__name__
        try:
            self.where = f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
        except (OSError, TypeError):
            self.where = "<unknown>"

    def applies_to(self, node: Apply) -> bool:
        """Whether ``node``'s Op is one this rule tracks (the engine asks a :class:`RulesByOp`)."""
        if self.tracks is None:
            return True
        op = node.op
        return any((isinstance(t, type) and isinstance(op, t)) or op == t for t in self.tracks)

    def transform(self, fgraph: FunctionGraph, node: Apply) -> Any:
        return self.fn(fgraph, node)

    def __repr__(self) -> str:
        return f"NodeRewriter({self.name} at {self.where})"


def node_rewriter(
    tracks: Sequence[Any] | None, name: str | None = None
) -> Callable[[Callable], NodeRewriter]:
    """Decorator: ``@node_rewriter([Elemwise])`` turns ``fn(fgraph, node)`` into a rule."""

    def wrap(fn: Callable) -> NodeRewriter:
        return NodeRewriter(fn, tracks, name)

    return wrap


def _as_replacements(rule: NodeRewriter, node: Apply, result: Any) -> list[tuple[Variable, Variable]]:
    if isinstance(result, dict):
        pairs = list(result.items())
    elif isinstance(result, (list, tuple)):
        if len(result) != len(node.outputs):
            raise RewriteError(
                f"{rule} returned {len(result)} replacements for {node}, which has {len(node.outputs)} outputs"
            )
        pairs = [(o, n) for o, n in zip(node.outputs, result) if n is not None]
    else:
        raise RewriteError(f"{rule} returned {result!r} for {node}; expected a list, a dict, None or False")
    return pairs


def apply_node_rewriters(
    fgraph: FunctionGraph, rewriters: Sequence[NodeRewriter] | RulesByOp, max_passes: int = 50
) -> int:
    """Apply ``rewriters`` until none fires; returns how many replacements were made.

    A worklist of nodes: only nodes a change created (and the clients of replaced
    variables) are revisited, never the whole graph per change. Each node is offered
    only the rules tracking its Op's type (``rewriters`` indexed once per call, unless
    given as a :class:`RulesByOp`), in the order of ``rewriters``.
    """
    rules = rewriters if isinstance(rewriters, RulesByOp) else RulesByOp(rewriters)
    if not len(rules):
        return 0
    count = 0
    worklist = deque(fgraph.toposort())
    queued = set(worklist)
    budget = max_passes * max(1, len(worklist))
    imported = _ImportedNodes()
    fgraph.attach_feature(imported)
    try:
        while worklist:
            count += _rewrite_one(fgraph, rules, worklist, queued, imported)
            if count > budget:
                raise RewriteError(f"rewriting did not settle after {max_passes} passes")
    finally:
        fgraph.remove_feature(imported)
    return count


class _ImportedNodes(Feature):
    """Collects the nodes a replacement brings into the graph, so that every one of them,
    not only the replacement's root, is offered to the rules."""

    def __init__(self) -> None:
        self.nodes: list[Apply] = []

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        self.nodes.append(node)


def _rewrite_one(
    fgraph: FunctionGraph,
    rules: RulesByOp,
    worklist: deque,
    queued: set,
    imported: _ImportedNodes,
) -> int:
    """Offer the next node of the worklist to the rules; 1 if one replaced it."""
    node = worklist.popleft()
    queued.discard(node)
    if node not in fgraph.apply_nodes:
        return 0
    op = node.op
    for rule, instances in rules.for_op_type(type(op)):
        if instances is not None and not any(op == t for t in instances):
            continue
        result = _transform(rule, fgraph, node)
        if not result:
            continue
        pairs = _as_replacements(rule, node, result)
        if config.trace_rewrites:
            print(f"rewrite {rule.name} ({rule.where}): {node} -> {[str(n) for _, n in pairs]}")
        imported.nodes.clear()
        fgraph.replace_all_validate(pairs, reason=rule.name)  # type: ignore[attr-defined]
        # every node the replacement brought in, its outputs' clients too, gets the rules
        fresh = [n for n in imported.nodes if n in fgraph.apply_nodes]
        for _, new in pairs:
            fresh.extend(_new_nodes(fgraph, new))
        for new_node in fresh:
            if new_node not in queued:
                worklist.append(new_node)
                queued.add(new_node)
        return 1
    return 0


def _transform(rule: NodeRewriter, fgraph: FunctionGraph, node: Apply) -> Any:
    """The rule's result, or None where it raised and ``config.on_opt_error`` says to go on."""
    try:
        return rule.transform(fgraph, node)
    except Exception as err:
        if config.on_opt_error == "raise":
            raise RewriteError(f"{rule} raised on {node}: {err!r}") from err
        if config.on_opt_error == "warn":
            warnings.warn(
                f"rewrite {rule.name} ({rule.where}) raised on {node} and was skipped: {err!r}",
                stacklevel=3,
            )
        return None  # a failed rewrite leaves the graph as it was


def _new_nodes(fgraph: FunctionGraph, var: Variable) -> list[Apply]:
    nodes = []
    if var.owner is not None and var.owner in fgraph.apply_nodes:
        nodes.append(var.owner)
    for client, _ in fgraph.clients.get(var, ()):
        if not isinstance(client.op, Output):
            nodes.append(client)
    return nodes


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
            try:
                key = (type(var), var.merge_signature())
                hash(key)
            except (TypeError, NotImplementedError):
                continue
            first = const_table.setdefault(key, var)
            if first is not var:
                fgraph.replace(var, first, reason="merge")
                merges += 1
    table: dict = {}
    for node in fgraph.toposort():
        if node not in fgraph.apply_nodes:
            continue
        try:
            key = (node.op, tuple(node.inputs))
            hash(key)
        except TypeError:
            continue
        other = table.get(key)
        if other is None or other not in fgraph.apply_nodes:
            table[key] = node
            continue
        if any(o.type != n.type for o, n in zip(node.outputs, other.outputs)):
            continue
        fgraph.replace_all(list(zip(node.outputs, other.outputs)), reason="merge")
        merges += 1
    return merges


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter(None)
def constant_folding(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A node whose inputs are all constants is computed once, at compile time, and
    replaced by constants (unless its Op's ``do_constant_folding`` says no)."""
    if not node.inputs or not all(isinstance(i, Constant) for i in node.inputs):
        return None
    if not node.op.do_constant_folding(fgraph, node):
        return None
    storage = {v: [v.data] for v in node.inputs}
    storage.update({v: [None] for v in node.outputs})
    node.op.make_thunk(node, storage, None, [])()
    return [out.type.make_constant(storage[out][0]) for out in node.outputs]
