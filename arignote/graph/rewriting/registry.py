"""The one registry of rewrites, and the index that hands each Op type its rules.

Rules live next to the Ops they concern and register themselves here with
``register_rewrite(stage, *tags)`` (or through PyTensor's spelling,
``register_canonicalize`` & co., or ``optdb["canonicalize"].register(...)``: views of this
registry, see :mod:`arignote.graph.rewriting.db`); a mode's query (include/exclude/require
tags) selects which run. The order of stages is the pipeline in :mod:`arignote.compile.mode`.
A pass over a stage gets its node rules as a :class:`RulesByOp`: each node is offered only
the rules that track its Op's class (or a base class of it), never every rule.

This module sits below the engine (:mod:`arignote.graph.rewriting.basic` imports it to
register constant folding), so it knows a rule only by what it uses of it: ``name``,
``tracks`` and ``transform`` (a node rewriter), ``apply`` (a graph rewriter) or ``query``
(a database of rewriters).
"""

from __future__ import annotations

import bisect
import copy
import inspect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from arignote.graph.rewriting.unify import OpPattern

if TYPE_CHECKING:  # for annotations only: basic imports this module
    from arignote.graph.rewriting.basic import NodeRewriter

__all__ = [
    "RewriteRegistry",
    "RulesByOp",
    "register_rewrite",
    "rewrite_registry",
    "rule_needs",
    "rule_tracks",
]


def rule_tracks(rule: Any) -> tuple | None:
    """What ``rule`` tracks, as a tuple of Op classes, Op instances and OpPatterns, or
    None for every node. Accepts arignote's ``tracks`` attribute (a tuple, or None) and
    PyTensor's ``tracks()`` method (a list, or None)."""
    tracks = getattr(rule, "tracks", None)
    if tracks is None or isinstance(tracks, tuple):
        return tracks or None
    if inspect.ismethod(tracks) or inspect.isfunction(tracks):
        tracks = tracks()
    if tracks is None:
        return None
    if isinstance(tracks, type) or not isinstance(tracks, Iterable):
        tracks = (tracks,)
    return tuple(tracks) or None


def rule_needs(rule: Any) -> tuple | None:
    """What ``rule`` needs somewhere in the graph to match anything (its ``needs``: Op
    classes or OpPatterns decided by types, e.g. ``elemwise_of(Exp)``), or None."""
    needs = getattr(rule, "needs", None)
    return tuple(needs) if needs else None


class RulesByOp:
    """The node rules of one pass, indexed by Op type (and by the types of chosen Op
    parameters, e.g. an Elemwise's ``scalar_op``).

    ``for_op(op)`` gives, in the order of ``rules``, the rules that track a class in
    ``type(op).__mro__``, the rules that track no Op (they see every node: constant
    folding), the rules that track an :class:`OpPattern` decided by types alone
    (``OpPattern(Elemwise, scalar_op=OpPattern(Log))``: an ``Elemwise`` whose ``scalar_op``
    is a ``Log``), and the rules that track Op instances or other OpPatterns (each paired
    with those, one of which the node's Op must equal or match). It is computed once per
    key (the Op's type and the types of the parameters such patterns name) and cached, so
    a pass costs one dictionary look-up per node, and a rule about ``log`` is never
    offered an ``add``.

    A pass over a graph uses :meth:`for_graph`'s copy, which also leaves out a rule that
    declares ``needs`` (say ``local_expm1``, offered every sum, needs an ``exp``) while the
    graph has no node of what it needs: it could not match. :meth:`note` tells the copy of
    each node the pass brings in, and a rule is offered again as soon as one is there.
    """

    def __init__(self, rules: Iterable[NodeRewriter]):
        self.rules: tuple[NodeRewriter, ...] = tuple(rules)
        self._tracks = [rule_tracks(r) for r in self.rules]
        self._needs = [rule_needs(r) for r in self.rules]
        for rule, needs in zip(self.rules, self._needs):
            for t in needs or ():
                if not (isinstance(t, type) or _decided_by_types(t)):
                    raise TypeError(
                        f"{rule!r}: needs lists Op classes or OpPatterns decided by types, got {t!r}"
                    )
        params = {
            name
            for tracks in [*self._tracks, *self._needs]
            for t in tracks or ()
            if _decided_by_types(t)
            for name, _ in t.parameters
        }
        self._params: tuple[str, ...] = tuple(sorted(params))
        self._cache: dict[tuple, tuple[tuple[NodeRewriter, tuple | None], ...]] = {}
        self._by_op: dict[int, tuple] = {}  # id(op) -> (op, for_op(op)): no key to compute
        self._waiting: set[int] = set()  # rules whose needs no node of the graph meets
        self._seen: set | None = None  # the keys of the graph's nodes (for_graph's copies)

    def __len__(self) -> int:
        return len(self.rules)

    def for_op(self, op: Any) -> tuple[tuple[NodeRewriter, tuple | None], ...]:
        """``(rule, instances)`` pairs for a node whose Op is ``op``: ``instances`` is
        None when the rule applies, else the tracked Op instances (or OpPatterns) one of
        which ``op`` must equal (match)."""
        hit = self._by_op.get(id(op))
        if hit is not None:  # (the entry holds the op: its id stays its own)
            return hit[1]
        found = self._for_key(self._key(op))
        if len(self._by_op) > 65536:
            self._by_op.clear()
        self._by_op[id(op)] = (op, found)
        return found

    def _key(self, op: Any) -> tuple:
        if self._params:
            return (type(op), *[type(getattr(op, p, None)) for p in self._params])
        return (type(op),)

    def for_graph(self, nodes: Iterable[Any]) -> tuple[RulesByOp, list]:
        """For one pass over a graph of ``nodes``: a copy that offers the rules declaring
        ``needs`` only once the graph has a node they need (:meth:`note` tells it of the
        nodes the pass brings in), and the nodes some rule of this index tracks."""
        view = copy.copy(self)
        view._cache = {}
        view._by_op = {}
        view._seen = set()
        view._waiting = {i for i, needs in enumerate(self._needs) if needs}
        tracked = []
        keys: dict[int, tuple] = {}  # id(op) -> its key (the nodes keep their ops alive)
        for node in nodes:
            op = node.op
            key = keys.get(id(op))
            if key is None:
                key = keys[id(op)] = self._key(op)  # (one key for both questions)
            view._note_key(key)
            if self._for_key(key):
                tracked.append(node)
        return view, tracked

    def note(self, op: Any) -> None:
        """A node of ``op`` is in the graph (see :meth:`for_graph`): the rules needing
        one like it are offered nodes from now on."""
        if self._waiting:
            self._note_key(self._key(op))

    def _note_key(self, key: tuple) -> None:
        seen = self._seen
        if not self._waiting or seen is None or key in seen:
            return
        seen.add(key)
        mro = set(key[0].__mro__)
        param_types = dict(zip(self._params, key[1:]))
        woken = {
            i
            for i in self._waiting
            if any(
                t in mro if isinstance(t, type) else _types_match(t, key[0], param_types)
                for t in self._needs[i]
            )
        }
        if woken:
            self._waiting -= woken
            self._cache.clear()
            self._by_op.clear()

    def for_op_type(self, op_type: type) -> tuple[tuple[NodeRewriter, tuple | None], ...]:
        """As :meth:`for_op`, for any Op of ``op_type``: rules tracking patterns on its
        parameters come with those patterns, to be matched per Op."""
        return self._for_key((op_type,))

    def _for_key(self, key: tuple) -> tuple[tuple[NodeRewriter, tuple | None], ...]:
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = tuple(self._select(key))
        return found

    def _select(self, key: tuple) -> Iterable[tuple[NodeRewriter, tuple | None]]:
        op_type = key[0]
        mro = set(op_type.__mro__)
        param_types = dict(zip(self._params, key[1:])) if len(key) > 1 else None
        waiting = self._waiting
        for k, (rule, tracks) in enumerate(zip(self.rules, self._tracks)):
            if k in waiting:
                continue
            if tracks is None:
                yield rule, None
                continue
            if any(isinstance(t, type) and t in mro for t in tracks):
                yield rule, None
                continue
            if param_types is not None and any(
                _decided_by_types(t) and _types_match(t, op_type, param_types) for t in tracks
            ):
                yield rule, None
                continue
            # Ops compare by value (``__props__``), possibly across classes: these are
            # checked per node (see ``op_matches``)
            instances = tuple(
                t
                for t in tracks
                if not isinstance(t, type)
                and (not isinstance(t, OpPattern) or issubclass(op_type, t.op_type))
                and not (param_types is not None and _decided_by_types(t))
            )
            if instances:
                yield rule, instances

    def __repr__(self) -> str:
        return f"RulesByOp({[r.name for r in self.rules]})"


def _decided_by_types(track: Any) -> bool:
    """Whether ``track`` is an OpPattern whose match follows from the Op's type and the
    types of its parameters: each parameter expects an OpPattern with no parameters of
    its own (an instance of a class)."""
    return (
        isinstance(track, OpPattern)
        and isinstance(track.op_type, type)
        and bool(track.parameters)
        and all(isinstance(v, OpPattern) and not v.parameters for _, v in track.parameters)
    )


def _types_match(pattern: OpPattern, op_type: type, param_types: dict[str, type]) -> bool:
    if not issubclass(op_type, pattern.op_type):
        return False
    return all(issubclass(param_types[name], expected.op_type) for name, expected in pattern.parameters)


def op_matches(op: Any, instances: tuple) -> bool:
    """Whether ``op`` equals one of ``instances`` (or matches one that is an OpPattern)."""
    return any(t.match_op(op) if isinstance(t, OpPattern) else op == t for t in instances)


def rewriter_kind(obj: Any) -> str | None:
    """``"node"``, ``"graph"`` or ``"db"``: what the registry holds; None for anything else."""
    if not isinstance(getattr(obj, "name", None), str):
        return None
    if hasattr(obj, "tracks") and hasattr(obj, "transform"):
        return "node"
    if hasattr(obj, "apply") and callable(obj.apply):
        return "graph"
    if hasattr(obj, "query") and hasattr(obj, "register"):
        return "db"
    return None


class RewriteRegistry:
    """``{stage: [(rule, tags)]}``, each stage ordered by position (registration order
    where none is given).

    A rule is tagged with its name, its stage (unless registered with
    ``use_stage_tag=False``) and ``tags``. Besides node rewriters, a stage may hold graph
    rewriters (run between rounds of the node rules until nothing changes; with
    ``final_rewriter=True`` after each round, with ``cleanup=True`` once at the end) and
    databases (queried with the mode's tags when the stage runs).
    """

    def __init__(self) -> None:
        self._rules: dict[str, list[tuple[Any, frozenset[str]]]] = {}
        self._meta: dict[tuple[str, str], dict[str, Any]] = {}

    def register(
        self,
        stage: str,
        rule: Any,
        *tags: str,
        position: float | None = None,
        final_rewriter: bool = False,
        cleanup: bool = False,
        use_stage_tag: bool = True,
    ) -> Any:
        """Register ``rule`` for ``stage``; it is tagged with its name, ``stage`` and ``tags``."""
        if rewriter_kind(rule) is None:
            raise TypeError(
                f"register a NodeRewriter (use @node_rewriter), a GraphRewriter or a RewriteDatabase, got {rule!r}"
            )
        if final_rewriter and cleanup:
            raise ValueError("a rewriter is either final_rewriter or cleanup, not both")
        entries = self._rules.setdefault(stage, [])
        if any(r.name == rule.name for r, _ in entries):
            raise ValueError(f"a rewrite named {rule.name!r} is already registered in stage {stage!r}")
        positions = [self.position(stage, r) for r, _ in entries]
        if position is None:
            position = (max(positions) + 1) if positions else 0
        entry = (rule, frozenset((rule.name, *((stage,) if use_stage_tag else ()), *tags)))
        entries.insert(bisect.bisect_right(positions, position), entry)
        self._meta[(stage, rule.name)] = {"position": position, "final": final_rewriter, "cleanup": cleanup}
        return rule

    def position(self, stage: str, rule: Any) -> float:
        meta = self._meta.get((stage, rule.name))
        if meta is not None:
            return meta["position"]
        entries = self._rules.get(stage, [])
        return next((i for i, (r, _) in enumerate(entries) if r is rule), len(entries))

    def role(self, stage: str, rule: Any) -> str:
        """``"final"``, ``"cleanup"`` or ``""`` for a graph rewriter of ``stage``."""
        meta = self._meta.get((stage, rule.name), {})
        return "final" if meta.get("final") else "cleanup" if meta.get("cleanup") else ""

    def unregister(self, stage: str, name: str) -> None:
        """Remove the rule named ``name`` from ``stage`` (KeyError if there is none)."""
        entries = self._rules.get(stage, [])
        kept = [(r, t) for r, t in entries if r.name != name]
        if len(kept) == len(entries):
            raise KeyError(f"no rewrite named {name!r} in stage {stage!r}")
        self._rules[stage] = kept
        self._meta.pop((stage, name), None)

    def entries(self, stage: str) -> list[tuple[Any, frozenset[str]]]:
        """``(rule, tags)`` of ``stage``, in order."""
        return list(self._rules.get(stage, []))

    def query(
        self, stage: str, include: Iterable[str], exclude: Iterable[str] = (), require: Iterable[str] = ()
    ) -> list[Any]:
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
        """The node rules :meth:`query` selects, indexed by Op type for one pass."""
        return RulesByOp(
            r for r in self.query(stage, include, exclude, require) if rewriter_kind(r) == "node"
        )

    def stages(self) -> list[str]:
        return list(self._rules)


rewrite_registry = RewriteRegistry()


def register_rewrite(stage: str, *tags: str, **kwargs: Any) -> Callable[[NodeRewriter], NodeRewriter]:
    """Decorator registering a rewriter for ``stage`` with ``tags`` (keywords as
    :meth:`RewriteRegistry.register`)."""

    def wrap(rule: NodeRewriter) -> NodeRewriter:
        return rewrite_registry.register(stage, rule, *tags, **kwargs)

    return wrap
