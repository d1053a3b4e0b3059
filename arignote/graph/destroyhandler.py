"""Guarding in-place operations: which nodes overwrite which values, and when that is safe.

An Op declares ``destroy_map = {output: [input]}`` when it writes that output into the
input's memory, and ``view_map = {output: [input]}`` when the output is a view of the input
(shares its memory). Destroying a Variable destroys its whole view tree: the Variable it
is a view of (its root) and every other view of that root. :class:`DestroyHandler`
keeps these facts for a FunctionGraph and enforces, on every validated change:

* a root is destroyed by one node at most, through one of its inputs;
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

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.features import AlreadyThere, Bookkeeper, Feature
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.utils import InconsistencyError

__all__ = ["DestroyHandler", "Supervisor", "view_root"]


def _pairs(node: Apply, attr: str) -> list[tuple[int, int]]:
    """``(output, input)`` positions of the node's ``view_map``/``destroy_map`` (a graph
    output's Output node, which has no outputs, declares none)."""
    mapping = getattr(node.op, attr, None)
    if not mapping:
        return []
    n_out = len(node.outputs)
    return [(o, i) for o, ins in mapping.items() if o < n_out for i in ins]


def view_root(v: Variable) -> Variable:
    """The Variable whose memory ``v`` shares, following ``view_map`` up (``v`` itself if
    it is not a view)."""
    while (owner := v.owner) is not None:
        # (asked hundreds of thousands of times while a large graph is made in place:
        # most Ops declare no view_map, and that answer must cost one attribute read)
        view_map = getattr(owner.op, "view_map", None)
        if not view_map:
            break
        outputs = owner.outputs
        src = next(
            (ins[0] for o, ins in view_map.items() if ins and o < len(outputs) and outputs[o] is v), None
        )
        if src is None:
            break
        v = owner.inputs[src]
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

    pickle_rm_attr = ["destroy_handler", "destroyers", "has_destroyers"]

    def __init__(self, mutable: Iterable[Variable] = ()) -> None:
        self.mutable = set(mutable)
        self.destroyers: dict[Apply, list[int]] = {}  # node -> the input positions it overwrites
        self.view_children: dict[Variable, set[Variable]] = {}  # var -> the views made of it
        self.root_destroyers: dict[Variable, set[Apply]] = {}
        self.dirty: set[Apply] = set()  # nodes imported since the last validation
        # nodes whose inputs at these positions changed since: only those are re-checked (a
        # node reading 10,000 values, one replaced at a time, would be quadratic otherwise)
        self.dirty_inputs: dict[Apply, set[int]] = {}

    def on_attach(self, fgraph: FunctionGraph) -> None:
        fgraph.destroy_handler = self  # type: ignore[attr-defined]
        # (PyTensor's names for the two questions, asked of the graph)
        fgraph.destroyers = self.destroyers_of  # type: ignore[attr-defined]
        fgraph.has_destroyers = self.has_destroyers  # type: ignore[attr-defined]
        self.destroyers.clear()
        self.view_children.clear()
        self.root_destroyers.clear()
        self.dirty.clear()
        self.dirty_inputs.clear()
        super().on_attach(fgraph)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        if getattr(fgraph, "destroy_handler", None) is self:
            del fgraph.destroy_handler  # type: ignore[attr-defined]
            del fgraph.destroyers  # type: ignore[attr-defined]
            del fgraph.has_destroyers  # type: ignore[attr-defined]
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
        positions = self.destroyers.pop(node, None)
        if positions is not None:
            for i in positions:
                nodes = self.root_destroyers.get(view_root(node.inputs[i]))
                if nodes is None or node not in nodes:  # books moved on: look everywhere
                    for nodes in self.root_destroyers.values():
                        nodes.discard(node)
                    break
                nodes.discard(node)
        self.dirty.discard(node)
        self.dirty_inputs.pop(node, None)

    def on_change_input(
        self, fgraph: FunctionGraph, node: Any, i: int, r: Variable, new_r: Variable, reason: Any = None
    ) -> None:
        if isinstance(node, Apply):
            for o, k in _pairs(node, "view_map"):
                if k == i:  # the view now shows another variable: move it in the view trees
                    self.view_children.get(r, set()).discard(node.outputs[o])
                    self.view_children.setdefault(new_r, set()).add(node.outputs[o])
                    self._rebuild_roots()  # rare: the roots below it may all have changed
            positions = self.destroyers.get(node, ())
            if i in positions:  # it now overwrites another value
                old_root = view_root(r)
                old = self.root_destroyers.get(old_root)
                # (unless it still overwrites the old one through another input: a change
                # undone after a refused merge of two of its inputs)
                if old is not None and not any(view_root(node.inputs[j]) is old_root for j in positions):
                    old.discard(node)
                self.root_destroyers.setdefault(view_root(new_r), set()).add(node)
            self.dirty_inputs.setdefault(node, set()).add(i)

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

    def destroyers_of(self, r: Variable) -> list[Apply]:
        """The nodes that overwrite ``r``'s memory (``fgraph.destroyers(r)``)."""
        return list(self.root_destroyers.get(view_root(r), ()))

    def has_destroyers(self, variables: Iterable[Variable]) -> bool:
        """Whether a node overwrites the memory of one of ``variables``
        (``fgraph.has_destroyers(variables)``)."""
        return any(self.root_destroyers.get(view_root(r)) for r in variables)

    def orderings(self, fgraph: FunctionGraph, ordered: bool = True) -> dict:
        """Each destroyer after every other client of what it destroys (and its views)."""
        order: dict[Apply, list[Apply]] = {}
        for root, destroyers in self.root_destroyers.items():
            if not destroyers:
                continue
            readers = list(self._readers(fgraph, root))
            for destroyer in destroyers:
                before = order.setdefault(destroyer, [])
                before.extend(c for c in readers if c is not destroyer and c not in before)
        return order

    # -- the rules ---------------------------------------------------------------------------

    def _protected(self, fgraph: FunctionGraph, root: Variable) -> bool:
        if isinstance(root, Constant):
            return True
        supervisor = getattr(fgraph, "_supervisor", None)
        if supervisor is not None and supervisor.protects(root):
            return True
        if root not in fgraph.inputs or root in self.mutable:
            return False
        updated = set((getattr(fgraph, "update_mapping", None) or {}).values())
        return fgraph.inputs.index(root) not in updated

    def _check(self, fgraph: FunctionGraph, destroyer: Apply, root: Variable) -> Callable[[], str] | None:
        """Why ``destroyer`` may not overwrite ``root``, as a function making the message
        (None: it may). The message names nodes, whose text can be long (an addition of
        thousands of terms): a rule asking :meth:`can_destroy` never pays for it."""
        if self._protected(fgraph, root):
            return lambda: (
                f"{destroyer} would overwrite the protected {root} (a constant, a graph input not "
                "mutable or a Variable a Supervisor protects)"
            )
        others = [d for d in self.root_destroyers.get(root, ()) if d is not destroyer]
        if others:
            return lambda: f"{root} would be destroyed by more than one node: {[destroyer, *others]}"
        # one node writing two of its outputs into the same memory (an input given twice,
        # or two views of one value) would leave one of them holding the other's values
        positions = [i for i in self.destroyers.get(destroyer, ()) if view_root(destroyer.inputs[i]) is root]
        if len(positions) > 1:
            return lambda: (
                f"{destroyer} would overwrite {root} through more than one of its inputs {positions}"
            )
        tree = self.view_tree(root)
        returned = [v for v in tree if any(v is o for o in fgraph.outputs)]
        if returned:
            return lambda: f"{destroyer} would overwrite {returned[0]}, which the function returns"
        late = self._late_reader(fgraph, destroyer, tree)
        if late is not None:
            reader, v = late
            return lambda: f"{reader} reads {v} but needs {destroyer}, which overwrites it, to run first"
        return None

    def _late_reader(
        self, fgraph: FunctionGraph, destroyer: Apply, tree: list[Variable]
    ) -> tuple[Apply, Variable] | None:
        """A node reading a Variable of ``tree`` (``destroyer`` aside) that must run after
        ``destroyer``, with what it reads (None: none must), so that it cannot run before
        the destroyer overwrites it.

        "Must run after" follows the data edges and the destroyers' orderings (a reader of
        what a destroyer overwrites runs before it). Data edges alone are not enough: two
        nodes reading ``a`` and ``b``, one overwriting ``a`` and the other ``b``, each must
        run after the other. Two searches go in turns, forward from the destroyer and
        backward from the readers (taken one at a time as it needs them), and the first to
        run out settles it: the cost is the smaller side, so a value read by thousands of
        nodes, each a candidate to overwrite it, costs each candidate its few descendants,
        not a look at every reader."""
        in_tree = {id(v): v for v in tree}
        by_reader: dict[Apply, Variable] | None = None  # made when a node has many inputs

        def reads(node: Apply) -> Variable | None:
            nonlocal by_reader
            ins = node.inputs
            if len(ins) > 16:  # (a product of 10,000 factors, met once per candidate)
                if by_reader is None:
                    by_reader = {c: v for v in tree for c, _ in fgraph.clients.get(v, ())}
                return by_reader.get(node)
            for v in ins:
                if id(v) in in_tree:
                    return v
            return None

        readers = (c for c in self._readers(fgraph, tree=tree) if c is not destroyer)
        # the forward side takes one successor per turn (a node's successors are made as
        # they are taken: a product of 10,000 factors is not listed whole per candidate)
        fwd, fwd_seen = [self._after(fgraph, destroyer)], {destroyer}
        bwd: list[Apply] = []
        origin: dict[Apply, Apply] = {}  # a node reached going backward -> the reader it leads to
        while fwd:
            succ = next(fwd[-1], None)
            if succ is None:
                fwd.pop()
            elif succ not in fwd_seen:
                v = reads(succ)
                if v is not None:
                    return succ, v
                fwd_seen.add(succ)
                fwd.append(self._after(fgraph, succ))
            if not bwd:  # the next reader, or the backward search has run out: none is late
                reader = next(readers, None)
                if reader is None:
                    return None
                if reader in origin:
                    continue
                origin[reader] = reader
                bwd.append(reader)
            n = bwd.pop()
            for pred in self._before(fgraph, n):
                if pred is destroyer:
                    return origin[n], reads(origin[n])  # type: ignore[return-value]
                if pred not in origin:
                    origin[pred] = origin[n]
                    bwd.append(pred)
        return None

    def _after(self, fgraph: FunctionGraph, node: Apply) -> Iterator[Apply]:
        """The nodes that must run right after ``node``: its outputs' readers, and the
        destroyers of what it reads (made as they are asked for)."""
        for v in node.outputs:
            for c, _ in fgraph.clients.get(v, ()):
                if not isinstance(c.op, Output):
                    yield c
        if self.root_destroyers:
            for v in node.inputs:
                for d in self.root_destroyers.get(view_root(v), ()):
                    if d is not node:
                        yield d

    def _before(self, fgraph: FunctionGraph, node: Apply) -> list[Apply]:
        """The nodes that must run right before ``node``: its inputs' owners and, for a
        destroyer, the other readers of what it overwrites."""
        out = [v.owner for v in node.inputs if v.owner is not None]
        for i in self.destroyers.get(node, ()):
            out.extend(c for c in self._readers(fgraph, view_root(node.inputs[i])) if c is not node)
        return out

    def _readers(
        self, fgraph: FunctionGraph, root: Variable | None = None, tree: list[Variable] | None = None
    ) -> Iterator[Apply]:
        """The nodes reading ``root`` or one of its views (``tree``, when already known),
        graph outputs aside."""
        for v in tree if tree is not None else self.view_tree(root):
            for c, _ in fgraph.clients.get(v, ()):
                if not isinstance(c.op, Output):
                    yield c

    def can_destroy(self, fgraph: FunctionGraph, node: Apply, i: int) -> bool:
        """Whether ``node`` (in the graph) may overwrite its input ``i``: the rules of
        :meth:`validate`, for this one prospective destroyer (a rule asks before it makes
        an Op in place, so that no replacement is refused)."""
        return self._check(fgraph, node, view_root(node.inputs[i])) is None

    def validate(self, fgraph: FunctionGraph) -> bool:
        """Check the destroyers the changes since the last call concern (raises
        ``InconsistencyError``)."""
        dirty, self.dirty = self.dirty, set()
        dirty_inputs, self.dirty_inputs = self.dirty_inputs, {}
        if not self.root_destroyers:
            return True
        to_check: set[tuple[Apply, Variable]] = set()
        for node, changed in (
            *((n, range(len(n.inputs))) for n in dirty),
            *((n, ks) for n, ks in dirty_inputs.items() if n not in dirty),
        ):
            if node not in fgraph.apply_nodes and not isinstance(node.op, Output):
                continue  # (an Output node is no graph node, but what it returns matters)
            for i in self.destroyers.get(node, ()):
                to_check.add((node, view_root(node.inputs[i])))
            for k in changed:  # a new reader of something destroyed
                root = view_root(node.inputs[k])
                for d in self.root_destroyers.get(root, ()):
                    to_check.add((d, root))
        for destroyer, root in to_check:
            why = self._check(fgraph, destroyer, root)
            if why is not None:
                self.dirty |= dirty  # still to check after the change is undone
                for n, ks in dirty_inputs.items():
                    self.dirty_inputs.setdefault(n, set()).update(ks)
                raise InconsistencyError(why())
        return True


class Supervisor(Feature):
    """Keeps in-place Ops off ``protected`` Variables: a change that makes a node overwrite
    the memory of one of them is refused (``InconsistencyError``), and the in-place rules,
    which ask :meth:`DestroyHandler.can_destroy` first, do not try one.

    A graph input that is not mutable is protected without it, as are constants and what
    a graph output shows; a Supervisor adds other Variables (PyTensor's Feature, which code
    that rewrites a FunctionGraph itself attaches before running a mode's rewrites).

    >>> import arignote.tensor as pt
    >>> from arignote.graph.fg import FunctionGraph
    >>> x = pt.dvector("x")
    >>> y = pt.exp(x)
    >>> fg = FunctionGraph([x], [y.sum()], clone=False)
    >>> fg.attach_feature(Supervisor([y]))
    >>> fg.attach_feature(DestroyHandler())
    >>> from arignote.tensor.elemwise import Elemwise
    >>> import arignote.scalar as ps
    >>> z = Elemwise(ps.neg, inplace_pattern={0: 0})(y)
    >>> fg.destroy_handler.can_destroy(fg, z.owner, 0)
    False
    """

    pickle_rm_attr = ["_supervisor"]

    def __init__(self, protected: Iterable[Variable]) -> None:
        self.protected = list(protected)
        # the roots of owner-less Variables (inputs, constants) never change; the others'
        # are looked up when asked, since rewrites move views
        self._roots = {v for v in self.protected if v.owner is None}
        self._others = [v for v in self.protected if v.owner is not None]

    def __repr__(self) -> str:
        return f"Supervisor({self.protected})"

    def clone(self) -> Supervisor:
        return type(self)(self.protected)

    def protects(self, root: Variable) -> bool:
        """Whether overwriting ``root`` (a view root) overwrites a protected Variable."""
        return root in self._roots or any(view_root(v) is root for v in self._others)

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if getattr(fgraph, "_supervisor", None) is not None:
            raise AlreadyThere(f"a Supervisor is already attached to {fgraph}")
        handler = getattr(fgraph, "destroy_handler", None)
        if handler is not None:  # (later changes are checked by the handler itself)
            for root, nodes in handler.root_destroyers.items():
                if nodes and self.protects(root):
                    raise InconsistencyError(
                        f"{sorted(map(str, nodes))} already overwrite the protected {root}"
                    )
        fgraph._supervisor = self  # type: ignore[attr-defined]

    def on_detach(self, fgraph: FunctionGraph) -> None:
        if getattr(fgraph, "_supervisor", None) is self:
            del fgraph._supervisor  # type: ignore[attr-defined]
