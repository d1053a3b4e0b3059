"""Sparse matrices to and from their parts and to and from dense matrices.

- :class:`CSMProperties` (``csm_properties``, ``csm_data``, ``csm_indices``, ``csm_indptr``,
  ``csm_shape``) takes a CSR/CSC matrix apart into ``(data, indices, indptr, shape)``;
  :class:`CSM` (``CSR``, ``CSC``) builds one from them. Read with the other format, the
  parts of a matrix are those of its transpose.
- :class:`DenseFromSparse` (``dense_from_sparse``, ``x.toarray()``) and
  :class:`SparseFromDense` (``csr_from_dense``, ``csc_from_dense``) convert.
- :class:`AsFormat` (``as_format``): the same matrix in the other format.
- ``sp_ones_like``/``sp_zeros_like``: the structure of a matrix with ones / nothing stored.

Gradients follow PyTensor: the gradient with respect to a sparse input is sparse.
``dense_from_sparse``'s is *structured* (only the stored entries get one), unless
``DenseFromSparse(structured=False)``; ``CSM``'s with respect to ``data`` reads the output
gradient at each stored entry (:class:`CSMGrad`).

>>> import numpy as np
>>> import scipy.sparse as sp
>>> import arignote
>>> from arignote import sparse
>>> x = sparse.csc_matrix("x", dtype="int64")
>>> data, indices, indptr, shape = sparse.csm_properties(x)
>>> f = arignote.function([x], sparse.CSR(data, indices, indptr, shape))
>>> f(sp.csc_matrix(np.array([[0, 1, 1], [0, 0, 0], [1, 0, 0]]))).toarray()
array([[0, 0, 1],
       [1, 0, 0],
       [1, 0, 0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as scipy_sparse

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.sparse.conversion import as_sparse_variable
from arignote.sparse.type import SparseTensorType
from arignote.tensor.alloc import ones_like
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.type import TensorType

__all__ = [
    "AsFormat",
    "as_format",
    "CSC",
    "CSM",
    "CSMGrad",
    "csm_grad",
    "CSMProperties",
    "CSR",
    "ConstructSparseFromList",
    "construct_sparse_from_list",
    "DenseFromSparse",
    "SparseFromDense",
    "csc_from_dense",
    "csm_data",
    "csm_indices",
    "csm_indptr",
    "csm_properties",
    "csm_shape",
    "csr_from_dense",
    "dense_from_sparse",
    "sp_ones_like",
    "sp_zeros_like",
]


_FORMATS = ("csr", "csc")


def _major_minor(format: str, shape: tuple[int, int]) -> tuple[int, int]:
    return (shape[0], shape[1]) if format == "csr" else (shape[1], shape[0])


def entry_coordinates(format: str, indices: np.ndarray, indptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, cols)`` of each stored entry of a CSR/CSC matrix, in storage order."""
    major = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    return (major, indices) if format == "csr" else (indices, major)


# --- taking a matrix apart -------------------------------------------------------------------


class CSMProperties(Op):
    """``(data, indices, indptr, shape)`` of a CSR/CSC matrix: its stored values, their
    minor indices (int32), where each row (CSR) or column (CSC) starts (int32), and its shape
    (int32). They are copies: an output never aliases the matrix (a function's caller may
    modify what it returns)."""

    __props__ = ()

    def make_node(self, csm: Any) -> Apply:
        csm = as_sparse_variable(csm)
        outs = [TensorType(csm.type.dtype, (None,))()] + [
            TensorType("int32", s)() for s in ((None,), (None,), (2,))
        ]
        return Apply(self, [csm], outs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        output_storage[0][0] = x.data.copy()
        output_storage[1][0] = np.array(x.indices, dtype="int32")
        output_storage[2][0] = np.array(x.indptr, dtype="int32")
        output_storage[3][0] = np.asarray(x.shape, dtype="int32")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        return [None, None, None, (2,)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True, False, False, False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Only ``data`` carries a gradient: the matrix with ``g_data`` in its structure."""
        (x,) = inputs
        g_data = output_grads[0]
        if is_disconnected(g_data):
            return [disconnected_type()]
        _, indices, indptr, shape = outputs
        return [CSM(x.type.format)(g_data, indices, indptr, shape)]


csm_properties = CSMProperties()


def csm_data(csm: Any) -> Variable:
    """The stored values of a CSR/CSC matrix."""
    return csm_properties(csm)[0]


def csm_indices(csm: Any) -> Variable:
    """The minor index of each stored value (column for CSR, row for CSC), int32."""
    return csm_properties(csm)[1]


def csm_indptr(csm: Any) -> Variable:
    """Where each major line (row for CSR, column for CSC) starts in ``data``, int32."""
    return csm_properties(csm)[2]


def csm_shape(csm: Any) -> Variable:
    """The shape of a sparse matrix, an int32 vector of length 2."""
    return csm_properties(csm)[3]


# --- building one -----------------------------------------------------------------------------


class CSM(Op):
    """A CSR or CSC matrix (``format``) from ``(data, indices, indptr, shape)``.

    The parts are copied, so the matrix never aliases its inputs. The gradient with respect
    to ``data`` is the output gradient read at each stored entry; the structure (indices,
    indptr, shape) has none.
    """

    __props__ = ("format",)

    def __init__(self, format: str):
        if format not in ("csr", "csc"):
            raise ValueError(f"CSM: format must be 'csr' or 'csc', got {format!r}")
        self.format = format

    def make_node(self, data: Any, indices: Any, indptr: Any, shape: Any) -> Apply:
        data = as_tensor_variable(data)
        parts = [as_tensor_variable(v) for v in (indices, indptr, shape)]
        if data.type.ndim != 1:
            raise TypeError(f"CSM: data must be a vector, got {data} of Type {data.type}")
        for name, v in zip(("indices", "indptr", "shape"), parts):
            if v.type.ndim != 1 or np.dtype(v.type.dtype).kind not in "iu":
                raise TypeError(f"CSM: {name} must be an integer vector, got {v} of Type {v.type}")
        out = SparseTensorType(self.format, data.type.dtype)()
        return Apply(self, [data, *parts], [out])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        data, indices, indptr, shape = inputs
        if len(shape) != 2:
            raise ValueError(f"{self}: shape must have 2 entries, got {list(shape)}")
        shape = (int(shape[0]), int(shape[1]))
        n_major, n_minor = _major_minor(self.format, shape)
        if len(indptr) != n_major + 1:
            raise ValueError(
                f"{self}: indptr has {len(indptr)} entries; a {self.format} matrix of shape {shape} needs "
                f"{n_major + 1}"
            )
        if len(indices) != len(data):
            raise ValueError(f"{self}: {len(data)} values but {len(indices)} indices")
        if len(indices) and (indices.min() < 0 or indices.max() >= n_minor):
            raise ValueError(f"{self}: an index is outside [0, {n_minor}) for a matrix of shape {shape}")
        cls = SparseTensorType.format_cls[self.format]
        output_storage[0][0] = cls((data.copy(), indices.copy(), indptr.copy()), shape=shape, copy=False)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False], [False], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        data, indices, indptr, _ = inputs
        (gz,) = output_grads
        g_data = CSMGrad(self.format)(data, indices, indptr, gz)
        return [g_data, disconnected_type(), disconnected_type(), disconnected_type()]

    def __str__(self) -> str:
        return f"CSM{{{self.format}}}"


CSC = CSM("csc")
CSR = CSM("csr")


class CSMGrad(Op):
    """The gradient of :class:`CSM` with respect to ``data``: the sparse output gradient
    ``gz`` read at each stored entry of the matrix ``(data, indices, indptr)``, in storage
    order (zero where ``gz`` stores nothing)."""

    __props__ = ("format",)

    def __init__(self, format: str):
        self.format = format

    def make_node(self, data: Any, indices: Any, indptr: Any, gz: Any) -> Apply:
        data, indices, indptr = (as_tensor_variable(v) for v in (data, indices, indptr))
        gz = as_sparse_variable(gz) if not isinstance(getattr(gz, "type", None), TensorType) else gz
        return Apply(self, [data, indices, indptr, gz], [TensorType(gz.type.dtype, (None,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        _, indices, indptr, gz = inputs
        rows, cols = entry_coordinates(self.format, indices, indptr)
        dtype = node.outputs[0].type.dtype
        if scipy_sparse.issparse(gz):
            values = np.asarray(gz.tocsr()[rows, cols]).ravel() if len(rows) else np.zeros(0)
        else:
            values = np.asarray(gz)[rows, cols]
        output_storage[0][0] = np.asarray(values, dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        return [shapes[1]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], [False], [False], [True]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Linear in ``gz``: its gradient is the output gradient put back at the stored
        entries (sparse, or dense for a dense ``gz``)."""
        _, indices, indptr, gz = inputs
        (g,) = output_grads
        if isinstance(gz.type, SparseTensorType):
            placed = as_format(CSM(self.format)(g, indices, indptr, csm_shape(gz)), gz.type.format)
        else:
            placed = dense_from_sparse(CSM(self.format)(g, indices, indptr, gz.shape))
        return [disconnected_type(), disconnected_type(), disconnected_type(), placed]


# --- dense <-> sparse ------------------------------------------------------------------------


class DenseFromSparse(Op):
    """The dense ndarray of a sparse matrix. ``structured`` (the default): the gradient is
    sparse with the input's structure (only stored entries get one); otherwise it is the
    whole dense gradient made sparse."""

    __props__ = ("sparse_grad",)

    def __init__(self, structured: bool = True):
        self.sparse_grad = structured

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [TensorType(x.type.dtype, x.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[0].toarray()

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        shape = csm_shape(node.inputs[0])
        return [(shape[0], shape[1])]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (x,) = inputs
        (gz,) = output_grads
        if self.sparse_grad:
            return [_structured_times(x, gz)]
        return [SparseFromDense(x.type.format)(gz)]

    def __str__(self) -> str:
        return "DenseFromSparse" if self.sparse_grad else "DenseFromSparse{structured=False}"


dense_from_sparse = DenseFromSparse()


def _structured_times(x: Variable, dense: Variable) -> Variable:
    """``dense`` read at the stored entries of ``x``, as a sparse matrix of ``x``'s structure."""
    data, indices, indptr, shape = csm_properties(x)
    return CSM(x.type.format)(CSMGrad(x.type.format)(data, indices, indptr, dense), indices, indptr, shape)


class SparseFromDense(Op):
    """A dense matrix as a CSR or CSC (``format``) matrix storing its nonzero entries. The
    gradient is the dense form of the output gradient."""

    __props__ = ("format",)

    def __init__(self, format: str):
        if format not in ("csr", "csc"):
            raise ValueError(f"SparseFromDense: format must be 'csr' or 'csc', got {format!r}")
        self.format = format

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.type.ndim != 2:
            raise TypeError(f"{self}: only matrices can be made sparse, got {x} of Type {x.type}")
        return Apply(self, [x], [SparseTensorType(self.format, x.type.dtype, x.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = SparseTensorType.format_cls[self.format](inputs[0])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        return [shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (gz,) = output_grads
        if isinstance(gz.type, SparseTensorType):
            gz = dense_from_sparse(gz)
        return [gz]

    def __str__(self) -> str:
        return f"SparseFromDense{{{self.format}}}"


csr_from_dense = SparseFromDense("csr")
csc_from_dense = SparseFromDense("csc")


class AsFormat(Op):
    """The same matrix in the other format (a copy: CSR <-> CSC reorders the entries).
    The gradient is the output gradient in the input's format."""

    __props__ = ("format",)

    def __init__(self, format: str):
        if format not in _FORMATS:
            raise ValueError(f"AsFormat: format must be 'csr' or 'csc', got {format!r}")
        self.format = format

    def make_node(self, x: Any) -> Apply:
        x = as_sparse_variable(x)
        return Apply(self, [x], [x.type.clone(format=self.format)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[0].asformat(self.format, copy=True)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (gz,) = output_grads
        return [as_format(gz, inputs[0].type.format) if isinstance(gz.type, SparseTensorType) else gz]


def as_format(x: Any, format: str) -> Variable:
    """``x`` in ``format`` (``x`` itself when it already is)."""
    x = as_sparse_variable(x)
    return x if x.type.format == format else AsFormat(format)(x)


# --- structure-only matrices ------------------------------------------------------------------


def sp_ones_like(x: Any) -> Variable:
    """A sparse matrix with ``x``'s structure and a one in every stored entry."""
    x = as_sparse_variable(x)
    data, indices, indptr, shape = csm_properties(x)
    return CSM(x.type.format)(ones_like(data), indices, indptr, shape)


def sp_zeros_like(x: Any) -> Variable:
    """A sparse matrix of ``x``'s shape, format and dtype storing nothing."""
    x = as_sparse_variable(x)
    _, _, indptr, shape = csm_properties(x)
    empty_data = as_tensor_variable(np.zeros(0, dtype=x.type.dtype))
    empty_indices = as_tensor_variable(np.zeros(0, dtype="int32"))
    return CSM(x.type.format)(empty_data, empty_indices, indptr * 0, shape)


class ConstructSparseFromList(Op):
    """A CSC matrix of ``x``'s shape whose row ``ilist[k]`` holds row ``k`` of the dense
    ``values`` (repeated rows add up). The gradient of ``values`` is the output gradient's
    rows ``ilist``; ``x`` gives only the shape."""

    __props__ = ()

    def make_node(self, x: Any, values: Any, ilist: Any) -> Apply:
        x, values, ilist = (as_tensor_variable(v) for v in (x, values, ilist))
        if x.type.ndim != 2 or values.type.ndim != 2:
            raise TypeError(f"{self}: x and values must be matrices, got {x.type} and {values.type}")
        if ilist.type.ndim != 1 or np.dtype(ilist.type.dtype).kind not in "iu":
            raise TypeError(f"{self}: ilist must be an integer vector, got {ilist} of Type {ilist.type}")
        out = SparseTensorType("csc", values.type.dtype, (x.type.shape[0], values.type.shape[1]))()
        return Apply(self, [x.shape, values, ilist], [out])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        shape, values, ilist = inputs
        n_rows, n_cols = values.shape
        if n_rows != len(ilist):
            raise ValueError(f"{self}: {n_rows} rows of values but {len(ilist)} row indices")
        n_out = int(shape[0])
        ilist = np.asarray(ilist)
        if len(ilist) and (ilist.min() < -n_out or ilist.max() >= n_out):
            raise IndexError(f"{self}: a row index of {ilist.tolist()} is out of bounds for {n_out} rows")
        # negative rows count from the end, as in the x[ilist] this is the gradient of
        rows = np.tile(np.where(ilist < 0, ilist + n_out, ilist), n_cols)
        cols = np.repeat(np.arange(n_cols), n_rows)
        m = scipy_sparse.coo_matrix((values.T.ravel(), (rows, cols)), shape=(int(shape[0]), int(shape[1])))
        output_storage[0][0] = m.tocsc()

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], [True], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        _, _, ilist = inputs
        (gz,) = output_grads
        dense = dense_from_sparse(gz) if isinstance(gz.type, SparseTensorType) else gz
        return [disconnected_type(), dense[ilist], disconnected_type()]


construct_sparse_from_list = ConstructSparseFromList()


#: PyTensor's name for the CSMGrad class
csm_grad = CSMGrad
