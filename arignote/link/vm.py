"""The reference linker: a Python VM over each node's thunk, from the Python backend
(:func:`arignote.link.python.python_thunk`: a registered thunk, else ``Op.make_thunk`` /
``perform``).

It is the living definition of what every Op computes: one storage cell per Variable,
one compute flag per Variable, thunks run in topological order, intermediate values
dropped once their last user has run. Graphs with lazy Ops (``IfElse``) are run
demand-driven, so only the branch taken is computed.

Every faster backend is tested against this one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.utils import MetaObject, gc_paused
from arignote.link.perform import describe_node_failure
from arignote.link.python import impl_name, python_thunk

__all__ = ["VM", "VMLinker"]


class VM:
    """Runs the thunks of one FunctionGraph on its storage map.

    ``storage_map[v]`` is the one-element cell of Variable ``v`` (inputs' cells are the
    function's input containers); ``compute_map[v]`` its computed flag. Calling the VM
    computes every output cell.
    """

    def __init__(
        self,
        fgraph: FunctionGraph,
        nodes: list[Apply],
        thunks: list[Callable],
        storage_map: dict[Variable, list],
        compute_map: dict[Variable, list],
        pre_call_clear: list[list],
        post_thunk_clear: list[list[list]],
        keep: set,
        profile: Any = None,
    ):
        self.fgraph = fgraph
        self.nodes = nodes
        self.storage_map = storage_map
        self.compute_map = compute_map
        self.pre_call_clear = pre_call_clear
        self.post_thunk_clear = post_thunk_clear
        self.keep = keep
        self.profile = profile
        self._computed_cells = [compute_map[v] for node in nodes for v in node.outputs]
        self.output_cells = [[storage_map[v] for v in node.outputs] for node in nodes]
        self.need_update_inputs = True
        self.thunks = thunks  # (builds the plan the call runs)
        self.lazy = any(getattr(t, "lazy", False) for t in thunks)

    @property
    def thunks(self) -> list[Callable]:
        return self._thunks

    @thunks.setter
    def thunks(self, thunks: list[Callable]) -> None:
        # What one call does per node, resolved once: (index, thunk, the output cells to
        # check, the cells to clear after it). A thunk that says it always sets its
        # outputs (``thunk.sets_outputs``) is not checked.
        self._thunks = thunks
        self._steps = [
            (
                k,
                thunk,
                () if getattr(thunk, "sets_outputs", False) else tuple(self.output_cells[k]),
                tuple(self.post_thunk_clear[k]),
            )
            for k, thunk in enumerate(thunks)
        ]

    def impl_of(self, node: Apply) -> str:
        """What runs ``node``: ``"python"`` (a thunk registered with the Python backend),
        ``"make_thunk"`` (the Op's own) or ``"perform"`` (the generic thunk: the slow
        path). ``dprint`` of a compiled function marks the last ones."""
        return impl_name(node.op)

    def _fail(self, k: int, err: Exception) -> None:
        node = self.nodes[k]
        err.add_note(describe_node_failure(node, [self.storage_map[i][0] for i in node.inputs]))

    def __call__(self) -> None:
        for cell in self.pre_call_clear:
            cell[0] = None
        if self.lazy:
            self._run_lazy()
            return
        profile = self.profile
        if profile is not None:
            self._run_profiled(profile)
            return
        k = 0
        try:
            for k, thunk, outs, clears in self._steps:
                thunk()
                if outs:  # (an empty loop costs more than the test)
                    for cell in outs:
                        if cell[0] is None:
                            self._unset_output(k)
                if clears:
                    for cell in clears:
                        cell[0] = None
        except Exception as err:
            self._fail(k, err)
            raise

    def _unset_output(self, k: int) -> None:
        node = self.nodes[k]
        for i, var in enumerate(node.outputs):
            if self.storage_map[var][0] is None:
                raise ValueError(f"{node.op}.perform did not set output {i} of {node}")

    def _run_profiled(self, profile: Any) -> None:
        clears = self.post_thunk_clear
        for k, thunk in enumerate(self.thunks):
            t0 = time.perf_counter()
            try:
                thunk()
            except Exception as err:
                self._fail(k, err)
                raise
            profile.record_node(self.nodes[k], time.perf_counter() - t0, self.storage_map)
            if any(cell[0] is None for cell in self.output_cells[k]):
                self._unset_output(k)
            for cell in clears[k]:
                cell[0] = None

    def _run_lazy(self) -> None:
        """Demand-driven evaluation: a node runs once the inputs it asks for are computed.

        Starting from the outputs' nodes, a stack of node indices: a non-lazy node whose
        inputs (and the nodes ``fgraph.orderings()`` puts before it) are all computed
        runs, else the nodes computing the missing ones are pushed. A lazy thunk
        (``thunk.lazy``) is called instead, as often as needed: it returns the indices of
        the inputs it still needs, and an empty list (or ``None``) once it has set its
        outputs and their ``compute_map`` flags. Nothing is computed that no output asks
        for. With ``allow_gc`` a value is dropped once every node using it has run
        (``compute_map`` flag 2: gone, not to be recomputed), and whatever is left (a
        value only an untaken branch also used) at the end of the call.
        """
        plan = self.__dict__.get("_lazy_plan")
        if plan is None:
            plan = self._lazy_plan = self._make_lazy_plan()
        roots, done, wait, in_flags, producers = plan[:5]
        out_flags, out_cells, is_lazy, gc_in, gc_count, gc_cells = plan[5:]
        for cell in self._computed_cells:
            cell[0] = False
        remaining = list(gc_count)
        nodes, thunks, profile = self.nodes, self.thunks, self.profile
        lazy_time: dict[int, float] = {}
        stack = list(roots)
        while stack:
            k = stack[-1]
            if done[k][0]:  # a node's outputs are flagged together: the first one tells
                stack.pop()
                continue
            missing = [p for f, p in wait[k] if not f[0]]
            if missing:
                self._lazy_push(k, missing, stack)
                continue
            t0 = time.perf_counter() if profile is not None else 0.0
            if is_lazy[k]:
                needed = self._lazy_call(k, thunks[k], in_flags[k])
                if profile is not None:
                    lazy_time[k] = lazy_time.get(k, 0.0) + time.perf_counter() - t0
                if needed:
                    self._lazy_push(k, [producers[k][i] for i in needed], stack)
                    continue
                if profile is not None:
                    profile.record_node(nodes[k], lazy_time.pop(k, 0.0), self.storage_map)
            else:
                try:
                    thunks[k]()
                except Exception as err:
                    self._fail(k, err)
                    raise
                if profile is not None:
                    profile.record_node(nodes[k], time.perf_counter() - t0, self.storage_map)
            for cell in out_cells[k]:
                if cell[0] is None:
                    self._unset_output(k)
            for f in out_flags[k]:
                f[0] = True
            stack.pop()
            for g in gc_in[k]:
                remaining[g] -= 1
                if remaining[g] == 0:
                    cell, flag = gc_cells[g]
                    cell[0] = None
                    if flag[0]:  # (an untaken branch's value was never computed)
                        flag[0] = 2
        for cell, _ in gc_cells:
            cell[0] = None

    def _lazy_push(self, k: int, missing: list, stack: list[int]) -> None:
        for p in missing:
            if p is None:  # a root Variable without a value: a linker bug, never a user's
                node = self.nodes[k]
                absent = [v for v in node.inputs if v.owner is None and not self.compute_map[v][0]]
                raise RuntimeError(f"{node} needs {absent or 'an input'}, which has no value and no owner")
            stack.append(p)

    def _lazy_call(self, k: int, thunk: Callable, in_flags: list[list]) -> list[int]:
        """Call a lazy thunk until it is done or asks for an input not computed yet."""
        for _ in range(len(in_flags) + 2):
            try:
                needed = thunk()
            except Exception as err:
                self._fail(k, err)
                raise
            if not needed:
                return []
            pending = [i for i in needed if not in_flags[i][0]]
            if pending:
                return pending
        raise RuntimeError(
            f"The lazy thunk of {self.nodes[k]} keeps asking for inputs that are already computed "
            f"({list(needed)}) without setting its outputs"
        )

    def _make_lazy_plan(self) -> tuple:
        """Per node index: what ``_run_lazy`` checks and does, computed once per VM."""
        nodes, compute_map, storage_map = self.nodes, self.compute_map, self.storage_map
        index = {node: k for k, node in enumerate(nodes)}
        produced_by = {v: k for k, node in enumerate(nodes) for v in node.outputs}
        orderings = self.fgraph.orderings() if hasattr(self.fgraph, "orderings") else {}
        collectable = {id(cell) for clears in self.post_thunk_clear for cell in clears}
        gc_index: dict[Variable, int] = {}
        gc_cells: list[tuple[list, list]] = []
        clients: list[set] = []
        done, wait, in_flags, producers, out_flags, out_cells, is_lazy = [], [], [], [], [], [], []
        for k, node in enumerate(nodes):
            ins = [(compute_map[v], produced_by.get(v)) for v in node.inputs]
            before = [
                (compute_map[v], index[b]) for b in orderings.get(node, ()) if b in index for v in b.outputs
            ]
            lazy = bool(getattr(self.thunks[k], "lazy", False))
            is_lazy.append(lazy)
            # a lazy node asks for its inputs itself; the nodes ordered before it come first
            wait.append(before if lazy else ins + before)
            in_flags.append([f for f, _ in ins])
            producers.append([p for _, p in ins])
            out_flags.append([compute_map[v] for v in node.outputs])
            out_cells.append([storage_map[v] for v in node.outputs])
            done.append(out_flags[-1][0] if node.outputs else [True])
            for v in (*node.inputs, *node.outputs):
                if v not in gc_index and v.owner is not None and id(storage_map[v]) in collectable:
                    gc_index[v] = len(gc_cells)
                    gc_cells.append((storage_map[v], compute_map[v]))
                    clients.append(set())
            for v in node.inputs:
                if v in gc_index:
                    clients[gc_index[v]].add(k)
        gc_in: list[list[int]] = [[] for _ in nodes]
        gc_count = [len(c) for c in clients]
        for g, users in enumerate(clients):
            for k in users:
                gc_in[k].append(g)
        for v, g in gc_index.items():
            if not clients[g]:  # an output nobody uses: dropped as soon as its node has run
                gc_count[g] = 1
                gc_in[produced_by[v]].append(g)
        roots = [produced_by[o] for o in reversed(self.fgraph.outputs) if o in produced_by]
        return (
            roots,
            done,
            wait,
            in_flags,
            producers,
            out_flags,
            out_cells,
            is_lazy,
            gc_in,
            gc_count,
            gc_cells,
        )


class VMLinker(MetaObject):
    """Builds a :class:`VM` for a FunctionGraph: each node's thunk from the Python backend
    (:func:`~arignote.link.python.python_thunk`, whose default is the Op's ``make_thunk``).

    ``allow_gc``: free intermediate values as soon as their last user has run. Linkers
    compare by ``__props__`` (subclasses list their own settings there).
    """

    __props__ = ("allow_gc",)

    def __init__(self, allow_gc: bool = True, use_cloop: bool = False, lazy: bool | None = None):
        self.allow_gc = allow_gc
        self.lazy = lazy

    def __repr__(self) -> str:
        return f"VMLinker(allow_gc={self.allow_gc})"

    def __str__(self) -> str:
        return repr(self)

    def make_vm(
        self,
        fgraph: FunctionGraph,
        input_storage: Sequence[list],
        no_recycling: Sequence[Variable],
        profile: Any = None,
        thunk_maker: Callable | None = None,
    ) -> tuple[VM, list[list]]:
        """(vm, output cells): ``input_storage[i]`` is the cell of ``fgraph.inputs[i]``.

        ``no_recycling`` outputs have their cells cleared before every call, so no Op
        reuses a buffer the caller still holds. ``thunk_maker(node)``, when given, makes
        the thunks instead of the Python backend (DebugMode wraps the backend's in checks).
        """
        with gc_paused():  # a cell, a thunk and closures per node, none freed: no sweeps
            return self._make_vm(fgraph, input_storage, no_recycling, profile, thunk_maker)

    def _make_vm(
        self,
        fgraph: FunctionGraph,
        input_storage: Sequence[list],
        no_recycling: Sequence[Variable],
        profile: Any,
        thunk_maker: Callable | None,
    ) -> tuple[VM, list[list]]:
        nodes = fgraph.toposort()
        storage_map, compute_map = self.make_storage(fgraph, input_storage, nodes)
        thunks = self.make_thunks(nodes, storage_map, compute_map, thunk_maker)
        return self.assemble(fgraph, nodes, thunks, storage_map, compute_map, no_recycling, profile)

    # (the steps of make_vm, which other linkers reuse: arignote.link.python.codegen)

    @staticmethod
    def make_storage(
        fgraph: FunctionGraph, input_storage: Sequence[list], nodes: list[Apply]
    ) -> tuple[dict[Variable, list], dict[Variable, list]]:
        """``(storage_map, compute_map)``: the input cells for ``fgraph.inputs``, a cell
        holding its data for each constant, a fresh empty cell for every other Variable."""
        storage_map: dict[Variable, list] = {}
        compute_map: dict[Variable, list] = {}
        for var, cell in zip(fgraph.inputs, input_storage):
            storage_map[var] = cell
            compute_map[var] = [True]
        for node in nodes:
            for var in node.inputs:
                if var not in storage_map:
                    storage_map[var] = [var.data if isinstance(var, Constant) else None]
                    compute_map[var] = [isinstance(var, Constant)]
            for var in node.outputs:
                storage_map[var] = [None]
                compute_map[var] = [False]
        for var in fgraph.outputs:
            if var not in storage_map:  # an output that is a constant
                storage_map[var] = [var.data if isinstance(var, Constant) else None]
                compute_map[var] = [True]
        return storage_map, compute_map

    @staticmethod
    def make_thunks(
        nodes: list[Apply], storage_map: dict, compute_map: dict, thunk_maker: Callable | None = None
    ) -> list[Callable]:
        """One thunk per node: ``thunk_maker(node)``, else the Python backend's."""
        make = thunk_maker or (lambda node: python_thunk(node.op, node, storage_map, compute_map, [], None))
        thunks = []
        for node in nodes:
            thunk = make(node)
            if not callable(thunk):
                raise TypeError(f"{node.op}.make_thunk returned {thunk!r}, not a callable")
            thunks.append(thunk)
        return thunks

    def assemble(
        self,
        fgraph: FunctionGraph,
        nodes: list[Apply],
        thunks: list[Callable],
        storage_map: dict,
        compute_map: dict,
        no_recycling: Sequence[Variable],
        profile: Any = None,
    ) -> tuple[VM, list[list]]:
        """The :class:`VM` running ``thunks`` (one per node of ``nodes``) and the output cells."""
        keep = set(fgraph.inputs) | set(fgraph.outputs)
        post_clear = self._gc_plan(nodes, keep, storage_map) if self.allow_gc else [[] for _ in nodes]
        recycle = set(no_recycling)
        pre_clear = [storage_map[v] for v in fgraph.outputs if v in recycle and v.owner is not None]
        vm = VM(fgraph, nodes, thunks, storage_map, compute_map, pre_clear, post_clear, keep, profile)
        return vm, [storage_map[v] for v in fgraph.outputs]

    @staticmethod
    def _gc_plan(nodes: list[Apply], keep: set, storage_map: dict) -> list[list[list]]:
        last_use: dict[Variable, int] = {}
        for k, node in enumerate(nodes):
            for var in node.inputs:
                last_use[var] = k
            for var in node.outputs:
                last_use.setdefault(var, k)  # an unused output can go right away
        plan: list[list[list]] = [[] for _ in nodes]
        for var, k in last_use.items():
            if var in keep or isinstance(var, Constant) or var.owner is None:
                continue
            plan[k].append(storage_map[var])
        return plan
