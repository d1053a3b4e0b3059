"""Walking graphs: ancestors, inputs, the nodes between two sets, topological orders.

Every function here is iterative (explicit stacks, no recursion), so a chain of
100,000 nodes is as easy as one of ten. Orders are deterministic: inputs are visited
left to right.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Generator, Hashable, Iterable, Sequence
from typing import Any, TypeVar

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import HasInnerGraph

T = TypeVar("T")

#: a node and what it leads to (``None``: nothing), as ``walk``'s expand functions give them
NodeAndChildren = tuple[T, Iterable[T] | None]

__all__ = [
    "GraphCycleError",
    "NodeAndChildren",
    "ancestors",
    "apply_ancestors",
    "apply_depends_on",
    "applys_between",
    "explicit_graph_inputs",
    "general_toposort",
    "get_var_by_name",
    "graph_inputs",
    "io_toposort",
    "orphans_between",
    "toposort",
    "toposort_with_orderings",
    "truncated_graph_inputs",
    "variable_ancestors",
    "variable_depends_on",
    "vars_between",
    "walk",
    "walk_toposort",
]


class GraphCycleError(ValueError):
    """The graph is not acyclic; ``cycle`` lists the nodes found on the loop."""

    def __init__(self, cycle: Sequence[Any]):
        self.cycle = list(cycle)
        shown = " -> ".join(str(n) for n in self.cycle[:8])
        more = f" ... ({len(self.cycle)} nodes)" if len(self.cycle) > 8 else ""
        super().__init__(f"The graph contains a cycle: {shown}{more}")


def walk(
    nodes: Iterable[T],
    expand: Callable[[T], Iterable[T] | None],
    bfs: bool = True,
    return_children: bool = False,
    hash_fn: Callable[[T], Hashable] | None = None,
) -> Generator:
    """Visit ``nodes`` and everything ``expand`` reaches from them, each once.

    Breadth first by default; depth first with ``bfs=False`` (children are popped from
    the end, so give them in reverse to visit the first one first). With
    ``return_children`` each item is ``(node, children)``. Nodes are told apart by
    hash and equality (Variables and Applies: by identity), or by ``hash_fn(node)``.
    """
    if bfs:
        queue: deque = deque(nodes)
        pop = queue.popleft
    else:
        queue = list(nodes)  # type: ignore[assignment]
        pop = queue.pop
    seen: set = set()
    while queue:
        node = pop()
        # Keep the node itself in ``seen`` (not its id): an id can be reused once a
        # visited node is garbage collected, which would wrongly skip a new node.
        key = node if hash_fn is None else hash_fn(node)
        if key in seen:
            continue
        seen.add(key)
        children = expand(node)
        if return_children:
            yield node, children
        else:
            yield node
        if children:
            queue.extend(children)


def _as_list(graphs: Variable | Iterable[Variable]) -> list[Variable]:
    if isinstance(graphs, Variable):
        return [graphs]
    return list(graphs)


def ancestors(
    graphs: Variable | Iterable[Variable], blockers: Collection[Variable] | None = None
) -> Generator[Variable, None, None]:
    """Every Variable that ``graphs`` depend on (``graphs`` included), each once.

    The order is PyTensor's: a right-recursive depth-first search (the last graph and
    the last input of each node first), which fixes the order of ``graph_inputs``.
    The walk does not go past variables in ``blockers``.
    """
    blockers = frozenset(blockers) if blockers else frozenset()
    seen: set = set()
    stack = _as_list(graphs)
    pop, push = stack.pop, stack.extend
    while stack:
        var = pop()
        if var in seen:
            continue
        seen.add(var)
        yield var
        owner = var.owner
        if owner is not None and var not in blockers:
            push(owner.inputs)


def variable_ancestors(
    graphs: Variable | Iterable[Variable], blockers: Collection[Variable] | None = None
) -> Generator[Variable, None, None]:
    """PyTensor 3's name for :func:`ancestors`: every Variable ``graphs`` depend on
    (``graphs`` included), not past ``blockers``."""
    return ancestors(graphs, blockers)


def truncated_graph_inputs(
    outputs: Sequence[Variable], ancestors_to_include: Iterable[Variable] | None = None
) -> list[Variable]:
    """The Variables closest to ``outputs`` that suffice to compute them, keeping
    ``ancestors_to_include`` as inputs.

    Walking up from each output, a Variable in ``ancestors_to_include`` is an input (and the
    walk goes on above it only to find more of them); a Variable that depends on none of
    them is an input (the walk stops there) unless it is needed only above an included
    ancestor; any other Variable is computed from its node's inputs. With no ancestors to
    include the outputs are their own inputs; included ancestors that the outputs do not
    depend on are left out. Each Variable is listed once, in the order found by a
    right-recursive depth-first walk (as PyTensor lists them).

    >>> import arignote.tensor as pt
    >>> x, y = pt.dscalar("x"), pt.dscalar("y")
    >>> c = pt.exp(x)
    >>> out = pt.log(c) + pt.sin(y)
    >>> truncated_graph_inputs([out], [c])
    [Sin.0, Exp.0]
    >>> truncated_graph_inputs([out])
    [Add.0]
    """
    outputs = _as_list(outputs)
    include = set(ancestors_to_include or ())
    if not include:
        return list(dict.fromkeys(outputs))
    # which Variables depend on an ancestor to include (a dependency first walk)
    depends: dict[Variable, bool] = {}
    for node in io_toposort(include, outputs):
        hit = any(i in include or depends.get(i, False) for i in node.inputs)
        for out in node.outputs:
            depends[out] = hit
    result: dict[Variable, None] = {}
    seen: set = set()
    # right-recursive depth first (the last output and the last input first): PyTensor's order
    stack: list[tuple[Variable, bool]] = [(o, False) for o in outputs]
    while stack:
        var, covered = stack.pop()
        if (var, covered) in seen:
            continue
        seen.add((var, covered))
        if var in include:
            result[var] = None
            covered = True
        elif not depends.get(var, False):
            if not covered:
                result[var] = None
            continue
        owner = var.owner
        if owner is not None:
            stack.extend(
                (i, covered) for i in owner.inputs if i in include or depends.get(i, False) or not covered
            )
    return list(result)


def apply_ancestors(
    graphs: Variable | Iterable[Variable], blockers: Collection[Variable] | None = None
) -> Generator[Apply, None, None]:
    """The Apply nodes that ``graphs`` depend on, each once, in :func:`ancestors` order."""
    seen: set = set()
    for var in ancestors(graphs, blockers):
        node = var.owner
        if node is not None and node not in seen:
            seen.add(node)
            yield node


def graph_inputs(
    graphs: Variable | Iterable[Variable], blockers: Collection[Variable] | None = None
) -> Generator[Variable, None, None]:
    """The root Variables of ``graphs``: the ancestors with no owner (the search does not
    go past ``blockers``)."""
    return (v for v in ancestors(graphs, blockers) if v.owner is None)


def explicit_graph_inputs(graphs: Variable | Iterable[Variable]) -> Generator[Variable, None, None]:
    """The roots a caller must supply values for: graph inputs that are not constants
    (nor shared variables, which carry their own value)."""
    return (
        v
        for v in graph_inputs(graphs)
        if not isinstance(v, Constant) and not getattr(v, "_carries_value", False)
    )


def vars_between(ins: Iterable[Variable], outs: Iterable[Variable]) -> Generator[Variable, None, None]:
    """Variables on paths from ``ins`` to ``outs`` (both included), plus the sibling
    outputs of the nodes passed through and any orphans met on the way."""
    stop = set(ins)

    def expand(var: Variable) -> Iterable[Variable] | None:
        owner = var.owner
        if owner is not None and var not in stop:
            return (*owner.inputs, *owner.outputs)
        return None

    yield from walk(_as_list(outs), expand, bfs=False)


def orphans_between(ins: Collection[Variable], outs: Iterable[Variable]) -> Generator[Variable, None, None]:
    """Ownerless Variables (constants, undeclared inputs) needed by ``outs`` but not in ``ins``."""
    ins = set(ins)
    return (v for v in vars_between(ins, outs) if v.owner is None and v not in ins)


def applys_between(ins: Collection[Variable], outs: Iterable[Variable]) -> Generator[Apply, None, None]:
    """The Apply nodes on paths from ``ins`` to ``outs``, each once."""
    ins = set(ins)
    seen: set = set()
    for v in vars_between(ins, outs):
        node = v.owner
        if node is not None and v not in ins and node not in seen:
            seen.add(node)
            yield node


def general_toposort(
    outputs: Iterable[T],
    deps: Callable[[T], Iterable[T] | None],
    compute_deps_cache: Callable | None = None,
    deps_cache: dict | None = None,
    clients: dict | None = None,
) -> list[T]:
    """All nodes reachable from ``outputs`` through ``deps``, dependencies first.

    ``deps(node)`` lists what must come before ``node``. Raises :class:`GraphCycleError`
    if the dependencies loop. (``compute_deps_cache``/``deps_cache``/``clients`` are
    accepted for PyTensor compatibility; a given ``compute_deps_cache`` replaces ``deps``.)
    """
    if compute_deps_cache is not None:
        deps = compute_deps_cache
    order: list = []
    done: set = set()
    visiting: set = set()
    for root in outputs:
        if root in done:
            continue
        stack = [(root, iter(deps(root) or ()))]
        visiting.add(root)
        while stack:
            node, it = stack[-1]
            for dep in it:
                if dep in done:
                    continue
                if dep in visiting:
                    raise GraphCycleError(_cycle_from_stack(stack, dep))
                visiting.add(dep)
                stack.append((dep, iter(deps(dep) or ())))
                break
            else:
                stack.pop()
                visiting.discard(node)
                done.add(node)
                order.append(node)
    return order


def _cycle_from_stack(stack: list, repeated: Any) -> list:
    nodes = [n for n, _ in stack]
    start = next(i for i, n in enumerate(nodes) if n is repeated)
    return [*nodes[start:], repeated]


def io_toposort(
    inputs: Iterable[Variable],
    outputs: Iterable[Variable],
    orderings: dict[Apply, Iterable[Apply]] | None = None,
    clients: dict | None = None,
) -> list[Apply]:
    """The Apply nodes between ``inputs`` and ``outputs``, each after the nodes it needs.

    ``orderings`` adds constraints: ``{node: [nodes that must run before it]}``.
    Raises :class:`GraphCycleError` if the graph loops.
    """
    stop = inputs if isinstance(inputs, (set, frozenset)) else set(inputs)
    if orderings:
        return _toposort_with_orderings(stop, outputs, orderings)
    order: list[Apply] = []
    done: set = set()
    visiting: set = set()
    # A flat stack of nodes with a parallel list of input positions: no per-node tuple or
    # iterator objects, which matters for the garbage collector on deep graphs.
    nodes: list[Apply] = []
    pos: list[int] = []
    for out in outputs:
        root = out.owner
        if root is None or root in done or out in stop:
            continue
        nodes.append(root)
        pos.append(0)
        visiting.add(root)
        while nodes:
            node = nodes[-1]
            ins = node.inputs
            k = pos[-1]
            n = len(ins)
            while k < n:
                inp = ins[k]
                k += 1
                owner = inp.owner
                if owner is None or owner in done or inp in stop:
                    continue
                if owner in visiting:
                    raise GraphCycleError([*nodes[nodes.index(owner) :], owner])
                pos[-1] = k
                visiting.add(owner)
                nodes.append(owner)
                pos.append(0)
                break
            else:
                nodes.pop()
                pos.pop()
                visiting.discard(node)
                done.add(node)
                order.append(node)
    return order


def _toposort_with_orderings(stop: set, outputs: Iterable[Variable], orderings: dict) -> list[Apply]:
    def deps(node: Apply) -> list[Apply]:
        before = [i.owner for i in node.inputs if i.owner is not None and i not in stop]
        extra = orderings.get(node)
        if extra:
            before.extend(extra)
        return before

    roots = [o.owner for o in outputs if o.owner is not None and o not in stop]
    return general_toposort(roots, deps)


def walk_toposort(graphs: Iterable[T], deps: Callable[[T], Iterable[T] | None]) -> Generator[T, None, None]:
    """PyTensor 3's generator form of :func:`general_toposort`: every node reachable from
    ``graphs`` through ``deps``, each after what ``deps`` says it needs."""
    yield from general_toposort(graphs, deps)


def toposort_with_orderings(
    graphs: Iterable[Variable],
    *,
    blockers: Iterable[Variable] | None = None,
    orderings: dict[Apply, list[Apply]] | None = None,
) -> Generator[Apply, None, None]:
    """The Apply nodes between ``blockers`` and ``graphs``, dependencies first, with the
    extra constraints ``orderings`` (``{node: [nodes that must come before it]}``; how
    in-place rewrites make a node that overwrites a value run after its other uses)."""
    stop = set(blockers or ())
    yield from _toposort_with_orderings(stop, _as_list(graphs), orderings or {})


def toposort(
    graphs: Variable | Iterable[Variable], blockers: Collection[Variable] | None = None
) -> Generator[Apply, None, None]:
    """The Apply nodes that ``graphs`` depend on, dependencies first (a generator)."""
    yield from io_toposort(blockers or (), _as_list(graphs))


def get_var_by_name(
    graphs: Variable | Iterable[Variable], target_var_id: str, ids: str = "CHAR"
) -> tuple[Variable, ...]:
    """Variables in ``graphs`` whose ``name`` or ``auto_name`` is ``target_var_id``.

    Inner graphs of Ops that have one are searched too.
    """

    def expand(var: Variable) -> list[Variable] | None:
        owner = var.owner
        if owner is None:
            return None
        res = list(owner.inputs)
        if isinstance(owner.op, HasInnerGraph):
            res.extend(owner.op.inner_outputs)
        return res

    found = []
    for var in walk(_as_list(graphs), expand):
        if var.name == target_var_id or var.__dict__.get("_auto_name") == target_var_id:
            found.append(var)
    return tuple(found)


def variable_depends_on(
    variable: Variable,
    depends_on: Variable | Iterable[Variable],
    stop_search_at: Iterable[Variable] | None = None,
) -> bool:
    """Whether ``variable`` has any of ``depends_on`` (one Variable or several) among its
    ancestors (``variable`` itself included)."""
    targets = {depends_on} if isinstance(depends_on, Variable) else set(depends_on)
    if not targets:
        return False
    return any(v in targets for v in ancestors([variable], blockers=stop_search_at))


def apply_depends_on(apply: Apply, depends_on: Apply | Iterable[Apply]) -> bool:
    """Whether ``apply`` is one of ``depends_on`` or (directly or not) uses an output of one."""
    targets = {depends_on} if isinstance(depends_on, Apply) else set(depends_on)
    return apply in targets or any(var.owner in targets for var in ancestors(apply.inputs))
