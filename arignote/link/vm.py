"""The reference linker: a Python VM over each node's thunk (``Op.make_thunk``/``perform``).

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
from arignote.link.perform import describe_node_failure

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
        self.thunks = thunks
        self.storage_map = storage_map
        self.compute_map = compute_map
        self.pre_call_clear = pre_call_clear
        self.post_thunk_clear = post_thunk_clear
        self.keep = keep
        self.profile = profile
        self.lazy = any(getattr(t, "lazy", False) for t in thunks)
        self._computed_cells = [compute_map[v] for node in nodes for v in node.outputs]
        self.output_cells = [[storage_map[v] for v in node.outputs] for node in nodes]
        self.need_update_inputs = True

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
        clears = self.post_thunk_clear
        outs = self.output_cells
        k = 0
        try:
            for k, thunk in enumerate(self.thunks):
                thunk()
                for cell in outs[k]:
                    if cell[0] is None:
                        self._unset_output(k)
                for cell in clears[k]:
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

        A lazy thunk returns the indices of inputs it still needs (or nothing when done);
        the others need all their inputs. Nothing is computed that no output asks for.
        """
        compute_map, storage_map = self.compute_map, self.storage_map
        for cell in self._computed_cells:
            cell[0] = False
        index = {node: k for k, node in enumerate(self.nodes)}
        stack: list[Apply] = [
            o.owner for o in self.fgraph.outputs if o.owner is not None and not compute_map[o][0]
        ]
        profile = self.profile
        while stack:
            node = stack[-1]
            if all(compute_map[o][0] for o in node.outputs):
                stack.pop()
                continue
            k = index[node]
            thunk = self.thunks[k]
            if getattr(thunk, "lazy", False):
                needed = self._lazy_step(k, thunk)
                pending = [node.inputs[i] for i in needed or () if not compute_map[node.inputs[i]][0]]
                if not pending:
                    if needed:
                        continue  # asked for inputs already there: run again
                    stack.pop()
                    continue
                stack.extend(v.owner for v in pending if v.owner is not None)
                continue
            pending = [v for v in node.inputs if not compute_map[v][0]]
            if pending:
                stack.extend(v.owner for v in pending if v.owner is not None)
                continue
            t0 = time.perf_counter() if profile is not None else 0.0
            try:
                thunk()
            except Exception as err:
                self._fail(k, err)
                raise
            if profile is not None:
                profile.record_node(node, time.perf_counter() - t0, storage_map)
            stack.pop()

    def _lazy_step(self, k: int, thunk: Callable) -> Any:
        try:
            return thunk()
        except Exception as err:
            self._fail(k, err)
            raise


class VMLinker:
    """Builds a :class:`VM` for a FunctionGraph: thunks from each Op's ``make_thunk``.

    ``allow_gc``: free intermediate values as soon as their last user has run.
    """

    def __init__(self, allow_gc: bool = True, use_cloop: bool = False, lazy: bool | None = None):
        self.allow_gc = allow_gc
        self.lazy = lazy

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.allow_gc == other.allow_gc

    def __hash__(self) -> int:
        return hash((type(self), self.allow_gc))

    def __repr__(self) -> str:
        return f"VMLinker(allow_gc={self.allow_gc})"

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
        reuses a buffer the caller still holds.
        """
        nodes = fgraph.toposort()
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
        make = thunk_maker or (lambda node: node.op.make_thunk(node, storage_map, compute_map, [], None))
        thunks = []
        for node in nodes:
            thunk = make(node)
            if not callable(thunk):
                raise TypeError(f"{node.op}.make_thunk returned {thunk!r}, not a callable")
            thunks.append(thunk)
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
