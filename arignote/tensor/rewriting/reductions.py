"""Rules about sums (specialize): factors that do not vary along the summed axes move out of
the sum, so that they are applied once to the result instead of once per element.

* ``local_sum_of_neg``: ``sum(-x)`` is ``-sum(x)``.
* ``local_sum_of_mul_or_div``: ``sum(a * x)`` is ``a * sum(x)`` and ``sum(x / a)`` is
  ``sum(x) / a`` where ``a`` is broadcast (a static 1) along every summed axis, also where
  ``a`` sits deeper in the summed term, inside products, quotients, negations and squares:
  ``sum(sqr(x / a))`` is ``sum(sqr(x)) / sqr(a)``, ``sum(-(x / a) * y)`` is
  ``-(sum(x * y) / a)``. The gradient of a loss through a scale ``sigma`` is made of such
  terms: each division per element by the loop-invariant ``sigma`` becomes one division of
  a total (IEEE divisions still: nothing becomes a reciprocal). ``sum(a / x)`` is left as
  it is (each element still needs its division), and so is anything under another function
  (``sum(exp(x / a))``).

The rewritten sum differs from the written one only in rounding (one scaling of the total
instead of one per term; PyTensor's ``local_sum_prod_of_mul_or_div`` does the top level of
this by default), where a total overflows that its scaled terms would not, and for a zero
divisor (``sum([0, 1] / 0)`` is NaN as written, ``inf`` rewritten). Only
floating-point sums are rewritten, through nodes computed in the dtype of the Sum's input
(the factors moved out may be of another float dtype; the result's Type is checked): an
integer ``-x`` or ``a * x`` wraps in its own dtype before a sum that accumulates in int64,
so moving it out would change the value. A product (``Prod``) is not rewritten: ``prod(x /
a)`` as ``prod(x) / a ** n`` overflows to ``inf / inf`` where the written product is finite.
Every replacement has the output's Type exactly, or the rule does not fire.
"""

from __future__ import annotations

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.scalar.basic import Add, Mul, Neg, Sqr, TrueDiv
from arignote.tensor.conversion import constant
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.reductions import Sum
from arignote.tensor.rewriting.elemwise import scalar_op_of
from arignote.tensor.ufuncs import mul, neg, sqr, true_div

__all__ = ["local_sum_of_neg", "local_sum_of_mul_or_div"]


def _float_sum(node: Apply) -> Variable | None:
    """The input of the Sum ``node`` where it is a plain sum of floats computed in the
    input's dtype (not a ``Prod``, whose class derives from ``Sum``), else None."""
    if type(node.op) is not Sum or not isinstance(node.op.scalar_op, Add):
        return None
    (x,) = node.inputs
    if x.type.dtype[:5] != "float" or node.outputs[0].type.dtype[:5] != "float":
        return None
    return x


def _summed_axes(node: Apply) -> tuple[int, ...]:
    axis = node.op.axis
    return tuple(range(node.inputs[0].type.ndim)) if axis is None else tuple(axis)


def _same_type(new: Variable, out: Variable) -> list[Variable] | None:
    return [new] if new.type == out.type else None


@register_rewrite("specialize", "fast_run")
@node_rewriter([Sum])
def local_sum_of_neg(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``sum(-x)`` → ``-sum(x)`` (floats)."""
    x = _float_sum(node)
    if x is None or not isinstance(scalar_op_of(x.owner), Neg):
        return None
    (inner,) = x.owner.inputs
    if inner.type.dtype != x.type.dtype:
        return None
    return _same_type(neg(node.op(inner)), node.outputs[0])


def _squeezed(v: Variable, axes: tuple[int, ...]) -> Variable:
    """``v`` without its (broadcast) dimensions ``axes``: a constant's data squeezed, a
    DimShuffle composed with the squeeze (an expanded scalar is the scalar again), else a
    DimShuffle (this stage runs after the ones that fold and merge those)."""
    keep = [d for d in range(v.type.ndim) if d not in axes]
    if isinstance(v, Constant):
        return constant(np.asarray(v.data).reshape([v.type.shape[d] or np.shape(v.data)[d] for d in keep]))
    owner = v.owner
    if owner is not None and isinstance(owner.op, DimShuffle):
        order = [owner.op.new_order[d] for d in keep]
        (src,) = owner.inputs
        if order == list(range(src.type.ndim)):
            return src
        return DimShuffle(input_ndim=src.type.ndim, new_order=order)(src)
    return DimShuffle(input_ndim=v.type.ndim, new_order=keep)(v)


def _outside(v: Variable, axes: tuple[int, ...]) -> bool:
    """``v`` is a float, the same for every element of the summed ``axes`` (a static 1 on
    each)."""
    return v.type.dtype[:5] == "float" and v.type.ndim > max(axes) and all(v.type.shape[d] == 1 for d in axes)


class _Split:
    """A summed term as ``sign * prod(num) * inner / prod(den)``: ``num`` and ``den`` the
    factors broadcast along the summed axes, ``inner`` what varies (None: 1)."""

    def __init__(self, inner: Variable | None, num: list, den: list, negative: bool = False):
        self.inner, self.num, self.den, self.negative = inner, num, den, negative

    @property
    def moved(self) -> bool:
        return bool(self.num or self.den or self.negative)


def _split(v: Variable, axes: tuple[int, ...], dtype: str, depth: int = 4) -> _Split:
    """``v`` split into what varies along ``axes`` and the factors that do not, through
    products, quotients by such factors, negations and squares of ``dtype`` (to ``depth``
    nodes; a node computed in another dtype is a leaf)."""
    if _outside(v, axes):
        return _Split(None, [v], [])
    sop = scalar_op_of(v.owner)
    if depth == 0 or v.type.dtype != dtype or not isinstance(sop, (Mul, TrueDiv, Neg, Sqr)):
        return _Split(v, [], [])
    ins = v.owner.inputs
    if any(i.type.dtype != dtype and not _outside(i, axes) for i in ins):
        return _Split(v, [], [])
    if isinstance(sop, Neg):
        part = _split(ins[0], axes, dtype, depth - 1)
        part.negative = not part.negative
        return part
    if isinstance(sop, TrueDiv):
        if not _outside(ins[1], axes):
            return _Split(v, [], [])
        part = _split(ins[0], axes, dtype, depth - 1)
        part.den.append(ins[1])
        return part
    if isinstance(sop, Sqr):
        part = _split(ins[0], axes, dtype, depth - 1)
        if not part.moved:
            return _Split(v, [], [])
        inner = None if part.inner is None else sqr(part.inner)
        return _Split(inner, [sqr(f) for f in part.num], [sqr(f) for f in part.den])
    parts = [_split(i, axes, dtype, depth - 1) for i in ins]
    inners = [q.inner for q in parts if q.inner is not None]
    inner = None if not inners else inners[0] if len(inners) == 1 else mul(*inners)
    negative = sum(q.negative for q in parts) % 2 == 1
    return _Split(inner, [f for q in parts for f in q.num], [f for q in parts for f in q.den], negative)


@register_rewrite("specialize", "fast_run")
@node_rewriter([Sum])
def local_sum_of_mul_or_div(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``sum(a * x)`` → ``a * sum(x)`` and ``sum(x / a)`` → ``sum(x) / a``, ``a`` broadcast
    along every summed axis (floats), through nested products, quotients, negations and
    squares of the summed term: ``sum(sqr(x / a))`` → ``sum(sqr(x)) / sqr(a)``,
    ``sum(-(x / a) * y)`` → ``-(sum(x * y) / a)``."""
    x = _float_sum(node)
    if x is None or not isinstance(scalar_op_of(x.owner), (Mul, TrueDiv, Sqr)):
        return None
    axes = _summed_axes(node)
    if not axes:
        return None
    part = _split(x, axes, x.type.dtype)
    if part.inner is None or not (part.num or part.den):
        return None  # (a sum over length-1 axes only, or nothing to move)
    new = node.op(part.inner)
    if part.num:
        new = mul(*[_squeezed(f, axes) for f in part.num], new)
    if part.den:
        dens = [_squeezed(f, axes) for f in part.den]
        new = true_div(new, dens[0] if len(dens) == 1 else mul(*dens))
    if part.negative:
        new = neg(new)
    return _same_type(new, node.outputs[0])
