"""The machinery of matrix assumptions: keys, three-valued facts, inference rules per Op, and
the :class:`AssumptionFeature` that answers "is this Variable diagonal?" for a graph.

A fact about a Variable is a :class:`FactState`: ``TRUE``, ``FALSE``, ``UNKNOWN`` (nothing
known) or ``CONFLICT`` (evidence both ways: an error). It comes from, in this order of
strength of evidence, joined together:

* the user's declaration (:func:`~arignote.assumptions.specify.assume`);
* a rule registered for the Op that computes the Variable (:func:`register_assumption`), from
  what is known of the node's inputs for the same key;
* for a constant, a check of its value (:func:`register_constant_inference`);
* implications between keys (:func:`register_implies`): diagonal implies both triangular
  shapes and symmetric, so a diagonal matrix is symmetric, and a matrix known not to be
  symmetric is not diagonal.

Facts are worked out for all keys at once per Variable, walking the graph from its inputs
without recursion, and cached in the feature until the graph changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntFlag
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.features import AlreadyThere, Feature
from arignote.graph.fg import FunctionGraph
from arignote.graph.traversal import ancestors

__all__ = [
    "ALL_KEYS",
    "DIAGONAL",
    "IMPLIES",
    "LOWER_TRIANGULAR",
    "ORTHOGONAL",
    "PERMUTATION",
    "POSITIVE_DEFINITE",
    "SELECTION",
    "SYMMETRIC",
    "UPPER_TRIANGULAR",
    "AssumptionFeature",
    "AssumptionKey",
    "ConflictingAssumptionsError",
    "FactState",
    "assumption_tags",
    "check_assumption",
    "register_assumption",
    "register_constant_inference",
    "register_implies",
    "summarize_assumptions",
]


class FactState(IntFlag):
    """What is known of one property of one Variable. ``UNKNOWN`` (0) is no evidence; joining
    evidence is ``|``: ``TRUE | FALSE`` is ``CONFLICT``."""

    UNKNOWN = 0
    TRUE = 1
    FALSE = 2
    CONFLICT = 3

    @staticmethod
    def of(flag: bool | None) -> FactState:
        """``True`` -> TRUE, ``False`` -> FALSE, ``None`` -> UNKNOWN."""
        return FactState.UNKNOWN if flag is None else (FactState.TRUE if flag else FactState.FALSE)


class ConflictingAssumptionsError(ValueError):
    """Evidence says both that a Variable has a property and that it has not (for instance
    ``assume(x, diagonal=False)`` on a matrix built with ``pt.diag``)."""


@dataclass(frozen=True)
class AssumptionKey:
    """A named property of a matrix; ``short_name`` is its label in printed summaries."""

    name: str
    short_name: str = ""

    @property
    def label(self) -> str:
        return self.short_name or self.name

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


DIAGONAL = AssumptionKey("diagonal", "diag")
LOWER_TRIANGULAR = AssumptionKey("lower_triangular", "lower")
UPPER_TRIANGULAR = AssumptionKey("upper_triangular", "upper")
SYMMETRIC = AssumptionKey("symmetric", "sym")
POSITIVE_DEFINITE = AssumptionKey("positive_definite", "pd")
ORTHOGONAL = AssumptionKey("orthogonal", "orth")
SELECTION = AssumptionKey("selection", "sel")
PERMUTATION = AssumptionKey("permutation", "perm")

ALL_KEYS: tuple[AssumptionKey, ...] = (
    DIAGONAL,
    LOWER_TRIANGULAR,
    UPPER_TRIANGULAR,
    SYMMETRIC,
    POSITIVE_DEFINITE,
    ORTHOGONAL,
    SELECTION,
    PERMUTATION,
)

#: ``{stronger: [weaker, ...]}``: a TRUE stronger fact makes each weaker one TRUE
IMPLIES: dict[AssumptionKey, list[AssumptionKey]] = {}

#: the Variable's key state from its node: fn(key, op, feature, fgraph, node, input_states)
InferFactFn = Callable[[AssumptionKey, Any, "AssumptionFeature", Any, Apply, list], list]
ConstantInferFn = Callable[[Constant], FactState]

ASSUMPTION_INFER_REGISTRY: dict[tuple[AssumptionKey, type], InferFactFn] = {}
#: every key a feature works out: ALL_KEYS and the keys of user rules and implications
KNOWN_KEYS: list[AssumptionKey] = list(ALL_KEYS)


def _know(*keys: AssumptionKey) -> None:
    KNOWN_KEYS.extend(k for k in keys if k not in KNOWN_KEYS)


CONSTANT_INFER_REGISTRY: dict[AssumptionKey, ConstantInferFn] = {}


def register_implies(stronger: AssumptionKey, *weaker: AssumptionKey) -> None:
    """Declare that ``stronger`` being TRUE makes each of ``weaker`` TRUE (and so a FALSE
    weaker fact makes ``stronger`` FALSE)."""
    known = IMPLIES.setdefault(stronger, [])
    known.extend(w for w in weaker if w not in known)
    _know(stronger, *weaker)


register_implies(DIAGONAL, LOWER_TRIANGULAR, UPPER_TRIANGULAR, SYMMETRIC)
register_implies(POSITIVE_DEFINITE, SYMMETRIC)
register_implies(PERMUTATION, SELECTION, ORTHOGONAL)


def register_assumption(key: AssumptionKey, *op_types: type) -> Callable[[InferFactFn], InferFactFn]:
    """Decorator: ``fn`` infers ``key`` for the outputs of nodes whose Op is one of
    ``op_types`` (or a subclass). It is called as ``fn(key, op, feature, fgraph, node,
    input_states)`` with the inputs' states for ``key`` and returns one FactState per output
    (``feature.get(var, other_key)`` reads an input's other facts)."""
    if not op_types:
        raise TypeError(f"register_assumption({key}): give at least one Op class")

    _know(key)

    def decorate(fn: InferFactFn) -> InferFactFn:
        for op_type in op_types:
            ASSUMPTION_INFER_REGISTRY[(key, op_type)] = fn
        return fn

    return decorate


def register_constant_inference(key: AssumptionKey, fn: ConstantInferFn) -> None:
    """``fn(constant) -> FactState``: what the value of a constant says about ``key``."""
    _know(key)
    CONSTANT_INFER_REGISTRY[key] = fn


def _rule_for(key: AssumptionKey, op: Any) -> InferFactFn | None:
    for cls in type(op).__mro__:
        fn = ASSUMPTION_INFER_REGISTRY.get((key, cls))
        if fn is not None:
            return fn
    return None


def _is_matrix_like(var: Variable) -> bool:
    return getattr(var.type, "ndim", 0) >= 2


def _close(states: dict[AssumptionKey, FactState]) -> dict[AssumptionKey, FactState]:
    """Add what the implications say: TRUE flows from stronger to weaker keys, FALSE from
    weaker to stronger. Keys only; nothing about the graph."""
    out = dict(states)
    changed = True
    while changed:
        changed = False
        for stronger, weaker in IMPLIES.items():
            for w in weaker:
                if stronger not in out or w not in out:
                    continue
                if out[stronger] & FactState.TRUE and not out[w] & FactState.TRUE:
                    out[w] |= FactState.TRUE
                    changed = True
                if out[w] & FactState.FALSE and not out[stronger] & FactState.FALSE:
                    out[stronger] |= FactState.FALSE
                    changed = True
    return out


class AssumptionFeature(Feature):
    """Answers :meth:`get` (a Variable's state for a key) in one FunctionGraph, caching the
    answers until the graph changes. It also keeps the facts that rewrites recorded with
    :meth:`declare` (a declaration removed from the graph leaves its facts here, carried
    over when the Variable is replaced)."""

    def __init__(self) -> None:
        self.fgraph: FunctionGraph | None = None
        self.cache: dict[Variable, dict[AssumptionKey, FactState]] = {}
        self.declared: dict[Variable, dict[AssumptionKey, FactState]] = {}

    def on_attach(self, fgraph: FunctionGraph) -> None:
        if any(isinstance(f, AssumptionFeature) for f in fgraph._features if f is not self):
            raise AlreadyThere()
        self.fgraph = fgraph

    def on_detach(self, fgraph: FunctionGraph) -> None:
        self.fgraph = None
        self.cache.clear()

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        self.cache.clear()

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        self.cache.clear()

    def on_change_input(
        self, fgraph: FunctionGraph, node: Apply, i: int, var: Variable, new_var: Variable, reason: Any = None
    ) -> None:
        self.cache.clear()
        facts = self.declared.get(var)
        if facts:  # the replacement computes the same values: the declared facts hold for it
            self.declare(new_var, facts)

    def clone(self) -> AssumptionFeature:
        return AssumptionFeature()

    def declare(self, var: Variable, facts: dict[AssumptionKey, FactState]) -> None:
        """Record ``facts`` about ``var`` (joined with any recorded before)."""
        mine = self.declared.setdefault(var, {})
        for key, state in facts.items():
            mine[key] = mine.get(key, FactState.UNKNOWN) | state
        self.cache.clear()

    def get(self, var: Variable, key: AssumptionKey) -> FactState:
        """The state of ``key`` for ``var``; a ``ConflictingAssumptionsError`` when the
        evidence contradicts itself."""
        state = self.states(var).get(key, FactState.UNKNOWN)
        if state == FactState.CONFLICT:
            raise ConflictingAssumptionsError(
                f"{var} is said to be both {key} and not {key} (a declaration contradicts what the graph shows)"
            )
        return state

    def states(self, var: Variable) -> dict[AssumptionKey, FactState]:
        """Every key's state for ``var``, working out its ancestors' first (iteratively)."""
        cached = self.cache.get(var)
        if cached is not None:
            return cached
        stack = [var]
        while stack:
            v = stack[-1]
            if v in self.cache:
                stack.pop()
                continue
            node = v.owner
            if node is not None and _is_matrix_like(v):
                missing = [i for i in node.inputs if i not in self.cache]
                if missing:
                    stack.extend(missing)
                    continue
            self._infer(v)
            stack.pop()
        return self.cache[var]

    def _infer(self, var: Variable) -> None:
        node = var.owner
        if node is not None and _is_matrix_like(var):
            per_key = {}
            for key in KNOWN_KEYS:
                fn = _rule_for(key, node.op)
                if fn is None:
                    per_key[key] = [FactState.UNKNOWN] * len(node.outputs)
                    continue
                inputs = [self.cache[i][key] for i in node.inputs]
                result = list(fn(key, node.op, self, self.fgraph, node, inputs))
                if len(result) != len(node.outputs):
                    raise ValueError(
                        f"the {key} rule for {node.op} returned {len(result)} states for {len(node.outputs)} outputs"
                    )
                per_key[key] = result
            for out in node.outputs:
                states = {key: FactState(per_key[key][out.index]) for key in KNOWN_KEYS}
                self.cache[out] = self._with_declared(out, states)
            if var in self.cache:
                return
        states = dict.fromkeys(ALL_KEYS, FactState.UNKNOWN)
        if isinstance(var, Constant) and _is_matrix_like(var):
            for key, fn in CONSTANT_INFER_REGISTRY.items():
                states[key] = fn(var)
        self.cache[var] = self._with_declared(var, states)

    def _with_declared(self, var: Variable, states: dict) -> dict:
        for key, state in self.declared.get(var, {}).items():
            states[key] = states.get(key, FactState.UNKNOWN) | state
        return _close(states)


def _feature_of(fgraph: FunctionGraph) -> AssumptionFeature:
    for f in fgraph._features:
        if isinstance(f, AssumptionFeature):
            return f
    feature = AssumptionFeature()
    fgraph.attach_feature(feature)
    return feature


def check_assumption(fgraph: FunctionGraph | None, var: Any, key: AssumptionKey) -> bool:
    """Whether ``key`` is certainly TRUE for ``var`` in ``fgraph`` (attaching an
    :class:`AssumptionFeature` to it on first use). ``fgraph=None``: judged from ``var``'s
    own graph, without caching between calls."""
    if not isinstance(var, Variable):
        return False
    feature = AssumptionFeature() if fgraph is None else _feature_of(fgraph)
    return feature.get(var, key) == FactState.TRUE


def true_if(flag: bool) -> FactState:
    """TRUE when ``flag``, else UNKNOWN (a rule that can only confirm)."""
    return FactState.TRUE if flag else FactState.UNKNOWN


# --- what a constant's value says --------------------------------------------------------------


def _square_value(c: Constant) -> np.ndarray | None:
    value = np.asarray(c.data)
    if value.ndim < 2 or value.shape[-1] != value.shape[-2] or value.dtype.kind not in "biuf":
        return None
    return value


def _constant_rule(check: Callable[[np.ndarray], bool]) -> ConstantInferFn:
    def infer(c: Constant) -> FactState:
        value = _square_value(c)
        if value is None:
            return FactState.UNKNOWN
        return FactState.TRUE if check(value) else FactState.FALSE

    return infer


def _is_pd(v: np.ndarray) -> bool:
    if not np.array_equal(v, np.swapaxes(v, -1, -2)):
        return False
    try:
        np.linalg.cholesky(v.astype(float))
    except np.linalg.LinAlgError:
        return False
    return True


def _is_selection(v: np.ndarray) -> bool:
    # 0/1 entries, at most one 1 per row (a matrix that picks entries of what it multiplies)
    return bool(np.isin(v, (0, 1)).all() and (v.sum(axis=-1) <= 1).all())


def _is_permutation(v: np.ndarray) -> bool:
    return _is_selection(v) and bool((v.sum(axis=-1) == 1).all() and (v.sum(axis=-2) == 1).all())


def _is_orthogonal(v: np.ndarray) -> bool:
    f = v.astype(float)
    eye = np.eye(v.shape[-1])
    return bool(np.allclose(np.swapaxes(f, -1, -2) @ f, eye, atol=1e-12, rtol=0))


for _key, _check in (
    (DIAGONAL, lambda v: np.array_equal(v, v * np.eye(v.shape[-1], dtype=bool))),
    (LOWER_TRIANGULAR, lambda v: np.array_equal(v, np.tril(v))),
    (UPPER_TRIANGULAR, lambda v: np.array_equal(v, np.triu(v))),
    (SYMMETRIC, lambda v: np.array_equal(v, np.swapaxes(v, -1, -2))),
    (POSITIVE_DEFINITE, _is_pd),
    (ORTHOGONAL, _is_orthogonal),
    (SELECTION, _is_selection),
    (PERMUTATION, _is_permutation),
):
    register_constant_inference(_key, _constant_rule(_check))


# --- summaries (for printing) --------------------------------------------------------------------


def _implied_by(key: AssumptionKey) -> set[AssumptionKey]:
    """Every key whose TRUE makes ``key`` TRUE (through any chain of implications)."""
    out: set[AssumptionKey] = set()
    todo = [key]
    while todo:
        k = todo.pop()
        for stronger, weaker in IMPLIES.items():
            if k in weaker and stronger not in out:
                out.add(stronger)
                todo.append(stronger)
    return out


def summarize_assumptions(feature: AssumptionFeature, var: Variable) -> str:
    """The facts known of ``var`` as ``{label, !label}`` (TRUE facts, then FALSE ones with a
    ``!``), leaving out what another listed fact implies; ``""`` when nothing is known.

    >>> import arignote.tensor as pt
    >>> from arignote.assumptions import assume
    >>> x = assume(pt.dmatrix("x"), diagonal=True)
    >>> summarize_assumptions(AssumptionFeature(), x)
    '{diag}'
    """
    states = feature.states(var)
    true = {k for k, s in states.items() if s == FactState.TRUE}
    false = {k for k, s in states.items() if s == FactState.FALSE}
    shown = [k.label for k in ALL_KEYS if k in true and not (_implied_by(k) & true)]
    # a FALSE fact is implied when a weaker fact (one it implies) is FALSE too
    shown += [f"!{k.label}" for k in ALL_KEYS if k in false and not (set(IMPLIES.get(k, ())) & false)]
    return "{" + ", ".join(shown) + "}" if shown else ""


def assumption_tags(outputs: Any) -> dict:
    """``{variable: summary}`` for every Variable of the graph of ``outputs`` of which
    something is known (see :func:`summarize_assumptions`)."""
    outputs = [outputs] if isinstance(outputs, Variable) else list(outputs)
    feature = AssumptionFeature()
    tags = {}
    for var in ancestors(outputs):
        tag = summarize_assumptions(feature, var)
        if tag:
            tags[var] = tag
    return tags
