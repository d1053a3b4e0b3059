"""Symbolic differentiation: ``grad``, ``Lop``/``Rop``, ``jacobian``, ``hessian``, helpers.

``grad`` walks the graph from the cost back to the inputs (iteratively: a chain 100,000
nodes deep is fine), asks each Op for its pullback (the seeds' ``grad``/``L_op``, or
PyTensor 3's ``pullback``), and adds up the terms reaching each Variable once, so a
subexpression used several times is differentiated once.

>>> import arignote.tensor as pt
>>> from arignote.gradient import grad
>>> x = pt.dscalar("x")
>>> float(grad(x ** 3, x).eval({x: 2.0}))
12.0
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import NullType
from arignote.graph.traversal import io_toposort
from arignote.graph.type import Type

__all__ = [
    "DisconnectedType",
    "disconnected_type",
    "DisconnectedInputError",
    "NullTypeGradError",
    "GradientError",
    "grad_undefined",
    "grad_not_implemented",
    "grad",
    "Lop",
    "Rop",
    "pullback",
    "pushforward",
]


class DisconnectedType(Type):
    """The Type of a gradient that does not exist because the cost does not depend on
    the Variable at all (as opposed to a zero gradient)."""

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        raise AssertionError("DisconnectedType Variables stand for no value; nothing can be stored in them")

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "DisconnectedType"


def disconnected_type() -> Variable:
    """A new Variable of :class:`DisconnectedType` (a "no gradient here" marker)."""
    return DisconnectedType()()


class DisconnectedInputError(ValueError):
    """``grad`` was asked for the gradient with respect to a Variable the cost does not use."""


class NullTypeGradError(TypeError):
    """A gradient needed by ``grad`` is undefined or not implemented (a NullType term)."""


class GradientError(Exception):
    """``verify_grad`` found the symbolic gradient disagreeing with finite differences."""

    def __init__(
        self,
        arg: int,
        err_pos: Any,
        shape: tuple,
        val1: Any,
        val2: Any,
        abs_err: Any,
        rel_err: Any,
        abs_tol: float,
        rel_tol: float,
    ):
        super().__init__()
        self.arg, self.err_pos, self.shape = arg, err_pos, shape
        self.val1, self.val2 = val1, val2
        self.abs_err, self.rel_err = abs_err, rel_err
        self.abs_tol, self.rel_tol = abs_tol, rel_tol

    def __str__(self) -> str:
        return (
            f"GradientError: numeric gradient and analytic gradient differ for input {self.arg} "
            f"(shape {self.shape}) at index {self.err_pos}: analytic {self.val1!r}, numeric "
            f"{self.val2!r}, absolute error {self.abs_err!r} (tolerance {self.abs_tol}), "
            f"relative error {self.rel_err!r} (tolerance {self.rel_tol})"
        )


def _null(why: str) -> Variable:
    return NullType(why)()


def grad_undefined(op: Any, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of ``op`` with respect to its input ``x_pos`` is mathematically undefined."""
    return _null(
        f"This variable is NullType because the gradient of {op} with respect to input {x_pos} ({x}) is undefined. {comment}".strip()
    )


def grad_not_implemented(op: Any, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of ``op`` with respect to its input ``x_pos`` exists but is not implemented."""
    return _null(
        f"This variable is NullType because the gradient of {op} with respect to input {x_pos} ({x}) is not implemented. {comment}".strip()
    )


def _is_disconnected(v: Any) -> bool:
    return isinstance(getattr(v, "type", None), DisconnectedType)


def _is_null(v: Any) -> bool:
    return isinstance(getattr(v, "type", None), NullType)


def _is_discrete(v: Variable) -> bool:
    dtype = getattr(v.type, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind in "biu"


def _float_zeros_like(v: Variable) -> Variable:
    from arignote.tensor.alloc import zeros_like
    from arignote.tensor.math import cast

    z = zeros_like(v)
    return cast(z, config.floatX) if _is_discrete(v) else z


def _as_list(x: Any) -> tuple[list, bool]:
    if isinstance(x, (list, tuple)):
        return list(x), True
    return [x], False


# --- the reverse pass ----------------------------------------------------------------------


def _connection_pattern(node: Apply) -> list[list[bool]]:
    fn = getattr(node.op, "connection_pattern", None)
    if fn is None:
        return [[True] * len(node.outputs) for _ in node.inputs]
    pattern = fn(node)
    if len(pattern) != len(node.inputs) or any(len(row) != len(node.outputs) for row in pattern):
        raise ValueError(f"{node.op}.connection_pattern gave a {len(pattern)}-row pattern for {node}")
    return pattern


def _relevant_nodes(sources: Sequence[Variable], wrt: Sequence[Variable], blocked: set) -> list[Apply]:
    """The nodes on paths from ``wrt`` to ``sources`` (dependencies first), not passing
    through ``blocked`` variables (consider_constant)."""
    order = io_toposort([*wrt, *blocked], sources)
    reach: set = set(wrt)
    nodes = []
    for node in order:
        if any(i in reach for i in node.inputs):
            nodes.append(node)
            reach.update(node.outputs)
    return nodes


def _check_term(node: Apply, i: int, term: Any, connected: bool) -> Variable:
    inp = node.inputs[i]
    if term is None:
        raise TypeError(
            f"{node.op}.pullback returned None for input {i} of {node}; return "
            "disconnected_type() (not connected) or grad_not_implemented(...) instead"
        )
    if not isinstance(term, Variable):
        raise TypeError(
            f"{node.op}.pullback returned {type(term).__name__} {term!r} for input {i}; expected a Variable"
        )
    if _is_disconnected(term) or _is_null(term):
        return term
    if not connected:
        raise TypeError(
            f"{node.op}.connection_pattern says input {i} of {node} is disconnected, but its "
            f"pullback returned {term}; return disconnected_type() there"
        )
    dtype = getattr(term.type, "dtype", None)
    if dtype is not None and np.dtype(dtype).kind in "biu":
        raise TypeError(
            f"{node.op}.pullback returned an integer gradient ({term}, dtype {dtype}) for input {i} of {node}; "
            "gradients must be floats (zero for integer-valued functions)"
        )
    in_ndim = getattr(inp.type, "ndim", None)
    t_ndim = getattr(term.type, "ndim", None)
    if in_ndim is not None and t_ndim is not None and in_ndim != t_ndim:
        raise ValueError(
            f"{node.op}.pullback returned a {t_ndim}-d gradient for the {in_ndim}-d input {i} of {node}"
        )
    return term


def _sum_terms(terms: list[Variable]) -> Variable:
    nulls = [t for t in terms if _is_null(t)]
    if nulls:
        return nulls[0]
    real = [t for t in terms if not _is_disconnected(t)]
    if not real:
        return terms[0]
    if len(real) == 1:
        return real[0]
    from arignote.tensor.math import add

    return add(*real)


def _backpropagate(
    seeds: dict[Variable, Variable], wrt: list[Variable], blocked: set
) -> dict[Variable, Variable]:
    """Gradient terms reaching each Variable from ``seeds`` ({output: its gradient})."""
    terms: dict[Variable, list[Variable]] = {v: [g] for v, g in seeds.items()}
    nodes = _relevant_nodes(list(seeds), wrt, blocked)
    for node in reversed(nodes):
        out_grads = []
        any_connected = False
        for out in node.outputs:
            ts = terms.get(out)
            if ts is None:
                out_grads.append(disconnected_type())
                continue
            g = _sum_terms(ts)
            if _is_disconnected(g):
                out_grads.append(g)
                continue
            any_connected = True
            if _is_discrete(out) and not _is_null(g):
                g = _float_zeros_like(out)  # an integer-valued output: zero gradient
            out_grads.append(g)
        if not any_connected:
            continue
        pattern = _connection_pattern(node)
        in_grads = node.op.pullback(list(node.inputs), list(node.outputs), out_grads)
        if not isinstance(in_grads, (list, tuple)) or len(in_grads) != len(node.inputs):
            n = len(in_grads) if isinstance(in_grads, (list, tuple)) else type(in_grads).__name__
            raise ValueError(
                f"{node.op}.pullback must return one term per input ({len(node.inputs)}), got {n} for {node}"
            )
        for i, (inp, term) in enumerate(zip(node.inputs, in_grads)):
            if inp in blocked:
                continue
            connected = any(pattern[i][j] for j, g in enumerate(out_grads) if not _is_disconnected(g))
            term = _check_term(node, i, term, connected)
            terms.setdefault(inp, []).append(term)
    return {v: _sum_terms(ts) for v, ts in terms.items()}


def grad(
    cost: Variable | None,
    wrt: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
    add_names: bool = True,
    known_grads: Mapping[Variable, Any] | None = None,
    return_disconnected: str = "zero",
    null_gradients: str = "raise",
) -> Any:
    """Symbolic gradient of the scalar ``cost`` with respect to ``wrt`` (a Variable or a
    list/tuple of them; the result has the same form).

    ``consider_constant``: Variables treated as constants (no gradient through them).
    ``known_grads``: ``{variable: its gradient}`` to start from (with or without a cost).
    ``disconnected_inputs``: ``"raise"``/``"warn"``/``"ignore"`` for a ``wrt`` the cost
    does not depend on; ``return_disconnected``: what to return for it (``"zero"``,
    ``"none"`` or ``"disconnected"``). ``null_gradients``: ``"raise"`` (default) or
    ``"return"`` for an undefined / not implemented gradient.
    """
    from arignote.tensor.basic import as_tensor_variable

    for name, value, allowed in (
        ("disconnected_inputs", disconnected_inputs, ("raise", "warn", "ignore")),
        ("return_disconnected", return_disconnected, ("zero", "none", "disconnected")),
        ("null_gradients", null_gradients, ("raise", "return")),
    ):
        if value not in allowed:
            raise ValueError(f"grad: {name} must be one of {allowed}, got {value!r}")
    wrt_list, was_list = _as_list(wrt)
    for k, w in enumerate(wrt_list):
        if not isinstance(w, Variable):
            raise TypeError(f"grad: wrt[{k}] must be a Variable, got {type(w).__name__} {w!r}")
    seeds: dict[Variable, Variable] = {}
    if cost is not None:
        if not isinstance(cost, Variable):
            raise TypeError(f"grad: cost must be a Variable, got {type(cost).__name__} {cost!r}")
        if getattr(cost.type, "ndim", 0) != 0:
            raise TypeError(f"grad: cost must be a scalar (0-d), got {cost.type}; sum it or use jacobian")
        from arignote.tensor.alloc import ones_like

        one = ones_like(cost)
        seeds[cost] = _float_zeros_like(cost) if _is_discrete(cost) else one
    for var, g in (known_grads or {}).items():
        if not isinstance(var, Variable):
            raise TypeError(f"grad: known_grads keys must be Variables, got {var!r}")
        if not isinstance(g, Variable):
            g = as_tensor_variable(g)
        seeds[var] = g
    if not seeds:
        raise ValueError("grad needs a cost or known_grads")
    blocked = set(consider_constant or ())
    grads = _backpropagate(seeds, wrt_list, blocked)
    results = []
    for k, w in enumerate(wrt_list):
        g = grads.get(w)
        if g is None or _is_disconnected(g):
            results.append(_disconnected_result(w, k, disconnected_inputs, return_disconnected))
            continue
        if _is_null(g):
            if null_gradients == "raise":
                raise NullTypeGradError(
                    f"grad: the gradient with respect to {w} is undefined: {g.type.why_null}"
                )
            results.append(g)
            continue
        if add_names and g.name is None and w.name is not None:
            cost_name = cost.name if cost is not None and cost.name else "cost"
            g.name = f"(d{cost_name}/d{w.name})"
        results.append(g)
    return results if was_list else results[0]


def _disconnected_result(w: Variable, k: int, policy: str, ret: str) -> Any:
    msg = (
        f"grad: the cost does not depend on wrt[{k}] ({w}); it is disconnected from the graph. "
        "Pass disconnected_inputs='ignore' (or 'warn') if that is expected."
    )
    if policy == "raise":
        raise DisconnectedInputError(msg)
    if policy == "warn":
        warnings.warn(msg, stacklevel=3)
    if ret == "zero":
        return _float_zeros_like(w)
    if ret == "none":
        return None
    return disconnected_type()


def Lop(
    f: Any, wrt: Any, eval_points: Any, consider_constant: Any = None, disconnected_inputs: str = "raise"
) -> Any:
    """Vector-Jacobian product: ``eval_points`` (one per ``f``) times the Jacobian of ``f``
    with respect to ``wrt``."""
    fs, _ = _as_list(f)
    evs, _ = _as_list(eval_points)
    if len(fs) != len(evs):
        raise ValueError(f"Lop: {len(fs)} outputs but {len(evs)} eval_points")
    return grad(
        None,
        wrt,
        consider_constant=consider_constant,
        known_grads=dict(zip(fs, evs)),
        disconnected_inputs=disconnected_inputs,
    )


pullback = Lop


def Rop(
    f: Any, wrt: Any, eval_points: Any, disconnected_outputs: str = "raise", return_disconnected: str = "zero"
) -> Any:
    """Jacobian-vector product: the Jacobian of ``f`` w.r.t. ``wrt`` times ``eval_points``.

    Computed with two reverse passes (the transpose trick), which works for every Op
    that has a pullback: ``J v = d/du (u^T J v)`` where ``u^T J = Lop(f, wrt, u)``.
    """
    fs, f_list = _as_list(f)
    wrts, _ = _as_list(wrt)
    evs, _ = _as_list(eval_points)
    if len(wrts) != len(evs):
        raise ValueError(f"Rop: {len(wrts)} wrt but {len(evs)} eval_points")
    us = [out.type() for out in fs]
    vjp = grad(
        None, wrts, known_grads=dict(zip(fs, us)), disconnected_inputs="ignore", return_disconnected="zero"
    )
    from arignote.tensor.math import sum as tsum

    inner = None
    for g, v in zip(vjp, evs):
        term = tsum(g * v)
        inner = term if inner is None else inner + term
    results = grad(inner, us, disconnected_inputs="ignore", return_disconnected="zero")
    return results if f_list else results[0]


pushforward = Rop
