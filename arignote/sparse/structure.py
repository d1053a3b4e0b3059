"""Ops that change how a sparse matrix is laid out, not its values: ``transpose`` (CSR
becomes CSC and back, the entries in the same order), ``cast`` (the dtype of the stored values), ``remove0`` (drop stored zeros),
``ensure_sorted_indices`` and ``clean`` (both).

>>> import numpy as np
>>> import scipy.sparse as sp
>>> from arignote import sparse
>>> x = sparse.csr_matrix("x", dtype="float64")
>>> x.T.format
'csc'
>>> x.T.eval({x: sp.csr_matrix(np.array([[0.0, 2.0], [3.0, 0.0]]))}).toarray()
array([[0., 3.],
       [2., 0.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.scalar.type import _normalize_dtype
from arignote.sparse.construction import sp_zeros_like
from arignote.sparse.conversion import as_sparse_variable
from arignote.sparse.type import SparseTensorType, all_dtypes

__all__ = [
    "Cast",
    "bcast",
    "ccast",
    "dcast",
    "fcast",
    "icast",
    "lcast",
    "wcast",
    "zcast",
    "EnsureSortedIndices",
    "Remove0",
    "Transpose",
    "cast",
    "clean",
    "ensure_sorted_indices",
    "remove0",
    "transpose",
]

_OTHER = {"csr": "csc", "csc": "csr"}


class Transpose(Op):
    """The transpose of a CSR (CSC) matrix, as a CSC (CSR) matrix with the same layout of
    its buffers (copied, so that the result never aliases the input). The gradient is the
    transpose of the output gradient."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        out = SparseTensorType(_OTHER[x.type.format], x.type.dtype, x.type.shape[::-1])()
        return Apply(self, [x], [out])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[0].transpose(copy=True)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (gz,) = output_grads
        return [transpose_any(gz)]

    def __str__(self) -> str:
        return "SparseTranspose"


_transpose = Transpose()


def transpose(x: Any) -> Variable:
    """The transpose of a sparse matrix (CSR becomes CSC and back, entries in place)."""
    return _transpose(as_sparse_variable(x))


def transpose_any(x: Variable) -> Variable:
    """The transpose of a sparse or dense matrix Variable."""
    if isinstance(x.type, SparseTensorType):
        return _transpose(x)
    return x.T


class Cast(Op):
    """The sparse matrix with its stored values cast to ``out_type`` (a dtype name)."""

    __props__ = ("out_type",)

    def __init__(self, out_type: Any):
        out_type = _normalize_dtype(out_type)
        if out_type not in all_dtypes:
            raise TypeError(f"sparse Cast: no sparse matrix of dtype {out_type}; use one of {all_dtypes}")
        self.out_type = out_type

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [x.type.clone(dtype=self.out_type)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[0].astype(self.out_type, copy=True)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (x,) = inputs
        (gz,) = output_grads
        if np.dtype(x.type.dtype).kind in "fc" and isinstance(gz.type, SparseTensorType):
            return [cast(gz, x.type.dtype)]
        if np.dtype(x.type.dtype).kind in "fc":
            return [gz.astype(x.type.dtype)]
        # an integer matrix: a zero gradient (floatX), stored nowhere
        return [sp_zeros_like(cast(x, config.floatX))]

    def __str__(self) -> str:
        return f"SparseCast{{{self.out_type}}}"


def cast(x: Any, dtype: Any) -> Variable:
    """``x`` with its stored values cast to ``dtype`` (``x`` itself when it has it)."""
    x = as_sparse_variable(x)
    dtype = _normalize_dtype(dtype)
    return x if x.type.dtype == dtype else Cast(dtype)(x)


# casts to each dtype, as PyTensor names them (b: int8, w: int16, i: int32, l: int64,
# f: float32, d: float64, c: complex64, z: complex128)
bcast, wcast, icast, lcast = Cast("int8"), Cast("int16"), Cast("int32"), Cast("int64")
fcast, dcast, ccast, zcast = Cast("float32"), Cast("float64"), Cast("complex64"), Cast("complex128")


class Remove0(Op):
    """The matrix without its stored zeros. The gradient is the output gradient (regular)."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        z = inputs[0].copy()
        z.eliminate_zeros()
        output_storage[0][0] = z

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [output_grads[0]]


remove0 = Remove0()


class EnsureSortedIndices(Op):
    """The matrix with the indices of each row (CSR) or column (CSC) sorted. The gradient
    is the output gradient."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[0].sorted_indices()  # a copy

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [output_grads[0]]

    def __str__(self) -> str:
        return "EnsureSortedIndices{inplace=False}"


ensure_sorted_indices = EnsureSortedIndices()


def clean(x: Any) -> Variable:
    """``x`` with sorted indices and no stored zeros."""
    return ensure_sorted_indices(remove0(x))
