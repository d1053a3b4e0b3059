"""Guarding in-place operations: which nodes overwrite which values, and when that is safe.

An Op declares ``destroy_map = {output: [input]}`` when it writes that output into the
input's memory, and ``view_map = {output: [input]}`` when the output is a view of the input
(shares its memory). Destroying a Variable destroys its whole view tree: the Variable it
is a view of (its root) and every other view of that root. :class:`DestroyHandler`
keeps these facts for a FunctionGraph and enforces, on every validated change:

* a root is destroyed by one node at most;
* no protected value is destroyed: a graph input (unless listed as mutable), a Constant,
  or anything a graph output shows (the caller gets it);
* the destroyer runs after every other reader of the root and its views (its
  ``orderings``, which the toposort and the VM follow), and that is possible: a reader that
  depends on the destroyer's own output would form a cycle.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> from arignote.graph.fg import FunctionGraph
>>> from arignote.tensor.elemwise import Elemwise
>>> import arignote.scalar as ps
>>> x = pt.dvector("x")
>>> y = pt.exp(x)
>>> z = Elemwise(ps.add, inplace_pattern={0: 0})(y, y)  # writes y + y into y
>>> fg = FunctionGraph([x], [z], features=[DestroyHandler()])
>>> fg.validate()
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.features import Bookkeeper
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.utils import InconsistencyError

__all__ = ["DestroyHandler", "view_root"]


def _pairs(node: Apply, attr: str) -> list[tuple[int, int]]:
    """``(output, input)`` positions of the node's ``view_map``/``destroy_map`` (a graph
    output's Output node, which has no outputs, declares none)."""
    mapping = getattr(node.op, attr, None) or {}
    n_out = len(node.outputs)
    return [(o, i) for o, ins in mapping.items() if o < n_out for i in ins]


def view_root(v: Variable) -> Variable:
    """The Variable whose memory ``v`` shares, following ``view_map`` up (``v`` itself if
    it is not a view)."""
    while v.owner is not None:
        src = [i for o, i in _pairs(v.owner, "view_map") if v.owner.outputs[o] is v]
        if not src:
            break
        v = v.owner.inputs[src[0]]
    return v


class DestroyHandler(Bookkeeper):
    """Keeps the destroyers and views of a FunctionGraph, orders each destroyer after the
    other readers of what it destroys, and rejects an unsafe change (``validate``).

    The books are kept incrementally (a node's import, prune or input change updates only
    what it touches) and ``validate`` re-checks only the nodes changed since the last one,
    so a pass making thousands of nodes in place stays linear.

    ``mutable``: graph inputs that may be destroyed (``In(mutable=True)``); an input the
    function updates (``fgraph.update_mapping``) is state the function owns, mutable too.
    """

    pickle_rm_attr = ["destroy_handler"]

    def __init__(self, mutable: Iterable[Variable] = ()) -> None:
        self.mutable = set(mutable)
        self.destroyers: dict[Apply, list[int]] = {}  # node -> the input positions it overwrites
        self.view_children: dict[Variable, set[Variable]] = {}  # var -> the views made of it
        self.root_destroyers: dict[Variable, set[Apply]] = {}
        self.dirty: set[Apply] = set()

    def on_attach(self, fgraph: FunctionGraph) -> None:
        fgraph.destroy_handler = self  # type: ignore[attr-defined]
        self.destroyers.clear()
        self.view_children.clear()
        self.root_destroyers.clear()
        self.dirty.clear()
        super().on_attach(fgraph)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        if getattr(fgraph, "destroy_handler", None) is self:
            del fgraph.destroy_handler  # type: ignore[attr-defined]
        self.destroyers.clear()
        self.view_children.clear()
        self.root_destroyers.clear()

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        for o, i in _pairs(node, "view_map"):
            self.view_children.setdefault(node.inputs[i], set()).add(node.outputs[o])
        positions = sorted({i for _, i in _pairs(node, "destroy_map")})
        if positions:
            self.destroyers[node] = positions
            for i in positions:
                self.root_destroyers.setdefault(view_root(node.inputs[i]), set()).add(node)
        self.dirty.add(node)

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        for o, i in _pairs(node, "view_map"):
            children = self.view_children.get(node.inputs[i])
            if children is not None:
                children.discard(node.outputs[o])
        if self.destroyers.pop(node, None) is not None:
            for nodes in self.root_destroyers.values():
                nodes.discard(node)
        self.dirty.discard(node)

    def on_change_input(
        self, fgraph: FunctionGraph, node: Any, i: int, r: Variable, new_r: Variable, reason: Any = None
    ) -> None:
        if isinstance(node, Apply):
            for o, k in _pairs(node, "view_map"):
                if k == i:  # the view now shows another variable: move it in the view trees
                    self.view_children.get(r, set()).discard(node.outputs[o])
                    self.view_children.setdefault(new_r, set()).add(node.outputs[o])
                    self._rebuild_roots()  # rare: the roots below it may all have changed
            if i in self.destroyers.get(node, ()):  # it now overwrites another value
                old = self.root_destroyers.get(view_root(r))
                if old is not None:
                    old.discard(node)
                self.root_destroyers.setdefault(view_root(new_r), set()).add(node)
            self.dirty.add(node)

    def _rebuild_roots(self) -> None:
        self.root_destroyers = {}
        for node, positions in self.destroyers.items():
            for i in positions:
                self.root_destroyers.setdefault(view_root(node.inputs[i]), set()).add(node)

    # -- the facts ----------------------------------------------------------------------------

    def view_tree(self, root: Variable) -> list[Variable]:
        """``root`` and every Variable that is a view of it (at any depth)."""
        tree, todo = [], [root]
        while todo:
            v = todo.pop()
            tree.append(v)
            todo.extend(self.view_children.get(v, ()))
        return tree

    def orderings(self, fgraph: FunctionGraph, ordered: bool = True) -> dict:
        """Each destroyer after every other client of what it destroys (and its views)."""
        order: dict[Apply, list[Apply]] = {}
        for root, destroyers in self.root_destroyers.items():
            if not destroyers:
                continue
            readers = [
                c
                for v in self.view_tree(root)
                for c, _ in fgraph.clients.get(v, ())
                if not isinstance(c.op, Output)
            ]
            for destroyer in destroyers:
                before = order.setdefault(destroyer, [])
                before.extend(c for c in readers if c is not destroyer and c not in before)
        return order

    # -- the rules ---------------------------------------------------------------------------

    def _protected(self, fgraph: FunctionGraph, root: Variable) -> bool:
        if isinstance(root, Constant):
            return True
        if root not in fgraph.inputs or root in self.mutable:
            return False
        updated = set((getattr(fgraph, "update_mapping", None) or {}).values())
        return fgraph.inputs.index(root) not in updated

    def _check(self, fgraph: FunctionGraph, destroyer: Apply, root: Variable) -> str | None:
        """Why ``destroyer`` may not overwrite ``root`` (None: it may)."""
        if self._protected(fgraph, root):
            return (
                f"{destroyer} would overwrite the protected {root} (a constant or a graph input not mutable)"
            )
        others = [d for d in self.root_destroyers.get(root, ()) if d is not destroyer]
        if others:
            return f"{root} would be destroyed by more than one node: {[destroyer, *others]}"
        for v in self.view_tree(root):
            for client, _ in fgraph.clients.get(v, ()):
                if isinstance(client.op, Output):
                    return f"{destroyer} would overwrite {v}, which the function returns"
                if client is not destroyer and _depends_on(client, destroyer):
                    return f"{client} reads {v} but needs {destroyer}, which overwrites it, to run first"
        return None

    def can_destroy(self, fgraph: FunctionGraph, node: Apply, i: int) -> bool:
        """Whether ``node`` (in the graph) may overwrite its input ``i``: the rules of
        :meth:`validate`, for this one prospective destroyer (a rule asks before it makes
        an Op in place, so that no replacement is refused)."""
        return self._check(fgraph, node, view_root(node.inputs[i])) is None

    def validate(self, fgraph: FunctionGraph) -> bool:
        """Check the destroyers the changes since the last call concern (raises
        ``InconsistencyError``)."""
        dirty, self.dirty = self.dirty, set()
        if not self.root_destroyers:
            return True
        to_check: set[tuple[Apply, Variable]] = set()
        for node in dirty:
            if node not in fgraph.apply_nodes:
                continue
            for i in self.destroyers.get(node, ()):
                to_check.add((node, view_root(node.inputs[i])))
            for inp in node.inputs:  # a new reader of something destroyed
                root = view_root(inp)
                for d in self.root_destroyers.get(root, ()):
                    to_check.add((d, root))
        for destroyer, root in to_check:
            why = self._check(fgraph, destroyer, root)
            if why is not None:
                self.dirty |= dirty  # still to check after the change is undone
                raise InconsistencyError(why)
        return True


def _depends_on(node: Apply, other: Apply) -> bool:
    """Whether ``node`` needs an output of ``other`` (walks ``node``'s ancestors, stopping
    at graph inputs)."""
    seen: set = set()
    todo = list(node.inputs)
    while todo:
        v = todo.pop()
        owner = v.owner
        if owner is None or owner in seen:
            continue
        if owner is other:
            return True
        seen.add(owner)
        todo.extend(owner.inputs)
    return False
