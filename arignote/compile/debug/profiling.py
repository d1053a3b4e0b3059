"""Profiling compiled functions: where the time and the memory go, node by node.

``function(..., profile=True)`` gives the function a :class:`ProfileStats`; the VM
records each node's run time (and the shapes of what it made) after every thunk, the
function records each call, and the compiler records how long each stage took.
``f.profile.summary()`` prints it all as tables: per Op class, per Op, per Apply node,
memory, compile time.

Never silently slow: each node says which implementation ran it (``python``: a thunk
registered with the Python backend, :mod:`arignote.link.python`; ``make_thunk``: the Op's
own thunk; ``perform``: the generic thunk over ``perform``), and a node that ran through
``perform`` because no registered backend has a fast implementation of its Op is flagged
with ``*``, so the profile shows which nodes are on the slow path. The Python backend is
asked about every node; other backends declare what they can run with
:func:`register_fast_impl`, and say which implementation a node got with
:meth:`ProfileStats.record_impl`.

>>> import numpy as np
>>> import arignote, arignote.tensor as pt
>>> x = pt.vector("x")
>>> f = arignote.function([x], pt.exp(x) + x, profile="demo")
>>> _ = f(np.ones(3)); _ = f(np.ones(3))
>>> f.profile.fct_callcount, list(f.profile.apply_callcount.values())
(2, [2])
>>> list(f.profile.output_sizes().values())  # bytes of each node's outputs
[[24]]
"""

from __future__ import annotations

import atexit
import math
import sys
from collections.abc import Callable, Iterable
from typing import IO, Any

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.type import Type
from arignote.link import python as python_backend

__all__ = ["ProfileStats", "fast_impls", "register_fast_impl"]

#: the implementation of a node that runs through the generic ``perform`` thunk
PERFORM = python_backend.PERFORM

# backend name -> predicate(op) telling whether that backend has a fast implementation
_FAST_IMPLS: dict[str, Callable[[Any], bool]] = {python_backend.PYTHON: python_backend.has_fast_impl}


def register_fast_impl(backend: str, has_impl: Callable[[Any], bool]) -> None:
    """Declare that ``backend`` runs the Ops for which ``has_impl(op)`` is true without
    going through ``perform``. Nodes of Ops no backend claims are flagged in profiles."""
    _FAST_IMPLS[backend] = has_impl


def fast_impls(op: Any) -> tuple[str, ...]:
    """The registered backends that have a fast implementation of ``op``."""
    return tuple(name for name, has_impl in _FAST_IMPLS.items() if has_impl(op))


class _Bytes(int):
    """A size measured when the node ran (for Types whose shape info is the value itself,
    so the profile does not keep values alive)."""


class _Graph:
    """The nodes of one compiled graph, in run order, and the variables it keeps."""

    __slots__ = ("keep", "nodes")

    def __init__(self, nodes: list[Apply], keep: Iterable[Variable]):
        self.nodes = nodes
        self.keep = set(keep)


def _graph_from_storage(storage_map: dict) -> _Graph:
    """The graph a VM runs, from its storage map: the owners of its variables, in
    dependency order (the map's own order where it is one); what no node uses is kept."""
    candidates = {}
    for var in storage_map:
        owner = getattr(var, "owner", None)
        if owner is not None:
            candidates[owner] = None
    order: list[Apply] = []
    placed: set[Apply] = set()
    for start in candidates:
        if start in placed:
            continue
        stack = [(start, False)]
        while stack:  # iterative post-order: a node after the nodes it reads
            node, expanded = stack.pop()
            if node in placed:
                continue
            if expanded:
                placed.add(node)
                order.append(node)
                continue
            stack.append((node, True))
            for var in reversed(node.inputs):
                owner = var.owner
                if owner is not None and owner in candidates and owner not in placed:
                    stack.append((owner, False))
    used = {v for node in order for v in node.inputs}
    keep = [v for v in storage_map if getattr(v, "owner", None) is None or v not in used]
    return _Graph(order, keep)


class ProfileStats:
    """Time, call counts, memory and compile time of one or more compiled functions.

    Filled by the runtime through :meth:`record_node` (after each node's thunk),
    :meth:`record_call` (after each call) and :meth:`record_compile` (once per compile);
    read through the aggregation methods (:meth:`class_time`, :meth:`op_time`, ...) or
    :meth:`summary`. One instance may be given to several functions (``function(...,
    profile=stats)``) to profile them together; ``a + b`` merges two profiles.

    ``profile_memory``: record the shapes of node outputs as nodes run (cheap; used for
    the memory section and the flops columns). ``atexit_print``: print the summary to
    stderr when the interpreter exits.
    """

    def __init__(
        self,
        atexit_print: bool = False,
        message: str | None = None,
        profile_memory: bool = True,
        **kwargs: Any,
    ):
        self.message = message
        self.profile_memory = profile_memory
        self.reset()
        for key, value in kwargs.items():
            if key.startswith("_") or not hasattr(self, key):
                raise TypeError(f"ProfileStats got an unexpected keyword argument {key!r}")
            setattr(self, key, value)
        if atexit_print:
            _atexit_profiles.append(self)
            _register_atexit()

    def reset(self) -> None:
        """Forget everything recorded (calls, nodes, shapes and compile times)."""
        #: number of calls of the function(s) and seconds spent in them
        self.fct_callcount = 0
        self.fct_call_time = 0.0
        #: compile time, in total and per part; ``rewrite_stage_time``: per pipeline stage
        self.compile_time = 0.0
        self.build_time = 0.0
        self.rewriting_time = 0.0
        self.linker_time = 0.0
        self.rewrite_stage_time: dict[str, float] = {}
        self.other_compile_time: dict[str, float] = {}
        self.n_compiles = 0
        #: shape info (``Type.get_shape_info``) of each variable, from the latest run
        self.variable_shape: dict[Variable, Any] = {}
        #: the implementation that ran each node, where a backend said (else the Python
        #: backend's, :meth:`impl_of`)
        self.apply_impl: dict[Apply, str] = {}
        # node -> [seconds, calls], in the order the nodes first ran
        self._acc: dict[Apply, list] = {}
        # node -> what to record for it: (accumulator, ((variable, shape_info_fn), ...))
        self._plans: dict[Apply, tuple] = {}
        self._roots_recorded: set[Variable] = set()
        self._graphs: list[_Graph] = []
        self._graph_of: dict[Apply, tuple[int, int]] = {}  # node -> (graph index, position)

    # -- recording (called by the runtime) ------------------------------------------------

    def record_node(self, node: Apply, seconds: float, storage_map: dict) -> None:
        """``node`` ran once, in ``seconds``; its output values are in ``storage_map``."""
        plan = self._plans.get(node)
        if plan is None:
            plan = self._new_plan(node, storage_map)
        acc = plan[0]
        acc[0] += seconds
        acc[1] += 1
        if plan[1]:
            shapes = self.variable_shape
            for var, shape_info in plan[1]:
                value = storage_map[var][0]
                if value is not None:
                    shapes[var] = shape_info(value)

    def _new_plan(self, node: Apply, storage_map: dict) -> tuple:
        acc = self._acc.get(node)
        if acc is None:
            acc = self._acc[node] = [0.0, 0]
        if node not in self._graph_of:
            self._add_graph(_graph_from_storage(storage_map))
            if node not in self._graph_of:  # a storage map from elsewhere
                self._add_graph(_Graph([node], node.outputs))
        watch = []
        if self.profile_memory:
            candidates = list(node.outputs)
            for var in node.inputs:
                if isinstance(var, Constant):
                    if var not in self.variable_shape:
                        self.variable_shape[var] = _shape_info_fn(var)(var.data)
                elif var.owner is None and var not in self._roots_recorded:
                    # a graph input: recorded by the first node that reads it
                    self._roots_recorded.add(var)
                    candidates.append(var)
            watch = [(var, _shape_info_fn(var)) for var in candidates if var in storage_map]
        plan = self._plans[node] = (acc, tuple(watch))
        return plan

    def record_call(self, seconds: float) -> None:
        """The function was called once and took ``seconds`` (input checks included)."""
        self.fct_callcount += 1
        self.fct_call_time += seconds

    def record_compile(
        self,
        build: float = 0.0,
        rewrite: float = 0.0,
        link: float = 0.0,
        stages: dict[str, float] | None = None,
        fgraph: Any = None,
        **other: float,
    ) -> None:
        """One compile: seconds building the graph, rewriting it (``stages``: per pipeline
        stage) and linking it. ``fgraph``, when given, is the graph that will run: it
        fixes node ids and what memory is kept between calls."""
        self.n_compiles += 1
        self.build_time += build
        self.rewriting_time += rewrite
        self.linker_time += link
        for stage, seconds in (stages or {}).items():
            self.rewrite_stage_time[stage] = self.rewrite_stage_time.get(stage, 0.0) + seconds
        for part, seconds in other.items():
            self.other_compile_time[part] = self.other_compile_time.get(part, 0.0) + seconds
        self.compile_time += build + rewrite + link + sum(other.values())
        if fgraph is not None:
            self._add_graph(_Graph(fgraph.toposort(), [*fgraph.inputs, *fgraph.outputs]))

    def record_impl(self, node: Apply, impl: str) -> None:
        """Say which implementation runs ``node`` (a backend calls this when it links)."""
        self.apply_impl[node] = impl

    def _add_graph(self, graph: _Graph) -> None:
        if not graph.nodes or graph.nodes[0] in self._graph_of:
            return  # no node, or known already (a copy of a function shares its graph)
        index = len(self._graphs)
        self._graphs.append(graph)
        for pos, node in enumerate(graph.nodes):
            self._graph_of[node] = (index, pos)

    # -- per node -------------------------------------------------------------------------

    @property
    def apply_time(self) -> dict[Apply, float]:
        """Seconds spent in each node, over all calls."""
        return {node: acc[0] for node, acc in self._acc.items()}

    @property
    def apply_callcount(self) -> dict[Apply, int]:
        """How many times each node ran."""
        return {node: acc[1] for node, acc in self._acc.items()}

    @property
    def nb_nodes(self) -> int:
        """Number of Apply nodes in the profiled graph(s), known from the first call (or
        from the ``fgraph`` given to :meth:`record_compile`)."""
        return len(self._graph_of)

    def node_time(self) -> float:
        """Seconds spent inside nodes, all nodes and calls together."""
        return math.fsum(acc[0] for acc in self._acc.values())

    def impl_of(self, node: Apply) -> str:
        """The implementation that ran ``node``: what a backend recorded
        (:meth:`record_impl`), else what the Python backend runs it on
        (:func:`arignote.link.python.impl_name`: ``python``, ``make_thunk`` or
        ``perform``)."""
        impl = self.apply_impl.get(node)
        return impl if impl is not None else python_backend.impl_name(node.op)

    def is_slow(self, node: Apply) -> bool:
        """Whether ``node`` runs through ``perform`` because no backend has a fast
        implementation of its Op (the slow path)."""
        return self.impl_of(node) == PERFORM and not fast_impls(node.op)

    def slow_nodes(self) -> list[Apply]:
        """The nodes that ran on the slow path, in run order."""
        return [node for node in self._acc if self.is_slow(node)]

    def node_id(self, node: Apply) -> str:
        """The position of ``node`` in its graph's run order (``g:k`` when several graphs)."""
        where = self._graph_of.get(node, (len(self._graphs), -1))
        if len(self._graphs) > 1:
            return f"{where[0]}:{where[1]}"
        return str(where[1])

    # -- per Op and per Op class ----------------------------------------------------------

    def _group(self, key: Callable[[Apply], Any]) -> tuple[dict, dict, dict]:
        time: dict = {}
        calls: dict = {}
        nodes: dict = {}
        for node, (seconds, count) in self._acc.items():
            k = key(node)
            time[k] = time.get(k, 0.0) + seconds
            calls[k] = calls.get(k, 0) + count
            nodes[k] = nodes.get(k, 0) + 1
        return time, calls, nodes

    def _impl_by(self, key: Callable[[Apply], Any]) -> dict:
        impls: dict = {}
        for node in self._acc:
            impls.setdefault(key(node), set()).add(self._impl_label(node))
        return {k: v.pop() if len(v) == 1 else "mixed" for k, v in impls.items()}

    def class_time(self) -> dict[type, float]:
        """Seconds per Op class."""
        return self._group(_op_class)[0]

    def class_callcount(self) -> dict[type, int]:
        """Node runs per Op class."""
        return self._group(_op_class)[1]

    def class_nodes(self) -> dict[type, int]:
        """Number of Apply nodes per Op class."""
        return self._group(_op_class)[2]

    def class_impl(self) -> dict[type, str]:
        """The implementation that ran the nodes of each Op class (``*``: slow path)."""
        return self._impl_by(_op_class)

    def op_time(self) -> dict[Any, float]:
        """Seconds per Op (equal Ops together)."""
        return self._group(_op_key)[0]

    def op_callcount(self) -> dict[Any, int]:
        """Node runs per Op."""
        return self._group(_op_key)[1]

    def op_nodes(self) -> dict[Any, int]:
        """Number of Apply nodes per Op."""
        return self._group(_op_key)[2]

    def op_impl(self) -> dict[Any, str]:
        """The implementation that ran the nodes of each Op (``*``: slow path)."""
        return self._impl_by(_op_key)

    def _impl_label(self, node: Apply) -> str:
        impl = self.impl_of(node)
        return f"{impl}*" if self.is_slow(node) else impl

    # -- memory and flops -----------------------------------------------------------------

    def variable_size(self, var: Variable) -> int | None:
        """Bytes of the latest value of ``var`` (``Type.get_size``), None if never seen."""
        info = self.variable_shape.get(var)
        if info is None:
            return None
        if isinstance(info, _Bytes):
            return int(info)
        return int(var.type.get_size(info))

    def output_sizes(self) -> dict[Apply, list[int | None]]:
        """Bytes of each output of each node that ran (from its latest run)."""
        return {node: [self.variable_size(v) for v in node.outputs] for node in self._acc}

    def _allocated(self, node: Apply) -> list[int]:
        """Bytes each output of ``node`` allocates: none for views and in-place outputs."""
        aliased = {**getattr(node.op, "view_map", {}), **getattr(node.op, "destroy_map", {})}
        return [0 if k in aliased else (self.variable_size(v) or 0) for k, v in enumerate(node.outputs)]

    def _graph_peaks(self, graph: _Graph) -> tuple[int, int]:
        """(peak with intermediates freed after their last use, total if none is freed)."""
        root: dict[Variable, Variable] = {}
        size: dict[Variable, int] = {}
        last_use: dict[Variable, int] = {}
        for k, node in enumerate(graph.nodes):
            for var in node.inputs:
                last_use[root.get(var, var)] = k
            aliased = {**getattr(node.op, "view_map", {}), **getattr(node.op, "destroy_map", {})}
            for j, (var, nbytes) in enumerate(zip(node.outputs, self._allocated(node))):
                if aliased.get(j):
                    src = node.inputs[aliased[j][0]]
                    root[var] = base = root.get(src, src)
                    last_use[base] = k
                else:
                    root[var] = var
                    size[var] = nbytes
                    last_use.setdefault(var, k)
        kept = {root.get(v, v) for v in graph.keep}
        frees: dict[int, list[Variable]] = {}
        for var, k in last_use.items():
            if var in size and var not in kept:
                frees.setdefault(k, []).append(var)
        live = peak = 0
        for k, node in enumerate(graph.nodes):
            live += sum(size.get(v, 0) for v in node.outputs)
            peak = max(peak, live)
            for var in frees.get(k, ()):
                live -= size[var]
        return peak, sum(size.values())

    def peak_memory(self, allow_gc: bool = True) -> int:
        """Estimated peak bytes of node outputs alive at once during a call, from the
        run order and the latest shapes (inputs not counted; views and in-place outputs
        allocate nothing). ``allow_gc=False``: nothing freed until the call ends. The
        largest over the profiled graphs."""
        peaks = [self._graph_peaks(g)[0 if allow_gc else 1] for g in self._graphs]
        return max(peaks, default=0)

    def apply_flops(self) -> dict[Apply, float]:
        """Floating-point operations per run of each node whose Op defines ``flops``
        (called with the input and output shapes of the latest run)."""
        result = {}
        for node in self._acc:
            flops = self._node_flops(node)
            if isinstance(flops, (int, float)):
                result[node] = float(flops)
        return result

    def _node_flops(self, node: Apply) -> Any:
        fn = getattr(node.op, "flops", None)
        if fn is None:
            return None
        shapes = self.variable_shape
        if any(v not in shapes for v in (*node.inputs, *node.outputs)):
            return None
        try:
            return fn([shapes[v] for v in node.inputs], [shapes[v] for v in node.outputs])
        except Exception as err:  # a broken hook must not lose the whole summary
            return err

    # -- merging --------------------------------------------------------------------------

    def merge(self, *others: ProfileStats) -> ProfileStats:
        """Add the records of ``others`` to this profile (in place); returns ``self``."""
        for other in others:
            if not isinstance(other, ProfileStats):
                raise TypeError(f"can only merge ProfileStats, got {type(other).__name__}")
            if other is self:
                raise ValueError("cannot merge a profile into itself; use a + a")
            self.fct_callcount += other.fct_callcount
            self.fct_call_time += other.fct_call_time
            self.compile_time += other.compile_time
            self.build_time += other.build_time
            self.rewriting_time += other.rewriting_time
            self.linker_time += other.linker_time
            self.n_compiles += other.n_compiles
            for mine, theirs in (
                (self.rewrite_stage_time, other.rewrite_stage_time),
                (self.other_compile_time, other.other_compile_time),
            ):
                for key, seconds in theirs.items():
                    mine[key] = mine.get(key, 0.0) + seconds
            self.variable_shape.update(other.variable_shape)
            self.apply_impl.update(other.apply_impl)
            for node, (seconds, count) in other._acc.items():
                acc = self._acc.get(node)
                if acc is None:
                    self._acc[node] = [seconds, count]
                else:
                    acc[0] += seconds
                    acc[1] += count
            for graph in other._graphs:
                self._add_graph(_Graph(list(graph.nodes), graph.keep))
            if other.message and other.message != self.message:
                self.message = f"{self.message} + {other.message}" if self.message else other.message
        return self

    def __add__(self, other: ProfileStats) -> ProfileStats:
        if not isinstance(other, ProfileStats):
            return NotImplemented
        total = ProfileStats(message=self.message, profile_memory=self.profile_memory)
        return total.merge(self, other)

    def __radd__(self, other: Any) -> ProfileStats:
        if other == 0:  # sum([...]) starts from 0
            return self + ProfileStats(message=self.message)
        return NotImplemented

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_plans"] = {}  # rebuilt on the next run; holds bound methods
        state["_roots_recorded"] = set()
        return state

    # -- printing -------------------------------------------------------------------------

    def summary(
        self, file: IO[str] | None = None, n_ops_to_print: int = 20, n_apply_to_print: int = 20
    ) -> None:
        """Print every section: function, Op classes, Ops, Apply nodes, memory, compile."""
        file = sys.stdout if file is None else file
        self.summary_function(file)
        self.summary_class(file, n_ops_to_print)
        self.summary_ops(file, n_ops_to_print)
        self.summary_nodes(file, n_apply_to_print)
        self.summary_memory(file, n_apply_to_print)
        self.summary_compile(file)

    def summary_text(self, n_ops_to_print: int = 20, n_apply_to_print: int = 20) -> str:
        """What :meth:`summary` prints, as a string."""
        import io

        buf = io.StringIO()
        self.summary(buf, n_ops_to_print, n_apply_to_print)
        return buf.getvalue()

    def __str__(self) -> str:
        return self.summary_text()

    def __repr__(self) -> str:
        return (
            f"<ProfileStats {self.message!r}: {self.fct_callcount} call(s), {len(self._acc)} node(s) run, "
            f"{_fmt_time(self.fct_call_time)} in calls>"
        )

    def summary_function(self, file: IO[str]) -> None:
        """Calls, time in calls and in nodes, nodes on the slow path."""
        _title(file, "Function profiling", "=")
        node_time = self.node_time()
        print(f"  Message: {self.message}", file=file)
        print(
            f"  Time in {self.fct_callcount} call(s) to Function.__call__: {_fmt_time(self.fct_call_time)}",
            file=file,
        )
        if self.fct_callcount:
            per_call = self.fct_call_time / self.fct_callcount
            print(f"    per call: {_fmt_time(per_call)}", file=file)
        share = f" ({_pct(node_time, self.fct_call_time)} of call time)" if self.fct_call_time else ""
        print(f"  Time in nodes: {_fmt_time(node_time)}{share}", file=file)
        if self.fct_call_time:
            overhead = max(self.fct_call_time - node_time, 0.0)
            print(f"  Time outside nodes (input checks, VM, outputs): {_fmt_time(overhead)}", file=file)
        if self.nb_nodes or not self.n_compiles or self.fct_callcount:
            print(f"  Number of Apply nodes: {self.nb_nodes}", file=file)
        else:
            print("  Number of Apply nodes: not known before the first call", file=file)
        if len(self._graphs) > 1:
            print(
                f"  Graphs profiled together: {len(self._graphs)} (node ids are graph:position)",
                file=file,
            )
        if self._acc:
            slow = self.slow_nodes()
            slow_time = math.fsum(self._acc[n][0] for n in slow)
            print(
                f"  Nodes on the slow path (perform, no fast implementation): {len(slow)} of "
                f"{len(self._acc)} run, {_pct(slow_time, node_time)} of node time",
                file=file,
            )
        else:
            print("  No node has run yet.", file=file)
        print(file=file)

    def summary_class(self, file: IO[str], N: int | None = None) -> None:
        """The table of time per Op class."""
        time, calls, nodes = self._group(_op_class)
        impl = self._impl_by(_op_class)
        names = {k: f"{k.__module__}.{k.__qualname__}" for k in time}
        self._print_group_table(file, "Class", "Class name", time, calls, nodes, impl, names, N)

    def summary_ops(self, file: IO[str], N: int | None = None) -> None:
        """The table of time per Op (equal Ops together)."""
        time, calls, nodes = self._group(_op_key)
        impl = self._impl_by(_op_key)
        names = {k: str(k) for k in time}
        self._print_group_table(file, "Ops", "Op name", time, calls, nodes, impl, names, N)

    def _print_group_table(
        self,
        file: IO[str],
        title: str,
        what: str,
        time: dict,
        calls: dict,
        nodes: dict,
        impl: dict,
        names: dict,
        N: int | None,
    ) -> None:
        _title(file, title, "-")
        if not time:
            print("  (no node has run yet)\n", file=file)
            return
        total = math.fsum(time.values())
        rows = []
        cumulated = 0.0
        order = sorted(time, key=lambda k: -time[k])
        for k in order[:N]:
            cumulated += time[k]
            rows.append(
                [
                    _pct(time[k], total),
                    _pct(cumulated, total),
                    _fmt_time(time[k]),
                    _fmt_time(time[k] / calls[k] if calls[k] else 0.0),
                    impl[k],
                    str(calls[k]),
                    str(nodes[k]),
                    _clip(names[k]),
                ]
            )
        header = [
            "<% time>",
            "<sum %>",
            "<time>",
            "<time per call>",
            "<impl>",
            "<#call>",
            "<#apply>",
            f"<{what}>",
        ]
        _print_table(file, header, rows)
        rest = order[len(rows) :]
        if rest:
            rest_time = math.fsum(time[k] for k in rest)
            print(f"   ... ({len(rest)} more, {_pct(rest_time, total)} of node time)", file=file)
        self._print_slow_note(file, impl.values())
        print(file=file)

    def _print_slow_note(self, file: IO[str], labels: Iterable[str]) -> None:
        if any(label.endswith("*") for label in labels):
            print(
                "  * slow path: no backend has a fast implementation of this Op; it ran through perform",
                file=file,
            )

    def summary_nodes(self, file: IO[str], N: int | None = None) -> None:
        """The table of time per Apply node, with flops where the Op defines them."""
        _title(file, "Apply", "-")
        if not self._acc:
            print("  (no node has run yet)\n", file=file)
            return
        total = self.node_time()
        order = sorted(self._acc, key=lambda n: -self._acc[n][0])
        rows = []
        cumulated = 0.0
        errors = []
        labels = []
        for node in order[:N]:
            seconds, count = self._acc[node]
            cumulated += seconds
            flops = self._node_flops(node)
            if isinstance(flops, Exception):
                errors.append((node, flops))
                mflops = rate = "error"
            elif isinstance(flops, (int, float)):
                mflops = f"{flops / 1e6:.3g}"
                rate = f"{flops * count / seconds / 1e6:.4g}" if seconds > 0 else "-"
            else:
                mflops = rate = ""
            label = self._impl_label(node)
            labels.append(label)
            rows.append(
                [
                    _pct(seconds, total),
                    _pct(cumulated, total),
                    _fmt_time(seconds),
                    _fmt_time(seconds / count if count else 0.0),
                    str(count),
                    self.node_id(node),
                    mflops,
                    rate,
                    label,
                    _clip(str(node)),
                ]
            )
        header = [
            "<% time>",
            "<sum %>",
            "<time>",
            "<time per call>",
            "<#call>",
            "<id>",
            "<MFlops>",
            "<MFlops/s>",
            "<impl>",
            "<Apply name>",
        ]
        _print_table(file, header, rows)
        rest = order[len(rows) :]
        if rest:
            rest_time = math.fsum(self._acc[n][0] for n in rest)
            print(f"   ... ({len(rest)} more Apply nodes, {_pct(rest_time, total)} of node time)", file=file)
        self._print_slow_note(file, labels)
        for node, err in errors:
            print(f"  flops of {node} raised {type(err).__name__}: {err}", file=file)
        print(file=file)

    def summary_memory(self, file: IO[str], N: int | None = None) -> None:
        """Peak memory estimates and the nodes whose outputs take the most bytes."""
        _title(file, "Memory profile", "-")
        if not self.profile_memory:
            print("  (not recorded: profile_memory=False)\n", file=file)
            return
        if not self._acc:
            print("  (no node has run yet)\n", file=file)
            return
        print("  Estimated from the latest shapes and the run order; inputs are not counted.", file=file)
        print(
            f"    Peak of node outputs alive at once, each freed after its last use: "
            f"{_fmt_bytes(self.peak_memory(True))}",
            file=file,
        )
        print(
            f"    Peak if nothing is freed during a call (allow_gc=False): {_fmt_bytes(self.peak_memory(False))}",
            file=file,
        )
        rows = []
        entries = []
        for node in self._acc:
            sizes = [self.variable_size(v) for v in node.outputs]
            total = sum(s or 0 for s in sizes)
            entries.append((total, node, sizes))
        entries.sort(key=lambda e: -e[0])
        for total, node, _sizes in entries[:N]:
            shapes = [self.variable_shape.get(v) for v in node.outputs]
            kinds = self._output_kinds(node)
            rows.append(
                [
                    f"{total}B",
                    _clip(", ".join("?" if s is None else _shape_str(s) for s in shapes), 40),
                    " ".join(kinds),
                    _clip(str(node)),
                ]
            )
        print(file=file)
        _print_table(file, ["<bytes>", "<output shapes>", "<c/v/i>", "<Apply name>"], rows)
        rest = entries[len(rows) :]
        if rest:
            print(
                f"   ... ({len(rest)} more Apply nodes, {_fmt_bytes(sum(e[0] for e in rest))} of outputs)",
                file=file,
            )
        print("  <c/v/i>: per output, c created, v view of an input, i input overwritten in place", file=file)
        print(file=file)

    @staticmethod
    def _output_kinds(node: Apply) -> list[str]:
        views = getattr(node.op, "view_map", {})
        destroys = getattr(node.op, "destroy_map", {})
        return ["i" if k in destroys else "v" if k in views else "c" for k in range(len(node.outputs))]

    def summary_compile(self, file: IO[str]) -> None:
        """Compile time by stage: build, rewrite (per pipeline stage), link."""
        _title(file, "Compile time", "-")
        if not self.n_compiles:
            print("  (no compile recorded)\n", file=file)
            return
        print(
            f"  Total compile time: {_fmt_time(self.compile_time)} in {self.n_compiles} compile(s)", file=file
        )
        print(f"    build (graph, givens, updates): {_fmt_time(self.build_time)}", file=file)
        print(f"    rewrite: {_fmt_time(self.rewriting_time)}", file=file)
        for stage, seconds in self.rewrite_stage_time.items():
            print(f"      {stage}: {_fmt_time(seconds)}", file=file)
        print(f"    link: {_fmt_time(self.linker_time)}", file=file)
        for part, seconds in self.other_compile_time.items():
            print(f"    {part}: {_fmt_time(seconds)}", file=file)
        print(file=file)


# -- helpers ------------------------------------------------------------------------------


def _op_class(node: Apply) -> type:
    return type(node.op)


def _op_key(node: Apply) -> Any:
    op = node.op
    try:
        hash(op)
    except TypeError:
        return _Unhashable(op)
    return op


class _Unhashable:
    """An unhashable Op as a dict key (by identity)."""

    __slots__ = ("op",)

    def __init__(self, op: Any):
        self.op = op

    def __hash__(self) -> int:
        return id(self.op)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unhashable) and other.op is self.op

    def __str__(self) -> str:
        return str(self.op)


def _shape_info_fn(var: Variable) -> Callable[[Any], Any]:
    """What to record for ``var`` each time it is computed: its Type's shape info, or the
    size itself where the shape info would be the value (so no value is kept alive)."""
    vtype = var.type
    if type(vtype).get_shape_info is Type.get_shape_info:
        get_size = vtype.get_size
        return lambda value: _Bytes(get_size(value))
    return vtype.get_shape_info


def _shape_str(info: Any) -> str:
    if isinstance(info, _Bytes):
        return f"({int(info)}B)"
    if isinstance(info, tuple):
        return str(info)
    return "scalar" if isinstance(info, int) else str(info)


def _title(file: IO[str], text: str, rule: str) -> None:
    print(text, file=file)
    print(rule * len(text), file=file)


def _print_table(file: IO[str], header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    last = len(header) - 1

    def line(cells: list[str]) -> str:
        parts = [c.rjust(w) if i < last else c for i, (c, w) in enumerate(zip(cells, widths))]
        return "  " + "  ".join(parts)

    print(line(header), file=file)
    for row in rows:
        print(line(row), file=file)


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole > 0 else "0.0%"


def _fmt_time(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.3f}s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f}ms"
    return f"{seconds * 1e6:.2f}us"


def _fmt_bytes(n: int) -> str:
    if n < 1024:
        return f"{n}B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            return f"{n:.1f}{unit}"
    return f"{n}B"  # pragma: no cover


def _clip(text: str, width: int = 120) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


_atexit_profiles: list[ProfileStats] = []
_atexit_registered = False


def _register_atexit() -> None:
    global _atexit_registered
    if not _atexit_registered:
        atexit.register(_print_at_exit)
        _atexit_registered = True


def _print_at_exit() -> None:
    for stats in _atexit_profiles:
        stats.summary(file=sys.stderr)
