"""FunctionMaker: from inputs/outputs/updates to a rewritten FunctionGraph and a linked VM."""

from __future__ import annotations

import copy
import time
import warnings
from typing import Any

from arignote.compile.executor import Function, _make_profile
from arignote.compile.io import In, SymbolicInput, SymbolicOutput
from arignote.compile.mode import Mode, get_mode
from arignote.compile.rebuild import UnusedInputError, _pairs, rebuild_collect_shared
from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.graph.container import Container
from arignote.graph.destroyhandler import DestroyHandler
from arignote.graph.features import Feature
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

    As in PyTensor, ``inputs`` may be Variables, :class:`~arignote.compile.io.In` or
    ``(variable, update)`` pairs, and ``outputs`` a list of Variables or
    :class:`~arignote.compile.io.Out`, one of them (the function returns it alone:
    :attr:`unpack_single`) or ``None`` (the function returns None: :attr:`return_none`).
    """

    #: the class :meth:`create` makes (a subclass of Function may be put here)
    function_class: type[Function] = Function

    def __init__(
        self,
        inputs: Any,
        outputs: Any,
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
        trust_input: bool = False,
    ):
        t_start = time.perf_counter()
        self.mode: Mode = get_mode(mode)
        if outputs is None:
            outputs, output_kind = [], ("none", None)
        elif not isinstance(outputs, (list, tuple)):
            outputs, output_kind = [outputs], ("single", None)
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        self.inputs = [self.wrap_in(i) for i in inputs]
        self.outputs = [self.wrap_out(o) for o in outputs]
        self.name = name
        self.output_kind = output_kind
        self.trust_input = bool(trust_input)
        self.allow_input_downcast = allow_input_downcast
        self.accept_inplace = accept_inplace
        self.profile = _make_profile(profile, name)
        on_unused_input = on_unused_input or config.on_unused_input
        if on_unused_input not in ("raise", "warn", "ignore"):
            raise ValueError(f"on_unused_input must be 'raise', 'warn' or 'ignore', got {on_unused_input!r}")
        self.on_unused_input = on_unused_input

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

    # -- what the function returns, and its inputs ---------------------------------------

    @property
    def unpack_single(self) -> bool:
        """Whether the function returns its one output alone (``outputs`` was not a list)."""
        return self.output_kind[0] == "single"

    @property
    def return_none(self) -> bool:
        """Whether the function returns None (``outputs`` was None; ``function()`` gives []
        for that, as PyTensor's)."""
        return self.output_kind[0] == "none"

    @property
    def linker(self) -> Any:
        """The linker of the mode, which links this maker's graph (:meth:`create`)."""
        return self.mode.linker

    @property
    def expanded_inputs(self) -> list[SymbolicInput]:
        """Every input of the compiled graph, in the order of ``fgraph.inputs``: the explicit
        ones, then one implicit :class:`~arignote.compile.io.In` per shared variable (with its
        update, if any)."""
        updates = dict(self.shared_updates)
        shared = [In(v, update=updates.get(v), implicit=True) for v in self.shared_inputs]
        return [*self.inputs, *shared]

    @property
    def required(self) -> list[bool]:
        """For each of :attr:`expanded_inputs`, whether a call must give its value (the
        explicit inputs: inputs have no defaults; a shared variable holds its own)."""
        return [not spec.implicit for spec in self.expanded_inputs]

    @staticmethod
    def wrap_in(input: Any) -> SymbolicInput:
        """``input`` as a :class:`~arignote.compile.io.SymbolicInput`: a Variable becomes
        ``In(variable)``, a pair ``(variable, update)`` ``In(variable, update=update)``."""
        if isinstance(input, SymbolicInput):
            return input
        if isinstance(input, Variable):
            return In(input)
        if isinstance(input, (list, tuple)):
            if len(input) != 2:
                raise TypeError(f"An input given as a pair must be (variable, update), got {input!r}")
            return In(input[0], update=input[1])
        raise TypeError(f"An input must be a Variable, an In or a (variable, update) pair, got {input!r}")

    @staticmethod
    def wrap_out(output: Any) -> SymbolicOutput:
        """``output`` as a :class:`~arignote.compile.io.SymbolicOutput` (a Variable becomes
        ``Out(variable)``)."""
        if isinstance(output, SymbolicOutput):
            return output
        if isinstance(output, Variable):
            return SymbolicOutput(output)
        raise TypeError(f"An output must be a Variable or an Out, got {type(output).__name__} {output!r}")

    @staticmethod
    def check_unused_inputs(
        inputs: list[SymbolicInput], outputs: list[SymbolicOutput], on_unused_input: str | None
    ) -> None:
        """Warn about or reject (``on_unused_input``: ``"warn"``, ``"raise"``, ``"ignore"``;
        None: ``config.on_unused_input``) each input that neither the outputs nor the
        inputs' updates depend on, and that has no update of its own."""
        policy = on_unused_input or config.on_unused_input
        if policy not in ("raise", "warn", "ignore"):
            raise ValueError(f"on_unused_input must be 'raise', 'warn' or 'ignore', got {policy!r}")
        if policy == "ignore":
            return
        roots = [o.variable for o in outputs] + [i.update for i in inputs if i.update is not None]
        # (an input is a leaf of the function: what computes it does not count)
        used = set(ancestors(roots, blockers=[i.variable for i in inputs]))
        for k, spec in enumerate(inputs):
            if spec.update is None and spec.variable not in used:
                _unused(f"input {k} ({spec.variable}) is", policy, stacklevel=3)

    @staticmethod
    def create_fgraph(
        input_specs: list[SymbolicInput],
        output_specs: list[SymbolicOutput],
        accept_inplace: bool = False,
        fgraph: FunctionGraph | None = None,
        features: tuple[type[Feature], ...] | list[type[Feature]] = (),
        force_clone: bool = False,
    ) -> tuple[FunctionGraph, list[SymbolicOutput]]:
        """The FunctionGraph of the specs, and an Out per input update.

        Its outputs are the outputs' variables, then the update of each input that has one
        (``update_mapping`` says whose). A given ``fgraph`` without an ``update_mapping``
        gets the updates added to its outputs instead of a new graph being made. The graph
        is a copy when ``force_clone`` or when an input is computed by the graph; with
        ``accept_inplace`` False an in-place operation in it is a TypeError. ``features``:
        Feature classes, one of each is attached.
        """
        updates, update_mapping = [], {}
        for idx, spec in enumerate(input_specs):
            if spec.update is not None:
                update_mapping[len(output_specs) + len(updates)] = idx
                updates.append(spec.update)
        if fgraph is None:
            input_vars = [spec.variable for spec in input_specs]
            clone = force_clone or any(v.owner is not None for v in input_vars)
            fgraph = FunctionGraph(
                input_vars,
                [spec.variable for spec in output_specs] + updates,
                update_mapping=update_mapping,
                clone=clone,
            )
        elif fgraph.update_mapping is None:
            fgraph.update_mapping = update_mapping
            for update in updates:
                fgraph.add_output(update, reason="create_fgraph")
        else:
            updates = []  # (the given graph has its updates already)
        if not accept_inplace:
            for node in fgraph.apply_nodes:
                if getattr(node.op, "destroy_map", None):
                    raise TypeError(
                        f"The graph contains the in-place operation {node} (it overwrites an input); "
                        "pass accept_inplace=True if it was built that way on purpose"
                    )
        for feature in features:
            fgraph.attach_feature(feature())
        return fgraph, [SymbolicOutput(u) for u in updates]

    @staticmethod
    def prepare_fgraph(
        inputs: list[SymbolicInput],
        outputs: list[SymbolicOutput],
        additional_outputs: list[SymbolicOutput],
        fgraph: FunctionGraph,
        mode: Any,
        profile: Any,
    ) -> None:
        """Rewrite ``fgraph`` in place with ``mode``'s rewrites (a Mode or its name), as
        compiling does. ``inputs``, ``outputs``, ``additional_outputs`` and ``profile`` are
        PyTensor's arguments, which its rewriting reads no more than this does."""
        get_mode(mode).optimizer(fgraph)

    def _check_unused(self, explicit: list[Variable], used: list[bool], policy: str) -> None:
        """``used[k]``: whether explicit input ``k`` is needed by the outputs."""
        if policy == "ignore" or not explicit:
            return
        for k, var in enumerate(explicit):
            if not used[k]:
                _unused(f"function() was given input {k} ({var}), which is", policy, stacklevel=5)

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
        return self.function_class(self, containers, vm, out_cells)

    def __getstate__(self) -> dict:
        return dict(self.__dict__)


# (set here: the mode module is below this one) the maker function() uses for a mode;
# a Mode subclass may name its own
Mode.function_maker = FunctionMaker


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


def _unused(what: str, policy: str, stacklevel: int) -> None:
    """Raise or warn (``policy``) that an input (``what``: "input 0 (x) is") is not needed."""
    msg = f"{what} not needed to compute the outputs. Pass on_unused_input='warn' or 'ignore' if that is intended."
    if policy == "raise":
        raise UnusedInputError(msg)
    warnings.warn(msg, stacklevel=stacklevel)
