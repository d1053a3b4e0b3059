"""LU factorisations (``scipy.linalg.lu``, ``lu_factor``, ``lu_solve``) and LAPACK pivots
as permutations, with pullbacks (``lu_solve`` is composed of triangular solves, so its
gradient comes from theirs).

For ``A = P L U`` (``L`` unit lower triangular, ``U`` upper triangular, square ``A``) the
pullback is ``A_bar = P L^-T (tril_-1(L^T L_bar) + triu(U_bar U^T)) U^-T``.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
>>> p, l, u = lu(a)
>>> np.allclose((p @ l @ u).eval(), a)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.lazy import lazy_module
from arignote.tensor.alloc import tril, triu, zeros_like
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.linalg.operands import eye_like, lapack_dtype, mT
from arignote.tensor.linalg.solve import solve_triangular
from arignote.tensor.products import dot
from arignote.tensor.type import TensorType

# imported on first use (see arignote.lazy)
scipy_linalg = lazy_module("scipy.linalg")

__all__ = ["LU", "LUFactor", "PivotToPermutations", "lu", "lu_factor", "lu_solve", "pivot_to_permutation"]


def _square(a: Any, what: str) -> Variable:
    a = as_tensor_variable(a)
    if a.type.ndim != 2:
        raise TypeError(f"{what}: a must be a square matrix, got {a.type}")
    m, n = a.type.shape
    if m is not None and n is not None and m != n:
        raise ValueError(f"{what}: a must be square, got static shape {a.type.shape}")
    return a


def _lu_pullback(p: Variable, lower_f: Variable, u: Variable, l_bar: Any, u_bar: Any) -> Variable:
    """``A_bar`` for ``A = P L U`` given ``L_bar`` and ``U_bar`` (either may be disconnected)."""
    inner = None
    if not is_disconnected(l_bar):
        inner = tril(dot(mT(lower_f), l_bar), -1)
    if not is_disconnected(u_bar):
        term = triu(dot(u_bar, mT(u)))
        inner = term if inner is None else inner + term
    if inner is None:
        return zeros_like(lower_f)
    # L^-T inner U^-T: two triangular solves
    left = solve_triangular(lower_f, inner, lower=True, unit_diagonal=True, trans=1, b_ndim=2)
    right = mT(solve_triangular(u, mT(left), lower=False, b_ndim=2))  # left U^-T
    return dot(p, right)


class LU(Op):
    """``P, L, U`` with ``A = P L U`` (``scipy.linalg.lu``) for a square matrix; with
    ``permute_l`` the outputs are ``P L`` and ``U``; with ``p_indices`` the permutation is
    given as indices, as SciPy gives them."""

    __props__ = ("permute_l", "p_indices")

    def __init__(self, permute_l: bool = False, p_indices: bool = False):
        if permute_l and p_indices:
            raise ValueError("lu: permute_l and p_indices cannot both be True")
        self.permute_l = bool(permute_l)
        self.p_indices = bool(p_indices)

    def make_node(self, a: Any) -> Apply:
        a = _square(a, "lu")
        dtype = lapack_dtype(a.type.dtype)
        n = a.type.shape[0] if a.type.shape[0] is not None else a.type.shape[1]
        mat = TensorType(dtype, (n, n))
        if self.permute_l:
            outs = [mat(), mat()]
        elif self.p_indices:
            outs = [TensorType("int32", (n,))(), mat(), mat()]
        else:
            outs = [mat(), mat(), mat()]
        return Apply(self, [a], outs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (a,) = inputs
        res = scipy_linalg.lu(a, permute_l=self.permute_l, p_indices=self.p_indices)
        for cell, value, out in zip(output_storage, res, node.outputs):
            cell[0] = np.asarray(value, dtype=out.type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        (n, _) = shapes[0]
        if self.p_indices:
            return [(n,), (n, n), (n, n)]
        return [(n, n)] * len(node.outputs)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (a,) = inputs
        if self.permute_l:
            # PL = P L: recompute P, L, U and send PL's cotangent through P^T
            p, lower_f, u = LU()(a)
            pl_bar, u_bar = output_grads
            l_bar = disconnected_type() if is_disconnected(pl_bar) else dot(mT(p), pl_bar)
            return [_lu_pullback(p, lower_f, u, l_bar, u_bar)]
        if self.p_indices:
            _, lower_f, u = outputs
            p = LU()(a)[0]
        else:
            p, lower_f, u = outputs
        return [_lu_pullback(p, lower_f, u, output_grads[1], output_grads[2])]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        if self.p_indices:
            return [[False, True, True]]
        return [[True] * len(node.outputs)]


def lu(
    a: Any,
    permute_l: bool = False,
    check_finite: bool = True,
    p_indices: bool = False,
    overwrite_a: bool = False,
) -> list[Variable]:
    """``[P, L, U]`` with ``a = P L U`` (``scipy.linalg.lu``); ``[P L, U]`` with
    ``permute_l``; ``[p, L, U]`` with ``p_indices`` (the permutation as indices).
    ``check_finite`` and ``overwrite_a`` are accepted for compatibility."""
    return LU(permute_l=permute_l, p_indices=p_indices)(a, return_list=True)


class LUFactor(Op):
    """``scipy.linalg.lu_factor``: ``LU`` (``L`` below the diagonal, its unit diagonal
    left out, and ``U``) and the LAPACK pivots ``piv`` (row ``i`` was swapped with row
    ``piv[i]``)."""

    __props__ = ()

    def make_node(self, a: Any) -> Apply:
        a = _square(a, "lu_factor")
        dtype = lapack_dtype(a.type.dtype)
        n = a.type.shape[0] if a.type.shape[0] is not None else a.type.shape[1]
        return Apply(self, [a], [TensorType(dtype, (n, n))(), TensorType("int32", (n,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        lu_, piv = scipy_linalg.lu_factor(inputs[0])
        output_storage[0][0] = np.asarray(lu_, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(piv, dtype="int32")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        (n, _) = shapes[0]
        return [(n, n), (n,)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (a,) = inputs
        lu_, piv = outputs
        g = output_grads[0]
        if is_disconnected(g):
            return [zeros_like(a)]
        lower_f = tril(lu_, -1) + eye_like(lu_)
        u = triu(lu_)
        perm = pivot_to_permutation(piv)
        p = eye_like(lu_)[:, perm]  # A = P L U with P = I[:, perm]
        return [_lu_pullback(p, lower_f, u, tril(g, -1), triu(g))]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True, False]]


def lu_factor(a: Any, *, check_finite: bool = True, overwrite_a: bool = False) -> list[Variable]:
    """``[LU, piv]`` (``scipy.linalg.lu_factor``); ``check_finite`` and ``overwrite_a`` are
    accepted for compatibility."""
    return LUFactor()(a, return_list=True)


class PivotToPermutations(Op):
    """LAPACK pivots (row ``i`` swapped with row ``piv[i]``, in order) as the permutation
    ``perm`` with ``A[perm] = L U`` (``inverse``: its inverse permutation)."""

    __props__ = ("inverse",)

    def __init__(self, inverse: bool = False):
        self.inverse = bool(inverse)

    def make_node(self, piv: Any) -> Apply:
        piv = as_tensor_variable(piv)
        if piv.type.ndim != 1 or np.dtype(piv.type.dtype).kind not in "iu":
            raise TypeError(f"pivot_to_permutation: pivots must be an integer vector, got {piv.type}")
        return Apply(self, [piv], [TensorType("int64", piv.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (piv,) = inputs
        n = piv.shape[0]
        perm = np.arange(n)
        for i, j in enumerate(piv):
            if not 0 <= j < n:
                raise ValueError(f"pivot_to_permutation: pivot {j} at {i} is out of range for length {n}")
            perm[i], perm[j] = perm[j], perm[i]
        output_storage[0][0] = np.argsort(perm) if self.inverse else perm

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        return [shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]  # integer to integer

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False]]


def pivot_to_permutation(p: Any, inverse: bool = False) -> Variable:
    """The permutation that LAPACK pivots ``p`` (as from :func:`lu_factor`) apply:
    ``a[perm] = L @ U`` (``inverse=True``: its inverse)."""
    return PivotToPermutations(inverse=inverse)(p)


def lu_solve(
    LU_and_pivots: Sequence[Any],
    b: Any,
    trans: bool | int = False,
    b_ndim: int | None = None,
    check_finite: bool = True,
    overwrite_b: bool = False,
) -> Variable:
    """``x`` with ``a x = b`` (``a^T x = b`` with ``trans``) from ``lu_factor(a)``
    (``scipy.linalg.lu_solve``): a permutation and two triangular solves, so it is
    differentiable in ``LU`` and ``b``."""
    lu_, piv = LU_and_pivots
    lu_, b = as_tensor_variable(lu_), as_tensor_variable(b)
    if b_ndim is None:
        b_ndim = min(b.type.ndim, 2)
    perm = pivot_to_permutation(piv)
    if not trans:
        y = solve_triangular(lu_, b[perm], lower=True, unit_diagonal=True, b_ndim=b_ndim)
        return solve_triangular(lu_, y, lower=False, b_ndim=b_ndim)
    # a^T = U^T L^T P^T: x = P (L^-T (U^-T b))
    y = solve_triangular(lu_, b, lower=False, trans=1, b_ndim=b_ndim)
    z = solve_triangular(lu_, y, lower=True, unit_diagonal=True, trans=1, b_ndim=b_ndim)
    inv = pivot_to_permutation(piv, inverse=True)
    return z[inv]
