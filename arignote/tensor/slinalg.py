"""SciPy-flavoured linear algebra: ``cholesky``, ``solve``, ``solve_triangular``,
``cho_solve``, ``eigvalsh`` and ``expm`` (also reached as ``arignote.tensor.linalg``).

Each function applies a core Op (matrices and vectors only) and batches it over leading
dimensions, as NumPy's linalg functions do. Outputs are in the dtype LAPACK computes in:
integers become float64 (int8/int16/bool: float32), float32 stays float32.

Derivatives of the Ops that read one triangle of a symmetric matrix (``cholesky``,
``solve`` with ``assume_a`` ``'sym'``/``'her'``/``'pos'``, ``eigvalsh``) treat that
matrix as symmetric: they are the derivatives of ``f((A + A^T) / 2)``, so the gradient
with respect to ``A`` is symmetric. That is the right answer whenever ``A`` is built
symmetric (``X @ X.T``, a covariance, ...).

>>> import numpy as np
>>> import arignote.tensor as pt
>>> from arignote.tensor.slinalg import cholesky, solve
>>> a = pt.dmatrix("a")
>>> b = pt.dvector("b")
>>> x = solve(a, b, assume_a="pos")
>>> x.eval({a: np.array([[4.0, 2.0], [2.0, 3.0]]), b: np.array([2.0, 1.0])})
array([0.5, 0. ])
>>> cholesky(a).eval({a: np.array([[4.0, 2.0], [2.0, 3.0]])})
array([[2.        , 0.        ],
       [1.        , 1.41421356]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.linalg

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.tensor.alloc import tril, triu, zeros_like
from arignote.tensor.join import concatenate, split
from arignote.tensor.linalg_base import (
    _fmt,
    apply_core,
    as_core,
    as_stack,
    band_mask,
    check_square,
    check_square_value,
    complex_grads,
    const,
    eye_like,
    is_complex,
    lapack_dtype,
    length,
    merge_length,
    mT,
    real_dtype,
    register_core_batch_rule,
    square_length,
    sym,
)
from arignote.tensor.linalg_decompositions import QR, Eigh
from arignote.tensor.products import dot, outer
from arignote.tensor.shape import _grad_like
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import conj

__all__ = [
    "Cholesky",
    "CholeskySolve",
    "Eigvalsh",
    "Expm",
    "Solve",
    "SolveBase",
    "SolveTriangular",
    "cho_solve",
    "cholesky",
    "eigvalsh",
    "expm",
    "qr",
    "solve",
    "solve_triangular",
]


def _phi(x: Variable) -> Variable:
    """The lower triangle of ``x`` with its diagonal halved."""
    return tril(x) - x * eye_like(x) * const(0.5, x.type.dtype)


# --- Cholesky --------------------------------------------------------------------------------


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
            out = scipy.linalg.cholesky(x, lower=self.lower, check_finite=False) if x.size else x.copy()
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


# --- linear solves ---------------------------------------------------------------------------


class SolveBase(Op):
    """Shared part of the solvers of ``A x = b``: ``A`` a square matrix, ``b`` a vector
    (``b_ndim=1``) or a matrix of right-hand sides (``b_ndim=2``).

    Subclasses say how to solve (:meth:`_solve`), how to solve with ``A^T`` (for the
    gradient of ``b``) and which entries of ``A`` are read (:meth:`_mask`; or
    :meth:`_a_grad` and :meth:`_a_tangent` when ``A`` is not the matrix read).
    """

    __props__: tuple[str, ...] = ("lower", "b_ndim")

    def __init__(self, *, lower: bool = False, b_ndim: int = 2):
        if b_ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: b_ndim must be 1 or 2, got {b_ndim!r}")
        self.lower = bool(lower)
        self.b_ndim = int(b_ndim)
        self.gufunc_signature = "(m,m),(m)->(m)" if b_ndim == 1 else "(m,m),(m,n)->(m,n)"

    def make_node(self, a: Any, b: Any) -> Apply:
        what = type(self).__name__
        a = as_core(a, 2, what, "a")
        check_square(a, what, "a")
        b = as_core(b, self.b_ndim, what, "b")
        n, rows = square_length(a), b.type.shape[0]
        if n is not None and rows is not None and n != rows:
            raise ValueError(
                f"{what}: a has static shape {_fmt(a.type.shape)} and b has static shape "
                f"{_fmt(b.type.shape)}; b must have {n} rows, like a"
            )
        shape = (merge_length(n, rows), *b.type.shape[1:])
        return Apply(self, [a, b], [TensorType(lapack_dtype(a.type.dtype, b.type.dtype), shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        a, b = inputs
        what = type(self).__name__
        check_square_value(a, what, "a")
        if b.shape[0] != a.shape[0]:
            raise ValueError(
                f"{what}: a has shape {a.shape} and b has shape {b.shape}; b must have {a.shape[0]} rows"
            )
        dtype = node.outputs[0].type.numpy_dtype
        if b.size == 0 or a.size == 0:
            output_storage[0][0] = np.zeros(b.shape, dtype=dtype)
            return
        try:
            x = self._solve(a, b)
        except np.linalg.LinAlgError:
            x = np.full(b.shape, np.nan, dtype=dtype)  # a singular system gives NaNs, as in PyTensor
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def _solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        a_shape, b_shape = shapes
        rows = node.outputs[0].type.shape[0]
        return [(rows if rows is not None else a_shape[0], *b_shape[1:])]

    # -- derivatives: x = A^-1 b; b_bar = A^-T x_bar, A_bar = -b_bar x^T ---------------------

    def _transpose_solve(self, a: Variable, y: Variable) -> Variable:
        """``A^-T y`` for the matrix this Op reads from ``a``."""
        raise NotImplementedError

    def _mask(self, m: Variable) -> Variable:
        """``m`` with zeros where the entries of ``a`` are not read."""
        return m

    def _a_grad(self, a: Variable, abar: Variable) -> Variable:
        """The gradient of ``a`` from the gradient of the matrix the Op reads (``abar``)."""
        return self._mask(abar)

    def _a_tangent(self, a: Variable, da: Variable) -> Variable:
        """The tangent of the matrix the Op reads, for a tangent ``da`` of ``a``."""
        return self._mask(da)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        a, b = inputs
        (x,) = outputs
        (xbar,) = output_grads
        bbar = self._transpose_solve(a, xbar)
        abar = -outer(bbar, x) if self.b_ndim == 1 else -dot(bbar, mT(x))
        return [_grad_like(self._a_grad(a, abar), a), _grad_like(bbar, b)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dx = A^-1 (db - dA x)``."""
        a, _ = inputs
        (x,) = outputs
        da, db = eval_points
        if is_disconnected(da) and is_disconnected(db):
            return [disconnected_type()]
        rhs = None if is_disconnected(db) else db
        if not is_disconnected(da):
            term = dot(self._a_tangent(a, da), x)
            rhs = -term if rhs is None else rhs - term
        return [self(a, rhs)]


_ASSUME_A = {
    "gen": "gen",
    "general": "gen",
    "sym": "sym",
    "symmetric": "sym",
    "her": "her",
    "hermitian": "her",
    "pos": "pos",
    "positive definite": "pos",
    "diagonal": "diagonal",
    "tridiagonal": "tridiagonal",
    "banded": "banded",
}
_TRIANGULAR = ("lower triangular", "upper triangular")


class Solve(SolveBase):
    """``x`` with ``A x = b``, through ``scipy.linalg.solve`` with the structure
    ``assume_a`` says (``'gen'``, ``'sym'``, ``'her'``, ``'pos'``, ``'diagonal'``,
    ``'tridiagonal'``, ``'banded'``). ``'sym'``/``'her'``/``'pos'`` read the triangle
    ``lower`` names; ``'diagonal'``/``'tridiagonal'`` read only those diagonals. A singular
    system (or a ``'pos'`` matrix that is not positive definite) gives NaNs.
    """

    __props__ = ("assume_a", "lower", "b_ndim")

    def __init__(self, *, assume_a: str = "gen", lower: bool = False, b_ndim: int = 2):
        key = assume_a.lower() if isinstance(assume_a, str) else assume_a
        if key not in _ASSUME_A:
            raise ValueError(
                f"Solve: assume_a must be one of {sorted(_ASSUME_A)} (triangular systems: "
                f"solve_triangular), got {assume_a!r}"
            )
        super().__init__(lower=lower, b_ndim=b_ndim)
        self.assume_a = _ASSUME_A[key]

    def _solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return scipy.linalg.solve(a, b, lower=self.lower, assume_a=self.assume_a, check_finite=False)

    def _symmetric(self) -> bool:
        return self.assume_a in ("sym", "her", "pos")

    def _transpose_solve(self, a: Variable, y: Variable) -> Variable:
        if self._symmetric():
            return self(a, y)  # the matrix read is symmetric
        return self(mT(a), y)

    def _mask(self, m: Variable) -> Variable:
        if self._symmetric():
            return sym(m)
        if self.assume_a == "diagonal":
            return m * eye_like(m)
        if self.assume_a == "tridiagonal":
            return m * band_mask(m, 1, 1)
        return m

    def __str__(self) -> str:
        return f"Solve{{{self.assume_a}, lower={self.lower}, b_ndim={self.b_ndim}}}"


class SolveTriangular(SolveBase):
    """``x`` with ``A x = b`` for a triangular ``A`` (the triangle ``lower`` names is read;
    with ``unit_diagonal`` the diagonal is taken to be ones and not read). A zero on the
    diagonal gives NaNs.
    """

    __props__ = ("lower", "unit_diagonal", "b_ndim")

    def __init__(self, *, lower: bool = False, unit_diagonal: bool = False, b_ndim: int = 2):
        super().__init__(lower=lower, b_ndim=b_ndim)
        self.unit_diagonal = bool(unit_diagonal)

    def _solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return scipy.linalg.solve_triangular(
            a, b, lower=self.lower, unit_diagonal=self.unit_diagonal, check_finite=False
        )

    def _transpose_solve(self, a: Variable, y: Variable) -> Variable:
        op = SolveTriangular(lower=not self.lower, unit_diagonal=self.unit_diagonal, b_ndim=self.b_ndim)
        return op(mT(a), y)

    def _mask(self, m: Variable) -> Variable:
        k = -1 if self.unit_diagonal else 0
        return tril(m, k) if self.lower else triu(m, -k)

    def __str__(self) -> str:
        unit = ", unit_diagonal" if self.unit_diagonal else ""
        return f"SolveTriangular{{lower={self.lower}{unit}, b_ndim={self.b_ndim}}}"


class CholeskySolve(SolveBase):
    """``x`` with ``A x = b`` where ``A = C C^T`` (``lower=True``) or ``C^T C``, given the
    Cholesky factor ``C`` (only its triangle on that side is read)."""

    __props__ = ("lower", "b_ndim")

    def _solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return scipy.linalg.cho_solve((a, self.lower), b, check_finite=False)

    def _transpose_solve(self, a: Variable, y: Variable) -> Variable:
        return self(a, y)  # A is symmetric

    def _a_grad(self, a: Variable, abar: Variable) -> Variable:
        s = abar + mT(abar)  # A = C C^T: dA = dC C^T + C dC^T
        return tril(dot(s, a)) if self.lower else triu(dot(a, s))

    def _a_tangent(self, a: Variable, da: Variable) -> Variable:
        if self.lower:
            dc = tril(da)
            return dot(dc, mT(a)) + dot(a, mT(dc))
        dc = triu(da)
        return dot(mT(dc), a) + dot(mT(a), dc)

    def __str__(self) -> str:
        return f"CholeskySolve{{lower={self.lower}, b_ndim={self.b_ndim}}}"


def _b_ndim(b: Variable, b_ndim: int | None, what: str) -> int:
    if b_ndim is None:
        return min(b.type.ndim, 2)
    if b_ndim not in (1, 2):
        raise ValueError(f"{what}: b_ndim must be 1 (vectors) or 2 (matrices), got {b_ndim!r}")
    if b.type.ndim < b_ndim:
        raise ValueError(f"{what}: b_ndim={b_ndim}, but b ({b}) is only {b.type.ndim}-d ({b.type})")
    return b_ndim


def _solve_inputs(a: Any, b: Any, b_ndim: int | None, what: str) -> tuple[Variable, Variable, int]:
    a = as_stack(a, 2, what, "a")
    check_square(a, what, "a")
    b = as_stack(b, 1, what, "b")
    return a, b, _b_ndim(b, b_ndim, what)


def solve(
    a: Any,
    b: Any,
    *,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
    transposed: bool = False,
    b_ndim: int | None = None,
) -> Variable:
    """``x`` with ``a @ x = b`` (``a.T @ x = b`` with ``transposed``), like ``scipy.linalg.solve``.

    ``assume_a`` picks the solver: ``'gen'`` (general), ``'sym'``, ``'her'``, ``'pos'``
    (positive definite; these three read the triangle ``lower`` names), ``'diagonal'``,
    ``'tridiagonal'``, ``'banded'``, ``'lower triangular'``, ``'upper triangular'`` (the
    long names ``'general'``, ``'symmetric'``, ... work too). ``b_ndim`` says whether the
    core of ``b`` is a vector (1) or a matrix (2); by default ``min(b.ndim, 2)``, so a
    stack of vectors needs ``b_ndim=1``. A singular system gives NaNs (as in PyTensor).
    ``overwrite_a``, ``overwrite_b`` and ``check_finite`` are accepted for compatibility.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a, b = pt.dmatrix("a"), pt.dvector("b")
    >>> solve(a, b, transposed=True).eval({a: np.array([[2.0, 1.0], [0.0, 1.0]]), b: np.array([4.0, 5.0])})
    array([2., 3.])
    """
    what = "solve"
    a, b, core = _solve_inputs(a, b, b_ndim, what)
    key = assume_a.lower() if isinstance(assume_a, str) else assume_a
    if key in _TRIANGULAR:
        return solve_triangular(a, b, trans=int(transposed), lower=key.startswith("lower"), b_ndim=core)
    if transposed:
        a, lower = mT(a), not lower
    return apply_core(Solve(assume_a=assume_a, lower=lower, b_ndim=core), a, b)


def solve_triangular(
    a: Any,
    b: Any,
    *,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    check_finite: bool = True,
    b_ndim: int | None = None,
) -> Variable:
    """``x`` with ``a @ x = b`` for a triangular ``a``, like ``scipy.linalg.solve_triangular``.

    ``lower`` says which triangle of ``a`` is read; ``trans`` solves ``a x = b`` (0 or
    ``'N'``), ``a^T x = b`` (1 or ``'T'``) or ``a^H x = b`` (2 or ``'C'``);
    ``unit_diagonal`` takes the diagonal to be ones. A zero on the diagonal gives NaNs.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a, b = pt.dmatrix("a"), pt.dvector("b")
    >>> x = solve_triangular(a, b, lower=True)
    >>> x.eval({a: np.array([[2.0, 0.0], [1.0, 1.0]]), b: np.array([2.0, 3.0])})
    array([1., 2.])
    """
    what = "solve_triangular"
    a, b, core = _solve_inputs(a, b, b_ndim, what)
    modes = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}
    if isinstance(trans, bool) or trans not in modes:
        raise ValueError(f"{what}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    mode = modes[trans]
    if mode:
        a, lower = mT(a), not lower
        if mode == 2 and is_complex(a):
            a = conj(a)
    op = SolveTriangular(lower=lower, unit_diagonal=unit_diagonal, b_ndim=core)
    return apply_core(op, a, b)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, *, b_ndim: int | None = None) -> Variable:
    """``x`` with ``A x = b``, given ``(c, lower)``: the Cholesky factor ``c`` of ``A``
    (as :func:`cholesky` returns it) and which triangle it is in.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a, b = pt.dmatrix("a"), pt.dvector("b")
    >>> x = cho_solve((cholesky(a), True), b)
    >>> x.eval({a: np.array([[4.0, 2.0], [2.0, 3.0]]), b: np.array([2.0, 1.0])})
    array([0.5, 0. ])
    """
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise TypeError(
            f"cho_solve: the first argument must be a pair (c, lower), got {c_and_lower!r}"
        ) from None
    c, b, core = _solve_inputs(c, b, b_ndim, "cho_solve")
    return apply_core(CholeskySolve(lower=bool(lower), b_ndim=core), c, b)


# --- eigenvalues of a symmetric matrix -------------------------------------------------------


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
            w = scipy.linalg.eigh(a, lower=self.lower, eigvals_only=True, check_finite=False)
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


# --- matrix exponential ----------------------------------------------------------------------


def _block_upper_right(diag: Variable, corner: Variable) -> Variable:
    """The upper-right block of ``expm([[diag, corner], [0, diag]])`` (the Fréchet
    derivative of ``expm`` at ``diag`` in the direction ``corner``)."""
    n = length(diag, 0)
    top = concatenate([diag, corner], axis=1)
    bottom = concatenate([zeros_like(diag), diag], axis=1)
    e = Expm()(concatenate([top, bottom], axis=0))
    upper = split(e, [n, n], 2, axis=0)[0]
    return split(upper, [n, n], 2, axis=1)[1]


class Expm(Op):
    """The matrix exponential ``exp(A)`` of a square matrix (``scipy.linalg.expm``)."""

    __props__ = ()
    gufunc_signature = "(m,m)->(m,m)"

    def make_node(self, a: Any) -> Apply:
        a = as_core(a, 2, "Expm", "a")
        check_square(a, "Expm", "a")
        n = square_length(a)
        return Apply(self, [a], [TensorType(lapack_dtype(a.type.dtype), (n, n))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (a,) = inputs
        check_square_value(a, "Expm", "a")
        dtype = node.outputs[0].type.numpy_dtype
        output_storage[0][0] = np.asarray(scipy.linalg.expm(a.astype(dtype, copy=False)), dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The adjoint of the Fréchet derivative ``L(A, .)`` is ``L(A^T, .)``: one
        exponential of a ``2n x 2n`` block matrix."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (a,) = inputs
        return [_grad_like(_block_upper_right(mT(a), output_grads[0]), a)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        (da,) = eval_points
        if is_disconnected(da):
            return [disconnected_type()]
        return [_block_upper_right(inputs[0], da)]


def expm(A: Any) -> Variable:
    """The matrix exponential of a square matrix (or a stack of them).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a = pt.dmatrix("a")
    >>> expm(a).eval({a: np.array([[0.0, 1.0], [0.0, 0.0]])})
    array([[1., 1.],
           [0., 1.]])
    """
    a = as_stack(A, 2, "expm", "A")
    check_square(a, "expm", "A")
    return apply_core(Expm(), a)


# --- QR --------------------------------------------------------------------------------------

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


register_core_batch_rule(Cholesky, Solve, SolveTriangular, CholeskySolve, Eigvalsh, Expm)
