"""Gradients of Elemwise, DimShuffle and CAReduce: pullbacks (replayed scalar templates) and
pushforwards."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote import scalar as ps
from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.graph.null_type import disconnected_type, grad_not_implemented, is_disconnected, is_null
from arignote.graph.traversal import io_toposort
from arignote.scalar.op import ScalarOp
from arignote.scalar.type import get_scalar_type
from arignote.tensor.alloc import ones_like
from arignote.tensor.conversion import constant
from arignote.tensor.elemwise import CAReduce, DimShuffle, Elemwise, as_tensor
from arignote.tensor.reductions import prod as tensor_prod
from arignote.tensor.reductions import sum
from arignote.tensor.reductions import sum as tensor_sum
from arignote.tensor.shape import _zero_grad
from arignote.tensor.ufuncs import add, cast, mul, second
from arignote.tensor.variable import TensorConstant

# --- gradients ----------------------------------------------------------------------------
# Elemwise: the scalar op's pullback is built once on scalar placeholders for each
# (scalar op, dtypes, which terms are wanted) and kept as a template: a list of scalar
# steps over numbered slots. Differentiating a node replays the template with the
# tensors in the slots, each step through one shared Elemwise per scalar op (so its
# typing cache serves every replay), then sums each term over the dimensions its input
# was broadcast along. The same rule serves fused Composites.
#
# ``memo`` (a dict the reverse pass keeps for one ``grad`` call) makes the replays share
# nodes: a step with the same scalar op and the same argument Variables is built once,
# so ``b * b`` gives one ``g * b`` for both of its inputs, not two.


_LIFTED: dict = {}  # scalar op -> the Elemwise that applies it
_TEMPLATES: dict = {}  # id(scalar op) -> (scalar op, {(dtypes, wanted terms): _Template})
_NO_GRAD = "no grad"  # a template slot kind: a DisconnectedType term


def _lifted(scalar_op: ScalarOp) -> Elemwise:
    op = _LIFTED.get(scalar_op)
    if op is None:
        op = _LIFTED[scalar_op] = Elemwise(scalar_op)
    return op


class _Template:
    """A scalar pullback as replayable steps.

    Slots ``0 .. n_in + n_out + n_g - 1`` hold the inputs, outputs and output gradients;
    then come constants (``consts``: ``(slot, tensor constant)``) and step results.
    ``steps``: ``(the Elemwise applying a scalar op, argument slots, result slots)``. ``results[i]``: the slot of
    input ``i``'s term, ``_NO_GRAD``, a ``NullType`` (an undefined term) or ``None``
    (not asked for).
    """

    __slots__ = ("consts", "n_slots", "results", "steps")

    def __init__(self, consts: list, n_slots: int, results: list, steps: list):
        self.consts, self.n_slots, self.results, self.steps = consts, n_slots, results, steps


def _build_template(
    scalar_op: ScalarOp,
    in_dtypes: tuple,
    out_dtypes: tuple,
    g_dtypes: tuple,
    wanted: tuple,
) -> _Template:
    s_inputs = [get_scalar_type(d)() for d in in_dtypes]
    s_outputs = [get_scalar_type(d)() for d in out_dtypes]
    s_grads = [disconnected_type() if d is None else get_scalar_type(d)() for d in g_dtypes]
    s_terms = scalar_op.pullback(s_inputs, s_outputs, s_grads)
    if not isinstance(s_terms, (list, tuple)) or len(s_terms) != len(s_inputs):
        n = len(s_terms) if isinstance(s_terms, (list, tuple)) else type(s_terms).__name__
        raise ValueError(f"{scalar_op}.pullback must return one term per input ({len(s_inputs)}), got {n}")
    slot: dict = {}
    for k, v in enumerate((*s_inputs, *s_outputs, *s_grads)):
        if not is_disconnected(v):
            slot[v] = k
    n = len(s_inputs) + len(s_outputs) + len(s_grads)
    consts: list = []

    def const_slot(v: Variable) -> int:
        nonlocal n
        if v.owner is not None or not hasattr(v, "data"):
            raise ValueError(
                f"{scalar_op}.pullback used {v}, which is neither one of its inputs nor a constant"
            )
        slot[v] = k = n
        n += 1
        consts.append((k, constant(v.data, dtype=v.type.dtype)))
        return k

    results: list = []
    roots = []
    for i, t in enumerate(s_terms):
        if not wanted[i]:
            results.append(None)
        elif t is None or is_disconnected(t):
            results.append(_NO_GRAD)
        elif is_null(t):
            results.append(t.type)
        elif isinstance(t, Variable):
            results.append(t)
            roots.append(t)
        else:
            raise TypeError(
                f"{scalar_op}.pullback returned {type(t).__name__} {t!r} for input {i}; expected a Variable"
            )
    steps = []
    for node in io_toposort(list(slot), roots):
        args = tuple(slot[v] if v in slot else const_slot(v) for v in node.inputs)
        outs = tuple(range(n, n + len(node.outputs)))
        n += len(node.outputs)
        slot.update(zip(node.outputs, outs))
        steps.append((_lifted(node.op), args, outs))
    for i, r in enumerate(results):
        if isinstance(r, Variable):
            results[i] = slot[r] if r in slot else const_slot(r)
    return _Template(consts, n, results, steps)


def _template(
    op: Elemwise, inputs: Sequence, outputs: Sequence, output_grads: Sequence, wanted: tuple
) -> _Template:

    g_dtypes = tuple(None if is_disconnected(g) else g.type.dtype for g in output_grads)
    key = (
        tuple(i.type.dtype for i in inputs),
        tuple(o.type.dtype for o in outputs),
        g_dtypes,
        wanted,
    )
    sop = op.scalar_op
    # keyed by identity (hashing an Op's props costs more); the entry keeps the op alive
    entry = _TEMPLATES.get(id(sop))
    if entry is None or entry[0] is not sop:
        entry = _TEMPLATES[id(sop)] = (sop, {})
    tpl = entry[1].get(key)
    if tpl is None:
        tpl = entry[1][key] = _build_template(sop, *key)
    return tpl


def _replay(
    tpl: _Template, inputs: Sequence, outputs: Sequence, output_grads: Sequence, memo: dict | None
) -> list:
    """The template's steps on tensors: the full-shape terms (not summed over broadcast
    dimensions), one per input (``None`` where the template has none)."""
    vals: list = [*inputs, *outputs, *output_grads]
    vals.extend([None] * (tpl.n_slots - len(vals)))
    for k, c in tpl.consts:
        vals[k] = c
    for eop, args, outs in tpl.steps:
        res = _apply(eop, [vals[k] for k in args], memo)
        for k, r in zip(outs, res):
            vals[k] = r
    return [r if isinstance(r, int) else None for r in tpl.results], vals


#: a step of a replayed pullback on constants of at most this many elements is computed
#: at once (a constant), as constant folding would do: ``1.0 * 4.0`` for each of 10,000
#: terms ``v[i] * (i + 1)`` is 10,000 nodes less to copy and to rewrite
_FOLD_SIZE = 16


def _apply(eop: Elemwise, args: list, memo: dict | None) -> list:
    """``eop(*args)`` (its outputs), reusing a node built earlier in this ``grad`` call
    for the same scalar op and arguments; a step on small constants is computed."""
    if all(type(a) is TensorConstant and a.data.size <= _FOLD_SIZE for a in args):
        node = eop.make_node(*args)
        cells = [[None] for _ in node.outputs]
        eop.perform(node, [a.data for a in args], cells)
        return [out.type.make_constant(c[0]) for out, c in zip(node.outputs, cells)]
    if memo is None:
        return eop(*args, return_list=True)
    nd = max(v.type.ndim for v in args)
    for i, v in enumerate(args):
        if v.type.ndim < nd:  # pad here (once per grad call), not in make_node
            args[i] = _padded(v, nd, memo)
    key = (id(eop.scalar_op), *args)
    res = memo.get(key)
    if res is None:
        res = memo[key] = eop(*args, return_list=True)
    return res


def _padded(v: Variable, ndim: int, memo: dict) -> Variable:
    key = ("pad", v, ndim)
    out = memo.get(key)
    if out is None:
        nd = v.type.ndim
        out = memo[key] = DimShuffle(input_ndim=nd, new_order=["x"] * (ndim - nd) + list(range(nd)))(v)
    return out


def _elemwise_pullback(
    op: Elemwise,
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    output_grads: Sequence[Variable],
    wanted: Sequence[bool] | None = None,
    memo: dict | None = None,
) -> list:
    """One gradient term per input; ``wanted[i]`` false: input ``i``'s term is not built
    (a DisconnectedType placeholder stands in for it)."""

    wanted = (True,) * len(inputs) if wanted is None else tuple(wanted)
    if memo is not None and not op.inplace_pattern:
        memo.setdefault((id(op.scalar_op), *inputs), list(outputs))
    tpl = _template(op, inputs, outputs, output_grads, wanted)
    slots, vals = _replay(tpl, inputs, outputs, output_grads, memo)
    terms = []
    for x, r, k in zip(inputs, tpl.results, slots):
        if k is not None:
            terms.append(_unbroadcast(as_tensor(vals[k]), x, memo))
        elif r is None or r is _NO_GRAD:
            terms.append(disconnected_type())
        else:  # a NullType: the term is undefined / not implemented
            terms.append(r())
    return terms


def _unbroadcast(g: Variable, x: Variable, memo: dict | None = None) -> Variable:
    """``g`` (shaped like the output) summed down to ``x``'s shape and cast to its dtype."""
    xt, gt = x.type, g.type
    dtype = xt.dtype if np.dtype(xt.dtype).kind in "fc" else config.floatX
    axes = tuple(d for d, (xs, gs) in enumerate(zip(xt.shape, gt.shape)) if xs == 1 and gs != 1)
    pad = xt.ndim - gt.ndim
    if not axes and not pad and gt.dtype == dtype:
        return g
    key = ("unbroadcast", g, axes, pad, dtype)
    if memo is not None:
        hit = memo.get(key)
        if hit is not None:
            return hit
    if pad > 0:  # a broadcast constant result: give it x's dimensions
        g = DimShuffle(input_ndim=gt.ndim, new_order=["x"] * pad + list(range(gt.ndim)))(g)
    if axes:
        g = sum(g, axis=list(axes), keepdims=True)
    g = cast(g, dtype)
    if memo is not None:
        memo[key] = g
    return g


def _careduce_pullback(
    op: CAReduce,
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    output_grads: Sequence[Variable],
    memo: dict | None = None,
) -> list:
    (x,) = inputs
    (out,) = outputs
    (g,) = output_grads
    if is_disconnected(g):
        return [g]
    if np.dtype(out.type.dtype).kind in "biu" and np.dtype(x.type.dtype).kind in "biu":
        return [_zero_grad(x)]

    def ew(sop: ScalarOp, *args: Any) -> Variable:
        vals = [a if isinstance(a, Variable) else constant(a) for a in args]
        return _apply(_lifted(sop), vals, memo)[0]

    axes = tuple(range(x.type.ndim)) if op.axis is None else op.axis
    expand = _reduced_dims_back(x, out, axes, memo)
    name = op.scalar_op.name
    if name == "add":
        gx = ew(ps.second, x, expand(g))
    elif name == "mul":
        is_zero = ew(ps.eq, x, 0)
        n_zero = tensor_sum(is_zero, axis=axes, keepdims=True)
        x_or_one = ew(ps.switch, is_zero, 1, x)
        prod_nonzero = tensor_prod(x_or_one, axis=axes, keepdims=True)
        # d prod / d x_i = prod of the others: P / x_i without zeros; the product of the
        # nonzeros at the only zero; 0 wherever two or more zeros remain
        gx = ew(
            ps.mul,
            expand(g),
            ew(
                ps.switch,
                ew(ps.eq, n_zero, 0),
                ew(ps.true_div, expand(out), x_or_one),
                ew(ps.switch, ew(ps.and_, ew(ps.eq, n_zero, 1), is_zero), prod_nonzero, 0),
            ),
        )
    elif name in ("maximum", "minimum"):
        # every position equal to the extremum gets the gradient (a subgradient)
        gx = ew(ps.mul, expand(g), ew(ps.eq, x, expand(out)))
    else:
        return [grad_not_implemented(op, 0, x, f"no gradient rule for reductions with {op.scalar_op}")]
    return [_unbroadcast(gx, x, memo)]


def _reduced_dims_back(x: Variable, out: Variable, axes: tuple, memo: dict | None = None) -> Any:
    """A function giving a reduction's output (or its gradient) the reduced dimensions back
    (as broadcastable ones), so that it lines up with ``x``."""
    if not axes:
        return lambda v: v
    order: list = []
    kept = iter(range(out.type.ndim))
    for d in range(x.type.ndim):
        order.append("x" if d in axes else next(kept))
    order_t = tuple(order)

    def expand(v: Variable) -> Variable:
        v = as_tensor(v)
        key = ("expand", v, order_t)
        hit = memo.get(key) if memo is not None else None
        if hit is None:
            hit = DimShuffle(input_ndim=v.type.ndim, new_order=order)(v)
            if memo is not None:
                memo[key] = hit
        return hit

    return expand


# --- pushforwards (Jacobian-vector products, the seeds' R_op) -------------------------------
# A tangent that is DisconnectedType (or None, the seeds' spelling) counts as zero.


def _no_tangent(t: Any) -> bool:

    return t is None or is_disconnected(t)


def _elemwise_pushforward(
    self: Elemwise, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
) -> list:
    """``sum_i (d out / d x_i) * t_i`` per output, the partials taken from the scalar op's
    pullback (replayed with a unit output gradient, without summing over broadcast
    dimensions)."""
    live = tuple(not _no_tangent(t) for t in tangents)
    if not any(live):
        return [disconnected_type() for _ in outputs]
    if any(np.dtype(v.type.dtype).kind == "c" for v in (*inputs, *outputs)):
        # a partial from the pullback is the conjugate derivative, and ops such as conj, real,
        # abs or complex(x, y) are not holomorphic: no single partial gives their tangent.
        # Rop then takes the pullback route (two reverse passes), which is exact.
        raise NotImplementedError(f"{self}: no direct pushforward with complex values")
    results = []
    for j, out in enumerate(outputs):
        if np.dtype(out.type.dtype).kind in "biu":  # integer-valued: f(x + eps) == f(x)
            results.append(_zero_grad(out))
            continue
        one = constant(np.ones((), dtype=out.type.dtype))
        grads = [one if k == j else disconnected_type() for k in range(len(outputs))]
        tpl = _template(self, inputs, outputs, grads, live)
        slots, vals = _replay(tpl, inputs, outputs, grads, None)
        acc = None
        for i, (k, r) in enumerate(zip(slots, tpl.results)):
            if not live[i]:
                continue
            if k is None:
                if r is not None and r is not _NO_GRAD:  # undefined partial: undefined tangent
                    acc = r()
                    break
                continue
            partial = vals[k]
            t = as_tensor(tangents[i])
            term = t if partial is one else mul(partial, t)
            acc = term if acc is None else add(acc, term)
        if acc is None:
            results.append(disconnected_type())
            continue

        if not is_null(acc):
            acc = cast(acc, out.type.dtype)
            if acc.type.ndim != out.type.ndim or any(
                a == 1 and o != 1 for a, o in zip(acc.type.shape, out.type.shape)
            ):
                acc = second(out, acc)  # a tangent broadcast along dimensions of the output
        results.append(acc)
    return results


def _dimshuffle_pushforward(
    self: DimShuffle, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
) -> list:
    """The same shuffle of the tangent."""

    (t,) = tangents
    if _no_tangent(t):
        return [disconnected_type()]
    return [self(as_tensor(t))]


def _careduce_pushforward(
    self: CAReduce, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
) -> list:
    """The reduction's partials (its pullback with a unit gradient) times the tangent,
    summed over the reduced axes."""
    (out,) = outputs
    (t,) = tangents
    if _no_tangent(t):
        return [disconnected_type()]
    if np.dtype(out.type.dtype).kind in "biu":
        return [_zero_grad(out)]
    t = as_tensor(t)
    axis = None if self.axis is None else list(self.axis)
    if self.scalar_op.name == "add":
        return [cast(sum(t, axis=axis), out.type.dtype)]
    (partial,) = _careduce_pullback(self, inputs, outputs, [ones_like(out)])
    if is_null(partial):
        return [partial]
    return [cast(sum(partial * t, axis=axis), out.type.dtype)]


# The methods live here, next to the rules they use (an Op subclass that defines its own
# pushforward / R_op overrides them).
