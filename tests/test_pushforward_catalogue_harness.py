"""The machinery of the pushforward catalogue (the cases live in the other
``test_pushforward_catalogue_*`` files; the coverage test in ``test_pushforward_catalogue.py``).

For a :class:`Case` (graph inputs, their values, the outputs of one Op's node) the two
forward-mode routes are compiled into one function: ``Rop`` with the Ops' own pushforwards
(``use_op_rop_implementation=True``) and ``pushforward_through_pullback`` (the same
Jacobian-vector product from the pullbacks, by the transpose trick). They must agree, output
by output, at a random point and along a random tangent; a central finite difference of the
compiled outputs along the same tangent catches rules that are wrong in the same way on both
routes, and says which route is off when they differ. Integer-valued outputs have no tangent:
both routes must give zeros, and call them disconnected alike.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from arignote import function
from arignote.gradient import DisconnectedInputError, NullTypeGradError, Rop, pushforward_through_pullback
from arignote.graph.basic import Variable
from arignote.graph.null_type import NullType
from arignote.graph.op import Op
from arignote.graph.traversal import io_toposort
from tests.op_classes import import_all, qualname, subclasses

# Both routes are exact; they differ only by rounding (in float32, by float32 rounding of
# differently ordered sums and of an ill-conditioned solve or two).
ROUTE_TOL = {"float64": (1e-7, 1e-9), "float32": (2e-3, 2e-4)}
FD_EPS = 1e-6
FD_TOL = (2e-5, 2e-6)


@dataclass
class Case:
    """One node's outputs, reachable from ``inputs`` (with test ``values``).

    ``wrt``: the inputs that get a tangent (default: every float input). ``tangents``: their
    values (default: standard normal draws). ``undefined``: inputs whose derivative the Op
    leaves not implemented (both routes must say so). ``fd``: also compare with central
    differences of the compiled outputs (off where the derivative differs from the function's
    on purpose, e.g. the gradient-changing identity Ops); ``fd_eps``, ``fd_tol`` and
    ``route_tol`` ((rtol, atol)) override the defaults. ``rop_not_implemented``: the Op's
    pushforward declines with NotImplementedError, and Rop falls back to the pullbacks.
    """

    inputs: list[Variable]
    values: list[Any]
    outputs: list[Variable]
    wrt: list[Variable] | None = None
    tangents: list[Any] | None = None
    undefined: list[Variable] | None = None
    fd: bool = True
    fd_eps: float = FD_EPS
    fd_tol: tuple[float, float] = FD_TOL
    route_tol: tuple[float, float] | None = None
    rop_not_implemented: bool = False
    seed: int = 0


Builder = Callable[[str], Case]


# --- values ----------------------------------------------------------------------------------


def rand(*shape: int, seed: int = 0, dtype: str = "float64", low: float | None = None) -> np.ndarray:
    """Standard normal draws (uniform on ``[low, low + 1)`` when ``low`` is given)."""
    rng = np.random.default_rng(seed + 7919 * len(shape) + sum(shape))
    if low is not None:
        return (low + rng.random(shape)).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def spd(n: int, seed: int = 0, dtype: str = "float64", batch: tuple = ()) -> np.ndarray:
    """A well-conditioned symmetric positive definite matrix (a stack of them with ``batch``)."""
    a = rand(*batch, n, n, seed=seed)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def sym(n: int, seed: int = 0, dtype: str = "float64", batch: tuple = ()) -> np.ndarray:
    """A random symmetric matrix (a tangent that stays in the space of symmetric matrices)."""
    a = rand(*batch, n, n, seed=seed)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)


def distinct(n: int, seed: int = 0, dtype: str = "float64") -> np.ndarray:
    """Values with no ties, at least 0.5 apart (for sort, max, unique...)."""
    return (np.random.default_rng(seed).permutation(n) * 0.5 + 0.25).astype(dtype)


def is_float(v: Variable) -> bool:
    """Float or complex: the dtypes that have tangents."""
    return np.dtype(getattr(v.type, "dtype", "object")).kind in "fc"


# --- the Op classes that define a pushforward --------------------------------------------------


def pushforward_op_classes() -> dict[str, type]:
    """Every Op class of arignote whose pushforward (or R_op) is not Op's own default
    (defined by the class or inherited from a base that defines it)."""
    import_all()
    return {
        qualname(c): c
        for c in subclasses(Op)
        if c.__module__.startswith("arignote.")
        and (c.R_op is not Op.R_op or c.pushforward is not Op.pushforward)
    }


def scalar_op_classes() -> dict[str, type]:
    """Every scalar op class of arignote (Elemwise lifts them to tensors)."""
    from arignote.scalar.op import ScalarOp

    import_all()
    return {qualname(c): c for c in subclasses(ScalarOp) if c.__module__.startswith("arignote.")}


def resolve(name: str) -> type:
    module, _, cls = name.rpartition(".")
    return getattr(importlib.import_module(module), cls)


def graph_ops(case: Case) -> list[Op]:
    """The Ops between the case's inputs and outputs (those both routes differentiate)."""
    return [node.op for node in io_toposort(case.inputs, case.outputs)]


def uses(case: Case, cls: type) -> bool:
    """Whether a node between the case's inputs and outputs runs ``cls`` (itself, as the
    scalar op of an Elemwise, or as the core Op of a Blockwise). An Op of a class defined in
    the tests counts as its nearest arignote base: the cases of a base meant to be subclassed
    (SymbolicOp) use a subclass of their own."""
    for op in graph_ops(case):
        inner = getattr(op, "scalar_op", None) or getattr(op, "core_op", None)
        if _arignote_class(type(op)) is cls or type(inner) is cls:
            return True
    return False


def _arignote_class(op_type: type) -> type:
    return next((c for c in op_type.__mro__ if c.__module__.startswith("arignote.")), op_type)


# --- the two routes ---------------------------------------------------------------------------


def _wrt(case: Case) -> list[Variable]:
    if case.wrt is not None:
        return case.wrt
    return [v for v in case.inputs if is_float(v) and v not in (case.undefined or [])]


def _tangent_values(case: Case, wrt: Sequence[Variable]) -> list[np.ndarray]:
    """The tangents of ``wrt`` (a subset of the case's own ``wrt``, which ``case.tangents`` follow)."""
    if case.tangents is not None:
        given = dict(zip(_wrt(case), case.tangents))
        return [np.asarray(given[w], dtype=w.type.dtype) for w in wrt]
    values = dict(zip(case.inputs, case.values))
    rng = np.random.default_rng(1000 + case.seed)
    return [rng.normal(size=np.shape(values[w])).astype(w.type.dtype) for w in wrt]


def _both_routes(case: Case, wrt: Sequence[Variable]) -> tuple[list, list, list]:
    """Symbolic tangent inputs and the two routes' tangents of every output."""
    tangents = [w.type() for w in wrt]
    if case.rop_not_implemented:
        with pytest.raises(NotImplementedError):
            Rop(
                case.outputs,
                list(wrt),
                tangents,
                disconnected_outputs="ignore",
                use_op_rop_implementation=True,
            )
    strict = None if case.rop_not_implemented else True  # None: Rop may fall back to the pullbacks
    rop = Rop(
        case.outputs, list(wrt), tangents, disconnected_outputs="ignore", use_op_rop_implementation=strict
    )
    pb = pushforward_through_pullback(case.outputs, list(wrt), tangents, disconnected_outputs="ignore")
    return tangents, rop, pb


def check_case(case: Case, dtype: str = "float64", wrt: Sequence[Variable] | None = None) -> None:
    """Rop == pushforward_through_pullback (== finite differences) for every output of ``case``."""
    wrt = list(wrt) if wrt is not None else _wrt(case)
    assert wrt, "a case needs at least one input with a tangent"
    tangents, rop, pb = _both_routes(case, wrt)
    fn = function([*case.inputs, *tangents], [*case.outputs, *rop, *pb], on_unused_input="ignore")
    t_values = _tangent_values(case, wrt)
    results = fn(*case.values, *t_values)
    n = len(case.outputs)
    outs, rops, pbs = results[:n], results[n : 2 * n], results[2 * n :]
    fd = _finite_difference(case, wrt, t_values) if case.fd and dtype == "float64" else None
    for k, (out, value) in enumerate(zip(case.outputs, outs)):
        got, via_pb = np.asarray(rops[k]), np.asarray(pbs[k])
        assert got.shape == np.shape(value), (
            f"output {k}: Rop has shape {got.shape}, the output {np.shape(value)}"
        )
        assert via_pb.shape == np.shape(value), f"output {k}: the pullback route has shape {via_pb.shape}"
        if not is_float(out):  # integer-valued: constant under small moves
            assert not np.any(got) and not np.any(via_pb), (
                f"output {k} is integer-valued: tangents must be zero"
            )
            continue
        assert rop[k].type.dtype == out.type.dtype, (
            f"output {k}: Rop is {rop[k].type.dtype}, not {out.type.dtype}"
        )
        assert pb[k].type.dtype == out.type.dtype, f"output {k}: the pullback route is {pb[k].type.dtype}"
        _compare(
            k, got, via_pb, None if fd is None else fd[k], case.route_tol or ROUTE_TOL[dtype], case.fd_tol
        )


def _finite_difference(
    case: Case, wrt: Sequence[Variable], t_values: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Central differences of the compiled outputs along the tangents (float64 only)."""
    f = function(case.inputs, case.outputs, on_unused_input="ignore")
    moved = {w: np.asarray(t, dtype="float64") for w, t in zip(wrt, t_values)}

    def at(step: float) -> list[np.ndarray]:
        args = [v + step * moved[i] if i in moved else v for i, v in zip(case.inputs, case.values)]
        outs = [np.asarray(o) for o in f(*args)]
        return [o.astype("complex128" if np.iscomplexobj(o) else "float64") for o in outs]

    eps = case.fd_eps
    up, down = at(eps), at(-eps)
    return [(u - d) / (2 * eps) for u, d in zip(up, down)]


def _mismatch(a: np.ndarray, b: np.ndarray, tol: tuple[float, float]) -> str | None:
    """``None`` if ``a`` is close to ``b`` (atol scaled by ``b``'s magnitude), else the worst gap."""
    rtol, atol = tol
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    gap = np.abs(a - b)
    bad = gap > atol * scale + rtol * np.abs(b)
    if not np.any(bad):
        return None
    i = np.unravel_index(int(np.argmax(np.where(bad, gap, -1.0))), a.shape) if a.ndim else ()
    return f"max gap {float(np.max(gap)):.3g} (at {tuple(int(j) for j in i)}: {a[i]:.6g} vs {b[i]:.6g})"


def _compare(
    k: int, rop: np.ndarray, pb: np.ndarray, fd: np.ndarray | None, tol: tuple, fd_tol: tuple
) -> None:
    """All three agree; otherwise say which route is off (the one finite differences disown)."""
    problems = []
    gap = _mismatch(rop, pb, tol)
    if gap:
        problems.append(f"Rop vs the pullback route: {gap}")
    if fd is not None:
        for what, got in (("Rop", rop), ("the pullback route", pb)):
            gap = _mismatch(got, fd, fd_tol)
            if gap:
                problems.append(f"{what} vs finite differences: {gap}")
    assert not problems, (
        f"output {k}: " + "; ".join(problems) + f"\nRop:\n{rop}\npullback route:\n{pb}\nfd:\n{fd}"
    )


def disconnected_alike(outputs: Sequence[Variable], wrt: Sequence[Variable]) -> str:
    """How both routes see ``outputs`` under ``disconnected_outputs="raise"``: "disconnected"
    (both raise DisconnectedInputError) or "connected" (neither does); they must agree. With
    "ignore" both must then give zeros of the outputs' shapes."""
    outcomes = []
    for route in ("Rop", "the pullback route"):
        ts = [w.type() for w in wrt]
        try:
            if route == "Rop":
                Rop(list(outputs), list(wrt), ts, use_op_rop_implementation=True)
            else:
                pushforward_through_pullback(list(outputs), list(wrt), ts)
            outcomes.append("connected")
        except DisconnectedInputError:
            outcomes.append("disconnected")
    assert outcomes[0] == outcomes[1], f"Rop says {outcomes[0]}, the pullback route {outcomes[1]}"
    return outcomes[0]


def undefined_alike(case: Case, w: Variable) -> None:
    """An input whose derivative is not implemented: Rop gives a NullType tangent and the
    pullback route raises NullTypeGradError (its reverse pass meets the undefined term)."""
    t = w.type()
    rop = Rop(case.outputs, [w], [t], disconnected_outputs="ignore", use_op_rop_implementation=True)
    assert all(isinstance(r.type, NullType) for r in rop), f"Rop along {w} gives {[r.type for r in rop]}"
    with pytest.raises(NullTypeGradError):
        pushforward_through_pullback(case.outputs, [w], [t], disconnected_outputs="ignore")


# --- what the tests run -------------------------------------------------------------------------


def run_case(name: str, builder: Builder, dtype: str = "float64") -> None:
    """Build the case for class ``name``, check it uses that class, compare the routes with
    a tangent on every differentiable input at once."""
    case = builder(dtype)
    cls = resolve(name)
    assert uses(case, cls), f"the case for {name} has no node of it: {[str(o) for o in graph_ops(case)]}"
    check_case(case, dtype)
    for w in case.undefined or []:
        undefined_alike(case, w)


def run_each_input(name: str, builder: Builder) -> None:
    """The same, with a tangent on one input at a time (the others' tangents absent)."""
    case = builder("float64")
    for w in _wrt(case):
        check_case(case, wrt=[w])


def run_integer_outputs(name: str, builder: Builder) -> None:
    """Each integer-valued output: both routes call it disconnected, or both give zeros."""
    case = builder("float64")
    for out in case.outputs:
        if not is_float(out):
            disconnected_alike([out], _wrt(case))


def several_inputs(case: Case) -> bool:
    return len(_wrt(case)) > 1


def integer_outputs(case: Case) -> bool:
    return any(not is_float(o) for o in case.outputs)


def case_params(
    cases: dict[str, Sequence[Builder]], xfail: dict | None = None, keep: Callable[[Case], bool] | None = None
) -> list:
    """pytest params ``(name, builder)`` with id ``Class[i]`` for every builder (for which
    ``keep(case)`` holds, when given: the case is then built at collection); ``xfail``:
    ``{"Class[i]": reason}`` marks strict xfails."""
    xfail = xfail or {}
    params = []
    for name, builders in cases.items():
        for i, b in enumerate(builders):
            if keep is not None and not _keeps(keep, b):
                continue
            cid = f"{name.rsplit('.', 1)[-1]}[{i}]"
            marks = [pytest.mark.xfail(strict=True, reason=xfail[cid])] if cid in xfail else []
            params.append(pytest.param(name, b, id=cid, marks=marks))
    return params


def _keeps(keep: Callable[[Case], bool], builder: Builder) -> bool:
    try:
        return keep(builder("float64"))
    except Exception:  # a broken builder: keep it, so that its test shows the error
        return True
