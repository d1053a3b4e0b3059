"""Solving linear systems: ``Solve`` (every ``assume_a`` of ``scipy.linalg.solve``),
``SolveTriangular`` and ``CholeskySolve``, on matrices or stacks of them, with their
pullbacks and pushforwards.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> a, b = pt.dmatrix("a"), pt.dvector("b")
>>> x = pt.linalg.solve(a, b)
>>> x.eval({a: np.array([[2.0, 0.0], [0.0, 4.0]]), b: np.array([2.0, 2.0])})
array([1. , 0.5])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.lazy import lazy_module
from arignote.tensor.alloc import tril, triu
from arignote.tensor.linalg.operands import (
    _fmt,
    apply_core,
    as_core,
    as_stack,
    band_mask,
    check_square,
    check_square_value,
    complex_grads,
    eye_like,
    is_complex,
    lapack_dtype,
    merge_length,
    mT,
    square_length,
    sym,
)
from arignote.tensor.products import dot, outer
from arignote.tensor.shape import _grad_like
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import conj

# imported on first use (see arignote.lazy)
scipy_linalg = lazy_module("scipy.linalg")

__all__ = ["CholeskySolve", "Solve", "SolveBase", "SolveTriangular", "cho_solve", "solve", "solve_triangular"]


class SolveBase(Op):
    """Shared part of the solvers of ``A x = b``: ``A`` a square matrix, ``b`` a vector
    (``b_ndim=1``) or a matrix of right-hand sides (``b_ndim=2``).

    Subclasses say how to solve (:meth:`_solve`), how to solve with ``A^T`` (for the
    gradient of ``b``) and which entries of ``A`` are read (:meth:`_mask`; or
    :meth:`_a_grad` and :meth:`_a_tangent` when ``A`` is not the matrix read).

    ``on_error`` says what a system that cannot be solved (a singular matrix, a ``'pos'``
    matrix that is not positive definite) gives: ``"raise"`` a
    ``numpy.linalg.LinAlgError`` that names the Op, or ``"nan"`` an output of NaNs.
    """

    __props__: tuple[str, ...] = ("lower", "b_ndim", "on_error")
    #: as SciPy and PyTensor: a system that cannot be solved raises
    default_on_error = "raise"

    def __init__(self, *, lower: bool = False, b_ndim: int = 2, on_error: str | None = None):
        if b_ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: b_ndim must be 1 or 2, got {b_ndim!r}")
        on_error = self.default_on_error if on_error is None else on_error
        if on_error not in ("raise", "nan"):
            raise ValueError(f"{type(self).__name__}: on_error must be 'raise' or 'nan', got {on_error!r}")
        self.lower = bool(lower)
        self.b_ndim = int(b_ndim)
        self.on_error = on_error
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
        except np.linalg.LinAlgError as err:
            if self.on_error == "raise":
                raise np.linalg.LinAlgError(
                    f"{self}: the matrix a of shape {a.shape} {self._failure()} ({err}); pass "
                    "on_error='nan' to get NaNs instead"
                ) from err
            x = np.full(b.shape, np.nan, dtype=dtype)
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def _solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _failure(self) -> str:
        """What is wrong with a matrix the solver failed on."""
        return "is singular"

    def _on_error_str(self) -> str:
        return "" if self.on_error == self.default_on_error else f", on_error={self.on_error!r}"

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
    system (or a ``'pos'`` matrix that is not positive definite) raises
    ``numpy.linalg.LinAlgError`` (``on_error="raise"``, the default, as
    ``scipy.linalg.solve`` and PyTensor do) or gives NaNs (``on_error="nan"``).
    """

    __props__ = ("assume_a", "lower", "b_ndim", "on_error")

    def __init__(
        self, *, assume_a: str = "gen", lower: bool = False, b_ndim: int = 2, on_error: str | None = None
    ):
        key = assume_a.lower() if isinstance(assume_a, str) else assume_a
        if key not in _ASSUME_A:
            raise ValueError(
                f"Solve: assume_a must be one of {sorted(_ASSUME_A)} (triangular systems: "
                f"solve_triangular), got {assume_a!r}"
            )
        super().__init__(lower=lower, b_ndim=b_ndim, on_error=on_error)
        self.assume_a = _ASSUME_A[key]

    def _solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return scipy_linalg.solve(a, b, lower=self.lower, assume_a=self.assume_a, check_finite=False)

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

    def _failure(self) -> str:
        return "is not positive definite" if self.assume_a == "pos" else "is singular"

    def __str__(self) -> str:
        return f"Solve{{{self.assume_a}, lower={self.lower}, b_ndim={self.b_ndim}{self._on_error_str()}}}"


class SolveTriangular(SolveBase):
    """``x`` with ``A x = b`` for a triangular ``A`` (the triangle ``lower`` names is read;
    with ``unit_diagonal`` the diagonal is taken to be ones and not read). A zero on the
    diagonal raises ``numpy.linalg.LinAlgError`` naming the Op (``on_error="raise"``, the
    default, as ``scipy.linalg.solve_triangular`` and PyTensor do) or gives NaNs
    (``on_error="nan"``).
    """

    __props__ = ("lower", "unit_diagonal", "b_ndim", "on_error")

    def __init__(
        self,
        *,
        lower: bool = False,
        unit_diagonal: bool = False,
        b_ndim: int = 2,
        on_error: str | None = None,
    ):
        super().__init__(lower=lower, b_ndim=b_ndim, on_error=on_error)
        self.unit_diagonal = bool(unit_diagonal)

    def _solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return scipy_linalg.solve_triangular(
            a, b, lower=self.lower, unit_diagonal=self.unit_diagonal, check_finite=False
        )

    def _transpose_solve(self, a: Variable, y: Variable) -> Variable:
        op = SolveTriangular(
            lower=not self.lower, unit_diagonal=self.unit_diagonal, b_ndim=self.b_ndim, on_error=self.on_error
        )
        return op(mT(a), y)

    def _mask(self, m: Variable) -> Variable:
        k = -1 if self.unit_diagonal else 0
        return tril(m, k) if self.lower else triu(m, -k)

    def __str__(self) -> str:
        unit = ", unit_diagonal" if self.unit_diagonal else ""
        return f"SolveTriangular{{lower={self.lower}{unit}, b_ndim={self.b_ndim}{self._on_error_str()}}}"

    def _failure(self) -> str:
        return "is singular (a zero on its diagonal)"


class CholeskySolve(SolveBase):
    """``x`` with ``A x = b`` where ``A = C C^T`` (``lower=True``) or ``C^T C``, given the
    Cholesky factor ``C`` (only its triangle on that side is read). A factor with a zero
    on its diagonal (``A`` singular) raises ``numpy.linalg.LinAlgError`` naming the Op
    (``on_error="raise"``, the default, as for :class:`Solve` and
    :class:`SolveTriangular`) or gives NaNs (``on_error="nan"``); LAPACK's ``potrs``
    does not check, so the diagonal is checked here (``scipy.linalg.cho_solve`` would
    return infinities)."""

    __props__ = ("lower", "b_ndim", "on_error")

    def _solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        zeros = np.flatnonzero(np.diagonal(a) == 0)
        if zeros.size:
            raise np.linalg.LinAlgError(f"singular matrix: zero at diagonal position {int(zeros[0])}")
        return scipy_linalg.cho_solve((a, self.lower), b, check_finite=False)

    def _failure(self) -> str:
        return "(a Cholesky factor) is singular (a zero on its diagonal)"

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
        return f"CholeskySolve{{lower={self.lower}, b_ndim={self.b_ndim}{self._on_error_str()}}}"


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
    on_error: str = "raise",
) -> Variable:
    """``x`` with ``a @ x = b`` (``a.T @ x = b`` with ``transposed``), like ``scipy.linalg.solve``.

    ``assume_a`` picks the solver: ``'gen'`` (general), ``'sym'``, ``'her'``, ``'pos'``
    (positive definite; these three read the triangle ``lower`` names), ``'diagonal'``,
    ``'tridiagonal'``, ``'banded'``, ``'lower triangular'``, ``'upper triangular'`` (the
    long names ``'general'``, ``'symmetric'``, ... work too). ``b_ndim`` says whether the
    core of ``b`` is a vector (1) or a matrix (2); by default ``min(b.ndim, 2)``, so a
    stack of vectors needs ``b_ndim=1``. A singular system (a ``'pos'`` matrix that is not
    positive definite) raises ``numpy.linalg.LinAlgError`` naming the Op, as
    ``scipy.linalg.solve`` and PyTensor do (``on_error="raise"``); ``on_error="nan"`` gives
    NaNs instead (as :func:`cholesky` can). ``overwrite_a``, ``overwrite_b`` and
    ``check_finite`` are accepted for compatibility.

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
        return solve_triangular(
            a, b, trans=int(transposed), lower=key.startswith("lower"), b_ndim=core, on_error=on_error
        )
    if transposed:
        a, lower = mT(a), not lower
    return apply_core(Solve(assume_a=assume_a, lower=lower, b_ndim=core, on_error=on_error), a, b)


def solve_triangular(
    a: Any,
    b: Any,
    *,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    check_finite: bool = True,
    b_ndim: int | None = None,
    on_error: str = "raise",
) -> Variable:
    """``x`` with ``a @ x = b`` for a triangular ``a``, like ``scipy.linalg.solve_triangular``.

    ``lower`` says which triangle of ``a`` is read; ``trans`` solves ``a x = b`` (0 or
    ``'N'``), ``a^T x = b`` (1 or ``'T'``) or ``a^H x = b`` (2 or ``'C'``);
    ``unit_diagonal`` takes the diagonal to be ones. A zero on the diagonal (a singular
    ``a``) raises ``numpy.linalg.LinAlgError`` naming the Op (``on_error="raise"``, the
    default, as SciPy and PyTensor do); ``on_error="nan"`` gives NaNs instead.

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
    op = SolveTriangular(lower=lower, unit_diagonal=unit_diagonal, b_ndim=core, on_error=on_error)
    return apply_core(op, a, b)


def cho_solve(
    c_and_lower: tuple[Any, bool], b: Any, *, b_ndim: int | None = None, on_error: str = "raise"
) -> Variable:
    """``x`` with ``A x = b``, given ``(c, lower)``: the Cholesky factor ``c`` of ``A``
    (as :func:`cholesky` returns it) and which triangle it is in. A factor with a zero on
    its diagonal (a singular ``A``) raises ``numpy.linalg.LinAlgError`` naming the Op
    (``on_error="raise"``, the default, like :func:`solve` and :func:`solve_triangular`);
    ``on_error="nan"`` gives NaNs instead.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a, b = pt.dmatrix("a"), pt.dvector("b")
    >>> x = cho_solve((pt.linalg.cholesky(a), True), b)
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
    return apply_core(CholeskySolve(lower=bool(lower), b_ndim=core, on_error=on_error), c, b)
