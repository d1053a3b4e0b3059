"""``grad``, ``Lop``/``Rop``, ``jacobian``, ``hessian``: derivatives of graphs.

The home of :mod:`arignote.gradient` (import the names from there, PyTensor's path).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from arignote._gradient.ops import ViewOp
from arignote._gradient.terms import _is_discrete, _match_dtype
from arignote.configdefaults import config
from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected, is_null
from arignote.graph.op import Op, node_connection_pattern
from arignote.graph.replace import batch_graph
from arignote.graph.traversal import io_toposort
from arignote.graph.utils import gc_paused
from arignote.tensor.alloc import broadcast_batch, eye, zeros, zeros_like
from arignote.tensor.conversion import (
    NotScalarConstantError,
    as_tensor_variable,
    constant,
    get_underlying_scalar_constant_value,
)
from arignote.tensor.indexing.increments import sum_increments
from arignote.tensor.join import stack
from arignote.tensor.reductions import sum as tsum
from arignote.tensor.shape import _zero_grad, reshape, shape_i
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import add, mul, tensor_copy

__all__ = [
    "DisconnectedInputError",
    "Lop",
    "NullTypeGradError",
    "Rop",
    "grad",
    "hessian",
    "hessian_vector_product",
    "jacobian",
    "pullback",
    "pushforward",
    "pushforward_through_pullback",
    "subgraph_grad",
]


# --- the errors of grad ------------------------------------------------------------------


class DisconnectedInputError(ValueError):
    """``grad`` was asked for the gradient with respect to a Variable the cost does not use."""


class NullTypeGradError(TypeError):
    """A gradient needed by ``grad`` is undefined or not implemented (a NullType term)."""


def _as_list(x: Any) -> tuple[list, bool]:
    if isinstance(x, (list, tuple)):
        return list(x), True
    return [x], False


def _check_choice(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


# --- the reverse pass ----------------------------------------------------------------------


def _relevant_nodes(
    sources: Sequence[Variable], wrt: Sequence[Variable], blocked: set
) -> tuple[list[Apply], set]:
    """The nodes on paths from ``wrt`` to ``sources`` (dependencies first), not passing
    through ``blocked`` Variables (consider_constant), and the Variables on those paths."""
    order = io_toposort(blocked, sources)
    reach: set = set(wrt)
    nodes = []
    for node in order:
        for i in node.inputs:
            if i in reach:
                nodes.append(node)
                reach.update(node.outputs)
                break
    return nodes, reach


_warned_no_pattern: set = set()


def _check_term(node: Apply, i: int, term: Any, connected: bool, pattern: Any) -> Variable:
    """``term`` after the Op contract's checks (raising a clear error on a violation)."""
    op = node.op
    if term is None:
        raise TypeError(
            f"{op}.pullback (grad) returned None for input {i} of {node}; return "
            "disconnected_type() (not connected), zeros (a zero gradient) or "
            "grad_undefined(...)/grad_not_implemented(...) instead"
        )
    if not isinstance(term, Variable):
        raise TypeError(
            f"{op}.pullback (grad) returned {type(term).__name__} {term!r} for input {i} of {node}; "
            "expected a Variable"
        )
    if is_disconnected(term):
        if connected:
            if pattern is not None:
                raise TypeError(
                    f"{op}.pullback (grad) returned a DisconnectedType term for input {i} of {node}, "
                    "but its connection_pattern says that input is connected to an output the cost "
                    "depends on; return a (zero) gradient there, or fix connection_pattern"
                )
            if type(op) not in _warned_no_pattern:
                _warned_no_pattern.add(type(op))
                warnings.warn(
                    f"{op}.pullback (grad) returned a DisconnectedType term for input {i}; give "
                    f"{type(op).__name__} a connection_pattern method that says so",
                    stacklevel=4,
                )
        return term
    if is_null(term):
        return term
    if not connected:
        raise TypeError(
            f"{op}.pullback (grad) returned {term} (of Type {term.type}) for input {i} of {node}, "
            "but its connection_pattern says that input is not connected to any output the cost "
            "depends on; return disconnected_type() there, or fix connection_pattern"
        )
    dtype = getattr(term.type, "dtype", None)
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError(
            f"{op}.pullback (grad) returned an integer-valued gradient ({term}, dtype {dtype}) for "
            f"input {i} of {node}; gradients must be floats (a zero gradient for an "
            "integer-valued function, grad_undefined for one defined only at integers)"
        )
    inp = node.inputs[i]
    in_ndim = getattr(inp.type, "ndim", None)
    t_ndim = getattr(term.type, "ndim", None)
    if in_ndim is not None and t_ndim is not None and in_ndim != t_ndim:
        raise ValueError(
            f"{op}.pullback (grad) returned a {t_ndim}-d gradient term ({term.type}) for the "
            f"{in_ndim}-d input {i} ({inp}: {inp.type}) of {node}"
        )
    return term


def _check_zero(node: Apply, i: int, term: Variable) -> None:
    """A term for an input reaching the cost only through integer-valued outputs must be
    zero: raise if it is a nonzero constant."""
    try:
        value = get_underlying_scalar_constant_value(term)
    except (NotScalarConstantError, TypeError, ValueError):
        return
    if np.any(np.asarray(value) != 0):
        raise ValueError(
            f"{node.op}.pullback (grad) returned {term} (the constant {value}) for input {i} of "
            f"{node}, which reaches the cost only through integer-valued outputs: its gradient "
            "must be zero (or undefined / disconnected)"
        )


def _sum_terms(terms: list[Variable]) -> Variable:
    if len(terms) == 1:
        return terms[0]
    for t in terms:
        if is_null(t):
            return t
    real = [t for t in terms if not is_disconnected(t)]
    if not real:
        return terms[0]
    if len(real) == 1:
        return real[0]
    if all(isinstance(t.type, TensorType) for t in real):
        # a vector read at many constant places: its increments as one (not one per term)
        summed = sum_increments(real)
        return add(*real) if summed is None else summed
    # terms of other Types (sparse matrices) add with their own operators, which also take
    # tensors: those go first, so that every ``+`` has one of them on its left
    ordered = sorted(real, key=lambda t: isinstance(t.type, TensorType))
    total = ordered[0]
    for t in ordered[1:]:
        total = total + t
    return total


def _backpropagate(
    seeds: dict[Variable, Variable], wrt: list[Variable], blocked: set
) -> dict[Variable, Variable]:
    """The total gradient reaching each Variable on the paths from ``wrt`` to the
    ``seeds`` (``{variable: its known gradient}``); a seeded Variable keeps its seed."""
    with gc_paused():  # building allocates many objects and frees none
        return _backpropagate_nodes(seeds, wrt, blocked)


def _backpropagate_nodes(
    seeds: dict[Variable, Variable], wrt: list[Variable], blocked: set
) -> dict[Variable, Variable]:
    terms: dict[Variable, list[Variable]] = {v: [g] for v, g in seeds.items()}
    nodes, reach = _relevant_nodes(list(seeds), wrt, blocked)
    memo: dict = {}  # shared by the Elemwise replays: one node per (op, inputs)
    for node in reversed(nodes):
        outputs = node.outputs
        out_grads: list = []
        out_connected: list = []
        out_null: list = []
        for out in outputs:
            ts = terms.get(out)
            if ts is None:
                out_grads.append(disconnected_type())
                out_connected.append(False)
                out_null.append(False)
                continue
            if len(ts) == 1:
                g = ts[0]
            else:  # every term has arrived (the nodes are visited in reverse order)
                g = _sum_terms(ts)
                terms[out] = [g]  # summed once, also for the caller
            if is_disconnected(g):
                out_grads.append(g)
                out_connected.append(False)
                out_null.append(False)
                continue
            out_connected.append(True)
            if is_null(g):
                out_null.append(True)
            else:
                out_null.append(False)
                if _is_discrete(out):
                    g = _zero_grad(out)  # integer-valued: f(x + eps) == f(x)
                else:
                    g = _match_dtype(out, g)
            out_grads.append(g)
        if not any(out_connected):
            continue
        inputs = node.inputs
        pattern = node_connection_pattern(node)
        if pattern is None:
            in_connected = [True] * len(inputs)
            only_null = [all(n for c, n in zip(out_connected, out_null) if c)] * len(inputs)
            only_int = [all(_is_discrete(o) for c, o in zip(out_connected, outputs) if c)] * len(inputs)
        else:
            in_connected = [any(p and c for p, c in zip(row, out_connected)) for row in pattern]
            only_null = [
                not any(p and c and not n for p, c, n in zip(row, out_connected, out_null)) for row in pattern
            ]
            only_int = [
                not any(p and c and not _is_discrete(o) for p, c, o in zip(row, out_connected, outputs))
                for row in pattern
            ]
        wanted = [c and (x in reach) and x not in seeds for x, c in zip(inputs, in_connected)]
        if not any(wanted):
            continue
        if all(n for n, c in zip(only_null, in_connected) if c):
            # every connected output has an undefined gradient: so do the connected inputs
            null = next(g for g, n in zip(out_grads, out_null) if n)
            for x, w in zip(inputs, wanted):
                if w:
                    terms.setdefault(x, []).append(null)
            continue
        op = node.op
        call_inputs = list(inputs)
        destroyed = {i for ins in getattr(op, "destroy_map", {}).values() for i in ins}
        if destroyed:  # the rule may use a destroyed input: give it a copy
            for i in destroyed:
                call_inputs[i] = tensor_copy(call_inputs[i])
        # the Op's rule, told which terms are wanted and given the pass's shared memo
        in_grads = op.pullback_in_pass(call_inputs, list(outputs), out_grads, wanted, memo)
        if not isinstance(in_grads, (list, tuple)) or len(in_grads) != len(inputs):
            n = len(in_grads) if isinstance(in_grads, (list, tuple)) else type(in_grads).__name__
            raise ValueError(
                f"{op}.pullback (grad) must return one gradient term per input "
                f"({len(inputs)}), got {n} for {node}"
            )
        for i, (x, term) in enumerate(zip(inputs, in_grads)):
            if term is None and not wanted[i]:
                continue  # a term the rule was told is not needed, and did not build
            term = _check_term(node, i, term, in_connected[i], pattern)
            if is_disconnected(term):
                continue
            if not is_null(term):
                # an undefined output gradient makes the terms of the inputs behind it undefined
                if pattern is None:
                    null = next((g for g, n in zip(out_grads, out_null) if n), None)
                else:
                    null = next((g for g, n, p in zip(out_grads, out_null, pattern[i]) if n and p), None)
                if null is not None:
                    term = null
                elif only_int[i]:
                    _check_zero(node, i, term)
            if wanted[i]:
                terms.setdefault(x, []).append(term)
    return {v: (ts[0] if len(ts) == 1 else _sum_terms(ts)) for v, ts in terms.items()}


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

    ``consider_constant``: Variables treated as constants (they get their gradient, but
    nothing flows past them). ``known_grads``: ``{variable: its gradient}`` to start from
    (with or without a cost); a Variable listed there has exactly that gradient.
    ``disconnected_inputs``: ``"raise"``/``"warn"``/``"ignore"`` for a ``wrt`` the cost
    does not depend on; ``return_disconnected``: what to return for it (``"zero"``,
    ``"none"`` or ``"disconnected"``). ``null_gradients``: ``"raise"`` (default) or
    ``"return"`` for an undefined / not implemented gradient. ``add_names``: name each
    gradient ``(dcost/dwrt)`` when both are named.
    """
    _check_choice("grad: disconnected_inputs", disconnected_inputs, ("raise", "warn", "ignore"))
    _check_choice("grad: return_disconnected", return_disconnected, ("zero", "none", "disconnected"))
    _check_choice("grad: null_gradients", null_gradients, ("raise", "return"))
    wrt_list, was_list = _as_list(wrt)
    for k, w in enumerate(wrt_list):
        if not isinstance(w, Variable):
            raise TypeError(f"grad: wrt[{k}] must be a Variable, got {type(w).__name__} {w!r}")
    seeds: dict[Variable, Variable] = {}
    fresh: set = set()
    if cost is not None:
        if not isinstance(cost, Variable):
            raise TypeError(f"grad: cost must be a Variable, got {type(cost).__name__} {cost!r}")
        if getattr(cost.type, "ndim", 0) != 0:
            raise TypeError(f"grad: cost must be a scalar (0-d), got {cost.type}; sum it or use jacobian")
        if _is_discrete(cost):
            seeds[cost] = _zero_grad(cost)
        else:
            seeds[cost] = constant(np.ones((), dtype=cost.type.dtype))
        fresh.add(seeds[cost])
    for var, g in (known_grads or {}).items():
        if not isinstance(var, Variable):
            raise TypeError(f"grad: known_grads keys must be Variables, got {type(var).__name__} {var!r}")
        if not isinstance(g, Variable):
            g = as_tensor_variable(g)
        if not (is_disconnected(g) or is_null(g)):
            gd = getattr(g.type, "dtype", None)
            if gd is not None and np.dtype(gd).kind not in "fc":
                raise TypeError(f"grad: known_grads[{var}] has the integer dtype {gd}; gradients are floats")
            vn, gn = getattr(var.type, "ndim", None), getattr(g.type, "ndim", None)
            if vn is not None and gn is not None and vn != gn:
                raise ValueError(
                    f"grad: known_grads[{var}] is {gn}-d ({g.type}) but {var} is {vn}-d ({var.type})"
                )
            g = _match_dtype(var, g)
        seeds[var] = g
    if not seeds:
        raise ValueError("grad needs a cost or known_grads")
    blocked = set(consider_constant or ())
    for v in blocked:
        if not isinstance(v, Variable):
            raise TypeError(f"grad: consider_constant must hold Variables, got {type(v).__name__} {v!r}")
    grads = _backpropagate(seeds, wrt_list, blocked)
    cost_name = cost.name if cost is not None and cost.name else "cost"
    results = []
    for k, w in enumerate(wrt_list):
        g = grads.get(w)
        if g is None or is_disconnected(g):
            results.append(_disconnected_result(w, k, disconnected_inputs, return_disconnected))
            continue
        if is_null(g):
            if null_gradients == "raise":
                raise NullTypeGradError(
                    f"grad: the gradient with respect to {w} is undefined: {g.type.why_null}"
                )
            results.append(g)
            continue
        if add_names and g.name is None and w.name is not None and (g.owner is not None or g in fresh):
            g.name = f"(d{cost_name}/d{w.name})"
        results.append(g)
    if not was_list:
        return results[0]
    return tuple(results) if isinstance(wrt, tuple) else results


def _disconnected_result(w: Variable, k: int, policy: str, ret: str, what: str = "grad") -> Any:
    msg = (
        f"{what}: the cost does not depend on wrt[{k}] ({w}); it is disconnected from the graph "
        "(or reaches the cost only through non-differentiable operations). Pass "
        "disconnected_inputs='ignore' (or 'warn') if that is expected."
    )
    if policy == "raise":
        raise DisconnectedInputError(msg)
    if policy == "warn":
        warnings.warn(msg, stacklevel=3)
    if ret == "zero":
        return _zero_grad(w)
    if ret == "none":
        return None
    return disconnected_type()


def Lop(
    f: Any,
    wrt: Any,
    eval_points: Any,
    consider_constant: Any = None,
    disconnected_inputs: str = "raise",
    return_disconnected: str = "zero",
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
        return_disconnected=return_disconnected,
    )


def pullback(
    f: Any,
    wrt: Any,
    cotangents: Any,
    consider_constant: Any = None,
    disconnected_inputs: str = "raise",
    return_disconnected: str = "zero",
) -> Any:
    """PyTensor 3's name for :func:`Lop` (``cotangents`` are its ``eval_points``)."""
    return Lop(f, wrt, cotangents, consider_constant, disconnected_inputs, return_disconnected)


# --- forward mode ----------------------------------------------------------------------------


class _NoPushforward(Exception):
    """An Op on the path defines no pushforward / R_op (the fallback is used instead)."""


def _pushforward_rule(op: Op) -> tuple[Callable, bool] | None:
    """``(rule, seeds_spelling)`` for ``op``: its ``pushforward`` (gets DisconnectedType
    tangents) or, failing that, its ``R_op`` (gets ``None``); ``None`` if it has neither."""
    cls = type(op)
    if cls.pushforward is not Op.pushforward:
        return op.pushforward, False
    if cls.R_op is not Op.R_op:
        return op.R_op, True
    return None


def _check_tangent(node: Apply, j: int, t: Any) -> Any:
    if t is None or is_disconnected(t) or is_null(t):
        return t
    if not isinstance(t, Variable):
        raise TypeError(
            f"{node.op}.pushforward (R_op) returned {type(t).__name__} {t!r} for output {j} of "
            f"{node}; expected a Variable"
        )
    out = node.outputs[j]
    on, tn = getattr(out.type, "ndim", None), getattr(t.type, "ndim", None)
    if on is not None and tn is not None and on != tn:
        raise ValueError(
            f"{node.op}.pushforward (R_op) returned a {tn}-d tangent ({t.type}) for the {on}-d "
            f"output {j} ({out.type}) of {node}"
        )
    return t


def _pushforward_direct(fs: list, wrts: list, tangents: list, strict: bool) -> dict:
    """Tangents of every Variable on the paths from ``wrts`` to ``fs``, through each Op's
    own rule; raises ``_NoPushforward`` when an Op has none."""
    nodes, _ = _relevant_nodes(fs, wrts, set())
    rules = []
    for node in nodes:
        rule = _pushforward_rule(node.op)
        if rule is None:
            raise _NoPushforward(f"{node.op} defines neither pushforward nor R_op (in {node})")
        rules.append(rule)
    tan: dict = dict(zip(wrts, tangents))
    for node, (rule, seeds_spelling) in zip(nodes, rules):
        ts = [tan.get(i) for i in node.inputs]
        if all(t is None for t in ts):
            continue
        nulls = [t for t in ts if is_null(t)]
        if nulls:  # an undefined tangent in: undefined tangents out
            for o in node.outputs:
                tan[o] = nulls[0]
            continue
        if seeds_spelling:
            args = ts
        else:
            args = [disconnected_type() if t is None else t for t in ts]
        try:
            outs = (
                rule(list(node.inputs), list(node.outputs), args)
                if not seeds_spelling
                else rule(list(node.inputs), args)
            )
        except NotImplementedError as err:
            if strict:
                raise
            raise _NoPushforward(str(err)) from err
        if not isinstance(outs, (list, tuple)) or len(outs) != len(node.outputs):
            n = len(outs) if isinstance(outs, (list, tuple)) else type(outs).__name__
            raise ValueError(
                f"{node.op}.pushforward (R_op) must return one tangent per output "
                f"({len(node.outputs)}), got {n} for {node}"
            )
        for j, (o, t) in enumerate(zip(node.outputs, outs)):
            t = _check_tangent(node, j, t)
            if t is None or is_disconnected(t):
                continue
            tan[o] = t if is_null(t) else _match_dtype(o, t)
        _zero_discrete_outputs(node, ts, tan)
    return tan


def _zero_discrete_outputs(node: Apply, ts: list, tan: dict) -> None:
    """An integer-valued output that depends on an input with a tangent has a zero tangent
    (it is locally constant), as its gradient is zero: connected, not disconnected."""
    pattern = node_connection_pattern(node)
    for j, o in enumerate(node.outputs):
        if o in tan or not _is_discrete(o):
            continue
        if any(
            t is not None and not is_disconnected(t) and (pattern is None or pattern[i][j])
            for i, t in enumerate(ts)
        ):
            tan[o] = _zero_grad(o)


def pushforward_through_pullback(
    outputs: Sequence[Variable],
    inputs: Sequence[Variable],
    tangents: Sequence[Variable],
    disconnected_outputs: str = "raise",
    return_disconnected: str = "zero",
) -> list:
    """Jacobian-vector products through two reverse passes (the transpose trick):
    ``J v = d/du (u^T J v)`` where ``u^T J`` is the pullback of a placeholder ``u``.
    Works for every Op that has a pullback."""
    fs, wrts, ts = list(outputs), list(inputs), list(tangents)
    tan = _through_pullback(fs, wrts, ts)
    return [
        _pushforward_result(f, k, tan.get(f), disconnected_outputs, return_disconnected)
        for k, f in enumerate(fs)
    ]


def _through_pullback(fs: list, wrts: list, ts: list) -> dict:
    # only numeric outputs have a tangent (a random generator, say, has none)
    numeric = [f for f in fs if getattr(f.type, "dtype", None) is not None]
    if not numeric:
        return {}
    # The cotangents only carry the linear dependence; zeros shaped like the outputs (not
    # new root Variables) keep the result free of inputs that would need a value.
    us = [zeros_like(f, dtype=_seed_dtype(f)) for f in numeric]
    vjp = grad(
        None,
        wrts,
        known_grads=dict(zip(numeric, us)),
        disconnected_inputs="ignore",
        return_disconnected="none",
    )
    # J v = d/du <u^T J, v>. Each pullback term is seeded with its tangent through its own
    # identity node: a known gradient replaces what else flows into its Variable, and one
    # pullback term can be computed from another (x + sum(y): y's term is sum(x's term)).
    known: dict = {}
    connected = False
    for g, t in zip(vjp, ts):
        if g is None or t is None or is_disconnected(t):
            continue
        connected = True
        known[ViewOp()(g)] = t
    jvps = (
        grad(None, us, known_grads=known, disconnected_inputs="ignore", return_disconnected="none")
        if known
        else [None] * len(us)
    )
    tan = {f: j for f, j in zip(numeric, jvps) if j is not None}
    if connected:
        for f in numeric:
            if f not in tan and _is_discrete(f) and _reaches(f, wrts, ts):
                tan[f] = _zero_grad(f)  # integer-valued, yet it depends on wrt: zero
    return tan


def _reaches(f: Variable, wrts: list, ts: list) -> bool:
    """Whether ``f``'s pullback reaches a ``wrt`` that has a tangent (connected, maybe zero)."""
    u = zeros_like(f, dtype=_seed_dtype(f))
    terms = grad(None, wrts, known_grads={f: u}, disconnected_inputs="ignore", return_disconnected="none")
    return any(g is not None and t is not None and not is_disconnected(t) for g, t in zip(terms, ts))


def _pushforward_result(f: Variable, k: int, t: Any, policy: str, ret: str) -> Any:
    if t is not None and not is_disconnected(t):
        return t
    msg = (
        f"pushforward (Rop): output {k} ({f}) does not depend on any of wrt (or only through "
        "non-differentiable operations). Pass disconnected_outputs='ignore' (or 'warn') if that "
        "is expected."
    )
    if policy == "raise":
        raise DisconnectedInputError(msg)
    if policy == "warn":
        warnings.warn(msg, stacklevel=3)
    if ret == "zero" and getattr(f.type, "dtype", None) is not None:
        return _zero_grad(f)
    if ret in ("zero", "none"):  # a non-numeric output (a random generator) has no zero
        return None
    return disconnected_type()


def pushforward(
    f: Any,
    wrt: Any,
    tangents: Any,
    disconnected_outputs: str = "raise",
    return_disconnected: str = "zero",
    use_op_pushforward: bool | None = None,
) -> Any:
    """Jacobian-vector product: the Jacobian of ``f`` with respect to ``wrt`` times
    ``tangents`` (one per ``wrt``, shaped like it). The result has ``f``'s form.

    ``use_op_pushforward``: ``None`` (default) uses the Ops' own ``pushforward``/``R_op``
    when every Op between ``wrt`` and ``f`` has one and otherwise two reverse passes
    (:func:`pushforward_through_pullback`); ``True`` requires the Ops' rules; ``False``
    always takes the two reverse passes.
    """
    _check_choice("pushforward: disconnected_outputs", disconnected_outputs, ("raise", "warn", "ignore"))
    _check_choice("pushforward: return_disconnected", return_disconnected, ("zero", "none", "disconnected"))
    fs, f_list = _as_list(f)
    wrts, _ = _as_list(wrt)
    ts, _ = _as_list(tangents)
    if len(wrts) != len(ts):
        raise ValueError(f"pushforward: {len(wrts)} wrt but {len(ts)} tangents")
    for k, (w, t) in enumerate(zip(wrts, ts)):
        if not isinstance(w, Variable):
            raise TypeError(f"pushforward: wrt[{k}] must be a Variable, got {type(w).__name__} {w!r}")
        if t is not None and not isinstance(t, Variable):
            ts[k] = t = as_tensor_variable(t)
        if t is not None and not is_disconnected(t):
            wn, tn = getattr(w.type, "ndim", None), getattr(t.type, "ndim", None)
            if wn is not None and tn is not None and wn != tn:
                raise ValueError(
                    f"pushforward: tangent {k} is {tn}-d ({t.type}) but wrt[{k}] is {wn}-d ({w.type})"
                )
            ts[k] = _match_dtype(w, t)
    tan = None
    if use_op_pushforward is not False:
        try:
            tan = _pushforward_direct(fs, wrts, ts, strict=bool(use_op_pushforward))
        except _NoPushforward as err:
            if use_op_pushforward:
                raise NotImplementedError(f"pushforward(use_op_pushforward=True): {err}") from None
    if tan is None:
        tan = _through_pullback(fs, wrts, [None if t is None else t for t in ts])
        for w, t in zip(wrts, ts):  # an output that is one of wrt: its own tangent
            tan.setdefault(w, t)
    results = [
        _pushforward_result(fv, k, tan.get(fv), disconnected_outputs, return_disconnected)
        for k, fv in enumerate(fs)
    ]
    return results if f_list else results[0]


def Rop(
    f: Any,
    wrt: Any,
    eval_points: Any,
    disconnected_outputs: str = "raise",
    return_disconnected: str = "zero",
    use_op_rop_implementation: bool | None = None,
) -> Any:
    """Jacobian-vector product (the seeds' name for :func:`pushforward`): the Jacobian of
    ``f`` with respect to ``wrt`` times ``eval_points``.

    Uses each Op's ``R_op``/``pushforward`` when every Op on the way has one, else two
    reverse passes (``use_op_rop_implementation=True``/``False`` forces either).
    """
    return pushforward(
        f,
        wrt,
        eval_points,
        disconnected_outputs=disconnected_outputs,
        return_disconnected=return_disconnected,
        use_op_pushforward=use_op_rop_implementation,
    )


# --- Jacobians and Hessians ------------------------------------------------------------------


def _shape_entries(v: Variable) -> list:
    """``v``'s shape as Python ints where static, else 0-d int64 Variables."""
    return [s if s is not None else shape_i(v, d) for d, s in enumerate(v.type.shape)]


def _product(entries: Sequence[Any]) -> Any:
    if all(isinstance(e, int) for e in entries):
        return math.prod(entries)
    out: Any = 1
    for e in entries:
        out = e if isinstance(out, int) and out == 1 else mul(out, e)
    return out


def jacobian(
    expression: Any,
    wrt: Any,
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
    vectorize: bool = True,
) -> Any:
    """The Jacobian of ``expression`` (any rank) with respect to ``wrt`` (a Variable or a
    list of them): shaped ``expression.shape + wrt.shape``.

    With ``vectorize`` (the default) it is one batched reverse pass: the pullback of a
    placeholder cotangent is built once and then batched over the rows of an identity
    matrix (see :func:`arignote.tensor.batching.vectorize_graph`), so the graph does not
    grow with the number of outputs. ``vectorize=False`` builds one pullback per output
    element (a Python loop; the expression's size must be known statically).
    """
    expression = as_tensor_variable(expression)
    wrt_list, was_list = _as_list(wrt)
    if expression.type.ndim == 0:
        return grad(
            expression, wrt, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs
        )
    if vectorize:
        results = _jacobian_batched(expression, wrt_list, consider_constant, disconnected_inputs)
    else:
        results = _jacobian_loop(expression, wrt_list, consider_constant, disconnected_inputs)
    return results if was_list else results[0]


def _seed_dtype(v: Variable) -> str:
    return v.type.dtype if np.dtype(v.type.dtype).kind in "fc" else config.floatX


def _jacobian_batched(
    expression: Variable, wrt_list: list, consider_constant: Any, disconnected_inputs: str
) -> list:
    dtype = _seed_dtype(expression)
    u = TensorType(dtype, expression.type.shape)("cotangent")
    gs = grad(
        None,
        wrt_list,
        consider_constant=consider_constant,
        known_grads={expression: u},
        disconnected_inputs=disconnected_inputs,
        return_disconnected="zero",
        add_names=False,
    )
    out_shape = _shape_entries(expression)
    n = _product(out_shape)
    seed = eye(n, dtype=dtype)
    if expression.type.ndim != 1:
        seed = reshape(seed, [n, *out_shape])
    batched = batch_graph(gs, {u: seed})
    results = []
    for g, b, w in zip(gs, batched, wrt_list):
        if b is None:  # the gradient does not depend on the cotangent (it is zero)
            b = broadcast_batch(g, n)
        if expression.type.ndim != 1:
            b = reshape(b, [*out_shape, *_shape_entries(w)])
        results.append(b)
    return results


def _jacobian_loop(
    expression: Variable, wrt_list: list, consider_constant: Any, disconnected_inputs: str
) -> list:
    shape = expression.type.shape
    if any(s is None for s in shape):
        raise ValueError(
            f"jacobian(vectorize=False) needs the static shape of the expression, got {expression.type}; "
            "use vectorize=True (the default)"
        )
    n = math.prod(shape)
    dtype = _seed_dtype(expression)
    rows: list[list] = [[] for _ in wrt_list]
    for k in range(n):
        onehot = np.zeros(n, dtype=dtype)
        onehot[k] = 1
        gs = grad(
            None,
            wrt_list,
            consider_constant=consider_constant,
            known_grads={expression: constant(onehot.reshape(shape))},
            disconnected_inputs=disconnected_inputs,
            add_names=False,
        )
        for r, g in zip(rows, gs):
            r.append(g)
    results = []
    for r, w in zip(rows, wrt_list):
        j = stack(r) if n else None
        if j is None:
            j = zeros([0, *_shape_entries(w)], dtype=_seed_dtype(w))
        results.append(reshape(j, [*shape, *_shape_entries(w)]) if expression.type.ndim != 1 else j)
    return results


def hessian(
    cost: Variable,
    wrt: Any,
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: str = "raise",
) -> Any:
    """The Hessian of the scalar ``cost`` with respect to ``wrt`` (a Variable of any rank,
    or a list: one Hessian each), shaped ``wrt.shape + wrt.shape``; a batched
    :func:`jacobian` of the gradient."""
    wrt_list, was_list = _as_list(wrt)
    results = []
    for w in wrt_list:
        g = grad(cost, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
        results.append(
            jacobian(g, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
        )
    return results if was_list else results[0]


def hessian_vector_product(cost: Variable, wrt: Any, p: Any, **grad_kwargs: Any) -> Any:
    """``H p``: the Hessian of ``cost`` with respect to ``wrt`` times ``p`` (one per
    ``wrt``), without forming the Hessian: the gradient of ``sum(grad(cost) * p)``."""
    wrt_list, was_list = _as_list(wrt)
    ps, _ = _as_list(p)
    if len(ps) != len(wrt_list):
        raise ValueError(f"hessian_vector_product: {len(wrt_list)} wrt but {len(ps)} vectors p")
    gs = grad(cost, wrt_list, **grad_kwargs)
    inner = None
    for g, v in zip(gs, ps):
        term = tsum(g * as_tensor_variable(v))
        inner = term if inner is None else inner + term
    results = grad(inner, wrt_list, **grad_kwargs)
    return results if was_list else results[0]


# --- gradients of a part of a graph -----------------------------------------------------------


def subgraph_grad(
    wrt: Sequence[Variable],
    end: Sequence[Variable],
    start: Mapping[Variable, Variable] | None = None,
    cost: Variable | None = None,
    details: bool = False,
) -> tuple:
    """Gradients of a part of a graph, to chain parts one after another (backpropagation
    in stages).

    ``start`` (``{variable: its known gradient}``) and/or ``cost`` are differentiated with
    respect to ``wrt`` and ``end``, with nothing flowing past the ``end`` Variables.
    Returns ``(wrt_grads, end_grads)``; ``end_grads`` serve as the next part's ``start``
    (``dict(zip(end, end_grads))``). With ``details``, also the separate contributions of
    ``start`` and ``cost`` (each a list over ``wrt + end`` without duplicates, or None).
    """
    if cost is None and not start:
        raise ValueError("subgraph_grad needs a cost or start gradients")
    wrt, end = list(wrt), list(end)
    params = list(dict.fromkeys([*wrt, *end]))
    start_grads = cost_grads = None
    if start:
        start_grads = grad(
            None,
            params,
            known_grads=dict(start),
            consider_constant=end,
            disconnected_inputs="ignore",
            return_disconnected="zero",
        )
    if cost is not None:
        cost_grads = grad(
            cost, params, consider_constant=end, disconnected_inputs="ignore", return_disconnected="zero"
        )
    if start_grads is None:
        total = list(cost_grads)  # type: ignore[arg-type]
    elif cost_grads is None:
        total = list(start_grads)
    else:
        total = [a + b for a, b in zip(start_grads, cost_grads)]
    by_param = dict(zip(params, total))
    wrt_grads = [by_param[v] for v in wrt]
    end_grads = [by_param[v] for v in end]
    if details:
        return wrt_grads, end_grads, start_grads, cost_grads
    return wrt_grads, end_grads
