"""Function: the callable ``function()`` returns."""

from __future__ import annotations

import copy
import os
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from arignote.compile.debug.profiling import ProfileStats
from arignote.compile.io import SymbolicOutput
from arignote.compile.plain_call import make_plain_call
from arignote.graph.container import (
    Container,
    device_types,
    held_in_locked_blocks,
    held_providers,
    host_values_in,
    wait_for,
)
from arignote.graph.destroyhandler import view_root
from arignote.graph.shared import SharedVariable
from arignote.graph.utils import gc_paused
from arignote.link.python.codegen import REFUSED
from arignote.printing import debugprint
from arignote.tensor.type import TensorType

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
    per input), outputs are fresh arrays (an output may alias an input only when both are
    borrowed: ``In(borrow=True)`` and ``Out(borrow=True)``; two outputs only when both are
    borrowed), and updates of shared variables are applied after all outputs are
    computed, all at once (``{a: b, b: a}`` swaps). A call that raises changes no state:
    shared variables (random generators included) keep the values they had before it.

    Threads: a call holds the function's lock and the locks of the shared variables it
    reads or updates (taken in one global order, so functions never deadlock each other),
    so calls from several threads are serialised per function, and a call's reads and
    updates of shared variables are one atomic step with respect to other calls and to
    ``get_value``/``set_value`` of those variables (``arignote.graph.shared.locked``
    holds several of them at once). Calling a function again from inside its own call
    (from an Op's ``perform`` or a callback) raises a RuntimeError; calls nested in
    opposite orders on two threads (A's call calls B while B's calls A), which would wait
    for each other forever, raise ``arignote.graph.container.DeadlockError`` in one
    thread (that call changes nothing) and the other goes on. In a child process made by
    ``os.fork()``, locks held by the parent's other threads are released. (A plain call
    of a function that is one compiled program reading no state, ``mode="JAX"``'s, needs
    no lock and takes none: ``arignote.compile.plain_call``.)
    """

    def __init__(self, maker: Any, input_storage: list[Container], vm: Any, output_storage: list[list]):
        self.maker = maker
        self.input_storage = input_storage
        self.vm = vm
        self.output_storage = output_storage
        self.name = maker.name
        self.trust_input = maker.trust_input
        self.profile = maker.profile
        self._lock = threading.Lock()  # this function's storage: one call at a time
        n_in = self._n_explicit = len(maker.inputs)
        # the locks of the shared variables' containers, in the global order: held for a
        # whole call (a function with no shared variable takes no lock but its own)
        shared = {id(c): c for c in input_storage[n_in:]}
        ordered = sorted(shared.values(), key=lambda c: c.order)
        self._held = tuple(c.lock for c in ordered)
        self._held_labels = tuple(c.lock_label() for c in ordered)
        self._names = {spec.name: k for k, spec in enumerate(maker.inputs) if spec.name is not None}
        self._defaults = [
            spec.value if getattr(spec, "has_value", False) else _MISSING for spec in maker.inputs
        ]
        n_out = maker.n_outputs
        self._borrow = [o.borrow for o in maker.outputs]
        self._kind, self._keys = maker.output_kind
        # what a call reads and writes, resolved once
        self._input_cells = [c.storage for c in input_storage[:n_in]]
        # per input: (cell, dtype, ndim, filter, strict, allow_downcast). A TensorType with
        # no static length: an ndarray of exactly its dtype and rank is what its filter
        # would return unchanged, so the call takes it as it is (dtype None: always filter)
        # A runner that takes device values (JAX's) takes a device array of the input's
        # dtype, rank and static lengths as it is: no copy to the host and back per call
        takes_device = getattr(vm, "takes_device_values", False)
        self._filters = [
            (
                c.storage,
                *_as_is(c.type),
                _device_filter(c.type) if takes_device and isinstance(c.type, TensorType) else c.type.filter,
                c.strict,
                c.allow_downcast,
            )
            for c in input_storage[:n_in]
        ]
        self._out_cells = output_storage[:n_out]
        pairs = sorted((o, d) for o, d in maker.fgraph.update_mapping.items() if o >= n_out)
        self._update_src = [output_storage[o] for o, _ in pairs]
        self._update_dst = [input_storage[d].storage for _, d in pairs]
        # An output must not alias the value of an input (unless both are borrowed) or of
        # an update. A shared variable that is updated is not a guard: its old value is
        # replaced after the call, so the output is the only one left holding it.
        updated_shared = {d for _, d in pairs if d >= n_in}
        spec_borrow = [bool(getattr(spec, "borrow", False)) for spec in maker.inputs]
        self._guards = [
            c.storage for k, c in enumerate(input_storage) if k not in updated_shared
        ] + self._update_src
        self._borrow_guards = [c.storage for k, c in enumerate(input_storage[:n_in]) if not spec_borrow[k]]
        # an update value must not alias another input's or shared variable's value
        self._all_cells = [c.storage for c in input_storage]
        # explicit inputs an in-place node of the graph overwrites, and which are not
        # ``mutable``: the value passed in is copied first, so the caller's array survives
        destroyed = _destroyed_inputs(maker.fgraph)
        self._protect = [
            self._input_cells[k]
            for k, var in enumerate(maker.fgraph.inputs[:n_in])
            if var in destroyed and not maker.inputs[k].mutable
        ]
        # The common case, one output (not borrowed) and no updates, is returned without
        # the general bookkeeping: _single_out is its output cell, else None. An output
        # whose node's thunk always makes a fresh array (``thunk.fresh_outputs``: a NumPy
        # ufunc's result) cannot alias anything, so it needs no aliasing check.
        # A runner whose every output is a fresh array (``vm.fresh_outputs``: the JAX
        # backend's, whose compiled function never returns its inputs' memory) needs none
        self._all_fresh = bool(getattr(vm, "fresh_outputs", False)) and not any(self._borrow)
        # A runner whose outputs are fresh for some calls only (a whole-graph Numba function
        # that computes a call or leaves it to per-node code) says so after each call in
        # ``vm.fresh_outputs_now[0]``
        fresh_now = getattr(vm, "fresh_outputs_now", None)
        self._fresh_now = fresh_now if isinstance(fresh_now, list) and not any(self._borrow) else [False]
        self._fresh_updates = bool(getattr(vm, "fresh_outputs", False))
        fresh = n_out == 1 and (self._all_fresh or _fresh_output(vm, maker.fgraph.outputs[0]))
        self._single_guards = [] if fresh else self._guards
        self._single_out = (
            self._out_cells[0]
            if self._kind == "single"
            and n_out == 1
            and not self._borrow[0]
            and not pairs
            and len(self._single_guards) <= _FEW_PAIRS
            else None
        )
        # shared values that a node overwrites in place (a random generator drawn from in
        # place, an array updated in place): saved before a call, put back if it fails.
        # Explicit inputs with an update (``In(x, update=...)``) are state too:
        # their values are put back the same way, and so is the value a failed call stored
        self._rollback, self._state = _rollback_plan(vm, maker.fgraph, input_storage, maker.inputs)
        # shared values another backend left on its device (JAX's, between its calls) are
        # brought back to the host before a runner that does not take them reads them
        self._host_cells = (
            [] if getattr(vm, "takes_device_values", False) else [c.storage for c in input_storage[n_in:]]
        )
        self._guarded = bool(self._rollback or self._state)
        # a runner that returns a call's outputs itself (``call_direct``: the JAX backend's)
        # serves a plain call whose outputs need nothing more (fresh, no update to apply, no
        # input to protect): no round trip through the output cells
        direct = getattr(vm, "call_direct", None)
        # (``vm.direct_fresh``: the outputs call_direct returns alias nothing; it returns
        # REFUSED for a call it leaves to the runner, whose outputs are checked as usual)
        fresh = self._all_fresh or (bool(getattr(vm, "direct_fresh", False)) and not any(self._borrow))
        eligible = fresh and not pairs and not self._protect and self._kind in ("list", "single")
        self._direct = direct if eligible and not self._host_cells else None
        # such a call, once the runner offers ``vm.direct_program``, as one generated
        # function (arignote.compile.plain_call) when nothing else is in the way
        self._plain_ok = self._direct is not None and not self._held and not self._guarded
        self._plain: Any = None
        _live_functions.add(self)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "_lock" and not hasattr(value, "acquire"):
            value = _ContextLock(value)  # a context manager in place of the lock
        if name in _PLAIN_READS:  # the generated plain call read it: made again on the next call
            self._drop_plain()
        object.__setattr__(self, name, value)

    def _install_plain(self, call: Callable) -> None:
        """Make ``call`` (:func:`~arignote.compile.plain_call.make_plain_call`'s) this
        function's ``__call__``: its class becomes a subclass of its own adding only that
        (CPython looks a call's ``__call__`` up on the class; a class of its own per function
        spares a plain call every step before the generated code)."""
        base = type(self)
        own = type(base.__name__, (base,), {"__call__": call, "__slots__": (), "__module__": base.__module__})
        own.__qualname__ = base.__qualname__
        object.__setattr__(self, "_plain", call)
        object.__setattr__(self, "__class__", own)

    def _drop_plain(self) -> None:
        """Back to the general path for every call (the class this function was made with)."""
        if self.__dict__.get("_plain") is not None:
            object.__setattr__(self, "_plain", None)
            object.__setattr__(self, "__class__", type(self).__mro__[1])

    # -- calling --------------------------------------------------------------------------

    def __call__(self, *args: Any, output_subset: list[int] | None = None, **kwargs: Any) -> Any:
        lock = self._lock
        if not lock.acquire(False):
            self._wait_for(lock)  # busy: another thread's call, or a call of ours (re-entry)
        held = self._held
        for h in held:
            if not h.acquire(False):
                self._wait_for_shared(h)  # busy: wait, unless that would never end
        try:
            if (
                kwargs
                or output_subset is not None
                or self.profile is not None
                or self._guarded
                or len(args) != self._n_explicit
            ):
                return self._call(args, kwargs, output_subset)
            if self.trust_input:
                for cell, value in zip(self._input_cells, args):
                    cell[0] = value
            else:  # _filter_args, inlined
                filters = self._filters
                for k, value in enumerate(args):
                    cell, dtype, ndim, filter_, strict, allow_downcast = filters[k]
                    if type(value) is _ndarray and value.dtype is dtype and value.ndim == ndim:
                        cell[0] = value
                        continue
                    try:
                        cell[0] = filter_(value, strict, allow_downcast)
                    except (TypeError, ValueError) as err:
                        raise self._bad_input(k, value, err) from None
            if self._direct is not None:
                results = self._direct()
                if results is not REFUSED:  # (else: the runner computes it below)
                    if (
                        self._plain is None  # (a call through the general path keeps the class it has)
                        and self._plain_ok
                        and self.profile is None
                        and getattr(self.vm, "direct_program", None)
                    ):
                        self._install_plain(make_plain_call(self, *self.vm.direct_program, Function.__call__))
                    return results[0] if self._kind == "single" else results
            for cell in self._protect:
                cell[0] = _copy_value(cell[0])
            if device_types and self._host_cells:
                host_values_in(self._host_cells)
            self.vm()
            out = self._single_out
            if out is None:
                results = self._collect_outputs()
                if self._update_dst:
                    self._apply_updates()
                kind = self._kind
                if kind == "single":
                    return results[0]
                if kind == "dict":
                    return dict(zip(self._keys, results))
                if kind == "none":
                    return None
                return results
            # _collect_outputs for one output: a copy if it may alias an input's value
            value = out[0]
            guards = self._single_guards
            if guards and isinstance(value, _ndarray) and not self._fresh_now[0]:
                view = value.base is not None
                for g in guards:
                    b = g[0]
                    if b is value or (
                        isinstance(b, _ndarray) and (view or b.base is not None) and _may_share(value, b)
                    ):
                        return value.copy()
            return value
        finally:
            for h in held:
                h.release()
            lock.release()

    def _wait_for(self, lock: Any) -> None:
        """Take ``lock``, held by another call: wait for another thread's, but refuse a
        call from inside a call of this function (or of a copy sharing its storage) on
        this thread, which would wait for itself forever, and a wait that would close a
        cycle of threads waiting for each other (``DeadlockError``, see
        :func:`arignote.graph.container.wait_for`)."""
        outer = _calls_on_this_thread(sys._getframe(1).f_back)  # (not the waiting call)
        for other in outer:
            if other._lock is lock:
                what = "itself" if other is self else f"{other._label()}, which shares its storage"
                raise RuntimeError(
                    f"{self._label()} was called again from inside a call of {what} (from an "
                    "Op's perform, a callback or a hook running during the call). A function "
                    "cannot run inside its own call: compile a second function (or use "
                    "f.copy()) for the inner call."
                )
        held = {**held_in_locked_blocks(), **_locks_of(outer)}
        if not held:
            lock.acquire()  # holding nothing, this thread closes no cycle
            return
        wait_for(lock, f"the lock of {self._label()}", held, self._doing(outer))

    def _wait_for_shared(self, lock: Any) -> None:
        """Take the shared variable's ``lock`` (one of :attr:`_held`), found taken, during
        the acquisition at the start of a call. Raising (a wait that would never end),
        release what this call took first."""
        outer = _calls_on_this_thread(sys._getframe(1).f_back)  # (not this call)
        k = self._held.index(lock)
        held = {**held_in_locked_blocks(), **_locks_of(outer), self._lock: f"the lock of {self._label()}"}
        held.update(zip(self._held[:k], self._held_labels[:k]))
        try:
            wait_for(lock, self._held_labels[k], held, self._doing(outer))
        except BaseException:
            for h in reversed(self._held[:k]):
                h.release()
            self._lock.release()
            raise

    def _doing(self, outer: list[Function]) -> str:
        """What a call waiting for a lock is doing, for messages."""
        if outer:
            return f"calling {self._label()} inside a call of {outer[0]._label()}"
        return f"calling {self._label()}"

    def _filter_args(self, args: tuple) -> None:
        """Store positional ``args`` (one per explicit input) in the input cells, each
        through its Type's filter (an ndarray that the filter would return unchanged is
        taken as it is)."""
        filters = self._filters
        for k, value in enumerate(args):
            cell, dtype, ndim, filter_, strict, allow_downcast = filters[k]
            if type(value) is _ndarray and value.dtype is dtype and value.ndim == ndim:
                cell[0] = value
                continue
            try:
                cell[0] = filter_(value, strict, allow_downcast)
            except (TypeError, ValueError) as err:
                raise self._bad_input(k, value, err) from None

    def _call(self, args: tuple, kwargs: dict, output_subset: list[int] | None) -> Any:
        """A call with names, an output subset, profiling, a wrong number of arguments or
        state to put back if it fails (the locks held)."""
        profile = self.profile
        t0 = time.perf_counter() if profile is not None else 0.0
        state = self._state
        # the values of explicit inputs with an update, before this call stores anything
        before = [entry[0][0] for entry in state] if state else None
        saved = saved_state = None
        try:
            if kwargs or len(args) != self._n_explicit:
                self._set_inputs(args, kwargs)
            elif self.trust_input:
                for cell, value in zip(self._input_cells, args):
                    cell[0] = value
            else:
                self._filter_args(args)
            for cell in self._protect:
                cell[0] = _copy_value(cell[0])
            if self._rollback:
                saved = _save(self._rollback)
            if before is not None:
                saved_state = _save_state(state, before)
            if device_types and self._host_cells:
                host_values_in(self._host_cells)
            self.vm()
            results = self._collect_outputs()
            if self._update_dst:
                self._apply_updates()
        except BaseException:
            if saved is not None:
                _restore(saved)
            if before is not None:
                for entry, value in zip(state, before):
                    entry[0][0] = value
                if saved_state:
                    _restore(saved_state)
            raise
        if profile is not None:
            dt = time.perf_counter() - t0
            profile.record_call(dt)
            self.maker.mode._add_call_time(dt)
        if output_subset is not None:
            return [results[k] for k in output_subset]
        kind = self._kind
        if kind == "single":
            return results[0]
        if kind == "dict":
            return dict(zip(self._keys, results))
        if kind == "none":
            return None
        return results

    def _input_label(self, k: int) -> str:
        spec = self.maker.inputs[k]
        return f"input {k}" + (f" ({spec.name!r})" if spec.name else f" ({spec.variable})")

    def _bad_input(self, k: int, value: Any, err: Exception) -> Exception:
        container = self.input_storage[k]
        msg = (
            f"Bad {self._input_label(k)} of {self._label()}: expected Type {container.type}, "
            f"got {_describe(value)}. {err}"
        )
        try:
            return type(err)(msg)
        except Exception:  # an exception class that needs other arguments
            err.add_note(msg)
            return err

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
                container.storage[0] = self._filters[k][3](value, container.strict, container.allow_downcast)
            except (TypeError, ValueError) as err:
                raise self._bad_input(k, value, err) from None

    def _collect_outputs(self) -> list[Any]:
        if self._all_fresh or self._fresh_now[0]:
            return [cell[0] for cell in self._out_cells]
        results: list[Any] = []
        borrow = self._borrow
        guards = self._guards
        if len(guards) * len(self._out_cells) > _FEW_PAIRS:
            return self._collect_outputs_many()
        for k, cell in enumerate(self._out_cells):
            value = cell[0]
            if isinstance(value, _ndarray):
                if borrow[k]:
                    value = self._unaliased_borrowed(value, results)
                else:
                    # _overlaps inlined, in loops (not any(...)): this runs on every call
                    view = value.base is not None
                    for g in guards:
                        b = g[0]
                        if b is value or (
                            isinstance(b, _ndarray) and (view or b.base is not None) and _may_share(value, b)
                        ):
                            value = value.copy()
                            break
                    else:
                        for b in results:
                            if b is value or (
                                isinstance(b, _ndarray)
                                and (view or b.base is not None)
                                and _may_share(value, b)
                            ):
                                value = value.copy()
                                break
            results.append(value)
        return results

    def _collect_outputs_many(self) -> list[Any]:
        """:meth:`_collect_outputs` for many inputs: one pass over the inputs' values
        collects the objects owning their memory; an output aliases one of them only if
        it has the same owner (arrays whose memory is not NumPy's get the pairwise check)."""
        results: list[Any] = []
        borrow = self._borrow
        owners: set[int] = set()
        foreign = False
        for g in self._guards:
            value = g[0]
            if isinstance(value, np.ndarray):
                owner, numpy_owned = _owner(value)
                owners.add(owner)
                foreign = foreign or not numpy_owned
        for k, cell in enumerate(self._out_cells):
            value = cell[0]
            if isinstance(value, np.ndarray):
                if borrow[k]:
                    value = self._unaliased_borrowed(value, results)
                else:
                    owner, numpy_owned = _owner(value)
                    if owner in owners or (
                        (foreign or not numpy_owned)
                        and any(_overlaps(value, other) for other in [g[0] for g in self._guards] + results)
                    ):
                        value = value.copy()
                        owner = id(value)
                owners.add(owner)
            results.append(value)
        return results

    def _unaliased_borrowed(self, value: np.ndarray, results: list[Any]) -> np.ndarray:
        """A borrowed output may alias borrowed inputs and outputs, and nothing else."""
        borrow = self._borrow
        others = [g[0] for g in self._borrow_guards] + [r for j, r in enumerate(results) if not borrow[j]]
        if any(_overlaps(value, other) for other in others):
            return value.copy()
        return value

    def _apply_updates(self) -> None:
        """Store the new values of updated inputs, read all before any is stored (so that
        updates may exchange values). A value that may alias another input's value (the
        caller's array, another shared variable's) or another update's is copied."""
        values = [cell[0] for cell in self._update_src]
        dsts = self._update_dst
        if self._fresh_updates:  # new buffers of the runner (JAX's): they alias nothing
            for cell, value in zip(dsts, values):
                cell[0] = value
            return
        if len(values) * len(self._all_cells) > _FEW_PAIRS:
            self._unalias_updates_many(values)
        else:
            for i, value in enumerate(values):
                if isinstance(value, np.ndarray):
                    dst = dsts[i]
                    for cell in self._all_cells:
                        if cell is not dst and _overlaps(value, cell[0]):
                            values[i] = value.copy()
                            break
                    else:
                        for other in values[:i]:
                            if _overlaps(value, other):
                                values[i] = value.copy()
                                break
        for cell, value in zip(dsts, values):
            cell[0] = value

    def _unalias_updates_many(self, values: list[Any]) -> None:
        """:meth:`_apply_updates`' aliasing check in one pass over the inputs' values (see
        :meth:`_collect_outputs_many`)."""
        holders: dict[int, Any] = {}  # owner of the memory -> the one cell holding it, or _MANY
        foreign = False
        for cell in self._all_cells:
            value = cell[0]
            if isinstance(value, np.ndarray):
                owner, numpy_owned = _owner(value)
                holders[owner] = _MANY if owner in holders else cell
                foreign = foreign or not numpy_owned
        for i, value in enumerate(values):
            if not isinstance(value, np.ndarray):
                continue
            dst = self._update_dst[i]
            owner, numpy_owned = _owner(value)
            holder = holders.get(owner)
            if (holder is not None and holder is not dst) or (
                (foreign or not numpy_owned)
                and (
                    any(c is not dst and _overlaps(value, c[0]) for c in self._all_cells)
                    or any(_overlaps(value, other) for other in values[:i])
                )
            ):
                value = values[i] = value.copy()
                owner = id(value)
            holders[owner] = _MANY  # later updates must not share it

    def _label(self) -> str:
        return f"function {self.name!r}" if self.name else "the function"

    # -- management -----------------------------------------------------------------------

    #: what pickling does when the values it saves share memory (the copies unpickled will
    #: not): ``"warn"``, ``"raise"`` (a ValueError) or ``"ignore"``
    pickle_aliased_memory_strategy = "warn"

    @property
    def outputs(self) -> list[SymbolicOutput]:
        """The outputs, as :class:`~arignote.compile.io.Out` (their variables are the graph
        the function was compiled from, before rewriting)."""
        return self.maker.outputs

    @property
    def unpack_single(self) -> bool:
        """Whether a call returns the one output alone (``function(inputs, y)``), not a list."""
        return self._kind == "single"

    @property
    def return_none(self) -> bool:
        """Whether a call returns None (a FunctionMaker given ``outputs=None``; ``function()``
        returns ``[]`` for no outputs, as PyTensor's does)."""
        return self._kind == "none"

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
        ``profile`` is as in ``function`` (the copy is not profiled unless asked).
        """
        maker = copy.copy(self.maker)
        maker.name = name or self.name
        maker.profile = _make_profile(profile, maker.name)
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
        if share_memory:
            fn._lock = self._lock  # the same input cells: one call at a time between them
        return fn

    def dprint(self, **kwargs: Any) -> Any:
        """``arignote.printing.debugprint`` of the compiled graph."""
        return debugprint(self, **kwargs)

    # -- pickling -------------------------------------------------------------------------

    def __reduce__(self) -> tuple:
        # (a class of its own, see _install_plain, is rebuilt as the class it was made with)
        return (
            _new_function,
            (type(self).__mro__[1] if self._plain is not None else type(self),),
            self.__getstate__(),
        )

    def __getstate__(self) -> dict:
        self._check_aliased_for_pickle()
        return {
            "maker": self.maker,
            "values": [c.storage[0] for c in self.input_storage[: self._n_explicit]],
            "trust_input": self.trust_input,
        }

    def _check_aliased_for_pickle(self) -> None:
        """Apply :attr:`pickle_aliased_memory_strategy` to the arrays pickling saves (input
        and shared values): two that share memory are unpickled as separate copies."""
        strategy = self.pickle_aliased_memory_strategy
        if strategy not in ("warn", "raise", "ignore"):
            raise ValueError(
                f"pickle_aliased_memory_strategy must be 'warn', 'raise' or 'ignore', got {strategy!r}"
            )
        if strategy == "ignore":
            return
        labelled = [
            (f"the value of {getattr(c, 'name', None) or f'input {k}'}", c.storage[0])
            for k, c in enumerate(self.input_storage)
            if isinstance(c.storage[0], np.ndarray)
        ]
        for i, (name_i, a) in enumerate(labelled):
            for name_j, b in labelled[i + 1 :]:
                # (one array saved twice is unpickled once: only distinct views lose their link)
                if a is not b and np.may_share_memory(a, b):
                    msg = (
                        f"Pickling {self._label()}: {name_i} and {name_j} share memory, which the "
                        "unpickled function's copies will not"
                    )
                    if strategy == "raise":
                        raise ValueError(msg)
                    warnings.warn(msg, stacklevel=3)

    def __setstate__(self, state: dict) -> None:
        maker = state["maker"]
        # relinks the rewritten graph (nothing to redo): a cell, a thunk and closures per
        # node, none freed, which would make the cyclic collector sweep the growing heap
        # again and again. The reference VM and pickle.loads already pause it; this holds
        # for every linker and for a relink outside a load.
        with gc_paused():
            containers = maker.input_containers()
            for c, v in zip(containers, state["values"]):
                c.storage[0] = v
            vm, out_cells = maker.link(containers)
            self.__init__(maker, containers, vm, out_cells)  # type: ignore[misc]
        self.trust_input = state["trust_input"]

    def __str__(self) -> str:
        return f"Function({self.name or ', '.join(str(o) for o in self.maker.fgraph.outputs)})"

    __repr__ = __str__


def _new_function(cls: type) -> Function:
    """An empty Function of class ``cls`` for unpickling (``__setstate__`` links it)."""
    return cls.__new__(cls)


class _ContextLock:
    """A context manager (``contextlib.nullcontext()``, say) used as a function's lock."""

    __slots__ = ("cm",)

    def __init__(self, cm: Any):
        self.cm = cm

    def acquire(self, blocking: bool = True) -> bool:
        self.cm.__enter__()
        return True

    def release(self) -> None:
        self.cm.__exit__(None, None, None)

    def _at_fork_reinit(self) -> None:
        pass


#: the attributes a generated plain call depends on (see Function.__setattr__)
_PLAIN_READS = frozenset({"trust_input", "profile"})

#: every live Function, so a forked child can free the locks other threads held
_live_functions: weakref.WeakSet = weakref.WeakSet()
_CALL_CODE = Function.__call__.__code__


def _calls_on_this_thread(frame: Any) -> list[Function]:
    """The Functions whose call is running on this thread, from ``frame`` outwards."""
    calls = []
    while frame is not None:
        if frame.f_code is _CALL_CODE:
            fn = frame.f_locals.get("self")
            if isinstance(fn, Function):
                calls.append(fn)
        frame = frame.f_back
    return calls


def _locks_of(calls: list[Function]) -> dict:
    """``{lock: label}`` of the locks that ``calls`` (running) hold."""
    held: dict = {}
    for fn in calls:
        lock = fn.__dict__.get("_lock")
        if lock is not None:
            held[lock] = f"the lock of {fn._label()}"
        held.update(zip(fn._held, fn._held_labels))
    return held


def _locks_of_calls_on_this_thread() -> dict:
    """The locks of the compiled calls running on this thread (for
    :func:`arignote.graph.container.held_by_this_thread`: ``get_value``, ``set_value``
    and ``locked`` waiting for a lock inside a call)."""
    return _locks_of(_calls_on_this_thread(sys._getframe(1)))


held_providers.append(_locks_of_calls_on_this_thread)


def _after_fork_in_child() -> None:
    """Only the forking thread lives on in a forked child: a function another thread was
    calling would stay locked forever. Free every function lock but those of calls
    running on this thread (they release their locks as they return)."""
    ours = {id(fn._lock) for fn in _calls_on_this_thread(sys._getframe())}
    for fn in list(_live_functions):
        lock = fn.__dict__.get("_lock")
        if lock is not None and id(lock) not in ours and hasattr(lock, "_at_fork_reinit"):
            lock._at_fork_reinit()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _rollback_plan(
    vm: Any, fgraph: Any, input_storage: list[Container], specs: list[Any]
) -> tuple[list[tuple], list[tuple]]:
    """What a failed call must put back: ``(shared, state)``.

    ``shared``: ``(cell, copy_arrays)`` for each shared value that a node of the graph
    overwrites in place. A random generator is saved by its state (a few numbers); an
    array is copied only if some node runs after the first node that overwrites it (a
    failure there would leave it changed): an array updated in place by the last node of
    the call costs nothing.

    ``state``: ``(cell, overwritten, copy_arrays)`` for each explicit input with an
    update (``In(x, update=...)``), whose stored value is state like a shared
    variable's: a failed call puts back the value it held (a value passed to the call
    replaces it before the graph runs), and, when a node overwrites it in place, its
    contents as for a shared value."""
    n_in = len(specs)
    nodes = getattr(vm, "nodes", None)
    ordered = isinstance(nodes, list) and not getattr(vm, "lazy", False)
    if not ordered:
        nodes = fgraph.toposort()
    first: dict = {}  # destroyed root -> position of its first destroyer
    for k, node in enumerate(nodes):
        for ins in (getattr(node.op, "destroy_map", None) or {}).values():
            for i in ins:
                first.setdefault(view_root(node.inputs[i]), k)
    last = len(nodes) - 1
    plan = []
    for var, container in zip(fgraph.inputs[n_in:], input_storage[n_in:]):
        if var in first:
            plan.append((container.storage, not ordered or first[var] < last))
    state = []
    for spec, var, container in zip(specs, fgraph.inputs[:n_in], input_storage[:n_in]):
        if getattr(spec, "update", None) is not None:
            overwritten = var in first
            state.append((container.storage, overwritten, overwritten and (not ordered or first[var] < last)))
    return plan, state


def _save(plan: list[tuple]) -> list[tuple]:
    """What :func:`_restore` needs to put the values of ``plan`` back."""
    saved = []
    for cell, copy_arrays in plan:
        value = cell[0]
        if isinstance(value, np.random.Generator):
            saved.append((cell, value, value.bit_generator.state))
        elif copy_arrays:
            saved.append((cell, None, _copy_value(value)))
    return saved


def _save_state(state: list[tuple], before: list[Any]) -> list[tuple]:
    """:func:`_save` for the explicit inputs with an update, whose values were ``before``
    the call stored its arguments: contents are saved only when a node overwrites the
    value in place and the cell still holds it (or a view of it); a value passed to the
    call replaced it, so the old one is not touched, and putting its reference back is
    enough."""
    saved = []
    for (cell, overwritten, copy_arrays), old in zip(state, before):
        if not overwritten or old is None:
            continue
        value = cell[0]
        if isinstance(old, np.random.Generator):
            if value is old:
                saved.append((cell, old, old.bit_generator.state))
        elif copy_arrays and (value is old or (isinstance(old, np.ndarray) and _overlaps(old, value))):
            saved.append((cell, None, _copy_value(old)))
    return saved


def _restore(saved: list[tuple]) -> None:
    for cell, generator, state in saved:
        if generator is not None:
            generator.bit_generator.state = state
            cell[0] = generator
        else:
            cell[0] = state


def _destroyed_inputs(fgraph: Any) -> set:
    """The inputs of ``fgraph`` that a node overwrites (``destroy_map``), directly or
    through views of them (``view_map``)."""
    destroyed = set()
    for node in fgraph.apply_nodes:
        for ins in (getattr(node.op, "destroy_map", None) or {}).values():
            for i in ins:
                destroyed.add(view_root(node.inputs[i]))  # a view of a view of ... an input
    return destroyed


_ndarray = np.ndarray
_may_share = np.may_share_memory


def _as_is(type_: Any) -> tuple[np.dtype | None, int]:
    """``(dtype, ndim)`` such that an ndarray of exactly that dtype and rank passes
    ``type_.filter`` unchanged (a TensorType whose filter is TensorType's, with no static
    length); ``(None, -1)`` when every value goes through the filter."""
    if (
        isinstance(type_, TensorType)
        and type(type_).filter is TensorType.filter
        and all(s is None for s in type_.shape)
    ):
        return type_.numpy_dtype, len(type_.shape)
    return None, -1


def _device_filter(type_: TensorType) -> Callable[[Any, bool, bool | None], Any]:
    """``type_.filter``, except that a device array (a type registered with
    :func:`~arignote.graph.container.register_device_type`) of exactly the Type's dtype, rank
    and static lengths passes as it is."""
    filter_, dtype, shape = type_.filter, type_.numpy_dtype, type_.shape

    def device_filter(value: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        if (
            type(value) in device_types
            and value.dtype == dtype
            and len(value.shape) == len(shape)
            and all(s is None or s == n for s, n in zip(shape, value.shape))
        ):
            return value
        return filter_(value, strict, allow_downcast)

    return device_filter


def _fresh_output(vm: Any, var: Any) -> bool:
    """Whether the thunk computing ``var`` in ``vm`` says it always returns a fresh array
    (``thunk.fresh_outputs``), which can alias no input or other value."""
    nodes, thunks = getattr(vm, "nodes", None), getattr(vm, "thunks", None)
    if var.owner is None or not isinstance(nodes, list) or not isinstance(thunks, list):
        return False
    try:
        k = nodes.index(var.owner)
    except ValueError:
        return False
    return k < len(thunks) and getattr(thunks[k], "fresh_outputs", False) is True


def _copy_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


#: Below this many (value, guard) pairs, aliasing is checked pair by pair; above it, in one
#: pass over the guards (see ``Function._collect_outputs_many``).
_FEW_PAIRS = 16
_MANY = object()


def _owner(a: np.ndarray) -> tuple[int, bool]:
    """``(id of the object owning a's memory, whether that object is an ndarray)``. Two
    arrays whose memory NumPy owns can share memory only if they have the same owner."""
    base = a.base
    while base is not None:
        if not isinstance(base, np.ndarray):
            return id(base), False
        a, base = base, base.base
    return id(a), True


def _overlaps(a: np.ndarray, b: Any) -> bool:
    """Whether ndarray ``a`` may share memory with ``b``. Two distinct arrays that both
    own their memory (``base is None``) cannot, which spares the costlier check."""
    return a is b or (
        isinstance(b, np.ndarray) and (a.base is not None or b.base is not None) and np.may_share_memory(a, b)
    )


def _make_profile(profile: Any, name: str | None) -> Any:
    """The ProfileStats a function records into: ``profile`` as given to ``function``
    (True, a message, or a ProfileStats), None for no profiling."""
    if not profile:
        return None
    if profile is True:
        return ProfileStats(message=name or "function")
    if isinstance(profile, str):
        return ProfileStats(message=profile)
    return profile
