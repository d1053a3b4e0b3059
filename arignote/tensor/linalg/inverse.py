"""Inverses and determinants: ``MatrixInverse`` (``inv``), ``MatrixPinv`` (``pinv``),
``Det``, ``SLogDet``, on matrices or stacks of them, with their pullbacks and pushforwards.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dmatrix("x")
>>> float(pt.linalg.det(x).eval({x: np.array([[2.0, 0.0], [1.0, 3.0]])}))
6.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.tensor.alloc import zeros_like
from arignote.tensor.linalg.operands import (
    apply_core,
    as_core,
    as_stack,
    check_square,
    check_square_value,
    complex_grads,
    eye_like,
    is_complex,
    lapack_dtype,
    mT,
    real_dtype,
    square_length,
    sym,
)
from arignote.tensor.products import dot
from arignote.tensor.shape import _grad_like
from arignote.tensor.type import TensorType

__all__ = [
    "Cofactor",
    "Det",
    "MatrixInverse",
    "MatrixPinv",
    "SLogDet",
    "cofactor_matrix",
    "det",
    "inv",
    "matrix_inverse",
    "pinv",
    "slogdet",
]


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
        """``X_bar = g cof(X)`` (Jacobi's formula with the cofactor matrix, ``det(X) X^-T``
        where ``X`` is invertible; it exists for singular ``X`` too)."""
        if (bad := complex_grads(self, inputs)) is not None:
            return bad
        (x,), (g,) = inputs, output_grads
        return [_grad_like(g * Cofactor()(x), x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``d det = <cof(X), dX>`` (``det(X) tr(X^-1 dX)`` for an invertible ``X``)."""
        (dx,) = eval_points
        if is_disconnected(dx):
            return [disconnected_type()]
        (x,) = inputs
        return [(Cofactor()(x) * dx).sum()]


class Cofactor(Op):
    """The cofactor matrix of a real square matrix: ``C[i, j]`` is ``(-1)**(i + j)`` times
    the determinant of ``X`` without row ``i`` and column ``j``. It is the gradient of
    ``det(X)``, the transposed adjugate, ``det(X) X^-T`` when ``X`` is invertible, and it is
    defined (and computed) at singular matrices too.

    It is computed from the SVD ``X = U diag(s) V^T``: ``C = det(U) det(V) U diag(p) V^T``
    with ``p[i]`` the product of the singular values other than ``s[i]``, taken without any
    division, so exact for rank ``n - 1`` and zero for rank ``n - 2`` or less.

    Its pullback and pushforward (second derivatives of ``det``) need an invertible ``X``.
    """

    __props__ = ()
    gufunc_signature = "(m,m)->(m,m)"
    stacked_perform = True  # NumPy computes a stack of these in one call

    def make_node(self, x: Any) -> Apply:
        x = as_core(x, 2, "Cofactor", "the input")
        check_square(x, "Cofactor", "the input")
        if is_complex(x):
            raise TypeError(f"Cofactor: real matrices only, got {x.type}")
        n = square_length(x)
        return Apply(self, [x], [TensorType(lapack_dtype(x.type.dtype), (n, n))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        check_square_value(x, "Cofactor", "the input")
        dtype = node.outputs[0].type.numpy_dtype
        output_storage[0][0] = np.asarray(cofactor_matrix(x.astype(dtype, copy=False)), dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """With ``Y = X^-T`` (so ``C = det(X) Y``): ``X_bar = <C_bar, Y> C - det(X) Y C_bar^T Y``."""
        (x,), (c,), (cbar,) = inputs, outputs, output_grads
        y = mT(MatrixInverse()(x))
        return [_grad_like((cbar * y).sum() * c - Det()(x) * dot(dot(y, mT(cbar)), y), x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dC = <Y, dX> C - det(X) Y dX^T Y`` with ``Y = X^-T``."""
        (dx,) = eval_points
        if is_disconnected(dx):
            return [disconnected_type()]
        (x,), (c,) = inputs, outputs
        y = mT(MatrixInverse()(x))
        return [(y * dx).sum() * c - Det()(x) * dot(dot(y, mT(dx)), y)]


def cofactor_matrix(x: np.ndarray) -> np.ndarray:
    """The cofactor matrices of a real square matrix or a stack of them (NumPy), from an
    SVD (see :class:`Cofactor`)."""
    x = np.asarray(x)
    if x.shape[-1] == 0:
        return np.zeros(x.shape, dtype=x.dtype)
    u, s, vh = np.linalg.svd(x)
    ones = np.ones((*s.shape[:-1], 1), dtype=s.dtype)
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)  # prod of s[:i]
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]  # of s[i+1:]
    sign = np.linalg.det(u) * np.linalg.det(vh)  # each is +-1
    return sign[..., None, None] * ((u * (before * after)[..., None, :]) @ vh)


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
