"""Rewriting under DebugMode: keep the graph as written and record every replacement;
check that rewriting is stable; after each call, compare the rewritten graph's values with
those of the graph as written."""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from arignote.compile.debug.checks import _Checks
from arignote.compile.debug.describe import _graph_text, _graph_text_fg, _indent
from arignote.compile.debug.errors import BadOptimization, StochasticOrder
from arignote.compile.debug.values import _MISSING, _copy, _values_eq
from arignote.compile.mode import RewriteQuery
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.features import Feature
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.engine import InputSwap
from arignote.link.python import python_thunk
from arignote.link.vm import VM, VMLinker

__all__ = ["DebugRewriteQuery", "graph_signature"]


@dataclass
class _RewriteRecord:
    """What DebugMode keeps of a rewrite run: the graph before it, the map from the
    rewritten graph's original variables to their copies there, the replacements made."""

    original: FunctionGraph
    equiv: dict
    replacements: list[tuple[Variable, Variable, Any]]


_records: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _ReplacementTracker(Feature):
    def __init__(self) -> None:
        self.replacements: list[tuple[Variable, Variable, Any]] = []
        self._seen: set = set()

    def on_change_input(
        self, fgraph: FunctionGraph, node: Apply, i: int, old: Variable, new: Variable, reason: Any = None
    ) -> None:
        if isinstance(reason, InputSwap):  # the node computes what it did: check its output
            old = new = node.outputs[0]
        key = (id(old), id(new))
        if key in self._seen:
            return
        self._seen.add(key)
        self.replacements.append((old, new, reason))


def _constant_key(var: Constant) -> str:
    data = var.data
    try:
        arr = np.asarray(data)
        if arr.dtype.kind in "biufc":
            digest = hashlib.sha1(arr.tobytes()).hexdigest()[:16]
            return f"{var.type}:{arr.dtype}{arr.shape}:{digest}"
    except Exception:
        pass
    return f"{var.type}:{data!r}"


def graph_signature(fgraph: FunctionGraph) -> tuple[str, ...]:
    """A structural fingerprint of ``fgraph``'s outputs, independent of node identities."""
    keys: dict[Variable, str] = {v: f"in{k}" for k, v in enumerate(fgraph.inputs)}

    def key(v: Variable) -> str:
        k = keys.get(v)
        if k is not None:
            return k
        if isinstance(v, Constant):
            return "const:" + _constant_key(v)
        return f"orphan:{v.type}"

    for node in fgraph.toposort():
        op = node.op
        text = f"{type(op).__module__}.{type(op).__qualname__}:{op}(" + ",".join(key(i) for i in node.inputs)
        digest = hashlib.sha1(text.encode()).hexdigest()
        for out in node.outputs:
            keys[out] = f"{digest}.{out.index}:{out.type}"
    return tuple(key(o) for o in fgraph.outputs)


@dataclass(frozen=True)
class DebugRewriteQuery(RewriteQuery):
    """The rewrite query of a :class:`DebugMode`: rewrites like ``RewriteQuery`` but keeps
    a copy of the graph as written and records each replacement (for the run-time checks),
    then re-runs the rewrites ``patience`` times on fresh copies to check they are stable.

    ``inner``: a custom ``RewriteQuery`` subclass whose own ``__call__`` does the rewriting.
    """

    patience: int = 10
    inner: Any = None

    @classmethod
    def wrap(cls, query: RewriteQuery, patience: int) -> DebugRewriteQuery:
        if isinstance(query, DebugRewriteQuery):
            return query if query.patience == patience else replace(query, patience=patience)
        inner = None if type(query) is RewriteQuery else query
        return cls(
            include=query.include,
            exclude=query.exclude,
            require=query.require,
            stages=query.stages,
            patience=patience,
            inner=inner,
        )

    def including(self, *tags: str) -> DebugRewriteQuery:
        inner = self.inner.including(*tags) if self.inner is not None else None
        return replace(self, include=self.include | set(tags), inner=inner)

    def excluding(self, *tags: str) -> DebugRewriteQuery:
        inner = self.inner.excluding(*tags) if self.inner is not None else None
        return replace(self, exclude=self.exclude | set(tags), inner=inner)

    def requiring(self, *tags: str) -> DebugRewriteQuery:
        inner = self.inner.requiring(*tags) if self.inner is not None else None
        return replace(self, require=self.require | set(tags), inner=inner)

    def _rewrite(self, fgraph: FunctionGraph) -> dict[str, float]:
        if self.inner is not None:
            return self.inner(fgraph)
        return RewriteQuery.__call__(self, fgraph)

    def __call__(self, fgraph: FunctionGraph) -> dict[str, float]:
        original, equiv = _clone(fgraph)
        tracker = _ReplacementTracker()
        fgraph.attach_feature(tracker)
        try:
            timings = self._rewrite(fgraph)
        finally:
            fgraph.remove_feature(tracker)
        _records[fgraph] = _RewriteRecord(original, equiv, tracker.replacements)
        if self.patience > 0:
            expected = graph_signature(fgraph)
            for attempt in range(self.patience):
                trial = _clone(original)[0]
                self._rewrite(trial)
                got = graph_signature(trial)
                if got != expected:
                    diff = [k for k, (a, b) in enumerate(zip(expected, got)) if a != b]
                    raise StochasticOrder(
                        f"StochasticOrder: rewriting the same graph again (attempt {attempt + 2}) gave "
                        f"a different graph for output(s) {diff}: some rewrite depends on memory "
                        "addresses, set/dict iteration order or randomness.\n"
                        f"  first rewrite:\n{_indent(_graph_text_fg(fgraph))}\n"
                        f"  attempt {attempt + 2}:\n{_indent(_graph_text_fg(trial))}"
                    )
        return timings


def _clone(fgraph: FunctionGraph) -> tuple[FunctionGraph, dict]:
    """A copy of ``fgraph`` that rewriting ``fgraph`` cannot touch: inner graphs (fused
    kernels, scan) are copied too where their Ops know how."""
    try:
        return fgraph.clone_get_equiv(check_integrity=False, attach_feature=False, clone_inner_graphs=True)
    except NotImplementedError:
        return fgraph.clone_get_equiv(check_integrity=False, attach_feature=False)


def _run_node(node: Apply, values: list[Any]) -> list[Any]:
    """The outputs of ``node`` on input ``values`` through the Python backend's thunk (the
    one the function runs), in scratch cells (inputs of an Op that destroys some are
    copied first)."""
    if getattr(node.op, "destroy_map", None):
        values = [_copy(v) for v in values]
    storage: dict = {v: [val] for v, val in zip(node.inputs, values)}
    computed: dict = {v: [True] for v in node.inputs}
    for out in node.outputs:
        storage[out] = [None]
        computed[out] = [False]
    thunk = python_thunk(node.op, node, storage, computed, [], None)
    for _ in range(len(node.inputs) + 2):  # a lazy thunk asks again until it is done
        if not thunk():
            break
    return [storage[out][0] for out in node.outputs]


def _depths(variables: Sequence[Variable]) -> dict[Variable, int]:
    """Longest path from a root to each of ``variables`` (iterative), over whatever graph
    their owners' inputs form now: replaced-away nodes included."""
    depth: dict[Variable, int] = {}
    for target in variables:
        stack = [target]
        while stack:
            var = stack[-1]
            if var in depth:
                stack.pop()
                continue
            owner = var.owner
            if owner is None:
                depth[var] = 0
                stack.pop()
                continue
            pending = [i for i in owner.inputs if i not in depth]
            if pending:
                stack.extend(pending)
                continue
            d = 1 + max((depth[i] for i in owner.inputs), default=0)
            for out in owner.outputs:
                depth[out] = d
            stack.pop()
    return depth


class _DebugVM(VM):
    """Runs the checked VM, then (when the rewrites were recorded) the graph as written on
    copies of the same inputs, and compares the two: every variable a rewrite put in place
    of another, and every output."""

    def __init__(
        self, vm: Any, fgraph: FunctionGraph, input_storage: Sequence[list], checks: _Checks, record: Any
    ):
        self.vm = vm
        self.fgraph = fgraph
        self.input_cells = list(input_storage)
        self.checks = checks
        self.record = record
        self.orig_vm = None
        if record is None:
            return
        original, equiv = record.original, record.equiv
        self.input_pos = {v: k for k, v in enumerate(fgraph.inputs)}
        orig_pos = {equiv[v]: k for v, k in self.input_pos.items() if v in equiv}
        if any(v not in orig_pos for v in original.inputs):
            return  # the inputs changed since rewriting: cannot line the two graphs up
        self.orig_cells = [[None] for _ in original.inputs]
        self.orig_input_pos = [orig_pos[v] for v in original.inputs]
        self.orig_vm, _ = VMLinker(allow_gc=False).make_vm(original, self.orig_cells, [])
        self.expectations = self._expectations(record)
        self.depth = _depths([e[0] for e in self.expectations])
        checks.watch = {e[0] for e in self.expectations if e[0] in fgraph.variables} | set(fgraph.outputs)

    @staticmethod
    def _expectations(record: _RewriteRecord) -> list[tuple[Variable, Variable, tuple, Variable]]:
        """``(new, original_var, reasons, old)``: ``new`` must take the value of
        ``original_var`` (of the graph as written), which ``old`` stood for when the
        rewrites ``reasons`` replaced it, one after the other, by ``new``."""
        equiv = record.equiv
        derived: dict[Variable, tuple[Variable, tuple]] = {}
        found = []
        for old, new, reason in record.replacements:
            if old in equiv:
                base = (equiv[old], (reason,))
            elif old in derived:
                orig, reasons = derived[old]
                base = (orig, (*reasons, reason))
            else:
                continue
            if new not in derived:
                derived[new] = base
            found.append((new, base[0], base[1], old))
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.vm, name)

    def __call__(self) -> None:
        checks = self.checks
        checks.values.clear()
        if self.orig_vm is None:
            self.vm()
            return
        snapshot = [_copy(c[0]) for c in self.input_cells]
        self.vm()
        try:
            self._check_rewrites(snapshot)
        finally:
            checks.values.clear()

    # -- values -----------------------------------------------------------------------------

    def _original_value(self, var: Variable) -> Any:
        if isinstance(var, Constant):
            return var.data
        vm = self.orig_vm
        cell = vm.storage_map.get(var)
        if cell is None or cell[0] is None:
            return _MISSING
        flag = vm.compute_map.get(var)
        if flag is not None and not flag[0]:
            return _MISSING
        return cell[0]

    def _known_value(self, var: Variable, snapshot: list[Any], memo: dict) -> Any:
        if isinstance(var, Constant):
            return var.data
        pos = self.input_pos.get(var)
        if pos is not None:
            return snapshot[pos]
        value = self.checks.values.get(var, _MISSING)
        if value is not _MISSING:
            return value
        return memo.get(var, _MISSING)

    def _value(self, target: Variable, snapshot: list[Any], memo: dict) -> Any:
        """The value of ``target`` in the rewritten graph: recorded while the function ran
        or, for a variable rewriting made and then replaced again, computed from its inputs
        through the nodes' thunks (``_MISSING`` when that fails)."""
        value = self._known_value(target, snapshot, memo)
        if value is not _MISSING or target in memo:
            return value
        stack = [target]
        while stack:
            var = stack[-1]
            if var in memo or self._known_value(var, snapshot, memo) is not _MISSING:
                stack.pop()
                continue
            owner = var.owner
            if owner is None:
                memo[var] = _MISSING  # a root that is neither an input nor a constant
                stack.pop()
                continue
            values = [self._known_value(i, snapshot, memo) for i in owner.inputs]
            pending = [i for i, v in zip(owner.inputs, values) if v is _MISSING and i not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if any(v is _MISSING for v in values):
                results = [_MISSING] * len(owner.outputs)
            else:
                try:
                    results = _run_node(owner, values)
                except Exception:
                    results = [_MISSING] * len(owner.outputs)
            for out, result in zip(owner.outputs, results):
                memo[out] = _MISSING if result is None else result
        return self._known_value(target, snapshot, memo)

    # -- the comparison -------------------------------------------------------------------

    def _check_rewrites(self, snapshot: list[Any]) -> None:
        record = self.record
        for cell, pos in zip(self.orig_cells, self.orig_input_pos):
            cell[0] = _copy(snapshot[pos])
        try:
            self.orig_vm()
        except Exception as err:
            raise BadOptimization(
                "BadOptimization: the graph as written raised an error on these inputs, but the "
                f"rewritten graph did not: {type(err).__name__}: {err}\n"
                f"  rewrites applied: {self._reasons()}"
            ) from err
        memo: dict = {}
        worst = None
        for k, (new, orig, reasons, old) in enumerate(self.expectations):
            expected = self._original_value(orig)
            if expected is _MISSING:
                continue
            got = self._value(new, snapshot, memo)
            if got is _MISSING or _values_eq(new, expected, got, approx=True) is not False:
                continue
            rank = (self.depth.get(new, 0), k)  # the most upstream mismatch is the culprit
            if worst is None or rank < worst[0]:
                worst = (rank, new, orig, reasons, old, expected, got)
        if worst is not None:
            _, new, orig, reasons, old, expected, got = worst
            raise BadOptimization(
                old,
                new,
                expected,
                got,
                reason=reasons if len(reasons) > 1 else reasons[0],
                old_graph=_graph_text(orig),
                new_graph=_graph_text(new),
                original_r=orig if orig is not old else None,
            )
        original = record.original
        for k, out in enumerate(self.fgraph.outputs):
            if k >= len(original.outputs):
                break
            orig = original.outputs[k]
            expected = self._original_value(orig)
            got = self._known_value(out, snapshot, memo)
            if got is _MISSING:
                cell = self.vm.storage_map.get(out)
                got = cell[0] if cell is not None and cell[0] is not None else _MISSING
            if expected is _MISSING or got is _MISSING:
                continue
            if _values_eq(out, expected, got, approx=True) is False:
                raise BadOptimization(
                    orig,
                    out,
                    expected,
                    got,
                    reason=self._reasons(),
                    old_graph=_graph_text(orig),
                    new_graph=_graph_text(out),
                    output_idx=k,
                )

    def _reasons(self) -> str:
        names = list(dict.fromkeys(str(r) for _, _, r in self.record.replacements))
        if len(names) > 12:
            names = [*names[:12], f"... ({len(names) - 12} more)"]
        return ", ".join(names)
