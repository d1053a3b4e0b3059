"""Rules that replace numerically unstable forms by stable ones (the stabilize stage).

Each rule rewrites a form that overflows, underflows or cancels into one computed
without that loss: ``log(1 + x)`` into ``log1p(x)``, ``exp(x) - 1`` into ``expm1(x)``,
``log1p(exp(x))`` into ``softplus(x)``, ``log(sigmoid(x))`` into ``-softplus(-x)``,
``1 - sigmoid(x)`` into ``sigmoid(-x)``, ``log(1 - exp(x))`` into ``log1mexp(x)``,
``exp(x) / (1 + exp(x))`` and ``1 / (1 + exp(-x))`` into ``sigmoid(x)`` (gradients of
softplus and log-sigmoid are such products), ``exp(v) / sum(exp(v))`` into softmax,
``log(softmax(v))`` into log-softmax, ``log(sum(exp(v)))`` into a max-shifted
log-sum-exp, ``sqrt(x**2)`` into ``abs(x)`` and ``log(erfc(x))`` into a form exact for
large ``x``.

The canonicalize stage runs first and may change how sums and products are written, so
the rules read them through two views: :func:`_terms` (a sum as signed terms: ``add``,
``sub``, ``neg``, ``mul`` by -1) and :func:`_factors` (a product tree as a sign, numerator
and denominator factors: ``mul``, ``true_div``, ``reciprocal``, ``neg``, small integer
powers). Constants are recognised through DimShuffles and casts. Only real float
outputs are rewritten; a replacement has exactly the Type of what it replaces (cast to a
wider-or-equal computed dtype, or the rule declines).

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> x = pt.dscalar("x")
>>> float(arignote.function([x], pt.log(1 + pt.exp(x)))(1000.0))
1000.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.graph.rewriting.engine import offer_memo
from arignote.scalar import basic as psb
from arignote.scalar import special as pss
from arignote.tensor.conversion import constant
from arignote.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from arignote.tensor.reductions import Max
from arignote.tensor.rewriting.elemwise import elemwise_of
from arignote.tensor.special import LogSoftmax, Softmax
from arignote.tensor.ufuncs import abs as tabs
from arignote.tensor.ufuncs import (
    add,
    cast,
    erf,
    erfcx,
    exp,
    expm1,
    gt,
    isinf,
    log,
    log1mexp,
    log1p,
    maximum,
    minimum,
    mul,
    neg,
    sigmoid,
    softplus,
    sqr,
    sub,
    switch,
    true_div,
)

__all__ = [
    "local_exp_over_1_plus_exp",
    "local_expm1",
    "local_log1p",
    "local_log1p_of_exp",
    "local_log_erfc",
    "local_log_of_neg_expm1",
    "local_log_sigmoid",
    "local_log_softmax",
    "local_log_sum_exp",
    "local_one_minus_sigmoid",
    "local_softmax",
    "local_sqrt_sqr",
]

_FLOATS = frozenset({"float16", "float32", "float64"})
#: how many nodes of a product tree :func:`_factors` reads (patterns are local; this keeps
#: a product of thousands of factors from costing a walk per node)
_MAX_FACTORS = 64
#: ``log(erfc(x))`` is ``log1p(-erf(x))`` below this and ``log(erfcx(x)) - x**2`` above
_ERFC_SPLIT = 0.5


# --- reading graphs -----------------------------------------------------------------------


def _scalar_op(v: Variable) -> psb.ScalarOp | None:
    """The scalar op of the single-output Elemwise computing ``v``, or None."""
    node = v.owner
    if node is not None and isinstance(node.op, Elemwise) and len(node.outputs) == 1:
        return node.op.scalar_op
    return None


def _arg(v: Variable, cls: type) -> Variable | None:
    """``x`` when ``v`` is ``f(x)`` for an elementwise ``f`` of scalar op class ``cls``."""
    if isinstance(_scalar_op(v), cls) and len(v.owner.inputs) == 1:
        return v.owner.inputs[0]
    return None


def _is_float(v: Variable) -> bool:
    return getattr(v.type, "dtype", None) in _FLOATS


def _const(v: Variable) -> float | None:
    """The value of ``v`` when it is one known real number that cannot widen anything it
    is combined with (every dimension of static length 1): a constant, seen through
    DimShuffles, negations and casts to float. Else None."""
    if any(s != 1 for s in v.type.shape):
        return None
    negate = False
    for _ in range(8):
        if isinstance(v, Constant):
            value = _constant_value(v)
            return None if value is None else -value if negate else value
        node = v.owner
        if node is None:
            return None
        if isinstance(node.op, DimShuffle):
            v = node.inputs[0]
            continue
        op = _scalar_op(v)
        if isinstance(op, psb.Neg):
            negate = not negate
        elif not (isinstance(op, psb.Identity) or (isinstance(op, psb.Cast) and _is_float(v))):
            return None
        v = node.inputs[0]
    return None


def _constant_value(c: Constant) -> float | None:
    """The one real number a size-1 constant holds (else None), read once per constant:
    the rules ask about the same constants again and again."""
    cached = c.__dict__.get("_real_value", _UNREAD)
    if cached is _UNREAD:
        data = np.asarray(c.data)
        cached = float(data.reshape(())) if data.size == 1 and data.dtype.kind in "biuf" else None
        c.__dict__["_real_value"] = cached
    return cached


_UNREAD = object()


def _same(a: Variable, b: Variable, depth: int = 6) -> bool:
    """Whether ``a`` and ``b`` compute the same thing, looking ``depth`` nodes deep (the
    merge pass makes most equal computations one Variable; rules build fresh copies)."""
    if a is b:
        return True
    if depth == 0 or a.type != b.type:
        return False
    if isinstance(a, Constant) or isinstance(b, Constant):
        return isinstance(a, Constant) and isinstance(b, Constant) and a.equals(b)
    na, nb = a.owner, b.owner
    if na is None or nb is None or na.op != nb.op or a.index != b.index or len(na.inputs) != len(nb.inputs):
        return False
    return all(_same(x, y, depth - 1) for x, y in zip(na.inputs, nb.inputs))


def _neg_arg(v: Variable) -> Variable | None:
    """``x`` when ``v`` is ``-x`` (``neg(x)``, ``-1 * x`` or ``x * -1``)."""
    x = _arg(v, psb.Neg)
    if x is not None:
        return x
    if isinstance(_scalar_op(v), psb.Mul) and len(v.owner.inputs) == 2:
        a, b = v.owner.inputs
        if _const(a) == -1 and b.type == v.type:
            return b
        if _const(b) == -1 and a.type == v.type:
            return a
    return None


def _signed(v: Variable, sign: int = 1) -> tuple[int, Variable]:
    """``(sign, x)`` with the negations around ``x`` folded into ``sign``."""
    for _ in range(8):
        x = _neg_arg(v)
        if x is None:
            break
        sign, v = -sign, x
    return sign, v


def _terms(v: Variable, fgraph: FunctionGraph | None = None) -> list[tuple[int, Variable]] | None:
    """``v`` as signed terms when it is a float sum (``add`` of any arity or ``sub``), each
    term stripped of its negations; else None. With ``fgraph``, a term that is itself a sum
    in the same dtype used by nothing else is read through too (``exp(x) + y - 1``)."""
    if not _is_float(v) or not isinstance(_scalar_op(v), (psb.Add, psb.Sub)):
        return None
    out: list[tuple[int, Variable]] = []
    todo = [(1, v)]
    budget = _MAX_FACTORS
    while todo:
        sign, t = todo.pop()
        op = _scalar_op(t)
        budget -= 1
        inner = t is v or (
            fgraph is not None
            and budget > 0
            and t.type.dtype == v.type.dtype
            and len(fgraph.clients.get(t, ())) == 1
        )
        if inner and isinstance(op, psb.Add):
            todo.extend(_signed(i, sign) for i in reversed(t.owner.inputs))
        elif inner and isinstance(op, psb.Sub):
            a, b = t.owner.inputs
            todo.extend([_signed(b, -sign), _signed(a, sign)])
        else:
            out.append((sign, t))
    return out


def _split_constant(terms: list[tuple[int, Variable]], value: float) -> list[tuple[int, Variable]] | None:
    """The other terms when exactly one term of ``terms`` is the constant ``value``."""
    hits = [k for k, (s, t) in enumerate(terms) if (c := _const(t)) is not None and s * c == value]
    if len(hits) != 1:
        return None
    return [term for k, term in enumerate(terms) if k != hits[0]]


def _one_plus_exp(v: Variable) -> Variable | None:
    """``y`` when ``v`` is ``1 + exp(y)`` (in any order and spelling)."""
    terms = _terms(v)
    if terms is None or len(terms) != 2:
        return None
    rest = _split_constant(terms, 1.0)
    if rest is None:
        return None
    ((sign, t),) = rest
    return _arg(t, psb.Exp) if sign > 0 else None


# --- building -----------------------------------------------------------------------------


def _apply(fgraph: FunctionGraph, op: Op, *inputs: Variable) -> Variable:
    """``op(*inputs)``, reusing a node of ``fgraph`` that already computes it."""
    for client, _ in fgraph.clients.get(inputs[0], ()):
        same_inputs = len(client.inputs) == len(inputs) and all(a is b for a, b in zip(client.inputs, inputs))
        if same_inputs and client.op == op:
            return client.outputs[0]
    return op(*inputs)


def _negate(fgraph: FunctionGraph, x: Variable) -> Variable:
    """``-x``, unwrapping ``x`` when it is a negation already."""
    inner = _neg_arg(x)
    return inner if inner is not None else _apply(fgraph, neg, x)


def _as_dtype(v: Variable, dtype: str) -> Variable:
    """``v`` in ``dtype`` (a constant converted when that is exact, else a cast), so that a
    rebuilt sum or product computes in the dtype the original did, from its first operation."""
    if v.type.dtype == dtype:
        return v
    if isinstance(v, Constant):
        data = np.asarray(v.data)
        converted = data.astype(dtype)
        if np.array_equal(converted.astype(data.dtype), data):
            return constant(converted)
    return cast(v, dtype)


def _sum_of(fgraph: FunctionGraph, terms: Sequence[tuple[int, Variable]], dtype: str) -> Variable:
    """The sum of signed ``terms`` (at least one), in ``dtype``."""
    pos = [_as_dtype(t, dtype) for s, t in terms if s > 0]
    negs = [_as_dtype(t, dtype) for s, t in terms if s < 0]
    out = pos[0] if pos else _apply(fgraph, neg, negs.pop(0))
    for t in pos[1:]:
        out = add(out, t)
    for t in negs:
        out = sub(out, t)
    return out


def _finish(new: Variable, old: Variable) -> list[Variable] | None:
    """``[new]`` given exactly ``old``'s Type: left-padded with broadcastable dimensions
    where ``old`` has them, cast to ``old``'s dtype when ``new`` was computed at least as
    precisely; None (decline) when that is not possible."""
    missing = old.type.ndim - new.type.ndim
    if missing > 0:
        if any(s != 1 for s in old.type.shape[:missing]):
            return None
        new = DimShuffle(input_ndim=new.type.ndim, new_order=["x"] * missing + list(range(new.type.ndim)))(
            new
        )
    if new.type.ndim != old.type.ndim:
        return None
    if new.type.dtype != old.type.dtype:
        if not (_is_float(new) and _is_float(old)):
            return None
        if np.dtype(new.type.dtype).itemsize < np.dtype(old.type.dtype).itemsize:
            return None
        new = cast(new, old.type.dtype)
    if new.type != old.type:
        return None
    return [new]


# --- sums: expm1, 1 - sigmoid ---------------------------------------------------------------


def _might_hold(v: Variable, cls: type) -> bool:
    """Whether the sum ``v`` may have a term computed by ``cls`` (cheap: its inputs, seen
    through negations, are such terms or further sums)."""
    wanted = (cls, psb.Add, psb.Sub)
    for i in v.owner.inputs:
        op = _scalar_op(i)
        if op is None:
            continue  # (a constant, an input, another kind of node)
        if isinstance(op, wanted) or (
            isinstance(op, (psb.Neg, psb.Mul)) and isinstance(_scalar_op(_signed(i)[1]), wanted)
        ):
            return True
    return False


def _rewrite_pair(
    fgraph: FunctionGraph,
    node: Apply,
    cls: type,
    pick: Callable[[float, int, Variable], tuple[int, Variable] | None],
) -> list[Variable] | None:
    """Replace a constant term and one term computed by ``cls`` of a float sum by one new
    term: ``pick(const_value, sign, term)`` returns ``(sign, new_term)`` or None."""
    if not isinstance(node.op.scalar_op, (psb.Add, psb.Sub)) or not _might_hold(node.outputs[0], cls):
        return None
    out = node.outputs[0]
    memo = offer_memo(fgraph, node)
    terms = memo.get("terms", False)
    if terms is False:  # each sum rule reads the same terms: once per node
        terms = memo["terms"] = _terms(out, fgraph)
    if terms is None or not any(isinstance(_scalar_op(t), cls) for _, t in terms):
        return None
    for i, (si, ti) in enumerate(terms):
        c = _const(ti)
        if c is None:
            continue
        for j, (sj, tj) in enumerate(terms):
            if j == i:
                continue
            found = pick(si * c, sj, tj)
            if found is None:
                continue
            rest = [t for k, t in enumerate(terms) if k not in (i, j)]
            return _finish(_sum_of(fgraph, [found, *rest], out.type.dtype), out)
    return None


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(psb.Add, psb.Sub), needs=elemwise_of(psb.Exp))
def local_expm1(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``exp(x) - 1`` -> ``expm1(x)`` and ``1 - exp(x)`` -> ``-expm1(x)`` (also among other
    terms of a sum): exact near ``x = 0``, where ``exp(x) - 1`` keeps few digits."""

    def pick(c: float, sign: int, term: Variable) -> tuple[int, Variable] | None:
        x = _arg(term, psb.Exp)
        if x is None or c != -sign:
            return None
        return sign, _apply(fgraph, expm1, x)

    return _rewrite_pair(fgraph, node, psb.Exp, pick)


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(psb.Add, psb.Sub), needs=elemwise_of(pss.Sigmoid))
def local_one_minus_sigmoid(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``1 - sigmoid(x)`` -> ``sigmoid(-x)`` (and ``sigmoid(x) - 1`` -> ``-sigmoid(-x)``):
    ``1 - sigmoid(x)`` is 0 for ``x`` past 37, ``sigmoid(-x)`` its exact value."""

    def pick(c: float, sign: int, term: Variable) -> tuple[int, Variable] | None:
        x = _arg(term, pss.Sigmoid)
        if x is None or c != -sign:
            return None
        return -sign, _apply(fgraph, sigmoid, _negate(fgraph, x))

    return _rewrite_pair(fgraph, node, pss.Sigmoid, pick)


# --- logarithms -----------------------------------------------------------------------------


def _float_input(node: Apply, cls: type) -> Variable | None:
    """The input of a float ``cls`` elementwise node (``log``, ``log1p``, ``sqrt``...), else None."""
    if not isinstance(node.op.scalar_op, cls) or not _is_float(node.outputs[0]):
        return None
    return node.inputs[0]


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(psb.Log))
def local_log1p(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``log(1 + x)`` -> ``log1p(x)`` (any order, any other terms, ``1 - x`` too): exact
    for small ``x``, where ``1 + x`` rounds ``x`` away."""
    u = _float_input(node, psb.Log)
    if u is None:
        return None
    terms = _terms(u, fgraph)
    rest = _split_constant(terms, 1.0) if terms else None
    if not rest:
        return None
    return _finish(_apply(fgraph, log1p, _sum_of(fgraph, rest, u.type.dtype)), node.outputs[0])


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(psb.Log1p))
def local_log1p_of_exp(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``log1p(exp(x))`` -> ``softplus(x)`` (exact where ``exp(x)`` overflows),
    ``log1p(-exp(x))`` -> ``log1mexp(x)``, ``log1p(-sigmoid(x))`` -> ``-softplus(x)`` and
    ``log1p(expm1(x))`` -> ``x``."""
    u = _float_input(node, psb.Log1p)
    if u is None:
        return None
    sign, t = _signed(u)
    x = _arg(t, psb.Exp)
    if x is not None and _is_float(x):
        new = _apply(fgraph, softplus if sign > 0 else log1mexp, x)
        return _finish(new, node.outputs[0])
    x = _arg(t, pss.Sigmoid)
    if x is not None and sign < 0 and _is_float(x):
        return _finish(_apply(fgraph, neg, _apply(fgraph, softplus, x)), node.outputs[0])
    x = _arg(t, psb.Expm1)
    if x is not None and sign > 0 and x.type == node.outputs[0].type:
        return [x]
    return None


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(psb.Log))
def local_log_of_neg_expm1(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``log(-expm1(x))`` (what ``log(1 - exp(x))`` becomes) -> ``log1mexp(x)``: exact for
    ``x`` near 0 and for very negative ``x``."""
    u = _float_input(node, psb.Log)
    if u is None:
        return None
    sign, t = _signed(u)
    x = _arg(t, psb.Expm1)
    if x is None or sign > 0 or not _is_float(x):
        return None
    return _finish(_apply(fgraph, log1mexp, x), node.outputs[0])


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(psb.Log))
def local_log_sigmoid(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``log(sigmoid(x))`` -> ``-softplus(-x)``: exact where ``sigmoid(x)`` underflows
    (``x < -745``) or rounds to 1 (``x > 37``)."""
    u = _float_input(node, psb.Log)
    x = _arg(u, pss.Sigmoid) if u is not None else None
    if x is None or not _is_float(x):
        return None
    sp = _apply(fgraph, softplus, _negate(fgraph, x))
    return _finish(_apply(fgraph, neg, sp), node.outputs[0])


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(psb.Log))
def local_log_softmax(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``log(softmax(x))`` -> ``log_softmax(x)`` (same axis): no ``log(0)`` where an entry
    of the softmax underflows."""
    u = _float_input(node, psb.Log)
    if u is None or u.owner is None or type(u.owner.op) is not Softmax:
        return None
    return _finish(LogSoftmax(axis=u.owner.op.axis)(u.owner.inputs[0]), node.outputs[0])


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(psb.Log))
def local_log_erfc(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``log(erfc(x))`` -> ``switch(x > 0.5, log(erfcx(x)) - x**2, log1p(-erf(x)))``.

    ``erfc(x)`` underflows past ``x = 26.5``; ``log(erfcx(x)) - x**2`` is exact for all
    ``x > 0`` but the cancellation-free sum of two negative terms only away from 0, where
    ``log1p(-erf(x))`` is exact instead (and for all ``x <= 0``). Each branch reads ``x``
    clipped to its side, so the branch not taken computes nothing that warns."""
    u = _float_input(node, psb.Log)
    x = _arg(u, pss.Erfc) if u is not None else None
    if x is None or not _is_float(x):
        return None
    split = constant(np.asarray(_ERFC_SPLIT, dtype=x.type.dtype))
    large = sub(log(erfcx(maximum(x, split))), sqr(x))
    small = log1p(neg(erf(minimum(x, split))))
    return _finish(switch(gt(x, split), large, small), node.outputs[0])


def _strip_dimshuffles(v: Variable) -> tuple[Variable, list[DimShuffle]]:
    """``v`` without the DimShuffles around it, and those (innermost first)."""
    ops: list[DimShuffle] = []
    while v.owner is not None and isinstance(v.owner.op, DimShuffle):
        ops.append(v.owner.op)
        v = v.owner.inputs[0]
    return v, ops[::-1]


def _sum_node(v: Variable) -> Apply | None:
    """The node of ``v`` when it is a sum reduction (not a product)."""
    node = v.owner
    if node is not None and isinstance(node.op, CAReduce) and isinstance(node.op.scalar_op, psb.Add):
        return node
    return None


def _reduced_axes(node: Apply) -> tuple[int, ...]:
    ndim = node.inputs[0].type.ndim
    return tuple(range(ndim)) if node.op.axis is None else tuple(node.op.axis)


def _keepdims_order(ndim: int, axes: tuple[int, ...]) -> tuple:
    """The DimShuffle order that puts the reduced axes back as broadcastable dimensions."""
    kept = [d for d in range(ndim) if d not in axes]
    return tuple("x" if d in axes else kept.index(d) for d in range(ndim))


def _is_max_shifted(y: Variable) -> bool:
    """Whether ``y`` is ``a - m`` with ``m`` computed from ``max(a)``: its ``exp`` cannot
    overflow (the form :func:`local_log_sum_exp` builds)."""
    terms = _terms(y)
    if terms is None or len(terms) != 2:
        return False
    pos = [t for s, t in terms if s > 0]
    negs = [t for s, t in terms if s < 0]
    if len(pos) != 1 or len(negs) != 1:
        return False
    todo, seen = [negs[0]], 0
    while todo and seen < 16:
        v = todo.pop()
        seen += 1
        node = v.owner
        if node is None:
            continue
        is_max = isinstance(node.op, CAReduce) and isinstance(node.op.scalar_op, psb.Maximum)
        if is_max and _same(node.inputs[0], pos[0]):
            return True
        todo.extend(node.inputs)
    return False


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(psb.Log))
def local_log_sum_exp(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``log(sum(exp(x), axes))`` -> ``m + log(sum(exp(x - m), axes))`` with ``m`` the
    maximum over ``axes`` (0 where it is infinite, so that ``-inf`` slices give ``-inf``):
    no overflow. DimShuffles between the log and the sum (``keepdims``) are kept."""
    u = _float_input(node, psb.Log)
    if u is None:
        return None
    s, shuffles = _strip_dimshuffles(u)
    snode = _sum_node(s)
    if snode is None:
        return None
    y = _arg(snode.inputs[0], psb.Exp)
    if y is None or not _is_float(y) or y.type.ndim == 0 or _is_max_shifted(y):
        return None
    axes = _reduced_axes(snode)
    m = Max(axis=snode.op.axis)(y)
    m_safe = switch(isinf(m), constant(np.asarray(0, dtype=y.type.dtype)), m)
    m_keep = DimShuffle(input_ndim=m_safe.type.ndim, new_order=_keepdims_order(y.type.ndim, axes))(m_safe)
    out = add(log(snode.op(exp(sub(y, m_keep)))), m_safe)
    for op in shuffles:
        out = op(out)
    return _finish(out, node.outputs[0])


# --- products: sigmoid, cancellation, softmax -----------------------------------------------

_PRODUCT_OPS = (psb.Mul, psb.TrueDiv, psb.Reciprocal, psb.Neg)


def _is_product(node: Apply, dtype: str) -> bool:
    """Whether :func:`_factors` reads through ``node`` inside a ``dtype`` product: an
    elementwise product, quotient, reciprocal or negation computing in ``dtype``."""
    if not isinstance(node.op, Elemwise) or len(node.outputs) != 1:
        return False
    if not isinstance(node.op.scalar_op, _PRODUCT_OPS) or node.outputs[0].type.dtype != dtype:
        return False
    return all(i.type.dtype == dtype or _const(i) is not None for i in node.inputs)


def _interesting(v: Variable) -> bool:
    """Factors the product rules act on: ``1 + exp(y)``, ``sigmoid``, ``exp``, sums."""
    op = _scalar_op(v)
    return isinstance(op, (pss.Sigmoid, psb.Exp)) or _one_plus_exp(v) is not None or _sum_of_exp(v)


def _power(v: Variable, dtype: str) -> tuple[Variable, int] | None:
    """``(base, k)`` when ``v`` is ``base ** k`` (``sqr`` or ``pow`` by a small integer) of
    an interesting base (or ``k = -1``)."""
    op = _scalar_op(v)
    if v.type.dtype != dtype:
        return None
    if isinstance(op, psb.Sqr):
        base, k = v.owner.inputs[0], 2
    elif isinstance(op, psb.Pow):
        base, e = v.owner.inputs
        c = _const(e)
        if c is None or c != int(c) or not -4 <= c <= 4 or c == 0:
            return None
        k = int(c)
    else:
        return None
    if base.type.dtype != dtype or (k != -1 and not _interesting(base)):
        return None
    return base, k


def _factors(v: Variable, dtype: str) -> tuple[int, list[Variable], list[Variable]]:
    """``v`` as ``sign * prod(numerator) / prod(denominator)``, read through products,
    quotients, reciprocals, negations and small powers computing in ``dtype``."""
    sign = 1
    num: list[Variable] = []
    den: list[Variable] = []
    todo: list[tuple[Variable, bool]] = [(v, False)]
    budget = _MAX_FACTORS
    while todo:
        u, inverted = todo.pop()
        node = u.owner
        budget -= 1
        if node is not None and budget > 0:
            if _is_product(node, dtype):
                op = node.op.scalar_op
                if isinstance(op, psb.Mul):
                    todo.extend((i, inverted) for i in reversed(node.inputs))
                elif isinstance(op, psb.TrueDiv):
                    todo.extend([(node.inputs[1], not inverted), (node.inputs[0], inverted)])
                elif isinstance(op, psb.Reciprocal):
                    todo.append((node.inputs[0], not inverted))
                else:  # Neg
                    sign = -sign
                    todo.append((node.inputs[0], inverted))
                continue
            power = _power(u, dtype)
            if power is not None:
                base, k = power
                todo.extend([(base, inverted if k > 0 else not inverted)] * abs(k))
                continue
        (den if inverted else num).append(u)
    return sign, num, den


def _absorbed(fgraph: FunctionGraph, v: Variable) -> bool:
    """Whether every client of ``v`` is a product reading through it, so that the rule is
    better applied once at the root of the product tree."""
    clients = fgraph.clients.get(v, ())
    return bool(clients) and all(_is_product(c, v.type.dtype) for c, _ in clients)


def _product_of(sign: int, num: list[Variable], den: list[Variable], dtype: str) -> Variable:
    """``sign * prod(num) / prod(den)``, leaving out factors of 1 and folding -1s into the sign."""

    def keep(factors: list[Variable]) -> list[Variable]:
        nonlocal sign
        kept = []
        for f in factors:
            c = _const(f)
            if c == 1:
                continue
            if c == -1:
                sign = -sign
                continue
            kept.append(_as_dtype(f, dtype))
        return kept

    num, den = keep(num), keep(den)
    out = num[0] if num else constant(np.asarray(1, dtype=dtype))
    for f in num[1:]:
        out = mul(out, f)
    if den:
        d = den[0]
        for f in den[1:]:
            d = mul(d, f)
        out = true_div(out, d)
    return neg(out) if sign < 0 else out


def _product_rule(
    fgraph: FunctionGraph, node: Apply, change: Callable[[list[Variable], list[Variable]], bool]
) -> list[Variable] | None:
    """Read the float product tree rooted at ``node`` and let ``change(num, den)`` edit its
    factor lists in place (returning whether it did); rebuild it when it did."""
    if not isinstance(node.op.scalar_op, _PRODUCT_OPS):
        return None
    out = node.outputs[0]
    dtype = out.type.dtype
    if dtype not in _FLOATS or not _is_product(node, dtype) or _absorbed(fgraph, out):
        return None
    memo = offer_memo(fgraph, node)
    factors = memo.get("factors")
    if factors is None:  # each product rule reads the same factors: once per node
        factors = memo["factors"] = _factors(out, dtype)
    sign, num, den = factors[0], list(factors[1]), list(factors[2])
    if not change(num, den):
        return None
    return _finish(_product_of(sign, num, den, dtype), out)


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(*_PRODUCT_OPS), needs=elemwise_of(psb.Exp, pss.Sigmoid))
def local_exp_over_1_plus_exp(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """In a product: ``exp(y) / (1 + exp(y))`` -> ``sigmoid(y)``, ``1 / (1 + exp(y))`` ->
    ``sigmoid(-y)`` (so ``1 / (1 + exp(-x))`` -> ``sigmoid(x)``), and a ``sigmoid`` or
    ``exp`` factor over the same factor -> 1. These are the gradients of softplus and of
    log-sigmoid, which divide overflowed or underflowed values (``inf / inf``, ``0 / 0``)."""

    def change(num: list[Variable], den: list[Variable]) -> bool:
        changed = False
        for k in range(len(den) - 1, -1, -1):
            y = _one_plus_exp(den[k])
            if y is None or not _is_float(y):
                continue
            del den[k]
            match = next(
                (i for i, f in enumerate(num) if (e := _arg(f, psb.Exp)) is not None and _same(e, y)), None
            )
            if match is not None:
                num[match] = _apply(fgraph, sigmoid, y)
            else:
                num.append(_apply(fgraph, sigmoid, _negate(fgraph, y)))
            changed = True
        for k in range(len(den) - 1, -1, -1):
            if not isinstance(_scalar_op(den[k]), (pss.Sigmoid, psb.Exp)):
                continue
            match = next((i for i, f in enumerate(num) if _same(f, den[k])), None)
            if match is not None:
                del num[match], den[k]
                changed = True
        return changed

    return _product_rule(fgraph, node, change)


def _sum_of_exp(v: Variable) -> bool:
    s, _ = _strip_dimshuffles(v)
    snode = _sum_node(s)
    return snode is not None and _arg(snode.inputs[0], psb.Exp) is not None


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(*_PRODUCT_OPS), needs=elemwise_of(psb.Exp))
def local_softmax(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """In a product: ``exp(x) / sum(exp(x), axes)`` (the sum broadcast back along
    ``axes``) -> ``softmax(x, axes)``, which subtracts the maximum first: no ``inf / inf``."""

    def change(num: list[Variable], den: list[Variable]) -> bool:
        for k, d in enumerate(den):
            s, shuffles = _strip_dimshuffles(d)
            snode = _sum_node(s)
            if snode is None or len(shuffles) > 1:
                continue
            y = _arg(snode.inputs[0], psb.Exp)
            if y is None or not _is_float(y) or y.type.ndim == 0 or s.type.dtype != y.type.dtype:
                continue
            axes = _reduced_axes(snode)
            order = shuffles[0].new_order if shuffles else tuple(range(s.type.ndim))
            if order != _keepdims_order(y.type.ndim, axes):
                continue
            match = next(
                (i for i, f in enumerate(num) if (e := _arg(f, psb.Exp)) is not None and _same(e, y)), None
            )
            if match is None:
                continue
            axis = None if len(axes) == y.type.ndim else axes
            num[match] = Softmax(axis=axis)(y)
            del den[k]
            return True
        return False

    return _product_rule(fgraph, node, change)


# --- sqrt(x**2) ------------------------------------------------------------------------------


@register_rewrite("stabilize", "fast_run")
@node_rewriter(elemwise_of(psb.Sqrt))
def local_sqrt_sqr(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``sqrt(x**2)`` (``sqr(x)``, ``x ** 2`` or ``x * x``) -> ``abs(x)`` for real float
    ``x``: no overflow of ``x**2`` past 1e154, no underflow below 1e-154."""
    u = _float_input(node, psb.Sqrt)
    if u is None or u.owner is None:
        return None
    op = _scalar_op(u)
    inputs = u.owner.inputs
    squares = (
        isinstance(op, psb.Sqr)
        or (isinstance(op, psb.Pow) and _const(inputs[1]) == 2)
        or (isinstance(op, psb.Mul) and len(inputs) == 2 and _same(*inputs))
    )
    x = inputs[0] if squares else None
    if x is None or x.type.dtype != u.type.dtype or not _is_float(x):
        return None
    return _finish(_apply(fgraph, tabs, x), node.outputs[0])
