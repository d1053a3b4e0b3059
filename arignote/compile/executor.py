"""Function: the callable ``function()`` returns."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from arignote.compile.sharedvalue import SharedVariable
from arignote.link.basic import Container

__all__ = ["Function"]

_MISSING = object()


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an ndarray of dtype {value.dtype} and shape {value.shape}"
    if isinstance(value, np.generic):
        return f"a NumPy {value.dtype} scalar"
    return f"{type(value).__name__} {value!r}"[:200]


class Function:
    """A compiled function: call it with values for its inputs (by position or name).

    Inputs are checked against their Types (``Type.filter``; ``strict``/``allow_downcast``
    per input), outputs are fresh arrays (never aliased to inputs or to each other unless
    ``Out(borrow=True)``), and updates of shared variables are applied after all outputs
    are computed. Calls from several threads are serialised, so each gets correct results.
    """

    def __init__(self, maker: Any, input_storage: list[Container], vm: Any, output_storage: list[list]):
        self.maker = maker
        self.input_storage = input_storage
        self.vm = vm
        self.output_storage = output_storage
        self.name = maker.name
        self.trust_input = False
        self.profile = maker.profile
        self._lock = threading.Lock()
        self._n_explicit = len(maker.inputs)
        self._names = {spec.name: k for k, spec in enumerate(maker.inputs) if spec.name is not None}
        self._defaults = [
            spec.value if getattr(spec, "has_value", False) else _MISSING for spec in maker.inputs
        ]
        n_out = maker.n_outputs
        self._borrow = [o.borrow for o in maker.outputs]
        self._updates = [
            (input_storage[dst].storage, out_idx)
            for out_idx, dst in sorted(maker.fgraph.update_mapping.items())
            if out_idx >= n_out
        ]

    # -- calling --------------------------------------------------------------------------

    def __call__(self, *args: Any, output_subset: list[int] | None = None, **kwargs: Any) -> Any:
        with self._lock:
            t0 = time.perf_counter()
            self._set_inputs(args, kwargs)
            self.vm()
            results = self._collect_outputs()
            for cell, out_idx in self._updates:
                cell[0] = self.output_storage[out_idx][0]
            if self.profile is not None:
                self.profile.record_call(time.perf_counter() - t0)
            return self._package(results, output_subset)

    def _input_label(self, k: int) -> str:
        spec = self.maker.inputs[k]
        return f"input {k}" + (f" ({spec.name!r})" if spec.name else f" ({spec.variable})")

    def _set_inputs(self, args: tuple, kwargs: dict) -> None:
        n = self._n_explicit
        if len(args) > n:
            raise TypeError(f"{self._label()} takes {n} input(s), got {len(args)} positional argument(s)")
        given: list = list(args) + [_MISSING] * (n - len(args))
        for name, value in kwargs.items():
            k = self._names.get(name)
            if k is None:
                raise TypeError(f"{self._label()} has no input named {name!r}; inputs: {sorted(self._names)}")
            if given[k] is not _MISSING:
                raise TypeError(f"{self._label()} got {self._input_label(k)} both by position and by name")
            given[k] = value
        trust = self.trust_input
        for k, value in enumerate(given):
            container = self.input_storage[k]
            if value is _MISSING:
                if self._defaults[k] is _MISSING:
                    raise TypeError(f"{self._label()}: missing {self._input_label(k)}")
                if self.maker.inputs[k].update is None or container.storage[0] is None:
                    container.value = self._defaults[k]  # else: the state its update left
                continue
            if trust:
                container.storage[0] = value
                continue
            try:
                container.storage[0] = container.type.filter(
                    value, strict=container.strict, allow_downcast=container.allow_downcast
                )
            except (TypeError, ValueError) as err:
                raise type(err)(
                    f"Bad {self._input_label(k)} of {self._label()}: expected Type {container.type}, "
                    f"got {_describe(value)}. {err}"
                ) from None

    def _collect_outputs(self) -> list[Any]:
        n_out = self.maker.n_outputs
        cells = self.output_storage
        results = []
        guards = [c.storage[0] for c in self.input_storage] + [cells[k][0] for k in range(n_out, len(cells))]
        for k in range(n_out):
            value = cells[k][0]
            if (
                not self._borrow[k]
                and isinstance(value, np.ndarray)
                and (any(_overlaps(value, g) for g in guards) or any(_overlaps(value, r) for r in results))
            ):
                value = value.copy()
            results.append(value)
        return results

    def _package(self, results: list[Any], output_subset: list[int] | None) -> Any:
        kind, keys = self.maker.output_kind
        if output_subset is not None:
            return [results[k] for k in output_subset]
        if kind == "single":
            return results[0]
        if kind == "dict":
            return dict(zip(keys, results))
        return results

    def _label(self) -> str:
        return f"function {self.name!r}" if self.name else "the function"

    # -- management -----------------------------------------------------------------------

    @property
    def fn(self) -> Any:
        return self.vm

    def free(self) -> None:
        """Drop the intermediate and output values held between calls."""
        keep = {id(c.storage) for c in self.input_storage}
        for var, cell in self.vm.storage_map.items():
            if id(cell) not in keep and var.owner is not None:
                cell[0] = None

    def get_shared(self) -> list[SharedVariable]:
        """The shared variables this function reads (and maybe updates)."""
        return list(self.maker.shared_inputs)

    def copy(
        self,
        share_memory: bool = False,
        swap: dict | None = None,
        delete_updates: bool = False,
        name: str | None = None,
        profile: Any = None,
    ) -> Function:
        """Another function computing the same thing.

        ``swap`` ``{old shared: new shared}`` makes the copy use other shared variables
        (same Types); ``delete_updates`` drops the updates; ``share_memory`` makes the copy
        use this function's input containers (so defaults and shared values are common).
        """
        import copy as _copy

        maker = _copy.copy(self.maker)
        maker.name = name or self.name
        maker.profile = profile if profile is not None else None
        containers = list(self.input_storage) if share_memory else None
        if containers is None:
            containers = maker.input_containers()
            for k, c in enumerate(self.input_storage[: self._n_explicit]):
                containers[k].storage[0] = c.storage[0]
        if swap:
            for old, new in swap.items():
                if not isinstance(old, SharedVariable) or not isinstance(new, SharedVariable):
                    raise TypeError("swap maps shared variables to shared variables")
                if old not in maker.shared_inputs:
                    raise ValueError(f"swap: {old} is not a shared variable of this function")
                if old.type != new.type:
                    raise TypeError(f"swap: {new} has Type {new.type}, {old} has {old.type}")
                idx = self._n_explicit + maker.shared_inputs.index(old)
                containers[idx] = new.container
            maker.shared_inputs = [swap.get(v, v) for v in maker.shared_inputs]
        if delete_updates:
            fgraph = maker.fgraph.clone()
            for idx in sorted(fgraph.update_mapping or {}, reverse=True):
                if idx >= maker.n_outputs:
                    fgraph.remove_output(idx)
            fgraph.update_mapping = {}
            maker.fgraph = fgraph
            maker.shared_updates = []
            maker.input_updates = []
        fn = maker.create(containers)
        fn.trust_input = self.trust_input
        return fn

    def dprint(self, **kwargs: Any) -> Any:
        """``arignote.printing.debugprint`` of the compiled graph."""
        from arignote.printing import debugprint

        return debugprint(self, **kwargs)

    # -- pickling -------------------------------------------------------------------------

    def __getstate__(self) -> dict:
        return {
            "maker": self.maker,
            "values": [c.storage[0] for c in self.input_storage[: self._n_explicit]],
            "trust_input": self.trust_input,
        }

    def __setstate__(self, state: dict) -> None:
        maker = state["maker"]
        containers = maker.input_containers()  # relinks the rewritten graph: nothing to redo
        for c, v in zip(containers, state["values"]):
            c.storage[0] = v
        vm, out_cells = maker.link(containers)
        self.__init__(maker, containers, vm, out_cells)  # type: ignore[misc]
        self.trust_input = state["trust_input"]

    def __str__(self) -> str:
        return f"Function({self.name or ', '.join(str(o) for o in self.maker.fgraph.outputs)})"

    __repr__ = __str__


def _overlaps(a: np.ndarray, b: Any) -> bool:
    return isinstance(b, np.ndarray) and (a is b or np.may_share_memory(a, b))
