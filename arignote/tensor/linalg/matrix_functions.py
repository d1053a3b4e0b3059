"""Functions of matrices: the exponential (``Expm``), integer powers, chained products,
norms and the trace of the last two axes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.lazy import lazy_module
from arignote.tensor.alloc import eye, zeros_like
from arignote.tensor.axes import expand_dims, moveaxis, squeeze
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.diag import trace as diag_trace
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.join import concatenate, split
from arignote.tensor.linalg.decompositions import svd
from arignote.tensor.linalg.inverse import matrix_inverse
from arignote.tensor.linalg.operands import (
    apply_core,
    as_core,
    as_stack,
    check_square,
    check_square_value,
    complex_grads,
    const,
    is_complex,
    lapack_dtype,
    length,
    mT,
    real_dtype,
    square_length,
)
from arignote.tensor.products import dot, matmul
from arignote.tensor.reductions import max, min, sum
from arignote.tensor.shape import _grad_like
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import abs as abs_
from arignote.tensor.ufuncs import cast, neq, sqrt

# imported on first use (see arignote.lazy)
scipy_linalg = lazy_module("scipy.linalg")

__all__ = ["Expm", "expm", "matrix_dot", "matrix_power", "norm", "trace"]


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
        output_storage[0][0] = np.asarray(scipy_linalg.expm(a.astype(dtype, copy=False)), dtype=dtype)

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
