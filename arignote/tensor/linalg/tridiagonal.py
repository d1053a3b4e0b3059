"""Tridiagonal LU factorisation and solve (LAPACK's ``gttrf`` and ``gttrs``):
:class:`LUFactorTridiagonal`, :class:`SolveLUFactorTridiagonal` and the functions
``tridiagonal_lu_factor(a)`` and ``tridiagonal_lu_solve(factors, b, b_ndim=...)``, which
solve ``a x = b`` in ``O(n)`` for a tridiagonal ``a`` (one factorisation, many solves).

``tridiagonal_lu_factor`` reads only the three diagonals of ``a``; its outputs ``dl, d, du,
du2, ipiv`` are LAPACK's (``L``'s multipliers, ``U``'s three diagonals, the row
interchanges, 1-based as LAPACK gives them). As in PyTensor the factorisation has no
gradient; the solve is differentiable in ``b`` (``b_bar`` is the transposed solve of
``x_bar``).

>>> import numpy as np
>>> import arignote.tensor as pt
>>> a = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])
>>> x = tridiagonal_lu_solve(tridiagonal_lu_factor(a), np.array([1.0, 2.0, 3.0]), b_ndim=1)
>>> bool(np.allclose(a @ x.eval(), [1.0, 2.0, 3.0]))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import grad_not_implemented, is_disconnected
from arignote.graph.op import Op
from arignote.lazy import lazy_module
from arignote.tensor.alloc import zeros_like
from arignote.tensor.diag import diagonal
from arignote.tensor.linalg.operands import (
    apply_core,
    as_core,
    as_stack,
    check_square,
    lapack_dtype,
    register_core_batch_rule,
)
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import maximum

# imported on first use (see arignote.lazy)
scipy_linalg = lazy_module("scipy.linalg")

__all__ = ["LUFactorTridiagonal", "SolveLUFactorTridiagonal", "tridiagonal_lu_factor", "tridiagonal_lu_solve"]


def _length(*candidates: int | None) -> int | None:
    """The first known of the static lengths ``n`` that the inputs imply."""
    for c in candidates:
        if c is not None:
            return c
    return None


def _plus(n: int | None, k: int) -> int | None:
    return None if n is None else max(n + k, 0)


def _gttrf_small(dl: np.ndarray, d: np.ndarray, du: np.ndarray, dtype: np.dtype) -> tuple[list, int]:
    """``gttrf`` for n <= 2, as LAPACK computes it (one elimination step, pivoting on the
    larger magnitude), giving LAPACK's outputs and ``info``."""
    dl, d, du = (v.astype(dtype, copy=True) for v in (dl, d, du))
    n = d.shape[0]
    ipiv = np.arange(1, n + 1, dtype=np.int32)
    if n == 2:
        if abs(d[0]) >= abs(dl[0]):
            if d[0] != 0:
                dl[0] = dl[0] / d[0]
                d[1] = d[1] - dl[0] * du[0]
        else:  # swap the two rows
            fact = d[0] / dl[0]
            d[0], dl[0] = dl[0], fact
            du[0], d[1] = d[1], du[0] - fact * d[1]
            ipiv[0] = 2
    zero = np.flatnonzero(d == 0)
    return [dl, d, du, np.empty(0, dtype=dtype), ipiv], int(zero[0]) + 1 if zero.size else 0


def _gttrs_small(
    dl: np.ndarray,
    d: np.ndarray,
    du: np.ndarray,
    ipiv: np.ndarray,
    b: np.ndarray,
    trans: bool,
    dtype: np.dtype,
) -> np.ndarray:
    """``gttrs`` for n <= 2: ``A = P L U`` rebuilt from the factors and solved directly."""
    n = d.shape[0]
    if n == 0:
        return np.empty(b.shape, dtype=dtype)
    lower = np.eye(n, dtype=dtype)
    upper = np.diag(d.astype(dtype))
    if n == 2:
        lower[1, 0], upper[0, 1] = dl[0], du[0]
    perm = np.eye(n, dtype=dtype)[:, ::-1] if n == 2 and ipiv[0] == 2 else np.eye(n, dtype=dtype)
    a = perm @ lower @ upper
    return np.linalg.solve(a.T if trans else a, b.astype(dtype)).astype(dtype, copy=False)


class LUFactorTridiagonal(Op):
    """The LU factorisation with partial pivoting of the tridiagonal matrix with sub-,
    main and super-diagonals ``dl`` (n-1), ``d`` (n), ``du`` (n-1): outputs ``dl`` (n-1),
    ``d`` (n), ``du`` (n-1), ``du2`` (n-2, the second super-diagonal of ``U``) and
    ``ipiv`` (n, int32), as ``scipy.linalg.lapack.?gttrf`` gives them. A singular matrix
    is an error naming the zero pivot."""

    __props__ = ()
    gufunc_signature = "(dl),(d),(dl)->(dl),(d),(dl),(du2),(d)"

    def make_node(self, dl: Any, d: Any, du: Any) -> Apply:
        dl, d, du = (as_core(v, 1, "LUFactorTridiagonal", n) for v, n in ((dl, "dl"), (d, "d"), (du, "du")))
        n = _length(_plus(dl.type.shape[0], 1), d.type.shape[0], _plus(du.type.shape[0], 1))
        for v, name, k in ((dl, "dl", -1), (d, "d", 0), (du, "du", -1)):
            if n is not None and v.type.shape[0] is not None and v.type.shape[0] != _plus(n, k):
                raise ValueError(
                    f"tridiagonal_lu_factor: the diagonals must have lengths n-1, n, n-1; got "
                    f"dl {dl.type}, d {d.type}, du {du.type} ({name} disagrees)"
                )
        dtype = lapack_dtype(dl.type.dtype, d.type.dtype, du.type.dtype)
        vec = [TensorType(dtype, (_plus(n, k),))() for k in (-1, 0, -1, -2)]
        return Apply(self, [dl, d, du], [*vec, TensorType("int32", (n,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        dl, d, du = inputs
        n = d.shape[0]
        if dl.shape != (max(n - 1, 0),) or du.shape != (max(n - 1, 0),):
            raise ValueError(
                f"tridiagonal_lu_factor: the diagonals must have lengths n-1, n, n-1; got {dl.shape[0]}, "
                f"{n}, {du.shape[0]}"
            )
        dtype = node.outputs[1].type.numpy_dtype
        if n <= 2:  # SciPy's gttrf wrapper refuses the empty du2 of a 1 x 1 or 2 x 2 matrix
            factors, info = _gttrf_small(dl, d, du, dtype)
        else:
            (gttrf,) = scipy_linalg.get_lapack_funcs(("gttrf",), dtype=dtype)
            *factors, info = gttrf(*(v.astype(dtype, copy=True) for v in (dl, d, du)))
        if info > 0:
            raise np.linalg.LinAlgError(
                f"tridiagonal_lu_factor: the matrix is singular (U[{info - 1}, {info - 1}] is exactly zero)"
            )
        for cell, value, out in zip(output_storage, factors, node.outputs):
            cell[0] = np.asarray(value, dtype=out.type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        (n,) = shapes[1]
        return [shapes[0], shapes[1], shapes[2], (maximum(n - 2, 0),), shapes[1]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        why = "(the LU factors of a tridiagonal matrix have no derivative here, as in PyTensor)"
        return [grad_not_implemented(self, k, x, why) for k, x in enumerate(inputs)]


class SolveLUFactorTridiagonal(Op):
    """``x`` with ``a x = b`` (``a^T x = b`` when ``transposed``) from the outputs of
    :class:`LUFactorTridiagonal` (``scipy.linalg.lapack.?gttrs``); ``b`` is a vector
    (``b_ndim=1``) or a matrix of right-hand sides (``b_ndim=2``)."""

    __props__ = ("b_ndim", "transposed")

    def __init__(self, b_ndim: int, transposed: bool = False):
        if b_ndim not in (1, 2):
            raise ValueError(f"tridiagonal_lu_solve: b_ndim must be 1 or 2, got {b_ndim!r}")
        self.b_ndim = b_ndim
        self.transposed = bool(transposed)
        rhs = "(d)" if b_ndim == 1 else "(d,rhs)"
        self.gufunc_signature = f"(dl),(d),(dl),(du2),(d),{rhs}->{rhs}"

    def make_node(self, dl: Any, d: Any, du: Any, du2: Any, ipiv: Any, b: Any) -> Apply:
        names = ("dl", "d", "du", "du2", "ipiv")
        vecs = [as_core(v, 1, "SolveLUFactorTridiagonal", n) for v, n in zip((dl, d, du, du2, ipiv), names)]
        b = as_core(b, self.b_ndim, "SolveLUFactorTridiagonal", "b")
        if np.dtype(vecs[4].type.dtype).kind not in "iu":
            raise TypeError(f"tridiagonal_lu_solve: ipiv must be an integer vector, got {vecs[4].type}")
        dl, d, du, du2, ipiv = vecs
        n = _length(
            _plus(dl.type.shape[0], 1), d.type.shape[0], _plus(du.type.shape[0], 1), ipiv.type.shape[0]
        )
        if n is not None and b.type.shape[0] is not None and b.type.shape[0] != n:
            raise ValueError(
                f"tridiagonal_lu_solve: b ({b.type}) must have {n} rows, the size of the factored matrix"
            )
        n = _length(n, b.type.shape[0])
        dtype = lapack_dtype(dl.type.dtype, d.type.dtype, du.type.dtype, du2.type.dtype, b.type.dtype)
        out_shape = (n,) if self.b_ndim == 1 else (n, b.type.shape[1])
        return Apply(self, [dl, d, du, du2, ipiv, b], [TensorType(dtype, out_shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        dl, d, du, du2, ipiv, b = inputs
        n = d.shape[0]
        if b.shape[0] != n or ipiv.shape != (n,) or du2.shape != (max(n - 2, 0),):
            raise ValueError(
                f"tridiagonal_lu_solve: b has {b.shape[0]} rows, the factors (d of {n}, ipiv of "
                f"{ipiv.shape[0]}, du2 of {du2.shape[0]}) are of a {n} x {n} matrix"
            )
        dtype = node.outputs[0].type.numpy_dtype
        if n <= 2:  # as in the factorisation
            output_storage[0][0] = _gttrs_small(dl, d, du, ipiv, b, self.transposed, dtype)
            return
        (gttrs,) = scipy_linalg.get_lapack_funcs(("gttrs",), dtype=dtype)
        x, info = gttrs(
            *(v.astype(dtype, copy=False) for v in (dl, d, du, du2)),
            ipiv.astype(np.int32, copy=False),
            b.astype(dtype, copy=True),
            trans="T" if self.transposed else "N",
        )
        if info != 0:
            raise ValueError(f"tridiagonal_lu_solve: LAPACK gttrs rejected argument {-info}")
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        (n,) = shapes[1]
        return [(n,) if self.b_ndim == 1 else (n, shapes[5][1])]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        *factors, b = inputs
        (g,) = output_grads
        why = "(the LU factors of a tridiagonal matrix have no derivative here, as in PyTensor)"
        no = [grad_not_implemented(self, k, x, why) for k, x in enumerate(factors)]
        if is_disconnected(g):
            return [*no, zeros_like(b)]
        # x = a^-1 b  =>  b_bar = a^-T x_bar: the same factors, the other orientation
        flipped = SolveLUFactorTridiagonal(self.b_ndim, not self.transposed)
        return [*no, flipped(*factors, g)]


register_core_batch_rule(LUFactorTridiagonal, SolveLUFactorTridiagonal)


def tridiagonal_lu_factor(a: Any) -> list[Variable]:
    """``[dl, d, du, du2, ipiv]``: the LU factorisation of the tridiagonal matrix ``a`` (or
    of each in a stack; only its three diagonals are read), for
    :func:`tridiagonal_lu_solve`."""
    a = as_stack(a, 2, "tridiagonal_lu_factor", "a")
    check_square(a, "tridiagonal_lu_factor", "a")
    dl, d, du = (diagonal(a, offset=k, axis1=-2, axis2=-1) for k in (-1, 0, 1))
    return list(apply_core(LUFactorTridiagonal(), dl, d, du))


def tridiagonal_lu_solve(
    a_diagonals: Sequence[Any], b: Any, *, b_ndim: int, transposed: bool = False
) -> Variable:
    """``x`` with ``a x = b`` (``a^T x = b`` when ``transposed``) from
    ``tridiagonal_lu_factor(a)``; ``b_ndim`` says whether ``b``'s core is a vector (1) or a
    matrix of right-hand sides (2), the dimensions before it being batch dimensions."""
    if len(a_diagonals) != 5:
        raise TypeError(
            "tridiagonal_lu_solve: a_diagonals must be the 5 outputs of tridiagonal_lu_factor "
            f"(dl, d, du, du2, ipiv), got {len(a_diagonals)} items"
        )
    op = SolveLUFactorTridiagonal(b_ndim, transposed)  # checks b_ndim
    return apply_core(op, *a_diagonals, as_stack(b, b_ndim, "tridiagonal_lu_solve", "b"))
