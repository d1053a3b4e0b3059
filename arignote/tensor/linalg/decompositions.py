"""Matrix decompositions: :class:`Cholesky`, :class:`Eigh` (symmetric eigenproblem) and
:class:`Eigvalsh`, :class:`Eig` (general eigenproblem, complex results, no gradient),
:class:`SVD` and :class:`QR`, and the functions that batch them over leading dimensions:
``cholesky``, ``eigh``, ``eigvalsh``, ``eig``, ``svd``, ``qr`` (SciPy's signature, the
``pytensor.tensor.slinalg`` one) and ``numpy_qr`` (NumPy's, ``pytensor.tensor.nlinalg.qr``).

>>> import numpy as np
>>> import arignote.tensor as pt
>>> a = pt.matrix("a", dtype="float64", shape=(5, 3))
>>> [o.type for o in SVD(full_matrices=False)(a)]
[TensorType(float64, shape=(5, 3)), TensorType(float64, shape=(3,)), TensorType(float64, shape=(3, 3))]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, grad_not_implemented, is_disconnected
from arignote.graph.op import Op
from arignote.lazy import lazy_module
from arignote.tensor.alloc import eye, tril, triu, zeros_like
from arignote.tensor.join import concatenate, split
from arignote.tensor.linalg.operands import (
    RuntimeCheck,
    apply_core,
    as_core,
    as_stack,
    check_square,
    check_square_value,
    complex_grads,
    const,
    diag_embed,
    diag_part,
    eye_like,
    lapack_dtype,
    length,
    mT,
    real_dtype,
    register_core_batch_rule,
    square_length,
    sym,
)
from arignote.tensor.linalg.solve import SolveTriangular, solve_triangular
from arignote.tensor.products import dot
from arignote.tensor.ranges import arange
from arignote.tensor.shape import _grad_like
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast, eq, minimum, switch

# imported on first use (see arignote.lazy)
scipy_linalg = lazy_module("scipy.linalg")

__all__ = [
    "Cholesky",
    "Eig",
    "Eigh",
    "Eigvalsh",
    "QR",
    "SVD",
    "cholesky",
    "cholesky_reduce",
    "eig",
    "eigh",
    "eigvalsh",
    "numpy_qr",
    "qr",
    "svd",
]


def _given(g: Any) -> Variable | None:
    """A cotangent or tangent, or ``None`` when it is disconnected (counts as zero)."""
    return None if g is None or is_disconnected(g) else g


def _add(*terms: Variable | None) -> Variable | None:
    out = None
    for t in terms:
        if t is not None:
            out = t if out is None else out + t
    return out


def _safe_divide(num: Variable, den: Variable) -> Variable:
    """``num / den``, and 0 wherever ``den`` is exactly 0 (a repeated eigenvalue, a zero
    singular value: there the derivative of the vectors does not exist; 0 keeps a cost that
    does not use them finite). Linear in ``num``, as a pullback must be."""
    dtype = num.type.dtype
    zero = eq(den, const(0, dtype))
    return switch(zero, const(0, dtype), num / switch(zero, const(1, dtype), den))


def _divide_by_gaps(x: Variable, d: Variable) -> Variable:
    """``x[i, j] / (d[j] - d[i])`` off the diagonal, 0 on it and where two of ``d`` are
    equal (see :func:`_safe_divide`)."""
    ident = eye(length(d, 0), dtype=d.type.dtype)
    gaps = d.dimshuffle("x", 0) - d.dimshuffle(0, "x")
    return _safe_divide(x * (const(1, d.type.dtype) - ident), gaps)


def _min_len(m: Any, n: Any) -> Any:
    if isinstance(m, (int, np.integer)) and isinstance(n, (int, np.integer)):
        return min(int(m), int(n))
    return minimum(m, n)


def _static_min(m: int | None, n: int | None) -> int | None:
    return None if m is None or n is None else min(m, n)


def _guarded(g: Variable | None, a: Variable, condition: str, what: str) -> Variable | None:
    """``g`` behind a run-time check of ``a``'s shape, when its static shape does not say."""
    m, n = a.type.shape
    if g is None or (m is not None and n is not None):
        return g
    return RuntimeCheck(condition, what)(g, a)


def _leading(x: Variable, k: Any, axis: int) -> tuple[Variable, Variable | None]:
    """The first ``k`` entries of ``x`` along ``axis`` and the rest (``None`` when ``x`` is
    statically known to have exactly ``k``)."""
    total = length(x, axis)
    if isinstance(total, int) and isinstance(k, int) and total == k:
        return x, None
    head, rest = split(x, [k, total - k], 2, axis=axis)
    return head, rest


def _unused_part(g: Variable | None, k: Any, axis: int, what: str) -> Variable | None:
    """The first ``k`` entries of the cotangent ``g`` along ``axis``, after a run-time check
    that the rest is zero (the outputs there are not unique, so the cost must not use them)."""
    if g is None:
        return None
    head, rest = _leading(g, k, axis)
    return head if rest is None else RuntimeCheck("zeros", what)(head, rest)


# --- symmetric eigenproblem ------------------------------------------------------------------


class Eigh(Op):
    """Eigenvalues ``w`` (ascending) and orthonormal eigenvectors ``v`` (columns) of a
    symmetric matrix, of which only the triangle ``lower`` names is read
    (``scipy.linalg.eigh``; ``driver`` as there).

    Its derivatives treat the input as symmetric (they are those of ``f((A + A^T)/2)``);
    the eigenvectors' derivative is infinite where two eigenvalues coincide.
    """

    __props__ = ("lower", "driver")
    gufunc_signature = "(m,m)->(m),(m,m)"

    def __init__(self, lower: bool = True, driver: str | None = None):
        if driver not in (None, "ev", "evd", "evr", "evx"):
            raise ValueError(f"Eigh: driver must be None, 'ev', 'evd', 'evr' or 'evx', got {driver!r}")
        self.lower = bool(lower)
        self.driver = driver

    def make_node(self, a: Any) -> Apply:
        a = as_core(a, 2, "Eigh", "a")
        check_square(a, "Eigh", "a")
        n = square_length(a)
        w = TensorType(real_dtype(a.type.dtype), (n,))()
        v = TensorType(lapack_dtype(a.type.dtype), (n, n))()
        return Apply(self, [a], [w, v])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (a,) = inputs
        check_square_value(a, "Eigh", "a")
        w_dtype, v_dtype = (o.type.numpy_dtype for o in node.outputs)
        if a.size:
            w, v = scipy_linalg.eigh(
                a.astype(v_dtype, copy=False), lower=self.lower, driver=self.driver, check_finite=False
            )
        else:
            w, v = np.zeros(0), np.zeros((0, 0))
        output_storage[0][0] = np.asarray(w, dtype=w_dtype)
        output_storage[1][0] = np.asarray(v, dtype=v_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        n = shapes[0][0]
        return [(n,), (n, n)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``A_bar = sym(V (diag(w_bar) + F o (V^T V_bar)) V^T)``, ``F[i, j] = 1/(w_j - w_i)``."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (a,) = inputs
        w, v = outputs
        wbar, vbar = (_given(g) for g in output_grads)
        inner = _add(
            None if wbar is None else diag_embed(wbar),
            None if vbar is None else _divide_by_gaps(dot(mT(v), vbar), w),
        )
        if inner is None:
            return [disconnected_type()]
        return [_grad_like(sym(dot(dot(v, inner), mT(v))), a)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dw = diag(P)``, ``dV = V (F o P)`` with ``P = V^T sym(dA) V``."""
        da = _given(eval_points[0])
        if da is None:
            return [disconnected_type(), disconnected_type()]
        w, v = outputs
        p = dot(dot(mT(v), sym(da)), v)
        return [diag_part(p), dot(v, _divide_by_gaps(p, w))]


# --- general eigenproblem --------------------------------------------------------------------


class Eig(Op):
    """Eigenvalues and right eigenvectors (columns, unit norm) of a general square matrix,
    always complex (``numpy.linalg.eig``; NumPy returns real arrays when every eigenvalue
    is real, this Op keeps one dtype). Not differentiable here."""

    __props__ = ()
    gufunc_signature = "(m,m)->(m),(m,m)"

    def make_node(self, a: Any) -> Apply:
        a = as_core(a, 2, "Eig", "a")
        check_square(a, "Eig", "a")
        n = square_length(a)
        dtype = np.result_type(lapack_dtype(a.type.dtype), np.complex64).name
        return Apply(self, [a], [TensorType(dtype, (n,))(), TensorType(dtype, (n, n))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (a,) = inputs
        check_square_value(a, "Eig", "a")
        dtype = node.outputs[0].type.numpy_dtype
        w, v = np.linalg.eig(a.astype(lapack_dtype(a.dtype), copy=False))
        output_storage[0][0] = np.asarray(w, dtype=dtype)
        output_storage[1][0] = np.asarray(v, dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        n = shapes[0][0]
        return [(n,), (n, n)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [
            grad_not_implemented(self, 0, inputs[0], "(eig of a general matrix; use eigh if it is symmetric)")
        ]


# --- singular value decomposition ------------------------------------------------------------


class SVD(Op):
    """The singular value decomposition ``A = U diag(s) Vh`` of an ``m x n`` matrix
    (``numpy.linalg.svd``): outputs ``[U, s, Vh]``, or ``[s]`` without ``compute_uv``.
    ``U`` is ``m x m`` and ``Vh`` ``n x n`` with ``full_matrices``, else ``m x k`` and
    ``k x n`` (``k = min(m, n)``); ``s`` is descending.

    The gradient through ``s`` always exists; through ``U`` and ``Vh`` it needs distinct
    nonzero singular values, and with ``full_matrices`` a cost that does not use the
    columns of ``U`` (rows of ``Vh``) past ``min(m, n)``, which are not unique (a run-time
    error says so).
    """

    __props__ = ("full_matrices", "compute_uv")

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True):
        self.full_matrices = bool(full_matrices)
        self.compute_uv = bool(compute_uv)
        if not self.compute_uv:
            self.gufunc_signature = "(m,n)->(k)"
        elif self.full_matrices:
            self.gufunc_signature = "(m,n)->(m,m),(k),(n,n)"
        else:
            self.gufunc_signature = "(m,n)->(m,k),(k),(k,n)"

    def _shapes(self, m: Any, n: Any, k: Any) -> list[tuple]:
        """The output shapes (static or symbolic) for an ``m x n`` input, ``k = min(m, n)``."""
        if not self.compute_uv:
            return [(k,)]
        return [(m, m), (k,), (n, n)] if self.full_matrices else [(m, k), (k,), (k, n)]

    def make_node(self, a: Any) -> Apply:
        a = as_core(a, 2, "SVD", "a")
        m, n = a.type.shape
        real, dtype = real_dtype(a.type.dtype), lapack_dtype(a.type.dtype)
        dtypes = [dtype, real, dtype] if self.compute_uv else [real]
        shapes = self._shapes(m, n, _static_min(m, n))
        return Apply(self, [a], [TensorType(d, s)() for d, s in zip(dtypes, shapes)])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (a,) = inputs
        if a.ndim != 2:
            raise ValueError(f"SVD: the input must be a matrix, got an array of shape {a.shape}")
        work = lapack_dtype(a.dtype)
        result = np.linalg.svd(
            a.astype(work, copy=False), full_matrices=self.full_matrices, compute_uv=self.compute_uv
        )
        results = result if self.compute_uv else (result,)
        for cell, out, value in zip(output_storage, node.outputs, results):
            cell[0] = np.asarray(value, dtype=out.type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        m, n = shapes[0]
        return self._shapes(m, n, _min_len(m, n))

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Townsend's rule (2016): with ``F[i, j] = 1/(s_j^2 - s_i^2)``,
        ``A_bar = U [(F o (U^T U_bar - U_bar^T U)) S + diag(s_bar) + S (F o (V^T V_bar - V_bar^T V))] V^T
        + (I - U U^T) U_bar S^-1 V^T + U S^-1 V_bar^T (I - V V^T)``."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (a,) = inputs
        if not self.compute_uv:
            sbar = _given(output_grads[0])
            if sbar is None:
                return [disconnected_type()]
            u, s, vh = SVD(full_matrices=False)(a)
            return [_grad_like(_svd_pullback(u, s, vh, None, sbar, None), a)]
        u, s, vh = outputs
        ubar, sbar, vhbar = (_given(g) for g in output_grads)
        if ubar is None and sbar is None and vhbar is None:
            return [disconnected_type()]
        if self.full_matrices:  # only the first k columns of U (rows of Vh) are unique
            k = length(s, 0)
            what = "SVD(full_matrices=True) gradient: the cost uses columns of U (rows of Vh) past min(m, n)"
            u, vh = _leading(u, k, 1)[0], _leading(vh, k, 0)[0]
            ubar, vhbar = _unused_part(ubar, k, 1, what), _unused_part(vhbar, k, 0, what)
        return [_grad_like(_svd_pullback(u, s, vh, ubar, sbar, vhbar), a)]


def _svd_pullback(
    u: Variable,
    s: Variable,
    vh: Variable,
    ubar: Variable | None,
    sbar: Variable | None,
    vhbar: Variable | None,
) -> Variable:
    if ubar is None and vhbar is None:
        return dot(u * sbar.dimshuffle("x", 0), vh)  # type: ignore[union-attr]
    s2 = s * s
    row, col = s.dimshuffle("x", 0), s.dimshuffle(0, "x")
    v = mT(vh)
    inner = _add(
        None if sbar is None else diag_embed(sbar),
        None if ubar is None else _divide_by_gaps(dot(mT(u), ubar) - dot(mT(ubar), u), s2) * row,
        None if vhbar is None else col * _divide_by_gaps(dot(vh, mT(vhbar)) - dot(vhbar, v), s2),
    )
    core = dot(dot(u, inner), vh)
    extra_u = None if ubar is None else dot(_safe_divide(ubar - dot(u, dot(mT(u), ubar)), row), vh)
    extra_v = None if vhbar is None else dot(u, _safe_divide(vhbar - dot(dot(vhbar, v), vh), col))
    return _add(core, extra_u, extra_v)  # type: ignore[return-value]


# --- QR --------------------------------------------------------------------------------------

_QR_MODES = ("full", "economic", "r", "raw")


class QR(Op):
    """The QR decomposition ``A = Q R`` of an ``m x n`` matrix (``scipy.linalg.qr``).

    ``mode``: ``"full"`` gives ``Q`` ``m x m`` and ``R`` ``m x n``; ``"economic"`` ``Q``
    ``m x k`` and ``R`` ``k x n`` (``k = min(m, n)``); ``"r"`` only ``R`` (``m x n``);
    ``"raw"`` the Householder form ``(H, tau, R)``. With ``pivoting`` a last output ``P``
    (int32 column permutation, ``A[:, P] = Q R``) is added.

    Differentiable except in ``"raw"`` mode, as long as the cost does not use the columns
    of ``Q`` past ``min(m, n)`` (``"full"`` mode; they are not unique: a run-time error
    says so). A wide matrix (``m < n``) needs that static shape; an unknown shape is
    checked at run time to have ``m >= n``.
    """

    __props__ = ("mode", "pivoting")

    def __init__(self, mode: str = "full", pivoting: bool = False):
        if mode not in _QR_MODES:
            raise ValueError(f"QR: mode must be one of {_QR_MODES}, got {mode!r}")
        self.mode = mode
        self.pivoting = bool(pivoting)
        outs = {"full": "(m,m),(m,n)", "economic": "(m,k),(k,n)", "r": "(m,n)", "raw": "(m,n),(k),(k,n)"}[
            mode
        ]
        self.gufunc_signature = f"(m,n)->{outs}" + (",(n)" if self.pivoting else "")

    def _shapes(self, m: Any, n: Any, k: Any) -> list[tuple]:
        """The output shapes (static or symbolic) for an ``m x n`` input, ``k = min(m, n)``."""
        shapes = {
            "full": [(m, m), (m, n)],
            "economic": [(m, k), (k, n)],
            "r": [(m, n)],
            "raw": [(m, n), (k,), (k, n)],
        }[self.mode]
        return shapes + ([(n,)] if self.pivoting else [])

    def make_node(self, a: Any) -> Apply:
        a = as_core(a, 2, "QR", "a")
        m, n = a.type.shape
        shapes = self._shapes(m, n, _static_min(m, n))
        dtypes = [lapack_dtype(a.type.dtype)] * (len(shapes) - self.pivoting) + ["int32"] * self.pivoting
        return Apply(self, [a], [TensorType(d, s)() for d, s in zip(dtypes, shapes)])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (a,) = inputs
        if a.ndim != 2:
            raise ValueError(f"QR: the input must be a matrix, got an array of shape {a.shape}")
        work = lapack_dtype(a.dtype)
        result = scipy_linalg.qr(
            a.astype(work, copy=False), mode=self.mode, pivoting=self.pivoting, check_finite=False
        )
        if self.mode == "r":
            values = list(result) if isinstance(result, tuple) else [result]
        elif self.mode == "raw":
            (h, tau), *rest = result
            values = [h, tau, *rest]
        else:
            values = list(result)
        for cell, out, value in zip(output_storage, node.outputs, values):
            cell[0] = np.asarray(value, dtype=out.type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        m, n = shapes[0]
        return self._shapes(m, n, _min_len(m, n))

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """For ``m >= n``: ``A_bar = (Q_bar + Q copyltu(M)) R^-T`` with
        ``M = R R_bar^T - Q_bar^T Q`` (``copyltu`` mirrors the lower triangle up)."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (a,) = inputs
        if self.mode == "raw":
            return [grad_not_implemented(self, 0, a, "(mode='raw')")]
        grads = [_given(g) for g in output_grads]
        qbar, rbar = (None, grads[0]) if self.mode == "r" else (grads[0], grads[1])
        if qbar is None and rbar is None:
            return [disconnected_type()]
        m, n = length(a, 0), length(a, 1)
        k = _min_len(m, n)
        if self.mode == "r":  # no Q among the outputs: recompute the economic one
            q, r, *perm = QR("economic", self.pivoting)(a)
        else:
            q, r, *perm = outputs
            q = _leading(q, k, 1)[0]
        # the rows of R past k are zeros whatever A is; Q's columns past k are not unique
        r, rbar = _leading(r, k, 0)[0], None if rbar is None else _leading(rbar, k, 0)[0]
        what = "QR(mode='full') gradient: the cost depends on the columns of Q past min(m, n)"
        qbar = _unused_part(qbar, k, 1, what)
        sm, sn = a.type.shape
        if sm is not None and sn is not None and sm < sn:
            abar = _qr_wide_pullback(a, q, r, qbar, rbar)
        else:
            what = "the gradient of QR (written for matrices with at least as many rows as columns)"
            qbar, rbar = _guarded(qbar, a, "tall", what), _guarded(rbar, a, "tall", what)
            abar = _qr_pullback(q, r, qbar, rbar)
        if perm:  # A P = Q R: send the columns back where they came from
            abar = dot(abar, mT(_permutation_matrix(perm[0], abar.type.dtype)))
        return [_grad_like(abar, a)]


def _qr_wide_pullback(
    a: Variable, q: Variable, r: Variable, qbar: Variable | None, rbar: Variable | None
) -> Variable:
    """``A = [X | Y]`` with ``m < n``, ``R = [U | V]``: ``X = Q U`` is a square QR and
    ``Y = Q V``, so ``Y_bar = Q V_bar`` and ``X`` gets the square rule with
    ``Q_bar + Y V_bar^T``."""
    m = length(a, 0)
    y = _leading(a, m, 1)[1]
    ubar, vbar = (None, None) if rbar is None else _leading(rbar, m, 1)
    u = _leading(r, m, 1)[0]
    qbar = _add(qbar, None if vbar is None else dot(y, mT(vbar)))
    xbar = _qr_pullback(q, u, qbar, ubar)
    ybar = zeros_like(y) if vbar is None else dot(q, vbar)
    return concatenate([xbar, ybar], axis=1)


def _qr_pullback(q: Variable, r: Variable, qbar: Variable | None, rbar: Variable | None) -> Variable:

    m = _add(
        None if rbar is None else dot(r, mT(rbar)),
        None if qbar is None else -dot(mT(qbar), q),
    )
    copyltu = tril(m) + mT(tril(m, -1))  # type: ignore[arg-type]
    b = _add(qbar, dot(q, copyltu))
    # b R^-T = (R^-1 b^T)^T
    return mT(SolveTriangular(lower=False, b_ndim=2)(r, mT(b)))  # type: ignore[arg-type]


def _permutation_matrix(p: Variable, dtype: str) -> Variable:
    """``P`` with ``A @ P == A[:, p]``: ``P[i, j] = (i == p[j])``."""
    idx = arange(length(p, 0), dtype=p.type.dtype)
    return cast(eq(idx.dimshuffle(0, "x"), p.dimshuffle("x", 0)), dtype)


register_core_batch_rule(Eigh, Eig, SVD, QR)


def _phi(x: Variable) -> Variable:
    """The lower triangle of ``x`` with its diagonal halved."""
    return tril(x) - x * eye_like(x) * const(0.5, x.type.dtype)


class Cholesky(Op):
    """The Cholesky factor of a symmetric positive-definite matrix: ``L`` with
    ``A = L @ L.T`` (``lower=True``) or ``U`` with ``A = U.T @ U``. Only the triangle of
    ``A`` on that side is read.

    A matrix that is not positive definite gives NaNs (``on_error="nan"``) or raises
    ``numpy.linalg.LinAlgError`` (``on_error="raise"``); so does NaN or infinite input,
    except that with ``on_error="raise"`` and ``check_finite`` it is a ValueError.
    """

    __props__ = ("lower", "check_finite", "on_error")
    gufunc_signature = "(m,m)->(m,m)"

    def __init__(self, *, lower: bool = True, check_finite: bool = True, on_error: str = "nan"):
        if on_error not in ("raise", "nan"):
            raise ValueError(f"Cholesky: on_error must be 'raise' or 'nan', got {on_error!r}")
        self.lower = bool(lower)
        self.check_finite = bool(check_finite)
        self.on_error = on_error

    def make_node(self, x: Any) -> Apply:
        x = as_core(x, 2, "Cholesky", "the input")
        check_square(x, "Cholesky", "the input")
        n = square_length(x)
        return Apply(self, [x], [TensorType(lapack_dtype(x.type.dtype), (n, n))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        check_square_value(x, "Cholesky", "the input")
        dtype = node.outputs[0].type.numpy_dtype
        if not np.isfinite(x).all():
            # "nan" never raises for numerical trouble (as in PyTensor): NaN in, NaN out
            if self.on_error == "nan":
                output_storage[0][0] = np.full(x.shape, np.nan, dtype=dtype)
                return
            if self.check_finite:
                raise ValueError(f"Cholesky: the input (shape {x.shape}) contains NaN or infinity")
        try:
            out = scipy_linalg.cholesky(x, lower=self.lower, check_finite=False) if x.size else x.copy()
        except np.linalg.LinAlgError as err:
            if self.on_error == "raise":
                raise np.linalg.LinAlgError(
                    f"Cholesky: the matrix of shape {x.shape} is not positive definite ({err})"
                ) from err
            out = np.full(x.shape, np.nan, dtype=dtype)
        output_storage[0][0] = np.asarray(out, dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``A_bar = sym(L^-T Phi(L^T L_bar) L^-1)``, ``Phi`` the lower triangle with its
        diagonal halved (for symmetric perturbations of ``A``)."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (g,) = output_grads
        low, gl = (outputs[0], g) if self.lower else (mT(outputs[0]), mT(g))
        up_solve = SolveTriangular(lower=False, b_ndim=2)
        y = up_solve(mT(low), _phi(dot(mT(low), gl)))  # L^-T Phi
        abar_t = up_solve(mT(low), mT(y))  # (L^-T Phi L^-1)^T
        return [_grad_like(sym(abar_t), inputs[0])]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dL = L Phi(L^-1 sym(dA) L^-T)``."""
        (da,) = eval_points
        if is_disconnected(da):
            return [disconnected_type()]
        low = outputs[0] if self.lower else mT(outputs[0])
        lo_solve = SolveTriangular(lower=True, b_ndim=2)
        w = lo_solve(low, mT(lo_solve(low, sym(da))))
        dl = dot(low, _phi(w))
        return [dl if self.lower else mT(dl)]


def cholesky(
    x: Any,
    lower: bool = True,
    *,
    check_finite: bool = True,
    overwrite_a: bool = False,
    on_error: str = "nan",
) -> Variable:
    """The Cholesky factor of a symmetric positive-definite matrix (or a stack of them).

    ``lower=True`` gives ``L`` with ``x = L @ L.T``, else ``U`` with ``x = U.T @ U``; only
    that triangle of ``x`` is read. A matrix that is not positive definite gives NaNs
    (``on_error="nan"``, as in PyTensor) or raises ``LinAlgError`` (``"raise"``).
    NaN or infinite input gives NaNs with ``on_error="nan"``; with ``"raise"`` it is a
    ValueError (``check_finite``, the default) or left to LAPACK. ``overwrite_a`` is accepted for
    compatibility; arignote decides about in-place work itself.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> cholesky(x, lower=False).eval({x: np.array([[9.0, 3.0], [3.0, 5.0]])})
    array([[3., 1.],
           [0., 2.]])
    """
    x = as_stack(x, 2, "cholesky", "x")
    check_square(x, "cholesky", "x")
    return apply_core(Cholesky(lower=lower, check_finite=check_finite, on_error=on_error), x)


class Eigvalsh(Op):
    """The eigenvalues, ascending, of a symmetric (Hermitian) matrix of which only the
    triangle ``lower`` names is read."""

    __props__ = ("lower",)
    gufunc_signature = "(m,m)->(m)"

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    def make_node(self, a: Any) -> Apply:
        a = as_core(a, 2, "Eigvalsh", "a")
        check_square(a, "Eigvalsh", "a")
        return Apply(self, [a], [TensorType(real_dtype(a.type.dtype), (square_length(a),))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (a,) = inputs
        check_square_value(a, "Eigvalsh", "a")
        dtype = node.outputs[0].type.numpy_dtype
        if a.size:
            w = scipy_linalg.eigh(a, lower=self.lower, eigvals_only=True, check_finite=False)
        else:
            w = np.zeros(0)
        output_storage[0][0] = np.asarray(w, dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0][:1]]

    def _vectors(self, a: Variable) -> Variable:
        return Eigh(lower=self.lower)(a)[1]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``A_bar = V diag(w_bar) V^T``."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (a,) = inputs
        v = self._vectors(a)
        wbar = output_grads[0]
        return [_grad_like(dot(v * wbar.dimshuffle("x", 0), mT(v)), a)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dw_i = v_i^T sym(dA) v_i``."""
        (da,) = eval_points
        if is_disconnected(da):
            return [disconnected_type()]
        v = self._vectors(inputs[0])
        return [(v * dot(sym(da), v)).sum(axis=0)]


def _triangle_symmetric(a: Variable, lower: bool) -> Variable:
    """The symmetric matrix that the triangle of ``a`` on the ``lower`` side describes."""
    return tril(a) + mT(tril(a, -1)) if lower else triu(a) + mT(triu(a, 1))


def cholesky_reduce(a: Variable, b: Any, lower: bool, what: str) -> tuple[Variable, Variable]:
    """``(C, L)`` for the generalised problem ``A v = w B v``: ``B = L L^T`` and the standard
    problem ``C = L^-1 A L^-T`` with the same eigenvalues (eigenvectors ``L^-T u``). Only
    the triangles of ``a`` and ``b`` on the ``lower`` side are read, as in SciPy."""
    b = as_stack(b, 2, what, "b")
    check_square(b, what, "b")
    factor = cholesky(b, lower=lower, on_error="raise")
    low = factor if lower else mT(factor)
    a = _triangle_symmetric(a, lower)
    y = solve_triangular(low, a, lower=True, b_ndim=2)  # L^-1 A
    return solve_triangular(low, mT(y), lower=True, b_ndim=2), low  # L^-1 A L^-T (A symmetric)


def eigvalsh(a: Any, b: Any = None, lower: bool = True) -> Variable:
    """The eigenvalues, ascending, of the symmetric matrix ``a`` (or of the generalised
    problem ``a v = w b v``, ``b`` symmetric positive definite). Only the triangle of ``a``
    that ``lower`` names is read (with ``b``, ``a`` must be symmetric).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a = pt.dmatrix("a")
    >>> eigvalsh(a).eval({a: np.array([[2.0, 1.0], [1.0, 2.0]])})
    array([1., 3.])
    """
    a = as_stack(a, 2, "eigvalsh", "a")
    check_square(a, "eigvalsh", "a")
    if b is not None:
        a, _ = cholesky_reduce(a, b, lower, "eigvalsh")
    return apply_core(Eigvalsh(lower=lower), a)


_SCIPY_QR = {
    "full": "full",
    "complete": "full",
    "economic": "economic",
    "reduced": "economic",
    "r": "r",
    "raw": "raw",
}


def qr(
    A: Any,
    mode: str = "full",
    overwrite_a: bool = False,
    pivoting: bool = False,
    lwork: int | None = None,
) -> Any:
    """SciPy's ``linalg.qr`` of a matrix (or a stack of them), ``A = Q @ R``.

    ``mode="full"`` (or ``"complete"``) gives ``[Q, R]`` with ``Q`` ``m x m`` and ``R``
    ``m x n``; ``"economic"`` (or ``"reduced"``) ``Q`` ``m x k`` and ``R`` ``k x n``
    (``k = min(m, n)``); ``"r"`` only ``R`` (``m x n``); ``"raw"`` ``[H, tau, R]``
    (Householder form). ``pivoting`` appends the column permutation ``P`` (int32,
    ``A[:, P] = Q @ R``). Differentiable for ``m >= n`` except in ``"raw"`` mode.
    ``overwrite_a`` and ``lwork`` are accepted for compatibility.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a = pt.dmatrix("a")
    >>> q, r = qr(a, mode="economic")
    >>> (q.eval({a: np.ones((3, 2))}).shape, r.eval({a: np.ones((3, 2))}).shape)
    ((3, 2), (2, 2))
    """
    if mode not in _SCIPY_QR:
        raise ValueError(f"qr: mode must be one of {sorted(_SCIPY_QR)}, got {mode!r}")
    a = as_stack(A, 2, "qr", "A")
    out = apply_core(QR(_SCIPY_QR[mode], pivoting=pivoting), a)
    return out if isinstance(out, Variable) else list(out)


def eigh(
    a: Any, b: Any = None, lower: bool = True, UPLO: str | None = None, driver: str | None = None
) -> list[Variable]:
    """``[w, v]``: the eigenvalues (ascending) and eigenvectors (columns) of a symmetric
    matrix, or of the generalised problem ``a v = w b v`` (``b`` symmetric positive
    definite; the eigenvectors are then ``b``-orthonormal).

    Only the lower (``lower=True``, or ``UPLO="L"``, NumPy's spelling) or upper triangle
    is read. ``eigh(a, "U")`` is understood as NumPy's ``eigh(a, UPLO="U")``. Derivatives
    treat ``a`` as symmetric.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a = pt.dmatrix("a")
    >>> w, v = eigh(a)
    >>> w.eval({a: np.array([[2.0, 1.0], [1.0, 2.0]])})
    array([1., 3.])
    """
    if isinstance(b, str):  # NumPy's positional UPLO
        b, UPLO = None, b
    if UPLO is not None:
        if UPLO not in ("L", "U", "l", "u"):
            raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
        lower = UPLO.upper() == "L"
    a = as_stack(a, 2, "eigh", "a")
    check_square(a, "eigh", "a")
    if b is None:
        w, v = apply_core(Eigh(lower=lower, driver=driver), a)
        return [w, v]
    c, low = cholesky_reduce(a, b, lower, "eigh")
    w, u = apply_core(Eigh(lower=True, driver=driver), c)
    return [w, solve_triangular(low, u, lower=True, trans=1, b_ndim=2)]


def eig(x: Any) -> list[Variable]:
    """``[w, v]``: the eigenvalues and right eigenvectors (columns) of a square matrix,
    complex (complex64 for float32 input, else complex128). Not differentiable.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> w, v = eig(x)
    >>> w.eval({x: np.array([[0.0, -1.0], [1.0, 0.0]])})
    array([0.+1.j, 0.-1.j])
    """
    x = as_stack(x, 2, "eig", "x")
    check_square(x, "eig", "x")
    w, v = apply_core(Eig(), x)
    return [w, v]


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """The singular value decomposition ``a = U @ diag(s) @ Vh`` (``numpy.linalg.svd``):
    ``[U, s, Vh]``, or ``s`` alone without ``compute_uv``.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a = pt.dmatrix("a")
    >>> svd(a, compute_uv=False).eval({a: np.array([[3.0, 0.0], [0.0, -4.0], [0.0, 0.0]])})
    array([4., 3.])
    """
    a = as_stack(a, 2, "svd", "a")
    out = apply_core(SVD(full_matrices=full_matrices, compute_uv=compute_uv), a)
    return list(out) if compute_uv else out


_NUMPY_QR = {"reduced": "economic", "complete": "full", "r": "economic", "raw": "raw"}


def numpy_qr(a: Any, mode: str = "reduced") -> Any:
    """NumPy's ``linalg.qr``: ``mode="reduced"`` gives ``[Q, R]`` with ``Q`` ``m x k``,
    ``"complete"`` with ``Q`` ``m x m``, ``"r"`` only ``R`` (``k x n``), ``"raw"`` the
    Householder form ``[h, tau]`` (``h`` ``n x m``). ``k = min(m, n)``. (SciPy's flavour,
    with ``mode="full"`` by default, is :func:`arignote.tensor.slinalg.qr`, which is also
    ``arignote.tensor.linalg.qr``.)

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a = pt.dmatrix("a")
    >>> qr(a, mode="r").eval({a: np.array([[3.0, 1.0], [4.0, 2.0]])}).round(6)
    array([[-5. , -2.2],
           [ 0. ,  0.4]])
    """
    if mode not in _NUMPY_QR:
        raise ValueError(f"qr: mode must be one of {sorted(_NUMPY_QR)}, got {mode!r}")
    a = as_stack(a, 2, "qr", "a")
    out = apply_core(QR(_NUMPY_QR[mode]), a)
    if mode == "r":
        return out[1]
    if mode == "raw":
        return [mT(out[0]), out[1]]
    return list(out)
