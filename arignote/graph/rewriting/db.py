"""The registry of rewrite rules, and the index that hands each Op type its rules.

Rules live next to the Ops they concern and register themselves here with
``register_rewrite(stage, *tags)``; a mode's query (include/exclude/require tags)
selects which run. The order of stages is the pipeline in :mod:`arignote.compile.mode`.
A pass over a stage gets its rules as a :class:`RulesByOp`: each node is offered only
the rules that track its Op's class (or a base class of it), never every rule.

This module sits below the engine (:mod:`arignote.graph.rewriting.basic` imports it to
register constant folding), so it knows a rule only by what it uses of it: ``name``,
``tracks`` and ``transform``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for annotations only: basic imports this module
    from arignote.graph.rewriting.basic import NodeRewriter

__all__ = ["RewriteRegistry", "RulesByOp", "register_rewrite", "rewrite_registry"]


class RulesByOp:
    """The rules of one pass, indexed by Op type.

    ``for_op_type(T)`` gives, in the order of ``rules``, the rules that track a class in
    ``T.__mro__``, the rules that track no Op (they see every node: constant folding),
    and the rules that track Op instances (each paired with those instances, which the
    node's Op must equal). It is computed once per Op type and cached, so a pass costs
    one dictionary look-up per node instead of one ``tracks`` check per rule and node.
    """

    def __init__(self, rules: Iterable[NodeRewriter]):
        self.rules: tuple[NodeRewriter, ...] = tuple(rules)
        self._cache: dict[type, tuple[tuple[NodeRewriter, tuple | None], ...]] = {}

    def __len__(self) -> int:
        return len(self.rules)

    def for_op_type(self, op_type: type) -> tuple[tuple[NodeRewriter, tuple | None], ...]:
        """``(rule, instances)`` pairs for nodes whose Op is an ``op_type``: ``instances``
        is None when the rule applies to all of them, else the tracked Op instances one
        of which the node's Op must equal."""
        found = self._cache.get(op_type)
        if found is None:
            found = self._cache[op_type] = tuple(self._select(op_type))
        return found

    def _select(self, op_type: type) -> Iterable[tuple[NodeRewriter, tuple | None]]:
        mro = set(op_type.__mro__)
        for rule in self.rules:
            if rule.tracks is None:
                yield rule, None
                continue
            if any(isinstance(t, type) and t in mro for t in rule.tracks):
                yield rule, None
                continue
            # Ops compare by value (``__props__``), possibly across classes: these are
            # checked per node, as ``NodeRewriter.applies_to`` does
            instances = tuple(t for t in rule.tracks if not isinstance(t, type))
            if instances:
                yield rule, instances

    def __repr__(self) -> str:
        return f"RulesByOp({[r.name for r in self.rules]})"


def _is_rule(obj: Any) -> bool:
    return (
        isinstance(getattr(obj, "name", None), str) and hasattr(obj, "tracks") and hasattr(obj, "transform")
    )


class RewriteRegistry:
    """``{stage: [(rule, tags)]}`` in registration order."""

    def __init__(self) -> None:
        self._rules: dict[str, list[tuple[NodeRewriter, frozenset[str]]]] = {}

    def register(self, stage: str, rule: NodeRewriter, *tags: str) -> NodeRewriter:
        """Register ``rule`` for ``stage``; it is tagged with its name, ``stage`` and ``tags``."""
        if not _is_rule(rule):
            raise TypeError(f"register a NodeRewriter (use @node_rewriter), got {rule!r}")
        names = {r.name for r, _ in self._rules.get(stage, [])}
        if rule.name in names:
            raise ValueError(f"a rewrite named {rule.name!r} is already registered in stage {stage!r}")
        self._rules.setdefault(stage, []).append((rule, frozenset((rule.name, stage, *tags))))
        return rule

    def query(
        self, stage: str, include: Iterable[str], exclude: Iterable[str] = (), require: Iterable[str] = ()
    ) -> list[NodeRewriter]:
        """The rules of ``stage`` having a tag in ``include``, none in ``exclude``, all of ``require``."""
        include, exclude, require = set(include), set(exclude), set(require)
        return [
            rule
            for rule, tags in self._rules.get(stage, [])
            if (tags & include or "all" in include) and not tags & exclude and require <= tags
        ]

    def rules_by_op(
        self, stage: str, include: Iterable[str], exclude: Iterable[str] = (), require: Iterable[str] = ()
    ) -> RulesByOp:
        """The rules :meth:`query` selects, indexed by Op type for one pass."""
        return RulesByOp(self.query(stage, include, exclude, require))

    def stages(self) -> list[str]:
        return list(self._rules)


rewrite_registry = RewriteRegistry()


def register_rewrite(stage: str, *tags: str) -> Callable[[NodeRewriter], NodeRewriter]:
    """Decorator registering a :class:`NodeRewriter` for ``stage`` with ``tags``."""

    def wrap(rule: NodeRewriter) -> NodeRewriter:
        return rewrite_registry.register(stage, rule, *tags)

    return wrap
