"""NanGuardMode: stop at the first node that produces NaN, inf or a huge value.

A function compiled with ``mode="NanGuardMode"`` (or ``mode=NanGuardMode(...)``) runs
like ``FAST_RUN``, but checks the function's inputs before each call and every float
output of every node right after the node runs. The first NaN, infinity or value with
``|x| > 1e10`` raises :class:`NanGuardError` (an ``AssertionError``, as in PyTensor),
naming the node, which output, what was found (how many elements, where the first one
is), the node's input values and where the user created the node.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> f = arignote.function([x], pt.log(x), mode="NanGuardMode")
>>> f(np.ones(2))
array([0., 0.])
>>> with np.errstate(divide="ignore"):
...     try:
...         f(np.zeros(2))
...     except NanGuardError as err:
...         print(str(err).splitlines()[0])
NanGuardMode: output 0 (Log.0) of node Log(x) contains -inf (2 of 2 elements, first at index (0,))
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arignote.compile.debug.debugmode import make_checked_vm
from arignote.compile.debug.describe import _graph_text, _site, _summary
from arignote.compile.mode import Mode, predefined_linkers
from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.link.python import python_thunk
from arignote.link.vm import VM, VMLinker

__all__ = ["NanGuardError", "NanGuardLinker", "NanGuardMode", "contains_inf", "contains_nan"]

#: ``|x|`` above this is a "big value" (PyTensor's threshold)
BIG_THRESHOLD = 1e10


class NanGuardError(AssertionError):
    """NanGuardMode found NaN, inf or a big value.

    ``node``: the node whose output it is (``None`` for a function input);
    ``output_idx``: which output (or which input of the function); ``variable``: the
    Variable; ``value``: the value; ``problems``: what was found, one string each.
    """

    def __init__(
        self,
        message: str,
        node: Apply | None = None,
        output_idx: int | None = None,
        variable: Variable | None = None,
        value: Any = None,
        problems: Sequence[str] = (),
    ):
        super().__init__(message)
        self.node = node
        self.output_idx = output_idx
        self.variable = variable
        self.value = value
        self.problems = list(problems)

    def __reduce__(self) -> tuple:
        return (type(self), (str(self), self.node, self.output_idx, self.variable, self.value, self.problems))


def _float_array(value: Any) -> np.ndarray | None:
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, (np.generic, float, complex)):
        arr = np.asarray(value)
    else:
        return None
    if arr.dtype.kind not in "fc" or arr.size == 0:
        return None
    return arr


def contains_nan(arr: Any, node: Apply | None = None, var: Variable | None = None) -> bool:
    """Whether ``arr`` (a float array or scalar) holds a NaN."""
    a = _float_array(arr)
    return a is not None and bool(np.isnan(a).any())


def contains_inf(arr: Any, node: Apply | None = None, var: Variable | None = None) -> bool:
    """Whether ``arr`` (a float array or scalar) holds an infinity."""
    a = _float_array(arr)
    return a is not None and bool(np.isinf(a).any())


def _where(mask: np.ndarray) -> str:
    n = int(mask.sum())
    if mask.ndim == 0:
        return f"{n} of 1 element"
    first = tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), mask.shape))
    return f"{n} of {mask.size} element{'s' if mask.size != 1 else ''}, first at index {first}"


def find_problems(value: Any, nan: bool, inf: bool, big: bool, threshold: float = BIG_THRESHOLD) -> list[str]:
    """What is wrong with ``value``: ``"NaN (...)"``, ``"inf (...)"``, ``"-inf (...)"``,
    ``"big values ..."``; empty for a clean value or a non-float one."""
    arr = _float_array(value)
    if arr is None:
        return []
    with np.errstate(all="ignore"):
        finite = np.isfinite(arr)
        all_finite = bool(finite.all())
        problems = []
        if not all_finite:
            if nan:
                isnan = np.isnan(arr)
                if isnan.any():
                    problems.append(f"NaN ({_where(isnan)})")
            if inf:
                isinf = np.isinf(arr)
                if isinf.any():
                    if arr.dtype.kind == "c":
                        problems.append(f"inf ({_where(isinf)})")
                    else:
                        for sign, mask in (("inf", isinf & (arr > 0)), ("-inf", isinf & (arr < 0))):
                            if mask.any():
                                problems.append(f"{sign} ({_where(mask)})")
        if big:
            mag = np.abs(arr)
            if not all_finite:
                mag = np.where(finite, mag, 0)
            top = mag.max()
            if top > threshold:
                mask = mag > threshold
                problems.append(f"big values, |x| up to {float(top):.4g} > {threshold:g} ({_where(mask)})")
    return problems


def _checked(var: Variable) -> bool:
    tag = getattr(var, "_tag", None)
    return tag is None or getattr(tag, "nan_guard_mode_check", True)


class _Guard:
    """The checks of one NanGuardLinker, shared by the thunks of one function."""

    def __init__(self, linker: NanGuardLinker):
        self.nan = linker.nan_is_error
        self.inf = linker.inf_is_error
        self.big = linker.big_is_error
        self.threshold = linker.big_threshold
        self.action = linker.action

    def what(self) -> str:
        checked = [
            name
            for name, on in (("NaN", self.nan), ("inf", self.inf), (f"|x| > {self.threshold:g}", self.big))
            if on
        ]
        return ", ".join(checked)

    def report(self, message: str, **info: Any) -> None:
        if self.action == "warn":
            warnings.warn(message, RuntimeWarning, stacklevel=4)
            return
        raise NanGuardError(message, **info)

    def check_output(self, node: Apply, k: int, value: Any, input_values: Sequence[Any]) -> None:
        problems = find_problems(value, self.nan, self.inf, self.big, self.threshold)
        if not problems:
            return
        var = node.outputs[k]
        lines = [
            f"NanGuardMode: output {k} ({var}) of node {node} contains {'; '.join(problems)}",
            f"  output {k}: Type {var.type}, {_summary(value)}",
            "  inputs of the node:",
        ]
        for i, (inp, v) in enumerate(zip(node.inputs, input_values)):
            lines.append(f"    input {i} ({inp}): Type {inp.type}, {_summary(v)}")
        lines += [
            "  the node in the graph:",
            "\n".join("    " + line for line in _graph_text(var, depth=4).splitlines()),
            f"  node created at: {_site(node)}",
            f"  (NanGuardMode checks for {self.what()}; its nan_is_error, inf_is_error and "
            "big_is_error arguments turn checks off)",
        ]
        self.report("\n".join(lines), node=node, output_idx=k, variable=var, value=value, problems=problems)

    def check_input(self, k: int, var: Variable, value: Any) -> None:
        problems = find_problems(value, self.nan, self.inf, self.big, self.threshold)
        if not problems:
            return
        lines = [
            f"NanGuardMode: input {k} ({var}) of the function contains {'; '.join(problems)}",
            f"  value: Type {var.type}, {_summary(value)}",
            "  The value was given to the function (or held by a shared variable); no node computed it.",
            f"  (NanGuardMode checks for {self.what()})",
        ]
        self.report("\n".join(lines), node=None, output_idx=k, variable=var, value=value, problems=problems)


class _GuardThunk:
    """A node's thunk (the Python backend's), then the check of its float outputs."""

    def __init__(self, node: Apply, storage_map: dict, compute_map: dict, guard: _Guard):
        self.node = node
        self.real = python_thunk(node.op, node, storage_map, compute_map, [], None)
        self.lazy = bool(getattr(self.real, "lazy", False))
        self.in_cells = [storage_map[v] for v in node.inputs]
        self.out_cells = [storage_map[v] for v in node.outputs]
        self.inputs = self.in_cells
        self.outputs = self.out_cells
        self.perform = getattr(self.real, "perform", None)
        self.guard = guard
        self.checked = [
            k
            for k, var in enumerate(node.outputs)
            if _checked(var) and getattr(getattr(var.type, "numpy_dtype", None), "kind", "f") in "fc"
        ]

    def __call__(self) -> Any:
        needed = self.real()
        if needed and self.lazy:
            return needed
        guard, cells = self.guard, self.out_cells
        for k in self.checked:
            value = cells[k][0]
            if value is not None:
                guard.check_output(self.node, k, value, [c[0] for c in self.in_cells])
        return needed


class _GuardVM(VM):
    """Checks the function's inputs, then runs the guarded VM."""

    def __init__(self, vm: Any, fgraph: FunctionGraph, input_storage: Sequence[list], guard: _Guard):
        self.vm = vm
        self.guard = guard
        self.inputs = [
            (k, var, cell)
            for k, (var, cell) in enumerate(zip(fgraph.inputs, input_storage))
            if _checked(var) and getattr(getattr(var.type, "numpy_dtype", None), "kind", "f") in "fc"
        ]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.vm, name)

    def __call__(self) -> None:
        guard = self.guard
        for k, var, cell in self.inputs:
            if cell[0] is not None:
                guard.check_input(k, var, cell[0])
        self.vm()


class NanGuardLinker(VMLinker):
    """The reference VM with each node's float outputs checked after it runs."""

    __props__ = (
        "allow_gc",
        "nan_is_error",
        "inf_is_error",
        "big_is_error",
        "action",
        "big_threshold",
        "check_inputs",
    )

    def __init__(
        self,
        nan_is_error: bool = True,
        inf_is_error: bool = True,
        big_is_error: bool = True,
        action: str = "raise",
        big_threshold: float = BIG_THRESHOLD,
        check_inputs: bool = True,
        allow_gc: bool = True,
    ):
        super().__init__(allow_gc=allow_gc)
        if action not in ("raise", "warn"):
            raise ValueError(f"NanGuardMode action must be 'raise' or 'warn', got {action!r}")
        self.nan_is_error = bool(nan_is_error)
        self.inf_is_error = bool(inf_is_error)
        self.big_is_error = bool(big_is_error)
        self.action = action
        self.big_threshold = float(big_threshold)
        self.check_inputs = bool(check_inputs)

    def __repr__(self) -> str:
        return (
            f"NanGuardLinker(nan_is_error={self.nan_is_error}, inf_is_error={self.inf_is_error}, "
            f"big_is_error={self.big_is_error}, action={self.action!r})"
        )

    def make_vm(
        self,
        fgraph: FunctionGraph,
        input_storage: Sequence[list],
        no_recycling: Sequence[Variable],
        profile: Any = None,
        thunk_maker: Callable | None = None,
    ) -> tuple[Any, list[list]]:
        guard = _Guard(self)

        def wrap(node: Apply, storage_map: dict, compute_map: dict) -> Callable:
            return _GuardThunk(node, storage_map, compute_map, guard)

        vm, out_cells = make_checked_vm(self, fgraph, input_storage, no_recycling, profile, wrap)
        if self.check_inputs:
            vm = _GuardVM(vm, fgraph, input_storage, guard)
        return vm, out_cells


@dataclass(frozen=True, init=False)
class NanGuardMode(Mode):
    """A Mode whose functions raise :class:`NanGuardError` at the first node that outputs
    NaN (``nan_is_error``), an infinity (``inf_is_error``) or a float with ``|x| > 1e10``
    (``big_is_error``); function inputs are checked too (``check_inputs``).

    ``optimizer``: as for :class:`Mode` (``"default"``: ``"fast_run"``). ``linker``:
    ``None`` or a VM linker (only its ``allow_gc`` is kept). ``action``: ``"raise"`` or
    ``"warn"`` (a ``RuntimeWarning`` per finding). ``db``: accepted for compatibility.
    A variable whose ``tag.nan_guard_mode_check`` is False is not checked.
    """

    nan_is_error: bool = True
    inf_is_error: bool = True
    big_is_error: bool = True
    action: str = "raise"
    big_threshold: float = BIG_THRESHOLD
    check_inputs: bool = True

    def __init__(
        self,
        nan_is_error: bool | None = None,
        inf_is_error: bool | None = None,
        big_is_error: bool | None = None,
        optimizer: Any = "default",
        linker: Any = None,
        db: Any = None,
        name: str = "NanGuardMode",
        action: str = "raise",
        big_threshold: float = BIG_THRESHOLD,
        check_inputs: bool = True,
    ):
        settings = {
            "nan_is_error": True if nan_is_error is None else bool(nan_is_error),
            "inf_is_error": True if inf_is_error is None else bool(inf_is_error),
            "big_is_error": True if big_is_error is None else bool(big_is_error),
            "optimizer": "fast_run" if optimizer == "default" else optimizer,
            "linker": linker,
            "name": name,
            "action": action,
            "big_threshold": float(big_threshold),
            "check_inputs": bool(check_inputs),
        }
        if not (settings["nan_is_error"] or settings["inf_is_error"] or settings["big_is_error"]):
            raise ValueError(
                "NanGuardMode with nan_is_error, inf_is_error and big_is_error all False checks nothing; "
                "use another mode"
            )
        for key, value in settings.items():
            object.__setattr__(self, key, value)
        self.__post_init__()

    def __post_init__(self) -> None:
        linker = self.linker
        if isinstance(linker, str):
            if linker not in predefined_linkers:
                raise ValueError(f"Unknown linker {linker!r}; known: {sorted(predefined_linkers)}")
            linker = predefined_linkers[linker]
        if linker is not None and not isinstance(linker, VMLinker):
            raise ValueError(
                f"NanGuardMode runs the reference VM with its checks; got linker={linker!r} "
                "(pass None, or a VMLinker to choose allow_gc)"
            )
        allow_gc = linker.allow_gc if linker is not None else True
        object.__setattr__(
            self,
            "linker",
            NanGuardLinker(
                nan_is_error=self.nan_is_error,
                inf_is_error=self.inf_is_error,
                big_is_error=self.big_is_error,
                action=self.action,
                big_threshold=self.big_threshold,
                check_inputs=self.check_inputs,
                allow_gc=allow_gc,
            ),
        )
        super().__post_init__()

    def __str__(self) -> str:
        return (
            f"{self.name}(nan_is_error={self.nan_is_error}, inf_is_error={self.inf_is_error}, "
            f"big_is_error={self.big_is_error}, optimizer={self.query})"
        )
