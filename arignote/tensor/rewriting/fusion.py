"""Fusion: chains (and DAGs) of Elemwise nodes become one Elemwise of a Composite, the unit a
backend runs as one kernel (the Python backend: one generated function calling NumPy per
inner node; :mod:`arignote.link.python.elemwise`).

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> a = pt.dvector("a")
>>> f = arignote.function([a], a + a**10)
>>> [str(node.op) for node in f.maker.fgraph.toposort()]
['Composite{(i0 + (i0 ** 10.0))}']
>>> f(np.array([0.0, 1.0, 2.0]))
array([   0.,    2., 1026.])

Which nodes fuse
----------------
A node is a *candidate* when its Op is a plain :class:`~arignote.tensor.elemwise.Elemwise`
(Elemwise's own ``perform``, no ``inplace_pattern``) whose scalar op can be part of a body:
its ``impl`` runs on arrays (tried once per scalar op and input dtypes on a one-element
array; an op whose ``impl`` raises there is left alone) and the op does not opt out with a
class attribute ``fusable = False`` (for an op that is not a pure function of its inputs).
A candidate joins the groups of the candidates computing its inputs that have its static
output shape, so no broadcasting changes the loop shape inside a group: a group's inputs
may broadcast, its outputs share one shape. Nothing fuses through another kind of node.
Size-1 constants (``[10.]``) go into the body as scalar constants.

Linear time
-----------
One walk over the nodes in topological order builds the groups (a union-find), then each
group of two or more nodes is replaced by one node: no operand limit (a 1,666-input sum is
one node; its body runs op by op) and no rescan of the graph per change.

Each fused node needs all of its inputs before it runs, so the groups must leave the graph
acyclic once each is one node: no path may leave a group and come back into it through
other nodes or other groups. The walk keeps, for each node, its *exits*: the groups that a
path reaches it from after leaving them, with all that those groups depend on when it is
reached (a group's members count as one node). A node joins (and so merges) the groups of
its inputs except those named in the exits of its inputs or of those groups; each set of
exits keeps the 16 newest groups and, beyond, an id below which any group may be in it, so
the walk stays linear. Where it is unsure (past 16 groups, or a path from a group into a
second group that feeds the node) it declines and the node starts a group of its own.

Multi-output, laziness
----------------------
An intermediate value also used outside its group (by another node or as a graph output)
stays an output of the fused node (a multi-output Composite): it is computed once, and one
node runs instead of several ("where it pays": always, when the rule above allows it).
Groups merge only through a node that uses them both: two outputs computed from the same
inputs but used by no common node stay two kernels (no "sibling" fusion): in the Python
backend each kernel calls NumPy once per inner op either way, so one kernel would save
only a call (~1 µs); a compiled loop that reads the inputs once is where it would pay
(the Numba tier).
``IfElse`` is lazy (an Op with its own ``make_thunk`` asks for its inputs one by one), so
fusion never makes a branch's work eager: each node computed only for one input of a
lazy Op, directly or through other nodes, belongs to that input's *domain*, and nodes
fuse only within one domain (eager nodes, and nodes that several inputs need, are one
domain). A node feeding a lazy Op directly joins a group only as its single output, and
the group takes no more members.

Types: the fused node's outputs have exactly the replaced outputs' Types; inside the body
each value has its node's dtype (an ``impl`` whose result has another dtype is followed by
a cast in the body, as ``Elemwise.perform`` casts it).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.op import has_own_thunk
from arignote.graph.utils import gc_paused
from arignote.scalar import basic as psb
from arignote.scalar.composite import Composite
from arignote.scalar.op import ScalarOp
from arignote.scalar.type import constant as scalar_constant
from arignote.scalar.type import get_scalar_type
from arignote.tensor.elemwise import Elemwise

__all__ = ["fuse_elemwise", "fusion_pass", "FUSION_TAGS"]

#: excluding any of these tags (``Mode(...).excluding("fusion")``) turns fusion off
FUSION_TAGS = frozenset({"fusion", "elemwise_fusion", "composite_elemwise_fusion"})


def fusion_pass(fgraph: FunctionGraph, query: Any = None) -> int:
    """The pipeline's fusion stage (``(fgraph, query)``, as every pass): fuses unless the
    query excludes one of :data:`FUSION_TAGS`. Returns the number of fused nodes made."""
    exclude = getattr(query, "exclude", ())
    if exclude and not FUSION_TAGS.isdisjoint(exclude):
        return 0
    return fuse_elemwise(fgraph)


# --- which nodes may fuse ----------------------------------------------------------------------

#: id(scalar op) -> (the op, {input dtypes: the dtypes its impl gives on arrays, or None})
_impl_dtypes_memo: dict = {}


def _impl_dtypes(sop: ScalarOp, in_dtypes: tuple[str, ...]) -> tuple[str, ...] | None:
    """The dtypes of ``sop.impl``'s results on arrays of ``in_dtypes`` (a one-element array
    of ones, else an empty one), or None when it raises or gives something else than
    arrays. Memoised per op object (which the memo keeps alive, so its id stays its own)."""
    entry = _impl_dtypes_memo.get(id(sop))
    if entry is not None and entry[0] is sop:
        known = entry[1]
        if in_dtypes in known:
            return known[in_dtypes]
    else:
        if len(_impl_dtypes_memo) > 10_000:
            _impl_dtypes_memo.clear()
        entry = _impl_dtypes_memo[id(sop)] = (sop, {})
    result = None
    for make in (np.ones, np.empty):
        args = [make(1 if make is np.ones else 0, dtype=d) for d in in_dtypes]
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = sop.impl(*args)
        except Exception:
            continue
        outs = (out,) if sop.nout == 1 else tuple(out)
        if len(outs) == sop.nout and all(isinstance(o, (np.ndarray, np.generic)) for o in outs):
            result = tuple(o.dtype.name for o in outs)
        break
    entry[1][in_dtypes] = result
    return result


#: Composite -> whether every node of its body may be part of a fused body
_composite_ok: dict = {}


def _scalar_fusable(sop: ScalarOp, in_dtypes: tuple[str, ...]) -> bool:
    if not getattr(sop, "fusable", True):
        return False
    if isinstance(sop, Composite):
        ok = _composite_ok.get(sop)
        if ok is None:
            ok = all(_scalar_fusable(n.op, tuple(v.type.dtype for v in n.inputs)) for n in sop.body_nodes)
            if len(_composite_ok) > 1_000:
                _composite_ok.clear()
            _composite_ok[sop] = ok
        return ok
    return _impl_dtypes(sop, in_dtypes) is not None


#: id(Elemwise op) -> (the op, {input dtypes: whether a node of it is a candidate})
_candidate_memo: dict = {}


def _candidate(node: Apply) -> bool:
    op = node.op
    if not isinstance(op, Elemwise):
        return False
    dtypes = tuple([v.type.dtype for v in node.inputs])
    entry = _candidate_memo.get(id(op))
    if entry is None or entry[0] is not op:
        if len(_candidate_memo) > 10_000:
            _candidate_memo.clear()
        entry = _candidate_memo[id(op)] = (op, {})
    ok = entry[1].get(dtypes)
    if ok is None:
        cls = type(op)
        ok = entry[1][dtypes] = (
            not op.inplace_pattern
            and cls.perform is Elemwise.perform
            and not has_own_thunk(op)
            and _scalar_fusable(op.scalar_op, dtypes)
        )
    return ok


def _feeds_lazy_op(node: Apply, clients: dict) -> bool:
    """Whether an output of ``node`` is an input of an Op with its own thunk (``IfElse``:
    lazy, it asks for its inputs one by one)."""
    return any(_is_lazy(client) for out in node.outputs for client, _ in clients.get(out, ()))


def _is_lazy(node: Apply) -> bool:
    return type(node.op) is not Output and has_own_thunk(node.op)


def _lazy_domains(order: list[Apply], clients: dict) -> dict[Apply, tuple]:
    """For each node computed only for one input of a lazy Op (``IfElse``: each input is
    asked for only when needed), that input as ``(lazy node, position)``; nodes missing
    from the result are needed eagerly (or by several such inputs). Nodes fuse only with
    nodes of the same domain, so a branch's work, even when it reaches the ``IfElse``
    through other nodes, never runs with eager work or with another branch's."""
    if not any(_is_lazy(n) for n in order):
        return {}
    domains: dict[Apply, tuple] = {}
    for node in reversed(order):  # each node after all its clients
        found = _domain(node, clients, domains)
        if found is not None:
            domains[node] = found
    return domains


def _domain(node: Apply, clients: dict, domains: dict) -> tuple | None:
    found = None
    for out in node.outputs:
        for client, i in clients.get(out, ()):
            if type(client.op) is Output:
                return None
            dom = (client, i) if _is_lazy(client) else domains.get(client)
            if dom is None or (found is not None and dom != found):
                return None
            found = dom
    return found


# --- grouping ----------------------------------------------------------------------------------


#: how many groups a set of exits (below) names before it keeps only the newest ones
_EXITS_CAP = 16

#: the most nodes one fused kernel holds: its body is generated Python (and, later, a
#: compiled loop), whose compile time and memory grow with its length; a longer chain is
#: a chain of kernels, each still one loop over the arrays
MAX_FUSED_NODES = 512


class _Exits:
    """The groups that paths reach a node from after leaving them (each named by a node of
    it, resolved to its group when read), at most :data:`_EXITS_CAP`; ``floor``: groups
    with an id up to it may be among them too (those that did not fit)."""

    __slots__ = ("floor", "roots")

    def __init__(self, roots: frozenset, floor: int):
        self.roots = roots
        self.floor = floor


_NO_EXITS = _Exits(frozenset(), -1)


class _Group:
    __slots__ = ("exits", "gid", "key", "open", "sealed", "size")

    def __init__(self, gid: int, exits: _Exits, key: tuple, open_: int, sealed: bool):
        self.size = 1  # its members
        self.gid = gid  # the smallest id of the groups it was made from
        self.exits = exits  # the union of its members' exits
        self.key = key  # the members' static output shape and lazy domain
        self.open = open_  # uses of its members' outputs outside it (graph outputs too)
        self.sealed = sealed  # it has an output feeding a lazy Op: no more members


def _find(parent: dict, node: Apply) -> Apply:
    root = node
    while parent[root] is not root:
        root = parent[root]
    while parent[node] is not root:
        parent[node], node = root, parent[node]
    return root


def _union_exits(parts: list[_Exits], extra: list[Apply], parent: dict, groups: dict) -> _Exits:
    """The union of ``parts`` and the groups of the nodes ``extra``, within the cap."""
    parts = [e for e in parts if e is not _NO_EXITS]
    if not parts and not extra:
        return _NO_EXITS
    if len(parts) == 1 and not extra:
        return parts[0]
    floor = max((e.floor for e in parts), default=-1)
    roots: set = set(extra)
    for e in parts:
        roots |= e.roots
    if len(roots) > _EXITS_CAP:
        live = {_find(parent, r) for r in roots}
        if len(live) > _EXITS_CAP:
            newest = sorted(live, key=lambda r: groups[r].gid, reverse=True)
            floor = max(floor, groups[newest[_EXITS_CAP]].gid)
            live = set(newest[:_EXITS_CAP])
        roots = live
    return _Exits(frozenset(roots), floor)


def _groups(order: list[Apply], clients: dict) -> list[list[Apply]]:
    """The groups of two or more nodes to fuse, each in topological order (see the module
    docstring for the rules)."""
    parent: dict[Apply, Apply] = {}  # union-find over the candidates; roots name groups
    groups: dict[Apply, _Group] = {}
    exits: dict[Apply, _Exits] = {}
    no_exits = _NO_EXITS
    next_gid = 0
    domains = _lazy_domains(order, clients)
    for v in order:
        producers: dict[Apply, int] = {}  # owner -> how many of v's inputs it gives
        for inp in v.inputs:
            owner = inp.owner
            if owner is not None:
                producers[owner] = producers.get(owner, 0) + 1
        root_v = None
        chosen: list[Apply] = []
        if _candidate(v):
            key = (v.outputs[0].type.shape, domains.get(v))
            lazy = _feeds_lazy_op(v, clients)
            uses_from: dict[Apply, int] = {}  # candidate group root -> uses of its outputs by v
            for p, uses in producers.items():
                if p in parent:
                    r = _find(parent, p)
                    g = groups[r]
                    if g.key == key and not g.sealed:
                        uses_from[r] = uses_from.get(r, 0) + uses
            if uses_from:
                # a candidate group is unsafe when a path leaves it and reaches v or another
                # candidate: then it shows in these exits (a conservative union of both)
                parts = [exits[p] for p in producers]
                parts += [groups[r].exits for r in uses_from]
                bad: set = set()
                floor = -1
                if len(producers) == 1:
                    pass  # v reads from one node only, in its group: no path can leave the
                    # group and come back to v (a group never has such a path: convex)
                elif any(e is not no_exits for e in parts):
                    seen = _union_exits(parts, [], parent, groups)
                    bad = {_find(parent, r) for r in seen.roots}
                    floor = seen.floor
                ordered = list(uses_from)
                if len(ordered) > 1:
                    ordered.sort(key=lambda r: groups[r].gid, reverse=True)
                size = 1
                for r in ordered:
                    g = groups[r]
                    if r in bad or g.gid <= floor or size + g.size > MAX_FUSED_NODES:
                        continue
                    if lazy and (chosen or g.open != uses_from[r]):
                        continue
                    chosen.append(r)
                    size += g.size
            n_uses = 0
            for o in v.outputs:
                n_uses += len(clients.get(o, ()))
            if not chosen:
                parent[v] = root_v = v
                groups[v] = _Group(next_gid, no_exits, key, n_uses, lazy)
                next_gid += 1
            else:
                root_v = chosen[0]
                g = groups[root_v]
                parent[v] = root_v
                open_ = n_uses
                for r in chosen:
                    open_ += groups[r].open - uses_from[r]
                    if r is not root_v:
                        parent[r] = root_v
                        g.gid = min(g.gid, groups[r].gid)
                        g.size += groups[r].size
                g.size += 1
                g.open = open_
                g.sealed = lazy
        # v's exits: its inputs' exits, and the groups of its inputs that it is not in with
        # all that they depend on now (a fused node needs all its inputs: a group's members
        # depend on what any of them does)
        left_roots: dict[Apply, None] = {}  # (ordered; a node may read 10,000 groups)
        for p in producers:
            if p in parent:
                r = _find(parent, p)
                if r is not root_v:
                    left_roots[r] = None
        left = list(left_roots)
        parts = [exits[p] for p in producers]
        if left:
            parts += [groups[r].exits for r in left]
            e = _union_exits(parts, left, parent, groups)
        elif any(x is not no_exits for x in parts):
            e = _union_exits(parts, left, parent, groups)
        else:
            e = no_exits
        exits[v] = e
        if root_v is not None and (e is not no_exits or len(chosen) > 1):
            g = groups[root_v]
            if len(chosen) <= 1 and e.floor <= g.exits.floor and e.roots <= g.exits.roots:
                continue  # nothing new (a chain: v's exits are those of its one producer)
            g.exits = _union_exits([g.exits, e, *(groups[r].exits for r in chosen[1:])], [], parent, groups)
            for r in chosen[1:]:
                del groups[r]
    members: dict[Apply, list[Apply]] = {}
    for v in order:
        if v in parent:
            members.setdefault(_find(parent, v), []).append(v)
    return [m for m in members.values() if len(m) > 1]


# --- building the fused node -------------------------------------------------------------------


def _inline_constant(var: Variable) -> Variable | None:
    """A size-1 constant as a scalar constant of the body (else None)."""
    if not isinstance(var, Constant) or any(s != 1 for s in var.type.shape):
        return None
    data = np.asarray(var.data)
    if data.size != 1:
        return None
    return scalar_constant(data.reshape(()), dtype=var.type.dtype)


def _scalar_outputs(sop: ScalarOp, args: list[Variable], types: list, trace: Any) -> list[Variable]:
    """``sop`` applied to the body variables ``args``, giving ``types`` (what the Elemwise
    node has, from the same ``output_types``), each result of that dtype (a cast follows
    an ``impl`` that gives another one); a Composite is inlined. ``trace``: the user's
    line that made the node."""
    if isinstance(sop, Composite):
        env: dict = dict(zip(sop.inner_inputs, args))
        for inner in sop.body_nodes:
            outs = _scalar_outputs(
                inner.op, [env.get(v, v) for v in inner.inputs], [o.type for o in inner.outputs], trace
            )
            env.update(zip(inner.outputs, outs))
        return [env.get(v, v) for v in sop.inner_outputs]
    outs = Apply._unchecked(sop, args, [t() for t in types], trace).outputs[:]
    got = _impl_dtypes(sop, tuple([a.type.dtype for a in args]))
    if got is not None:
        for k, (out, dtype) in enumerate(zip(outs, got)):
            if dtype != out.type.dtype:
                outs[k] = psb.Cast(get_scalar_type(out.type.dtype)).make_node(out).outputs[0]
    return outs


def _fused_node(group: list[Apply], clients: dict) -> tuple[Apply, list[Variable]] | None:
    """The one node computing ``group``'s outputs used outside it, and those outputs (None
    when the group has no input that is not a constant)."""
    inside = set(group)
    body: dict[Variable, Variable] = {}  # outer variable -> its body variable
    outer_inputs: list[Variable] = []
    inner_inputs: list[Variable] = []
    for node in group:
        args = []
        for inp in node.inputs:
            s = body.get(inp)
            if s is None:
                s = _inline_constant(inp)
                if s is None:
                    s = get_scalar_type(inp.type.dtype)(f"i{len(inner_inputs)}")
                    outer_inputs.append(inp)
                    inner_inputs.append(s)
                body[inp] = s
            args.append(s)
        types = [get_scalar_type(out.type.dtype) for out in node.outputs]
        outs = _scalar_outputs(node.op.scalar_op, args, types, node.trace)
        body.update(zip(node.outputs, outs))
    if not outer_inputs:
        return None
    replaced = [
        out
        for node in group
        for out in node.outputs
        if any(c not in inside for c, _ in clients.get(out, ()))  # Output nodes are not inside
    ]
    comp = Composite(inner_inputs, [body[v] for v in replaced], clone=False)  # a body made for it
    fused = Elemwise(comp).make_node(*outer_inputs)
    if any(old.type != new.type for old, new in zip(replaced, fused.outputs)):
        # a rewrite narrowed an input's Type without retyping the nodes using it: the fused
        # node's Types can be narrower than the replaced ones; it keeps the replaced ones
        for old, new in zip(replaced, fused.outputs):
            if not old.type.is_super(new.type):
                raise TypeError(f"fusion: {fused} output has Type {new.type}, replacing {old} of {old.type}")
        fused = Apply(fused.op, fused.inputs, [old.type() for old in replaced])
    fused.trace = group[-1].trace  # errors point at the user's line of the group's last node
    return fused, replaced


def fuse_elemwise(fgraph: FunctionGraph) -> int:
    """Replace each group of fusable Elemwise nodes of ``fgraph`` (in place) by one
    ``Elemwise(Composite)``; returns how many fused nodes were made."""
    clients = fgraph.clients
    count = 0
    with gc_paused():  # many small objects made, none freed: no collector sweeps
        for group in _groups(fgraph.toposort(), clients):
            made = _fused_node(group, clients)
            if made is None:
                continue
            fused, replaced = made
            _replace_group(fgraph, group, fused, replaced)
            count += 1
    return count


def _replace_group(fgraph: FunctionGraph, group: list[Apply], fused: Apply, replaced: list[Variable]) -> None:
    """Make the users of ``replaced`` use ``fused``'s outputs; the group's nodes go.

    No cycle check is needed (groups are convex). The fused node is imported first; the
    group's nodes are pruned when their last output loses its last use, each forgetting
    its own uses in O(1) (use lists are insertion-ordered dicts).
    """
    clients = fgraph.clients
    fgraph.import_node(fused, reason="fusion")
    for old, new in zip(replaced, fused.outputs):
        for client, i in list(clients.get(old, ())):
            fgraph.change_node_input(client, i, new, reason="fusion", check=False)
