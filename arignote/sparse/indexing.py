"""Indexing sparse matrices: ``x[a:b, c:d]`` (a sparse matrix, :class:`GetItem2d`),
``x[i, j]`` (a 0-d tensor, :class:`GetItemScalar`), ``x[rows]`` with an integer vector (a
sparse matrix of those rows, :class:`GetItemList`) and ``x[rows, cols]`` with two integer
vectors (a dense vector, :class:`GetItem2Lists`). There are no sparse vectors: ``x[i, a:b]``
is an error pointing at ``x[i:i+1, a:b]``.

Every one has a gradient (regular, sparse in ``x``'s format): the output gradient put back
at the positions read, repeated positions adding up.

>>> import numpy as np
>>> import scipy.sparse as sp
>>> from arignote import sparse
>>> x = sparse.csr_matrix("x", dtype="float64")
>>> a = sp.csr_matrix(np.arange(12.0).reshape(3, 4))
>>> x[1:, ::2].eval({x: a}).toarray()
array([[ 4.,  6.],
       [ 8., 10.]])
>>> x[[0, 2], [1, 3]].eval({x: a})
array([ 1., 11.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as scipy_sparse

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type
from arignote.graph.op import Op
from arignote.sparse.conversion import as_sparse_variable
from arignote.sparse.type import SparseTensorType
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.type import TensorType

__all__ = [
    "get_item_2lists_grad",
    "get_item_list_grad",
    "GetItem2Lists",
    "GetItem2ListsGrad",
    "GetItem2d",
    "GetItem2dGrad",
    "GetItemList",
    "GetItemListGrad",
    "GetItemScalar",
    "get_item_2d",
    "get_item_2lists",
    "get_item_list",
    "get_item_scalar",
    "sparse_getitem",
]


def _int_index(v: Any, what: str) -> Variable:
    v = as_tensor_variable(v)
    if np.dtype(v.type.dtype).kind not in "iu":
        raise TypeError(f"sparse indexing: {what} must be integers, got {v} of Type {v.type}")
    return v


def _disconnected_rest(first: Variable, n: int) -> list:
    return [first] + [disconnected_type() for _ in range(n)]


def _from_coo(format: str, shape: tuple, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> Any:
    """A CSR/CSC matrix with ``values`` at ``(rows, cols)``, repeated positions summed."""
    m = scipy_sparse.coo_matrix((values, (rows, cols)), shape=shape)
    return m.asformat(format)


# --- slices ---------------------------------------------------------------------------------------


class GetItem2d(Op):
    """``x[slice0, slice1]``: a sparse matrix. ``given`` says which of (start, stop, step)
    of each slice are inputs (int scalars); the others are None."""

    __props__ = ("given",)

    def __init__(self, given: tuple[bool, ...]):
        self.given = tuple(bool(g) for g in given)

    def make_node(self, x: Any, *bounds: Any) -> Apply:
        x = as_sparse_variable(x)
        bounds = [_int_index(b, "slice bounds") for b in bounds]
        for b in bounds:
            if b.type.ndim != 0:
                raise TypeError(f"sparse indexing: slice bounds must be scalars, got {b} of Type {b.type}")
        return Apply(self, [x, *bounds], [SparseTensorType(x.type.format, x.type.dtype)()])

    def slices(self, bounds: Sequence[Any]) -> tuple[slice, slice]:
        values = iter(bounds)
        parts = [int(next(values)) if g else None for g in self.given]
        return slice(*parts[:3]), slice(*parts[3:])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, *bounds = inputs
        rows, cols = self.slices(bounds)
        z = x[rows, cols]
        output_storage[0][0] = z.asformat(x.format, copy=True)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, *bounds = inputs
        g = GetItem2dGrad(self.given)(x, output_grads[0], *bounds)
        return _disconnected_rest(g, len(bounds))

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True]] + [[False]] * (len(node.inputs) - 1)


class GetItem2dGrad(Op):
    """The gradient of :class:`GetItem2d`: the slice's gradient ``gz`` put back at the
    positions the slice read, zero elsewhere (sparse, ``x``'s shape and format)."""

    __props__ = ("given",)

    def __init__(self, given: tuple[bool, ...]):
        self.given = tuple(given)

    def make_node(self, x: Any, gz: Any, *bounds: Any) -> Apply:
        x, gz = as_sparse_variable(x), as_sparse_variable(gz)
        return Apply(self, [x, gz, *bounds], [SparseTensorType(x.type.format, gz.type.dtype)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, gz, *bounds = inputs
        rows, cols = GetItem2d(self.given).slices(bounds)
        row_ids = np.arange(x.shape[0])[rows]
        col_ids = np.arange(x.shape[1])[cols]
        g = gz.tocoo()
        output_storage[0][0] = _from_coo(x.format, x.shape, row_ids[g.row], col_ids[g.col], g.data)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], [True]] + [[False]] * (len(node.inputs) - 2)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Linear in ``gz``: its gradient is the slice of the output gradient."""
        _, _, *bounds = inputs
        g = GetItem2d(self.given)(output_grads[0], *bounds)
        return [disconnected_type(), g, *(disconnected_type() for _ in bounds)]


def get_item_2d(x: Any, index: tuple) -> Variable:
    """``x[index]`` for one or two slices."""
    if len(index) == 1:
        index = (index[0], slice(None))
    given: list[bool] = []
    bounds: list[Any] = []
    for s in index:
        if not isinstance(s, slice):
            raise TypeError(
                f"sparse indexing: {s!r} is not a slice; there are no sparse vectors, use x[i:i+1, a:b] "
                "(or x[i, j] for one entry)"
            )
        for part in (s.start, s.stop, s.step):
            given.append(part is not None)
            if part is not None:
                bounds.append(part)
    return GetItem2d(tuple(given))(x, *bounds)


# --- single entries, rows, lists of entries -----------------------------------------------------


class GetItemScalar(Op):
    """``x[i, j]``: one entry, as a 0-d tensor."""

    __props__ = ()

    def make_node(self, x: Any, i: Any, j: Any) -> Apply:
        x = as_sparse_variable(x)
        i, j = _int_index(i, "indices"), _int_index(j, "indices")
        if i.type.ndim or j.type.ndim:
            raise TypeError("GetItemScalar: the indices must be scalars")
        return Apply(self, [x, i, j], [TensorType(x.type.dtype, ())()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, i, j = inputs
        output_storage[0][0] = np.asarray(x[int(i), int(j)], dtype=x.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        return [()]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, i, j = inputs
        g = get_item_2lists_grad(x, i.dimshuffle("x"), j.dimshuffle("x"), output_grads[0].dimshuffle("x"))
        return _disconnected_rest(g, 2)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False], [False]]


get_item_scalar_op = GetItemScalar()


def get_item_scalar(x: Any, index: tuple) -> Variable:
    """``x[i, j]`` as a 0-d tensor."""
    return get_item_scalar_op(x, *index)


class GetItemList(Op):
    """``x[rows]`` for an integer vector ``rows``: those rows, as a sparse matrix."""

    __props__ = ()

    def make_node(self, x: Any, rows: Any) -> Apply:
        x = as_sparse_variable(x)
        rows = _int_index(rows, "row indices")
        if rows.type.ndim != 1:
            raise TypeError(f"GetItemList: the rows must be a vector, got {rows} of Type {rows.type}")
        return Apply(
            self,
            [x, rows],
            [SparseTensorType(x.type.format, x.type.dtype, (rows.type.shape[0], x.type.shape[1]))()],
        )

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, rows = inputs
        output_storage[0][0] = x[rows].asformat(x.format, copy=True)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, rows = inputs
        return [get_item_list_grad(x, rows, output_grads[0]), disconnected_type()]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]


get_item_list = GetItemList()


class GetItemListGrad(Op):
    """The gradient of :class:`GetItemList`: row ``k`` of ``gz`` added to row ``rows[k]``."""

    __props__ = ()

    def make_node(self, x: Any, rows: Any, gz: Any) -> Apply:
        x, gz = as_sparse_variable(x), as_sparse_variable(gz)
        return Apply(
            self, [x, as_tensor_variable(rows), gz], [SparseTensorType(x.type.format, gz.type.dtype)()]
        )

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, rows, gz = inputs
        g = gz.tocoo()
        rows = np.asarray(rows) % x.shape[0]  # negative rows count from the end
        output_storage[0][0] = _from_coo(x.format, x.shape, rows[g.row], g.col, g.data)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], [False], [True]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Linear in ``gz``: its gradient is the output gradient's rows ``rows``."""
        _, rows, _ = inputs
        return [disconnected_type(), disconnected_type(), get_item_list(output_grads[0], rows)]


get_item_list_grad = GetItemListGrad()


class GetItem2Lists(Op):
    """``x[rows, cols]`` for two integer vectors: the entries, as a dense vector."""

    __props__ = ()

    def make_node(self, x: Any, rows: Any, cols: Any) -> Apply:
        x = as_sparse_variable(x)
        rows, cols = _int_index(rows, "row indices"), _int_index(cols, "column indices")
        if rows.type.ndim != 1 or cols.type.ndim != 1:
            raise TypeError("GetItem2Lists: the rows and the columns must be vectors")
        return Apply(self, [x, rows, cols], [TensorType(x.type.dtype, (None,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, rows, cols = inputs
        if len(rows) != len(cols):
            raise ValueError(f"{self}: {len(rows)} row indices but {len(cols)} column indices")
        values = x.tocsr()[rows, cols] if len(rows) else np.zeros(0)
        output_storage[0][0] = np.asarray(values, dtype=x.dtype).ravel()

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        return [shapes[1]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, rows, cols = inputs
        return [
            get_item_2lists_grad(x, rows, cols, output_grads[0]),
            disconnected_type(),
            disconnected_type(),
        ]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False], [False]]


get_item_2lists = GetItem2Lists()


class GetItem2ListsGrad(Op):
    """The gradient of :class:`GetItem2Lists`: ``gz[k]`` added at ``(rows[k], cols[k])``."""

    __props__ = ()

    def make_node(self, x: Any, rows: Any, cols: Any, gz: Any) -> Apply:
        x = as_sparse_variable(x)
        gz = as_tensor_variable(gz)
        out = SparseTensorType(x.type.format, gz.type.dtype)()
        return Apply(self, [x, as_tensor_variable(rows), as_tensor_variable(cols), gz], [out])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, rows, cols, gz = inputs
        n, m = x.shape
        output_storage[0][0] = _from_coo(x.format, x.shape, np.asarray(rows) % n, np.asarray(cols) % m, gz)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], [False], [False], [True]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Linear in ``gz``: its gradient is the output gradient read at ``(rows, cols)``."""
        _, rows, cols, _ = inputs
        g = get_item_2lists(output_grads[0], rows, cols)
        return [disconnected_type(), disconnected_type(), disconnected_type(), g]


get_item_2lists_grad = GetItem2ListsGrad()


def _is_int_scalar(v: Any) -> bool:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return True
    t = getattr(v, "type", None)
    return isinstance(t, TensorType) and t.ndim == 0 and np.dtype(t.dtype).kind in "iu"


def _is_int_list(v: Any) -> bool:
    if isinstance(v, (list, np.ndarray)):
        return True
    t = getattr(v, "type", None)
    return isinstance(t, TensorType) and t.ndim == 1


def sparse_getitem(x: Variable, index: Any) -> Variable:
    """``x[index]`` for a sparse ``x`` (see the module's docstring for what is supported)."""
    if not isinstance(index, tuple):
        index = (index,)
    if len(index) == 1 and _is_int_list(index[0]):
        return get_item_list(x, index[0])
    if len(index) == 2 and _is_int_scalar(index[0]) and _is_int_scalar(index[1]):
        return get_item_scalar(x, index)
    if len(index) == 2 and _is_int_list(index[0]) and _is_int_list(index[1]):
        return get_item_2lists(x, index[0], index[1])
    if len(index) in (1, 2):
        return get_item_2d(x, index)
    raise TypeError(f"sparse indexing: a sparse matrix has 2 dimensions, got {len(index)} indices")
