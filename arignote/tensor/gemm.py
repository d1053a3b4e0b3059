"""The fused BLAS updates: :class:`Gemm`, :class:`Gemv` and :class:`Ger`.

Each computes, in one call of the BLAS routine it is named after, an update that a graph
spells with a product and a sum:

* ``Gemm(z, alpha, x, y, beta) = beta * z + alpha * dot(x, y)`` (matrices),
* ``Gemv(y, alpha, A, x, beta) = beta * y + alpha * dot(A, x)`` (a vector),
* ``Ger(A, alpha, x, y) = A + alpha * outer(x, y)`` (a rank-1 update of a matrix).

Every input has one dtype, float32 or float64 (``alpha`` and ``beta`` are 0-d); a Python
number for ``alpha``/``beta`` is converted to it. With ``inplace`` the Op overwrites its
first input (``destroy_map``); the in-place rule of ``tensor/rewriting/blas.py`` chooses
that where nothing else can see the difference. As in BLAS, where ``beta`` is 0 the values
of ``z`` (``y``) are not read: NaNs there do not propagate.

``perform`` (NumPy) is the definition; the Python backend runs these nodes through
``scipy.linalg.blas`` (``arignote/link/python/blas.py``), checked against it.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> z, x, y = pt.dmatrix("z"), pt.dmatrix("x"), pt.dmatrix("y")
>>> out = gemm_no_inplace(z, 2.0, x, y, 0.5)
>>> out.type
TensorType(float64, shape=(None, None))
>>> out.eval({z: np.ones((2, 2)), x: np.eye(2), y: np.full((2, 2), 3.0)})
array([[6.5, 6.5],
       [6.5, 6.5]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.tensor.axes import transpose
from arignote.tensor.conversion import as_tensor_variable, constant
from arignote.tensor.products import dot, outer
from arignote.tensor.reductions import sum as tensor_sum
from arignote.tensor.shape import _grad_like
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import add, mul

__all__ = [
    "BLAS_DTYPES",
    "Gemm",
    "Gemv",
    "Ger",
    "gemm_inplace",
    "gemm_no_inplace",
    "gemv_inplace",
    "gemv_no_inplace",
    "ger",
    "ger_destructive",
]

#: the dtypes the BLAS Ops compute in (single and double precision real)
BLAS_DTYPES = ("float32", "float64")


# --- checking inputs ------------------------------------------------------------------------


def _as_matrix_or_vector(op: str, label: str, v: Any, ndim: int) -> Variable:
    """``v`` as a tensor Variable of ``ndim`` dimensions and a BLAS dtype, else TypeError
    naming the input and what arrived."""
    try:
        v = as_tensor_variable(v)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{op}: input {label} must be a {ndim}-d float32/float64 tensor, got {v!r}") from err
    if not isinstance(v.type, TensorType):
        raise TypeError(f"{op}: input {label} must be a {ndim}-d float32/float64 tensor, got {v.type}")
    kind = "a matrix" if ndim == 2 else "a vector"
    if v.type.ndim != ndim:
        raise TypeError(
            f"{op}: input {label} ({v}) must be {kind} ({ndim}-d), got {v.type} ({v.type.ndim}-d)"
        )
    if v.type.dtype not in BLAS_DTYPES:
        raise TypeError(f"{op}: input {label} ({v}) must be float32 or float64, got {v.type}")
    return v


def _as_scalar(op: str, label: str, v: Any, dtype: str) -> Variable:
    """``alpha``/``beta``: a 0-d tensor of ``dtype``. A Python or NumPy number (not a
    Variable) is made a constant of ``dtype``; a Variable must have it already."""
    if not isinstance(v, Variable):
        arr = np.asarray(v)
        if arr.ndim != 0 or arr.dtype.kind not in "biuf":
            raise TypeError(f"{op}: input {label} must be a real number or a 0-d {dtype} tensor, got {v!r}")
        return constant(arr.astype(dtype), dtype=dtype)
    v = as_tensor_variable(v)
    if not isinstance(v.type, TensorType) or v.type.ndim != 0:
        raise TypeError(f"{op}: input {label} ({v}) must be a 0-d {dtype} tensor, got {v.type}")
    if v.type.dtype != dtype:
        raise TypeError(
            f"{op}: input {label} ({v}) must have the dtype of the other inputs ({dtype}), got {v.type} "
            f"(cast it first)"
        )
    return v


def _same_dtype(op: str, named: Sequence[tuple[str, Variable]]) -> str:
    dtype = named[0][1].type.dtype
    for label, v in named[1:]:
        if v.type.dtype != dtype:
            raise TypeError(
                f"{op}: all inputs must have one dtype: input {named[0][0]} is {dtype}, input {label} "
                f"({v}) is {v.type.dtype} (cast one of them first)"
            )
    return dtype


def _length(op: str, what: str, dims: Sequence[tuple[str, int | None]]) -> int | None:
    """The static length the labelled dims agree on (None: unknown), else ValueError."""
    known = [(label, d) for label, d in dims if d is not None]
    for label, d in known[1:]:
        if d != known[0][1]:
            raise ValueError(
                f"{op}: {what} differ: {known[0][0]} has length {known[0][1]} and {label} has length {d}"
            )
    return known[0][1] if known else None


def _check_run(op: str, what: str, dims: Sequence[tuple[str, int]]) -> None:
    first = dims[0]
    for label, d in dims[1:]:
        if d != first[1]:
            raise ValueError(
                f"{op}: {what} differ: {first[0]} has length {first[1]} and {label} has length {d}"
            )


def _target(value: np.ndarray, inplace: bool) -> np.ndarray:
    """The buffer an in-place update writes into: ``value`` when it is writeable."""
    if inplace and value.flags.writeable:
        return value
    return value.copy()


def _terms(*terms: Variable | None) -> list:
    kept = [t for t in terms if t is not None]
    if not kept:
        return [disconnected_type()]
    return [kept[0] if len(kept) == 1 else add(*kept)]


def _tangent(v: Variable) -> Variable | None:
    return None if is_disconnected(v) else v


class _InplaceProps:
    """``inplace`` and the ``destroy_map`` it implies (the first input is overwritten)."""

    def __init__(self, inplace: bool = False) -> None:
        self.inplace = bool(inplace)
        self.destroy_map = {0: [0]} if self.inplace else {}


# --- Gemm -----------------------------------------------------------------------------------


class Gemm(_InplaceProps, Op):
    """``beta * z + alpha * dot(x, y)`` for matrices ``z`` (m, n), ``x`` (m, k), ``y`` (k, n)
    and 0-d ``alpha``, ``beta``, all of one dtype (float32 or float64): BLAS's ``?gemm``.

    ``Gemm(inplace=True)`` writes the result into ``z``'s buffer. Where ``beta`` is 0,
    ``z`` is not read (BLAS's rule).
    """

    __props__ = ("inplace",)

    def make_node(self, z: Any, alpha: Any, x: Any, y: Any, beta: Any) -> Apply:
        z = _as_matrix_or_vector("Gemm", "z", z, 2)
        x = _as_matrix_or_vector("Gemm", "x", x, 2)
        y = _as_matrix_or_vector("Gemm", "y", y, 2)
        dtype = _same_dtype("Gemm", [("z", z), ("x", x), ("y", y)])
        alpha = _as_scalar("Gemm", "alpha", alpha, dtype)
        beta = _as_scalar("Gemm", "beta", beta, dtype)
        (zm, zn), (xm, xk), (yk, yn) = z.type.shape, x.type.shape, y.type.shape
        m = _length("Gemm", "the rows", [("z", zm), ("x", xm)])
        n = _length("Gemm", "the columns", [("z", zn), ("y", yn)])
        _length("Gemm", "the inner lengths", [("x (columns)", xk), ("y (rows)", yk)])
        return Apply(self, [z, alpha, x, y, beta], [TensorType(dtype, (m, n))()])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        z, alpha, x, y, beta = inputs
        _check_run("Gemm", "the inner lengths", [("x (columns)", x.shape[1]), ("y (rows)", y.shape[0])])
        _check_run("Gemm", "the rows", [("z", z.shape[0]), ("x", x.shape[0])])
        _check_run("Gemm", "the columns", [("z", z.shape[1]), ("y", y.shape[1])])
        dtype = node.outputs[0].type.numpy_dtype
        prod = np.dot(x, y).astype(dtype, copy=False)  # before z is written: z may alias x or y
        prod *= alpha
        output_storage[0][0] = _update(z, prod, beta, self.inplace)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        _, _, xshape, yshape, _ = shapes
        return [(xshape[0], yshape[1])]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``beta * g``, ``sum(g * dot(x, y))``, ``alpha * dot(g, y.T)``, ``alpha * dot(x.T, g)``
        and ``sum(g * z)``."""
        z, alpha, x, y, beta = inputs
        g = as_tensor_variable(output_grads[0])
        gz = mul(beta, g)
        galpha = tensor_sum(mul(g, dot(x, y)))
        gx = mul(alpha, dot(g, transpose(y)))
        gy = mul(alpha, dot(transpose(x), g))
        gbeta = tensor_sum(mul(g, z))
        return [_grad_like(gr, v) for gr, v in zip((gz, galpha, gx, gy, gbeta), inputs)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dbeta * z + beta * dz + dalpha * dot(x, y) + alpha * (dot(dx, y) + dot(x, dy))``
        (a missing tangent counts as zero)."""
        z, alpha, x, y, beta = inputs
        dz, dalpha, dx, dy, dbeta = (_tangent(v) for v in eval_points)
        return _terms(
            None if dbeta is None else mul(dbeta, z),
            None if dz is None else mul(beta, dz),
            None if dalpha is None else mul(dalpha, dot(x, y)),
            None if dx is None else mul(alpha, dot(dx, y)),
            None if dy is None else mul(alpha, dot(x, dy)),
        )


def _update(target: np.ndarray, prod: np.ndarray, beta: np.ndarray, inplace: bool) -> np.ndarray:
    """``beta * target + prod`` (``prod`` a fresh array of the output dtype), written into
    ``target`` when ``inplace``, else into ``prod``. ``beta == 0``: ``target`` is not read."""
    if inplace:
        out = _target(target, True)
        if beta == 0:
            out[...] = prod
        else:
            if beta != 1:
                out *= beta
            out += prod
        return out
    if beta != 0:
        prod += target if beta == 1 else beta * target
    return prod


# --- Gemv -----------------------------------------------------------------------------------


class Gemv(_InplaceProps, Op):
    """``beta * y + alpha * dot(A, x)`` for a vector ``y`` (m,), a matrix ``A`` (m, n), a
    vector ``x`` (n,) and 0-d ``alpha``, ``beta``, all of one dtype (float32 or float64):
    BLAS's ``?gemv``.

    ``Gemv(inplace=True)`` writes the result into ``y``'s buffer. Where ``beta`` is 0,
    ``y`` is not read (BLAS's rule).
    """

    __props__ = ("inplace",)

    def make_node(self, y: Any, alpha: Any, A: Any, x: Any, beta: Any) -> Apply:
        y = _as_matrix_or_vector("Gemv", "y", y, 1)
        A = _as_matrix_or_vector("Gemv", "A", A, 2)
        x = _as_matrix_or_vector("Gemv", "x", x, 1)
        dtype = _same_dtype("Gemv", [("y", y), ("A", A), ("x", x)])
        alpha = _as_scalar("Gemv", "alpha", alpha, dtype)
        beta = _as_scalar("Gemv", "beta", beta, dtype)
        m = _length("Gemv", "the rows", [("y", y.type.shape[0]), ("A", A.type.shape[0])])
        _length("Gemv", "the inner lengths", [("A (columns)", A.type.shape[1]), ("x", x.type.shape[0])])
        return Apply(self, [y, alpha, A, x, beta], [TensorType(dtype, (m,))()])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        y, alpha, A, x, beta = inputs
        _check_run("Gemv", "the inner lengths", [("A (columns)", A.shape[1]), ("x", x.shape[0])])
        _check_run("Gemv", "the rows", [("y", y.shape[0]), ("A", A.shape[0])])
        dtype = node.outputs[0].type.numpy_dtype
        prod = np.dot(A, x).astype(dtype, copy=False)
        prod *= alpha
        output_storage[0][0] = _update(y, prod, beta, self.inplace)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [(shapes[2][0],)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``beta * g``, ``g . dot(A, x)``, ``alpha * outer(g, x)``, ``alpha * dot(A.T, g)``
        and ``g . y``."""
        y, alpha, A, x, beta = inputs
        g = as_tensor_variable(output_grads[0])
        gy = mul(beta, g)
        galpha = dot(g, dot(A, x))
        gA = mul(alpha, outer(g, x))
        gx = mul(alpha, dot(transpose(A), g))
        gbeta = dot(g, y)
        return [_grad_like(gr, v) for gr, v in zip((gy, galpha, gA, gx, gbeta), inputs)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dbeta * y + beta * dy + dalpha * dot(A, x) + alpha * (dot(dA, x) + dot(A, dx))``."""
        y, alpha, A, x, beta = inputs
        dy, dalpha, dA, dx, dbeta = (_tangent(v) for v in eval_points)
        return _terms(
            None if dbeta is None else mul(dbeta, y),
            None if dy is None else mul(beta, dy),
            None if dalpha is None else mul(dalpha, dot(A, x)),
            None if dA is None else mul(alpha, dot(dA, x)),
            None if dx is None else mul(alpha, dot(A, dx)),
        )


# --- Ger ------------------------------------------------------------------------------------


class Ger(_InplaceProps, Op):
    """``A + alpha * outer(x, y)`` for a matrix ``A`` (m, n), vectors ``x`` (m,), ``y`` (n,)
    and a 0-d ``alpha``, all of one dtype (float32 or float64): BLAS's ``?ger``, the
    rank-1 update.

    ``Ger(inplace=True)`` (``ger_destructive``) writes the result into ``A``'s buffer.
    """

    __props__ = ("inplace",)

    def make_node(self, A: Any, alpha: Any, x: Any, y: Any) -> Apply:
        A = _as_matrix_or_vector("Ger", "A", A, 2)
        x = _as_matrix_or_vector("Ger", "x", x, 1)
        y = _as_matrix_or_vector("Ger", "y", y, 1)
        dtype = _same_dtype("Ger", [("A", A), ("x", x), ("y", y)])
        alpha = _as_scalar("Ger", "alpha", alpha, dtype)
        m = _length("Ger", "the rows", [("A", A.type.shape[0]), ("x", x.type.shape[0])])
        n = _length("Ger", "the columns", [("A", A.type.shape[1]), ("y", y.type.shape[0])])
        return Apply(self, [A, alpha, x, y], [TensorType(dtype, (m, n))()])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        A, alpha, x, y = inputs
        _check_run("Ger", "the rows", [("A", A.shape[0]), ("x", x.shape[0])])
        _check_run("Ger", "the columns", [("A", A.shape[1]), ("y", y.shape[0])])
        dtype = node.outputs[0].type.numpy_dtype
        prod = np.outer(x, y).astype(dtype, copy=False)
        prod *= alpha
        output_storage[0][0] = _update(A, prod, np.ones((), dtype), self.inplace)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [(shapes[2][0], shapes[3][0])]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``g``, ``x . dot(g, y)``, ``alpha * dot(g, y)`` and ``alpha * dot(x, g)``."""
        _, alpha, x, y = inputs
        g = as_tensor_variable(output_grads[0])
        gy_ = dot(g, y)
        galpha = dot(x, gy_)
        gx = mul(alpha, gy_)
        gy = mul(alpha, dot(x, g))
        return [_grad_like(gr, v) for gr, v in zip((g, galpha, gx, gy), inputs)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dA + dalpha * outer(x, y) + alpha * (outer(dx, y) + outer(x, dy))``."""
        _, alpha, x, y = inputs
        dA, dalpha, dx, dy = (_tangent(v) for v in eval_points)
        return _terms(
            dA,
            None if dalpha is None else mul(dalpha, outer(x, y)),
            None if dx is None else mul(alpha, outer(dx, y)),
            None if dy is None else mul(alpha, outer(x, dy)),
        )


#: ``beta * z + alpha * dot(x, y)`` into a new array
gemm_no_inplace = Gemm(inplace=False)
#: ``beta * z + alpha * dot(x, y)`` written into ``z``
gemm_inplace = Gemm(inplace=True)
#: ``beta * y + alpha * dot(A, x)`` into a new array
gemv_no_inplace = Gemv(inplace=False)
#: ``beta * y + alpha * dot(A, x)`` written into ``y``
gemv_inplace = Gemv(inplace=True)
#: ``A + alpha * outer(x, y)`` into a new array
ger = Ger(inplace=False)
#: ``A + alpha * outer(x, y)`` written into ``A``
ger_destructive = Ger(inplace=True)
