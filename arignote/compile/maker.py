"""FunctionMaker: from inputs/outputs/updates to a rewritten FunctionGraph and a linked VM."""

from __future__ import annotations

import copy
import time
import warnings
from typing import Any

from arignote.compile.executor import Function, _make_profile
from arignote.compile.io import SymbolicInput, SymbolicOutput
from arignote.compile.mode import Mode, get_mode
from arignote.compile.rebuild import UnusedInputError, _pairs, rebuild_collect_shared
from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.graph.container import Container
from arignote.graph.destroyhandler import DestroyHandler
from arignote.graph.fg import FunctionGraph
from arignote.graph.traversal import ancestors
from arignote.graph.utils import MissingInputError

__all__ = ["FunctionMaker", "UnusedInputError"]


def __getattr__(name: str) -> Any:
    # PyTensor 3 keeps ``function`` in compile/maker.py; its home here is compile/function.py,
    # which imports this module, so it is served on first access
    if name == "function":
        from arignote.compile.function import function

        return function
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class FunctionMaker:
    """Builds the FunctionGraph of a function (givens applied, updates and shared inputs
    collected, rewrites run) and links it; :meth:`create` makes the callable.

    ``fgraph.inputs`` are the explicit inputs then the shared variables; ``fgraph.outputs``
    are the outputs then the update expressions (``update_mapping`` pairs them up).
    """

    def __init__(
        self,
        inputs: list[SymbolicInput],
        outputs: list[SymbolicOutput],
        mode: Any = None,
        updates: Any = None,
        givens: Any = None,
        no_default_updates: Any = False,
        accept_inplace: bool = False,
        name: str | None = None,
        rebuild_strict: bool = True,
        allow_input_downcast: bool | None = None,
        profile: Any = None,
        on_unused_input: str | None = None,
        output_kind: Any = ("list", None),
    ):
        t_start = time.perf_counter()
        self.mode: Mode = get_mode(mode)
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.name = name
        self.output_kind = output_kind
        self.allow_input_downcast = allow_input_downcast
        self.accept_inplace = accept_inplace
        self.profile = _make_profile(profile, name)
        on_unused_input = on_unused_input or config.on_unused_input
        if on_unused_input not in ("raise", "warn", "ignore"):
            raise ValueError(f"on_unused_input must be 'raise', 'warn' or 'ignore', got {on_unused_input!r}")

        self.inputs, cuts = _cut_at_intermediate_inputs(self.inputs)
        input_updates = [
            (k, _check_input_update(i)) for k, i in enumerate(self.inputs) if i.update is not None
        ]
        outs, shared_updates, shared_vars = rebuild_collect_shared(
            [o.variable for o in self.outputs] + [u for _, u in input_updates],
            givens=_pairs_with(givens, cuts),
            updates=updates,
            no_default_updates=no_default_updates,
            rebuild_strict=rebuild_strict,
        )
        n_out = len(self.outputs)
        out_vars, in_update_vars = outs[:n_out], outs[n_out:]
        explicit = [i.variable for i in self.inputs]
        shared_vars = [v for v in shared_vars if v not in set(explicit)]
        self.shared_inputs = shared_vars
        fg_inputs = explicit + shared_vars
        fg_outputs = out_vars + [e for _, e in shared_updates] + in_update_vars
        update_mapping = {n_out + k: fg_inputs.index(v) for k, (v, _) in enumerate(shared_updates)}
        base = n_out + len(shared_updates)
        update_mapping.update({base + k: idx for k, (idx, _) in enumerate(input_updates)})
        # where the rewrites start by merging, the copy is merged as it is made (cheaper
        # than copying the duplicates and merging them after)
        stages = getattr(self.mode.optimizer, "stages_to_run", None)
        merge = stages is not None and "merge" in stages()
        try:
            self.fgraph = FunctionGraph(
                fg_inputs, fg_outputs, clone=True, update_mapping=update_mapping, merge=merge
            )
            if merge:
                self.fgraph._merged_copy = True  # type: ignore[attr-defined]  # (merge_pass reads it)
        except MissingInputError as err:
            used = set(ancestors(fg_outputs))  # (an unused input is reported first, as always)
            self._check_unused(explicit, [v in used for v in explicit], on_unused_input)
            names = ", ".join(str(v) for v in explicit) or "none"
            raise MissingInputError(
                f"{err}\nThe function's inputs are: {names}. Add the missing Variable to the inputs, "
                "give it with givens, or make it a shared variable.",
                variable=err.variable,
            ) from None
        mutable = [v for spec, v in zip(self.inputs, self.fgraph.inputs) if getattr(spec, "mutable", False)]
        if mutable:  # In(x, mutable=True): in-place rules may overwrite the caller's array
            self.fgraph.attach_feature(DestroyHandler(mutable=mutable))
        # the graph holds what the outputs need: an input is used when it has a client
        clients = self.fgraph.clients
        self._check_unused(explicit, [bool(clients.get(v)) for v in self.fgraph.inputs], on_unused_input)
        self._check_inplace()
        self.n_outputs = n_out
        self.shared_updates = shared_updates
        self.input_updates = input_updates
        t_rewrite = time.perf_counter()
        self.rewrite_timings = self.mode.optimizer(self.fgraph)
        # nothing reverts past this point: the change record would keep all that the
        # rewrites replaced alive with the function
        forget = getattr(self.fgraph, "forget_history", None)
        if forget is not None:
            forget()
        self.rewrite_time = time.perf_counter() - t_rewrite
        self.build_time = t_rewrite - t_start
        self.link_time = 0.0

    def _check_unused(self, explicit: list[Variable], used: list[bool], policy: str) -> None:
        """``used[k]``: whether explicit input ``k`` is needed by the outputs."""
        if policy == "ignore" or not explicit:
            return
        for k, var in enumerate(explicit):
            if used[k]:
                continue
            msg = (
                f"function() was given input {k} ({var}), which is not needed to compute the "
                "outputs. Pass on_unused_input='warn' or 'ignore' if that is intended."
            )
            if policy == "raise":
                raise UnusedInputError(msg)
            warnings.warn(msg, stacklevel=4)

    def _check_inplace(self) -> None:
        if self.accept_inplace:
            return
        for node in self.fgraph.apply_nodes:
            if getattr(node.op, "destroy_map", None):
                raise TypeError(
                    f"The graph contains the in-place operation {node} (it overwrites an input). "
                    "Pass accept_inplace=True if the graph was built that way on purpose."
                )

    # -- linking --------------------------------------------------------------------------

    def input_containers(self) -> list[Container]:
        """Fresh containers for the explicit inputs; shared variables' own containers."""
        containers = []
        for spec in self.inputs:
            var = spec.variable
            allow = spec.allow_downcast if spec.allow_downcast is not None else self.allow_input_downcast
            cell = [None]
            container = Container(var.type, cell, name=spec.name, strict=spec.strict, allow_downcast=allow)
            containers.append(container)
        containers.extend(v.container for v in self.shared_inputs)
        return containers

    def link(self, containers: list[Container]) -> tuple[Any, list[list]]:
        t0 = time.perf_counter()
        no_recycling = [
            v
            for v, o in zip(
                self.fgraph.outputs, [*self.outputs, *[None] * (len(self.fgraph.outputs) - self.n_outputs)]
            )
            if o is None or not o.borrow
        ]
        vm, out_cells = self.mode.linker.make_vm(
            self.fgraph, [c.storage for c in containers], no_recycling, profile=self.profile
        )
        self.link_time += time.perf_counter() - t0
        return vm, out_cells

    def create(self, containers: list[Container] | None = None) -> Any:
        """The compiled :class:`~arignote.compile.executor.Function`."""
        containers = containers if containers is not None else self.input_containers()
        vm, out_cells = self.link(containers)
        if self.profile is not None:
            self.profile.record_compile(
                build=self.build_time,
                rewrite=self.rewrite_time,
                link=self.link_time,
                stages=self.rewrite_timings,
            )
        return Function(self, containers, vm, out_cells)

    def __getstate__(self) -> dict:
        return dict(self.__dict__)


def _cut_at_intermediate_inputs(specs: list[SymbolicInput]) -> tuple[list[SymbolicInput], dict]:
    """An input computed by the graph (``function([y], f(y))`` with ``y = g(x)``) cuts
    the graph there: it is replaced by a fresh root Variable of the same Type."""
    cuts: dict = {}
    out = []
    for spec in specs:
        var = spec.variable
        if var.owner is not None:
            root = var.clone()
            cuts[var] = root
            spec = copy.copy(spec)
            spec.variable = root
        out.append(spec)
    return out, cuts


def _check_input_update(spec: SymbolicInput) -> Variable:
    """The update of an input, converted to the input's Type (e.g. given the static shape
    the input has), so the value stored after a call is always one of that Type."""
    var = spec.variable
    try:
        return var.type.filter_variable(spec.update, allow_convert=True)
    except TypeError as err:
        raise TypeError(f"The update of input {var} (Type {var.type}): {err}") from None


def _pairs_with(givens: Any, cuts: dict) -> Any:
    if not cuts:
        return givens
    return [*_pairs(givens, "givens"), *cuts.items()]
