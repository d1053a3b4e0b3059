"""Databases of rewrites, as PyTensor spells them, over arignote's one registry.

A :class:`RewriteDatabase` holds rewriters by name with tags; ``query(*tags)`` (``"+tag"``
include, ``"-tag"`` exclude, ``"&tag"`` require, or a :class:`RewriteDatabaseQuery`) gives
the rewriter that applies the selected ones: an :class:`EquilibriumDB` gives an
:class:`~arignote.graph.rewriting.basic.EquilibriumGraphRewriter`, a :class:`SequenceDB`
a :class:`~arignote.graph.rewriting.basic.SequentialGraphRewriter` ordered by
``position``, a :class:`LocalGroupDB` a
:class:`~arignote.graph.rewriting.basic.SequentialNodeRewriter`.

Every database stores its entries in a :class:`~arignote.graph.rewriting.registry.RewriteRegistry`
under one stage name. A database made by the user has a registry of its own; the
databases of the compilation pipeline are **views**: ``stage_db("canonicalize")`` (what
``arignote.compile.mode.optdb["canonicalize"]`` and ``register_canonicalize`` use) reads
and writes the ``canonicalize`` stage of ``rewrite_registry``, the very rules
``function()`` runs. There is no second copy to keep in step.

>>> import arignote.tensor as pt
>>> from arignote.graph.rewriting.basic import node_rewriter
>>> db = EquilibriumDB()
>>> @node_rewriter([pt.exp])
... def exp_to_sin(fgraph, node):
...     return [pt.sin(node.inputs[0])]
>>> db.register("exp_to_sin", exp_to_sin, "mine")
>>> rewriter = db.query("+mine")
>>> [r.name for r in rewriter.node_rewriters]
['exp_to_sin']
>>> db.query("+mine", "-exp_to_sin").node_rewriters
[]
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from arignote.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    NodeRewriter,
    SequentialGraphRewriter,
    SequentialNodeRewriter,
    WalkingGraphRewriter,
)
from arignote.graph.rewriting.registry import (
    RewriteRegistry,
    RulesByOp,
    register_rewrite,
    rewrite_registry,
    rewriter_kind,
)

__all__ = [
    "EquilibriumDB",
    "RewritesType",
    "LocalGroupDB",
    "ProxyDB",
    "RewriteDatabase",
    "RewriteDatabaseQuery",
    "RewriteRegistry",
    "RulesByOp",
    "SequenceDB",
    "TopoDB",
    "register_rewrite",
    "rewrite_registry",
    "stage_db",
]

#: what a rewrite database holds (PyTensor's name, for annotations)
RewritesType = GraphRewriter | NodeRewriter


class RewriteDatabaseQuery:
    """Which rewrites a query selects: those with a tag in ``include`` (``"all"``: every
    one), all of ``require`` and none of ``exclude``. ``subquery`` gives another query for
    a named sub-database; ``position_cutoff`` drops SequenceDB entries at or past it."""

    def __init__(
        self,
        include: Iterable[str],
        require: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        subquery: dict[str, RewriteDatabaseQuery] | None = None,
        position_cutoff: float = math.inf,
        extra_rewrites: Sequence[tuple[Any, float]] | None = None,
    ):
        if isinstance(include, str):
            include = (include,)
        self.include = frozenset(include)
        self.require = frozenset(require or ())
        self.exclude = frozenset(exclude or ())
        self.subquery = dict(subquery or {})
        self.position_cutoff = position_cutoff
        self.extra_rewrites = list(extra_rewrites or ())
        self.name: str | None = None

    def _with(self, **changes: Any) -> RewriteDatabaseQuery:
        args = {
            "include": self.include,
            "require": self.require,
            "exclude": self.exclude,
            "subquery": self.subquery,
            "position_cutoff": self.position_cutoff,
            "extra_rewrites": self.extra_rewrites,
        }
        args.update(changes)
        return RewriteDatabaseQuery(**args)

    def including(self, *tags: str) -> RewriteDatabaseQuery:
        """The same query, also selecting rewrites with any of ``tags``."""
        return self._with(include=self.include | set(tags))

    def excluding(self, *tags: str) -> RewriteDatabaseQuery:
        """The same query, without rewrites having any of ``tags``."""
        return self._with(exclude=self.exclude | set(tags))

    def requiring(self, *tags: str) -> RewriteDatabaseQuery:
        """The same query, selecting only rewrites with all of ``tags``."""
        return self._with(require=self.require | set(tags))

    def register(self, *rewrites: tuple[Any, float]) -> RewriteDatabaseQuery:
        """The same query with ``(rewriter, position)`` pairs added (for a SequenceDB)."""
        return self._with(extra_rewrites=[*self.extra_rewrites, *rewrites])

    def selects(self, tags: Iterable[str]) -> bool:
        """Whether a rewrite with ``tags`` is selected."""
        tags = set(tags)
        return (
            bool(tags & self.include or "all" in self.include)
            and not tags & self.exclude
            and self.require <= tags
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RewriteDatabaseQuery) and (
            self.include,
            self.require,
            self.exclude,
            self.position_cutoff,
        ) == (other.include, other.require, other.exclude, other.position_cutoff)

    def __hash__(self) -> int:
        return hash((self.include, self.require, self.exclude))

    def __repr__(self) -> str:
        return (
            f"RewriteDatabaseQuery(include={sorted(self.include)}, require={sorted(self.require)}, "
            f"exclude={sorted(self.exclude)})"
        )


def _as_query(tags: tuple, kwtags: dict) -> RewriteDatabaseQuery:
    if tags and isinstance(tags[0], RewriteDatabaseQuery):
        if len(tags) > 1 or kwtags:
            raise TypeError("query(RewriteDatabaseQuery) takes no other arguments")
        return tags[0]
    include = [t[1:] for t in tags if t.startswith("+")]
    require = [t[1:] for t in tags if t.startswith("&")]
    exclude = [t[1:] for t in tags if t.startswith("-")]
    if len(include) + len(require) + len(exclude) != len(tags):
        raise ValueError(f"query tags start with '+' (include), '&' (require) or '-' (exclude): {tags}")
    return RewriteDatabaseQuery(include=include, require=require, exclude=exclude, subquery=kwtags)


class RewriteDatabase:
    """Rewriters (node rewriters, graph rewriters, other databases) by name, with tags.

    ``registry`` and ``stage`` say where the entries live (by default a registry of its
    own); every entry is tagged with its name and, unless ``use_db_name_as_tag=False``,
    with the database's stage name.
    """

    def __init__(self, registry: RewriteRegistry | None = None, stage: str | None = None):
        self._registry = registry if registry is not None else RewriteRegistry()
        self.stage = stage or f"{type(self).__name__}_{id(self)}"
        self.name: str | None = stage

    @property
    def registry(self) -> RewriteRegistry:
        return self._registry

    def register(
        self, name: str, rewriter: Any, *tags: str, use_db_name_as_tag: bool = True, **kwargs: Any
    ) -> None:
        """Register ``rewriter`` under ``name`` (which becomes its ``name``) with ``tags``."""
        if not any(hasattr(rewriter, a) for a in ("transform", "apply", "query")):
            raise TypeError(f"{rewriter!r} is not a node rewriter, a graph rewriter or a RewriteDatabase")
        if name in self:
            raise ValueError(f"the name {name!r} is already present in the database")
        rewriter.name = name
        if rewriter_kind(rewriter) is None:
            raise TypeError(f"{rewriter!r} is not a node rewriter, a graph rewriter or a RewriteDatabase")
        self.registry.register(self.stage, rewriter, *tags, use_stage_tag=use_db_name_as_tag, **kwargs)

    def add_tags(self, name: str, *tags: str) -> None:
        entries = self.registry._rules.get(self.stage, [])
        for i, (r, t) in enumerate(entries):
            if r.name == name:
                entries[i] = (r, t | set(tags))
                return
        raise KeyError(name)

    def remove_tags(self, name: str, *tags: str) -> None:
        entries = self.registry._rules.get(self.stage, [])
        for i, (r, t) in enumerate(entries):
            if r.name == name:
                entries[i] = (r, t - set(tags))
                return
        raise KeyError(name)

    def __query__(self, q: RewriteDatabaseQuery) -> list[Any]:
        """The selected entries, in order; sub-databases replaced by their own query's
        result (``q.subquery[name]`` or ``q``)."""
        out = []
        for rewriter, tags in self.registry.entries(self.stage):
            if not q.selects(tags):
                continue
            if isinstance(rewriter, RewriteDatabase):
                sub = q.subquery.get(rewriter.name, q)
                name = rewriter.name
                rewriter = rewriter.query(sub)
                rewriter.name = name
            out.append(rewriter)
        return out

    def query(self, *tags: Any, **kwtags: Any) -> Any:
        """The selected rewriters (a list here; subclasses give one rewriter)."""
        return self.__query__(_as_query(tags, kwtags))

    def __getitem__(self, name: str) -> Any:
        for rewriter, _ in self.registry.entries(self.stage):
            if rewriter.name == name:
                return rewriter
        raise KeyError(f"nothing registered for {name!r}")

    def __contains__(self, name: object) -> bool:
        return any(r.name == name for r, _ in self.registry.entries(self.stage))

    def names(self) -> list[str]:
        return [r.name for r, _ in self.registry.entries(self.stage)]

    def print_summary(self, stream: TextIO = sys.stdout) -> None:
        print(f"{type(self).__name__} {self.stage} (id {id(self)})", file=stream)
        for rewriter, tags in self.registry.entries(self.stage):
            print(f"  {rewriter.name}: {sorted(tags)}", file=stream)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.stage}: {self.names()})"


class EquilibriumDB(RewriteDatabase):
    """A database whose query is an :class:`EquilibriumGraphRewriter` of the selected
    rewriters (the canonicalize, stabilize and specialize stages are ones).
    ``register(..., final_rewriter=True)`` runs a graph rewriter after each round,
    ``cleanup=True`` once at the end."""

    def __init__(
        self,
        ignore_newtrees: bool = True,
        tracks_on_change_inputs: bool = False,
        registry: RewriteRegistry | None = None,
        stage: str | None = None,
        max_use_ratio: float | None = None,
    ):
        super().__init__(registry, stage)
        self.ignore_newtrees = ignore_newtrees
        self.tracks_on_change_inputs = tracks_on_change_inputs
        self.max_use_ratio = max_use_ratio

    def register(
        self,
        name: str,
        rewriter: Any,
        *tags: str,
        final_rewriter: bool = False,
        cleanup: bool = False,
        **kwargs: Any,
    ) -> None:
        super().register(name, rewriter, *tags, final_rewriter=final_rewriter, cleanup=cleanup, **kwargs)

    def query(self, *tags: Any, **kwtags: Any) -> EquilibriumGraphRewriter:
        selected = self.__query__(_as_query(tags, kwtags))
        roles = {id(r): self.registry.role(self.stage, r) for r in selected}
        return EquilibriumGraphRewriter(
            [r for r in selected if not roles.get(id(r))],
            max_use_ratio=self.max_use_ratio,
            ignore_newtrees=self.ignore_newtrees,
            tracks_on_change_inputs=self.tracks_on_change_inputs,
            final_rewriters=[r for r in selected if roles.get(id(r)) == "final"],
            cleanup_rewriters=[r for r in selected if roles.get(id(r)) == "cleanup"],
        )


class SequenceDB(RewriteDatabase):
    """A database whose query is a :class:`SequentialGraphRewriter` of the selected
    rewriters in order of ``position`` (given at registration; by default after the
    last)."""

    def __init__(
        self,
        failure_callback: Any = SequentialGraphRewriter.warn,
        registry: RewriteRegistry | None = None,
        stage: str | None = None,
    ):
        super().__init__(registry, stage)
        self.failure_callback = failure_callback

    def register(
        self, name: str, rewriter: Any, *tags: str, position: float | str = "last", **kwargs: Any
    ) -> None:
        if position == "last":
            position = None
        elif not isinstance(position, (int, float)):
            raise TypeError(f"position must be a number or 'last', got {position!r}")
        super().register(name, rewriter, *tags, position=position, **kwargs)

    def position(self, name: str) -> float:
        return self.registry.position(self.stage, self[name])

    def _selected_in_order(self, q: RewriteDatabaseQuery) -> list[Any]:
        selected = [(self.registry.position(self.stage, r), r) for r in self.__query__(q)]
        for extra, position in q.extra_rewrites:
            selected.append((position, extra))
        kept = [(p, r) for p, r in selected if p < q.position_cutoff]
        kept.sort(key=lambda pr: pr[0])
        return [r for _, r in kept]

    def query(
        self, *tags: Any, position_cutoff: float | None = None, **kwtags: Any
    ) -> SequentialGraphRewriter:
        q = _as_query(tags, kwtags)
        if position_cutoff is not None:
            q = q._with(position_cutoff=position_cutoff)
        return SequentialGraphRewriter(*self._selected_in_order(q), failure_callback=self.failure_callback)


class LocalGroupDB(SequenceDB):
    """A database of node rewriters whose query is one :class:`SequentialNodeRewriter`
    (its members tried in order of position)."""

    def __init__(
        self,
        apply_all_rewrites: bool = False,
        profile: bool = False,
        node_rewriter: type = SequentialNodeRewriter,
        registry: RewriteRegistry | None = None,
        stage: str | None = None,
    ):
        super().__init__(failure_callback=None, registry=registry, stage=stage)
        self.apply_all_rewrites = apply_all_rewrites
        self.profile = profile
        self.node_rewriter = node_rewriter

    def query(self, *tags: Any, **kwtags: Any) -> SequentialNodeRewriter:  # type: ignore[override]
        rewriters = self._selected_in_order(_as_query(tags, kwtags))
        return self.node_rewriter(
            *rewriters, apply_all_rewrites=self.apply_all_rewrites, profile=self.profile
        )


class TopoDB(RewriteDatabase):
    """Wraps a database of node rewriters: its query walks them over the graph
    (a :class:`WalkingGraphRewriter`)."""

    def __init__(self, db: RewriteDatabase, order: str = "in_to_out", ignore_newtrees: bool = False,
                 failure_callback: Any = None):  # fmt: skip
        super().__init__(db.registry, db.stage)
        self.db = db
        self.order = order
        self.ignore_newtrees = ignore_newtrees
        self.failure_callback = failure_callback

    def query(self, *tags: Any, **kwtags: Any) -> WalkingGraphRewriter:
        return WalkingGraphRewriter(
            self.db.query(*tags, **kwtags), self.order, self.ignore_newtrees, self.failure_callback
        )


class ProxyDB(RewriteDatabase):
    """Another database under a second name (a database is registered in one place only)."""

    def __init__(self, db: RewriteDatabase):
        if not isinstance(db, RewriteDatabase):
            raise TypeError("ProxyDB wraps a RewriteDatabase")
        super().__init__(db.registry, db.stage)
        self.db = db

    def query(self, *tags: Any, **kwtags: Any) -> Any:
        return self.db.query(*tags, **kwtags)


class _StageDB(EquilibriumDB):
    """The EquilibriumDB view of one stage of a registry (by default the global
    ``rewrite_registry``, looked up when used)."""

    def __init__(self, stage: str, registry_getter: Any):
        super().__init__(ignore_newtrees=False, stage=stage)
        self._registry_getter = registry_getter

    @property
    def registry(self) -> RewriteRegistry:
        return self._registry_getter()

    def __repr__(self) -> str:
        return f"EquilibriumDB(stage {self.stage!r} of rewrite_registry: {len(self.names())} rewriters)"


_STAGE_DBS: dict[str, _StageDB] = {}


def _global_registry() -> RewriteRegistry:
    return rewrite_registry


def stage_db(stage: str) -> EquilibriumDB:
    """The :class:`EquilibriumDB` view of ``stage`` of ``rewrite_registry``: registering
    in it registers a rule of that pipeline stage; querying it selects from that stage."""
    db = _STAGE_DBS.get(stage)
    if db is None:
        db = _STAGE_DBS[stage] = _StageDB(stage, _global_registry)
    return db


#: The database ``rewrite_graph`` queries by default; ``arignote.compile.mode`` sets it to
#: ``optdb`` (the pipeline) when it is imported (which ``import arignote`` does).
default_database: dict[str, Any] = {}
