"""What DebugMode checks after each node runs, and the thunk that runs those checks."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from arignote.compile.debug.describe import _site, _var_label
from arignote.compile.debug.errors import BadDestroyMap, BadThunkOutput, BadViewMap, InvalidValueError
from arignote.compile.debug.values import _MISSING, _copy, _is_immutable, _may_share, _preallocate, _values_eq
from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.link.python import OWN_THUNK, PYTHON, impl_name, python_thunk

if TYPE_CHECKING:
    from arignote.compile.debug.debugmode import DebugLinker


class _Checks:
    """The checks run after each node, with the settings of one DebugLinker."""

    def __init__(self, linker: DebugLinker):
        self.check_py_code = linker.check_py_code
        self.check_isfinite = linker.check_isfinite
        self.preallocated = linker.check_preallocated_output
        self.require_matching_strides = linker.require_matching_strides
        #: values recorded during a call, for the rewrite checks: {Variable: copy}
        self.values: dict[Variable, Any] = {}
        self.watch: set[Variable] = set()

    # -- single checks ----------------------------------------------------------------------

    def valid(self, node: Apply, outputs: Sequence[Any], label: str, finite: bool) -> None:
        for var, value in zip(node.outputs, outputs):
            try:
                var.type.filter(value, strict=True)
            except (TypeError, ValueError) as err:
                raise InvalidValueError(
                    var,
                    value,
                    node,
                    hint=f"{label} returned a value that Type.filter(value, strict=True) rejects",
                    specific_hint=f"Type.filter says: {err}",
                ) from None
            if finite and isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fc":
                with np.errstate(all="ignore"):
                    ok = bool(np.isfinite(value).all())
                if not ok:
                    raise InvalidValueError(
                        var,
                        value,
                        node,
                        hint=f"{label} returned non-finite values (NaN or inf)",
                        specific_hint="DebugMode(check_isfinite=False) accepts them; NanGuardMode "
                        "locates where they first appear",
                    )

    def destroyed(self, node: Apply) -> set[int]:
        dmap = getattr(node.op, "destroy_map", None) or {}
        return {i for ins in dmap.values() for i in ins}

    def unchanged(
        self, node: Apply, before: Sequence[Any], after: Sequence[Any], label: str, destroyed: set[int]
    ) -> None:
        destroyed_vars = {node.inputs[i] for i in destroyed}
        destroyed_vals = [after[i] for i in destroyed]
        for i, (var, old, new) in enumerate(zip(node.inputs, before, after)):
            if i in destroyed or var in destroyed_vars:
                continue
            if any(_may_share(var, new, d) for d in destroyed_vals):
                continue  # a view of a destroyed input changes with it
            if _values_eq(var, old, new, approx=False) is False:
                raise BadDestroyMap(node, i, old, new, label)

    def views(self, node: Apply, inputs: Sequence[Any], outputs: Sequence[Any], label: str) -> None:
        op = node.op
        vmap = getattr(op, "view_map", None) or {}
        dmap = getattr(op, "destroy_map", None) or {}
        declared = set(vmap) | set(dmap)
        for k, (out, value) in enumerate(zip(node.outputs, outputs)):
            if _is_immutable(value):
                continue
            allowed = set(vmap.get(k, ())) | set(dmap.get(k, ()))
            allowed_vals = [inputs[i] for i in allowed if i < len(inputs)]
            bad = []
            for i, inp in enumerate(inputs):
                if i in allowed or not _may_share(out, value, inp):
                    continue
                if node.inputs[i] in {node.inputs[j] for j in allowed}:
                    continue  # the same variable passed twice, once as the declared input
                if any(_may_share(out, inp, a) for a in allowed_vals):
                    continue  # this input itself overlaps the declared one
                bad.append(i)
            if bad:
                raise BadViewMap(node, k, value, in_alias_idx=bad, perform=label)
            if k in declared:
                continue
            others = [
                j
                for j, other in enumerate(outputs)
                if j != k and not _is_immutable(other) and _may_share(out, value, other)
            ]
            if others:
                raise BadViewMap(node, k, value, out_alias_idx=others, perform=label)

    def same(
        self,
        node: Apply,
        k: int,
        label1: str,
        val1: Any,
        label2: str,
        val2: Any,
        inputs: Sequence[Any],
    ) -> None:
        var = node.outputs[k]
        if _values_eq(var, val1, val2, approx=True) is False:
            raise BadThunkOutput(var, label1, val1, label2, val2, inputs)
        if (
            self.require_matching_strides
            and isinstance(val1, np.ndarray)
            and isinstance(val2, np.ndarray)
            and val1.strides != val2.strides
        ):
            msg = (
                f"{_var_label(var)}: {label1} gave strides {val1.strides}, {label2} gave {val2.strides} "
                f"(node created at: {_site(node)})"
            )
            if self.require_matching_strides > 1:
                raise BadThunkOutput(var, label1, val1, label2 + f" (strides {val2.strides})", val2, inputs)
            warnings.warn(msg, stacklevel=2)

    # -- the whole set for one node ---------------------------------------------------------

    def after_node(self, thunk: _DebugThunk, before: list[Any], outputs: list[Any]) -> None:
        node = thunk.node
        inputs_now = [c[0] for c in thunk.in_cells]
        destroyed = self.destroyed(node)
        label = thunk.label
        self.unchanged(node, before, inputs_now, label, destroyed)
        self.views(node, inputs_now, outputs, label)
        self.valid(node, outputs, label, self.check_isfinite)
        if self.check_py_code and thunk.impl is not None:
            ref = self._run_impl(thunk, before, None, "run 1", destroyed)
            for k in range(len(outputs)):
                self.same(node, k, label, outputs[k], ref[1], ref[0][k], before)
            second = self._run_impl(thunk, before, None, "run 2", destroyed)
            for k in range(len(outputs)):
                self.same(node, k, ref[1], ref[0][k], second[1], second[0][k], before)
            for kind in self.preallocated:
                cells = []
                for k, value in enumerate(ref[0]):
                    pre = _preallocate(kind, value, thunk.previous[k] if thunk.previous else None)
                    cells.append(None if pre is _MISSING else pre)
                if all(c is None for c in cells):
                    continue
                got = self._run_impl(thunk, before, cells, f"preallocated '{kind}' output cells", destroyed)
                for k in range(len(outputs)):
                    self.same(node, k, ref[1], ref[0][k], got[1], got[0][k], before)
        if self.preallocated:
            thunk.previous = [_copy(v) for v in outputs]
        watch = self.watch
        if watch:
            for var, value in zip(node.outputs, outputs):
                if var in watch:
                    self.values[var] = _copy(value)

    def _run_impl(
        self, thunk: _DebugThunk, before: list[Any], prealloc: list | None, what: str, destroyed: set[int]
    ) -> tuple[list[Any], str]:
        node = thunk.node
        label = f"{thunk.impl_name} ({what} on copies of the inputs)"
        ins = [_copy(v) for v in before]
        cells = [[v] for v in prealloc] if prealloc is not None else [[None] for _ in node.outputs]
        try:
            thunk.run_impl(ins, cells)
        except Exception as err:
            err.add_note(f"DebugMode: raised by {label} of node {node} (node created at: {_site(node)})")
            raise
        outs = [c[0] for c in cells]
        for k, value in enumerate(outs):
            if value is None:
                raise InvalidValueError(
                    node.outputs[k],
                    None,
                    node,
                    hint=f"{label} did not set output {k} (output_storage[{k}][0] is still None)",
                )
        self.unchanged(node, before, ins, label, destroyed)
        self.views(node, ins, outs, label)
        self.valid(node, outs, label, False)
        return outs, label


class _DebugThunk:
    """The thunk DebugMode runs for one node: the thunk the function runs (the Python
    backend's, :func:`~arignote.link.python.python_thunk`), then the checks, which compare
    it with ``perform``."""

    def __init__(self, node: Apply, storage_map: dict, compute_map: dict, checks: _Checks):
        self.node = node
        op = node.op
        self.real = python_thunk(op, node, storage_map, compute_map, [], None)
        self.in_cells = [storage_map[v] for v in node.inputs]
        self.out_cells = [storage_map[v] for v in node.outputs]
        self.inputs = self.in_cells
        self.outputs = self.out_cells
        self.lazy = bool(getattr(self.real, "lazy", False))
        self.checks = checks
        self.previous: list | None = None
        debug_perform = getattr(op, "debug_perform", None)
        if debug_perform is not None:
            self.impl: Callable | None = debug_perform
            self.impl_name = "debug_perform"
        elif type(op).perform is not Op.perform:
            self.impl = op.perform
            self.impl_name = "perform"
        else:
            self.impl = None
            self.impl_name = ""
        self.has_params = hasattr(op, "get_params")
        self.params = node.run_params() if self.has_params else None
        impl = impl_name(op)
        if impl == PYTHON:
            self.label = f"the Python backend's {type(op).__name__} thunk (the function's thunk)"
        elif impl == OWN_THUNK:
            self.label = f"{type(op).__name__}.make_thunk (the function's thunk)"
        else:
            self.label = "perform (the function's thunk, on the graph's values)"
        self.perform = getattr(self.real, "perform", None)

    def run_impl(self, inputs: list[Any], cells: list[list]) -> None:
        if self.has_params:
            self.impl(self.node, inputs, cells, self.params)  # type: ignore[misc]
        else:
            self.impl(self.node, inputs, cells)  # type: ignore[misc]

    def __call__(self) -> Any:
        if self.lazy:
            return self._call_lazy()
        before = [_copy(c[0]) for c in self.in_cells]
        self.real()
        outputs = [c[0] for c in self.out_cells]
        if any(v is None for v in outputs):
            return None  # the VM reports the unset output
        self.checks.after_node(self, before, outputs)
        return None

    def _call_lazy(self) -> Any:
        needed = self.real()
        if needed:
            return needed
        node, checks = self.node, self.checks
        outputs = [c[0] for c in self.out_cells]
        if any(v is None for v in outputs):
            return needed
        inputs = [c[0] for c in self.in_cells]
        checks.views(node, inputs, outputs, self.label)
        checks.valid(node, outputs, self.label, checks.check_isfinite)
        if checks.watch:
            for var, value in zip(node.outputs, outputs):
                if var in checks.watch:
                    checks.values[var] = _copy(value)
        return needed
