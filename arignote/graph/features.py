"""Features: objects attached to a FunctionGraph that hear about every change to it.

A :class:`Feature` gets ``on_attach``/``on_detach`` when it is attached or removed and,
while attached, ``on_import`` (a node entered the graph), ``on_prune`` (a node left it),
``on_change_input`` (a node's input was swapped) and ``validate`` (may the graph stay as
it is?). ``orderings`` adds scheduling constraints to ``fgraph.toposort()``.

:class:`ReplaceValidate` (attached to every FunctionGraph) gives ``replace_validate``
and ``replace_all_validate``: replace, ask every feature to validate, and undo the
replacement if one says no.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from arignote.graph.basic import Apply, Variable
from arignote.graph.utils import InconsistencyError

if TYPE_CHECKING:
    from arignote.graph.fg import FunctionGraph

__all__ = [
    "AlreadyThere",
    "Bookkeeper",
    "Feature",
    "History",
    "InconsistencyError",
    "NodeFinder",
    "ReplaceValidate",
    "ReplacementDidNotRemoveError",
    "Validator",
]


class AlreadyThere(Exception):
    """Raised by ``on_attach`` when an equivalent feature is already attached (skip it)."""


class ReplacementDidNotRemoveError(Exception):
    """``replace_all_validate_remove`` left in the graph a node it was meant to remove."""


class Feature:
    """Base class of graph listeners; every callback defaults to doing nothing."""

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Called by ``fgraph.attach_feature``; raise :class:`AlreadyThere` to decline."""

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Called by ``fgraph.remove_feature``; undo what ``on_attach`` did."""

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        """``node`` was added to the graph (its inputs are already there)."""

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        """``node`` was removed from the graph (no output of it is used any more)."""

    def on_change_input(
        self, fgraph: FunctionGraph, node: Apply, i: int, var: Variable, new_var: Variable, reason: Any = None
    ) -> None:
        """``node.inputs[i]`` changed from ``var`` to ``new_var``; ``node`` may be an
        ``Output`` client node (then ``fgraph.outputs`` changed)."""

    def orderings(self, fgraph: FunctionGraph, ordered: bool = True) -> dict:
        """Extra constraints for ``toposort``: ``{node: [nodes that must run first]}``."""
        return {}

    def clone(self) -> Feature:
        return type(self)()


def _is_noop(feature: Feature, name: str) -> bool:
    """Whether ``feature.name`` is the do-nothing default (so calling it can be skipped)."""
    own = getattr(type(feature), name, None)
    return own is not None and own is getattr(Feature, name, None)


class Bookkeeper(Feature):
    """A Feature whose ``on_attach``/``on_detach`` replay ``on_import``/``on_prune`` for
    every node already in the graph, so it can keep per-node books."""

    def on_attach(self, fgraph: FunctionGraph) -> None:
        for node in fgraph.toposort():
            self.on_import(fgraph, node, "on_attach")

    def on_detach(self, fgraph: FunctionGraph) -> None:
        for node in fgraph.toposort():
            self.on_prune(fgraph, node, "Bookkeeper.detach")


class History(Feature):
    """Records input changes so they can be undone: ``fgraph.checkpoint()`` and
    ``fgraph.revert(checkpoint)``; ``fgraph.forget_history()`` drops the record."""

    pickle_rm_attr = ["checkpoint", "revert", "forget_history"]

    def __init__(self) -> None:
        self.history: dict = {}

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if hasattr(fgraph, "checkpoint") or hasattr(fgraph, "revert"):
            raise AlreadyThere("History is already attached (fgraph has checkpoint/revert)")
        self.history[fgraph] = []
        fgraph.checkpoint = partial(self._checkpoint, fgraph)  # type: ignore[attr-defined]
        fgraph.revert = partial(self.revert, fgraph)  # type: ignore[attr-defined]
        fgraph.forget_history = partial(self.forget, fgraph)  # type: ignore[attr-defined]

    def on_detach(self, fgraph: FunctionGraph) -> None:
        del fgraph.checkpoint  # type: ignore[attr-defined]
        del fgraph.revert  # type: ignore[attr-defined]
        del fgraph.forget_history  # type: ignore[attr-defined]
        del self.history[fgraph]

    def _checkpoint(self, fgraph: FunctionGraph) -> int:
        return len(self.history[fgraph])

    def on_change_input(
        self, fgraph: FunctionGraph, node: Apply, i: int, var: Variable, new_var: Variable, reason: Any = None
    ) -> None:
        h = self.history.get(fgraph)
        if h is None:  # reverting: don't record the undo of an undo
            return
        h.append((node, i, var))

    def forget(self, fgraph: FunctionGraph) -> None:
        """Drop the record of ``fgraph``'s changes (checkpoints taken so far can no longer
        be reverted to): it holds every replaced Variable, so all that rewriting replaced
        stays alive while it is kept."""
        h = self.history.get(fgraph)
        if h:
            h.clear()

    def revert(self, fgraph: FunctionGraph, checkpoint: int) -> None:
        """Undo every input change made since ``checkpoint``, newest first."""
        h = self.history[fgraph]
        self.history[fgraph] = None
        try:
            while len(h) > checkpoint:
                node, i, var = h.pop()
                fgraph.change_node_input(node, i, var, reason="revert", check=False)
        finally:
            self.history[fgraph] = h


class Validator(Feature):
    """Gives ``fgraph.validate()`` (ask every feature's ``validate``; raise if one objects)
    and ``fgraph.consistent()`` (the same, as a bool)."""

    pickle_rm_attr = ["validate", "consistent"]

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if hasattr(fgraph, "validate") or hasattr(fgraph, "consistent"):
            raise AlreadyThere("Validator is already attached")
        fgraph.validate = partial(self.validate_, fgraph)  # type: ignore[attr-defined]
        fgraph.consistent = partial(self.consistent_, fgraph)  # type: ignore[attr-defined]

    def on_detach(self, fgraph: FunctionGraph) -> None:
        del fgraph.validate  # type: ignore[attr-defined]
        del fgraph.consistent  # type: ignore[attr-defined]

    def validate_(self, fgraph: FunctionGraph) -> bool:
        t0 = time.perf_counter()
        fgraph.execute_callbacks("validate")
        fgraph.validate_time = getattr(fgraph, "validate_time", 0.0) + time.perf_counter() - t0  # type: ignore[attr-defined]
        return True

    def consistent_(self, fgraph: FunctionGraph) -> bool:
        try:
            fgraph.validate()  # type: ignore[attr-defined]
        except InconsistencyError:
            return False
        return True


class ReplaceValidate(History, Validator):
    """Replacement with validation and automatic undo on failure (attached to every graph)."""

    pickle_rm_attr = [
        "replace_validate",
        "replace_all_validate",
        "replace_all_validate_remove",
        *History.pickle_rm_attr,
        *Validator.pickle_rm_attr,
    ]

    def on_attach(self, fgraph: FunctionGraph) -> None:
        for attr in ("replace_validate", "replace_all_validate", "replace_all_validate_remove"):
            if hasattr(fgraph, attr):
                raise AlreadyThere(f"ReplaceValidate is already attached (fgraph has {attr})")
        History.on_attach(self, fgraph)
        Validator.on_attach(self, fgraph)
        fgraph.replace_validate = partial(self.replace_validate, fgraph)  # type: ignore[attr-defined]
        fgraph.replace_all_validate = partial(self.replace_all_validate, fgraph)  # type: ignore[attr-defined]
        fgraph.replace_all_validate_remove = partial(self.replace_all_validate_remove, fgraph)  # type: ignore[attr-defined]

    def on_detach(self, fgraph: FunctionGraph) -> None:
        History.on_detach(self, fgraph)
        Validator.on_detach(self, fgraph)
        del fgraph.replace_validate  # type: ignore[attr-defined]
        del fgraph.replace_all_validate  # type: ignore[attr-defined]
        del fgraph.replace_all_validate_remove  # type: ignore[attr-defined]

    def replace_validate(
        self, fgraph: FunctionGraph, var: Variable, new_var: Variable, reason: Any = None, **kwargs: Any
    ) -> None:
        self.replace_all_validate(fgraph, [(var, new_var)], reason=reason, **kwargs)

    def replace_all_validate(
        self,
        fgraph: FunctionGraph,
        replacements: Sequence[tuple[Variable, Variable]],
        reason: Any = None,
        verbose: bool | None = None,
        **kwargs: Any,
    ) -> int:
        """Make every replacement, then validate; on any error undo them all and re-raise."""
        chk = fgraph.checkpoint()  # type: ignore[attr-defined]
        try:
            for var, new_var in replacements:
                fgraph.replace(var, new_var, reason=reason, verbose=verbose, **kwargs)
            fgraph.validate()  # type: ignore[attr-defined]
        except Exception:
            fgraph.revert(chk)  # type: ignore[attr-defined]
            raise
        return chk

    def replace_all_validate_remove(
        self,
        fgraph: FunctionGraph,
        replacements: Sequence[tuple[Variable, Variable]],
        remove: Sequence[Apply | Variable],
        reason: Any = None,
        warn: bool = True,
        **kwargs: Any,
    ) -> int:
        """As :meth:`replace_all_validate`, and also require that ``remove`` left the graph."""
        chk = self.replace_all_validate(fgraph, replacements, reason=reason, **kwargs)
        for rm in remove:
            if rm in fgraph.apply_nodes or rm in fgraph.variables:
                fgraph.revert(chk)  # type: ignore[attr-defined]
                msg = f"replace_all_validate_remove: {rm} is still in the graph after the replacement"
                if warn:
                    warnings.warn(msg, stacklevel=2)
                raise ReplacementDidNotRemoveError(msg)
        return chk

    def clone(self) -> ReplaceValidate:
        return ReplaceValidate()


class NodeFinder(Bookkeeper):
    """Keeps an index of the graph's nodes by Op: ``fgraph.get_nodes(op)``."""

    pickle_rm_attr = ["get_nodes"]

    def __init__(self) -> None:
        self.fgraph: FunctionGraph | None = None
        self.d: dict = {}

    def on_attach(self, fgraph: FunctionGraph) -> None:
        # (self.fgraph is fgraph when an unpickled graph re-attaches its features)
        if (self.fgraph is not None and self.fgraph is not fgraph) or hasattr(fgraph, "get_nodes"):
            raise AlreadyThere("NodeFinder is already attached")
        self.fgraph = fgraph
        self.d = {}
        fgraph.get_nodes = partial(self.query, fgraph)  # type: ignore[attr-defined]
        Bookkeeper.on_attach(self, fgraph)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        if self.fgraph is not fgraph:
            raise ValueError("NodeFinder is attached to another FunctionGraph")
        del fgraph.get_nodes  # type: ignore[attr-defined]
        self.fgraph = None
        self.d = {}

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        self.d.setdefault(node.op, []).append(node)

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        nodes = self.d.get(node.op)
        if nodes is not None:
            nodes.remove(node)
            if not nodes:
                del self.d[node.op]

    def query(self, fgraph: FunctionGraph, op: Any) -> list[Apply]:
        return list(self.d.get(op, ()))
