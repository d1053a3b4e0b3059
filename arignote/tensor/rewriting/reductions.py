"""Rules about sums (specialize): factors that do not vary along the summed axes move out of
the sum, so that they are applied once to the result instead of once per element.

* ``local_sum_of_neg``: ``sum(-x)`` is ``-sum(x)``.
* ``local_sum_of_mul_or_div``: ``sum(a * x)`` is ``a * sum(x)`` and ``sum(x / a)`` is
  ``sum(x) / a`` where ``a`` is broadcast (a static 1) along every summed axis (the
  gradient of a loss through a scalar scale has both: a division per element by a
  loop-invariant value becomes one division of the sum, exactly as IEEE as before).
  ``sum(a / x)`` is left as it is (each element still needs its division).

The rewritten sum differs from the written one only in rounding (one scaling of the total
instead of one per term; PyTensor applies the same rules by default). Only floating-point
sums are rewritten, whose summed factors have the dtype of the Sum's input (the factors
moved out may be of another float dtype; the result's Type is checked): an integer ``-x``
or ``a * x`` wraps in its own dtype before a sum that accumulates in int64, so moving it
out would change the value. A product (``Prod``) is not rewritten: ``prod(x /
a)`` as ``prod(x) / a ** n`` overflows to ``inf / inf`` where the written product is finite.
Every replacement has the output's Type exactly, or the rule does not fire.
"""

from __future__ import annotations

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.scalar.basic import Add, Mul, Neg, TrueDiv
from arignote.tensor.conversion import constant
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.reductions import Sum
from arignote.tensor.rewriting.elemwise import scalar_op_of
from arignote.tensor.ufuncs import mul, neg, true_div

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


@register_rewrite("specialize", "fast_run")
@node_rewriter([Sum])
def local_sum_of_mul_or_div(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``sum(a * x)`` → ``a * sum(x)`` and ``sum(x / a)`` → ``sum(x) / a``, ``a`` broadcast
    along every summed axis (floats)."""
    x = _float_sum(node)
    if x is None:
        return None
    sop = scalar_op_of(x.owner)
    if not isinstance(sop, (Mul, TrueDiv)):
        return None
    axes = _summed_axes(node)
    if not axes:
        return None
    dtype = x.type.dtype
    out = node.outputs[0]
    if isinstance(sop, TrueDiv):
        num, den = x.owner.inputs
        if num.type.dtype != dtype or not _outside(den, axes):
            return None
        return _same_type(true_div(node.op(num), _squeezed(den, axes)), out)
    terms = x.owner.inputs
    outer = [t for t in terms if _outside(t, axes)]
    inner = [t for t in terms if not _outside(t, axes)]
    if not outer or not inner or any(t.type.dtype != dtype for t in inner):
        return None  # (nothing to move, a sum over length-1 axes only, or a promotion)
    inner_v = inner[0] if len(inner) == 1 else mul(*inner)
    outer_v = [_squeezed(t, axes) for t in outer]
    return _same_type(mul(*outer_v, node.op(inner_v)), out)
