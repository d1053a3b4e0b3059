"""FunctionGraph: a graph with declared inputs and outputs, and the clients of every variable.

This is the structure the rewriter works on. It knows every Apply node and Variable
between its inputs and outputs, and ``clients[var]`` lists every ``(node, i)`` with
``node.inputs[i] is var``; a graph output is used by an :class:`Output` client node, so
``clients[var][k][0].inputs[clients[var][k][1]] is var`` always holds. Changes go through
:meth:`FunctionGraph.replace` / :meth:`FunctionGraph.change_node_input`; nodes that lose
their last client are pruned, new nodes are imported, and attached features are told.

>>> from arignote.graph.basic import Apply
>>> from arignote.graph.fg import FunctionGraph
>>> from arignote.graph.op import Op
>>> from arignote.graph.type import Type
>>> class T(Type):
...     def filter(self, data, strict=False, allow_downcast=None):
...         return data
>>> class Neg(Op):
...     __props__ = ()
...     def make_node(self, x):
...         return Apply(self, [x], [x.type()])
...     def perform(self, node, inputs, output_storage):
...         output_storage[0][0] = -inputs[0]
>>> x = T()("x")
>>> y = Neg()(x)
>>> fg = FunctionGraph([x], [y], clone=False)
>>> [(str(node.op), i) for node, i in fg.clients[y]]
[('Output{idx=0}', 0)]
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any

from arignote.graph.basic import (
    Apply,
    AtomicVariable,
    Constant,
    FrozenApply,
    NominalVariable,
    Variable,
    clone_get_equiv,
    dprint_graph,
)
from arignote.graph.features import AlreadyThere, Feature, ReplaceValidate, _is_noop
from arignote.graph.op import Op
from arignote.graph.pickling import variables_order_hint
from arignote.graph.traversal import general_toposort, graph_inputs, io_toposort
from arignote.graph.utils import MissingInputError, format_site, gc_paused

__all__ = [
    "AbstractFunctionGraph",
    "ClientType",
    "FrozenApply",
    "FrozenFunctionGraph",
    "FunctionGraph",
    "NominalVariable",
    "Output",
]

ClientType = tuple[Apply, int]


class Output(Op):
    """The client node that marks ``fgraph.outputs[idx]``; it computes nothing."""

    __props__ = ("idx",)
    view_map = {0: [0]}

    def __init__(self, idx: int):
        self.idx = idx

    def make_node(self, inp: Variable) -> Apply:
        return Apply._unchecked(self, [inp], [], None)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list) -> None:
        raise RuntimeError("Output nodes mark graph outputs; they are never run")


class ClientList(dict):
    """The clients of one Variable, in the order they came: a list's interface (iterate,
    index, compare with a list) over an insertion-ordered dict, so that forgetting one use
    costs O(1) however many there are (a constant shared by 30,000 nodes made every
    replacement touching it scan them all)."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def append(self, client: Any) -> None:
        dict.__setitem__(self, client, None)

    def extend(self, clients: Any) -> None:
        for c in clients:
            dict.__setitem__(self, c, None)

    def remove(self, client: Any) -> None:
        try:
            dict.__delitem__(self, client)
        except KeyError:
            raise ValueError(f"{client!r} is not a client") from None

    def __getitem__(self, k: Any) -> Any:
        if k == 0 and isinstance(k, int):
            for c in self:
                return c
            raise IndexError("no clients")
        return list(self)[k]

    def __setitem__(self, k: int, client: Any) -> None:
        items = list(self)
        items[k] = client
        dict.clear(self)
        for c in items:
            dict.__setitem__(self, c, None)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, ClientList)):
            return list(self) == list(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __add__(self, other: Any) -> list:
        return [*self, *other]

    def __radd__(self, other: Any) -> list:
        return [*other, *self]

    def copy(self) -> list:  # type: ignore[override]
        return list(self)

    def index(self, client: Any) -> int:
        return list(self).index(client)

    def count(self, client: Any) -> int:
        return 1 if client in self else 0

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self) -> Any:
        return (_client_list, (list(self),))


def _client_list(clients: list) -> ClientList:
    out = ClientList()
    out.extend(clients)
    return out


class AbstractFunctionGraph(ABC):
    """What :class:`FunctionGraph` and :class:`FrozenFunctionGraph` share, read-only:
    ``inputs``, ``outputs``, ``apply_nodes``, ``variables``, ``clients`` and
    :meth:`toposort`."""

    @abstractmethod
    def toposort(self) -> Sequence[Apply]:
        """Every node, each after the nodes it depends on."""


class FunctionGraph:
    """A graph between ``inputs`` and ``outputs`` that tracks clients and notifies features.

    Parameters
    ----------
    inputs
        The graph's inputs (Variables with no owner). ``None``: every non-constant root.
    outputs
        The Variables the graph computes (a single Variable is accepted too).
    features
        :class:`~arignote.graph.features.Feature` objects to attach.
    clone
        Copy the graph first (default), so the caller's graph is never modified.
    update_mapping
        ``{output index: input index}`` for outputs that update inputs (shared variables).
    """

    def __init__(
        self,
        inputs: Sequence[Variable] | None = None,
        outputs: Sequence[Variable] | Variable | None = None,
        features: Iterable[Feature] | None = None,
        clone: bool = True,
        update_mapping: dict[int, int] | None = None,
        **clone_kwds: Any,
    ):
        if outputs is None:
            raise ValueError("FunctionGraph needs outputs")
        outputs = [outputs] if isinstance(outputs, Variable) else list(outputs)
        if inputs is None:
            inputs = [v for v in graph_inputs(outputs) if not isinstance(v, AtomicVariable)]
        inputs = list(inputs)
        for i, var in enumerate(outputs):
            if not isinstance(var, Variable):
                raise TypeError(
                    f"FunctionGraph output {i} must be a Variable, got {type(var).__name__} {var!r}"
                )
        for i, var in enumerate(inputs):
            if not isinstance(var, Variable):
                raise TypeError(
                    f"FunctionGraph input {i} must be a Variable, got {type(var).__name__} {var!r}"
                )
            if var.owner is not None:
                raise ValueError(
                    f"FunctionGraph input {i} ({var}) is the output of {var.owner}; inputs must be "
                    "root Variables. Use clone_replace/graph_replace to cut the graph there."
                )
        with gc_paused():  # building allocates several objects per node and frees none
            self._build(inputs, outputs, features, clone, update_mapping, clone_kwds)

    def _build(
        self,
        inputs: list[Variable],
        outputs: list[Variable],
        features: Iterable[Feature] | None,
        clone: bool,
        update_mapping: dict[int, int] | None,
        clone_kwds: dict,
    ) -> None:
        copied: list[Apply] | None = None
        if clone:
            copied = []
            memo = clone_get_equiv(
                inputs, outputs, copy_inputs=True, copy_orphans=False, new_nodes=copied, **clone_kwds
            )
            inputs = [memo[i] for i in inputs]
            outputs = [memo[o] for o in outputs]

        self.execute_callbacks_time = 0.0
        self.execute_callbacks_times: dict = {}
        self._features: list = []
        self._callbacks: dict[str, list] = {}
        self.apply_nodes: set[Apply] = set()
        self.variables: set[Variable] = set()
        self.inputs: list[Variable] = []
        self._input_set: set[Variable] = set()
        self.outputs: list[Variable] = []
        self.clients: dict[Variable, ClientList] = {}
        self.update_mapping = update_mapping
        self.profile = None
        self._order: list[Apply] | None = None  # toposort's result, until the graph changes

        # ReplaceValidate first: a History/Validator given in `features` then declines
        # (AlreadyThere) instead of leaving the graph without replace_validate.
        self.attach_feature(ReplaceValidate())
        for f in features or ():
            self.attach_feature(f)

        for var in inputs:
            if var in self._input_set:
                raise ValueError(f"FunctionGraph input {var} is listed twice")
            self.add_input(var, check=False)
        self._building: list[Apply] | None = [] if not features else None
        if copied:  # the copy's nodes, made in an order that imports them as they are
            self._import_nodes(copied, reason="init")
        for var in outputs:
            self.add_output(var, reason="init")
        # the nodes in the order each output imported them: what toposort() finds (the same
        # walk from the outputs in turn), kept when no feature can add orderings
        built, self._building = self._building, None
        if built is not None:
            self._order = built

    # -- membership -----------------------------------------------------------------------

    def get_clients(self, var: Variable) -> list[ClientType]:
        """The ``(node, i)`` pairs that use ``var`` (``Output`` nodes for outputs)."""
        return self.clients[var]

    def add_client(self, var: Variable, new_client: ClientType) -> None:
        self.clients[var].append(new_client)

    def setup_var(self, var: Variable) -> None:
        if var not in self.clients:
            self.clients[var] = ClientList()

    def setup_node(self, node: Apply) -> None:
        """Check what can be checked about a node as it enters the graph."""
        op = node.op
        if not getattr(op, "view_map", None) and not getattr(op, "destroy_map", None):
            return
        for attr in ("view_map", "destroy_map"):
            mapping = getattr(op, attr, None) or {}
            for out, ins in mapping.items():
                if not isinstance(ins, (list, tuple)):
                    raise ValueError(f"{op}.{attr}[{out}] must be a list of input indices, got {ins!r}")
                if not 0 <= out < len(node.outputs) or any(not 0 <= i < len(node.inputs) for i in ins):
                    raise ValueError(f"{op}.{attr} = {mapping!r} names an output or input that {node} lacks")

    def add_input(self, var: Variable, check: bool = True) -> None:
        """Declare ``var`` (a root Variable) as an input; with ``check``, a repeat is ignored."""
        if check and var in self._input_set:
            return
        if var.owner is not None:
            raise ValueError(f"{var} is the output of {var.owner}; only root Variables can be inputs")
        self.inputs.append(var)
        self._input_set.add(var)
        self.setup_var(var)
        self.variables.add(var)
        self._order = None

    def add_output(self, var: Variable, reason: Any = None, import_missing: bool = False) -> None:
        """Append ``var`` to the outputs, importing whatever it needs."""
        self.import_var(var, reason=reason, import_missing=import_missing)
        self.outputs.append(var)
        self._order = None
        self.clients[var].append((Output(len(self.outputs) - 1).make_node(var), 0))

    def import_var(self, var: Variable, reason: Any = None, import_missing: bool = False) -> None:
        """Bring ``var`` (and the nodes computing it) into the graph."""
        if var in self.variables:
            return
        if var.owner is not None:
            self.import_node(var.owner, reason=reason, import_missing=import_missing)
            return
        if not isinstance(var, AtomicVariable):
            if not import_missing:
                raise self._missing_input(var, None)
            self.add_input(var)
            return
        self.setup_var(var)
        self.variables.add(var)

    def import_node(
        self, apply_node: Apply, check: bool = True, reason: Any = None, import_missing: bool = False
    ) -> None:
        """Bring ``apply_node`` and every not-yet-known node it depends on into the graph.

        A root Variable that is neither an input nor a constant is a
        :class:`~arignote.graph.utils.MissingInputError` (or, with ``import_missing``, a
        new input). Nothing is changed when that error is raised.
        """
        self._import_nodes(io_toposort(self.variables, apply_node.outputs), check, reason, import_missing)

    def _import_nodes(
        self, new_nodes: list[Apply], check: bool = True, reason: Any = None, import_missing: bool = False
    ) -> None:
        """Import ``new_nodes``: nodes not in the graph yet, each after the nodes it reads,
        whose other inputs are in the graph, constants, or (else) missing inputs."""
        known = self.variables
        if check:
            for node in new_nodes:
                for inp in node.inputs:
                    if inp.owner is None and inp not in known and not isinstance(inp, AtomicVariable):
                        if not import_missing:
                            raise self._missing_input(inp, node)
                        self.add_input(inp)
                self.setup_node(node)
        if new_nodes:
            self._order = None
            building = self.__dict__.get("_building")
            if building is not None:
                building.extend(new_nodes)
        callbacks = self._callbacks_for("on_import")
        for node in new_nodes:
            self.apply_nodes.add(node)
            for out in node.outputs:
                self.setup_var(out)
                known.add(out)
            for i, inp in enumerate(node.inputs):
                if inp not in known:
                    self.setup_var(inp)
                    known.add(inp)
                self.clients[inp].append((node, i))
            for cb in callbacks:
                self._run_callback(cb, node, reason)

    def _missing_input(self, var: Variable, node: Apply | None) -> MissingInputError:
        used = f", used by {node} (created at {format_site(node.trace)})" if node is not None else ""
        return MissingInputError(
            f"Variable {var} of Type {var.type} is needed{used}, but it is not an input of this "
            "FunctionGraph and not a constant. Add it to the inputs (or pass import_missing=True).",
            variable=var,
        )

    # -- changes --------------------------------------------------------------------------

    def remove_client(
        self, var: Variable, client_to_remove: ClientType, reason: Any = None, remove_if_empty: bool = False
    ) -> None:
        """Forget one use of ``var``; prune whatever that leaves unused (iteratively)."""
        clients = self.clients
        stack = [(var, client_to_remove)]
        prune_cbs = None
        while stack:
            var, client = stack.pop()
            var_clients = clients.get(var)
            if var_clients is None:
                continue
            # the client may already be gone (removed along another path): fine
            var_clients.pop(client, None)
            if var_clients:
                continue
            node = var.owner
            if node is None:
                if var not in self._input_set:
                    self.variables.discard(var)
                    del clients[var]
                continue
            if node not in self.apply_nodes or any(clients.get(o) for o in node.outputs):
                continue
            self.apply_nodes.remove(node)
            self._order = None
            for out in node.outputs:
                self.variables.discard(out)
                clients.pop(out, None)
            if prune_cbs is None:
                prune_cbs = self._callbacks_for("on_prune")
            for cb in prune_cbs:
                self._run_callback(cb, node, reason)
            stack.extend((inp, (node, i)) for i, inp in enumerate(node.inputs))

    def change_node_input(
        self,
        node: Apply,
        i: int,
        new_var: Variable,
        reason: Any = None,
        import_missing: bool = False,
        check: bool = True,
    ) -> None:
        """Make ``node.inputs[i]`` be ``new_var`` (an Output node: change that output).

        With ``check``, ``new_var``'s Type must be acceptable where the old input was
        (``old.type.is_super(new.type)``), else ``TypeError``.
        """
        old = node.inputs[i]
        if old is new_var:
            return
        if check and not old.type.is_super(new_var.type):
            raise TypeError(
                f"Cannot use {new_var} (Type {new_var.type}) as input {i} of {node}: it replaces "
                f"{old} of Type {old.type}, and {old.type} is not a supertype of {new_var.type}"
            )
        self.import_var(new_var, reason=reason, import_missing=import_missing)
        node.inputs[i] = new_var
        self._order = None
        if isinstance(node.op, Output):
            self.outputs[node.op.idx] = new_var
        self.clients[new_var].append((node, i))
        self.remove_client(old, (node, i), reason=reason)
        for cb in self._callbacks_for("on_change_input"):
            self._run_callback(cb, node, i, old, new_var, reason=reason)

    def replace(
        self,
        var: Variable,
        new_var: Variable,
        reason: Any = None,
        verbose: bool | None = None,
        import_missing: bool = False,
    ) -> None:
        """Make every client of ``var`` use ``new_var`` instead.

        ``new_var`` is filtered through ``var.type`` (a narrower Type is fine, an
        incompatible one a ``TypeError``). A replacement that would make the graph loop
        (``new_var`` computed from ``var``'s clients) is a ``ValueError``. Replacing a
        Variable that is not in the graph does nothing.
        """
        if verbose:
            print(
                f"rewriting: rewrite {reason} replaces {var} of {var.owner} with {new_var} of {new_var.owner}"
            )
        new_var = var.type.filter_variable(new_var, allow_convert=True)
        if var not in self.variables or var is new_var:
            return
        self._check_no_cycle(var, new_var)
        for node, i in list(self.clients[var]):
            self.change_node_input(
                node, i, new_var, reason=reason, import_missing=import_missing, check=False
            )

    def replace_all(self, pairs: Iterable[tuple[Variable, Variable]], **kwargs: Any) -> None:
        """:meth:`replace` each ``(var, new_var)`` pair, in order."""
        for var, new_var in pairs:
            self.replace(var, new_var, **kwargs)

    def _check_no_cycle(self, var: Variable, new_var: Variable) -> None:
        # After the replacement, the graph's clients of var use new_var: that loops exactly
        # when new_var is computed from one of them, i.e. when its ancestry reaches a node
        # of this graph that has var as an input. A new node may use var (it keeps doing
        # so: ``replace(y, f(y))`` is fine), so the walk does not go past var. Ancestors
        # of var cannot be descendants of it, so it also stops at var's owner's inputs:
        # for the usual local rewrite it visits only the freshly built nodes.
        owner = var.owner
        stop = set(owner.inputs) if owner is not None else set()
        stop.add(var)
        apply_nodes = self.apply_nodes
        seen: set = set()
        stack = [new_var]
        while stack:
            v = stack.pop()
            if v in seen or v in stop:
                continue
            seen.add(v)
            node = v.owner
            if node is None:
                continue
            if node in apply_nodes and any(inp is var for inp in node.inputs):
                raise ValueError(
                    f"Replacing {var} by {new_var} would create a cycle: {new_var} is computed "
                    f"from {node}, which uses {var}"
                )
            stack.extend(node.inputs)

    def remove_node(self, node: Apply, reason: Any = None) -> None:
        """Remove ``node`` and everything that uses it (outputs included); prune the rest."""
        if node not in self.apply_nodes:
            return

        def users(n: Apply) -> list[Apply]:
            return [
                c for out in n.outputs for c, _ in self.clients.get(out, ()) if not isinstance(c.op, Output)
            ]

        doomed = general_toposort([node], users)  # every user before the nodes it uses
        doomed_set = set(doomed)
        # Drop the outputs they compute, last first so the indices still to visit do not
        # move; pruning then takes away the doomed nodes (and whatever only they used).
        for idx in range(len(self.outputs) - 1, -1, -1):
            if self.outputs[idx].owner in doomed_set:
                self.remove_output(idx, reason=reason)
        for n in doomed:
            if n in self.apply_nodes:
                self._drop_node(n, reason)

    def _drop_node(self, node: Apply, reason: Any) -> None:
        self.apply_nodes.remove(node)
        self._order = None
        for out in node.outputs:
            self.variables.discard(out)
            self.clients.pop(out, None)
        for cb in self._callbacks_for("on_prune"):
            self._run_callback(cb, node, reason)
        for i, inp in enumerate(node.inputs):
            self.remove_client(inp, (node, i), reason=reason)

    def remove_output(self, output_idx: int, reason: Any = None) -> None:
        """Drop ``outputs[output_idx]``; later outputs move down one place."""
        n = len(self.outputs)
        if not -n <= output_idx < n:
            raise IndexError(f"output index {output_idx} out of range for {n} outputs")
        output_idx %= n
        old = self.outputs.pop(output_idx)
        self._order = None
        self._renumber_output_clients(output_idx, n)
        client = next(
            c for c in self.clients[old] if isinstance(c[0].op, Output) and c[0].op.idx == output_idx
        )
        self.remove_client(old, client, reason=reason)

    def _renumber_output_clients(self, removed: int, old_count: int) -> None:
        # Output ops are immutable (their idx is their identity), so shifted outputs get new
        # client nodes; the removed one keeps its client until remove_client drops it.
        for idx in range(removed + 1, old_count):
            var = self.outputs[idx - 1]
            cl = self.clients[var]
            for k, (cnode, ci) in enumerate(cl):
                if isinstance(cnode.op, Output) and cnode.op.idx == idx:
                    cl[k] = (Output(idx - 1).make_node(var), ci)
                    break

    def remove_input(self, input_idx: int, reason: Any = None) -> None:
        """Drop ``inputs[input_idx]`` and every node (and output) computed from it."""
        var = self.inputs[input_idx]
        for node, _ in list(self.clients.get(var, ())):
            if not isinstance(node.op, Output):
                self.remove_node(node, reason=reason)
        for idx in range(len(self.outputs) - 1, -1, -1):
            if self.outputs[idx] is var:
                self.remove_output(idx, reason=reason)
        self.inputs.pop(input_idx)
        self._order = None
        self._input_set.discard(var)
        self.variables.discard(var)
        self.clients.pop(var, None)

    # -- features -------------------------------------------------------------------------

    def attach_feature(self, feature: Feature) -> None:
        """Attach ``feature`` (its ``on_attach`` may decline with AlreadyThere)."""
        if feature in self._features:
            return
        attach = getattr(feature, "on_attach", None)
        if attach is not None:
            try:
                attach(self)
            except AlreadyThere:
                return
        self.execute_callbacks_times.setdefault(feature, 0.0)
        self._features.append(feature)
        self._callbacks.clear()
        self._order = None  # its orderings may constrain the order

    def remove_feature(self, feature: Feature) -> None:
        """Detach ``feature`` (calls its ``on_detach``); unknown features are ignored."""
        try:
            self._features.remove(feature)
        except ValueError:
            return
        self._callbacks.clear()
        self._order = None
        detach = getattr(feature, "on_detach", None)
        if detach is not None:
            detach(self)

    def _callbacks_for(self, name: str) -> list:
        cbs = self._callbacks.get(name)
        if cbs is None:
            cbs = self._callbacks[name] = [
                (f, getattr(f, name)) for f in self._features if hasattr(f, name) and not _is_noop(f, name)
            ]
        return cbs

    def _run_callback(self, cb: tuple, *args: Any, **kwargs: Any) -> Any:
        feature, fn = cb
        t0 = time.perf_counter()
        try:
            return fn(self, *args, **kwargs)
        finally:
            dt = time.perf_counter() - t0
            self.execute_callbacks_times[feature] += dt
            self.execute_callbacks_time += dt

    def execute_callbacks(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Call ``feature.<name>(self, *args, **kwargs)`` on every feature that has it."""
        for cb in self._callbacks_for(name):
            self._run_callback(cb, *args, **kwargs)

    def collect_callbacks(self, name: str, *args: Any) -> dict:
        """``{feature: feature.<name>(*args)}`` for every feature that has it."""
        return {f: getattr(f, name)(*args) for f in self._features if hasattr(f, name)}

    def get_output_client(self, i: int) -> ClientType:
        """The ``(Output node, 0)`` client that marks ``self.outputs[i]`` (a LookupError when
        there is none: a graph whose clients are out of date)."""
        for client in self.clients[self.outputs[i]]:
            node = client[0]
            if isinstance(node.op, Output) and node.op.idx == i:
                return client
        raise LookupError(f"output {i} of this FunctionGraph has no Output client")

    def dprint(self, **kwargs: Any) -> Any:
        """Print this graph (:func:`arignote.printing.debugprint`, which takes the same keyword
        arguments; ``file="str"`` returns the text)."""
        return dprint_graph(self, **kwargs)

    # -- orders and checks ----------------------------------------------------------------

    def orderings(self) -> dict[Apply, list[Apply]]:
        """Extra scheduling constraints from the features: ``{node: [must run before]}``."""
        merged: dict = {}
        for f in self._features:
            fn = getattr(f, "orderings", None)
            if fn is None or _is_noop(f, "orderings"):
                continue
            ords = fn(self)
            if not isinstance(ords, dict):
                raise TypeError(f"{f}.orderings must return a dict, got {type(ords).__name__}")
            for node, prereqs in ords.items():
                merged.setdefault(node, []).extend(p for p in prereqs if p not in merged.get(node, ()))
        return merged

    def toposort(self) -> list[Apply]:
        """Every node, each after the nodes it depends on (and the features' orderings).

        Kept until the graph changes (every pass asks for it; a 100k-node graph takes a
        tenth of a second to sort); each call returns a new list.
        """
        if len(self.apply_nodes) < 2:
            return list(self.apply_nodes)
        order = self.__dict__.get("_order")
        if order is None:
            with gc_paused():
                order = self._order = io_toposort(self.inputs, self.outputs, self.orderings())
        return list(order)

    def check_integrity(self) -> None:
        """Verify every cached fact (nodes, variables, clients, outputs) against the graph.

        Raises ``Exception`` (``GraphCycleError`` for a loop) describing the first
        inconsistency found. One walk of the graph, then one pass over the clients.
        """
        with gc_paused():
            self._check_integrity()

    def _check_integrity(self) -> None:
        order = io_toposort(self.inputs, self.outputs)  # raises GraphCycleError on a loop
        nodes = set(order)
        if nodes != self.apply_nodes:
            raise Exception(
                "FunctionGraph.apply_nodes is out of date: missing "
                f"{nodes - self.apply_nodes}, in excess {self.apply_nodes - nodes}"
            )
        uses: dict = dict.fromkeys(self.inputs, 0)  # variable -> how many clients it must have
        for node in order:
            for inp in node.inputs:
                uses[inp] = uses.get(inp, 0) + 1
            for out in node.outputs:
                uses.setdefault(out, 0)
        for out in self.outputs:
            uses[out] = uses.get(out, 0) + 1
        if uses.keys() != self.variables:
            expected = set(uses)
            raise Exception(
                "FunctionGraph.variables is out of date: missing "
                f"{expected - self.variables}, in excess {self.variables - expected}"
            )
        clients, outputs, declared = self.clients, self.outputs, self._input_set
        stray = clients.keys() - uses.keys()
        if stray:
            raise Exception(f"Clients recorded for variables not in the graph: {stray}")
        for var, count in uses.items():
            if var.owner is None and var not in declared and not isinstance(var, AtomicVariable):
                raise Exception(f"Undeclared input {var} in the graph")
            recorded = clients.get(var)
            if recorded is None:
                raise Exception(f"Wrong clients for {var}: none recorded, expected {count}")
            for cnode, i in recorded:
                op = cnode.op
                if isinstance(op, Output):
                    if cnode.inputs[0] is not var or op.idx >= len(outputs) or outputs[op.idx] is not var:
                        raise Exception(f"Output client {op} of {var} does not match fgraph.outputs")
                elif i >= len(cnode.inputs) or cnode.inputs[i] is not var:
                    raise Exception(f"Client ({cnode}, {i}) of {var} does not use it at input {i}")
                elif cnode not in nodes:
                    raise Exception(f"Client {cnode} of {var} is not a node of the graph")
            # every recorded client is a real use; equal counts and no repeats make the
            # recorded list exactly the set of uses
            if len(recorded) != count or (
                count > 1
                and len({("out", c.op.idx) if isinstance(c.op, Output) else (c, i) for c, i in recorded})
                != count
            ):
                raise Exception(
                    f"Wrong clients for {var}: recorded {recorded}, expected {count} distinct uses"
                )

    # -- copies ---------------------------------------------------------------------------

    def freeze(self) -> FrozenFunctionGraph:
        """This graph as an immutable, hashable :class:`FrozenFunctionGraph`."""
        return FrozenFunctionGraph(self.inputs, self.outputs)

    def clone(self, check_integrity: bool = True) -> FunctionGraph:
        """A copy of this graph (new nodes and variables) with the same features attached."""
        return self.clone_get_equiv(check_integrity)[0]

    def clone_get_equiv(
        self, check_integrity: bool = True, attach_feature: bool = True, **kwargs: Any
    ) -> tuple[FunctionGraph, dict]:
        """A copy of this graph and the ``{old: new}`` map of its nodes and variables."""
        equiv = clone_get_equiv(self.inputs, self.outputs, **kwargs)
        fg = FunctionGraph(
            [equiv[i] for i in self.inputs],
            [equiv[o] for o in self.outputs],
            clone=False,
            update_mapping=self.update_mapping,
        )
        if check_integrity:
            fg.check_integrity()
        if attach_feature:
            for feature in self._features:
                if not isinstance(feature, ReplaceValidate):
                    fg.attach_feature(feature.clone() if hasattr(feature, "clone") else feature)
        return fg, equiv

    def __str__(self) -> str:
        if len(self.apply_nodes) > 50:
            return (
                f"FunctionGraph(<{len(self.apply_nodes)} nodes, {len(self.inputs)} inputs, "
                f"{len(self.outputs)} outputs>)"
            )
        return f"FunctionGraph({', '.join(_expr(o, set(self.inputs)) for o in self.outputs)})"

    def __repr__(self) -> str:
        return str(self)

    def __getstate__(self) -> dict:
        # Saved first, the nodes in topological order: pickle then never recurses along
        # the graph, however deep (arignote.graph.pickling).
        d = {"_pickle_order": variables_order_hint(self.outputs), **self.__dict__}
        for f in self._features:
            for attr in getattr(f, "pickle_rm_attr", ()):
                d.pop(attr, None)
        d["_callbacks"] = {}
        d["_order"] = None
        return d

    def __setstate__(self, d: dict) -> None:
        d.pop("_pickle_order", None)
        self.__dict__.update(d)
        features, self._features = self._features, []
        for f in features:
            self.attach_feature(f)


AbstractFunctionGraph.register(FunctionGraph)


class FrozenFunctionGraph(AbstractFunctionGraph):
    """An immutable, hashable graph from ``inputs`` to ``outputs`` (for the inner graphs of
    Ops, and as a cache key).

    The inputs become :class:`~arignote.graph.basic.NominalVariable` ``i`` of each input's
    Type and every node a :class:`~arignote.graph.basic.FrozenApply`, which exists once per
    Op, inputs and output Types: two frozen graphs built from graphs that compute the same
    thing the same way have the very same output objects, so they are equal (and hash
    alike) by comparing outputs by identity. Constants stay (equal ones give the same
    node); any other root Variable not among ``inputs`` is an error. :meth:`bind` builds
    the graph anew on given inputs, :meth:`unfreeze` gives a mutable FunctionGraph.

    >>> import arignote.scalar as ps
    >>> x, y = ps.float64("x"), ps.float64("y")
    >>> a = FunctionGraph([x, y], [ps.add(x, y) * 2.0]).freeze()
    >>> b = FrozenFunctionGraph([y, x], [ps.add(y, x) * 2.0])
    >>> a == b and hash(a) == hash(b) and a.outputs[0] is b.outputs[0]
    True
    >>> [float(v.eval({x: 1.0, y: 2.0})) for v in a.bind([x, y])]
    [6.0]
    """

    def __init__(self, inputs: Sequence[Variable], outputs: Sequence[Variable]):
        inputs = list(inputs)
        outputs = [outputs] if isinstance(outputs, Variable) else list(outputs)
        for i, var in enumerate(inputs):
            if not isinstance(var, Variable) or var.owner is not None:
                raise TypeError(
                    f"FrozenFunctionGraph input {i} must be a Variable with no owner, got {var!r}"
                )
        if len(set(inputs)) != len(inputs):
            raise ValueError("FrozenFunctionGraph: an input is given twice")
        for i, var in enumerate(outputs):
            if not isinstance(var, Variable):
                raise TypeError(f"FrozenFunctionGraph output {i} must be a Variable, got {var!r}")
        frozen: dict[Variable, Variable] = {var: NominalVariable(i, var.type) for i, var in enumerate(inputs)}

        def frozen_of(var: Variable) -> Variable:
            got = frozen.get(var)
            if got is None:
                if not isinstance(var, Constant):
                    raise MissingInputError(
                        f"FrozenFunctionGraph: {var} (Type {var.type}) is needed by the outputs but is "
                        "not among the inputs",
                        variable=var,
                    )
                got = frozen[var] = var
            return got

        with gc_paused():
            for node in io_toposort(inputs, outputs):
                new = FrozenApply(
                    node.op, tuple(frozen_of(i) for i in node.inputs), tuple(o.type for o in node.outputs)
                )
                for old, out in zip(node.outputs, new.outputs):
                    frozen[old] = out
        self.inputs: tuple[Variable, ...] = tuple(frozen[i] for i in inputs)
        self.outputs: tuple[Variable, ...] = tuple(frozen_of(o) for o in outputs)
        self._order: tuple[Apply, ...] | None = None

    def toposort(self) -> tuple[Apply, ...]:
        if self._order is None:
            self._order = tuple(io_toposort(self.inputs, self.outputs))
        return self._order

    @property
    def apply_nodes(self) -> frozenset[Apply]:
        return frozenset(self.toposort())

    @property
    def variables(self) -> frozenset[Variable]:
        found = set(self.inputs)
        for node in self.toposort():
            found.update(node.inputs)
            found.update(node.outputs)
        found.update(self.outputs)
        return frozenset(found)

    @property
    def clients(self) -> dict[Variable, list[ClientType]]:
        """``{variable: [(node, i), ...]}``; each output is used by an ``Output`` node."""
        clients: dict[Variable, list[ClientType]] = {v: [] for v in self.inputs}
        for node in self.toposort():
            for out in node.outputs:
                clients.setdefault(out, [])
            for i, inp in enumerate(node.inputs):
                clients.setdefault(inp, []).append((node, i))
        for k, out in enumerate(self.outputs):
            clients.setdefault(out, []).append((Output(k).make_node(out), 0))
        return clients

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            isinstance(other, FrozenFunctionGraph)
            and len(self.inputs) == len(other.inputs)
            and all(a is b for a, b in zip(self.inputs, other.inputs))
            and len(self.outputs) == len(other.outputs)
            and all(a is b for a, b in zip(self.outputs, other.outputs))
        )

    def __hash__(self) -> int:
        return hash((tuple(map(id, self.inputs)), tuple(map(id, self.outputs))))

    def bind(self, replace: Sequence[Variable] | dict[Variable, Variable]) -> list[Variable]:
        """Fresh (mutable) outputs computed from the given inputs: ``replace`` lists one
        Variable per input, or maps inputs (the frozen ones) to Variables. Constants are
        kept; an input not given is a KeyError."""
        if isinstance(replace, dict):
            given = dict(replace)
        else:
            replace = list(replace)
            if len(replace) != len(self.inputs):
                raise ValueError(f"bind: {len(self.inputs)} inputs, got {len(replace)} Variables")
            given = dict(zip(self.inputs, replace))
        for var in self.inputs:
            if var not in given:
                raise KeyError(f"bind: no Variable given for input {var}")
        memo: dict[Variable, Variable] = dict(given)
        for node in self.toposort():
            args = []
            for inp in node.inputs:
                if inp in memo:
                    args.append(memo[inp])
                elif isinstance(inp, Constant):
                    args.append(inp)
                else:
                    raise KeyError(f"bind: no Variable given for {inp}")
            new = node.op.make_node(*args)
            for old, out in zip(node.outputs, new.outputs):
                memo[old] = out
        return [memo.get(o, o) for o in self.outputs]

    def unfreeze(self) -> FunctionGraph:
        """A mutable FunctionGraph with fresh nodes, on fresh inputs of the same Types."""
        inputs = [var.type() for var in self.inputs]
        return FunctionGraph(inputs, self.bind(inputs), clone=False)

    def __reduce__(self) -> tuple:
        # rebuilt from a mutable copy, so that unpickling interns the nodes again
        fg = self.unfreeze()
        return (FrozenFunctionGraph, (fg.inputs, fg.outputs))

    def __str__(self) -> str:
        return f"FrozenFunctionGraph({', '.join(_expr(o, set(self.inputs)) for o in self.outputs)})"

    __repr__ = __str__


def _expr(var: Variable, inputs: set) -> str:
    """Nested ``op(args)`` text of ``var`` (iterative; used for small graphs only)."""
    text: dict = {}
    for node in io_toposort(inputs, [var]):
        args = ", ".join(text.get(i, str(i)) for i in node.inputs)
        s = f"{node.op}({args})"
        for k, out in enumerate(node.outputs):
            text[out] = out.name or (s if len(node.outputs) == 1 else f"{s}.{k}")
    return text.get(var, str(var))
