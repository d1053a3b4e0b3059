"""Tier 2: the whole FunctionGraph as one Numba function, swapped in for the generated Python
function (:class:`~arignote.link.numba.linker.NumbaLinker`).

A graph of many nodes on small arrays spends its call in per-node glue (about 0.5-1 µs a
node), which a single compiled function does not pay; a graph on large arrays spends it in
NumPy's temporaries, which a compiled function's loops need not write. Tier 1's function
starts with ``if _whole is not None and _whole(): return``; this module binds ``_whole``:

* ``"auto"`` (FAST_RUN's, ``jit="background"``): a probe counts calls; from the
  :data:`PROBE_CALLS`-th it times :data:`PROBE_TIMED` tier-1 calls (the least time per
  node, a loop's steps counted as nodes, is kept; a graph at or above :data:`NODE_US`
  stays on tier 1, no limit by default) and writes the graph's Numba function
  (:func:`~arignote.link.numba.graph.plan_graph`) and has it compiled out of process into the
  disk cache, as the per-node kernels are (a later process finds it at once). Nothing waits
  for it: tier 1 runs meanwhile. Once it is loaded (and any per-node kernel being compiled
  has arrived), a trial times calls of each in turns (:data:`TRIAL_CALLS` to
  :data:`TRIAL_MAX` each; a turn is two calls, the second one timed) and keeps the faster
  (measured, not guessed: a graph whose nodes are transcendental math on a few thousand
  elements runs faster on NumPy's vectorised math than in Numba's scalar libm).
* ``"always"`` (the ``"NUMBA"`` mode, ``jit="sync"``): compiled (or loaded) before
  ``function()`` returns and used for every call.
* ``"never"``: not used.

A graph with a node the backend cannot write stays on the per-node tiers; ``f.vm.whole``
says why (:attr:`WholeGraph.state`, :attr:`WholeGraph.reason`) and shows the generated
source (:attr:`WholeGraph.source`); ``f.vm.impl_of(node)`` is ``"numba (whole graph)"``
while it runs. A call the compiled function refuses (a value of another type, a read-only
array) or that raises (a shape mismatch, an index out of bounds) runs on tier 1, which
computes it or raises the reference VM's error naming the node, so results and errors never
depend on the tier. An input that is not a writeable C-contiguous array (the function's
signature, :mod:`arignote.link.numba.graph`) is passed as a contiguous copy.

Outputs: while the compiled function computes the calls, an output that no node makes as a
view (:meth:`WholeGraph.outputs_fresh`) is an array the call allocated, which aliases no
input and no other output; :attr:`WholeGraph.fresh` (``[True]`` after such a call, the
runner's ``fresh_outputs_now``) tells the compiled Function to skip its aliasing checks for
that call (NumPy sees every array Numba returns as a view, so each check is a
``may_share_memory`` of each output with each input and earlier output: 4.5 µs of an 8 µs
call on the eight schools model). A call computed on tier 1 clears it.

Matrix-matrix products (NumPy's OpenBLAS: :mod:`.numpy_blas`) run under the BLAS thread limit of
:mod:`arignote.link.python.blas_threads`: a graph with one calls its function through
:func:`~arignote.link.python.blas_threads.limited_call` (as tier 1 does for large products).

Memory: the process's heap is set up to reuse its pages for intermediates
(:func:`~arignote.link.python.heap.raise_mmap_threshold`, as tier 1 does when it links).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from arignote.graph.fg import FunctionGraph
from arignote.link.numba.dispatch import NoNumbaImpl
from arignote.link.numba.dispatch.products import calls_gemm
from arignote.link.numba.graph import GraphPlan, plan_graph
from arignote.link.python.blas_threads import limited_call
from arignote.link.python.codegen import REFUSED

__all__ = ["WHOLE_CHOICES", "WholeGraph", "PROBE_CALLS", "NODE_US"]

#: when the whole-graph function is used (see the module's doc)
WHOLE_CHOICES = ("auto", "always", "never")
#: calls on tier 1 before the probe times one ("auto")
PROBE_CALLS = 32
#: tier-1 calls the probe times (the least of them counts)
PROBE_TIMED = 3
#: µs per node of a tier-1 call from which the graph stays on tier 1 without a compile
#: ("auto"). None by default: the trial measures instead, since array-bound graphs gain too
#: (the 80,000-observation hierarchical model: 2.4 ms a call on tier 1, 0.25 ms compiled,
#: its loops fused and vectorised, no per-node temporaries from NumPy)
NODE_US = float("inf")
#: timed calls of each tier in the trial ("auto"), taken in turns: at least TRIAL_CALLS each,
#: more (up to TRIAL_MAX) while the timed calls add up to under TRIAL_SECONDS, since a call
#: of a few µs is easily disturbed (the loading thread, the other core's work) and costs
#: little to time again
TRIAL_CALLS = 3
TRIAL_MAX = 25
TRIAL_SECONDS = 0.002


def _contiguous(value: Any) -> Any:
    """``value`` as the compiled function's signature takes it: a writeable C-contiguous
    array (a copy where it is not one)."""
    if isinstance(value, np.ndarray):
        return np.require(value, requirements=("C", "W"))
    return value


class WholeGraph:
    """The whole-graph function of one compiled graph: its :attr:`state` (``"off"``,
    ``"probing"``, ``"tier 1 (...)"`` with the reason it stays there, ``"compiling"``,
    ``"trial"``, ``"in use"``), :attr:`reason` (why it is not used, when it is not),
    :attr:`plan` (the :class:`~arignote.link.numba.graph.GraphPlan`, once written) and
    :attr:`source` (its Numba source)."""

    def __init__(
        self,
        choice: str,
        fgraph: FunctionGraph,
        nodes: list,
        storage_map: dict,
        namespace: dict,
        request: Callable[[Any, Callable], None],
        load: Callable[[Any], Callable],
    ):
        self.choice = choice
        self.fgraph = fgraph
        self.nodes = nodes
        self.storage_map = storage_map
        self.namespace = namespace
        self.request = request
        self.load = load
        self.plan: GraphPlan | None = None
        self.reason = ""
        self.state = "off"
        self.timings: dict[str, float] = {}
        # [True] after a call the compiled function computed, when every output is an array
        # it allocated (see the module's doc); the runner's ``fresh_outputs_now``
        self.fresh: list[bool] = [False]
        self._kernel: Callable | None = None  # the compiled function, once loaded
        # whether per-node kernels are still being compiled (set by the linker): the trial
        # waits for them, so that tier 1 is timed as it will run (a kernel split over two
        # threads, not NumPy's call it replaces)
        self.waiting: Callable[[], bool] = lambda: False
        self._program: Callable | None = None
        self._outputs_fresh: bool | None = None
        # what runs the call when the whole-graph function does not: None (the generated
        # body after the prologue) or a hook running another tier-1 function and returning
        # True (the linker's, once no node needs its per-node tier-2 thunk)
        self.fallback: Callable[[], bool] | None = None

    def set_fallback(self, fallback: Callable[[], bool]) -> None:
        """Run ``fallback`` instead of the generated body whenever the whole-graph function
        is not in use (now, if nothing else is bound)."""
        self.fallback = fallback
        if self.namespace.get("_whole") is None:
            self.namespace["_whole"] = fallback

    @property
    def source(self) -> str | None:
        return self.plan.source if self.plan is not None else None

    def __repr__(self) -> str:
        return f"WholeGraph(state={self.state!r})"

    # -- planning --------------------------------------------------------------------------

    def try_plan(self) -> bool:
        """Write the graph's function; False (and :attr:`reason`) when a node has none."""
        if self.plan is not None:
            return True
        if not self.nodes:  # (a graph of no node: its outputs are its inputs or constants)
            self.reason = "the graph has no node to compile"
            self.state = "tier 1 (nothing to compile)"
            return False
        try:
            self.plan = plan_graph(self.fgraph, self.nodes)
        except NoNumbaImpl as err:
            self.reason = f"no Numba implementation: {err}"
            self.state = "tier 1 (a node has no Numba implementation)"
            return False
        return True

    def start(self) -> None:
        """Bind ``_whole`` as :attr:`choice` says (called once the runner exists)."""
        if self.choice == "never":
            return
        if self.choice == "always":
            if not self.try_plan():
                return
            try:
                kernel = self.load(self.plan)
            except Exception as err:  # a compile error is a bug of ours: tier 1 goes on
                self.reason = f"the whole-graph function failed to compile: {err}"
                self.state = "tier 1 (compile failed)"
                warnings.warn(f"arignote: {self.reason}; tier 1 goes on", RuntimeWarning, stacklevel=2)
                return
            self.install(kernel)
            return
        self.state = "probing"
        self.namespace["_whole"] = self._probe()

    # -- the probe, the trial --------------------------------------------------------------

    def _tier1_time(self) -> float:
        """Run one call on tier 1 (the generated body) and return its time."""
        ns = self.namespace
        saved = ns["_whole"]
        ns["_whole"] = None
        self.fresh[0] = False
        try:
            t0 = time.perf_counter()
            (self.fallback or ns["run"])()
            return time.perf_counter() - t0
        finally:
            ns["_whole"] = saved

    def _probe(self) -> Callable[[], bool]:
        count = [0]
        timed: list[float] = []
        # a loop's steps count as nodes: each is a call of its step's glue
        stats = [n.op.loop_stats for n in self.nodes if isinstance(getattr(n.op, "loop_stats", None), dict)]

        def probe() -> bool:
            count[0] += 1
            if count[0] < PROBE_CALLS:
                return False
            before = sum(s.get("steps", 0) for s in stats)
            dt = self._tier1_time()  # (this call's work: done on tier 1)
            steps = sum(s.get("steps", 0) for s in stats) - before
            timed.append(dt * 1e6 / max(len(self.nodes) + steps, 1))
            if len(timed) < PROBE_TIMED:
                return True
            per_node = min(timed)  # (the least disturbed by other work on the machine)
            self.timings["tier 1 probe (µs per node)"] = per_node
            self.namespace["_whole"] = self.fallback
            self.fresh[0] = False
            if per_node >= NODE_US:
                self.state = "tier 1 (array work dominates)"
                self.reason = f"{per_node:.1f} µs per node on tier 1 (glue-bound under {NODE_US} µs)"
                return True
            if not self.try_plan():
                return True
            self.state = "compiling"
            self.request(self.plan, self._arrived)
            return True

        return probe

    def _arrived(self, kernel: Callable) -> None:
        """The compiled function is loaded (background thread): try it against tier 1."""
        whole = self.runner(kernel)
        times: dict[str, list] = {"whole": [], "tier 1": []}
        # (each turn is two calls of one tier, the second one timed: the first call after
        # the other tier's can pay for it; measured on a 4000x4000 softmax, a tier-1 call
        # right after a whole-graph call took 42-89 ms, the next ones 22)
        step = [0]

        def trial() -> bool:
            if self.waiting():  # (tier 1 computes this call, with the kernels it has)
                self.fresh[0] = False
                return False
            k = step[0]
            if k < 2:  # the whole-graph function's turn
                t0 = time.perf_counter()
                done = whole()
                if not done:  # refused or raised: tier 1 computes this call
                    return False
                if k == 1:
                    times["whole"].append(time.perf_counter() - t0)
                step[0] = k + 1
                return True
            if k == 2:  # tier 1's turn: its first call, untimed
                step[0] = 3
                self.fresh[0] = False
                return False
            step[0] = 0
            times["tier 1"].append(self._tier1_time())
            n = len(times["tier 1"])
            if n >= TRIAL_CALLS and (
                n >= TRIAL_MAX or sum(times["whole"]) + sum(times["tier 1"]) >= TRIAL_SECONDS
            ):
                w, t = min(times["whole"]) * 1e6, min(times["tier 1"]) * 1e6
                self.timings.update({"whole graph (µs)": w, "tier 1 (µs)": t})
                if w < t:
                    self.namespace["_whole"] = whole
                    self.state = "in use"
                else:
                    self.namespace["_whole"] = self.fallback
                    self.fresh[0] = False
                    self.state = "tier 1 (faster than the whole-graph function)"
                    self.reason = f"whole graph {w:.1f} µs, tier 1 {t:.1f} µs per call"
            return True

        self.state = "trial"
        self.namespace["_whole"] = trial

    def outputs_fresh(self) -> bool:
        """Whether every output is an array the compiled function allocates in the call,
        which no other value can hold: computed by a node that makes no view of an input
        for it (an in-place result overwrites a value computed in the call; the compiled
        function itself never writes in place), and given once. (Found once: the graph is
        linked, it no longer changes.)"""
        if self._outputs_fresh is None:
            self._outputs_fresh = self._find_outputs_fresh()
        return self._outputs_fresh

    def _find_outputs_fresh(self) -> bool:
        outs = self.fgraph.outputs
        if len(set(outs)) != len(outs):
            return False
        for v in outs:
            node = v.owner
            if node is None:
                return False
            k = node.outputs.index(v)
            if k in (getattr(node.op, "view_map", None) or {}):
                return False
            for i in (getattr(node.op, "destroy_map", None) or {}).get(k, ()):
                if node.inputs[i].owner is None:
                    return False
        return True

    def install(self, kernel: Callable) -> None:
        self.namespace["_whole"] = self.runner(kernel)
        self.state = "in use"

    @property
    def program(self) -> Callable | None:
        """``program(*input values)``: the call through the compiled function, its outputs
        returned, no cell read or written; :data:`~arignote.link.python.codegen.REFUSED` when it
        refuses or raises (the caller then runs the call on tier 1, which computes it or
        raises the reference's error). None unless the function is in use and every output
        is fresh (:meth:`outputs_fresh`)."""
        if self.state != "in use" or self._kernel is None or not self.outputs_fresh():
            return None
        if self._program is None:
            self._program = self._write(self._kernel, direct=True)
        return self._program

    # -- the runner --------------------------------------------------------------------------

    def runner(self, kernel: Callable) -> Callable[[], bool]:
        """``whole()``: the call through ``kernel`` (input cells in, output cells out); False
        when the kernel refused or raised (tier 1 then runs the call). An input the
        signature refuses (``TypeError``) is passed again as a contiguous copy."""
        self._kernel = kernel
        return self._write(kernel, direct=False)

    def _write(self, kernel: Callable, direct: bool) -> Callable:
        """``whole()`` (cells in and out), or with ``direct`` :attr:`program`."""
        plan = self.plan
        fg = self.fgraph
        params: dict[str, Any] = {
            "_kernel": kernel,
            "_fresh": self.fresh,
            "_c": _contiguous,
            "_REFUSED": REFUSED,
        }
        args = []
        for k, v in enumerate(fg.inputs):
            params[f"_in{k}"] = self.storage_map[v]
            args.append(f"a{k}" if direct else f"_in{k}[0]")
        for k, c in enumerate(plan.consts):
            params[f"_k{k}"] = c
            args.append(f"_k{k}")
        rets = [f"r{k}" for k in range(len(fg.outputs))]
        targets = f"{', '.join(rets)}{',' if len(rets) == 1 else ''}"
        n_in = len(fg.inputs)
        again = [f"_c({a})" if k < n_in else a for k, a in enumerate(args)]
        call = "_kernel("
        if any(calls_gemm(n) for n in self.nodes):
            params["_limited"] = limited_call
            call = "_limited(_kernel, "
        refused = "_REFUSED" if direct else "False"
        lines = [
            f"def program({', '.join(args[:n_in])}):" if direct else "def whole():",
            *([] if direct else ["    _fresh[0] = False"]),
            "    try:",
            f"        {targets} = {call}{', '.join(args)})",
            "    except TypeError:",
            "        try:",
            f"            {targets} = {call}{', '.join(again)})",
            "        except Exception:",
            f"            return {refused}",
            "    except Exception:",
            f"        return {refused}",
        ]
        values = []
        for k, (v, kind, dtype) in enumerate(zip(fg.outputs, plan.outputs, plan.out_dtypes)):
            params[f"_out{k}"] = self.storage_map[v]
            if kind == "scalar":
                params[f"_dt{k}"] = np.dtype(dtype).type
                values.append(f"_dt{k}(r{k})")
            else:
                values.append(f"r{k}")
        if direct:
            lines.append(f"    return [{', '.join(values)}]")
        else:
            lines += [f"    _out{k}[0] = {value}" for k, value in enumerate(values)]
            if self.outputs_fresh():
                lines.append("    _fresh[0] = True")
            lines.append("    return True")
        namespace = {"__builtins__": __builtins__, **params}
        exec(compile("\n".join(lines) + "\n", "<arignote whole graph>", "exec"), namespace)
        fn = namespace["program" if direct else "whole"]
        if direct:
            fn.may_refuse = True  # (the caller checks for REFUSED)
        return fn


def direct_call(runner: Callable, whole: WholeGraph, tier1: Callable[[], Any] | None) -> Callable[[], Any]:
    """``call_direct()`` of a runner with a whole-graph function whose outputs are fresh
    (:meth:`WholeGraph.outputs_fresh`), for :class:`~arignote.compile.executor.Function`'s
    plain calls. While the whole-graph function is in use, the runner offers
    :attr:`WholeGraph.program` as ``direct_program`` (values in, compiled function, values
    out) and a call returns its outputs; otherwise ``tier1``'s answer (tier 1's own direct
    call, for a graph whose every node it writes out) when there is one, else
    :data:`~arignote.link.python.codegen.REFUSED`: the caller runs the runner (the probe, the
    trial, a call the compiled function raises on, which tier 1 computes or raises on)."""
    in_cells = [whole.storage_map[v] for v in whole.fgraph.inputs]
    converters = (None,) * len(whole.fgraph.outputs)

    def call_direct() -> Any:
        program = whole.program
        if program is not None:
            runner.direct_program = (program, converters)
            return program(*[c[0] for c in in_cells])
        return tier1() if tier1 is not None else REFUSED

    return call_direct
