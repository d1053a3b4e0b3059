"""NumPy-flavoured linear algebra: ``matrix_inverse`` (``inv``), ``det``, ``slogdet``,
``eigh``, ``eig``, ``svd``, ``qr``, ``pinv``, ``trace``, ``norm``, ``matrix_power`` and
``matrix_dot`` (also reached as ``arignote.tensor.linalg``).

As in NumPy, every function takes a stack of matrices (``(..., m, n)``) as well as a
single one. Outputs are in the dtype LAPACK computes in (integers: float64, except
int8/int16/bool: float32; float32 stays float32).

>>> import numpy as np
>>> import arignote.tensor as pt
>>> from arignote.tensor.nlinalg import det, inv
>>> x = pt.dmatrix("x")
>>> inv(x).eval({x: np.array([[2.0, 0.0], [0.0, 4.0]])})
array([[0.5 , 0.  ],
       [0.  , 0.25]])
>>> det(x).eval({x: np.array([[2.0, 1.0], [1.0, 3.0]])})
array(5.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.tensor.alloc import eye, zeros_like
from arignote.tensor.axes import expand_dims, moveaxis, squeeze
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.diag import trace as diag_trace
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.linalg_base import (
    apply_core,
    as_core,
    as_stack,
    check_square,
    check_square_value,
    complex_grads,
    const,
    eye_like,
    is_complex,
    lapack_dtype,
    length,
    mT,
    real_dtype,
    register_core_batch_rule,
    square_length,
    sym,
)
from arignote.tensor.linalg_decompositions import QR, SVD, Eig, Eigh
from arignote.tensor.products import dot, matmul
from arignote.tensor.reductions import max, min, sum
from arignote.tensor.shape import _grad_like
from arignote.tensor.slinalg import cholesky_reduce, solve_triangular
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import abs as abs_
from arignote.tensor.ufuncs import cast, neq, sqrt

__all__ = [
    "Det",
    "MatrixInverse",
    "MatrixPinv",
    "SLogDet",
    "det",
    "eig",
    "eigh",
    "inv",
    "matrix_dot",
    "matrix_inverse",
    "matrix_power",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "svd",
    "trace",
]


# --- inverse and pseudo-inverse --------------------------------------------------------------


class MatrixInverse(Op):
    """The inverse of a square matrix (``numpy.linalg.inv``); a singular matrix raises
    ``numpy.linalg.LinAlgError``."""

    __props__ = ()
    gufunc_signature = "(m,m)->(m,m)"
    stacked_perform = True  # NumPy computes a stack of these in one call

    def make_node(self, x: Any) -> Apply:
        x = as_core(x, 2, "MatrixInverse", "the input")
        check_square(x, "MatrixInverse", "the input")
        n = square_length(x)
        return Apply(self, [x], [TensorType(lapack_dtype(x.type.dtype), (n, n))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        check_square_value(x, "MatrixInverse", "the input")
        dtype = node.outputs[0].type.numpy_dtype
        try:
            out = np.linalg.inv(x.astype(dtype, copy=False))
        except np.linalg.LinAlgError as err:
            raise np.linalg.LinAlgError(f"MatrixInverse: the matrix of shape {x.shape} is singular") from err
        output_storage[0][0] = np.asarray(out, dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``X_bar = -Y^T Y_bar Y^T`` for ``Y = X^-1``."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (y,) = outputs
        yt = mT(y)
        return [_grad_like(-dot(dot(yt, output_grads[0]), yt), inputs[0])]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dY = -Y dX Y``."""
        (dx,) = eval_points
        if is_disconnected(dx):
            return [disconnected_type()]
        (y,) = outputs
        return [-dot(dot(y, dx), y)]


def matrix_inverse(x: Any) -> Variable:
    """The inverse of a square matrix (or of each matrix in a stack).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.tensor3("x", dtype="float64")
    >>> matrix_inverse(x).eval({x: np.array([[[2.0]], [[4.0]]])})
    array([[[0.5 ]],
    <BLANKLINE>
           [[0.25]]])
    """
    x = as_stack(x, 2, "matrix_inverse", "x")
    check_square(x, "matrix_inverse", "x")
    return apply_core(MatrixInverse(), x)


inv = matrix_inverse


class MatrixPinv(Op):
    """The Moore-Penrose pseudo-inverse of an ``m x n`` matrix (``numpy.linalg.pinv``);
    ``hermitian`` says the matrix is symmetric (its lower triangle is read).

    The gradient assumes the rank does not change near the point (it is not continuous
    where it does)."""

    __props__ = ("hermitian",)
    gufunc_signature = "(m,n)->(n,m)"
    stacked_perform = True  # NumPy computes a stack of these in one call

    def __init__(self, hermitian: bool = False):
        self.hermitian = bool(hermitian)

    def make_node(self, x: Any) -> Apply:
        x = as_core(x, 2, "MatrixPinv", "the input")
        if self.hermitian:
            check_square(x, "MatrixPinv(hermitian=True)", "the input")
        m, n = x.type.shape
        return Apply(self, [x], [TensorType(lapack_dtype(x.type.dtype), (n, m))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        if self.hermitian:
            check_square_value(x, "MatrixPinv(hermitian=True)", "the input")
        dtype = node.outputs[0].type.numpy_dtype
        out = np.linalg.pinv(x.astype(dtype, copy=False), hermitian=self.hermitian)
        output_storage[0][0] = np.asarray(out, dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        m, n = shapes[0]
        return [(n, m)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Golub and Pereyra's derivative (constant rank), with ``Y = A^+`` and ``G = Y_bar``:
        ``A_bar = -Y^T G Y^T + (I - A Y) G^T Y Y^T + Y^T Y G^T (I - Y A)``."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (a,), (y,), (g,) = inputs, outputs, output_grads
        yt, gt = mT(y), mT(g)
        ay, ya = dot(a, y), dot(y, a)
        abar = (
            -dot(dot(yt, g), yt)
            + dot(dot(eye_like(ay) - ay, gt), dot(y, yt))
            + dot(dot(yt, y), dot(gt, eye_like(ya) - ya))
        )
        return [_grad_like(sym(abar) if self.hermitian else abar, a)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dY = -Y dA Y + Y Y^T dA^T (I - A Y) + (I - Y A) dA^T Y^T Y``."""
        (da,) = eval_points
        if is_disconnected(da):
            return [disconnected_type()]
        (a,), (y,) = inputs, outputs
        if self.hermitian:
            da = sym(da)
        yt, dat = mT(y), mT(da)
        ay, ya = dot(a, y), dot(y, a)
        dy = (
            -dot(dot(y, da), y)
            + dot(dot(y, yt), dot(dat, eye_like(ay) - ay))
            + dot(dot(eye_like(ya) - ya, dat), dot(yt, y))
        )
        return [dy]


def pinv(x: Any, hermitian: bool = False) -> Variable:
    """The Moore-Penrose pseudo-inverse of a matrix (or a stack of them), ``(..., m, n) ->
    (..., n, m)``.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> pinv(x).eval({x: np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])})
    array([[1. , 0. , 0. ],
           [0. , 0.5, 0. ]])
    """
    x = as_stack(x, 2, "pinv", "x")
    return apply_core(MatrixPinv(hermitian=hermitian), x)


# --- determinants ----------------------------------------------------------------------------


class Det(Op):
    """The determinant of a square matrix (``numpy.linalg.det``), a 0-d tensor."""

    __props__ = ()
    gufunc_signature = "(m,m)->()"
    stacked_perform = True  # NumPy computes a stack of these in one call

    def make_node(self, x: Any) -> Apply:
        x = as_core(x, 2, "Det", "the input")
        check_square(x, "Det", "the input")
        return Apply(self, [x], [TensorType(lapack_dtype(x.type.dtype), ())()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        check_square_value(x, "Det", "the input")
        dtype = node.outputs[0].type.numpy_dtype
        output_storage[0][0] = np.asarray(np.linalg.det(x.astype(dtype, copy=False)), dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [()]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``X_bar = g det(X) X^-T`` (Jacobi's formula; the matrix must be invertible)."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (x,), (d,), (g,) = inputs, outputs, output_grads
        return [_grad_like((g * d) * mT(MatrixInverse()(x)), x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``d det = det(X) tr(X^-1 dX)``."""
        (dx,) = eval_points
        if is_disconnected(dx):
            return [disconnected_type()]
        (x,), (d,) = inputs, outputs
        return [d * (mT(MatrixInverse()(x)) * dx).sum()]


def det(x: Any) -> Variable:
    """The determinant of a square matrix (or of each matrix in a stack).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.tensor3("x", dtype="float64")
    >>> det(x).eval({x: np.stack([np.eye(2) * 2, np.eye(2) * 3])})
    array([4., 9.])
    """
    x = as_stack(x, 2, "det", "x")
    check_square(x, "det", "x")
    return apply_core(Det(), x)


class SLogDet(Op):
    """The sign and the log of the absolute value of the determinant of a square matrix
    (``numpy.linalg.slogdet``): two 0-d outputs, ``det = sign * exp(logabsdet)``.

    The sign is piecewise constant: its gradient is zero."""

    __props__ = ()
    gufunc_signature = "(m,m)->(),()"
    stacked_perform = True  # NumPy computes a stack of these in one call

    def make_node(self, x: Any) -> Apply:
        x = as_core(x, 2, "SLogDet", "the input")
        check_square(x, "SLogDet", "the input")
        sign = TensorType(lapack_dtype(x.type.dtype), ())()
        return Apply(self, [x], [sign, TensorType(real_dtype(x.type.dtype), ())()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        check_square_value(x, "SLogDet", "the input")
        sign, logdet = np.linalg.slogdet(x.astype(node.outputs[0].type.numpy_dtype, copy=False))
        output_storage[0][0] = np.asarray(sign, dtype=node.outputs[0].type.numpy_dtype)
        output_storage[1][0] = np.asarray(logdet, dtype=node.outputs[1].type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [(), ()]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``X_bar = g X^-T`` from the log-determinant; the sign contributes nothing."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (x,) = inputs
        g = output_grads[1]
        if is_disconnected(g):
            return [zeros_like(x, dtype=outputs[1].type.dtype)]
        return [_grad_like(g * mT(MatrixInverse()(x)), x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``d sign = 0``, ``d logabsdet = tr(X^-1 dX)``."""
        (dx,) = eval_points
        if is_disconnected(dx):
            return [disconnected_type(), disconnected_type()]
        x = inputs[0]
        return [zeros_like(outputs[0]), (mT(MatrixInverse()(x)) * dx).sum()]


def slogdet(x: Any) -> tuple[Variable, Variable]:
    """``(sign, logabsdet)`` of the determinant of a square matrix (or a stack of them).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> sign, logdet = slogdet(x)
    >>> sign.eval({x: -np.eye(3)}), logdet.eval({x: 2 * np.eye(2)})
    (array(-1.), array(1.38629436))
    """
    x = as_stack(x, 2, "slogdet", "x")
    check_square(x, "slogdet", "x")
    sign, logdet = apply_core(SLogDet(), x)
    return sign, logdet


# --- decompositions --------------------------------------------------------------------------


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


def qr(a: Any, mode: str = "reduced") -> Any:
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


# --- functions built from other Ops ----------------------------------------------------------


def trace(x: Any) -> Variable:
    """The sum of the diagonal of a matrix (over the last two axes of a stack, as
    ``numpy.linalg.trace``); integer input sums in int64, as NumPy does.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> trace(x).eval({x: np.arange(6.0).reshape(2, 3)})
    array(4.)
    """
    return diag_trace(as_stack(x, 2, "trace", "x"), 0, -2, -1)


def matrix_dot(*args: Any) -> Variable:
    """The product ``args[0] @ args[1] @ ...`` of matrices (``dot`` in turn).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a, b, c = pt.dmatrix("a"), pt.dmatrix("b"), pt.dvector("c")
    >>> matrix_dot(a, b, c).eval({a: np.eye(2), b: 2 * np.eye(2), c: np.ones(2)})
    array([2., 2.])
    """
    if not args:
        raise ValueError("matrix_dot needs at least one argument")
    out = as_tensor_variable(args[0])
    for a in args[1:]:
        out = dot(out, a)
    return out


def matrix_power(M: Any, n: int) -> Variable:
    """``M`` multiplied by itself ``n`` times (``numpy.linalg.matrix_power``), by repeated
    squaring; ``n = 0`` gives the identity (in ``M``'s dtype), a negative ``n`` the power
    of the inverse.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> m = pt.dmatrix("m")
    >>> matrix_power(m, 5).eval({m: np.array([[1.0, 1.0], [0.0, 1.0]])})
    array([[1., 5.],
           [0., 1.]])
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: the exponent must be an int, got {n!r}")
    m = as_stack(M, 2, "matrix_power", "M")
    check_square(m, "matrix_power", "M")
    n = int(n)
    if n < 0:
        m, n = matrix_inverse(m), -n
    if n == 0:
        return zeros_like(m) + eye(length(m, -1), dtype=m.type.dtype)
    result, square = None, m
    while True:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if not n:
            return result  # type: ignore[return-value]
        square = matmul(square, square)


# --- norms -----------------------------------------------------------------------------------


def _float_input(x: Variable) -> Variable:
    """Integers and bools as float64 (as NumPy's norm does); floats and complex as they are."""
    if np.dtype(x.type.dtype).kind in "biu":
        return cast(x, "float64")
    return x


def _abs2(x: Variable) -> Variable:
    """``|x|^2`` elementwise (real, for complex ``x`` too)."""
    m = abs_(x) if is_complex(x) else x
    return m * m


def _vector_norm(x: Variable, ord: Any, axis: int) -> Variable:
    """The norm along ``axis`` (kept, with length 1)."""
    dtype = real_dtype(x.type.dtype) if np.dtype(x.type.dtype).kind == "c" else x.type.dtype
    if ord is None or ord == 2:
        return sqrt(sum(_abs2(x), axis=axis, keepdims=True))
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    mag = abs_(x)
    if ord == np.inf:
        return max(mag, axis=axis, keepdims=True)
    if ord == -np.inf:
        return min(mag, axis=axis, keepdims=True)
    if ord == 0:
        return sum(cast(neq(x, 0), dtype), axis=axis, keepdims=True)
    if ord == 1:
        return sum(mag, axis=axis, keepdims=True)
    p = const(ord, dtype)
    return sum(mag**p, axis=axis, keepdims=True) ** (const(1, dtype) / p)


def _singular_values(x: Variable, rows: int, cols: int) -> Variable:
    """The singular values of the matrices in axes ``(rows, cols)``, in the last axis."""
    return svd(moveaxis(x, (rows, cols), (-2, -1)), compute_uv=False)


def _matrix_norm(x: Variable, ord: Any, rows: int, cols: int) -> Variable:
    """The norm over axes ``(rows, cols)`` (both kept, with length 1)."""
    if ord in (None, "fro", "f"):
        return sqrt(sum(_abs2(x), axis=(rows, cols), keepdims=True))
    if ord in ("nuc", 2, -2):
        s = _singular_values(x, rows, cols)
        reduced = sum(s, axis=-1) if ord == "nuc" else (max if ord == 2 else min)(s, axis=-1)
        return expand_dims(reduced, sorted((rows, cols)))
    reductions = {
        np.inf: (cols, rows, max),
        -np.inf: (cols, rows, min),
        1: (rows, cols, max),
        -1: (rows, cols, min),
    }
    if isinstance(ord, str) or ord not in reductions:
        raise ValueError(f"norm: invalid norm order {ord!r} for matrices")
    summed, over, pick = reductions[ord]
    return pick(sum(abs_(x), axis=summed, keepdims=True), axis=over, keepdims=True)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Variable:
    """``numpy.linalg.norm``: vector norms (``ord`` ``None``/2, 1, ``inf``, ``-inf``, 0 or
    any power) along one axis, matrix norms (``None``/``'fro'``, ``'nuc'``, 1, -1, 2, -2,
    ``inf``, ``-inf``) over two. ``axis=None`` means the whole (1-d or 2-d) input, or with
    ``ord=None`` the 2-norm of all entries of an input of any rank.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> norm(x).eval({x: np.array([[3.0, 0.0], [0.0, 4.0]])})
    array(5.)
    >>> norm(x, ord=1, axis=1).eval({x: np.array([[3.0, -1.0], [0.0, 4.0]])})
    array([4., 4.])
    """
    x = _float_input(as_tensor_variable(x))
    ndim = x.type.ndim
    if axis is None:
        if ord is None:
            return sqrt(sum(_abs2(x), axis=tuple(range(ndim)), keepdims=keepdims)) if ndim else abs_(x)
        if ndim not in (1, 2):
            raise ValueError(
                f"norm: with ord={ord!r} and no axis the input must be 1-d or 2-d, got {x} of Type {x.type}"
            )
        axis = tuple(range(ndim))
    given = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    normalize_axis(given, ndim, "norm axis")  # checks the range and repeats
    axes = [int(a) % ndim for a in given]  # in the given order: (rows, cols) for matrices
    if len(axes) == 1:
        out = _vector_norm(x, ord, axes[0])
    elif len(axes) == 2:
        out = _matrix_norm(x, ord, axes[0], axes[1])
    else:
        raise ValueError(f"norm: axis must name one or two axes, got {axis!r}")
    return out if keepdims else squeeze(out, axes)


register_core_batch_rule(MatrixInverse, MatrixPinv, Det, SLogDet)
