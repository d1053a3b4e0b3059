"""DebugMode: a compilation mode that checks every node against the Op contract.

A function compiled with ``mode="DebugMode"`` (or ``mode=DebugMode()``) computes the
same values as under ``FAST_RUN``, but after each node runs it checks that

* every output is a valid value of its Type (``Type.filter(value, strict=True)``), and
  finite unless ``check_isfinite=False`` (:class:`InvalidValueError`);
* no input changed that the Op does not declare in ``destroy_map``: inputs are compared
  with copies taken before the node ran (:class:`BadDestroyMap`);
* no output shares memory with an input (or another output) unless ``view_map`` /
  ``destroy_map`` says so (``Type.may_share_memory``; :class:`BadViewMap`);
* ``perform`` (or ``debug_perform`` when the Op defines one), re-run twice on copies of
  the inputs, gives what the function's own thunk gave, both times
  (``Type.values_eq_approx``; :class:`BadThunkOutput`), also with output cells
  preallocated in the ways ``check_preallocated_output`` lists;

and after each call that the rewritten graph computed what the graph as written computes
(run through ``perform`` on copies of the inputs): every variable that a rewrite put in
place of another must take that variable's value (even when a later rewrite replaced it
in turn: it is then recomputed from its inputs), and every output must match
(:class:`BadOptimization`; the most upstream mismatch is reported, with the chain of
rewrites that led to it). A rewrite that knowingly changes values, as a stabilisation
turning an overflow into a finite number does, says how to compare on its result:
``new_var.tag.values_eq_approx = fn`` (e.g. ``TensorType.values_eq_approx`` with
``allow_remove_inf=True``). At compile time the rewrites are also re-run
``stability_patience`` times on fresh copies of the graph, which must give the same graph
each time (:class:`StochasticOrder`).

Every error names the node (``str(node)``), the input or output concerned, the expected
and the actual value (shape, dtype, range, largest difference) and where the user created
the node.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> f = arignote.function([x], pt.exp(x) * 2, mode="DebugMode")
>>> f(np.zeros(2))
array([2., 2.])
>>> type(DebugMode().excluding("fusion")).__name__
'DebugMode'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from arignote.compile.debug.checks import _Checks, _DebugThunk
from arignote.compile.debug.errors import (
    BadDestroyMap,
    BadOptimization,
    BadThunkOutput,
    BadViewMap,
    DebugModeError,
    InvalidValueError,
    StochasticOrder,
)
from arignote.compile.debug.rewrites import DebugRewriteQuery, _DebugVM, _records
from arignote.compile.debug.values import _normalize_preallocated
from arignote.compile.mode import Mode
from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.link.vm import VMLinker

__all__ = [
    "BadDestroyMap",
    "BadOptimization",
    "BadThunkOutput",
    "BadViewMap",
    "DebugLinker",
    "DebugMode",
    "DebugModeError",
    "DebugRewriteQuery",
    "InvalidValueError",
    "StochasticOrder",
]


# ---------------------------------------------------------------------------------------
# linking: the VM with checking thunks (the comparison with the graph as written: rewrites.py)
# ---------------------------------------------------------------------------------------


class _Deferred:
    """A thunk slot filled once the VM's storage map exists (``VMLinker`` gives a
    ``thunk_maker`` only the node)."""

    def __init__(self, node: Apply):
        self.node = node
        self.thunk: Any = None

    @property
    def lazy(self) -> bool:
        return bool(getattr(self.thunk, "lazy", False))

    def __call__(self) -> Any:
        return self.thunk()


def make_checked_vm(
    linker: VMLinker,
    fgraph: FunctionGraph,
    input_storage: Sequence[list],
    no_recycling: Sequence[Variable],
    profile: Any,
    wrap: Callable[[Apply, dict, dict], Callable],
) -> tuple[Any, list[list]]:
    """``VMLinker.make_vm`` whose thunks are ``wrap(node, storage_map, compute_map)``.

    Works whether the VMLinker passes its ``thunk_maker`` just the node (then each thunk is
    filled in once the VM's storage map exists) or also the storage and compute maps.
    """
    pending: list[_Deferred] = []

    def maker(node: Apply, *maps: Any) -> Callable:
        if len(maps) >= 2:
            return wrap(node, maps[0], maps[1])
        slot = _Deferred(node)
        pending.append(slot)
        return slot

    vm, out_cells = VMLinker.make_vm(
        linker, fgraph, input_storage, no_recycling, profile=profile, thunk_maker=maker
    )
    if pending:
        for slot in pending:
            slot.thunk = wrap(slot.node, vm.storage_map, vm.compute_map)
        vm.thunks = [t.thunk if isinstance(t, _Deferred) else t for t in vm.thunks]
        vm.lazy = any(getattr(t, "lazy", False) for t in vm.thunks)
    return vm, out_cells


class DebugLinker(VMLinker):
    """The linker of :class:`DebugMode`: the reference VM with each node's thunk wrapped
    in the DebugMode checks (see the module docstring)."""

    __props__ = (
        "allow_gc",
        "check_py_code",
        "check_isfinite",
        "check_preallocated_output",
        "require_matching_strides",
        "check_rewrites",
    )

    def __init__(
        self,
        check_py_code: bool = True,
        check_isfinite: bool = True,
        check_preallocated_output: Any = (),
        require_matching_strides: int = 0,
        check_rewrites: bool = True,
        allow_gc: bool = True,
    ):
        super().__init__(allow_gc=allow_gc)
        self.check_py_code = bool(check_py_code)
        self.check_isfinite = bool(check_isfinite)
        self.check_preallocated_output = _normalize_preallocated(check_preallocated_output)
        self.require_matching_strides = int(require_matching_strides or 0)
        self.check_rewrites = bool(check_rewrites)

    def __repr__(self) -> str:
        return (
            f"DebugLinker(check_py_code={self.check_py_code}, check_isfinite={self.check_isfinite}, "
            f"check_preallocated_output={self.check_preallocated_output}, "
            f"require_matching_strides={self.require_matching_strides})"
        )

    def make_vm(
        self,
        fgraph: FunctionGraph,
        input_storage: Sequence[list],
        no_recycling: Sequence[Variable],
        profile: Any = None,
        thunk_maker: Callable | None = None,
    ) -> tuple[Any, list[list]]:
        checks = _Checks(self)

        def wrap(node: Apply, storage_map: dict, compute_map: dict) -> Callable:
            return _DebugThunk(node, storage_map, compute_map, checks)

        vm, out_cells = make_checked_vm(self, fgraph, input_storage, no_recycling, profile, wrap)
        record = _records.get(fgraph) if self.check_rewrites else None
        return _DebugVM(vm, fgraph, input_storage, checks, record), out_cells


# ---------------------------------------------------------------------------------------
# the mode
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class DebugMode(Mode):
    """A Mode that checks every node and every rewrite while the function runs.

    Parameters (as PyTensor's ``DebugMode``; ``None`` means the default):

    optimizer
        Which rewrites run (``"fast_run"`` by default), as for :class:`Mode`.
    stability_patience
        How many more times the rewrites are run on fresh copies of the graph, each of
        which must give the same graph (default 10; 0 skips the check).
    check_c_code
        Accepted for compatibility; arignote has no C code.
    check_py_code
        Re-run ``perform``/``debug_perform`` on copies of each node's inputs and compare
        (default True).
    check_isfinite
        Raise :class:`InvalidValueError` for NaN/inf in float outputs (default True).
    check_preallocated_output
        Also run ``perform`` with output cells already holding arrays: any of
        ``"previous"``, ``"c_contiguous"``, ``"f_contiguous"``, ``"strided"``,
        ``"wrong_size"`` or ``"ALL"`` (a list, or a ``:``-separated string; default none).
    require_matching_strides
        0: ignore, 1: warn, 2: raise when the runs' outputs have different strides.
    linker
        Only ``None`` or a :class:`DebugLinker`: DebugMode always runs its own checks.
    db
        Accepted for compatibility (the rewrite registry is global).
    check_rewrites
        Compare the rewritten graph with the graph as written after every call (default True).
    """

    stability_patience: int = 10
    check_c_code: Any = None
    check_py_code: bool = True
    check_isfinite: bool = True
    check_preallocated_output: tuple = ()
    require_matching_strides: int = 0
    check_rewrites: bool = True

    def __init__(
        self,
        optimizer: Any = "fast_run",
        stability_patience: int | None = None,
        check_c_code: Any = None,
        check_py_code: bool | None = None,
        check_isfinite: bool | None = None,
        check_preallocated_output: Any = None,
        require_matching_strides: int | None = None,
        linker: Any = None,
        db: Any = None,
        name: str = "DebugMode",
        check_rewrites: bool = True,
    ):
        settings = {
            "optimizer": optimizer,
            "stability_patience": 10 if stability_patience is None else int(stability_patience),
            "check_c_code": check_c_code,
            "check_py_code": True if check_py_code is None else bool(check_py_code),
            "check_isfinite": True if check_isfinite is None else bool(check_isfinite),
            "check_preallocated_output": _normalize_preallocated(check_preallocated_output),
            "require_matching_strides": int(require_matching_strides or 0),
            "check_rewrites": bool(check_rewrites),
            "linker": linker,
            "name": name,
        }
        if settings["stability_patience"] < 0:
            raise ValueError(f"stability_patience must be >= 0, got {stability_patience}")
        if settings["require_matching_strides"] not in (0, 1, 2):
            raise ValueError(f"require_matching_strides must be 0, 1 or 2, got {require_matching_strides}")
        for key, value in settings.items():
            object.__setattr__(self, key, value)
        self.__post_init__()

    def __post_init__(self) -> None:
        linker = self.linker
        if linker is not None and not isinstance(linker, DebugLinker):
            raise ValueError(
                f"DebugMode runs its own linker (it wraps every node in its checks); got linker={linker!r}. "
                "Leave linker=None, and use the check_* arguments to choose the checks."
            )
        allow_gc = linker.allow_gc if isinstance(linker, DebugLinker) else True
        object.__setattr__(
            self,
            "linker",
            DebugLinker(
                check_py_code=self.check_py_code,
                check_isfinite=self.check_isfinite,
                check_preallocated_output=self.check_preallocated_output,
                require_matching_strides=self.require_matching_strides,
                check_rewrites=self.check_rewrites,
                allow_gc=allow_gc,
            ),
        )
        super().__post_init__()  # optimizer name -> RewriteQuery
        object.__setattr__(self, "optimizer", DebugRewriteQuery.wrap(self.optimizer, self.stability_patience))

    def __str__(self) -> str:
        return (
            f"{self.name}(optimizer={self.query}, stability_patience={self.stability_patience}, "
            f"check_py_code={self.check_py_code}, check_isfinite={self.check_isfinite}, "
            f"check_preallocated_output={self.check_preallocated_output})"
        )
