"""Modes: which rewrites run (the pipeline) and which linker runs the result.

The pipeline is the list below, in order: ``(name, purpose, pass)``, where a pass is a
function ``pass(fgraph, query)`` that rewrites ``fgraph`` in place. Merging is one pass; a
rule stage is a :class:`RuleStage`, which applies the rules registered for it
(:func:`arignote.graph.rewriting.register_rewrite`) whose tags the mode's query selects.

:data:`optdb` is PyTensor's name for the same pipeline: a
:class:`~arignote.graph.rewriting.db.SequenceDB` view of :data:`PIPELINE` whose entries are
its stages, ``optdb["canonicalize"]`` the EquilibriumDB view of that stage's rules (a rule
registered there is one ``function()`` runs), ``optdb.register(name, rewriter, *tags,
position=...)`` a new stage of :data:`PIPELINE`, run by the modes whose tags select it.

>>> from arignote.compile.mode import get_mode
>>> m = get_mode("FAST_RUN").excluding("fusion")
>>> ("fusion" in m.query.exclude, type(m.linker).__name__)
(True, 'NumbaLinker')
>>> optdb.names()[:4]
['merge', 'canonicalize', 'stabilize', 'specialize']
>>> "constant_folding" in optdb["canonicalize"]
True
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from arignote.compile.debug.dump import PrintCurrentFunctionGraph
from arignote.configdefaults import config
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    MergeOptimizer,
    NodeRewriter,
    SequentialGraphRewriter,
    apply_node_rewriters,
    in2out,
    merge_graph,
)
from arignote.graph.rewriting.db import (
    RewriteDatabaseQuery,
    SequenceDB,
    _as_query,
    default_database,
    stage_db,
)
from arignote.graph.rewriting.registry import RulesByOp, rewrite_registry, rewriter_kind
from arignote.graph.utils import gc_paused
from arignote.link.numba.linker import NumbaLinker, numba_available
from arignote.link.python.codegen import PyGenLinker
from arignote.link.vm import VMLinker
from arignote.tensor.rewriting.fusion import fusion_pass

__all__ = [
    "OPT_FAST_COMPILE",
    "OPT_FAST_RUN",
    "OPT_MERGE",
    "OPT_NONE",
    "PIPELINE",
    "PrintCurrentFunctionGraph",
    "STAGE_POSITIONS",
    "STAGE_TAGS",
    "optdb",
    "RuleStage",
    "merge_pass",
    "RewriteQuery",
    "Mode",
    "FAST_RUN",
    "FAST_COMPILE",
    "JAX",
    "JAX_EXCLUDED",
    "NUMBA",
    "NUMBA_KERNELS",
    "get_mode",
    "get_default_mode",
    "register_mode",
    "predefined_modes",
    "predefined_linkers",
    "predefined_optimizers",
    "register_linker",
    "register_optimizer",
]

#: A pass: rewrites the FunctionGraph in place; the query says which rules may run.
Pass = Callable[[FunctionGraph, "RewriteQuery"], Any]


def merge_pass(fgraph: FunctionGraph, query: RewriteQuery) -> int:
    """Merge equal constants and duplicate computations (no rules: the query is not used).

    Nothing to do on a graph that ``function()`` copied merged and nothing changed since
    (it marks it ``_merged_copy``): one pass of :func:`merge_graph` finds what the merging
    copy already merged, so it would find nothing."""
    if fgraph.__dict__.pop("_merged_copy", False):
        return 0
    return merge_graph(fgraph)


@dataclass(frozen=True)
class RuleStage:
    """The pass of one rule stage: the rules registered for ``stage`` that the query
    selects, applied until none fires, each node offered only those tracking its Op."""

    stage: str

    def __call__(self, fgraph: FunctionGraph, query: RewriteQuery) -> int:
        selected = rewrite_registry.query(self.stage, query.include, query.exclude, query.require)
        for rule in selected:
            rule.add_requirements(fgraph)
        if all(rewriter_kind(r) == "node" for r in selected):  # the usual case: one worklist pass
            return apply_node_rewriters(fgraph, RulesByOp(selected))
        return self.rewriter(selected, query).apply(fgraph)

    def rewriter(self, selected: list, query: RewriteQuery) -> EquilibriumGraphRewriter:
        """The stage's selected node rewriters, graph rewriters (``final``/``cleanup`` as
        registered) and databases (queried with the same tags) as one equilibrium."""
        roles = {id(r): rewrite_registry.role(self.stage, r) for r in selected}
        q = RewriteDatabaseQuery(include=query.include, require=query.require, exclude=query.exclude)
        items = [r.query(q) if rewriter_kind(r) == "db" else r for r in selected]
        return EquilibriumGraphRewriter(
            [it for r, it in zip(selected, items) if not roles[id(r)]],
            final_rewriters=[it for r, it in zip(selected, items) if roles[id(r)] == "final"],
            cleanup_rewriters=[it for r, it in zip(selected, items) if roles[id(r)] == "cleanup"],
        )


#: The compilation pipeline, in order: (stage name, what it is for, the pass).
PIPELINE: list[tuple[str, str, Pass]] = [
    ("merge", "merge equal constants and duplicate computations", merge_pass),
    (
        "canonicalize",
        "put expressions in one normal form so later rules see fewer cases",
        RuleStage("canonicalize"),
    ),
    (
        "stabilize",
        "replace numerically unstable forms (log(1 + x) -> log1p(x), ...)",
        RuleStage("stabilize"),
    ),
    ("specialize", "replace general ops by faster special cases", RuleStage("specialize")),
    (
        "uncanonicalize",
        "undo canonical forms that are slower to run than the original",
        RuleStage("uncanonicalize"),
    ),
    ("fusion", "fuse chains of elementwise ops into single kernels", fusion_pass),
    ("inplace", "let ops overwrite inputs nobody else needs", RuleStage("inplace")),
    ("final_merge", "merge again what the stages made equal", merge_pass),
]


#: The tags of each pipeline stage (besides its name), by which ``optdb.query`` and a
#: ``Mode`` built from a ``RewriteDatabaseQuery`` select stages; ``optdb.register`` adds to it.
STAGE_TAGS: dict[str, frozenset[str]] = {
    "merge": frozenset({"fast_run", "fast_compile", "merge"}),
    "canonicalize": frozenset({"fast_run", "fast_compile"}),
    "stabilize": frozenset({"fast_run"}),
    "specialize": frozenset({"fast_run"}),
    "uncanonicalize": frozenset({"fast_run"}),
    "fusion": frozenset({"fast_run"}),
    "inplace": frozenset({"fast_run", "inplace"}),
    "final_merge": frozenset({"fast_run", "merge"}),
}

#: PyTensor's positions of the stages in ``optdb`` (a stage without one goes after the
#: stage before it in :data:`PIPELINE`).
STAGE_POSITIONS: dict[str, float] = {
    "merge": 0,
    "canonicalize": 1,
    "stabilize": 1.5,
    "specialize": 2,
    "uncanonicalize": 3,
    "fusion": 49,
    "inplace": 75,
    "final_merge": 100,
}

#: Stages added with ``optdb.register``: modes run them where their tags select them.
_ADDED_STAGES: set[str] = set()


def _stage_selected(name: str, include: Any, exclude: Any, require: Any) -> bool:
    tags = STAGE_TAGS.get(name, frozenset({"fast_run"})) | {name}
    return bool(tags & set(include) or "all" in include) and not tags & set(exclude) and set(require) <= tags


def _stage_positions() -> dict[str, float]:
    positions: dict[str, float] = {}
    last = -1.0
    for name, _, _ in PIPELINE:
        p = STAGE_POSITIONS.get(name)
        if p is None or p < last:
            p = last + 1e-3
        positions[name] = last = p
    return positions


@dataclass(frozen=True)
class RewriteQuery:
    """Which rules run: those with a tag in ``include``, none in ``exclude``, all of
    ``require``. ``stages`` limits the pipeline stages that run at all."""

    include: frozenset = frozenset({"fast_run"})
    exclude: frozenset = frozenset()
    require: frozenset = frozenset()
    stages: tuple = tuple(name for name, _, _ in PIPELINE)
    #: ``(rewriter, position)`` pairs added with :meth:`register`, run between the stages
    #: by PyTensor's ``optdb`` positions (:data:`STAGE_POSITIONS`)
    extra: tuple = ()

    def register(self, *rewrites: tuple[Any, float]) -> RewriteQuery:
        """The same query, also running each ``(rewriter, position)`` pair's rewriter (a
        GraphRewriter, or a NodeRewriter applied to every node) before the first stage at or
        after ``position`` in ``optdb``'s order: ``merge`` is at 0, ``canonicalize`` 1,
        ``stabilize`` 1.5, ``specialize`` 2, ``fusion`` 49, ``inplace`` 75,
        ``final_merge`` 100; a larger position runs last."""
        checked = []
        for pair in rewrites:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"register takes (rewriter, position) pairs, got {pair!r}")
            rewriter, position = pair
            if isinstance(position, bool) or not isinstance(position, (int, float)):
                raise TypeError(f"register: the position of {rewriter!r} must be a number, got {position!r}")
            if isinstance(rewriter, NodeRewriter):
                graph_rewriter = in2out(rewriter, name=getattr(rewriter, "name", None))
            elif isinstance(rewriter, GraphRewriter):
                graph_rewriter = rewriter
            else:
                raise TypeError(f"register: {rewriter!r} is neither a GraphRewriter nor a NodeRewriter")
            checked.append((graph_rewriter, float(position)))
        return replace(self, extra=(*self.extra, *checked))

    def including(self, *tags: str) -> RewriteQuery:
        return replace(self, include=self.include | set(tags))

    def excluding(self, *tags: str) -> RewriteQuery:
        return replace(self, exclude=self.exclude | set(tags))

    def requiring(self, *tags: str) -> RewriteQuery:
        return replace(self, require=self.require | set(tags))

    @classmethod
    def from_database_query(cls, q: RewriteDatabaseQuery) -> RewriteQuery:
        """PyTensor's query as a mode's: its tags, and the stages they select."""
        stages = tuple(n for n, _, _ in PIPELINE if _stage_selected(n, q.include, q.exclude, q.require))
        query = cls(include=q.include, exclude=q.exclude, require=q.require, stages=stages)
        return query.register(*q.extra_rewrites) if q.extra_rewrites else query

    def stages_to_run(self) -> list[str]:
        """The stages this query runs, in pipeline order: those of ``stages`` and those
        added with ``optdb.register`` whose tags it selects (not excluded by name), then
        any of ``stages`` outside the pipeline (they apply the rules registered for them)."""
        in_pipeline = [name for name, _, _ in PIPELINE]
        run = [
            n
            for n in in_pipeline
            if n in self.stages
            or (
                n in _ADDED_STAGES
                and self.include
                and _stage_selected(n, self.include, self.exclude, self.require)
            )
        ]
        run += [s for s in self.stages if s not in in_pipeline]
        return [s for s in run if s not in self.exclude]

    def __call__(self, fgraph: FunctionGraph) -> dict[str, float]:
        """Rewrite ``fgraph`` in place, running the pass of each stage of
        :meth:`stages_to_run` in turn; returns seconds spent per stage.
        ``query.rewrite(fgraph)`` says the same: PyTensor's ``mode.optimizer`` is a graph
        rewriter, which code that compiles a graph itself runs that way
        (``arignote.compile.mode.JAX.optimizer.rewrite(fgraph)``)."""
        passes = {name: run for name, _, run in PIPELINE}
        timings: dict[str, float] = {}
        # Rewriting makes many small objects and drops replaced nodes in reference cycles
        # (a node and its outputs): left on, the collector sweeps the whole growing graph
        # again and again (a third of a 30k-node compile). What is dropped is collected
        # after, once.
        stages = self.stages_to_run()
        if stages[:1] != ["merge"]:  # another stage may change the graph before merging
            fgraph.__dict__.pop("_merged_copy", None)
        extra = sorted(self.extra, key=lambda pair: pair[1])  # stable: equal positions in order
        positions = _stage_positions() if extra else {}
        with gc_paused():
            for stage in stages:
                while extra and extra[0][1] <= positions.get(stage, float("inf")):
                    self._run_extra(fgraph, extra.pop(0)[0], timings)
                run = passes.get(stage) or RuleStage(stage)
                t0 = time.perf_counter()
                run(fgraph, self)
                timings[stage] = time.perf_counter() - t0
            for rewriter, _ in extra:
                self._run_extra(fgraph, rewriter, timings)
        return timings

    @staticmethod
    def _run_extra(fgraph: FunctionGraph, rewriter: Any, timings: dict[str, float]) -> None:
        t0 = time.perf_counter()
        rewriter.rewrite(fgraph)
        key = f"registered {getattr(rewriter, 'name', None) or type(rewriter).__name__}"
        timings[key] = timings.get(key, 0.0) + time.perf_counter() - t0

    def rewrite(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> dict[str, float]:
        """Rewrite ``fgraph`` in place (see :meth:`__call__`)."""
        return self(fgraph)

    apply = rewrite


_OPTIMIZERS: dict[str | None, RewriteQuery] = {
    "fast_run": RewriteQuery(),
    "fast_compile": RewriteQuery(include=frozenset({"fast_compile"}), stages=("merge", "canonicalize")),
    "merge": RewriteQuery(include=frozenset(), stages=("merge",)),
    "None": RewriteQuery(include=frozenset(), stages=()),
    None: RewriteQuery(include=frozenset(), stages=()),
}

predefined_linkers: dict[str, Any] = {
    "py": VMLinker(),
    "vm": VMLinker(),
    "cvm": VMLinker(),
    "vm_nogc": VMLinker(allow_gc=False),
    # one generated Python function per graph (tier 1 of the fast backend): FAST_RUN's
    "pygen": PyGenLinker(),
    # tier 2 forced: the whole graph as one Numba function where every node has one, else
    # every per-node Numba kernel, compiled before function() returns (the NUMBA mode's)
    "numba": NumbaLinker(jit="sync"),
    # per-node Numba kernels forced, never the whole-graph function (the NUMBA_KERNELS mode's)
    "numba_kernels": NumbaLinker(jit="sync", whole_graph="never"),
}


@dataclass(frozen=True)
class Mode:
    """A compilation mode: a ``linker`` (what runs the graph) and an ``optimizer`` (which
    rewrites run). Either may be given by name: linkers ``"py"``/``"vm"``/``"cvm"``/
    ``"vm_nogc"`` (the reference VM), ``"pygen"`` (generated Python, tier 1), ``"numba"``
    (tier 2 forced; FAST_RUN's is tiered: :class:`~arignote.link.numba.NumbaLinker`), ``"jax"``
    (one ``jax.jit``-ed function: :mod:`arignote.link.jax`, imported on first use);
    optimizers ``"fast_run"``, ``"fast_compile"``, ``"merge"``, ``None``.
    """

    linker: Any = field(default_factory=VMLinker)
    optimizer: Any = "fast_run"
    name: str = "Mode"

    #: the FunctionMaker class ``function()`` compiles with in this mode (set by
    #: :mod:`arignote.compile.maker`, which this module is below)
    function_maker: ClassVar[type]

    def __post_init__(self) -> None:
        linker, query = self.get_linker_optimizer(self.linker, self.optimizer)
        object.__setattr__(self, "linker", linker)
        object.__setattr__(self, "optimizer", query)
        # seconds spent in profiled calls of functions compiled in this mode (the mode is
        # frozen: only its fields are; this counter is not one, nor part of its equality)
        object.__setattr__(self, "call_time", 0.0)

    @staticmethod
    def get_linker_optimizer(linker: Any, optimizer: Any) -> tuple[Any, RewriteQuery]:
        """The linker and the rewrite query that ``linker`` and ``optimizer`` name (as
        :class:`Mode` takes them: names, or a linker object and a query); a ValueError names
        an unknown one."""
        if linker is None:
            linker = VMLinker()
        elif isinstance(linker, str):
            if linker not in predefined_linkers and linker == "jax":
                linker = _jax_linker()
            elif linker not in predefined_linkers:
                raise ValueError(f"Unknown linker {linker!r}; known: {sorted(predefined_linkers)}")
            else:
                linker = predefined_linkers[linker]
        if isinstance(optimizer, RewriteQuery):
            query = optimizer
        elif isinstance(optimizer, RewriteDatabaseQuery):
            query = RewriteQuery.from_database_query(optimizer)
        elif isinstance(optimizer, str | None) and optimizer in _OPTIMIZERS:
            query = _OPTIMIZERS[optimizer]
        else:
            raise ValueError(f"Unknown optimizer {optimizer!r}; known: {[k for k in _OPTIMIZERS if k]}")
        return linker, query

    def _add_call_time(self, seconds: float) -> None:
        object.__setattr__(self, "call_time", self.call_time + seconds)

    @property
    def optdb(self) -> Any:
        """The database of rewrites this mode's query selects from (:data:`optdb`)."""
        return optdb

    @property
    def query(self) -> RewriteQuery:
        return self.optimizer

    @property
    def provided_optimizer(self) -> RewriteQuery:
        """The rewrite query, as PyTensor names it for code that derives a mode from another
        (``Mode(linker=m.provided_linker, optimizer=m.provided_optimizer.including(tag))``)."""
        return self.optimizer

    @property
    def provided_linker(self) -> Any:
        """The linker (PyTensor's name, beside :attr:`provided_optimizer`)."""
        return self.linker

    def including(self, *tags: str) -> Mode:
        """The same mode, also running rules tagged with any of ``tags``."""
        return replace(self, optimizer=self.query.including(*tags))

    def excluding(self, *tags: str) -> Mode:
        """The same mode, without rules (or stages) tagged with any of ``tags``."""
        return replace(self, optimizer=self.query.excluding(*tags))

    def requiring(self, *tags: str) -> Mode:
        """The same mode, running only rules tagged with all of ``tags``."""
        return replace(self, optimizer=self.query.requiring(*tags))

    def register(self, *rewrites: tuple[Any, float]) -> Mode:
        """The same mode, also running each ``(rewriter, position)`` pair's rewriter where
        ``position`` falls among the pipeline's stages (:meth:`RewriteQuery.register`)."""
        return replace(self, optimizer=self.query.register(*rewrites))

    def clone(self, **kwargs: Any) -> Mode:
        return replace(self, **kwargs)

    def __str__(self) -> str:
        return f"{self.name}(linker={self.linker}, optimizer={self.query})"


# --- optdb: PyTensor's database of the pipeline, a view of PIPELINE -------------------------


class _PassRewriter(GraphRewriter):
    """One pipeline pass as a GraphRewriter, run with a given mode query."""

    def __init__(self, name: str, run: Pass, query: RewriteQuery):
        self.name = name
        self.run = run
        self.query = query

    def apply(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> Any:
        return self.run(fgraph, self.query)


@dataclass(frozen=True)
class RewriterPass:
    """The pass of a stage added with ``optdb.register``: a database is queried with the
    mode's tags, a graph rewriter rewrites, a node rewriter is walked (:func:`in2out`)."""

    rewriter: Any

    def __call__(self, fgraph: FunctionGraph, query: RewriteQuery) -> Any:
        r = self.rewriter
        kind = rewriter_kind(r)
        if kind == "db":
            q = RewriteDatabaseQuery(include=query.include, require=query.require, exclude=query.exclude)
            return r.query(q).rewrite(fgraph)
        if kind == "node":
            return in2out(r).rewrite(fgraph)
        return r.rewrite(fgraph) if hasattr(r, "rewrite") else r.apply(fgraph)


class PipelineDB(SequenceDB):
    """``optdb``: the SequenceDB whose entries are the stages of :data:`PIPELINE`.

    ``optdb[name]`` is, for a rule stage, the EquilibriumDB view of its rules (register
    there to add a rule ``function()`` runs); for a merge stage a :class:`MergeOptimizer`;
    for another pass, that pass as a GraphRewriter. ``query(...)`` gives the selected stages
    as one SequentialGraphRewriter running exactly the pipeline's passes, with the query's
    tags selecting the rules inside them. ``register`` adds a stage to :data:`PIPELINE`.
    """

    def __init__(self) -> None:
        super().__init__(failure_callback=None, stage="optdb")
        self.name = "optdb"

    def _passes(self) -> dict[str, Pass]:
        return {name: run for name, _, run in PIPELINE}

    def names(self) -> list[str]:
        return [name for name, _, _ in PIPELINE]

    def __contains__(self, name: object) -> bool:
        return name in self._passes()

    def __getitem__(self, name: str) -> Any:
        run = self._passes().get(name)
        if run is None:
            raise KeyError(f"no stage {name!r} in the pipeline; stages: {self.names()}")
        if isinstance(run, RuleStage):
            return stage_db(run.stage)
        if run is merge_pass:
            return MergeOptimizer()
        if isinstance(run, RewriterPass):
            return run.rewriter
        return _PassRewriter(name, run, RewriteQuery())

    def position(self, name: str) -> float:
        return _stage_positions()[name]

    def register(  # type: ignore[override]
        self, name: str, rewriter: Any, *tags: str, position: float | str = "last", **kwargs: Any
    ) -> None:
        """Add a stage ``name`` running ``rewriter`` (a graph rewriter, a node rewriter or
        a database) at ``position`` (PyTensor's numbers: canonicalize 1, specialize 2,
        fusion 49, inplace 75, final merge 100), selected by ``tags`` (``"fast_run"``:
        FAST_RUN runs it)."""
        if kwargs:
            raise TypeError(f"optdb.register takes no {sorted(kwargs)}")
        if name in self:
            raise ValueError(f"the pipeline already has a stage {name!r}")
        rewriter.name = name
        if rewriter_kind(rewriter) is None:
            raise TypeError(f"{rewriter!r} is not a node rewriter, a graph rewriter or a RewriteDatabase")
        positions = _stage_positions()
        if position == "last":
            position = max(positions.values(), default=0) + 1
        elif not isinstance(position, (int, float)):
            raise TypeError(f"position must be a number or 'last', got {position!r}")
        index = sum(1 for p in positions.values() if p <= position)
        PIPELINE.insert(index, (name, f"{rewriter!r}, registered in optdb", RewriterPass(rewriter)))
        STAGE_TAGS[name] = frozenset(tags)
        STAGE_POSITIONS[name] = position
        _ADDED_STAGES.add(name)

    def unregister(self, name: str) -> None:
        """Remove a stage added with :meth:`register`."""
        if name not in _ADDED_STAGES:
            raise KeyError(f"{name!r} is not a stage added with optdb.register")
        PIPELINE[:] = [entry for entry in PIPELINE if entry[0] != name]
        STAGE_TAGS.pop(name, None)
        STAGE_POSITIONS.pop(name, None)
        _ADDED_STAGES.discard(name)

    def __query__(self, q: RewriteDatabaseQuery) -> list[Any]:
        rq = RewriteQuery(include=q.include, exclude=q.exclude, require=q.require)
        positions = _stage_positions()
        return [
            _PassRewriter(name, run, rq)
            for name, _, run in PIPELINE
            if _stage_selected(name, q.include, q.exclude, q.require) and positions[name] < q.position_cutoff
        ]

    def query(
        self, *tags: Any, position_cutoff: float | None = None, **kwtags: Any
    ) -> SequentialGraphRewriter:
        q = _as_query(tags, kwtags)
        if position_cutoff is not None:
            q = q._with(position_cutoff=position_cutoff)
        selected = [(_stage_positions()[r.name], r) for r in self.__query__(q)]
        selected += [(p, r) for r, p in q.extra_rewrites if p < q.position_cutoff]
        selected.sort(key=lambda pr: pr[0])
        return SequentialGraphRewriter(*(r for _, r in selected))

    def print_summary(self, stream: Any = None) -> None:
        positions = _stage_positions()
        for name, purpose, _ in PIPELINE:
            tags = sorted(STAGE_TAGS.get(name, {"fast_run"}))
            print(f"{positions[name]:>7g} {name}: {purpose} {tags}", file=stream)

    def __repr__(self) -> str:
        return f"optdb({self.names()})"


#: PyTensor's database of the compilation pipeline: a view of :data:`PIPELINE`.
optdb = PipelineDB()
default_database["optdb"] = optdb

OPT_FAST_RUN = RewriteDatabaseQuery(include=["fast_run"])
OPT_FAST_COMPILE = RewriteDatabaseQuery(include=["fast_compile"])
OPT_MERGE = RewriteDatabaseQuery(include=["merge"])
OPT_NONE = RewriteDatabaseQuery(include=[])


# tiered: generated Python at once, Numba kernels for hot fused loops compiled in the
# background when Numba is installed (arignote.link.numba.linker)
FAST_RUN = Mode(NumbaLinker(jit="background" if numba_available() else "never"), "fast_run", name="FAST_RUN")
FAST_COMPILE = Mode(VMLinker(), "fast_compile", name="FAST_COMPILE")
#: tier 2 forced: the whole graph as one Numba function (else every per-node kernel),
#: compiled (or loaded from the disk cache) by function()
NUMBA = Mode(NumbaLinker(jit="sync"), "fast_run", name="NUMBA")
#: the per-node Numba kernels forced, without the whole-graph function (tests the kernels)
NUMBA_KERNELS = Mode(NumbaLinker(jit="sync", whole_graph="never"), "fast_run", name="NUMBA_KERNELS")
#: the rewrite tags (and stages) the JAX mode leaves out (why: :mod:`arignote.link.jax.linker`)
JAX_EXCLUDED: tuple[str, ...] = ("inplace", "fusion", "blas")


class _JAXLinkerOnFirstUse:
    """The linker of :data:`JAX` until it first links a graph: then it imports the JAX backend
    and hands over to a :class:`~arignote.link.jax.linker.JAXLinker`, so that the JAX mode
    exists as ``arignote.compile.JAX`` (as in PyTensor) while ``import arignote`` never
    imports JAX. Without JAX, linking raises the ImportError that says how to install it."""

    __slots__ = ("_linker",)

    def __init__(self) -> None:
        self._linker: Any = None

    def resolve(self) -> Any:
        """The JAXLinker (JAX imported on the first call)."""
        if self._linker is None:
            self._linker = _jax_linker()
        return self._linker

    def make_vm(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve().make_vm(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.resolve(), name)

    def __repr__(self) -> str:
        return "JAXLinker(device_outputs=False)"


#: the JAX backend (one ``jax.jit``-ed function per graph); JAX is imported when it first
#: links a graph. ``get_mode("JAX")`` gives the same mode with the JAXLinker made at once.
JAX = Mode(_JAXLinkerOnFirstUse(), RewriteQuery().excluding(*JAX_EXCLUDED), name="JAX")
predefined_modes: dict[str, Any] = {
    "FAST_RUN": FAST_RUN,
    "FAST_COMPILE": FAST_COMPILE,
    "PYTHON": FAST_RUN,
    "NUMBA": NUMBA,
    "NUMBA_KERNELS": NUMBA_KERNELS,
}


#: the optimizers ``Mode(optimizer=name)`` knows, by name (PyTensor's name for the table)
predefined_optimizers = _OPTIMIZERS


def register_linker(name: str, linker: Any) -> None:
    """Make ``linker`` available as ``Mode(linker=name)``."""
    if name in predefined_linkers:
        raise ValueError(f"Linker {name!r} is already registered")
    predefined_linkers[name] = linker


def register_optimizer(name: str, opt: Any) -> None:
    """Make ``opt`` (a RewriteQuery or PyTensor's RewriteDatabaseQuery) available as
    ``Mode(optimizer=name)``."""
    if name in _OPTIMIZERS:
        raise ValueError(f"Optimizer {name!r} is already registered")
    if isinstance(opt, RewriteDatabaseQuery):
        opt = RewriteQuery.from_database_query(opt)
    if not isinstance(opt, RewriteQuery):
        raise TypeError(f"register_optimizer needs a RewriteQuery or RewriteDatabaseQuery, got {opt!r}")
    _OPTIMIZERS[name] = opt


def register_mode(name: str, mode: Any) -> None:
    """Make ``mode`` available to ``get_mode(name)`` and ``function(mode=name)``."""
    if name in predefined_modes:
        raise ValueError(f"Mode {name!r} is already registered")
    predefined_modes[name] = mode


def get_mode(mode: Any = None) -> Mode:
    """A Mode from a name, a Mode, or ``None`` (``config.mode``)."""
    if mode is None:
        mode = config.mode
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str):
        if mode not in predefined_modes and mode in ("DebugMode", "DEBUG_MODE"):
            from arignote.compile.debug.debugmode import DebugMode

            return DebugMode()
        if mode not in predefined_modes and mode == "JAX":
            predefined_modes["JAX"] = _jax_module().jax_mode()
            return predefined_modes["JAX"]
        if mode not in predefined_modes and mode == "NanGuardMode":
            from arignote.compile.debug.nanguardmode import NanGuardMode

            return NanGuardMode()
        if mode in predefined_modes:
            return predefined_modes[mode]
        raise ValueError(
            f"Unknown mode {mode!r}; known: {[*sorted(predefined_modes), 'DebugMode', 'JAX', 'NanGuardMode']}"
        )
    raise TypeError(f"mode must be a Mode, a mode name or None, got {mode!r}")


def _jax_module() -> Any:
    """The JAX backend's linker module, imported on first use: JAX is an optional
    dependency, and ``import arignote`` never imports it."""
    try:
        from arignote.link.jax import linker
    except ModuleNotFoundError as err:
        if err.name is None or err.name.split(".")[0] not in ("jax", "jaxlib"):
            raise
        raise ImportError(
            "mode='JAX' (linker 'jax') needs JAX, which is not installed: pip install 'arignote[jax]'"
        ) from err
    return linker


def _jax_linker() -> Any:
    """``Mode(linker="jax")``'s linker (see :func:`_jax_module`)."""
    return _jax_module().JAXLinker()


def get_default_mode() -> Mode:
    return get_mode(None)
