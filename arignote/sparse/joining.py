"""Sparse matrices from blocks: ``hstack``, ``vstack`` (side by side, one above the other)
and ``block_diag`` (on a diagonal); and the diagonal Ops ``square_diagonal`` (a dense vector
as a sparse diagonal matrix) and ``diag`` (the diagonal of a square sparse matrix, dense).

Gradients are regular: each block's is its part of the output gradient (sparse for a
sparse block, in its format; dense for a dense one).

>>> import numpy as np
>>> import scipy.sparse as sp
>>> from arignote import sparse
>>> x = sparse.csr_matrix("x", dtype="float64")
>>> a = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
>>> sparse.hstack([x, x]).eval({x: a}).toarray()
array([[1., 0., 1., 0.],
       [0., 2., 0., 2.]])
>>> sparse.diag(x).eval({x: a})
array([1., 2.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as scipy_sparse

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.sparse.construction import SparseFromDense, as_format, csm_shape, dense_from_sparse
from arignote.sparse.conversion import (
    _is_sparse_variable,
    _upcast_dtype,
    as_sparse_or_tensor_variable,
    as_sparse_variable,
)
from arignote.sparse.indexing import get_item_2d
from arignote.sparse.structure import cast
from arignote.sparse.type import SparseTensorType
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast as tensor_cast

__all__ = [
    "Diag",
    "Stack",
    "HStack",
    "SparseBlockDiagonal",
    "SquareDiagonal",
    "VStack",
    "block_diag",
    "diag",
    "hstack",
    "sparse_block_diagonal",
    "square_diagonal",
    "vstack",
]


def _length(v: Variable, dim: int) -> Variable:
    """Length ``dim`` of a sparse or dense matrix, an int64 scalar."""
    if _is_sparse_variable(v):
        return tensor_cast(csm_shape(v)[dim], "int64")
    return v.shape[dim]


def _block_grad(x: Variable, gz: Variable, rows: tuple, cols: tuple) -> Variable:
    """Block ``gz[rows[0]:rows[1], cols[0]:cols[1]]`` of the output gradient, as ``x``'s
    gradient (sparse in its format, or dense)."""
    if not _is_sparse_variable(gz):
        block = gz[rows[0] : rows[1], cols[0] : cols[1]]
        return block if not _is_sparse_variable(x) else as_format(_sparse_of(block, x), x.type.format)
    block = get_item_2d(gz, (slice(*rows), slice(*cols)))
    if not _is_sparse_variable(x):
        return dense_from_sparse(block)
    block = as_format(block, x.type.format)
    return block if block.type.dtype == x.type.dtype else cast(block, x.type.dtype)


def _sparse_of(dense: Variable, like: Variable) -> Variable:
    return SparseFromDense(like.type.format)(dense)


class _Stack(Op):
    __props__ = ("format", "dtype")
    axis: int

    def __init__(self, format: str | None = None, dtype: Any = None):
        self.format = "csc" if format is None else format
        if self.format not in ("csr", "csc"):
            raise ValueError(f"{type(self).__name__}: format must be 'csr' or 'csc', got {format!r}")
        if dtype is None:
            raise ValueError(f"{type(self).__name__}: the output dtype must be given")
        self.dtype = np.dtype(dtype).name

    def make_node(self, *blocks: Any) -> Apply:
        if not blocks:
            raise ValueError(f"{type(self).__name__}: nothing to stack")
        blocks = [as_sparse_variable(b) for b in blocks]
        other = 1 - self.axis
        known = {b.type.shape[other] for b in blocks} - {None}
        if len(known) > 1:
            raise ValueError(
                f"{type(self).__name__}: the blocks' lengths along axis {other} differ: "
                f"{[b.type.shape for b in blocks]}"
            )
        lengths = [b.type.shape[self.axis] for b in blocks]
        total = None if None in lengths else sum(lengths)
        shape = [None, None]
        shape[self.axis] = total
        shape[other] = known.pop() if known else None
        return Apply(self, blocks, [SparseTensorType(self.format, self.dtype, tuple(shape))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        other = 1 - self.axis
        lengths = {b.shape[other] for b in inputs}
        if len(lengths) > 1:
            raise ValueError(
                f"{self}: the blocks' lengths along axis {other} differ: {[b.shape for b in inputs]}"
            )
        stack = scipy_sparse.hstack if self.axis == 1 else scipy_sparse.vstack
        output_storage[0][0] = stack(list(inputs), format=self.format, dtype=self.dtype)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (gz,) = output_grads
        grads = []
        start: Any = 0
        for x in inputs:
            stop = start + _length(x, self.axis)
            span = (start, stop)
            grads.append(
                _block_grad(x, gz, (None, None), span)
                if self.axis == 1
                else _block_grad(x, gz, span, (None, None))
            )
            start = stop
        return grads

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.format},{self.dtype})"


Stack = _Stack  # PyTensor's name of the base of HStack and VStack


class HStack(_Stack):
    """Sparse blocks side by side (their row counts must agree)."""

    axis = 1


class VStack(_Stack):
    """Sparse blocks one above the other (their column counts must agree)."""

    axis = 0


def hstack(blocks: Sequence[Any], format: str | None = None, dtype: Any = None) -> Variable:
    """The sparse ``blocks`` side by side, as a ``format`` matrix (CSC by default)."""
    blocks = [as_sparse_variable(b) for b in blocks]
    dtype = _upcast_dtype(*(b.type.dtype for b in blocks)) if dtype is None else dtype
    return HStack(format, dtype)(*blocks)


def vstack(blocks: Sequence[Any], format: str | None = None, dtype: Any = None) -> Variable:
    """The sparse ``blocks`` one above the other, as a ``format`` matrix (CSC by default)."""
    blocks = [as_sparse_variable(b) for b in blocks]
    dtype = _upcast_dtype(*(b.type.dtype for b in blocks)) if dtype is None else dtype
    return VStack(format, dtype)(*blocks)


class SparseBlockDiagonal(Op):
    """Matrices (sparse or dense) on the diagonal of a sparse ``format`` matrix."""

    __props__ = ("n_inputs", "format")

    def __init__(self, n_inputs: int, format: str = "csc"):
        if format not in ("csr", "csc"):
            raise ValueError(f"SparseBlockDiagonal: format must be 'csr' or 'csc', got {format!r}")
        self.n_inputs = n_inputs
        self.format = format

    def make_node(self, *matrices: Any) -> Apply:
        matrices = [as_sparse_or_tensor_variable(m) for m in matrices]
        if len(matrices) != self.n_inputs:
            raise TypeError(f"{self}: expected {self.n_inputs} matrices, got {len(matrices)}")
        for m in matrices:
            if m.type.ndim != 2:
                raise TypeError(f"block_diag: the blocks must be matrices, got {m} of Type {m.type}")
        dtype = _upcast_dtype(*(m.type.dtype for m in matrices))
        shape = tuple(
            None if any(m.type.shape[d] is None for m in matrices) else sum(m.type.shape[d] for m in matrices)
            for d in (0, 1)
        )
        return Apply(self, matrices, [SparseTensorType(self.format, dtype, shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = scipy_sparse.block_diag(list(inputs), format=self.format, dtype=dtype)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (gz,) = output_grads
        grads = []
        r0: Any = 0
        c0: Any = 0
        for x in inputs:
            r1, c1 = r0 + _length(x, 0), c0 + _length(x, 1)
            g = _block_grad(x, gz, (r0, r1), (c0, c1))
            if not _is_sparse_variable(x) and g.type.dtype != x.type.dtype:
                g = tensor_cast(g, x.type.dtype)
            grads.append(g)
            r0, c0 = r1, c1
        return grads

    def __str__(self) -> str:
        return f"SparseBlockDiagonal{{{self.format}}}"


def block_diag(*matrices: Any, format: str = "csc") -> Variable:
    """The ``matrices`` (sparse or dense) on the diagonal of a sparse matrix."""
    return SparseBlockDiagonal(len(matrices), format)(*matrices)


sparse_block_diagonal = block_diag


class SquareDiagonal(Op):
    """A dense vector as the diagonal of a square sparse (CSC) matrix. The gradient is the
    diagonal of the output gradient."""

    __props__ = ()

    def make_node(self, diagonal: Any) -> Apply:
        diagonal = as_tensor_variable(diagonal)
        if diagonal.type.ndim != 1:
            raise TypeError(
                f"square_diagonal: the diagonal must be a vector, got {diagonal} of Type {diagonal.type}"
            )
        n = diagonal.type.shape[0]
        return Apply(self, [diagonal], [SparseTensorType("csc", diagonal.type.dtype, (n, n))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (d,) = inputs
        n = len(d)
        output_storage[0][0] = scipy_sparse.csc_matrix(
            (d.copy(), np.arange(n), np.arange(n + 1)), shape=(n, n)
        )

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [diag(output_grads[0])]


square_diagonal = SquareDiagonal()


class Diag(Op):
    """The diagonal of a square sparse matrix, as a dense vector. The gradient is a sparse
    diagonal matrix."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        rows, cols = x.type.shape
        if rows is not None and cols is not None and rows != cols:
            raise ValueError(f"{self}: the matrix must be square, got {x} of static shape {x.type.shape}")
        n = rows if rows is not None else cols
        return Apply(self, [x], [TensorType(x.type.dtype, (n,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        if x.shape[0] != x.shape[1]:
            raise ValueError(f"{self}: the matrix must be square, got shape {x.shape}")
        output_storage[0][0] = np.asarray(x.diagonal(), dtype=x.dtype)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (x,) = inputs
        return [as_format(square_diagonal(output_grads[0]), x.type.format)]

    def __str__(self) -> str:
        return "SparseDiag"


_diag = Diag()


def diag(x: Any) -> Variable:
    """The diagonal of the square sparse ``x`` (a dense vector)."""
    return _diag(x)
