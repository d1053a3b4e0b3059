"""The registry of rewrite rules: each rule is registered for one pipeline stage, with tags.

Rules live next to the Ops they concern and register themselves here with
``register_rewrite(stage, *tags)``; a mode's query (include/exclude/require tags)
selects which run. The order of stages is the pipeline in :mod:`arignote.compile.mode`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from arignote.graph.rewriting.basic import NodeRewriter

__all__ = ["RewriteRegistry", "register_rewrite", "rewrite_registry"]


class RewriteRegistry:
    """``{stage: [(rule, tags)]}`` in registration order."""

    def __init__(self) -> None:
        self._rules: dict[str, list[tuple[NodeRewriter, frozenset[str]]]] = {}

    def register(self, stage: str, rule: NodeRewriter, *tags: str) -> NodeRewriter:
        if not isinstance(rule, NodeRewriter):
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

    def stages(self) -> list[str]:
        return list(self._rules)


rewrite_registry = RewriteRegistry()


def register_rewrite(stage: str, *tags: str) -> Callable[[NodeRewriter], NodeRewriter]:
    """Decorator registering a :class:`NodeRewriter` for ``stage`` with ``tags``."""

    def wrap(rule: NodeRewriter) -> NodeRewriter:
        return rewrite_registry.register(stage, rule, *tags)

    return wrap
