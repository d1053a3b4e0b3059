"""Tier 1 of the fast CPU backend: a compiled FunctionGraph as ONE generated Python function.

:class:`PyGenLinker` writes the glue the reference VM interprets (run each node's thunk in
order, check its outputs, drop dead values) as straight-line Python source, one statement
per node, and compiles it. Values flow between nodes as local variables of that function:

* an Elemwise that the Python backend runs as one NumPy call (the decision is
  :mod:`arignote.link.python.elemwise`'s: ``_elemwise_plan`` for a ufunc or a cast, the
  fused body of a Composite) is that call written out on the locals, with the same
  broadcast check and the same fallback for an unusual result (``_finish``);
* any other node calls its thunk (the one the VM would run, from
  :func:`~arignote.link.python.python_thunk`), which reads and writes the node's storage
  cells: a local its input needs is stored in the input's cell first, its outputs are read
  back into locals where a later statement needs them;
* a value is dropped (``del``, and its cell emptied) right after its last use, where the
  VM's garbage collection drops it, so memory stays what the VM gives.

Constants, ufuncs, thunks, cells and dtypes are never written into the source: they are
names (``_k``, ``_exp``, ``_thunk3``, ``_in_x``, ``_out0``, ...) of the function's own
namespace (``f.vm.__globals__``), so the source depends on the graph's structure only (the
compiled code is shared by graphs of the same shape, e.g. ``x + 1`` and ``x + 2``), never
on a constant's value. A call on inputs proven to be ndarrays of their Types' dtypes (the
results of earlier written-out calls, array constants) needs no check of its result, and
its output takes the name of an input that dies there (``t0 = _exp(t0)``).
Locals are named after the graph's Variables where their names are identifiers.

The runner :meth:`PyGenLinker.make_vm` returns is the generated function itself; it carries
what the executor and the tools read from a VM (``fgraph``, ``nodes``, ``thunks``,
``storage_map``, ``compute_map``, ``lazy``, ``impl_of``) and ``source`` (the text compiled)
and ``line_nodes`` (line number -> node). ``f.vm.source`` of a compiled function shows it.
An exception raised in it gets the note the VM adds (``describe_node_failure``) naming
the node of the line that raised.

Lazy Ops (``IfElse``): a graph with a lazy thunk runs on the reference VM, whose
demand-driven evaluation computes only the branch taken. The link layer cannot know a
lazy Op's input layout (``arignote.ifelse`` is a higher layer; a lazy thunk is opaque),
and the VM's semantics (a node shared by branches of two IfElses computed once, the
DestroyHandler's orderings across branches, values only an untaken branch used) would have
to be re-derived for ``if``/``else`` blocks. So do profiling (``profile=...``), a given
``thunk_maker`` (DebugMode) and graphs of more than :data:`MAX_GENERATED_NODES` nodes
(their generated function would take longer to compile than it saves).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.utils import CodeCache, MetaObject, gc_paused
from arignote.link.perform import describe_node_failure
from arignote.link.python.dispatch import PYTHON, impl_name
from arignote.link.python.elemwise import _composite_body, _elemwise_plan, _finish, one_element_as_0d
from arignote.link.python.heap import raise_mmap_threshold
from arignote.link.vm import VMLinker
from arignote.scalar.composite import Composite
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.type import TensorType

__all__ = ["CALLER_LOCALS", "REFUSED", "ProgramBody", "PyGenLinker", "generate_source"]

#: what a runner's ``call_direct()`` returns, and its ``direct_program`` (a function of the
#: input values returning the outputs, offered to the caller that writes plain calls:
#: :mod:`arignote.compile.plain_call`) when it has ``may_refuse = True``, for a call it
#: leaves to the runner itself (called through its cells, outputs checked by the caller)
REFUSED = object()

#: local names a generated body never uses: a caller's parameters around an inlined
#: program body (:class:`ProgramBody`)
CALLER_LOCALS = frozenset({"self", "rest", "kw"})

#: compiled code by source: graphs of the same shape share it (constants, callees and
#: cells are names of each function's own namespace, never part of the source)
_code = CodeCache("<arignote generated>", 256)

_ndarray = np.ndarray

#: NumPy >= 2 chooses a ufunc's loop from the inputs' dtypes alone (NEP 50), as the
#: backend's ``resolve_dtypes`` did: the result of a call on ndarrays of the dtypes it was
#: chosen for has the output's dtype
_DTYPE_RULES = int(np.__version__.split(".")[0]) >= 2

#: graphs with more nodes link with the VM: CPython compiles a generated function in
#: time that grows faster than its length (a 30k-node gradient: 2.5 s against the VM's
#: 0.56 s), while what a call saves (~0.3 µs a node) is small beside such graphs' work
MAX_GENERATED_NODES = 1000


class PyGenLinker(MetaObject):
    """Links a FunctionGraph into one generated Python function (see the module's doc).

    ``allow_gc``: drop intermediate values right after their last use (as
    :class:`~arignote.link.vm.VMLinker`'s). Graphs with a lazy Op, graphs of more than
    :data:`MAX_GENERATED_NODES` nodes, profiled functions and a ``thunk_maker`` run on
    the reference VM.
    """

    __props__ = ("allow_gc",)

    def __init__(self, allow_gc: bool = True):
        self.allow_gc = allow_gc

    def __repr__(self) -> str:
        return f"PyGenLinker(allow_gc={self.allow_gc})"

    def __str__(self) -> str:
        return repr(self)

    def make_vm(
        self,
        fgraph: FunctionGraph,
        input_storage: Sequence[list],
        no_recycling: Sequence[Variable],
        profile: Any = None,
        thunk_maker: Callable | None = None,
    ) -> tuple[Any, list[list]]:
        """``(runner, output cells)``, as :meth:`VMLinker.make_vm`: calling the runner
        computes every output cell from the input cells (``input_storage[i]`` is the cell
        of ``fgraph.inputs[i]``); ``no_recycling`` outputs' cells are emptied first."""
        raise_mmap_threshold()  # (intermediates reuse the heap's pages: see that module)
        vm_linker = VMLinker(allow_gc=self.allow_gc)
        if profile is not None or thunk_maker is not None:
            return vm_linker.make_vm(fgraph, input_storage, no_recycling, profile, thunk_maker)
        with gc_paused():
            nodes = fgraph.toposort()
            storage_map, compute_map = vm_linker.make_storage(fgraph, input_storage, nodes)
            thunks = vm_linker.make_thunks(nodes, storage_map, compute_map)
            if len(nodes) > MAX_GENERATED_NODES or any(getattr(t, "lazy", False) for t in thunks):
                return vm_linker.assemble(fgraph, nodes, thunks, storage_map, compute_map, no_recycling)
            # (a subclass may run some nodes through thunks it swaps later: tier 2)
            thunk_only = self._thunk_nodes(fgraph, nodes, thunks, storage_map, compute_map)
            gen = _Generator(fgraph, nodes, thunks, storage_map, no_recycling, self.allow_gc, thunk_only)
            gen.prologue = self._prologue()
            runner = gen.build()
        runner.fgraph = fgraph
        runner.nodes = nodes
        runner.thunks = thunks
        runner.storage_map = storage_map
        runner.compute_map = compute_map
        runner.lazy = False
        runner.profile = None
        runner.impl_of = _impl_of
        runner.source = gen.source
        runner.line_nodes = gen.line_nodes
        if gen.program is not None:
            runner.fresh_outputs = True
            runner.program_source = gen.program_source
            runner.call_direct = _direct_call(
                runner, gen.program, [storage_map[v] for v in fgraph.inputs], len(fgraph.outputs)
            )
        self._attach(runner, {k: gen.thunk_name(k) for k in thunk_only})
        return runner, [storage_map[v] for v in fgraph.outputs]

    def _thunk_nodes(
        self, fgraph: FunctionGraph, nodes: list[Apply], thunks: list, storage_map: dict, compute_map: dict
    ) -> set[int]:
        """The indices of nodes to run through their thunks (never written out as NumPy
        calls), whose thunks a subclass may replace in ``thunks`` and swap later; none here."""
        return set()

    def _attach(self, runner: Callable, thunk_names: dict[int, str]) -> None:
        """Called with the runner and the names (in ``runner.__globals__``) of the thunks
        of :meth:`_thunk_nodes`'s nodes; nothing here."""

    def _prologue(self) -> bool:
        """Whether the function starts with ``if _whole is not None and _whole(): return``:
        a subclass binds ``_whole`` (in ``runner.__globals__``, None at first) to a function
        computing the whole call another way (True: done; False: the generated body runs)."""
        return False


def _direct_call(runner: Callable, program: Callable, in_cells: list, n_out: int) -> Callable[[], Any]:
    """``call_direct()`` of a runner whose body is pure (:meth:`_Generator._pure`): the
    outputs of one call through ``program``, once nothing but the body can compute a call
    (no whole-graph function still on trial: a subclass's ``runner.whole``), else
    :data:`REFUSED`. From then on the runner offers ``direct_program``: the caller writes the
    call as values in, ``program``, values out (:mod:`arignote.compile.plain_call`), with no
    cell read or written."""
    converters = (None,) * n_out

    def call_direct() -> Any:
        whole = getattr(runner, "whole", None)
        if whole is None or whole.state.startswith("tier 1"):
            runner.direct_program = (program, converters)
            return list(program(*[c[0] for c in in_cells]))
        return REFUSED

    return call_direct


def _impl_of(node: Apply) -> str:
    """What runs ``node`` (as :meth:`VM.impl_of`): the backend's choice for its Op."""
    return impl_name(node.op)


def generate_source(fgraph: FunctionGraph, allow_gc: bool = True) -> str:
    """The source :class:`PyGenLinker` generates for ``fgraph`` (cells made for the
    occasion; a graph with a lazy Op, or too large, has none: it runs on the VM)."""
    runner, _ = PyGenLinker(allow_gc).make_vm(fgraph, [[None] for _ in fgraph.inputs], [])
    source = getattr(runner, "source", None)
    if source is None:
        raise ValueError(
            "this graph runs on the reference VM (it has a lazy Op, or more than "
            f"{MAX_GENERATED_NODES} nodes): no generated source"
        )
    return source


_NOT_WORD = re.compile(r"\W")


class _Generator:
    """Writes and compiles the function for one FunctionGraph (see the module's doc)."""

    def __init__(
        self,
        fgraph: FunctionGraph,
        nodes: list[Apply],
        thunks: list[Callable],
        storage_map: dict,
        no_recycling: Sequence[Variable],
        allow_gc: bool,
        thunk_only: set[int] | None = None,
    ):
        self.fgraph = fgraph
        self.thunk_only = thunk_only or set()
        self.nodes = nodes
        self.thunks = thunks
        self.storage_map = storage_map
        self.no_recycling = set(no_recycling)
        self.allow_gc = allow_gc
        self.params: dict[str, Any] = {}  # factory parameter name -> value
        self._param_of: dict[int, str] = {}  # id(value) -> its parameter name
        self._next_suffix: dict[str, int] = {}
        # (a caller's own parameters around an inlined program body: see ProgramBody)
        self.used_names: set[str] = set(CALLER_LOCALS)
        self.local: dict[Variable, str] = {}  # Variables bound to a local now (name)
        self.names_of: dict[Variable, str] = {}  # the first local name of each Variable
        self.args: dict[Apply, list[str]] = {}  # a written-out node -> its inputs' expressions
        self.zero_d: dict[int, np.ndarray] = {}  # id(a constant's data) -> the data as 0-d
        # Variables known to hold an ndarray of exactly their Type's dtype and rank: a
        # written-out call on such inputs needs no check of its result (NumPy >= 2 picks a
        # ufunc's loop by dtypes alone, which is how the backend chose the call)
        self.proven: set[Variable] = set()
        # the statements that change where the graph's tensor inputs are proven too (a
        # caller that checked them, see ProgramBody): line index -> its text then (None:
        # dropped, a result check that is needless then)
        self.tensor_inputs = {v for v in fgraph.inputs if isinstance(v.type, TensorType)}
        self.if_inputs_proven: dict[int, str | None] = {}
        self.position = {v: (k, j) for k, n in enumerate(nodes) for j, v in enumerate(n.outputs)}
        self.cell_hints: dict[Variable, str] = {}
        for j, var in enumerate(fgraph.outputs):
            self.cell_hints.setdefault(var, f"out{j}")
        for k, var in enumerate(fgraph.inputs):
            self.cell_hints[var] = f"in_{var.name or k}"
        self.cell_holds: set[Variable] = set()  # Variables whose cell holds the value now
        self.lines: list[tuple[str, int | None]] = []  # (statement, index of its node)
        self.source = ""
        self.line_nodes: dict[int, Apply] = {}
        self.prologue = False
        # the body as a function of the input values (:meth:`_compile_program`), when pure
        self.program: Callable | None = None
        self.program_source = ""
        self.namespace: dict[str, Any] = {}

    # -- names ----------------------------------------------------------------------------

    def param(self, value: Any, hint: str | Callable[[], str]) -> str:
        """The factory parameter holding ``value`` (one per distinct object), named after
        ``hint`` (or what it returns: a name computed only for a new parameter)."""
        name = self._param_of.get(id(value))
        if name is None:
            if callable(hint):
                hint = hint()
            base = "_" + (_NOT_WORD.sub("_", hint) or "p")
            name, k = base, self._next_suffix.get(base, 1)
            while name in self.params:
                name, k = f"{base}{k}", k + 1
            self._next_suffix[base] = k
            self.params[name] = value
            self._param_of[id(value)] = name
        return name

    def fresh_local(self, var: Variable, default: str) -> str:
        """A local name for ``var``: its name where that is an identifier (leading
        underscores dropped: parameters start with one), else ``default``; made unique."""
        base = _NOT_WORD.sub("_", var.name or "").lstrip("_")
        if not base or not base.isidentifier() or keyword.iskeyword(base) or base[0].isdigit():
            base = default
        name, k = base, self._next_suffix.get(base, 1)
        while name in self.used_names or keyword.iskeyword(name):
            name, k = f"{base}_{k}", k + 1
        self._next_suffix[base] = k
        self.used_names.add(name)
        return name

    def cell(self, var: Variable) -> str:
        """The parameter holding ``var``'s storage cell: ``_out<j>`` for an output of
        the graph, ``_in_<name>`` for an input, else ``_s_<local name or node index>``."""
        hint = self.cell_hints.get(var)
        if hint is None:
            k, j = self.position[var]
            hint = f"s_{self.local.get(var) or self.names_of.get(var) or f'{k}_{j}'}"
        return self.param(self.storage_map[var], hint)

    def ref(self, var: Variable) -> str:
        """An expression for the value of ``var`` at this point of the function."""
        if isinstance(var, Constant):
            return self.param(var.data, "k")
        name = self.local.get(var)
        if name is None:  # a value only its cell holds (an input, a thunk's output)
            name = self.fresh_local(var, "v")
            self.emit(f"{name} = {self.cell(var)}[0]", None)
            self.bind(var, name)
        return name

    def bind(self, var: Variable, name: str) -> None:
        self.local[var] = name
        self.names_of.setdefault(var, name)

    def emit(self, line: str, k: int | None) -> None:
        self.lines.append((line, k))

    # -- the function ---------------------------------------------------------------------

    def build(self) -> Callable:
        fgraph, nodes = self.fgraph, self.nodes
        keep = set(fgraph.inputs) | set(fgraph.outputs)
        self.last_use = last_use = self._last_uses(keep)
        for var in fgraph.inputs:
            self.cell(var)
            self.cell_holds.add(var)
        # a Variable used by a written-out statement gets a local as it is produced; the
        # inputs' locals are read first, in order
        self.wants_local = {v for k, n in enumerate(nodes) if self._direct(k) is not None for v in n.inputs}
        for var in fgraph.inputs:
            if var in self.wants_local:
                self.ref(var)
        body_start = len(self.lines)
        pre = [
            self.cell(v)
            for v in dict.fromkeys(fgraph.outputs)
            # (a thunk may reuse the buffer its output cell holds; a written-out
            # statement's output is a fresh array)
            if v in self.no_recycling and v.owner is not None and self._direct(self.position[v][0]) is None
        ]
        if pre:
            self.emit(" = ".join(f"{c}[0]" for c in pre) + " = None", None)
        for k, node in enumerate(nodes):
            direct = self._direct(k)
            if direct is not None:
                self._write_direct(k, node, direct)
            else:
                self._write_thunk(k, node)
            if self.allow_gc:
                self._drop(
                    [v for v in dict.fromkeys([*node.inputs, *node.outputs]) if last_use.get(v) == k], k
                )
        body_end = len(self.lines)
        for var in dict.fromkeys(fgraph.outputs):
            if var.owner is not None and var not in self.cell_holds:
                self.emit(f"{self.cell(var)}[0] = {self.local[var]}", None)
                self.cell_holds.add(var)
        run = self._compile()
        if self._pure(pre):
            self.program = self._compile_program(body_start, body_end)
        return run

    def _pure(self, pre: list) -> bool:
        """Whether the body computes the call on locals alone: every node written out (no
        thunk, no cell written but the outputs'), each output a distinct value some node
        made (so a fresh array: a written-out call never makes a view or writes in place)."""
        outs = self.fgraph.outputs
        return (
            self.allow_gc
            and not pre
            and bool(self.nodes)
            and all(self._direct(k) is not None for k in range(len(self.nodes)))
            and len(set(outs)) == len(outs)
            and all(v.owner is not None and v in self.local for v in outs)
            and not (self.cell_holds - set(self.fgraph.inputs) - set(outs))
        )

    def _compile_program(self, start: int, stop: int) -> Callable:
        """``program(*input values)``: the body between the inputs' reads and the outputs'
        writes, on its arguments, returning the outputs' values (no cell read or written).
        Its ``body`` (a :class:`ProgramBody`) lets a caller write the body into a function
        of its own."""
        params = [
            self.local.get(v) or self.names_of.get(v) or f"_unused{k}"
            for k, v in enumerate(self.fgraph.inputs)
        ]
        outs = [self.local[v] for v in self.fgraph.outputs]
        lines = self.lines[start:stop]
        head = [f"def program({', '.join(params)}):", "    try:"]
        body = [*lines, (f"return ({', '.join(outs)},)", None)]
        self.program_source, line_nodes = _function_text(head, body, self.nodes, "_fail_program")
        self.namespace["_fail_program"] = _failure_hook(line_nodes, self.storage_map, self.args)
        exec(_code(self.program_source), self.namespace)
        program = self.namespace["program"]
        alternatives = {i - start: alt for i, alt in self.if_inputs_proven.items() if start <= i < stop}
        program.body = ProgramBody(
            params, outs, lines, alternatives, self.nodes, self.namespace, self.storage_map, self.args
        )
        return program

    def _last_uses(self, keep: set) -> dict[Variable, int]:
        """Variable -> index of the last node reading it (its own node's, for a value
        nobody reads), for the values the function may drop."""
        last: dict[Variable, int] = {}
        for k, node in enumerate(self.nodes):
            for var in node.inputs:
                last[var] = k
            for var in node.outputs:
                last.setdefault(var, k)
        return {
            v: k
            for v, k in last.items()
            if v not in keep and v.owner is not None and not isinstance(v, Constant)
        }

    def _drop(self, dead: list[Variable], k: int) -> None:
        names = [self.local.pop(v) for v in dead if v in self.local]
        cells = [f"{self.cell(v)}[0]" for v in dead if v in self.cell_holds]
        self.cell_holds.difference_update(dead)
        if names:
            self.emit(f"del {', '.join(names)}", k)
        if cells:
            self.emit(" = ".join(cells) + " = None", k)

    def _write_thunk(self, k: int, node: Apply) -> None:
        """``thunk()`` on the node's cells: a local input stored in its cell first, the
        outputs read into locals where a written-out statement uses them."""
        for var in dict.fromkeys(node.inputs):
            if var not in self.cell_holds and not isinstance(var, Constant):
                self.emit(f"{self.cell(var)}[0] = {self.local[var]}", k)
                self.cell_holds.add(var)
        thunk = self.thunks[k]
        self.emit(f"{self.param(thunk, f'thunk{k}')}()  # {_label(node)}", k)
        self.cell_holds.update(node.outputs)
        if not getattr(thunk, "sets_outputs", False) and node.outputs:
            unset = " or ".join(f"{self.cell(v)}[0] is None" for v in node.outputs)
            cells = ", ".join(self.cell(v) for v in node.outputs)
            self.emit(
                f"if {unset}: {self.param(_unset_output, 'unset')}({self.param(node, f'node{k}')}, [{cells}])",
                k,
            )
        for j, var in enumerate(node.outputs):
            if var in self.wants_local:
                name = self.fresh_local(var, f"t{k}" if len(node.outputs) == 1 else f"t{k}_{j}")
                self.emit(f"{name} = {self.cell(var)}[0]", k)
                self.bind(var, name)

    def _direct(self, k: int) -> tuple | None:
        """How node ``k`` is written out as a NumPy call on locals (None: its thunk runs):
        ``("call", fn, checks, odt, ondim, out_ellipsis)`` for an Elemwise that the
        backend's thunk runs as one ufunc call (pairwise for a chain), ``("cast", dtype,
        impl)``, or ``("body", fn, checks, odt, ondim)`` for a fused body; ``checks``: the
        dimensions where the two inputs' lengths are compared."""
        cache = self.__dict__.setdefault("_direct_cache", {})
        if k in cache:
            return cache[k]
        cache[k] = spec = None if k in self.thunk_only else self._direct_spec(self.nodes[k])
        return spec

    def thunk_name(self, k: int) -> str:
        """The name of node ``k``'s thunk in the function's namespace."""
        return self._param_of[id(self.thunks[k])]

    def _direct_spec(self, node: Apply) -> tuple | None:
        op = node.op
        if not isinstance(op, Elemwise) or op.inplace_pattern or impl_name(op) != PYTHON:
            return None
        direct, checks = _elemwise_plan(op, node)
        n = len(node.inputs)
        dims = tuple(d for d, _ in checks)
        if n == 2 and checks and any(sorted(part) != [0, 1] for _, part in checks):
            return None
        if n > 2 and checks:  # (the backend's check over several inputs: its thunk)
            return None
        otype = node.outputs[0].type
        if direct is not None:
            variant, fn, odt, ondim, _, zero_d = direct
            if variant == "cast":
                return ("cast", fn, op.scalar_op.impl, odt, ondim)
            return ("call", fn, dims, odt, ondim, zero_d, variant == "chain")
        if isinstance(op.scalar_op, Composite) and op.nout == 1 and otype.ndim > 0:
            body, trusted = _composite_body(op)
            if all(trusted):
                return ("body", body, dims, otype.numpy_dtype, otype.ndim, False, False)
        return None

    def _is_proven(self, var: Variable) -> bool:
        if isinstance(var, Constant):
            data = var.data
            return type(data) is _ndarray and data.dtype == getattr(var.type, "numpy_dtype", None)
        return var in self.proven

    def _operand(self, var: Variable, node: Apply) -> str:
        """:meth:`ref` of an input of a written-out ``node``, a one-element constant as a
        0-d array (:func:`~arignote.link.python.elemwise.one_element_as_0d`: as the thunks
        pass it), one parameter per constant."""
        zero_d = one_element_as_0d(node, var)
        if zero_d is None:
            return self.ref(var)
        # (the first view made of the data: one parameter however many nodes read it)
        return self.param(self.zero_d.setdefault(id(var.data), zero_d), "k")

    def _write_direct(self, k: int, node: Apply, spec: tuple) -> None:
        """The node's NumPy call on locals. Its result is checked (and given ``perform``'s
        steps where it is unusual) as the backend's thunk does, unless every input is
        proven (:attr:`proven`): the result then is an ndarray of the output's dtype, and
        the output may take the name of an input that dies here (``t = f(t)``)."""
        args = self.args[node] = [self._operand(v, node) for v in node.inputs]
        (out,) = node.outputs
        kind, odt_value, ondim = spec[0], spec[3], spec[4]
        rules = _DTYPE_RULES and (kind != "call" or spec[5] or ondim > 0)
        proven = rules and all(self._is_proven(v) for v in node.inputs)
        # (proven once the caller has checked the graph's inputs)
        inputs_proven = rules and all(self._is_proven(v) or v in self.tensor_inputs for v in node.inputs)
        name = None
        if proven and self.allow_gc and not _identifier(out.name):
            for v in node.inputs:  # an input whose value dies here lends its name
                if self.last_use.get(v) == k and v in self.local and v not in self.cell_holds:
                    name = self.local.pop(v)
                    break
        if name is None:
            name = self.fresh_local(out, f"t{k}")
        odt = self.param(odt_value, lambda: odt_value.name)
        label = f"  # {_label(node)}"
        if kind == "cast":
            (a,) = args
            if proven:
                self.emit(f"{name} = {a}.astype({odt}){label}", k)
            else:
                fin = self.param(_finish, "finish")
                impl = self.param(spec[2], f"impl{k}")
                nd = self.param(_ndarray, "ndarray")
                ty = self.param(type, "type")
                if inputs_proven:
                    self.if_inputs_proven[len(self.lines)] = f"{name} = {a}.astype({odt}){label}"
                self.emit(
                    f"{name} = {a}.astype({odt}) if {ty}({a}) is {nd} "
                    f"else {fin}({impl}({a}), ({a},), {odt}, {ondim}, None){label}",
                    k,
                )
        else:
            _, fn, dims, _, _, zero_d, chain = spec
            if dims:
                a, b = args
                test = (
                    f"{a}.shape != {b}.shape"
                    if dims == tuple(range(ondim))
                    else " or ".join(f"{a}.shape[{d}] != {b}.shape[{d}]" for d in dims)
                )
                check = self.param(node.op._check_runtime_broadcast, f"check{k}")
                self.emit(f"if {test}: {check}({self.param(node, f'node{k}')}, [{a}, {b}])", k)
            f = self.param(fn, lambda: getattr(fn, "__name__", None) or f"f{k}")
            tail = ", out=..." if zero_d else ""
            if chain:
                expr = args[0]
                for a in args[1:-1]:
                    expr = f"{f}({expr}, {a})"
                expr = f"{f}({expr}, {args[-1]}{tail})"
            else:
                expr = f"{f}({', '.join(args)}{tail})"
            self.emit(f"{name} = {expr}{label}", k)
            if not proven:
                fin = self.param(_finish, "finish")
                nd = self.param(_ndarray, "ndarray")
                ty = self.param(type, "type")
                ins = f"({', '.join(args)}{',' if len(args) == 1 else ''})"
                if inputs_proven:
                    self.if_inputs_proven[len(self.lines)] = None
                self.emit(
                    f"if {ty}({name}) is not {nd} or {name}.dtype is not {odt}: "
                    f"{name} = {fin}({name}, {ins}, {odt}, {ondim}, None)",
                    k,
                )
        self.bind(out, name)
        self.proven.add(out)
        if not self.allow_gc:  # the values stay in their cells between calls, as the VM's
            self.emit(f"{self.cell(out)}[0] = {name}", k)
            self.cell_holds.add(out)

    # -- compiling ------------------------------------------------------------------------

    def _compile(self) -> Callable:
        head = ["def run():", "    try:"]
        if self.prologue:
            head.insert(1, "    if _whole is not None and _whole(): return")
            self.params["_whole"] = None
        self.source, self.line_nodes = _function_text(
            head, self.lines or [("pass", None)], self.nodes, "_fail"
        )
        # the names are the function's globals (a closure over many names costs CPython's
        # compiler far more than global names, which 3.11 reads as fast)
        namespace = self.namespace = {"__builtins__": __builtins__, **self.params}
        namespace["_fail"] = _failure_hook(self.line_nodes, self.storage_map, self.args)
        exec(_code(self.source), namespace)
        return namespace["run"]


def _function_text(
    head: list[str], lines: list[tuple[str, int | None]], nodes: list[Apply], fail: str
) -> tuple[str, dict[int, Apply]]:
    """A function's source: ``head`` (its ``def`` line, up to its ``try:``), then ``lines``
    (statement, index of its node in ``nodes`` or None) inside the try, whose handler calls
    ``fail`` (the failure hook's name); and its line number -> node map."""
    body = [f"        {line}" for line, _ in lines]
    tail = ["    except Exception as _err:", f"        {fail}(_err)", "        raise"]
    first = len(head) + 1  # line number of the first body line
    line_nodes = {first + i: nodes[k] for i, (_, k) in enumerate(lines) if k is not None}
    return "\n".join([*head, *body, *tail]) + "\n", line_nodes


class ProgramBody:
    """The straight-line body of a generated ``program`` (a graph whose every node is
    written out): ``params``, the local names its input values go by, in the graph's input
    order; ``outputs``, the local names of its outputs. :meth:`wrap` writes it into a
    function of the caller's (a compiled function's plain call,
    :mod:`arignote.compile.plain_call`, checks the inputs and returns the outputs itself,
    with no call of ``program`` in between). The body's locals never take a name of
    :data:`CALLER_LOCALS`, nor start with ``__``."""

    __slots__ = (
        "_args",
        "_if_inputs_proven",
        "_lines",
        "_namespace",
        "_nodes",
        "_storage_map",
        "outputs",
        "params",
        "source",
    )

    def __init__(
        self,
        params: list[str],
        outputs: list[str],
        lines: list[tuple[str, int | None]],
        if_inputs_proven: dict[int, str | None],
        nodes: list[Apply],
        namespace: dict,
        storage_map: dict,
        args: dict,
    ):
        self.params, self.outputs = params, outputs
        self._lines, self._nodes, self._namespace = lines, nodes, namespace
        self._if_inputs_proven = if_inputs_proven
        self._storage_map, self._args = storage_map, args
        self.source = ""

    def wrap(
        self, head: list[str], result: str, names: dict[str, Any], inputs_proven: bool = False
    ) -> Callable:
        """The function ``head`` defines (its ``def`` line and any lines before the body,
        the last one ``    try:``), the body following, then ``return <result>``. The
        function reads the program's names and ``names`` (each starting with ``__``); an
        exception in the body gets the note naming its node, as in the program.
        ``inputs_proven``: ``head`` makes every tensor input an ndarray of exactly its
        Type's dtype and rank (or the caller vouches for them), so results computed from
        them need no check. :attr:`source` holds the last text written."""
        if any(not k.startswith("__") or k in self._namespace for k in names):
            raise ValueError(f"names for a wrapped program body must start with '__': {sorted(names)}")
        lines = self._lines
        if inputs_proven and self._if_inputs_proven:
            alt = self._if_inputs_proven
            lines = [
                (alt[i], k) if i in alt else (line, k)
                for i, (line, k) in enumerate(lines)
                if i not in alt or alt[i] is not None
            ]
        fail = "__fail_body"
        text, line_nodes = _function_text(head, [*lines, (f"return {result}", None)], self._nodes, fail)
        namespace = {
            **self._namespace,
            **names,
            fail: _failure_hook(line_nodes, self._storage_map, self._args),
        }
        exec(_code(text), namespace)
        self.source = text
        return namespace[head[0][4 : head[0].index("(")]]


def _identifier(name: str | None) -> bool:
    return bool(name) and name.isidentifier() and not keyword.iskeyword(name)


def _label(node: Apply) -> str:
    """A short label of ``node``'s Op for a comment (structure only: no constant values)."""
    text = str(node.op)
    return text if len(text) <= 60 else text[:57] + "..."


def _unset_output(node: Apply, cells: list[list]) -> None:
    """Raise the VM's error for the first output of ``node`` its thunk left unset."""
    for i, cell in enumerate(cells):
        if cell[0] is None:
            raise ValueError(f"{node.op}.perform did not set output {i} of {node}")


def _failure_hook(line_nodes: dict[int, Apply], storage_map: dict, args: dict) -> Callable:
    """``fail(err)``: add the VM's note (:func:`describe_node_failure`) naming the node
    whose line raised ``err`` in the generated function (its inputs' values read from the
    function's frame: ``args[k]``, the locals node ``k`` reads, or the cells)."""

    def fail(err: BaseException) -> None:
        tb = err.__traceback__
        if tb is None:
            return
        node = line_nodes.get(tb.tb_lineno)
        if node is None:
            return
        frame_locals = tb.tb_frame.f_locals
        values = []
        for var, name in zip(node.inputs, args.get(node) or [None] * len(node.inputs)):
            if name is not None and name in frame_locals:
                values.append(frame_locals[name])
            else:
                values.append(var.data if isinstance(var, Constant) else storage_map[var][0])
        err.add_note(describe_node_failure(node, values))

    return fail
