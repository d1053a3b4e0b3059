"""The gradient rules of :class:`~arignote.compile.builders.OpFromGraph`.

A rule is built once per Op and per pattern of connected output gradients (pullback) or
tangents (pushforward), then reused: the inner graph is differentiated (or the user's
override called) on placeholders, and the resulting terms are packaged as one more
OpFromGraph, applied to the actual inputs each time the rule is used. The rules keep the
gradient contract: a DisconnectedType term exactly where the connection pattern says no
gradient flows, float terms in the input's dtype elsewhere, NullType terms passed on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote._gradient.derivatives import grad, pushforward
from arignote._gradient.ops import ViewOp
from arignote._gradient.terms import _match_dtype
from arignote.compile.builders import OpFromGraph
from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.graph.null_type import disconnected_type, is_disconnected, is_null
from arignote.graph.traversal import graph_inputs
from arignote.graph.utils import MissingInputError
from arignote.tensor.alloc import zeros_like
from arignote.tensor.shape import _zero_grad
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast

__all__ = ["pullback_rule", "pushforward_rule"]

PullbackRule = Callable[[list, list, list], list]
PushforwardRule = Callable[[list, list], list]


# --- placeholders and the terms' Types ----------------------------------------------------------


def _float_type(v: Variable) -> Any:
    """The Type of a gradient or tangent of ``v``: ``v``'s, or floatX for an integer tensor."""
    t = v.type
    if isinstance(t, TensorType) and np.dtype(t.dtype).kind not in "fc":
        return TensorType(config.floatX, t.shape)
    return t


def _fit(value: Variable, typ: Any) -> Variable:
    """``value`` in the dtype of ``typ`` (a gradient or tangent arriving in another float
    dtype); its Type is checked against ``typ`` when the rule's Op is applied."""
    vt = value.type
    if isinstance(typ, TensorType) and isinstance(vt, TensorType) and vt.dtype != typ.dtype:
        return cast(value, typ.dtype)
    return value


def _zeros(like: Variable, typ: Any) -> Variable:
    return zeros_like(like, dtype=getattr(typ, "dtype", None))


def _special(v: Variable) -> bool:
    return is_disconnected(v) or is_null(v)


def _one_term(value: Any, k: int, what: str) -> Variable:
    if isinstance(value, Variable):
        return value
    hint = "; return disconnected_type() for no gradient" if value is None else ""
    raise TypeError(f"{what} returned {type(value).__name__} {value!r} for entry {k}, not a Variable{hint}")


def _entry_terms(op: Any, what: str, entries: list, args: tuple, defaults: Callable[[list], list]) -> list:
    """The terms of an override given as a list: ``defaults(indices)`` (the inner graph's
    rule) where an entry is None, the entry where it is a Variable, else what the entry
    returns when called with ``args``."""
    need = [k for k, e in enumerate(entries) if e is None]
    terms = dict(zip(need, defaults(need)))
    for k, e in enumerate(entries):
        if e is not None:
            terms[k] = e if isinstance(e, Variable) else _one_term(e(*args), k, f"{what}[{k}] of {op}")
    return [terms[k] for k in range(len(entries))]


def _as_term_list(result: Any, n: int, n_explicit: int, what: str) -> list:
    if not isinstance(result, (list, tuple)):
        raise TypeError(f"{what} must return a list (one entry each), got {type(result).__name__} {result!r}")
    if len(result) not in (n, n_explicit):
        expected = f"{n}" if n == n_explicit else f"{n_explicit} (or {n}, with the shared variables)"
        raise ValueError(f"{what} must return a list of {expected} entries, got {len(result)}")
    return list(result)


# --- packaging the terms as an OpFromGraph --------------------------------------------------------


def _lower(op: Any, formal: list[Variable], terms: list[Variable], what: str) -> Callable[[list], list]:
    """Package the real terms (functions of ``formal``) as one OpFromGraph, built now;
    return ``apply(actual) -> terms`` that applies it to the actual values of ``formal``
    (only the ones the terms use) and puts the special terms back in their places."""
    real = [t for t in terms if not _special(t)]
    if not real:
        return lambda actual: list(terms)
    used = set(graph_inputs(real))
    keep = [k for k, v in enumerate(formal) if v in used]
    try:
        rule_op = OpFromGraph(
            [formal[k] for k in keep],
            real,
            inline=op.is_inline,
            name=f"{op.name or type(op).__name__}_{what}",
            **op.kwargs,
        )
    except MissingInputError as err:
        raise MissingInputError(
            f"The {what} of {op} uses {err.variable}, which is none of the Variables it was given "
            "(an override must build its terms from the inputs, outputs and gradients/tangents "
            "passed to it, not from Variables of the outer graph)",
            variable=err.variable,
        ) from None

    def apply(actual: list) -> list:
        results = iter(rule_op(*(actual[k] for k in keep), return_list=True))
        return [t if _special(t) else next(results) for t in terms]

    return apply


# --- pullback ------------------------------------------------------------------------------------


def pullback_rule(op: Any, output_grads: Sequence[Any]) -> PullbackRule:
    """The pullback of ``op`` for output gradients connected like ``output_grads``."""
    if len(output_grads) != len(op.output_types):
        raise ValueError(
            f"{op}.pullback takes {len(op.output_types)} output gradients, got {len(output_grads)}"
        )
    live = tuple(not _special(g) for g in output_grads)
    rule = op._pullback_cache.get(live)
    if rule is None:
        rule = op._pullback_cache[live] = _build_pullback(op, live)
    return rule


def _build_pullback(op: Any, live: tuple[bool, ...]) -> PullbackRule:
    ins, outs = op.inner_inputs, op.inner_outputs
    out_args = [o.type(name=f"o{j}") for j, o in enumerate(outs)]
    g_types = [_float_type(o) for o in outs]
    g_args = [t(name=f"g{j}") if on else disconnected_type() for j, (t, on) in enumerate(zip(g_types, live))]
    override = op.pullback_overrides
    if isinstance(override, OpFromGraph):
        override = _ofg_pullback_override(op, override, g_types)
    terms = _pullback_terms(op, override, live, out_args, g_args)
    live_g = [g for g, on in zip(g_args, live) if on]
    apply = _lower(op, [*ins, *out_args, *live_g], terms, "pullback")

    def rule(inputs: list, outputs: list, output_grads: list) -> list:
        gs = [_fit(g, t) for g, t, on in zip(output_grads, g_types, live) if on]
        return _fit_pullback(op, inputs, output_grads, apply([*inputs, *outputs, *gs]))

    return rule


def _pullback_terms(op: Any, override: Any, live: tuple, out_args: list, g_args: list) -> list:
    """One term per inner input, as functions of the inner inputs, ``out_args`` and the
    live ``g_args``."""
    ins = op.inner_inputs
    nin = len(ins)
    args = (list(ins), list(out_args), list(g_args))
    if override is None:
        return _default_grads(op, list(range(nin)), live, g_args)
    if isinstance(override, (list, tuple)):
        entries = list(override) + [None] * (nin - len(override))  # shared inputs: the default rule
        return _entry_terms(
            op, "lop_overrides", entries, args, lambda need: _default_grads(op, need, live, g_args)
        )
    what = f"The lop_overrides callable of {op}"
    result = _as_term_list(override(*args), nin, op.n_explicit, what)
    if len(result) < nin:
        rest = list(range(len(result), nin))
        result += _default_grads(op, rest, live, g_args)
    return [_one_term(r, k, what) for k, r in enumerate(result)]


def _default_grads(op: Any, wrt_idx: list[int], live: tuple, g_args: list) -> list:
    """The inner graph's gradient with respect to the inner inputs ``wrt_idx``."""
    if not wrt_idx:
        return []
    # Each output is seeded through an alias of its own: a seeded Variable keeps exactly
    # its seed, so an output that also feeds another output would lose that one's share.
    known = {ViewOp()(o): g for o, g, on in zip(op.inner_outputs, g_args, live) if on}
    if not known:
        return [disconnected_type() for _ in wrt_idx]
    return list(
        grad(
            None,
            [op.inner_inputs[k] for k in wrt_idx],
            known_grads=known,
            disconnected_inputs="ignore",
            return_disconnected="disconnected",
            null_gradients="return",
            add_names=False,
        )
    )


def _ofg_pullback_override(op: Any, override: Any, g_types: list) -> Callable:
    """An OpFromGraph override, called on ``(*inputs, *outputs, *output_grads)`` (the
    explicit inputs only when it takes that many), as a callable override."""
    nout = len(op.output_types)
    counts = {len(op.input_types) + 2 * nout: False, op.n_explicit + 2 * nout: True}
    if override.n_explicit not in counts:
        raise ValueError(
            f"The lop_overrides OpFromGraph of {op} takes {override.n_explicit} inputs; it must take "
            f"the inputs, outputs and output gradients: {op.n_explicit + 2 * nout}"
        )
    explicit_only = counts[override.n_explicit]

    def call(inputs: list, outputs: list, grads: list) -> list:
        if explicit_only:
            inputs = inputs[: op.n_explicit]
        gs = [_zeros(o, t) if is_disconnected(g) else g for g, o, t in zip(grads, outputs, g_types)]
        return override(*inputs, *outputs, *gs, return_list=True)

    return call


def _fit_pullback(op: Any, inputs: list, output_grads: list, terms: list) -> list:
    """The terms as the gradient contract wants them, given the connection pattern."""
    pattern = op.connection_pattern(None)
    flowing = [not is_disconnected(g) for g in output_grads]  # an undefined one flows too
    result = []
    for x, row, term in zip(inputs, pattern, terms):
        if not any(p and f for p, f in zip(row, flowing)):
            result.append(disconnected_type())
            continue
        null = next((g for g, p in zip(output_grads, row) if p and is_null(g)), None)
        if null is not None:
            result.append(null)  # grad makes this input's gradient undefined anyway
        elif is_null(term):
            result.append(term)
        elif is_disconnected(term):
            result.append(_zero_grad(x))  # connected, but nothing flows: zero
        else:
            result.append(_match_dtype(x, term))
    return result


# --- pushforward ---------------------------------------------------------------------------------


def pushforward_rule(op: Any, eval_points: Sequence[Any]) -> PushforwardRule:
    """The pushforward of ``op`` for tangents given like ``eval_points`` (None or
    DisconnectedType: no tangent for that input)."""
    if len(eval_points) != len(op.input_types):
        raise ValueError(f"{op}.pushforward takes {len(op.input_types)} tangents, got {len(eval_points)}")
    live = tuple(e is not None and not _special(e) for e in eval_points)
    rule = op._pushforward_cache.get(live)
    if rule is None:
        rule = op._pushforward_cache[live] = _build_pushforward(op, live)
    return rule


def _build_pushforward(op: Any, live: tuple[bool, ...]) -> PushforwardRule:
    ins = op.inner_inputs
    t_types = [_float_type(x) for x in ins]
    t_args = [t(name=f"t{k}") for k, t in enumerate(t_types)]
    override = op.pushforward_overrides
    if isinstance(override, OpFromGraph):
        override = _ofg_pushforward_override(op, override)
    terms = _pushforward_terms(op, override, live, t_args)
    apply = _lower(op, [*ins, *t_args], terms, "pushforward")

    def rule(inputs: list, eval_points: list) -> list:
        ts = [_fit(e, t) if on else _zeros(x, t) for e, x, t, on in zip(eval_points, inputs, t_types, live)]
        results = apply([*inputs, *ts])
        return _fit_pushforward(op, eval_points, results)

    return rule


def _fit_pushforward(op: Any, eval_points: list, tangents: list) -> list:
    """The output tangents as the contract wants them; an undefined (NullType) input
    tangent makes the tangents of the outputs connected to that input undefined."""
    pattern = op.connection_pattern(None)
    nulls = [(e, row) for e, row in zip(eval_points, pattern) if e is not None and is_null(e)]
    result = []
    for j, (o, t) in enumerate(zip(op.inner_outputs, tangents)):
        null = next((e for e, row in nulls if row[j]), None)
        if null is not None:
            result.append(null)
        elif is_disconnected(t):
            result.append(disconnected_type())
        else:
            result.append(t if is_null(t) else _match_dtype(o, t))
    return result


def _pushforward_terms(op: Any, override: Any, live: tuple, t_args: list) -> list:
    outs = op.inner_outputs
    nout = len(outs)
    args = (list(op.inner_inputs), list(t_args))
    if override is None:
        return _default_tangents(op, list(range(nout)), live, t_args)
    if isinstance(override, (list, tuple)):
        return _entry_terms(
            op, "rop_overrides", list(override), args, lambda need: _default_tangents(op, need, live, t_args)
        )
    what = f"The rop_overrides callable of {op}"
    result = _as_term_list(override(*args), nout, nout, what)
    return [_one_term(r, j, what) for j, r in enumerate(result)]


def _default_tangents(op: Any, out_idx: list[int], live: tuple, t_args: list) -> list:
    """The inner graph's pushforward of the live tangents to the outputs ``out_idx``."""
    if not out_idx:
        return []
    wrt = [x for x, on in zip(op.inner_inputs, live) if on]
    if not wrt:
        return [disconnected_type() for _ in out_idx]
    return list(
        pushforward(
            [op.inner_outputs[j] for j in out_idx],
            wrt,
            [t for t, on in zip(t_args, live) if on],
            disconnected_outputs="ignore",
            return_disconnected="disconnected",
        )
    )


def _ofg_pushforward_override(op: Any, override: Any) -> Callable:
    counts = {2 * len(op.input_types): False, 2 * op.n_explicit: True}
    if override.n_explicit not in counts:
        raise ValueError(
            f"The rop_overrides OpFromGraph of {op} takes {override.n_explicit} inputs; it must take "
            f"the inputs and their tangents: {2 * op.n_explicit}"
        )
    explicit_only = counts[override.n_explicit]

    def call(inputs: list, tangents: list) -> list:
        if explicit_only:
            inputs, tangents = inputs[: op.n_explicit], tangents[: op.n_explicit]
        return override(*inputs, *tangents, return_list=True)

    return call
