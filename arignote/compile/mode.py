"""Modes: which rewrites run (the pipeline) and which linker runs the result.

The pipeline is the list below, in order: ``(name, purpose, pass)``, where a pass is a
function ``pass(fgraph, query)`` that rewrites ``fgraph`` in place. Merging is one pass; a
rule stage is a :class:`RuleStage`, which applies the rules registered for it
(:func:`arignote.graph.rewriting.register_rewrite`) whose tags the mode's query selects.

>>> from arignote.compile.mode import get_mode
>>> m = get_mode("FAST_RUN").excluding("fusion")
>>> ("fusion" in m.query.exclude, m.linker)
(True, VMLinker(allow_gc=True))
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from arignote.configdefaults import config
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import apply_node_rewriters, merge_graph
from arignote.graph.rewriting.db import rewrite_registry
from arignote.link.vm import VMLinker

__all__ = [
    "PIPELINE",
    "RuleStage",
    "merge_pass",
    "RewriteQuery",
    "Mode",
    "FAST_RUN",
    "FAST_COMPILE",
    "get_mode",
    "get_default_mode",
    "register_mode",
    "predefined_modes",
    "predefined_linkers",
]

#: A pass: rewrites the FunctionGraph in place; the query says which rules may run.
Pass = Callable[[FunctionGraph, "RewriteQuery"], Any]


def merge_pass(fgraph: FunctionGraph, query: RewriteQuery) -> int:
    """Merge equal constants and duplicate computations (no rules: the query is not used)."""
    return merge_graph(fgraph)


@dataclass(frozen=True)
class RuleStage:
    """The pass of one rule stage: the rules registered for ``stage`` that the query
    selects, applied until none fires, each node offered only those tracking its Op."""

    stage: str

    def __call__(self, fgraph: FunctionGraph, query: RewriteQuery) -> int:
        rules = rewrite_registry.rules_by_op(self.stage, query.include, query.exclude, query.require)
        return apply_node_rewriters(fgraph, rules)


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
    ("fusion", "fuse chains of elementwise ops into single kernels", RuleStage("fusion")),
    ("inplace", "let ops overwrite inputs nobody else needs", RuleStage("inplace")),
    ("final_merge", "merge again what the stages made equal", merge_pass),
]


@dataclass(frozen=True)
class RewriteQuery:
    """Which rules run: those with a tag in ``include``, none in ``exclude``, all of
    ``require``. ``stages`` limits the pipeline stages that run at all."""

    include: frozenset = frozenset({"fast_run"})
    exclude: frozenset = frozenset()
    require: frozenset = frozenset()
    stages: tuple = tuple(name for name, _, _ in PIPELINE)

    def including(self, *tags: str) -> RewriteQuery:
        return replace(self, include=self.include | set(tags))

    def excluding(self, *tags: str) -> RewriteQuery:
        return replace(self, exclude=self.exclude | set(tags))

    def requiring(self, *tags: str) -> RewriteQuery:
        return replace(self, require=self.require | set(tags))

    def __call__(self, fgraph: FunctionGraph) -> dict[str, float]:
        """Rewrite ``fgraph`` in place, running the pass of each of ``stages`` in turn (a
        stage that is not in :data:`PIPELINE` applies the rules registered for it);
        returns seconds spent per stage."""
        passes = {name: run for name, _, run in PIPELINE}
        timings: dict[str, float] = {}
        for stage in self.stages:
            if stage in self.exclude:
                continue
            run = passes.get(stage) or RuleStage(stage)
            t0 = time.perf_counter()
            run(fgraph, self)
            timings[stage] = time.perf_counter() - t0
        return timings


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
}


@dataclass(frozen=True)
class Mode:
    """A compilation mode: a ``linker`` (what runs the graph) and an ``optimizer`` (which
    rewrites run). Either may be given by name: linkers ``"py"``/``"vm"``/``"cvm"``/
    ``"vm_nogc"``; optimizers ``"fast_run"``, ``"fast_compile"``, ``"merge"``, ``None``.
    """

    linker: Any = field(default_factory=VMLinker)
    optimizer: Any = "fast_run"
    name: str = "Mode"

    def __post_init__(self) -> None:
        linker = self.linker
        if linker is None:
            linker = VMLinker()
        elif isinstance(linker, str):
            if linker not in predefined_linkers:
                raise ValueError(f"Unknown linker {linker!r}; known: {sorted(predefined_linkers)}")
            linker = predefined_linkers[linker]
        object.__setattr__(self, "linker", linker)
        opt = self.optimizer
        if isinstance(opt, RewriteQuery):
            query = opt
        elif opt in _OPTIMIZERS:
            query = _OPTIMIZERS[opt]
        else:
            raise ValueError(f"Unknown optimizer {opt!r}; known: {[k for k in _OPTIMIZERS if k]}")
        object.__setattr__(self, "optimizer", query)

    @property
    def query(self) -> RewriteQuery:
        return self.optimizer

    def including(self, *tags: str) -> Mode:
        """The same mode, also running rules tagged with any of ``tags``."""
        return replace(self, optimizer=self.query.including(*tags))

    def excluding(self, *tags: str) -> Mode:
        """The same mode, without rules (or stages) tagged with any of ``tags``."""
        return replace(self, optimizer=self.query.excluding(*tags))

    def requiring(self, *tags: str) -> Mode:
        """The same mode, running only rules tagged with all of ``tags``."""
        return replace(self, optimizer=self.query.requiring(*tags))

    def clone(self, **kwargs: Any) -> Mode:
        return replace(self, **kwargs)

    def __str__(self) -> str:
        return f"{self.name}(linker={self.linker}, optimizer={self.query})"


FAST_RUN = Mode(VMLinker(), "fast_run", name="FAST_RUN")
FAST_COMPILE = Mode(VMLinker(), "fast_compile", name="FAST_COMPILE")
predefined_modes: dict[str, Any] = {"FAST_RUN": FAST_RUN, "FAST_COMPILE": FAST_COMPILE, "PYTHON": FAST_RUN}


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
        if mode not in predefined_modes and mode == "NanGuardMode":
            from arignote.compile.debug.nanguardmode import NanGuardMode

            return NanGuardMode()
        if mode in predefined_modes:
            return predefined_modes[mode]
        raise ValueError(
            f"Unknown mode {mode!r}; known: {[*sorted(predefined_modes), 'DebugMode', 'NanGuardMode']}"
        )
    raise TypeError(f"mode must be a Mode, a mode name or None, got {mode!r}")


def get_default_mode() -> Mode:
    return get_mode(None)
