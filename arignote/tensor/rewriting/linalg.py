"""Linear algebra rewrites that use what is known of a matrix's structure (declared with
:func:`arignote.assumptions.assume` or shown by the graph: see :mod:`arignote.assumptions`).

In the stabilize stage (after canonicalize has moved the declarations into the graph's
AssumptionFeature, before specialize fuses products into BLAS calls that hide ``x @ x.T``),
for a matrix ``A`` (or a stack of them):

* ``solve(A, b)``: ``A`` diagonal -> ``b / diag(A)``; triangular -> ``solve_triangular``;
  orthogonal -> ``A.T @ b``; a general solve with ``A`` positive definite -> a Cholesky-based
  solve (``assume_a="pos"``), symmetric -> ``assume_a="sym"``;
* ``inv(A)``: diagonal -> the diagonal matrix of ``1 / diag(A)``; orthogonal -> ``A.T``;
* ``det(A)``: diagonal or triangular -> the product of the diagonal;
* ``cholesky(A)``: diagonal -> the diagonal matrix of ``sqrt(diag(A))``.

Each returns the same values as the Op it replaces for every matrix with the structure;
tests compare both on such matrices.
"""

from __future__ import annotations

from typing import Any

from arignote.assumptions.core import (
    DIAGONAL,
    LOWER_TRIANGULAR,
    ORTHOGONAL,
    POSITIVE_DEFINITE,
    SYMMETRIC,
    UPPER_TRIANGULAR,
    check_assumption,
)
from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.tensor.axes import expand_dims
from arignote.tensor.blockwise import Blockwise
from arignote.tensor.diag import diag, diagonal
from arignote.tensor.linalg.decompositions import Cholesky
from arignote.tensor.linalg.inverse import Det, MatrixInverse
from arignote.tensor.linalg.solve import Solve, SolveTriangular, solve, solve_triangular
from arignote.tensor.products import matmul
from arignote.tensor.reductions import prod
from arignote.tensor.rewriting.basic import register_stabilize
from arignote.tensor.ufuncs import cast, sqrt

__all__ = [
    "rewrite_cholesky_diagonal",
    "rewrite_det_structured",
    "rewrite_inv_structured",
    "rewrite_solve_structured",
]


def _core(node: Apply) -> Any:
    op = node.op
    return op.core_op if isinstance(op, Blockwise) else op


def _like(new: Variable, old: Variable) -> Variable:
    return new if new.type.dtype == old.type.dtype else cast(new, old.type.dtype)


def _diag_of(a: Variable) -> Variable:
    return diagonal(a, axis1=-2, axis2=-1)


def _transpose(a: Variable) -> Variable:
    nd = a.type.ndim
    return a.dimshuffle(*range(nd - 2), nd - 1, nd - 2)


@register_stabilize
@node_rewriter([Solve, SolveTriangular, Blockwise])
def rewrite_solve_structured(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``solve(A, b)`` by the cheapest method ``A``'s known structure allows."""
    op = _core(node)
    if not isinstance(op, (Solve, SolveTriangular)):
        return None
    a, b = node.inputs
    (old,) = node.outputs
    if check_assumption(fgraph, a, DIAGONAL):
        d = _diag_of(a)
        if op.b_ndim == 2:
            d = expand_dims(d, -1)
        return [_like(b / d, old)]
    if isinstance(op, SolveTriangular):
        return None
    if op.assume_a not in ("gen", "sym"):
        return None  # already told (positive definite, banded, ...)
    kwargs = {"b_ndim": op.b_ndim, "on_error": op.on_error}
    for key, lower in ((LOWER_TRIANGULAR, True), (UPPER_TRIANGULAR, False)):
        if check_assumption(fgraph, a, key):
            return [_like(solve_triangular(a, b, lower=lower, **kwargs), old)]
    if check_assumption(fgraph, a, ORTHOGONAL):
        return [_like(matmul(_transpose(a), b), old)]
    if check_assumption(fgraph, a, POSITIVE_DEFINITE):
        return [_like(solve(a, b, assume_a="pos", lower=op.lower, **kwargs), old)]
    if op.assume_a == "gen" and check_assumption(fgraph, a, SYMMETRIC):
        return [_like(solve(a, b, assume_a="sym", lower=op.lower, **kwargs), old)]
    return None


@register_stabilize
@node_rewriter([MatrixInverse, Blockwise])
def rewrite_inv_structured(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``inv(A)``: a diagonal ``A`` inverts entry by entry, an orthogonal one is transposed."""
    if not isinstance(_core(node), MatrixInverse):
        return None
    (a,) = node.inputs
    (old,) = node.outputs
    if a.type.ndim == 2 and check_assumption(fgraph, a, DIAGONAL):
        return [_like(diag(1 / _diag_of(a)), old)]
    if check_assumption(fgraph, a, ORTHOGONAL):
        return [_like(_transpose(a), old)]
    return None


@register_stabilize
@node_rewriter([Det, Blockwise])
def rewrite_det_structured(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``det(A)`` of a diagonal or triangular ``A``: the product of its diagonal."""
    if not isinstance(_core(node), Det):
        return None
    (a,) = node.inputs
    if any(check_assumption(fgraph, a, key) for key in (DIAGONAL, LOWER_TRIANGULAR, UPPER_TRIANGULAR)):
        return [_like(prod(_diag_of(a), axis=-1), node.outputs[0])]
    return None


@register_stabilize
@node_rewriter([Cholesky, Blockwise])
def rewrite_cholesky_diagonal(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``cholesky(A)`` of a diagonal ``A``: the diagonal matrix of the square roots (either
    triangle, as it is diagonal)."""
    if not isinstance(_core(node), Cholesky):
        return None
    (a,) = node.inputs
    if a.type.ndim == 2 and check_assumption(fgraph, a, DIAGONAL):
        return [_like(diag(sqrt(_diag_of(a))), node.outputs[0])]
    return None
