"""The rewrite engine, and PyTensor's rewriting API on top of it.

**Node rewriters.** A :class:`NodeRewriter` looks at one node and returns ``None``/``False``
(no change), a list of replacements for ``node.outputs``, or a dict ``{old_variable:
new_variable}`` (with an optional ``"remove"`` key: nodes or variables the replacement
must remove). It says which Ops it concerns (``tracks``) so the engine only offers it
matching nodes. Write one with the :func:`node_rewriter` decorator or as a subclass
(``tracks()`` and ``transform(fgraph, node)``, as in PyTensor), or from patterns
(:class:`PatternNodeRewriter`, :class:`SubstitutionNodeRewriter`,
:class:`RemovalNodeRewriter`).

**One engine.** Node rewriters are applied by :func:`apply_node_rewriters`: a worklist of
nodes, started in topological order, to which only the nodes a change created (and the
clients of replaced variables) are added back, never a re-walk of the whole graph per
change; the rules of a pass are indexed by Op type
(:class:`~arignote.graph.rewriting.registry.RulesByOp`). :func:`in2out`, :func:`out2in`,
:class:`WalkingGraphRewriter` and :class:`EquilibriumGraphRewriter` are that worklist
(``in2out`` starts from the inputs, ``out2in`` from the outputs; both revisit what changed
until nothing fires). Every application is attributable: ``config.trace_rewrites``
prints which rule fired and where it is defined, ``config.optimizer_verbose`` prints each
replacement as PyTensor does.

**Graph rewriters** (:class:`GraphRewriter`, :func:`graph_rewriter`) rewrite a whole
FunctionGraph: ``rewrite(fgraph)`` = ``add_requirements(fgraph)`` + ``apply(fgraph)``.

>>> import arignote.tensor as pt
>>> from arignote.graph.fg import FunctionGraph
>>> x = pt.dvector("x")
>>> fg = FunctionGraph([x], [pt.exp(x) + pt.exp(x)])
>>> merge_graph(fg)
1
>>> len(fg.apply_nodes)
2
>>> @node_rewriter([pt.exp])
... def exp_to_sin(fgraph, node):
...     return [pt.sin(node.inputs[0])]
>>> in2out(exp_to_sin).rewrite(fg)
1
>>> sorted(str(n.op) for n in fg.apply_nodes)
['Add', 'Sin']
>>> fg = FunctionGraph([x], [1 - pt.erf(x)])
>>> _ = in2out(PatternNodeRewriter((pt.sub, 1, (pt.erf, "x")), (pt.erfc, "x"))).rewrite(fg)
>>> fg.outputs[0].owner.op
Erfc
"""

from __future__ import annotations

import copy as _copy
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TextIO

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.features import Feature
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.engine import (
    FromFunctionGraphRewriter,
    FromFunctionNodeRewriter,
    GraphRewriter,
    NodeRewriter,
    RewriteError,
    Rewriter,
    SequentialNodeRewriter,
    Tracks,
    _flat_node_rewriters,
    _is_node_rewriter,
    apply_node_rewriters,
    graph_rewriter,
    node_rewriter,
)
from arignote.graph.rewriting.merge import MergeFeature, MergeOptimizer, merge_graph
from arignote.graph.rewriting.registry import (
    RulesByOp,
    register_rewrite,
)
from arignote.graph.rewriting.unify import (
    PatternNode,
    _ConstrainedNode,
    _match_op,
    convert_strs_to_vars,
    match_pattern,
    pattern_to_str,
    reify_pattern,
)

__all__ = [
    "EquilibriumGraphRewriter",
    "FailureCallbackType",
    "FromFunctionGraphRewriter",
    "FromFunctionNodeRewriter",
    "GraphRewriter",
    "MergeFeature",
    "MergeOptimizer",
    "NodeRewriter",
    "PatternNodeRewriter",
    "RemovalNodeRewriter",
    "RemoveKeyType",
    "RewriteError",
    "Rewriter",
    "SequentialGraphRewriter",
    "SequentialNodeRewriter",
    "SubstitutionNodeRewriter",
    "Tracks",
    "TransformOutputType",
    "WalkingGraphRewriter",
    "apply_node_rewriters",
    "constant_folding",
    "copy_stack_trace",
    "dfs_rewriter",
    "graph_rewriter",
    "in2out",
    "inplace_graph_rewriter",
    "merge_dict",
    "merge_graph",
    "node_rewriter",
    "out2in",
    "walking_rewriter",
]

# annotations of node rewriters (PyTensor's names): what a node rewriter's ``transform``
# returns (False/None: no change; a list of replacements; a dict whose "remove" key lists
# Variables to remove), and a failure callback's signature
RemoveKeyType = Literal["remove"]
TransformOutputType = (
    bool | Sequence[Variable] | dict[Variable | RemoveKeyType, Variable | Sequence[Variable]] | None
)
FailureCallbackType = Callable[[Exception, Any, list[tuple[Variable, Any]], Any, Apply], None]


class WalkingGraphRewriter(GraphRewriter):
    """Applies node rewriters over the graph with the engine's worklist.

    ``order`` is where the walk starts (``"in_to_out"``: topological order from the
    inputs; ``"out_to_in"``: from the outputs). Whatever ``ignore_newtrees`` says, the
    nodes a replacement creates are offered to the rules too (the worklist revisits what
    changed, until nothing fires): on this engine a walk is a local equilibrium.
    """

    def __init__(
        self,
        node_rewriter: Any,
        order: str = "in_to_out",
        ignore_newtrees: bool = False,
        failure_callback: Callable | None = None,
        max_use_ratio: float | None = None,
    ):
        if order not in ("in_to_out", "out_to_in", "dfs"):
            raise ValueError(f"order must be 'in_to_out', 'out_to_in' or 'dfs', got {order!r}")
        rewriters = list(node_rewriter) if isinstance(node_rewriter, (list, tuple)) else [node_rewriter]
        self.node_rewriter = node_rewriter
        self.node_rewriters = _flat_node_rewriters(rewriters)
        self.order = order
        self.ignore_newtrees = ignore_newtrees
        self.failure_callback = failure_callback
        self.max_use_ratio = max_use_ratio
        self._rules = RulesByOp(self.node_rewriters)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        for r in self.node_rewriters:
            r.add_requirements(fgraph)

    def apply(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> int:
        """Rewrite ``fgraph`` in place; returns the number of replacements."""
        # "dfs" (PyTensor: depth first from the outputs) starts the worklist at the outputs
        order = "out_to_in" if self.order == "dfs" else self.order
        return apply_node_rewriters(
            fgraph, self._rules, self.max_use_ratio or 50, order, self.failure_callback
        )

    def print_summary(self, stream: TextIO = sys.stdout, level: int = 0, depth: int = -1) -> None:
        super().print_summary(stream, level, depth)
        if depth != 0:
            for r in self.node_rewriters:
                r.print_summary(stream, level + 2, depth - 1)


def _walking(order: str, rewriters: tuple, name: str | None, kwargs: dict) -> WalkingGraphRewriter:
    if not rewriters:
        caller = {"in_to_out": "in2out", "out_to_in": "out2in"}.get(order, "dfs_rewriter")
        raise ValueError(f"{caller} needs at least one node rewriter")
    inner = rewriters[0] if len(rewriters) == 1 else SequentialNodeRewriter(*rewriters)
    walker = WalkingGraphRewriter(inner, order=order, **kwargs)
    if name:
        walker.name = name
    return walker


def in2out(*node_rewriters: Any, name: str | None = None, **kwargs: Any) -> WalkingGraphRewriter:
    """A :class:`WalkingGraphRewriter` of ``node_rewriters`` starting from the inputs."""
    return _walking("in_to_out", node_rewriters, name, kwargs)


def out2in(*node_rewriters: Any, name: str | None = None, **kwargs: Any) -> WalkingGraphRewriter:
    """A :class:`WalkingGraphRewriter` of ``node_rewriters`` starting from the outputs."""
    return _walking("out_to_in", node_rewriters, name, kwargs)


def dfs_rewriter(*node_rewriters: Any, name: str | None = None, **kwargs: Any) -> WalkingGraphRewriter:
    """A :class:`WalkingGraphRewriter` of ``node_rewriters`` starting depth first from the
    outputs (PyTensor 3's name for the walk that ``in2out`` used to be in its own pipeline)."""
    return _walking("dfs", node_rewriters, name, kwargs)


def walking_rewriter(
    order: str, *node_rewriters: Any, name: str | None = None, **kwargs: Any
) -> WalkingGraphRewriter:
    """A :class:`WalkingGraphRewriter` of ``node_rewriters`` whose walk starts as ``order`` says:
    ``"in_to_out"`` (:func:`in2out`), ``"out_to_in"`` (:func:`out2in`) or ``"dfs"``
    (:func:`dfs_rewriter`)."""
    if order not in ("in_to_out", "out_to_in", "dfs"):
        raise ValueError(f"walking_rewriter: order must be 'in_to_out', 'out_to_in' or 'dfs', got {order!r}")
    return _walking(order, node_rewriters, name, kwargs)


def merge_dict(d1: Mapping[Any, Any], d2: Mapping[Any, Any]) -> dict[Any, Any]:
    """A new dict with the keys of both; a key in both gets the sum of its two values
    (how rewriters' profiles of counts and times are combined).

    >>> merge_dict({"a": 1, "b": 2}, {"b": 3, "c": 4})
    {'a': 1, 'b': 5, 'c': 4}
    """
    out = dict(d1)
    for key, value in d2.items():
        out[key] = out[key] + value if key in out else value
    return out


def inplace_graph_rewriter(fn: Callable[[FunctionGraph], Any]) -> Any:
    """Decorator: ``fn(fgraph)`` as a graph rewriter that needs the graph's DestroyHandler
    (it makes Ops work in place), as ``graph_rewriter(fn, inplace=True)``."""
    if not callable(fn):
        raise TypeError(f"inplace_graph_rewriter decorates a function of the FunctionGraph, got {fn!r}")
    return graph_rewriter(fn, inplace=True)


class _ChangeCounter(Feature):
    """Counts the changes made to a graph (imports and input changes)."""

    def __init__(self) -> None:
        self.changes = 0

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        self.changes += 1

    def on_change_input(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> None:
        self.changes += 1


class EquilibriumGraphRewriter(GraphRewriter):
    """Node rewriters and graph rewriters, applied until none changes the graph.

    Each round runs the graph rewriters, then the node rewriters through the worklist
    (which reaches a local equilibrium by itself), then the ``final_rewriters``; rounds
    repeat while one of them changed something. ``cleanup_rewriters`` run once at the
    end. ``max_use_ratio`` bounds the work: replacements per node of the graph (and
    rounds), past which rewriting stops with a :class:`RewriteError` (rules that undo
    each other). With node rewriters only, this is exactly one worklist pass.
    """

    def __init__(
        self,
        rewriters: Sequence[Any],
        max_use_ratio: float | None = None,
        ignore_newtrees: bool = True,
        tracks_on_change_inputs: bool = False,
        failure_callback: Callable | None = None,
        final_rewriters: Sequence[Any] | None = None,
        cleanup_rewriters: Sequence[Any] | None = None,
    ):
        rewriters = list(rewriters)
        self.node_rewriters = _flat_node_rewriters(r for r in rewriters if _is_node_rewriter(r))
        self.global_rewriters = [r for r in rewriters if not _is_node_rewriter(r)]
        self.final_rewriters = list(final_rewriters or ())
        self.cleanup_rewriters = list(cleanup_rewriters or ())
        self.max_use_ratio = max_use_ratio
        self.ignore_newtrees = ignore_newtrees
        self.tracks_on_change_inputs = tracks_on_change_inputs
        self.failure_callback = failure_callback
        self._rules = RulesByOp(self.node_rewriters)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        for r in (
            *self.node_rewriters,
            *self.global_rewriters,
            *self.final_rewriters,
            *self.cleanup_rewriters,
        ):
            r.add_requirements(fgraph)

    def apply(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> int:
        """Rewrite ``fgraph`` in place; returns the number of changes made."""
        ratio = self.max_use_ratio or 50
        if not self.global_rewriters and not self.final_rewriters:
            count = apply_node_rewriters(fgraph, self._rules, ratio, failure_callback=self.failure_callback)
        else:
            count = self._rounds(fgraph, ratio)
        for r in self.cleanup_rewriters:
            r.apply(fgraph)
        return count

    def _rounds(self, fgraph: FunctionGraph, ratio: float) -> int:
        counter = _ChangeCounter()
        fgraph.attach_feature(counter)
        count = 0
        rounds = 0
        try:
            while True:
                before = counter.changes
                for r in self.global_rewriters:
                    r.apply(fgraph)
                count += apply_node_rewriters(
                    fgraph, self._rules, ratio, failure_callback=self.failure_callback
                )
                for r in self.final_rewriters:
                    r.apply(fgraph)
                if counter.changes == before:
                    return count + counter.changes
                rounds += 1
                if rounds > ratio:
                    raise RewriteError(f"{self.name} did not reach an equilibrium after {rounds} rounds")
        finally:
            fgraph.remove_feature(counter)

    def print_summary(self, stream: TextIO = sys.stdout, level: int = 0, depth: int = -1) -> None:
        super().print_summary(stream, level, depth)
        if depth != 0:
            for r in (*self.global_rewriters, *self.node_rewriters, *self.final_rewriters):
                r.print_summary(stream, level + 2, depth - 1)


class SequentialGraphRewriter(GraphRewriter):
    """Graph rewriters applied one after the other (a node rewriter is walked with
    :func:`in2out`). ``failure_callback(exc, self, rewriter)``, if given, is called when
    one raises (and the next one runs); without it the error propagates."""

    def __init__(self, *rewriters: Any, failure_callback: Callable | None = None):
        if len(rewriters) == 1 and isinstance(rewriters[0], (list, tuple)):
            rewriters = tuple(rewriters[0])
        self.data = [in2out(r) if _is_node_rewriter(r) else r for r in rewriters]
        self.failure_callback = failure_callback

    @staticmethod
    def warn(exc: Exception, seq: SequentialGraphRewriter, rewriter: Any) -> None:
        """A failure callback: warn and go on (raise under ``config.on_opt_error="raise"``)."""
        if config.on_opt_error == "raise":
            raise exc
        if config.on_opt_error != "ignore":
            warnings.warn(f"graph rewriter {rewriter} raised and was skipped: {exc!r}", stacklevel=3)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        for r in self.data:
            r.add_requirements(fgraph)

    def apply(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> list:
        """Apply each rewriter in turn; returns what each returned."""
        results = []
        for r in self.data:
            try:
                results.append(r.apply(fgraph))
            except Exception as exc:
                if self.failure_callback is None:
                    raise
                self.failure_callback(exc, self, r)
                results.append(None)
        return results

    def __iter__(self):
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def print_summary(self, stream: TextIO = sys.stdout, level: int = 0, depth: int = -1) -> None:
        super().print_summary(stream, level, depth)
        if depth != 0:
            for r in self.data:
                r.print_summary(stream, level + 2, depth - 1)


# --- rules from patterns ------------------------------------------------------------------


class PatternNodeRewriter(NodeRewriter):
    """Replaces a pattern of the graph by another.

    ``in_pattern`` is a tuple ``(op, *sub_patterns)`` (or ``{"pattern": (...),
    "constraint": fn}``); sub-patterns are patterns, strings (variables: one name binds one
    Variable), ``{"pattern": "x", "constraint": fn}`` (``fn(var)`` must hold) or constants
    (matching a constant equal to them everywhere). ``out_pattern`` says what to build
    from the bound variables (or is one of them). The rule declines where the built
    output's Type is not the replaced one's (dtype and broadcastable dims), and, unless
    ``allow_multiple_clients``, where an inner matched node has other clients. See
    :mod:`arignote.graph.rewriting.unify` for the pattern syntax.

    >>> import arignote.tensor as pt
    >>> rule = PatternNodeRewriter((pt.sub, 1, (pt.erf, "x")), (pt.erfc, "x"))
    >>> str(rule)
    'Sub(1, Erf(x)) -> Erfc(x)'
    """

    def __init__(
        self,
        in_pattern: Any,
        out_pattern: Any,
        allow_multiple_clients: bool = False,
        skip_identities_fn: Callable | None = None,
        name: str | None = None,
        tracks: Sequence[Any] = (),
        get_nodes: Callable | None = None,
        values_eq_approx: Callable | None = None,
    ):
        var_map: dict = {}
        self.in_pattern = convert_strs_to_vars(in_pattern, var_map)
        self.out_pattern = convert_strs_to_vars(out_pattern, var_map)
        if not isinstance(self.in_pattern, PatternNode):
            raise TypeError(
                f"the pattern to search for must be a tuple starting with an Op, got {in_pattern!r}"
            )
        self._in_text = pattern_to_str(self.in_pattern)
        self._out_text = pattern_to_str(self.out_pattern)
        self.op = self.in_pattern.op_match
        self.allow_multiple_clients = allow_multiple_clients
        self.skip_identities_fn = skip_identities_fn
        if tracks and get_nodes is None:
            raise ValueError("PatternNodeRewriter: give get_nodes along with tracks")
        self._tracks = list(tracks)
        self.get_nodes = get_nodes
        self.values_eq_approx = values_eq_approx
        if name:
            self.name = name
            self.__name__ = name

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.__dict__.get("_name") or f"{self._in_text} -> {self._out_text}"

    @name.setter
    def name(self, value: str | None) -> None:
        self.__dict__["_name"] = value

    def tracks(self) -> list:
        return self._tracks or [self.op]

    def transform(self, fgraph: FunctionGraph, node: Apply, get_nodes: bool = True) -> Any:  # type: ignore[override]
        if get_nodes and self.get_nodes is not None:
            for real in self.get_nodes(fgraph, node):
                if real == "output":
                    continue
                ret = self.transform(fgraph, real, get_nodes=False)
                if ret:
                    return dict(zip(real.outputs, ret))
        if not _match_op(self.op, node.op, None):
            return False
        if isinstance(self.in_pattern, _ConstrainedNode) and not self.in_pattern.constraint(node.outputs[0]):
            return False
        subs = match_pattern(
            self.in_pattern, node, clients=None if self.allow_multiple_clients else fgraph.clients
        )
        if subs is None:
            return False
        built = reify_pattern(self.out_pattern, subs)
        new = list(built) if isinstance(built, (list, tuple)) else [built]
        if len(new) != len(node.outputs):
            return False
        out = []
        for old, var in zip(node.outputs, new):
            if not isinstance(var, Variable):
                try:
                    var = old.type.filter_variable(var, allow_convert=False)
                except (TypeError, ValueError):
                    return False
            if not old.type.is_super(var.type):
                return False
            if self.values_eq_approx is not None:
                var.tag.values_eq_approx = self.values_eq_approx
            out.append(var)
        copy_stack_trace(node.outputs, out)
        return out

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"PatternNodeRewriter({self._in_text} -> {self._out_text})"


class SubstitutionNodeRewriter(NodeRewriter):
    """Replaces every application of ``op1`` by one of ``op2`` on the same inputs.

    >>> import arignote.tensor as pt
    >>> rule = SubstitutionNodeRewriter(pt.exp, pt.sin)
    >>> str(rule)
    'Exp -> Sin'
    """

    def __init__(self, op1: Any, op2: Any, transfer_tags: bool = True):
        self.op1 = op1
        self.op2 = op2
        self.transfer_tags = transfer_tags
        self.name = f"{op1} -> {op2}"

    def tracks(self) -> list:
        return [self.op1]

    def transform(self, fgraph: FunctionGraph, node: Apply, *args: Any, **kwargs: Any) -> Any:
        if node.op != self.op1:
            return False
        repl = self.op2.make_node(*node.inputs)
        if len(repl.outputs) != len(node.outputs) or not all(
            o.type.is_super(n.type) for o, n in zip(node.outputs, repl.outputs)
        ):
            return False
        if self.transfer_tags:
            if node._tag is not None:
                repl.tag = _copy.copy(node._tag)
            for old, new in zip(node.outputs, repl.outputs):
                if old._tag is not None:
                    new.tag = _copy.copy(old._tag)
        repl.trace = node.trace
        return repl.outputs


class RemovalNodeRewriter(NodeRewriter):
    """Removes every application of ``op`` (an identity-like Op): its outputs become its
    inputs (where the Types allow).

    >>> import arignote.tensor as pt
    >>> str(RemovalNodeRewriter(pt.neg))
    'remove Neg'
    """

    def __init__(self, op: Any):
        self.op = op
        self.name = f"remove {op}"

    def tracks(self) -> list:
        return [self.op]

    def transform(self, fgraph: FunctionGraph, node: Apply, *args: Any, **kwargs: Any) -> Any:
        if node.op != self.op or len(node.inputs) != len(node.outputs):
            return False
        if not all(o.type.is_super(i.type) for o, i in zip(node.outputs, node.inputs)):
            return False
        return list(node.inputs)


# --- constant folding ---------------------------------------------------------------------


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter(None)
def constant_folding(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A node whose inputs are all constants is computed once, at compile time, and
    replaced by constants (unless its Op's ``do_constant_folding`` says no).

    A view of a large constant (a transpose, a reshape: an output in the Op's
    ``view_map`` with more than ``VIEW_FOLD_LIMIT`` elements) is left as it is: it costs
    nothing at run time, and as a constant of its own it would be a second copy of the
    data in a backend that embeds constants in its program (JAX compiles both)."""
    if not node.inputs or not all(isinstance(i, Constant) for i in node.inputs):
        return None
    if not node.op.do_constant_folding(fgraph, node):
        return None
    values = folded_values(node)
    view_map = getattr(node.op, "view_map", None) or {}
    for o in view_map:
        if getattr(values[o], "size", 0) > VIEW_FOLD_LIMIT:
            return None
    return [out.type.make_constant(v) for out, v in zip(node.outputs, values)]


def folded_values(node: Apply) -> list[Any]:
    """The values of the outputs of ``node``, whose inputs are all constants, computed once
    by the node's own thunk (what constant folding replaces the outputs with)."""
    storage: dict[Variable, list[Any]] = {v: [v.data] for v in node.inputs}
    storage.update({v: [None] for v in node.outputs})
    node.op.make_thunk(node, storage, None, [])()
    return [storage[out][0] for out in node.outputs]


#: views of constants with more elements than this are not folded (see constant_folding)
VIEW_FOLD_LIMIT = 1 << 12


# --- stack traces -------------------------------------------------------------------------


def copy_stack_trace(from_var: Variable | Sequence[Variable], to_var: Any) -> Any:
    """Give ``to_var`` (a Variable or a list) the creation site of ``from_var`` (a Variable
    or a list: the first that has one), so that an error in a rewritten graph still
    points at the user's line. The site of a Variable is its node's ``trace``
    (``file, line, function``); a ``tag.trace`` set by user code is copied too."""
    froms = list(from_var) if isinstance(from_var, (list, tuple)) else [from_var]
    tos = list(to_var) if isinstance(to_var, (list, tuple)) else [to_var]
    site = None
    tag_traces: list = []
    for v in froms:
        if site is None and v.owner is not None:
            site = v.owner.trace
        tag = getattr(v, "_tag", None)
        trace = getattr(tag, "trace", None) if tag is not None else None
        if trace:
            tag_traces.extend(trace if isinstance(trace, list) else [trace])
    for v in tos:
        if not isinstance(v, Variable):
            continue
        if site is not None and v.owner is not None:
            v.owner.trace = site
        if tag_traces:
            v.tag.trace = list(tag_traces)
    return to_var
