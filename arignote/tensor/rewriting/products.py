"""Rewrites of matrix products (:class:`~arignote.tensor.products.Dot`) that move transposes
out of the way: the product reads its operands where they are."""

from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.products import Dot

__all__ = ["local_dot_of_transposes", "local_dot_of_transposed_matrix_and_vector"]


def _untransposed(v: Variable) -> Variable | None:
    """``m`` when ``v`` is ``m.T`` for a matrix ``m``, else None."""
    n = v.owner
    if n is None or not isinstance(n.op, DimShuffle) or n.op.new_order != (1, 0):
        return None
    return n.inputs[0]


@register_rewrite("canonicalize", "fast_run")
@node_rewriter([Dot])
def local_dot_of_transposes(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``dot(x.T, y.T)`` is ``dot(y, x).T`` (one transpose instead of two)."""
    x, y = (_untransposed(v) for v in node.inputs)
    if x is None or y is None:
        return None
    prod = Dot()(y, x)
    new = DimShuffle(input_ndim=2, new_order=(1, 0))(prod)
    return [new] if new.type == node.outputs[0].type else None


@register_rewrite("canonicalize", "fast_run")
@node_rewriter([Dot])
def local_dot_of_transposed_matrix_and_vector(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``dot(m.T, v)`` is ``dot(v, m)``, and ``dot(v, m.T)`` is ``dot(m, v)``, for a vector ``v``.

    The gradient of ``dot(X, w)`` with respect to ``w`` is ``dot(X.T, g)``: written
    this way it contracts ``X`` over its first axis with no transpose at all. The NumPy
    and BLAS backends are indifferent (a transposed operand is a flag to BLAS), but XLA
    folds the transpose of a constant ``X`` into a second, transposed copy at compile time.
    """
    a, b = node.inputs
    if a.type.ndim == 2 and b.type.ndim == 1:
        m = _untransposed(a)
        new = None if m is None else Dot()(b, m)
    elif a.type.ndim == 1 and b.type.ndim == 2:
        m = _untransposed(b)
        new = None if m is None else Dot()(m, a)
    else:
        return None
    return [new] if new is not None and new.type == node.outputs[0].type else None
