"""Arithmetic with sparse matrices: ``add``, ``subtract`` (``sub``), ``neg``, ``multiply``
(``mul``), ``col_scale``, ``row_scale`` and ``sp_sum`` (whose gradients and theirs use
each other, so they live together).

At least one operand is sparse. The result follows SciPy: sparse + sparse and sparse *
anything are sparse (a product keeps only entries both sides may store), sparse + dense is
dense. Operands of the two formats may be mixed; the result has the first sparse operand's
format. Gradients follow PyTensor: with respect to a sparse operand they are sparse;
``add(sparse, dense)``'s is structured (only the stored entries get one).

>>> import numpy as np
>>> import scipy.sparse as sp
>>> from arignote import sparse
>>> import arignote.tensor as pt
>>> x = sparse.csr_matrix("x", dtype="float64")
>>> y = pt.dmatrix("y")
>>> a = sp.csr_matrix(np.array([[0.0, 2.0], [3.0, 0.0]]))
>>> (x * y).eval({x: a, y: np.full((2, 2), 10.0)}).toarray()
array([[ 0., 20.],
       [30.,  0.]])
>>> (x + y).eval({x: a, y: np.ones((2, 2))})
array([[1., 3.],
       [4., 1.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.sparse.construction import (
    SparseFromDense,
    _structured_times,
    as_format,
    csm_shape,
    dense_from_sparse,
    entry_coordinates,
    sp_ones_like,
)
from arignote.sparse.conversion import (
    _is_sparse_variable,
    _upcast_dtype,
    as_sparse_or_tensor_variable,
    as_sparse_variable,
)
from arignote.sparse.structure import transpose
from arignote.sparse.type import SparseTensorType
from arignote.tensor.alloc import ones_like
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.type import TensorType

__all__ = [
    "AddSD",
    "AddSS",
    "AddSSData",
    "StructuredAddSV",
    "add_s_s_data",
    "structured_add_s_v",
    "MulSD",
    "MulSS",
    "MulSV",
    "SparseDenseMultiply",
    "SparseDenseVectorMultiply",
    "SparseSparseMultiply",
    "add_s_d",
    "add_s_s",
    "mul_s_d",
    "mul_s_s",
    "mul_s_v",
    "Neg",
    "add",
    "col_scale",
    "mul",
    "multiply",
    "neg",
    "row_scale",
    "SpSum",
    "sp_sum",
    "sub",
    "subtract",
]


def _merge_shapes(op: Op, x: Variable, y: Variable) -> tuple:
    shape = []
    for d, (a, b) in enumerate(zip(x.type.shape, y.type.shape)):
        if a is not None and b is not None and a != b:
            raise ValueError(
                f"{op}: {x} has static shape {x.type.shape} and {y} has {y.type.shape}; they differ at "
                f"dimension {d} (sparse matrices never broadcast)"
            )
        shape.append(a if a is not None else b)
    return tuple(shape)


def _check_same_shape(op: Op, x: Any, y: Any) -> None:
    if x.shape != y.shape:
        raise ValueError(
            f"{op}: the operands have shapes {x.shape} and {y.shape}; sparse matrices never broadcast"
        )


def _sparse_result(z: Any, node: Apply) -> Any:
    out = node.outputs[0].type
    z = z.asformat(out.format)
    return z if z.dtype == out.numpy_dtype else z.astype(out.dtype)


# --- addition --------------------------------------------------------------------------------


class AddSS(Op):
    """sparse + sparse, a sparse matrix in the first operand's format."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        dtype = _upcast_dtype(x.type.dtype, y.type.dtype)
        out = SparseTensorType(x.type.format, dtype, _merge_shapes(self, x, y))()
        return Apply(self, [x, y], [out])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        _check_same_shape(self, x, y)
        output_storage[0][0] = _sparse_result(x + y, node)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, y = inputs
        (gz,) = output_grads
        return [as_format(gz, x.type.format), as_format(gz, y.type.format)]

    def __str__(self) -> str:
        return "AddSS"


class AddSD(Op):
    """sparse + dense matrix, a dense matrix. The sparse operand's gradient is structured."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        if y.type.ndim != 2:
            raise TypeError(
                f"AddSD: the dense operand must be a matrix of the sparse one's shape, got {y} of Type "
                f"{y.type}; to add a scalar to the stored entries only use structured_add, or densify "
                "first (x.toarray() + y)"
            )
        dtype = _upcast_dtype(x.type.dtype, y.type.dtype)
        return Apply(self, [x, y], [TensorType(dtype, _merge_shapes(self, x, y))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        _check_same_shape(self, x, y)
        out = np.array(y, dtype=node.outputs[0].type.dtype)  # a fresh copy
        rows, cols = entry_coordinates(x.format, x.indices, x.indptr)
        np.add.at(out, (rows, cols), x.data)  # np.add.at: duplicate entries add up
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        return [shapes[1]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, _ = inputs
        (gz,) = output_grads
        return [_structured_times(x, gz), gz]


add_s_s = AddSS()
add_s_d = AddSD()


def add(x: Any, y: Any) -> Variable:
    """``x + y`` where at least one is sparse: sparse when both are, else dense."""
    x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
    xs, ys = _is_sparse_variable(x), _is_sparse_variable(y)
    if xs and ys:
        return add_s_s(x, y)
    if xs:
        return add_s_d(x, y)
    if ys:
        return add_s_d(y, x)
    raise TypeError(f"sparse.add needs a sparse operand, got {x} ({x.type}) and {y} ({y.type})")


class AddSSData(Op):
    """sparse + sparse for two matrices of the same structure (same format, dtype, indices
    and indptr): only the stored values are added. The gradient is structured."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        if x.type.format != y.type.format or x.type.dtype != y.type.dtype:
            raise TypeError(
                f"AddSSData: the operands must have the same format and dtype, got {x.type} and {y.type}"
            )
        return Apply(
            self, [x, y], [SparseTensorType(x.type.format, x.type.dtype, _merge_shapes(self, x, y))()]
        )

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        _check_same_shape(self, x, y)
        if not (np.array_equal(x.indptr, y.indptr) and np.array_equal(x.indices, y.indices)):
            raise ValueError(
                f"{self}: the operands do not have the same structure (indices and indptr differ)"
            )
        z = x.copy()
        z.data = z.data + y.data
        output_storage[0][0] = z

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, y = inputs
        (gz,) = output_grads
        return [_structured_like(x, gz), _structured_like(y, gz)]


add_s_s_data = AddSSData()


def _structured_like(x: Variable, gz: Variable) -> Variable:
    """``gz`` read at the stored entries of ``x``, as a matrix of ``x``'s structure."""
    return _structured_times(x, gz)


class StructuredAddSV(Op):
    """sparse matrix + dense vector along the rows, at the stored entries only
    (``x[i, j] + y[j]`` where ``x`` stores a value). The gradient is structured."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        if y.type.ndim != 1:
            raise TypeError(f"StructuredAddSV: the dense operand must be a vector, got {y} of Type {y.type}")
        dtype = _upcast_dtype(x.type.dtype, y.type.dtype)
        return Apply(self, [x, y], [SparseTensorType(x.type.format, dtype, x.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        if x.shape[1] != y.shape[0]:
            raise ValueError(
                f"{self}: the matrix has {x.shape[1]} columns but the vector has length {y.shape[0]}"
            )
        z = x.astype(node.outputs[0].type.dtype, copy=True)
        z.data += y[entry_coordinates(x.format, x.indices, x.indptr)[1]]
        output_storage[0][0] = z

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, _ = inputs
        (gz,) = output_grads
        gx = _structured_like(x, gz)
        return [gx, sp_sum(gx, axis=0, sparse_grad=True)]


structured_add_s_v = StructuredAddSV()


class Neg(Op):
    """``-x`` of a sparse matrix (same structure)."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = -inputs[0]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (gz,) = output_grads
        return [neg(gz) if _is_sparse_variable(gz) else -gz]

    def __str__(self) -> str:
        return "SparseNeg"


_neg = Neg()


def neg(x: Any) -> Variable:
    """``-x`` for a sparse ``x``."""
    return _neg(x)


def subtract(x: Any, y: Any) -> Variable:
    """``x - y`` where at least one is sparse (``x + (-y)``)."""
    x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
    return add(x, neg(y) if _is_sparse_variable(y) else -y)


sub = subtract


# --- multiplication ----------------------------------------------------------------------------


class MulSS(Op):
    """sparse * sparse elementwise, sparse in the first operand's format."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        dtype = _upcast_dtype(x.type.dtype, y.type.dtype)
        return Apply(self, [x, y], [SparseTensorType(x.type.format, dtype, _merge_shapes(self, x, y))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        _check_same_shape(self, x, y)
        output_storage[0][0] = _sparse_result(x.multiply(y), node)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, y = inputs
        (gz,) = output_grads
        return [as_format(multiply(gz, y), x.type.format), as_format(multiply(gz, x), y.type.format)]

    def __str__(self) -> str:
        return "MulSS"


class MulSD(Op):
    """sparse * dense (a matrix of the same shape, or a scalar): sparse with the sparse
    operand's structure."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        if y.type.ndim not in (0, 2):
            raise TypeError(
                f"MulSD: the dense operand must be a scalar or a matrix, got {y} of Type {y.type}"
            )
        dtype = _upcast_dtype(x.type.dtype, y.type.dtype)
        shape = x.type.shape if y.type.ndim == 0 else _merge_shapes(self, x, y)
        return Apply(self, [x, y], [SparseTensorType(x.type.format, dtype, shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        dtype = node.outputs[0].type.dtype
        z = x.astype(dtype, copy=True)
        if y.ndim == 0:
            z.data *= y
        else:
            _check_same_shape(self, x, y)
            z.data *= y[entry_coordinates(x.format, x.indices, x.indptr)]
        output_storage[0][0] = z

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, y = inputs
        (gz,) = output_grads
        prod = multiply(x, gz)
        gy = sp_sum(prod, sparse_grad=True) if y.type.ndim == 0 else dense_from_sparse(prod)
        return [multiply(gz, y), gy]

    def __str__(self) -> str:
        return "MulSD"


class MulSV(Op):
    """sparse matrix * dense vector broadcast along the rows (``x[i, j] * y[j]``), sparse
    with the matrix's structure."""

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        if y.type.ndim != 1:
            raise TypeError(f"MulSV: the dense operand must be a vector, got {y} of Type {y.type}")
        a, b = x.type.shape[1], y.type.shape[0]
        if a is not None and b is not None and a != b:
            raise ValueError(f"MulSV: {x} has {a} columns, but {y} has length {b}")
        dtype = _upcast_dtype(x.type.dtype, y.type.dtype)
        return Apply(
            self,
            [x, y],
            [SparseTensorType(x.type.format, dtype, (x.type.shape[0], a if a is not None else b))()],
        )

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        if x.shape[1] != y.shape[0]:
            raise ValueError(
                f"{self}: the matrix has {x.shape[1]} columns but the vector has length {y.shape[0]}"
            )
        z = x.astype(node.outputs[0].type.dtype, copy=True)
        z.data *= y[entry_coordinates(x.format, x.indices, x.indptr)[1]]
        output_storage[0][0] = z

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, y = inputs
        (gz,) = output_grads
        return [mul_s_v(gz, y), sp_sum(multiply(x, gz), axis=0, sparse_grad=True)]

    def __str__(self) -> str:
        return "MulSV"


mul_s_s = MulSS()
mul_s_d = MulSD()
mul_s_v = MulSV()

# PyTensor's names of the three products
SparseSparseMultiply = MulSS
SparseDenseMultiply = MulSD
SparseDenseVectorMultiply = MulSV


def multiply(x: Any, y: Any) -> Variable:
    """``x * y`` elementwise where at least one is sparse: sparse, storing only where the
    sparse operand(s) store. A dense operand is a scalar, a matrix of the same shape or a
    vector (multiplying each column)."""
    x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
    xs, ys = _is_sparse_variable(x), _is_sparse_variable(y)
    if xs and ys:
        return mul_s_s(x, y)
    if not (xs or ys):
        raise TypeError(f"sparse.multiply needs a sparse operand, got {x} ({x.type}) and {y} ({y.type})")
    if ys:
        x, y = y, x
    if y.type.ndim == 1:
        return mul_s_v(x, y)
    return mul_s_d(x, y)


mul = multiply


def col_scale(x: Any, s: Any) -> Variable:
    """Column ``j`` of the sparse ``x`` times ``s[j]``."""
    return mul_s_v(as_sparse_variable(x), s)


def row_scale(x: Any, s: Any) -> Variable:
    """Row ``i`` of the sparse ``x`` times ``s[i]``."""
    return transpose(col_scale(transpose(x), s))


# --- sums ------------------------------------------------------------------------------------


class SpSum(Op):
    """The sum of a sparse matrix: of all entries (``axis=None``, a 0-d tensor) or along an
    axis (a dense vector). ``sparse_grad``: the gradient is structured (only stored entries
    get one); otherwise every entry does. Either way it is sparse, in the input's format."""

    # sparse_grad changes only the gradient; PyTensor leaves it out of the identity so that
    # equal sums merge, and so does this
    __props__ = ("axis",)

    def __init__(self, axis: int | None = None, sparse_grad: bool = True):
        if axis not in (None, 0, 1):
            raise ValueError(f"SpSum: axis must be None, 0 or 1, got {axis!r}")
        self.axis = axis
        self.structured = sparse_grad

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        shape = () if self.axis is None else (x.type.shape[1 - self.axis],)
        return Apply(self, [x], [TensorType(x.type.dtype, shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        dtype = node.outputs[0].type.dtype
        if self.axis is None:
            output_storage[0][0] = np.asarray(x.sum(dtype=dtype), dtype=dtype)
        else:
            output_storage[0][0] = np.asarray(x.sum(axis=self.axis, dtype=dtype), dtype=dtype).ravel()

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        if self.axis is None:
            return [()]
        shape = csm_shape(node.inputs[0])
        return [(shape[1 - self.axis],)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (x,) = inputs
        (gz,) = output_grads
        if self.structured:
            ones = sp_ones_like(x)
            if self.axis is None:
                return [mul_s_d(ones, gz)]
            return [col_scale(ones, gz) if self.axis == 0 else row_scale(ones, gz)]
        dense_ones = ones_like(dense_from_sparse(x), dtype=gz.type.dtype)
        if self.axis is None:
            full = dense_ones * gz
        elif self.axis == 0:
            full = dense_ones * gz.dimshuffle("x", 0)
        else:
            full = dense_ones * gz.dimshuffle(0, "x")
        return [SparseFromDense(x.type.format)(full)]

    def __str__(self) -> str:
        return f"SpSum{{axis={self.axis}}}"


def sp_sum(x: Any, axis: int | None = None, sparse_grad: bool = False) -> Variable:
    """The sum of the sparse ``x`` over all entries (``axis=None``) or along ``axis``, as a
    dense tensor. ``sparse_grad=True`` makes the gradient structured."""
    return SpSum(axis, sparse_grad)(x)
