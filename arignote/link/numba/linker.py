"""Tier 2 of the fast CPU backend: Numba kernels swapped into the generated Python function.

:class:`NumbaLinker` links like :class:`~arignote.link.python.codegen.PyGenLinker` (tier 1:
one generated Python function calling NumPy) and gives the nodes that have a kernel
(:mod:`arignote.link.numba.kernels`: fused ``Elemwise(Composite)`` loops, reductions of a
fused input, Softmax and LogSoftmax) a thunk of their own, a name in the function's namespace. When the kernel is
ready, that name is rebound to a thunk calling it: the swap is one assignment, between two
calls. ``jit`` says when kernels are made:

* ``"background"`` (FAST_RUN's, when Numba is installed): only kernels that pay
  (:func:`~arignote.link.numba.kernels.pays`), once their node has processed
  ``hot_elements`` elements. A kernel found in the disk cache is loaded on a background
  thread; one that is not is compiled by a worker process (``python -m
  arignote.link.numba.worker``) into the cache first. No call waits: until the swap, tier 1
  runs. :func:`wait_for_kernels` waits for the work under way (for tests).
* ``"sync"`` (the ``"NUMBA"`` mode): every kernel, compiled (or loaded) before
  ``function()`` returns, and used at every size (``force``): tier 2 forced.
* ``"never"``: tier 1 only.

A tier-2 thunk runs its kernel on arrays of the kernel's types (an input that is not a
writeable C-contiguous array is passed as a contiguous copy); anything else (an empty
array, fewer than ``min_size`` elements, a runtime shape mismatch, whose error tier 1
raises, a kernel that hands the call back: a sin argument beyond its vectorised reduction)
goes to the tier-1 thunk, so results never depend on the tier.
``runner.tier2`` (``f.vm.tier2`` of a compiled function) lists each node's state.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.link.numba import cache
from arignote.link.numba.kernels import KernelPlan, has_plan_op, pays, plan_node, plan_op, plan_reduction
from arignote.link.numba.threads import kernel_threads, pieces_for, split_call
from arignote.link.numba.whole import WHOLE_CHOICES, WholeGraph, direct_call
from arignote.link.python.codegen import PyGenLinker, _Generator
from arignote.scalar.composite import Composite
from arignote.tensor.elemwise import CAReduce, Elemwise

__all__ = [
    "JIT_CHOICES",
    "NumbaLinker",
    "NumbaMissing",
    "numba_available",
    "load_kernel",
    "wait_for_kernels",
]

#: when tier-2 kernels are made (see the module's doc)
JIT_CHOICES = ("background", "sync", "never")

#: elements a node processes on tier 1 before its kernel is asked for ("background")
HOT_ELEMENTS = 4_000_000
#: below this many elements a call stays on tier 1: Numba's dispatch of a kernel and this
#: thunk's checks (a few µs) cost more than fusing saves (an estimate, not a measured crossover)
MIN_SIZE = 8192

_ndarray = np.ndarray


class NumbaMissing(ImportError):
    """Tier 2 was asked for (the ``"NUMBA"`` mode, ``jit="sync"``) without Numba installed."""


def numba_available() -> bool:
    """Whether Numba can be imported (checked without importing it)."""
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False


# -- loading and compiling kernels ------------------------------------------------------------

_loaded: dict[str, Callable] = {}
_load_lock = threading.Lock()


def _import_entry(key: str) -> Callable:
    """Import the kernel module stored under ``key`` (Numba compiles it, or loads its
    machine code from its cache) and return its ``kernel``."""
    path = cache.entry_path(key)
    name = f"arignote_kernel_{key}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import the kernel file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with warnings.catch_warnings():
            # (np.dot on arrays of any layout: Numba's note that contiguous ones are faster)
            warnings.filterwarnings("ignore", message=r".*faster on contiguous arrays")
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module.kernel


def load_kernel(plan: KernelPlan, compile_here: bool = True) -> Callable | None:
    """The compiled ``kernel`` of ``plan``: from this process's table, else from the disk
    cache (a complete entry: loaded), else compiled here when ``compile_here`` (stored in
    the cache for later processes), else None. A corrupt entry (its hash, or Numba's files
    that fail to load) is removed and rebuilt once."""
    key = cache.entry_key(plan.key)
    with _load_lock:
        fn = _loaded.get(key)
        if fn is not None:
            return fn
        if not numba_available():
            raise NumbaMissing(
                "tier 2 (the NUMBA mode, jit='sync') needs Numba: install it with "
                "`pip install arignote[numba]` (or `pip install numba`)"
            )
        for attempt in range(2):
            ready = cache.is_ready(key)
            if not ready and not compile_here:
                return None
            cache.write_entry(key, plan.source)
            try:
                fn = _import_entry(key)
            except Exception:
                if attempt:
                    raise
                cache.remove_entry(key)  # a damaged entry or damaged compiled code: rebuild
                continue
            if not ready:
                cache.mark_ready(key)
            _loaded[key] = fn
            return fn
    return None


class _Background:
    """The kernels asked for in ``"background"`` mode: one thread takes requests, has a
    worker process compile the missing ones into the disk cache, loads them and calls each
    request's ``done(kernel)``."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.queue: list[tuple[KernelPlan, Callable]] = []
        self.busy = 0
        self.thread: threading.Thread | None = None
        self.errors: list[BaseException] = []

    def request(self, plan: KernelPlan, done: Callable) -> None:
        if not numba_available():
            return  # tier 1 goes on: a worker without Numba could only fail
        with self.cond:
            self.queue.append((plan, done))
            self.busy += 1
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="arignote-tier2", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        while True:
            with self.cond:
                if not self.queue:
                    self.thread = None
                    self.cond.notify_all()
                    return
                batch, self.queue = self.queue, []
            try:
                missing = {}
                for plan, _ in batch:
                    key = cache.entry_key(plan.key)
                    if not cache.is_ready(key) and key not in _loaded:
                        cache.write_entry(key, plan.source)
                        missing[key] = plan
                if missing:
                    _compile_out_of_process(list(missing))
                for plan, done in batch:
                    try:
                        fn = load_kernel(plan, compile_here=False)
                    except Exception as err:  # tier 1 goes on; the error is kept for wait()
                        self.errors.append(err)
                        fn = None
                    if fn is not None:
                        done(fn)
            finally:
                with self.cond:
                    self.busy -= len(batch)
                    self.cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: self.busy == 0, timeout)


_background = _Background()


def _compile_out_of_process(keys: list[str]) -> None:
    """Compile the kernels stored under ``keys`` in a worker process (it imports each one,
    so Numba stores its machine code, and marks it ready)."""
    import subprocess  # (~5 ms to import: only when a background compile starts)

    env = dict(os.environ)
    env["ARIGNOTE_CACHE_DIR"] = str(cache.cache_dir())
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "arignote.link.numba.worker", *keys],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        warnings.warn(
            f"arignote's tier-2 compiler process failed (tier 1 goes on): {proc.stderr[-2000:]}",
            RuntimeWarning,
            stacklevel=1,
        )


def wait_for_kernels(timeout: float | None = None) -> bool:
    """Wait until the kernels asked for in ``"background"`` mode are compiled, loaded and
    swapped in (or failed: tier 1 goes on); True unless ``timeout`` ran out. Tests use it to
    reach tier 2 deterministically."""
    return _background.wait(timeout)


def _c_inputs(vals: list) -> list:
    """The inputs as the kernels' signatures take them: writeable C-contiguous arrays (a
    copy of any other)."""
    for k, v in enumerate(vals):
        flags = v.flags
        if not (flags.c_contiguous and flags.writeable):
            vals[k] = np.array(v, order="C")
    return vals


# -- tier-2 thunks -----------------------------------------------------------------------------


def _shape_of(vals: list, bcasts: tuple, ndim: int) -> tuple | None:
    """The elementwise result's shape, or None when the inputs disagree where their Types
    are not broadcastable (tier 1 raises the error)."""
    shape = []
    for d in range(ndim):
        n = None
        for v, b in zip(vals, bcasts):
            if not b[d]:
                m = v.shape[d]
                if n is None:
                    n = m
                elif m != n:
                    return None
        shape.append(1 if n is None else n)
    return tuple(shape)


@dataclass
class _Slot:
    """One node with a kernel: its thunk's name in the runner's namespace, its tier-1
    thunk, its plan, and its state (``"tier 1"``, ``"requested"``, ``"tier 2"``)."""

    k: int
    node: Apply
    plan: KernelPlan | None  # (None until planned: a hot node in "background" mode)
    tier1: Callable
    name: str = ""
    state: str = "tier 1"
    producer: _Slot | None = None  # a reduction's fused input (its node is skipped on tier 2)
    extra: dict = field(default_factory=dict)


class NumbaLinker(PyGenLinker):
    """Tier 1 (:class:`PyGenLinker`) with tier-2 Numba kernels swapped in (see the module's
    doc). ``jit``: ``"background"``, ``"sync"`` or ``"never"``; ``force``: use every kernel
    at every size (else only those that pay, from ``min_size`` elements); ``threads``: how
    many threads a large kernel call is split over (:mod:`arignote.link.numba.threads`; None,
    the default: :func:`~arignote.link.numba.threads.kernel_threads`); ``whole_graph``: when the whole graph runs as one
    Numba function (:mod:`arignote.link.numba.whole`: ``"auto"``, chosen by measurement,
    ``jit="background"``'s default; ``"always"``, ``jit="sync"``'s; ``"never"``)."""

    __props__ = ("allow_gc", "jit", "force", "threads", "min_size", "hot_elements", "whole_graph")

    def __init__(
        self,
        allow_gc: bool = True,
        jit: str = "background",
        force: bool | None = None,
        threads: int | None = None,
        min_size: int | None = None,
        hot_elements: int = HOT_ELEMENTS,
        whole_graph: str | None = None,
    ):
        if jit not in JIT_CHOICES:
            raise ValueError(f"jit must be one of {JIT_CHOICES}, got {jit!r}")
        if whole_graph is None:
            whole_graph = {"background": "auto", "sync": "always"}.get(jit, "never")
        if whole_graph not in WHOLE_CHOICES:
            raise ValueError(f"whole_graph must be one of {WHOLE_CHOICES}, got {whole_graph!r}")
        if jit == "never":
            whole_graph = "never"
        self.whole_graph = whole_graph
        if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
            raise ValueError(f"threads must be None or a positive integer, got {threads!r}")
        super().__init__(allow_gc)
        self.jit = jit
        self.force = jit == "sync" if force is None else bool(force)
        self.threads = threads
        self.min_size = (0 if self.force else MIN_SIZE) if min_size is None else int(min_size)
        self.hot_elements = hot_elements

    def n_threads(self) -> int:
        """The threads a large kernel call is split over: ``threads``, or
        :func:`~arignote.link.numba.threads.kernel_threads` when it is None."""
        return self.threads or kernel_threads()

    def __repr__(self) -> str:
        return f"NumbaLinker(jit={self.jit!r}, force={self.force}, whole_graph={self.whole_graph!r})"

    def _prologue(self) -> bool:
        return self.whole_graph != "never"

    def make_vm(
        self,
        fgraph: FunctionGraph,
        input_storage: Any,
        no_recycling: Any,
        profile: Any = None,
        thunk_maker: Callable | None = None,
    ) -> tuple[Any, list[list]]:
        # (the state kept between _thunk_nodes and _attach; a nested make_vm, e.g. a Scan's
        # inner function compiled while the outer graph is planned, must leave it as it was)
        names = ("_pending", "_whole_args", "_storage", "_no_recycling")
        saved = {k: self.__dict__[k] for k in names if k in self.__dict__}
        self._no_recycling = list(no_recycling)  # (for the direct tier-1 function, if made)
        try:
            return super().make_vm(fgraph, input_storage, no_recycling, profile, thunk_maker)
        finally:
            for k in names:
                self.__dict__.pop(k, None)
            self.__dict__.update(saved)

    def __str__(self) -> str:
        return repr(self)

    # -- which nodes ---------------------------------------------------------------------

    def _thunk_nodes(
        self, fgraph: FunctionGraph, nodes: list[Apply], thunks: list, storage_map: dict, compute_map: dict
    ) -> set[int]:
        self._pending: list[_Slot] = []
        self._whole_args = None
        if self.jit == "never":
            return set()
        if self.jit == "sync" and not numba_available():
            raise NumbaMissing(
                "the NUMBA mode (tier 2 forced) needs Numba: install it with "
                "`pip install arignote[numba]` (or `pip install numba`)"
            )
        if self.whole_graph != "never":
            self._whole_args = (fgraph, nodes, storage_map)
            if self.whole_graph == "always":
                whole = self._whole_args = WholeGraph(
                    "always", fgraph, nodes, storage_map, {}, _background.request, load_kernel
                )
                if whole.try_plan():
                    return set()  # the whole graph runs as one function: no per-node kernels
        position = {n: k for k, n in enumerate(nodes)}
        lazy = self.jit == "background" and self.hot_elements > 0 and not self.force
        threaded = self.n_threads() > 1
        slots: dict[int, _Slot] = {}
        outputs = set(fgraph.outputs)
        # (backwards: a reduction claims its fused input before that node is looked at)
        for k in range(len(nodes) - 1, -1, -1):
            node = nodes[k]
            op = node.op
            if k in slots:
                continue
            plan = None
            producer = None
            src = None
            if isinstance(op, CAReduce):  # a fused input only it reads, nothing destroyed between
                src = node.inputs[0].owner
                if not (
                    src is not None
                    and isinstance(src.op, Elemwise)
                    and src in position
                    and len(fgraph.clients.get(src.outputs[0], ())) == 1
                    and src.outputs[0] not in outputs
                    and position[src] not in slots
                    and not any(nodes[j].op.destroy_map for j in range(position[src] + 1, k + 1))
                ):
                    src = None
            if lazy:  # planned when hot: link time stays what tier 1's is
                if src is not None and len(src.outputs) == 1:
                    slot = slots[k] = _Slot(k, node, None, thunks[k])
                    j = position[src]
                    slot.producer = slots[j] = _Slot(j, src, None, thunks[j])
                elif (
                    (isinstance(op, Elemwise) and isinstance(op.scalar_op, Composite) and op.nout == 1)
                    or has_plan_op(op)
                    or (isinstance(op, CAReduce) and threaded)
                ):
                    slots[k] = _Slot(k, node, None, thunks[k])
                continue
            if isinstance(op, CAReduce):
                if src is not None:
                    plan = plan_reduction(node, src)
                    if plan is not None:
                        producer = src
                if plan is None:
                    plan = plan_reduction(node, None)
                    if plan is not None and not (self.force or threaded):
                        plan = None  # a plain reduction on one thread: NumPy's is as fast (bench/backend.py)
            elif isinstance(op, Elemwise):
                plan = plan_node(node)
            else:
                plan = plan_op(op, node)
            if plan is None or (not self.force and not pays(plan)):
                continue
            slot = _Slot(k, node, plan, thunks[k])
            if producer is not None:
                j = position[producer]
                slot.producer = _Slot(j, producer, plan, thunks[j])
                slots[j] = slot.producer
            slots[k] = slot
        producers = {id(s.producer) for s in slots.values() if s.producer is not None}
        self._storage = (storage_map, compute_map)
        self._pending = [s for s in slots.values() if id(s) not in producers]
        if self.jit == "background" and self.hot_elements > 0:
            for slot in self._pending:  # tier 1 counts the elements it processes
                thunks[slot.k] = self._counting(slot, storage_map)
                slot.tier1_counting = thunks[slot.k]
        return set(slots)

    def _counting(self, slot: _Slot, storage_map: dict) -> Callable:
        tier1 = slot.tier1
        if slot.producer is not None:
            cell = storage_map[slot.producer.node.outputs[0]]
        elif isinstance(slot.node.op, CAReduce):  # (a plain reduction: its input's elements)
            cell = storage_map[slot.node.inputs[0]]
        else:
            cell = storage_map[slot.node.outputs[0]]
        budget = [self.hot_elements]
        min_size = self.min_size
        # after this many calls on arrays under min_size the node stays on tier 1 without
        # counting (a small model's per-call cost stays tier 1's)
        probe = [64, False]

        def thunk() -> None:
            tier1()
            size = cell[0].size if type(cell[0]) is _ndarray else 1
            budget[0] -= size
            if not probe[1]:
                probe[0] -= 1
                probe[1] = size >= min_size
                if probe[0] <= 0 and not probe[1] and slot.state == "tier 1":
                    slot.state = "tier 1 (small arrays)"
                    slot.extra["namespace"][slot.name] = tier1
                    _settle(slot)
                    return
            if budget[0] < 0 and slot.state == "tier 1":
                if slot.plan is None:
                    if slot.producer is not None:
                        slot.plan = slot.producer.plan = plan_reduction(slot.node, slot.producer.node)
                    elif isinstance(slot.node.op, CAReduce):
                        slot.plan = plan_reduction(slot.node, None)
                    elif isinstance(slot.node.op, Elemwise):
                        slot.plan = plan_node(slot.node)
                    else:
                        slot.plan = plan_op(slot.node.op, slot.node)
                    if slot.plan is None or not pays(slot.plan):
                        slot.state = "tier 1 (no kernel pays)"
                        slot.extra["namespace"][slot.name] = tier1
                        _settle(slot)
                        return
                slot.state = "requested"
                _background.request(slot.plan, slot.extra["install"])

        for attr in ("inputs", "outputs", "perform", "lazy", "sets_outputs"):
            if hasattr(tier1, attr):
                setattr(thunk, attr, getattr(tier1, attr))
        return thunk

    # -- swapping ------------------------------------------------------------------------

    def _attach(self, runner: Callable, thunk_names: dict[int, str]) -> None:
        self._attach_kernels(runner, thunk_names)
        whole = getattr(self, "_whole_args", None)
        self._whole_args = None
        if whole is not None:
            if not isinstance(whole, WholeGraph):
                whole = WholeGraph(self.whole_graph, *whole, {}, _background.request, load_kernel)
            whole.namespace = runner.__globals__
            slots = runner.tier2
            whole.waiting = lambda: any(s.state == "requested" for s in slots)
            runner.whole = whole
            whole.start()
            # [True] while a call's outputs are arrays the whole-graph function allocated
            # (read by the compiled Function after each call: no aliasing checks then)
            runner.fresh_outputs_now = whole.fresh
            tier_impl = runner.impl_of

            def whole_impl_of(node: Apply) -> str:
                return "numba (whole graph)" if whole.state == "in use" else tier_impl(node)

            runner.impl_of = whole_impl_of
            if runner.tier2 and self.jit == "background":
                _direct_when_settled(self, runner, whole)
            if whole.outputs_fresh():
                runner.call_direct = direct_call(runner, whole, getattr(runner, "call_direct", None))
                runner.direct_fresh = True
        else:
            runner.whole = None

    def _attach_kernels(self, runner: Callable, thunk_names: dict[int, str]) -> None:
        pending = getattr(self, "_pending", [])
        self._pending = []
        runner.tier2 = pending
        if not pending:
            return
        by_node = {s.node: s for s in pending}
        by_node.update({s.producer.node: s for s in pending if s.producer is not None})
        tier1_impl = runner.impl_of

        def impl_of(node: Apply) -> str:  # (under the whole graph's, when it is in use)
            # what runs the node now: "numba" once its kernel is swapped in
            slot = by_node.get(node)
            return "numba" if slot is not None and slot.state == "tier 2" else tier1_impl(node)

        runner.impl_of = impl_of
        storage_map, compute_map = self._storage
        del self._storage
        namespace = runner.__globals__
        for slot in pending:
            slot.name = thunk_names[slot.k]
            if slot.producer is not None:
                slot.producer.name = thunk_names[slot.producer.k]
            slot.extra["install"] = _installer(self, slot, namespace, storage_map, compute_map)
            slot.extra["namespace"] = namespace
        if self.jit == "sync":
            for slot in pending:
                slot.extra["install"](load_kernel(slot.plan))
        elif self.hot_elements <= 0:
            for slot in pending:
                slot.state = "requested"
                _background.request(slot.plan, slot.extra["install"])


def _settle(slot: _Slot) -> None:
    settled = slot.extra.get("settled")
    if settled is not None:
        settled()


def _direct_when_settled(linker: NumbaLinker, runner: Callable, whole: WholeGraph) -> None:
    """Once every node with a tier-2 thunk has settled on tier 1 (small arrays, or no kernel
    pays), the thunks' indirection is all they add (about 0.3-0.5 µs a node per call): the
    graph is generated again with those nodes written out as tier 1 writes them, and
    ``whole``'s fallback runs it."""
    slots = runner.tier2
    fgraph, nodes, storage_map = runner.fgraph, runner.nodes, runner.storage_map
    no_recycling, allow_gc = linker._no_recycling, linker.allow_gc

    def settled() -> None:
        if not all(s.state.startswith("tier 1 (") for s in slots):
            return
        for s in slots:
            s.extra["settled"] = None  # (asked once)
        thunks = list(runner.thunks)
        for s in slots:
            thunks[s.k] = s.tier1
            if s.producer is not None:
                thunks[s.producer.k] = s.producer.tier1
        gen = _Generator(fgraph, nodes, thunks, storage_map, no_recycling, allow_gc, set())
        direct = gen.build()
        runner.direct_source = gen.source

        def hook() -> bool:
            direct()
            return True

        whole.set_fallback(hook)

    for s in slots:
        s.extra["settled"] = settled


def _installer(
    linker: NumbaLinker, slot: _Slot, namespace: dict, storage_map: dict, compute_map: dict
) -> Callable[[Callable], None]:
    """``install(kernel)``: rebind the slot's thunk name(s) to tier-2 thunks."""

    def install(kernel: Callable) -> None:
        if slot.plan.kind == "map":
            namespace[slot.name] = _map_thunk(linker, slot, kernel, storage_map, compute_map)
        elif slot.plan.kind == "rows":
            namespace[slot.name] = _rows_thunk(linker, slot, kernel, storage_map, compute_map)
        else:
            thunk, skip = _reduce_thunk(linker, slot, kernel, storage_map, compute_map)
            namespace[slot.name] = thunk  # first: it also runs after the producer's tier 1
            if skip is not None:
                namespace[slot.producer.name] = skip
        slot.state = "tier 2"

    return install


def _flags(node: Apply, compute_map: dict | None) -> list[list]:
    return [compute_map[v] for v in node.outputs] if compute_map is not None else []


def _map_thunk(
    linker: NumbaLinker, slot: _Slot, kernel: Callable, storage_map: dict, compute_map: dict
) -> Callable:
    node, plan, tier1 = slot.node, slot.plan, slot.tier1
    in_cells = [storage_map[v] for v in node.inputs]
    out_cells = [storage_map[v] for v in node.outputs]
    flags = _flags(node, compute_map)
    bcasts = plan.in_broadcastable
    ndim = node.outputs[0].type.ndim
    odts = [np.dtype(d) for d in plan.out_dtypes]
    consts = plan.consts
    min_size = max(linker.min_size, 1)
    threads = linker.n_threads()
    ns_per_element = plan.costs[1]
    # (outputs computed over an input, which the kernel is not passed: KernelPlan.inplace)
    inplace = dict(plan.inplace)
    own = [(j, dt) for j, dt in enumerate(odts) if j not in inplace]
    _may_share = np.may_share_memory

    def thunk() -> None:
        vals = [c[0] for c in in_cells]
        for v in vals:
            if type(v) is not _ndarray:
                tier1()
                return
        vals = _c_inputs(vals)
        shape = _shape_of(vals, bcasts, ndim)
        if shape is None or shape[0] == 0:
            tier1()
            return
        size = 1
        for n in shape:
            size *= n
        if size < min_size:
            tier1()
            return
        for i in inplace.values():  # (C-contiguous and writeable already: _c_inputs)
            target = vals[i]
            if any(k != i and _may_share(v, target) for k, v in enumerate(vals)):
                vals[i] = target.copy()  # (another input reads that memory: a private copy)
        outs = [np.empty(shape, dt) for _, dt in own]
        args = (*vals, *consts, *outs)
        try:
            parts = pieces_for(threads, size * ns_per_element, shape[0])
            if parts > 1:
                beyond = split_call(kernel, args, shape[0], parts)
            else:
                beyond = kernel(*args, 0, shape[0])
        except TypeError:  # not the kernel's types: tier 1
            tier1()
            return
        if beyond:  # an argument the vectorised math leaves to NumPy
            tier1()
            return
        for (j, _), o in zip(own, outs):
            out_cells[j][0] = o
        for j, i in inplace.items():
            out_cells[j][0] = vals[i]
        for f in flags:
            f[0] = True

    thunk.sets_outputs = True
    return thunk


def _rows_thunk(
    linker: NumbaLinker, slot: _Slot, kernel: Callable, storage_map: dict, compute_map: dict
) -> Callable:
    """A ``"rows"`` kernel's thunk (:func:`~arignote.link.numba.kernels.plan_op`): the input
    seen as ``(A, n, B)``, the rows ``A`` split over threads when the call is large."""
    node, plan, tier1 = slot.node, slot.plan, slot.tier1
    in_cell = storage_map[node.inputs[0]]
    out_cell = storage_map[node.outputs[0]]
    flags = _flags(node, compute_map)
    lo, hi = plan.keep
    odt = np.dtype(plan.out_dtypes[0])
    ndim = node.inputs[0].type.ndim
    min_size = max(linker.min_size, 1)
    threads = linker.n_threads()
    ns_per_element = plan.costs[1]

    def thunk() -> None:
        x = in_cell[0]
        if type(x) is not _ndarray or x.dtype != odt or x.ndim != ndim or x.size < min_size:
            tier1()
            return
        (x,) = _c_inputs([x])
        shape = x.shape
        a = n = b = 1
        for d in range(ndim):
            if d < lo:
                a *= shape[d]
            elif d < hi:
                n *= shape[d]
            else:
                b *= shape[d]
        out = np.empty(shape, odt)
        args = (x.reshape(a, n, b), out.reshape(a, n, b))
        try:
            parts = pieces_for(threads, x.size * ns_per_element, a)
            if parts > 1:
                split_call(kernel, args, a, parts)
            else:
                kernel(*args, 0, a)
        except TypeError:
            tier1()
            return
        out_cell[0] = out
        for f in flags:
            f[0] = True

    thunk.sets_outputs = True
    return thunk


_SKIPPED = np.empty(0)  # what a skipped producer leaves in its output cell (never read)


def _reduce_thunk(
    linker: NumbaLinker, slot: _Slot, kernel: Callable, storage_map: dict, compute_map: dict
) -> tuple[Callable, Callable | None]:
    """The reduction's tier-2 thunk and, for a fused input, the producer's: it only hands
    its inputs to the reduction (its array is never made)."""
    node, plan, tier1 = slot.node, slot.plan, slot.tier1
    out_cell = storage_map[node.outputs[0]]
    flags = _flags(node, compute_map)
    bcasts = plan.in_broadcastable
    keep = plan.keep
    ndim = len(bcasts[0])
    odt = np.dtype(plan.out_dtypes[0])
    consts = plan.consts
    min_size = max(linker.min_size, 1)
    threads = linker.n_threads() if keep else 1
    ns_per_element = plan.costs[1]
    prod = slot.producer
    stash: list = [None]
    if prod is not None:
        p_in = [storage_map[v] for v in prod.node.inputs]
        p_out = storage_map[prod.node.outputs[0]]
        p_flags = _flags(prod.node, compute_map)
        p_tier1 = prod.tier1

        def skip() -> None:
            stash[0] = [c[0] for c in p_in]
            p_out[0] = _SKIPPED
            for f in p_flags:
                f[0] = True

        skip.sets_outputs = True

        def fallback(vals: list) -> None:
            # the producer on tier 1 (its input cells as they were), then the reduction
            saved = [c[0] for c in p_in]
            for c, v in zip(p_in, vals):
                c[0] = v
            try:
                p_tier1()
            finally:
                for c, v in zip(p_in, saved):
                    c[0] = v
            tier1()
            p_out[0] = None

    else:
        x_cell = storage_map[node.inputs[0]]
        skip = None

        def fallback(vals: list) -> None:
            tier1()

    def thunk() -> None:
        if prod is not None:
            vals = stash[0]
            if vals is None:  # the producer ran on tier 1 (swapped in between)
                tier1()
                return
            stash[0] = None
        else:
            vals = [x_cell[0]]
        for v in vals:
            if type(v) is not _ndarray:
                fallback(vals)
                return
        shape = _shape_of(vals, bcasts, ndim)
        if shape is None:
            fallback(vals)
            return
        cvals = _c_inputs(list(vals))
        size = 1
        for n in shape:
            size *= n
        if size < min_size or size == 0:
            fallback(vals)
            return
        oshape = tuple(shape[d] for d in keep)
        out = np.empty(oshape if keep else (1,), odt)
        args = (*cvals, *consts, out)
        n = oshape[0] if keep else 1
        try:
            parts = pieces_for(threads, size * ns_per_element, n)
            if parts > 1:
                beyond = split_call(kernel, args, n, parts)
            else:
                beyond = kernel(*args, 0, n)
        except TypeError:
            fallback(vals)
            return
        if beyond:
            fallback(vals)
            return
        out_cell[0] = out if keep else out.reshape(())
        for f in flags:
            f[0] = True

    thunk.sets_outputs = True
    return thunk, skip
