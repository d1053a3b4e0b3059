"""``sparse_grad``: rows taken from a dense matrix whose gradient comes back sparse.

Taking a few rows of a large dense matrix (an embedding table, ``W[word_ids]``) has a
gradient that is zero outside those rows; :func:`sparse_grad` makes it a CSC matrix holding
only them, so that an update touches the rows that were used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type
from arignote.graph.op import Op
from arignote.sparse.construction import construct_sparse_from_list
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.indexing.advanced import AdvancedSubtensor1
from arignote.tensor.type import TensorType

__all__ = ["AdvancedSubtensor1SparseGrad", "sparse_grad"]


class AdvancedSubtensor1SparseGrad(Op):
    """``x[i]``: the rows ``i`` (an integer vector, repeats allowed) of a dense matrix ``x``,
    whose gradient with respect to ``x`` is a sparse CSC matrix holding those rows (repeated
    rows add up). Values as ``AdvancedSubtensor1``'s."""

    __props__ = ()

    def make_node(self, x: Any, ilist: Any) -> Apply:
        x, ilist = as_tensor_variable(x), as_tensor_variable(ilist)
        if x.type.ndim != 2:
            raise TypeError(
                f"sparse_grad: the indexed tensor must be a matrix (the gradient is a sparse matrix), "
                f"got {x} of Type {x.type}"
            )
        if ilist.type.ndim != 1 or np.dtype(ilist.type.dtype).kind not in "iu":
            raise TypeError(
                f"sparse_grad: the rows must be an integer vector, got {ilist} of Type {ilist.type}"
            )
        return Apply(self, [x, ilist], [TensorType(x.type.dtype, (ilist.type.shape[0], x.type.shape[1]))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, ilist = inputs
        try:
            output_storage[0][0] = np.take(x, ilist, axis=0)
        except IndexError as err:
            raise IndexError(f"{self}: {err} (x has {x.shape[0]} rows)") from None

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [(shapes[1][0], shapes[0][1])]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, ilist = inputs
        return [construct_sparse_from_list(x, output_grads[0], ilist), disconnected_type()]

    def __str__(self) -> str:
        return "AdvancedSubtensor1{sparse_grad}"


def sparse_grad(var: Variable) -> Variable:
    """``var``, which must be ``x[i]`` for a dense matrix ``x`` and an integer vector ``i``
    (an ``AdvancedSubtensor1`` node), rebuilt so that its gradient with respect to ``x`` is
    sparse. The values are the same.

    >>> import numpy as np
    >>> import arignote, arignote.tensor as pt
    >>> w = pt.dmatrix("w")
    >>> rows = sparse_grad(w[[0, 2, 0]])
    >>> g = arignote.function([w], arignote.grad(rows.sum(), w))(np.ones((4, 2)))
    >>> g.format, g.toarray().tolist()
    ('csc', [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    """
    node = getattr(var, "owner", None)
    if node is None or type(node.op) not in (AdvancedSubtensor1, AdvancedSubtensor1SparseGrad):
        made_by = "an input" if node is None else f"{node.op}"
        raise TypeError(
            f"sparse_grad needs rows of a matrix taken with an integer vector (x[i], an "
            f"AdvancedSubtensor1 node); {var} is made by {made_by}"
        )
    return AdvancedSubtensor1SparseGrad()(*node.inputs)
