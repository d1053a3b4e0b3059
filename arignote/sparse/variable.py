"""SparseVariable and SparseConstant: sparse graph values with SciPy-like operators.

``x + y``, ``x * y`` (elementwise, as for SciPy's sparse *arrays*), ``-x``, ``x.T``,
``x.dot(y)`` / ``x @ y`` (``structured_dot``), ``x.sum(axis)``, ``x.toarray()``,
``x.astype(dtype)``, ``x.shape``, ``x.format``. A sparse Variable is not a tensor: a dense
Op given one raises an error that points at ``x.toarray()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as scipy_sparse

from arignote.graph.basic import Constant, Variable
from arignote.sparse.arithmetic import add, multiply, neg, sp_sum, subtract
from arignote.sparse.comparison import ge, gt, le, lt
from arignote.sparse.construction import csm_data, csm_shape, dense_from_sparse, sp_zeros_like
from arignote.sparse.indexing import sparse_getitem
from arignote.sparse.products import structured_dot
from arignote.sparse.structure import cast, transpose
from arignote.sparse.type import SparseTensorType
from arignote.tensor.conversion import _as_tensor_variable
from arignote.tensor.ufuncs import cast as tensor_cast

__all__ = ["SparseConstant", "SparseVariable"]


class _sparse_py_operators:
    """The SciPy-style methods and operators of sparse Variables."""

    type: SparseTensorType

    #: NumPy defers to our reflected operators (``ndarray + x`` is ``x.__radd__``)
    __array_priority__ = 1001

    @property
    def format(self) -> str:
        return self.type.format

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return 2

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return self.type.broadcastable

    @property
    def shape(self) -> Variable:
        """The symbolic shape, an int64 vector (read off the matrix; nothing is densified)."""
        return tensor_cast(csm_shape(self), "int64")

    @property
    def size(self) -> Variable:
        """The number of stored entries (stored zeros included), as SciPy's ``nnz``."""
        return csm_data(self).shape[0]

    @property
    def T(self) -> Variable:
        return transpose(self)

    def transpose(self) -> Variable:
        return transpose(self)

    def toarray(self) -> Variable:
        """The dense matrix (``dense_from_sparse``)."""
        return dense_from_sparse(self)

    def astype(self, dtype: Any) -> Variable:
        return cast(self, dtype)

    def zeros_like(self, dtype: Any = None) -> Variable:
        """A matrix of this shape and format storing nothing (of ``dtype``, default ours)."""
        x = self if dtype is None else cast(self, dtype)
        return sp_zeros_like(x)

    def sum(self, axis: int | None = None, sparse_grad: bool = False) -> Variable:
        return sp_sum(self, axis=axis, sparse_grad=sparse_grad)

    def __neg__(self) -> Variable:
        return neg(self)

    def __add__(self, other: Any) -> Variable:
        return add(self, other)

    def __radd__(self, other: Any) -> Variable:
        return add(other, self)

    def __sub__(self, other: Any) -> Variable:
        return subtract(self, other)

    def __rsub__(self, other: Any) -> Variable:
        return subtract(other, self)

    def __mul__(self, other: Any) -> Variable:
        return multiply(self, other)

    def __rmul__(self, other: Any) -> Variable:
        return multiply(other, self)

    def __lt__(self, other: Any) -> Variable:
        return lt(self, other)

    def __le__(self, other: Any) -> Variable:
        return le(self, other)

    def __gt__(self, other: Any) -> Variable:
        return gt(self, other)

    def __ge__(self, other: Any) -> Variable:
        return ge(self, other)

    def __dot__(self, other: Any) -> Variable:
        return structured_dot(self, other)

    def __rdot__(self, other: Any) -> Variable:
        return structured_dot(other, self)

    dot = __dot__
    __matmul__ = __dot__
    __rmatmul__ = __rdot__

    def __bool__(self) -> bool:
        raise TypeError(f"{self} is symbolic: it has no truth value (compile a function to get its value)")

    def __iter__(self) -> Any:
        raise TypeError(f"{self} is symbolic: it cannot be iterated over")

    def __getitem__(self, index: Any) -> Variable:
        """``x[a:b, c:d]`` (sparse), ``x[i, j]`` (0-d), ``x[rows]`` (sparse), ``x[rows, cols]``
        (a dense vector of entries)."""
        return sparse_getitem(self, index)


class SparseVariable(_sparse_py_operators, Variable):
    """A sparse matrix in a graph (an input, or the output of an Apply)."""


class SparseConstantSignature(tuple):
    """``(type, data)`` compared by contents: same Type and exactly the same stored
    matrix (structure and values). Used to merge equal constants."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SparseConstantSignature):
            return False
        (t0, d0), (t1, d1) = self, other
        return (
            t0 == t1
            and d0.shape == d1.shape
            and np.array_equal(d0.indptr, d1.indptr)
            and np.array_equal(d0.indices, d1.indices)
            and d0.data.tobytes() == d1.data.tobytes()
        )

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        t, d = self
        return hash((t, d.shape, d.nnz, d.data[:16].tobytes()))


class SparseConstant(_sparse_py_operators, Constant):
    """A constant sparse matrix (a private copy: it is never modified)."""

    def __init__(self, type: SparseTensorType, data: Any, name: str | None = None):
        data = type.filter(data)
        data = type.format_cls[type.format](data, copy=True)
        for buffer in (data.data, data.indices, data.indptr):
            buffer.flags.writeable = False
        if data.shape != type.shape:
            type = type.clone(shape=data.shape)  # a constant's shape is known
        Constant.__init__(self, type, data, name=name)

    def signature(self) -> SparseConstantSignature:
        return SparseConstantSignature((self.type, self.data))

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        d = self.data
        return f"SparseConstant{{{d.format},{d.dtype},shape={d.shape},nnz={d.nnz}}}"

    def __repr__(self) -> str:
        return str(self)


SparseTensorType.variable_type = SparseVariable
SparseTensorType.constant_type = SparseConstant


@_as_tensor_variable.register(SparseVariable)
@_as_tensor_variable.register(SparseConstant)
def _sparse_as_tensor(x: Variable, name: Any, ndim: Any, dtype: Any) -> Any:
    raise TypeError(
        f"{x} is a sparse matrix (Type {x.type}), not a tensor: densify it with {x}.toarray() "
        "(arignote.sparse.dense_from_sparse), or use the Ops of arignote.sparse"
    )


@_as_tensor_variable.register(scipy_sparse.spmatrix)
@_as_tensor_variable.register(scipy_sparse.sparray)
def _scipy_sparse_as_tensor(x: Any, name: Any, ndim: Any, dtype: Any) -> Any:
    raise TypeError(
        f"A scipy.sparse {x.format} matrix is not a tensor: use arignote.sparse.as_sparse_variable "
        "for a sparse constant, or x.toarray() for a dense one"
    )
