"""The rewrite engine: node rewriters, graph rewriters, and the worklist that applies
node rewriters to a FunctionGraph (:func:`apply_node_rewriters`).

Everything here is re-exported by :mod:`arignote.graph.rewriting.basic`, PyTensor's path.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.features import Feature, ReplacementDidNotRemoveError
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.rewriting.registry import (
    RulesByOp,
    op_matches,
    rewriter_kind,
    rule_tracks,
)
from arignote.graph.rewriting.unify import (
    OpPattern,
)

__all__ = [
    "FromFunctionGraphRewriter",
    "FromFunctionNodeRewriter",
    "GraphRewriter",
    "NodeRewriter",
    "RewriteError",
    "Rewriter",
    "SequentialNodeRewriter",
    "Tracks",
    "offer_memo",
    "apply_node_rewriters",
    "graph_rewriter",
    "node_rewriter",
]


class RewriteError(Exception):
    """A rewrite rule raised or returned something invalid; names the rule and the node."""


def _source_site(obj: Any) -> str:
    try:
        fn = inspect.unwrap(obj)
        return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return "<unknown>"


class Rewriter:
    """What node and graph rewriters share: a ``name`` (by default the class's name),
    ``where`` it is defined, and ``add_requirements(fgraph)``."""

    @property
    def name(self) -> str:
        return self.__dict__.get("_name") or type(self).__name__

    @name.setter
    def name(self, value: str | None) -> None:
        self.__dict__["_name"] = value

    @property
    def where(self) -> str:
        """``file:line`` of the code that does the rewriting (read when first asked)."""
        where = self.__dict__.get("_where")
        if where is None:
            where = self.__dict__["_where"] = _source_site(self._defining_function())
        return where

    def _defining_function(self) -> Any:
        return type(self)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the Features this rewriter needs to ``fgraph`` (none by default)."""

    def print_summary(self, stream: TextIO = sys.stdout, level: int = 0, depth: int = -1) -> None:
        print(f"{' ' * level}{type(self).__name__} {self.name} id={id(self)}", file=stream)

    def __str__(self) -> str:
        return self.name


# --- node rewriters -----------------------------------------------------------------------


class Tracks(tuple):
    """The Ops a rule made by :func:`node_rewriter` tracks: a tuple (arignote's ``tracks``
    attribute: ``rule.tracks == (Elemwise,)``) that can also be called like PyTensor's
    ``tracks()`` method (a list, or None when the rule sees every node)."""

    def __call__(self) -> list | None:
        return list(self) or None


class NodeRewriter(Rewriter):
    """A rewrite of one node. Subclass it and define ``tracks()`` (the Op classes, Op
    instances or :class:`~arignote.graph.rewriting.unify.OpPattern`\\ s it concerns;
    None: every node) and ``transform(fgraph, node)``, or use :func:`node_rewriter`.

    ``transform`` returns None or False (no change), a list with one replacement (or
    None: keep) per output, or a dict ``{old: new}``, optionally with a ``"remove"`` key.

    >>> import arignote.tensor as pt
    >>> from arignote.tensor.elemwise import Elemwise
    >>> class LogExp(NodeRewriter):
    ...     def tracks(self):
    ...         return [pt.log]
    ...     def transform(self, fgraph, node):
    ...         (arg,) = node.inputs
    ...         if arg.owner is not None and arg.owner.op == pt.exp:
    ...             return [arg.owner.inputs[0]]
    ...         return None
    >>> x = pt.dvector("x")
    >>> from arignote.graph.fg import FunctionGraph
    >>> fg = FunctionGraph([x], [pt.log(pt.exp(x))])
    >>> apply_node_rewriters(fg, [LogExp()])  # (or in2out(LogExp()).rewrite(fg))
    1
    >>> fg.outputs[0] is fg.inputs[0]
    True
    """

    #: whether the nodes a replacement creates may be rewritten again (always, here)
    reentrant = True
    retains_inputs = False
    #: Op classes or OpPatterns decided by types (``elemwise_of(Exp)``), one of which some
    #: node of the graph must be for this rule to match anything: a pass offers it
    #: nothing while there is none (an arignote addition; empty: no such condition)
    needs: tuple = ()
    #: whether a pass first offers this rule, outputs first, the roots of nested
    #: expressions of what it tracks (a node reading, alone, a node it also tracks), and
    #: what its replacements bring in (an arignote addition): for a rule that rewrites a
    #: whole expression from its root (a sum of thousands of nested terms flattened at
    #: once), so that the nodes it absorbs leave the graph unvisited
    roots_first: bool = False

    def tracks(self) -> Sequence[Any] | None:
        """The Op classes, Op instances or OpPatterns this rule concerns (None: all)."""
        return None

    def transform(self, fgraph: FunctionGraph, node: Apply, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define transform(fgraph, node)")

    def _defining_function(self) -> Any:
        return type(self).transform

    def applies_to(self, node: Apply) -> bool:
        """Whether ``node``'s Op is one this rule tracks (the engine asks a :class:`RulesByOp`)."""
        return _tracks_op(rule_tracks(self), node.op)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


def _tracks_op(tracks: tuple | None, op: Any) -> bool:
    if tracks is None:
        return True
    return any(isinstance(op, t) if isinstance(t, type) else op_matches(op, (t,)) for t in tracks)


class FromFunctionNodeRewriter(NodeRewriter):
    """A node rewriter from a function ``fn(fgraph, node)`` (what :func:`node_rewriter` makes)."""

    def __init__(
        self,
        fn: Callable,
        tracks: Sequence[Any] | None = None,
        name: str | None = None,
        requirements: Sequence[Callable] = (),
        needs: Sequence[Any] = (),
        roots_first: bool = False,
    ):
        self.fn = fn
        self.needs = tuple(needs)
        self.roots_first = roots_first
        self.tracks = Tracks(tracks or ())  # type: ignore[assignment]  # (instance attribute)
        self.name = name or getattr(fn, "__name__", None) or "node_rewriter"
        self.__name__ = self.name
        self.__doc__ = fn.__doc__
        self.requirements = tuple(requirements)

    def _defining_function(self) -> Any:
        return self.fn

    def transform(self, fgraph: FunctionGraph, node: Apply, *args: Any, **kwargs: Any) -> Any:
        return self.fn(fgraph, node, *args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        for req in self.requirements:
            req(fgraph)

    def __repr__(self) -> str:
        return f"NodeRewriter({self.name} at {self.where})"


def _add_destroy_handler(fgraph: FunctionGraph) -> None:
    """The requirement of an in-place rule: a DestroyHandler on the graph."""
    # same layer; imported when an in-place rule first needs it
    from arignote.graph.destroyhandler import DestroyHandler

    if not any(isinstance(f, DestroyHandler) for f in fgraph._features):
        fgraph.attach_feature(DestroyHandler())


def node_rewriter(
    tracks: Sequence[Any] | None,
    name: str | None = None,
    *,
    inplace: bool = False,
    requirements: Sequence[Callable] = (),
    needs: Sequence[Any] = (),
    roots_first: bool = False,
) -> Callable[[Callable], FromFunctionNodeRewriter]:
    """Decorator: ``@node_rewriter([Elemwise])`` turns ``fn(fgraph, node)`` into a rule.

    ``tracks`` lists Op classes, Op instances or OpPatterns (None: every node); with
    ``inplace=True`` the graph gets a DestroyHandler first (``add_requirements``).
    ``needs`` (see :attr:`NodeRewriter.needs`): what the rule's pattern contains besides
    the node it is offered, so that a pass skips it on graphs without any.
    ``roots_first`` (see :attr:`NodeRewriter.roots_first`): a pass offers the rule the
    nodes outputs first before its worklist; it must decline cheaply where it has
    nothing to do, since it is offered those nodes twice.
    """
    if tracks is not None:
        tracks = list(tracks)
        if not tracks:
            raise ValueError("node_rewriter: give None, not an empty list, to track every node")
        for t in tracks:
            if not (isinstance(t, (type, OpPattern)) or hasattr(t, "make_node")):
                raise TypeError(f"node_rewriter tracks Op classes, Op instances or OpPatterns; got {t!r}")
    reqs = (*requirements, _add_destroy_handler) if inplace else tuple(requirements)

    def wrap(fn: Callable) -> FromFunctionNodeRewriter:
        return FromFunctionNodeRewriter(fn, tracks, name, reqs, needs, roots_first)

    return wrap


def _flat_node_rewriters(rewriters: Iterable[Any]) -> list[Any]:
    """Node rewriters with :class:`SequentialNodeRewriter`\\ s opened into their members
    (the engine indexes each member by its own ``tracks``)."""
    out: list[Any] = []
    for r in rewriters:
        if isinstance(r, SequentialNodeRewriter):
            out.extend(_flat_node_rewriters(r.rewrites))
        else:
            out.append(r)
    return out


# --- the engine ---------------------------------------------------------------------------


def _as_replacements(rule: Any, node: Apply, result: Any) -> tuple[list[tuple[Variable, Variable]], list]:
    remove: list = []
    if isinstance(result, dict):
        result = dict(result)
        remove = list(result.pop("remove", ()))
        pairs = list(result.items())
    elif isinstance(result, (list, tuple)):
        if len(result) != len(node.outputs):
            raise RewriteError(
                f"{rule!r} returned {len(result)} replacements for {node}, which has {len(node.outputs)} outputs"
            )
        pairs = [(o, n) for o, n in zip(node.outputs, result) if n is not None]
    else:
        raise RewriteError(f"{rule!r} returned {result!r} for {node}; expected a list, a dict, None or False")
    return [(o, n) for o, n in pairs if o is not n], remove


def apply_node_rewriters(
    fgraph: FunctionGraph,
    rewriters: Sequence[Any] | RulesByOp,
    max_passes: float = 50,
    order: str = "in_to_out",
    failure_callback: Callable | None = None,
) -> int:
    """Apply ``rewriters`` until none fires; returns how many replacements were made.

    A worklist of nodes, started in topological order (``order="out_to_in"``: reversed):
    only nodes a change created (and the clients of replaced variables) are revisited,
    never the whole graph per change. Each node is offered only the rules tracking its
    Op's type (``rewriters`` indexed once per call, unless given as a :class:`RulesByOp`),
    in the order of ``rewriters``. More than ``max_passes`` replacements per node of the
    starting graph is a :class:`RewriteError` (rules that undo each other).
    """
    rules = rewriters if isinstance(rewriters, RulesByOp) else RulesByOp(_flat_node_rewriters(rewriters))
    if not len(rules):
        return 0
    count = 0
    nodes = fgraph.toposort()
    budget = max_passes * max(1, len(nodes))
    imported = _ImportedNodes()
    fgraph.attach_feature(imported)
    try:
        sweep = [r for r in rules.rules if getattr(r, "roots_first", False)]
        if sweep and order == "in_to_out":
            swept = _sweep_roots_first(fgraph, RulesByOp(sweep), nodes, imported, failure_callback, budget)
            if swept:
                count += swept
                nodes = fgraph.toposort()
        # what is offered: the rules, less those needing a kind of node the graph lacks;
        # and only the nodes some rule tracks (a stage whose rules concern a few Ops costs
        # one index look-up per other node)
        offered, tracked = rules.for_graph(nodes)
        worklist = deque(reversed(tracked) if order == "out_to_in" else tracked)
        queued = set(worklist)

        def push(node: Apply) -> None:
            if node not in queued and rules.for_op(node.op):
                worklist.append(node)
                queued.add(node)

        while worklist:
            node = worklist.popleft()
            queued.discard(node)
            count += _rewrite_one(fgraph, offered, node, push, imported, failure_callback)
            if count > budget:
                raise RewriteError(f"rewriting did not settle after {max_passes} passes")
    finally:
        fgraph.remove_feature(imported)
        imported.nodes.clear()  # (the graph's callback timings keep the feature as a key)
    return count


def _sweep_roots_first(
    fgraph: FunctionGraph,
    sweep: RulesByOp,
    nodes: list[Apply],
    imported: _ImportedNodes,
    failure_callback: Callable | None,
    budget: float,
) -> int:
    """Offer the ``roots_first`` rules, outputs first, the roots of nested expressions:
    each node reading (alone) the output of a node that one of its rules also tracks;
    a node a replacement brings in is offered next. The number of replacements."""
    clients = fgraph.clients
    stack = []  # popped from the end: outputs first
    for node in nodes:
        mine = sweep.for_op(node.op)
        if not mine:
            continue
        for i in node.inputs:
            owner = i.owner
            if owner is not None and len(clients.get(i, ())) == 1:
                theirs = sweep.for_op(owner.op)
                if theirs and any(pair in theirs for pair in mine):
                    stack.append(node)
                    break

    def push(node: Apply) -> None:
        if sweep.for_op(node.op):
            stack.append(node)  # (offered next, even if it waits further down too)

    count = 0
    while stack:
        node = stack.pop()
        count += _rewrite_one(fgraph, sweep, node, push, imported, failure_callback)
        if count > budget:
            raise RewriteError("rewriting did not settle in the roots-first sweep")
    return count


class _ImportedNodes(Feature):
    """Collects the nodes a replacement brings into the graph, so that every one of them,
    not only the replacement's root, is offered to the rules."""

    def __init__(self) -> None:
        self.nodes: list[Apply] = []

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: Any) -> None:
        self.nodes.append(node)


def _rewrite_one(
    fgraph: FunctionGraph,
    offered: RulesByOp,
    node: Apply,
    push: Callable[[Apply], None],
    imported: _ImportedNodes,
    failure_callback: Callable | None,
) -> int:
    """Offer ``node`` to the rules (``offered``: those whose ``needs`` the graph meets);
    1 if one replaced it, and then ``push`` each node the change brought in or touched."""
    if node not in fgraph.apply_nodes:
        return 0
    op = node.op
    _OFFER[0], _OFFER[1], _OFFER[2] = fgraph, node, None  # (its memo made when a rule asks)
    for rule, instances in offered.for_op(op):
        if instances is not None and not op_matches(op, instances):
            continue
        result = _transform(rule, fgraph, node, failure_callback)
        if not result:
            continue
        pairs, remove = _as_replacements(rule, node, result)
        if not pairs:
            continue
        _OFFER[0] = _OFFER[1] = _OFFER[2] = None  # the graph changes: what was read of it is stale
        if config.trace_rewrites:
            print(f"rewrite {rule.name} ({rule.where}): {node} -> {[str(n) for _, n in pairs]}")
        imported.nodes.clear()
        verbose = config.optimizer_verbose
        swaps = None if remove or len(pairs) != 1 else _constant_swaps(node, pairs[0][1], fgraph)
        if swaps:
            # the same node with other constants: its inputs are changed, nothing replaced;
            # it and its clients get the rules again
            old, new = pairs[0]
            if verbose:
                print(f"rewriting: rewrite {rule.name} replaces {old} of {node} with {new} of {new.owner}")
            for i, const in swaps:
                fgraph.change_node_input(node, i, const, reason=InputSwap(rule.name), check=False)
            fresh = [node, *_new_nodes(fgraph, old)]
        else:
            if remove:
                try:
                    fgraph.replace_all_validate_remove(  # type: ignore[attr-defined]
                        pairs, remove, reason=rule.name, warn=False, verbose=verbose
                    )
                except ReplacementDidNotRemoveError:
                    continue
            else:
                fgraph.replace_all_validate(pairs, reason=rule.name, verbose=verbose)  # type: ignore[attr-defined]
            for n in imported.nodes:
                offered.note(n.op)
            # every node the replacement brought in, its outputs' clients too, gets the rules
            fresh = [n for n in imported.nodes if n in fgraph.apply_nodes]
            for _, new in pairs:
                fresh.extend(_new_nodes(fgraph, new))
        for new_node in dict.fromkeys(fresh):  # (a new node can be both imported and a client)
            push(new_node)
        return 1
    return 0


#: ``[fgraph, node, memo]`` of the node being offered to the rules (see :func:`offer_memo`)
_OFFER: list = [None, None, None]


def offer_memo(fgraph: FunctionGraph, node: Apply) -> dict:
    """A dict that the rules offered ``node`` in turn share, for what they read of the
    graph around it (two product rules reading the same factors): valid while the engine
    offers that node, since no rule has changed the graph until one fires. Outside that
    (a rule called directly), a fresh dict."""
    if _OFFER[0] is fgraph and _OFFER[1] is node:
        if _OFFER[2] is None:
            _OFFER[2] = {}
        return _OFFER[2]
    return {}


def _transform(
    rule: Any, fgraph: FunctionGraph, node: Apply, failure_callback: Callable | None = None
) -> Any:
    """The rule's result, or None where it raised and ``config.on_opt_error`` (or the
    ``failure_callback``) says to go on."""
    try:
        return rule.transform(fgraph, node)
    except Exception as err:
        if failure_callback is not None:
            failure_callback(err, None, [(o, None) for o in node.outputs], rule, node)
            return None
        if config.on_opt_error == "raise":
            raise RewriteError(f"{rule!r} raised on {node}: {err!r}") from err
        if config.on_opt_error == "warn":
            warnings.warn(
                f"rewrite {rule.name} ({rule.where}) raised on {node} and was skipped: {err!r}",
                stacklevel=3,
            )
        return None  # a failed rewrite leaves the graph as it was


class InputSwap(str):
    """The reason given with a change of a node's inputs that keeps the value of its
    outputs (the rule's name): the old input is not replaced by the new one, which may
    differ from it (a constant of the node's dtype for one of another)."""


def _constant_swaps(node: Apply, new: Variable, fgraph: FunctionGraph) -> list[tuple[int, Variable]] | None:
    """``[(i, constant)]`` when ``new`` is computed by a node not in the graph that is
    ``node`` with some inputs replaced by constants (same Op object, same output Type, an
    Op neither viewing nor overwriting inputs): the change is made to ``node`` itself,
    far cheaper than replacing it (``upcast_constant_inputs`` does this to every node
    with a constant of another dtype). Else None."""
    owner = new.owner
    if owner is None or owner.op is not node.op or len(node.outputs) != 1 or owner in fgraph.apply_nodes:
        return None
    op = node.op
    if getattr(op, "destroy_map", None) or getattr(op, "view_map", None) or new.type != node.outputs[0].type:
        return None
    if len(owner.inputs) != len(node.inputs):
        return None
    swaps = []
    for i, (a, b) in enumerate(zip(node.inputs, owner.inputs)):
        if a is not b:
            if not isinstance(b, Constant):
                return None
            swaps.append((i, b))
    return swaps


def _new_nodes(fgraph: FunctionGraph, var: Variable) -> list[Apply]:
    nodes = []
    if var.owner is not None and var.owner in fgraph.apply_nodes:
        nodes.append(var.owner)
    for client, _ in fgraph.clients.get(var, ()):
        if not isinstance(client.op, Output):
            nodes.append(client)
    return nodes


# --- graph rewriters ----------------------------------------------------------------------


class GraphRewriter(Rewriter):
    """A rewrite of a whole FunctionGraph: define ``apply(fgraph)``; call
    ``rewrite(fgraph)`` (which first calls ``add_requirements(fgraph)``)."""

    def apply(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define apply(fgraph)")

    def _defining_function(self) -> Any:
        return type(self).apply

    def rewrite(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> Any:
        """``add_requirements(fgraph)``, then ``apply(fgraph)``; returns what apply returns."""
        self.add_requirements(fgraph)
        return self.apply(fgraph, *args, **kwargs)

    def __call__(self, fgraph: FunctionGraph) -> Any:
        return self.rewrite(fgraph)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class FromFunctionGraphRewriter(GraphRewriter):
    """A graph rewriter from a function ``fn(fgraph)`` (what :func:`graph_rewriter` makes)."""

    def __init__(self, fn: Callable, requirements: Sequence[Callable] = (), name: str | None = None):
        self.fn = fn
        self.requirements = tuple(requirements)
        self.name = name or getattr(fn, "__name__", None) or "graph_rewriter"
        self.__name__ = self.name
        self.__doc__ = fn.__doc__

    def _defining_function(self) -> Any:
        return self.fn

    def apply(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> Any:
        return self.fn(fgraph, *args, **kwargs)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        for req in self.requirements:
            req(fgraph)


def graph_rewriter(fn: Callable | None = None, *, inplace: bool = False, name: str | None = None) -> Any:
    """Decorator: ``@graph_rewriter`` (or ``@graph_rewriter(name=...)``) turns
    ``fn(fgraph)`` into a :class:`GraphRewriter`."""
    reqs = (_add_destroy_handler,) if inplace else ()

    def wrap(f: Callable) -> FromFunctionGraphRewriter:
        return FromFunctionGraphRewriter(f, reqs, name)

    return wrap if fn is None else wrap(fn)


def _is_node_rewriter(r: Any) -> bool:
    return isinstance(r, NodeRewriter) or rewriter_kind(r) == "node"


class SequentialNodeRewriter(NodeRewriter):
    """Several node rewriters tried in order on a node; the first that gives a
    replacement wins. It tracks what its members track. (Handed to a walking or
    equilibrium rewriter, its members are indexed one by one; ``apply_all_rewrites``
    is what the worklist does anyway: the new nodes are offered every rule again.)"""

    def __init__(self, *rewriters: Any, apply_all_rewrites: bool = False, profile: bool = False):
        if len(rewriters) == 1 and isinstance(rewriters[0], (list, tuple)):
            rewriters = tuple(rewriters[0])
        self.rewrites = list(rewriters)
        self.apply_all_rewrites = apply_all_rewrites
        self.profile = profile

    def tracks(self) -> list | None:
        found: list = []
        for r in self.rewrites:
            t = rule_tracks(r)
            if t is None:
                return None
            found.extend(x for x in t if x not in found)
        return found or None

    def transform(self, fgraph: FunctionGraph, node: Apply, *args: Any, **kwargs: Any) -> Any:
        for r in self.rewrites:
            if not _tracks_op(rule_tracks(r), node.op):
                continue
            result = r.transform(fgraph, node)
            if result:
                return result
        return False

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        for r in self.rewrites:
            r.add_requirements(fgraph)

    def print_summary(self, stream: TextIO = sys.stdout, level: int = 0, depth: int = -1) -> None:
        super().print_summary(stream, level, depth)
        if depth != 0:
            for r in self.rewrites:
                r.print_summary(stream, level + 2, depth - 1)
