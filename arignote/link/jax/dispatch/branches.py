"""Where each node of a graph runs when ``IfElse`` nodes become lazy ``lax.cond`` calls.

A node's *location* is the innermost branch that every use of its outputs lies in: ``()``
for the graph's top level, ``((ifelse, 0),)`` for the then branch of an ``IfElse`` node at
the top level, ``((outer, 1), (inner, 0))`` for the then branch of an ``IfElse`` that is
itself needed only by the else branch of ``outer``, and so on. A value used as a branch
value of ``ifelse`` (input ``1..n`` for then, ``n+1..2n`` for else) is used *in* that
branch; a value used as its condition, by an ordinary node or as an output of the graph
is used where that node (or the top level) is. A node used in several places runs in
their longest common location, so a value both branches (or the rest of the graph) need is
computed once, outside.
"""

from __future__ import annotations

from collections.abc import Sequence

from arignote.graph.basic import Apply, Variable
from arignote.ifelse import IfElse

__all__ = ["Location", "branch_locations"]

#: a chain of (IfElse node, branch: 0 then, 1 else), outermost first
Location = tuple[tuple[Apply, int], ...]


def _common(a: Location, b: Location) -> Location:
    k = 0
    for (na, ba), (nb, bb) in zip(a, b):
        if na is not nb or ba != bb:
            break
        k += 1
    return a if k == len(a) else a[:k]


def branch_locations(nodes: Sequence[Apply], outputs: Sequence[Variable]) -> dict[Apply, Location]:
    """The location of every node of ``nodes`` (topologically sorted) computing
    ``outputs``; empty when the graph has no ``IfElse`` (everything at the top level)."""
    if not any(isinstance(node.op, IfElse) for node in nodes):
        return {}
    outs = set(outputs)
    clients: dict[Variable, list[tuple[Apply, int]]] = {}
    for node in nodes:
        for i, v in enumerate(node.inputs):
            clients.setdefault(v, []).append((node, i))
    where: dict[Apply, Location] = {}
    for node in reversed(nodes):
        loc: Location | None = None
        for out in node.outputs:
            if out in outs:
                loc = ()
                break
            for client, i in clients.get(out, ()):
                used = where[client]
                if i > 0 and isinstance(client.op, IfElse):
                    used = (*used, (client, 0 if i <= client.op.n_outs else 1))
                loc = used if loc is None else _common(loc, used)
                if not loc:
                    break
            if loc == ():
                break
        where[node] = loc or ()
    return where
