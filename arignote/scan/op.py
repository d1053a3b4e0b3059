"""The :class:`Scan` Op: a loop whose body is a compiled inner graph.

One node runs ``n`` steps of its inner function. The inner function is compiled once per
Op (with the same rewrite pipeline as any function) and called every step through its
virtual machine directly: the loop writes each step's inputs into the inner function's
input cells (views of the sequences and of the output buffers), runs it, and copies its
outputs into buffers allocated once per call. The loop itself is one generated function
per layout (:mod:`arignote.scan.loop`), the seam where a compiled backend can take over
the whole loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from copy import copy
from typing import Any

import numpy as np

from arignote.compile.builders import _filter_inputs, _graph_signature
from arignote.compile.function import function
from arignote.compile.io import In
from arignote.compile.mode import get_mode
from arignote.graph.basic import Apply, Variable, clone_get_equiv
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import HasInnerGraph, Op
from arignote.graph.traversal import ancestors
from arignote.link.python.codegen import PyGenLinker
from arignote.printing.debug import register_node_annotator
from arignote.scan.loop import LoopPlan, StepError, loop_for
from arignote.scan.scalar_loop import scalar_loop_for
from arignote.scan.utils import ScanInfo
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.join import stack
from arignote.tensor.rewriting.shape import shape_feature
from arignote.tensor.shape import Shape_i
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast, maximum, minimum

__all__ = ["Scan"]

_compile_lock = threading.RLock()


def _is_tensor(t: Any) -> bool:
    return isinstance(t, TensorType)


class Scan(Op, HasInnerGraph):
    """A loop over an inner graph (built by :func:`arignote.scan`; see :class:`ScanInfo`
    for the layout of its inputs and outputs).

    ``inputs``/``outputs``: the inner graph (cloned). ``mode``: how the inner function is
    compiled (default: the configured mode). ``truncate_gradient``: the number of steps
    back-propagation goes through (-1: all). ``profile``: record the loop's cost per step
    (see :meth:`loop_summary`).
    """

    def __init__(
        self,
        inputs: list[Variable],
        outputs: list[Variable],
        info: ScanInfo,
        *,
        mode: Any = None,
        name: str | None = None,
        truncate_gradient: int = -1,
        profile: Any = False,
    ):
        self.info = info
        self.mode = mode
        self.name = name
        self.truncate_gradient = int(truncate_gradient)
        self.profile = profile
        memo = {v: v.type(name=v.name) for v in inputs}
        equiv = clone_get_equiv([], outputs, copy_inputs=False, copy_orphans=False, memo=memo)
        self.fgraph = FunctionGraph([memo[v] for v in inputs], [equiv[o] for o in outputs], clone=False)
        n_in = sum(len(t) for t in info.seq_taps) + sum(len(t) for t in info.rec_taps) + info.n_non_seqs
        n_out = info.n_rec + info.n_nit_sot + int(info.as_while)
        if len(inputs) != n_in or len(outputs) != n_out:
            raise ValueError(
                f"Scan: the layout {info} needs {n_in} inner inputs and {n_out} inner outputs, got "
                f"{len(inputs)} and {len(outputs)}"
            )
        self._signature = _graph_signature(self.inner_inputs, self.inner_outputs)
        try:
            self._hash = hash((self._signature, info, self.truncate_gradient))
        except TypeError:
            self._signature = None
            self._hash = id(self)
        self._fn: Any = None
        self._plan: LoopPlan | None = None
        self._scalar: Any = None  # the loop on NumPy scalars (False: none)
        self._row_shapes: Any = None  # the per-step outputs' shapes, by inference (False: none)
        self.loop_stats = {"calls": 0, "steps": 0, "seconds": 0.0}

    # -- identity and printing --------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(self) is not type(other) or self._signature is None or other._signature is None:
            return False
        return (
            self._hash == other._hash
            and self.info == other.info
            and self.truncate_gradient == other.truncate_gradient
            and self._signature == other._signature
            and self.mode == other.mode
        )

    def __hash__(self) -> int:
        return hash((type(self), self._hash))

    def __str__(self) -> str:
        parts = [self.name or "scan_fn"]
        if self.info.as_while:
            parts.append("while_loop=True")
        if any(self.info.keep):
            parts.append(f"keep={list(self.info.keep)}")
        return "Scan{" + ", ".join(parts) + "}"

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_fn"] = None
        state["_plan"] = None
        state["_scalar"] = None
        state["_row_shapes"] = None
        return state

    def clone(self) -> Scan:
        res = copy(self)
        equiv = clone_get_equiv(self.inner_inputs, self.inner_outputs, clone_inner_graphs=True)
        res.fgraph = FunctionGraph(
            [equiv[v] for v in self.inner_inputs], [equiv[v] for v in self.inner_outputs], clone=False
        )
        res._fn = None
        res._plan = None
        res._scalar = None
        res._row_shapes = None
        return res

    def with_info(self, info: ScanInfo) -> Scan:
        """This loop with another layout of the same inner graph (e.g. other ``keep``)."""
        return Scan(
            self.inner_inputs,
            self.inner_outputs,
            info,
            mode=self.mode,
            name=self.name,
            truncate_gradient=self.truncate_gradient,
            profile=self.profile,
        )

    def get_oinp_iinp_iout_oout_mappings(self) -> dict:
        """Which outer input feeds each inner input (for printing the inner graph)."""
        info = self.info
        seqs, recs, nons = info.inner_slices()
        pairs: dict[int, int] = {}
        for i, sl in enumerate(seqs):
            for k in range(sl.start, sl.stop):
                pairs[k] = 1 + i
        for j, sl in enumerate(recs):
            for k in range(sl.start, sl.stop):
                pairs[k] = 1 + info.n_seqs + j
        for m, k in enumerate(range(nons.start, nons.stop)):
            pairs[k] = 1 + info.n_seqs + info.n_rec + m
        return {"outer_inp_from_inner_inp": pairs}

    # -- the inner function ---------------------------------------------------------------------

    @property
    def fn(self) -> Any:
        """The compiled inner function (compiled on first use, then reused every step)."""
        if self._fn is None:
            with _compile_lock:
                if self._fn is None:
                    fn = function(
                        [In(v, mutable=k in self._owned_inputs()) for k, v in enumerate(self.inner_inputs)],
                        self.inner_outputs,
                        mode=self._inner_mode(),
                        on_unused_input="ignore",
                        profile=True if self.profile else None,
                        name=self.name,
                    )
                    fn.trust_input = True
                    self._fn = fn
        return self._fn

    def _owned_inputs(self) -> set[int]:
        """Inner inputs the loop feeds with an array of its own, which the inner function
        may overwrite: the tap -1 value of a tensor state read at no other tap (the
        previous step's output, already copied into the buffer)."""
        info = self.info
        _, rec_sl, _ = info.inner_slices()
        owned = set()
        for j, sl in enumerate(rec_sl):
            taps = info.rec_taps[j]
            if _is_tensor(self.inner_inputs[sl.start].type) and taps.count(-1) == 1:
                owned.add(sl.start + taps.index(-1))
        return owned

    def _inner_mode(self) -> Any:
        """The mode the inner function is compiled with: the Op's; by default the
        configured one, without elementwise fusion when the step works on 0-d tensors
        only (a fused body evaluated per call costs more than its few ufunc calls)."""
        if self.mode is not None:
            return self.mode
        graph_vars = [*self.inner_inputs, *self.inner_outputs]
        if all(_is_tensor(v.type) and v.type.ndim == 0 for v in graph_vars):
            return get_mode(None).excluding("fusion")
        return None

    # -- building -------------------------------------------------------------------------------

    def split_outer(self, inputs: Sequence[Any]) -> tuple[Any, list, list, list]:
        info = self.info
        a, b = 1 + info.n_seqs, 1 + info.n_seqs + info.n_rec
        return inputs[0], list(inputs[1:a]), list(inputs[a:b]), list(inputs[b:])

    def outer_input_types(self) -> list:
        """The Types the outer inputs must have (``n_steps`` aside)."""
        info = self.info
        ins = self.inner_inputs
        seqs, recs, nons = info.inner_slices()
        types = []
        for sl in seqs:
            t = ins[sl.start].type
            types.append(TensorType(t.dtype, (None, *t.shape)))
        for sl in recs:
            t = ins[sl.start].type
            types.append(TensorType(t.dtype, (None, *t.shape)) if _is_tensor(t) else t)
        types.extend(v.type for v in ins[nons])
        return types

    def outer_output_types(self) -> list:
        info = self.info
        outs = self.inner_outputs
        types = []
        for k in range(info.n_rec + info.n_nit_sot):
            t = outs[k].type
            if not _is_tensor(t):
                types.append(t)
                continue
            keep = info.keep[k]
            length = None
            if k < info.n_rec and keep and keep >= info.rec_len(k):
                length = keep
            types.append(TensorType(t.dtype, (length, *t.shape)))
        return types

    def make_node(self, n_steps: Any, *inputs: Any) -> Apply:
        info = self.info
        n_steps = as_tensor_variable(n_steps)
        if n_steps.type.ndim != 0 or np.dtype(n_steps.type.dtype).kind not in "iu":
            raise TypeError(
                f"{self}: n_steps must be an integer scalar, got {n_steps} of Type {n_steps.type}"
            )
        if n_steps.type.dtype != "int64":
            n_steps = cast(n_steps, "int64")
        types = self.outer_input_types()
        if len(inputs) != len(types):
            raise ValueError(
                f"{self} takes n_steps and {len(types)} inputs ({info.n_seqs} sequences, {info.n_rec} "
                f"initial values, {info.n_non_seqs} non-sequences), got {len(inputs)}"
            )
        checked = _filter_inputs(self, inputs, types)
        return Apply(self, [n_steps, *checked], [t() for t in self.outer_output_types()])

    # -- the layout, by role (PyTensor's names; see ScanInfo for arignote's layout) -------------

    @property
    def n_outer_inputs(self) -> int:
        """How many inputs a node of this Op has: ``n_steps``, the sequences, one initial value
        per recurrent output, the non-sequences."""
        info = self.info
        return 1 + info.n_seqs + info.n_rec + info.n_non_seqs

    @property
    def n_outer_outputs(self) -> int:
        """How many outputs a node of this Op has: the recurrent ones, then the nit-sot ones."""
        return self.info.n_outer_outputs

    def inner_seqs(self, list_inputs: Sequence[Variable]) -> list[Variable]:
        """The sequences' taps among inner inputs ``list_inputs`` (one per tap, in order)."""
        n = sum(len(t) for t in self.info.seq_taps)
        return list(_checked_len(list_inputs, len(self.inner_inputs), "inner inputs")[:n])

    def outer_seqs(self, list_inputs: Sequence[Variable]) -> list[Variable]:
        """The sequences among a node's inputs ``list_inputs``."""
        return list(_checked_len(list_inputs, self.n_outer_inputs, "outer inputs")[1 : 1 + self.info.n_seqs])

    def inner_non_seqs(self, list_inputs: Sequence[Variable]) -> list[Variable]:
        """The non-sequences among inner inputs ``list_inputs``."""
        list_inputs = _checked_len(list_inputs, len(self.inner_inputs), "inner inputs")
        return list(list_inputs[len(list_inputs) - self.info.n_non_seqs :])

    def outer_non_seqs(self, list_inputs: Sequence[Variable]) -> list[Variable]:
        """The non-sequences among a node's inputs ``list_inputs``."""
        list_inputs = _checked_len(list_inputs, self.n_outer_inputs, "outer inputs")
        return list(list_inputs[len(list_inputs) - self.info.n_non_seqs :])

    def inner_nitsot_outs(self, list_outputs: Sequence[Variable]) -> list[Variable]:
        """The per-step values of the nit-sot outputs among inner outputs ``list_outputs``."""
        info = self.info
        list_outputs = _checked_len(list_outputs, len(self.inner_outputs), "inner outputs")
        return list(list_outputs[info.n_rec : info.n_rec + info.n_nit_sot])

    def outer_nitsot_outs(self, list_outputs: Sequence[Variable]) -> list[Variable]:
        """The nit-sot outputs (one row per step) among a node's outputs ``list_outputs``."""
        list_outputs = _checked_len(list_outputs, self.n_outer_outputs, "outer outputs")
        return list(list_outputs[self.info.n_rec :])

    # -- running --------------------------------------------------------------------------------

    def n_effective(self, n_steps: int, seqs: Sequence[np.ndarray]) -> int:
        """Steps run: ``n_steps``, or fewer when a sequence is shorter (never below 0)."""
        n = int(n_steps)
        for i, s in enumerate(seqs):
            _, span = self.info.seq_span(i)
            n = min(n, s.shape[0] - span)
        return max(n, 0)

    def loop_plan(self) -> LoopPlan:
        """The static layout of this Op's loop (see :mod:`arignote.scan.loop`)."""
        plan = self._plan
        if plan is None:
            info = self.info
            fn = self.fn
            seq_sl, rec_sl, non_sl = info.inner_slices()
            seq_feeds = []
            for i, sl in enumerate(seq_sl):
                off, _ = info.seq_span(i)
                for k, tap in zip(range(sl.start, sl.stop), info.seq_taps[i]):
                    seq_feeds.append((k, i, tap + off))
            rec_feeds, objects, ring, starts, writes = [], [], [], [], []
            for j, sl in enumerate(rec_sl):
                if not _is_tensor(self.inner_inputs[sl.start].type):
                    objects.append((sl.start, j))
                    ring.append(False)
                    starts.append(0)
                    continue
                rec_feeds.extend((k, j, tap) for k, tap in zip(range(sl.start, sl.stop), info.rec_taps[j]))
                ring.append(bool(info.keep[j]))
                starts.append(info.rec_len(j))
                writes.append((j, j))
            for m in range(info.n_nit_sot):
                o = info.n_rec + m
                ring.append(bool(info.keep[o]))
                starts.append(0)
                writes.append((o, o))
            protected = {id(c) for c in fn._protect}
            cells = [c.storage for c in fn.input_storage]
            n_const = sum(1 for k in range(non_sl.start, non_sl.stop) if id(cells[k]) in protected)
            plan = self._plan = LoopPlan(
                tuple(seq_feeds),
                tuple(rec_feeds),
                tuple(ring),
                tuple(starts),
                tuple(objects),
                tuple(writes),
                info.n_nit_sot,
                n_const,
                bool(fn._protect),
                info.as_while,
                # an output a node computes (not a constant, not an input passed through),
                # in a cell of its own (one Variable given as two outputs shares one)
                frozenset(
                    k
                    for k, v in enumerate(fn.maker.fgraph.outputs)
                    if v.owner is not None and sum(c is fn.output_storage[k] for c in fn.output_storage) == 1
                ),
            )
        return plan

    def scalar_loop(self) -> Any:
        """The loop on NumPy scalars (:mod:`arignote.scan.scalar_loop`) when every value of
        the step is 0-d and the inner function runs on tier 1 unprofiled (a forced tier or
        the reference VM runs every step as asked), else None."""
        loop = self._scalar
        if loop is None:
            fn = self.fn
            linker = fn.maker.mode.linker
            loop = False
            if (
                not self.profile
                and isinstance(linker, PyGenLinker)
                and getattr(linker, "jit", "never") != "sync"
                and getattr(fn, "profile", None) is None
            ):
                _, _, non_sl = self.info.inner_slices()
                loop = scalar_loop_for(fn.maker.fgraph, self.loop_plan(), range(non_sl.start, non_sl.stop))
                loop = loop or False
            self._scalar = loop
        return loop or None

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        info = self.info
        fn = self.fn
        plan = self.loop_plan()
        n_steps, seqs, inits, non_seqs = self.split_outer(inputs)
        n = self.n_effective(n_steps, seqs)
        whole = getattr(fn.vm, "whole", None)
        if whole is not None and not whole.state.startswith("tier 1"):
            # a whole-graph Numba step takes writeable C-contiguous arrays and copies any other
            # one at every step (after a refused call): a read-only value or a strided
            # sequence is made one such array here, once per call
            seqs = [_c_writeable(v) for v in seqs]
            non_seqs = [_c_writeable(v) for v in non_seqs]
        cells = [c.storage for c in fn.input_storage]
        _, rec_sl, non_sl = info.inner_slices()
        protected = {id(c) for c in fn._protect}
        consts = []  # non-sequences an inner node overwrites: written again every step
        for k, value in zip(range(non_sl.start, non_sl.stop), non_seqs):
            cells[k][0] = value
            if id(cells[k]) in protected:
                consts.append((cells[k], value))

        bufs: list[Any] = []
        rows: list[int] = []
        shapes: list[Any] = []
        for j, (sl, init) in enumerate(zip(rec_sl, inits)):
            t = self.inner_inputs[sl.start].type
            if not _is_tensor(t):
                cells[sl.start][0] = init
                bufs.append(None)
                rows.append(0)
                shapes.append(None)
                continue
            L = info.rec_len(j)
            if init.shape[0] != L:
                raise ValueError(
                    f"{self}: the initial value of recurrent output {j} must have {L} rows (one per step "
                    f"back its taps {list(info.rec_taps[j])} reach), got shape {init.shape}"
                )
            keep = info.keep[j]
            r = max(keep, L) if keep else L + n
            buf = np.empty((r, *init.shape[1:]), dtype=t.dtype)
            buf[:L] = init
            bufs.append(buf)
            rows.append(r if keep else 0)
            shapes.append(init.shape[1:])
        for m in range(info.n_nit_sot):
            keep = info.keep[info.n_rec + m]
            bufs.append(None)  # allocated once the first step gives its shape
            rows.append(min(keep, n) if keep else 0)
            shapes.append(None)

        t0 = time.perf_counter()
        first = done = 0
        scalar = self.scalar_loop() if n else None
        if scalar is not None:
            for m in range(info.n_nit_sot):
                o = info.n_rec + m
                bufs[o] = np.empty(rows[o] or n, dtype=self.inner_outputs[o].type.dtype)
                shapes[o] = ()
            scalars = {k: np.asarray(v)[()] for k, v in zip(range(non_sl.start, non_sl.stop), non_seqs)}
            done, failed = scalar(n, 0, seqs, bufs, rows, scalars)
            # (a step that raised: the general loop runs it again, and the steps after it)
            first = done if failed is not None else n
        try:
            if first < n:
                done = loop_for(plan)(
                    fn.vm, n, cells, fn.output_storage, seqs, bufs, rows, shapes, consts, fn._protect, first
                )
        except StepError as err:
            err.err.add_note(f"(raised at step {err.step} of {self})")
            raise err.err from err.__cause__
        stats = self.loop_stats
        stats["calls"] += 1
        stats["steps"] += done
        stats["seconds"] += time.perf_counter() - t0

        for j, sl in enumerate(rec_sl):
            if bufs[j] is None:  # not a tensor: its final value
                output_storage[j][0] = cells[sl.start][0]
                continue
            output_storage[j][0] = _ordered(bufs[j], rows[j], info.rec_len(j) + done, info.keep[j])
        rows_of_none = None
        for m in range(info.n_nit_sot):
            o = info.n_rec + m
            buf = bufs[o]
            if buf is None:  # no step ran: an empty output, its rows shaped as a step's would be
                t = node.outputs[o].type
                if rows_of_none is None:
                    rows_of_none = self.row_shapes(seqs, inits, non_seqs)
                row = rows_of_none[m] or tuple(d or 0 for d in t.shape[1:])
                output_storage[o][0] = np.empty((0, *row), dtype=t.dtype)
                continue
            output_storage[o][0] = _ordered(buf, rows[o], done, info.keep[o])

    def row_shapes(self, seqs: Sequence[Any], inits: Sequence[Any], non_seqs: Sequence[Any]) -> list:
        """The shape of a step's stacked outputs, for a loop that ran no step: inferred from
        the inner graph (its shape inference, compiled once), fed the sequences' row
        shapes, the initial values' and the non-sequences (rows of zeros stand for values no
        step read). None for an output whose shape inference needs its value computed, and
        for all of them where inference fails: unknown lengths are then 0."""
        info = self.info
        if self._row_shapes is None:
            self._row_shapes = _row_shape_function(self) or False
        if self._row_shapes is False:
            return [None] * info.n_nit_sot
        fn, known = self._row_shapes
        seq_sl, rec_sl, _ = info.inner_slices()
        values: list[Any] = []
        for i, sl in enumerate(seq_sl):
            row = np.zeros(np.shape(seqs[i])[1:], dtype=self.inner_inputs[sl.start].type.dtype)
            values += [row] * (sl.stop - sl.start)
        for j, sl in enumerate(rec_sl):
            t = self.inner_inputs[sl.start].type
            init = inits[j]
            value = np.zeros(np.shape(init)[1:], dtype=t.dtype) if _is_tensor(t) else init
            values += [value] * (sl.stop - sl.start)
        values += list(non_seqs)
        try:
            found = iter(fn(*values))
        except Exception:  # (a shape computed from values no step produced)
            return [None] * info.n_nit_sot
        return [tuple(int(d) for d in next(found)) if ok else None for ok in known]

    # -- shapes ---------------------------------------------------------------------------------

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[Any]) -> list:
        """Rows: ``n`` (steps run) plus the initial rows; the other lengths from the
        initial values, or from the inner outputs' static shapes. A while loop's number of
        steps is known only once it has run."""
        info = self.info
        n_steps = node.inputs[0]
        _, seq_shapes, init_shapes, _ = self.split_outer(shapes)
        n = None
        if not info.as_while:
            n = n_steps
            for i, s in enumerate(seq_shapes):
                _, span = info.seq_span(i)
                n = minimum(n, as_tensor_variable(s[0]) - span)
            n = maximum(n, 0)
        result = []
        for k, out in enumerate(node.outputs):
            if not _is_tensor(out.type):
                result.append(None)
                continue
            dims: list[Any] = [d if d is not None else Shape_i(i)(out) for i, d in enumerate(out.type.shape)]
            keep = info.keep[k]
            if k < info.n_rec:
                dims[1:] = list(init_shapes[k][1:])
                if n is not None and not keep:
                    dims[0] = n + info.rec_len(k)
            elif n is not None and not keep:
                dims[0] = n
            result.append(tuple(dims))
        return result

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """``n_steps`` decides only how many rows there are, and a state that is not a
        tensor (a random generator) carries no gradient; every other input may reach
        every output."""
        n_out = len(node.outputs)
        return [[False] * n_out] + [[_is_tensor(v.type)] * n_out for v in node.inputs[1:]]

    # -- differentiation (rules in arignote.scan.grad) ----------------------------------------

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        from arignote.scan.grad import scan_pullback  # grad.py builds new Scans: it imports this module

        return scan_pullback(self, list(inputs), list(outputs), list(output_grads))

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Variable]) -> list:
        from arignote.scan.grad import scan_pushforward  # as for L_op

        return scan_pushforward(self, list(inputs), list(eval_points))

    # -- profiling ------------------------------------------------------------------------------

    def loop_summary(self) -> str:
        """Calls, steps and time per step of this loop so far (with ``profile=True`` the
        inner function's own per-node profile is in ``self.fn.profile``)."""
        s = self.loop_stats
        per = s["seconds"] / s["steps"] * 1e6 if s["steps"] else 0.0
        return (
            f"{self}: {s['calls']} call(s), {s['steps']} step(s), {s['seconds']:.6f} s in the loop, "
            f"{per:.2f} us per step"
        )


def _row_shape_function(op: Scan) -> tuple[Any, list[bool]] | None:
    """A compiled function of the inner inputs returning the shape of each per-step output
    (those of the stacked outputs, ``nit_sot``) whose inferred shape does not need the output
    computed, and which of them it returns; None where none does or compiling fails."""
    fg = FunctionGraph(op.inner_inputs, op.inner_outputs, clone=True)
    feature = shape_feature(fg)
    info = op.info
    shapes, known = [], []
    for out in fg.outputs[info.n_rec : info.n_rec + info.n_nit_sot]:
        dims = feature.shape_of(fg, out) if _is_tensor(out.type) else ()
        symbolic = [d for d in dims if isinstance(d, Variable)]
        # (an inner input passed through has the shape of the value fed; a computed output's
        # inferred shape must not read the output itself)
        ok = bool(dims) and (out.owner is None or not any(v is out for v in ancestors(symbolic)))
        known.append(ok)
        if ok:
            shapes.append(stack([as_tensor_variable(d, dtype="int64") for d in dims]))
    if not shapes:
        return None
    try:
        fn = function(list(fg.inputs), shapes, mode=get_mode("FAST_COMPILE"), on_unused_input="ignore")
    except Exception:
        return None
    return fn, known


def _c_writeable(value: Any) -> Any:
    """``value``, or a writeable C-contiguous copy of an array that is not one."""
    if isinstance(value, np.ndarray) and not (value.flags.c_contiguous and value.flags.writeable):
        return np.require(value, requirements=("C", "W"))
    return value


def _ordered(buf: np.ndarray, rows: int, total: int, keep: int) -> np.ndarray:
    """The rows an output returns: all ``total`` positions, or the last ``keep`` of them
    (from a ring of ``rows`` rows), oldest first."""
    if not rows:
        return buf[:total] if buf.shape[0] != total else buf
    if not keep:
        return buf
    k = min(keep, total)
    idx = [(p % rows) for p in range(total - k, total)]
    return buf[idx]


@register_node_annotator
def _loop_cost_note(node: Apply, context: Any) -> str | None:
    """On a Scan's line in ``dprint`` of a profiled function (or of a scan built with
    ``profile=True``): the steps it ran and its time per step."""
    op = node.op
    if not isinstance(op, Scan) or context is None:
        return None
    if not op.profile and getattr(context, "profile", None) is None:
        return None
    s = op.loop_stats
    if not s["steps"]:
        return None
    return f"[{s['steps']} steps, {s['seconds'] / s['steps'] * 1e6:.2f} us/step]"


def _checked_len(items: Sequence[Any], expected: int, what: str) -> Sequence[Any]:
    """``items``, when it has the ``expected`` length of a Scan's ``what``; else a ValueError."""
    if len(items) != expected:
        raise ValueError(f"Expected the {expected} {what} of this Scan, got {len(items)}")
    return items
