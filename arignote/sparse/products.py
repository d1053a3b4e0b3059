"""Matrix products with a sparse operand: ``structured_dot``, ``dot`` and ``true_dot``.

- ``structured_dot(a, b)`` (``a.dot(b)``, ``a @ b``): sparse ``a`` times a dense (or
  sparse) ``b``; dense when ``b`` is. Its gradient with respect to ``a`` is *structured*:
  sparse, at ``a``'s stored entries only (:class:`StructuredDotGrad`).
- ``dot(x, y)``: one or both sparse, 1-d or 2-d dense operands; always dense, gradients
  regular (PyTensor's: dense for a dense operand and for a sparse one too).
- ``true_dot(x, y)``: sparse ``x``, the product sparse; gradients regular (sparse; a dense
  ``y``'s is dense unless ``grad_preserves_dense=False``).

>>> import numpy as np
>>> import scipy.sparse as sp
>>> from arignote import sparse
>>> import arignote.tensor as pt
>>> x = sparse.csr_matrix("x", dtype="float64")
>>> w = pt.dmatrix("w")
>>> a = sp.csr_matrix(np.array([[0.0, 2.0], [3.0, 0.0]]))
>>> sparse.structured_dot(x, w).eval({x: a, w: np.eye(2)})
array([[0., 2.],
       [3., 0.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as scipy_sparse

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, grad_not_implemented
from arignote.graph.op import Op
from arignote.sparse.construction import (
    CSM,
    SparseFromDense,
    as_format,
    csm_indices,
    csm_indptr,
    csm_shape,
    dense_from_sparse,
    entry_coordinates,
)
from arignote.sparse.conversion import (
    _is_sparse_variable,
    _upcast_dtype,
    as_sparse_or_tensor_variable,
    as_sparse_variable,
)
from arignote.sparse.structure import transpose, transpose_any
from arignote.sparse.type import SparseTensorType
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.join import stack as stack_lengths
from arignote.tensor.products import dot as dense_dot
from arignote.tensor.products import outer
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast

__all__ = [
    "Dot",
    "StructuredDot",
    "SamplingDot",
    "StructuredDotGrad",
    "StructuredDotGradCSC",
    "StructuredDotGradCSR",
    "TrueDot",
    "Usmm",
    "dot",
    "sampling_dot",
    "usmm",
    "sdg_csc",
    "sdg_csr",
    "structured_dot",
    "structured_dot_grad",
    "true_dot",
]


def _dense(v: Any) -> np.ndarray:
    return v.toarray() if scipy_sparse.issparse(v) else np.asarray(v)


def _check_inner(op: Op, a: Any, b: Any) -> None:
    if a.shape[-1] != b.shape[0]:
        raise ValueError(
            f"{op}: shapes {a.shape} and {b.shape} are not aligned ({a.shape[-1]} != {b.shape[0]})"
        )


def _product_shape(x: Variable, y: Variable) -> tuple:
    a, b = x.type.shape[-1], y.type.shape[0]
    if a is not None and b is not None and a != b:
        raise ValueError(f"dot: {x} ({x.type}) and {y} ({y.type}) are not aligned ({a} != {b})")
    return x.type.shape[:-1] + y.type.shape[1:]


# --- structured dot ---------------------------------------------------------------------------


class StructuredDot(Op):
    """Sparse ``a`` times ``b`` (a dense or sparse matrix). Dense when ``b`` is dense, else
    sparse in ``a``'s format. The gradient with respect to ``a`` is structured."""

    __props__ = ()

    def make_node(self, a: Any, b: Any) -> Apply:
        a = as_sparse_variable(a)
        b = as_sparse_or_tensor_variable(b)
        if b.type.ndim != 2:
            raise TypeError(
                f"structured_dot: the second operand must be a matrix, got {b} of Type {b.type}; "
                "use sparse.dot for a vector"
            )
        dtype = _upcast_dtype(a.type.dtype, b.type.dtype)
        shape = _product_shape(a, b)
        if _is_sparse_variable(b):
            return Apply(self, [a, b], [SparseTensorType(a.type.format, dtype, shape)()])
        return Apply(self, [a, b], [TensorType(dtype, shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        a, b = inputs
        _check_inner(self, a, b)
        out = node.outputs[0].type
        z = a @ b
        if isinstance(out, SparseTensorType):
            z = z.asformat(out.format)
            output_storage[0][0] = z if z.dtype == out.numpy_dtype else z.astype(out.dtype)
        else:
            output_storage[0][0] = np.asarray(z, dtype=out.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        a, b = node.inputs
        rows = csm_shape(a)[0]
        cols = shapes[1][1] if not _is_sparse_variable(b) else csm_shape(b)[1]
        return [(rows, cols)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        a, b = inputs
        (gz,) = output_grads
        gb = structured_dot(transpose(a), gz)
        if _is_sparse_variable(b):
            gb = as_format(gb, b.type.format)
        return [structured_dot_grad(a, b, gz), gb]


_structured_dot = StructuredDot()


def structured_dot(x: Any, y: Any) -> Variable:
    """``x @ y`` with at least one sparse operand, whose gradient is structured: only the
    stored entries of the sparse operand get one. Dense unless both are sparse."""
    x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
    if _is_sparse_variable(x):
        return _structured_dot(x, y)
    if _is_sparse_variable(y):
        return transpose_any(_structured_dot(transpose(y), transpose_any(x)))
    raise TypeError(f"structured_dot needs a sparse operand, got {x} ({x.type}) and {y} ({y.type})")


class StructuredDotGrad(Op):
    """The stored values of the gradient of ``a @ b`` with respect to the sparse ``a``: for
    each stored entry ``(i, j)`` of ``a`` (given by its ``indices`` and ``indptr`` in
    ``format``), ``g[i, :] . b[j, :]`` (``g``: the gradient of the product)."""

    __props__ = ("format",)

    def __init__(self, format: str):
        self.format = format

    def make_node(self, a_indices: Any, a_indptr: Any, b: Any, g: Any) -> Apply:
        a_indices, a_indptr = as_tensor_variable(a_indices), as_tensor_variable(a_indptr)
        b, g = as_sparse_or_tensor_variable(b), as_sparse_or_tensor_variable(g)
        dtype = _upcast_dtype(b.type.dtype, g.type.dtype)
        return Apply(self, [a_indices, a_indptr, b, g], [TensorType(dtype, (None,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        indices, indptr, b, g = inputs
        b, g = _dense(b), _dense(g)
        rows, cols = entry_coordinates(self.format, indices, indptr)
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.einsum("ij,ij->i", g[rows], b[cols]).astype(dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], [False], [True], [True]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Bilinear in ``b`` and ``g``: with ``h`` the output gradient as a matrix ``H`` of
        ``a``'s structure, ``b``'s gradient is ``H.T @ g`` and ``g``'s is ``H @ b``."""
        indices, indptr, b, g = inputs
        (h,) = output_grads
        shape = stack_lengths([_rows(g), _rows(b)])
        weights = CSM(self.format)(h, indices, indptr, shape)
        gb = _like(dot(transpose(weights), g), b)
        gg = _like(dot(weights, b), g)
        return [disconnected_type(), disconnected_type(), gb, gg]

    def __str__(self) -> str:
        return f"StructuredDotGrad{{{self.format}}}"


def _rows(v: Variable) -> Variable:
    return csm_shape(v)[0] if _is_sparse_variable(v) else cast(v.shape[0], "int32")


def _like(dense: Variable, v: Variable) -> Variable:
    """A dense gradient as ``v``'s: sparse in its format for a sparse ``v``."""
    return SparseFromDense(v.type.format)(dense) if _is_sparse_variable(v) else dense


class StructuredDotGradCSR(StructuredDotGrad):
    """:class:`StructuredDotGrad` for a CSR ``a`` (PyTensor's class of ``sdg_csr``)."""

    def __init__(self, format: str = "csr"):
        if format != "csr":
            raise ValueError(f"StructuredDotGradCSR is for CSR matrices, got format {format!r}")
        super().__init__("csr")


class StructuredDotGradCSC(StructuredDotGrad):
    """:class:`StructuredDotGrad` for a CSC ``a`` (PyTensor's class of ``sdg_csc``)."""

    def __init__(self, format: str = "csc"):
        if format != "csc":
            raise ValueError(f"StructuredDotGradCSC is for CSC matrices, got format {format!r}")
        super().__init__("csc")


sdg_csr = StructuredDotGradCSR()
sdg_csc = StructuredDotGradCSC()


def structured_dot_grad(sparse_a: Variable, b: Variable, g: Variable) -> Variable:
    """The structured gradient of ``structured_dot(sparse_a, b)`` with respect to
    ``sparse_a``, given the product's gradient ``g``: sparse with ``sparse_a``'s structure."""
    fmt = sparse_a.type.format
    indices, indptr = csm_indices(sparse_a), csm_indptr(sparse_a)
    data = StructuredDotGrad(fmt)(indices, indptr, b, g)
    return CSM(fmt)(data, indices, indptr, csm_shape(sparse_a))


# --- dot ----------------------------------------------------------------------------------------


class Dot(Op):
    """``x @ y`` with one or both operands sparse (a dense one a vector or a matrix): always
    dense. Gradients are regular and dense (also for a sparse operand)."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
        if not (_is_sparse_variable(x) or _is_sparse_variable(y)):
            raise TypeError(f"sparse.dot needs a sparse operand, got {x} ({x.type}) and {y} ({y.type})")
        for k, v in enumerate((x, y)):
            if v.type.ndim not in (1, 2):
                raise TypeError(
                    f"sparse.dot: operand {k} must be a vector or a matrix, got {v} of Type {v.type}"
                )
        dtype = _upcast_dtype(x.type.dtype, y.type.dtype)
        return Apply(self, [x, y], [TensorType(dtype, _product_shape(x, y))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        _check_inner(self, x, y)
        z = x @ y
        output_storage[0][0] = np.asarray(_dense(z), dtype=node.outputs[0].type.dtype)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, y = inputs
        (gz,) = output_grads
        if x.type.ndim == 2 and y.type.ndim == 2:
            gx, gy = _any_dot(gz, transpose_any(y)), _any_dot(transpose_any(x), gz)
        elif x.type.ndim == 2:  # matrix @ vector
            gx, gy = (
                outer(gz, y if not _is_sparse_variable(y) else dense_from_sparse(y)),
                _any_dot(transpose_any(x), gz),
            )
        elif y.type.ndim == 2:  # vector @ matrix
            gx, gy = _any_dot(y, gz), outer(x, gz)
        else:  # pragma: no cover - a sparse operand is a matrix
            raise AssertionError("sparse.dot of two vectors")
        return [gx, gy]

    def __str__(self) -> str:
        return "SparseDot"


_dot = Dot()


def _any_dot(x: Variable, y: Variable) -> Variable:
    if _is_sparse_variable(x) or _is_sparse_variable(y):
        return _dot(x, y)
    return dense_dot(x, y)


def dot(x: Any, y: Any) -> Variable:
    """``x @ y`` with at least one sparse operand, as a dense tensor (gradients regular)."""
    return _dot(x, y)


# --- true dot -------------------------------------------------------------------------------------


class TrueDot(Op):
    """Sparse ``x`` times a sparse or dense matrix ``y``, as a sparse matrix in ``x``'s
    format. Gradients are regular: sparse, except a dense ``y``'s when
    ``grad_preserves_dense`` (the default)."""

    # grad_preserves_dense changes only the gradient: left out of the identity (as PyTensor)
    __props__ = ()

    def __init__(self, grad_preserves_dense: bool = True):
        self.grad_preserves_dense = grad_preserves_dense

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_sparse_or_tensor_variable(y)
        if y.type.ndim != 2:
            raise TypeError(f"true_dot: the second operand must be a matrix, got {y} of Type {y.type}")
        dtype = _upcast_dtype(x.type.dtype, y.type.dtype)
        return Apply(self, [x, y], [SparseTensorType(x.type.format, dtype, _product_shape(x, y))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        _check_inner(self, x, y)
        out = node.outputs[0].type
        z = x @ y
        z = z.asformat(out.format) if scipy_sparse.issparse(z) else out.format_cls[out.format](z)
        output_storage[0][0] = z if z.dtype == out.numpy_dtype else z.astype(out.dtype)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, y = inputs
        (gz,) = output_grads
        gx = as_format(true_dot(gz, transpose_any(y)), x.type.format)
        gy = true_dot(transpose(x), gz)
        if _is_sparse_variable(y):
            gy = as_format(gy, y.type.format)
        elif self.grad_preserves_dense:
            gy = dense_from_sparse(gy)
        return [gx, gy]


def true_dot(x: Any, y: Any, grad_preserves_dense: bool = True) -> Variable:
    """``x @ y`` with at least one sparse operand, as a sparse matrix (gradients regular)."""
    x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
    if _is_sparse_variable(x):
        return TrueDot(grad_preserves_dense)(x, y)
    if _is_sparse_variable(y):
        return transpose(TrueDot(grad_preserves_dense)(transpose(y), transpose_any(x)))
    raise TypeError(f"true_dot needs a sparse operand, got {x} ({x.type}) and {y} ({y.type})")


# --- sampled and fused products ------------------------------------------------------------------


class SamplingDot(Op):
    """``p * (x @ y.T)`` for dense ``x`` (m x k), ``y`` (n x k) and a sparse pattern ``p``
    (m x n): only the entries ``p`` stores are computed. Sparse in ``p``'s format; the
    gradients of ``x`` and ``y`` are regular, ``p``'s is not implemented."""

    __props__ = ()

    def make_node(self, x: Any, y: Any, p: Any) -> Apply:
        x, y, p = as_tensor_variable(x), as_tensor_variable(y), as_sparse_variable(p)
        for name, v in (("x", x), ("y", y)):
            if v.type.ndim != 2:
                raise TypeError(f"sampling_dot: {name} must be a dense matrix, got {v} of Type {v.type}")
        dtype = _upcast_dtype(x.type.dtype, y.type.dtype, p.type.dtype)
        return Apply(self, [x, y, p], [SparseTensorType(p.type.format, dtype, p.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y, p = inputs
        if x.shape[1] != y.shape[1] or (x.shape[0], y.shape[0]) != p.shape:
            raise ValueError(
                f"{self}: x {x.shape} @ y.T {y.shape[::-1]} does not have the pattern's shape {p.shape}"
            )
        rows, cols = entry_coordinates(p.format, p.indices, p.indptr)
        dtype = node.outputs[0].type.dtype
        z = p.astype(dtype, copy=True)
        z.data *= np.einsum("ij,ij->i", x[rows], y[cols])
        output_storage[0][0] = z

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, y, p = inputs
        (gz,) = output_grads
        from_p = p * gz
        return [dot(from_p, y), dot(transpose(from_p), x), grad_not_implemented(self, 2, p)]


sampling_dot = SamplingDot()


class Usmm(Op):
    """``alpha * (x @ y) + z`` with ``x`` or ``y`` sparse and ``z`` dense: a dense matrix.
    No gradient (it is what a rewrite would make of ``dot``, after differentiation)."""

    __props__ = ()

    def make_node(self, alpha: Any, x: Any, y: Any, z: Any) -> Apply:
        alpha, z = as_tensor_variable(alpha), as_tensor_variable(z)
        x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
        if not (_is_sparse_variable(x) or _is_sparse_variable(y)):
            raise TypeError(f"usmm needs a sparse operand, got {x} ({x.type}) and {y} ({y.type})")
        if alpha.type.ndim != 0 or z.type.ndim != 2 or x.type.ndim != 2 or y.type.ndim != 2:
            raise TypeError("usmm: alpha must be a scalar and x, y, z matrices")
        dtype = _upcast_dtype(alpha.type.dtype, x.type.dtype, y.type.dtype, z.type.dtype)
        return Apply(self, [alpha, x, y, z], [TensorType(dtype, (None, None))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        alpha, x, y, z = inputs
        _check_inner(self, x, y)
        product = np.asarray(_dense(x @ y))
        output_storage[0][0] = np.asarray(alpha * product + z, dtype=node.outputs[0].type.dtype)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [grad_not_implemented(self, i, v) for i, v in enumerate(inputs)]

    def __str__(self) -> str:
        return "Usmm{no_inplace}"


usmm = Usmm()
