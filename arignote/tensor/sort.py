"""Sorting: ``sort`` and ``argsort`` along one axis (NumPy's, with its ``kind`` argument).

The axis is an input of the node (a 0-d integer tensor, as in PyTensor), so it may be
symbolic; a constant axis is checked when the node is built. ``axis=None`` in
:func:`sort` / :func:`argsort` sorts the flattened tensor.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dmatrix("x")
>>> sort(x, axis=0).eval({x: np.array([[3.0, 1.0], [2.0, 4.0]])})
array([[2., 1.],
       [3., 4.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.indexing.advanced import _broadcast_together, _check_int, take_along_axis
from arignote.tensor.shape import _grad_like, _zero_grad, flatten
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast

__all__ = [
    "KIND",
    "sort",
    "argsort",
    "permute_row_elements",
    "inverse_permutation",
]

#: the sorting algorithms ``sort`` and ``argsort`` accept (NumPy's ``kind``)
KIND = Literal["quicksort", "mergesort", "heapsort", "stable"]

#: the sorting algorithms NumPy offers
KIND_VALUES = ("quicksort", "mergesort", "heapsort", "stable")


def _check_kind(kind: Any) -> str:
    if kind not in KIND_VALUES:
        raise ValueError(f"kind must be one of {KIND_VALUES}, got {kind!r}")
    return kind


def _parse_sort_args(kind: Any, order: Any, stable: bool | None) -> str:
    if order is not None:
        raise ValueError("sort: the order argument (field names of structured arrays) has no meaning here")
    if stable is not None and kind is not None:
        raise ValueError("sort: give kind or stable, not both")
    if stable:
        return "stable"
    return _check_kind("quicksort" if kind is None else kind)


class _SortBase(Op):
    """What SortOp and ArgSortOp share: the ``kind`` prop and the axis input."""

    __props__ = ("kind",)

    def __init__(self, kind: str = "quicksort"):
        self.kind = _check_kind(kind)

    def _inputs(self, input: Any, axis: Any) -> tuple[Variable, Variable]:
        x = as_tensor_variable(input)
        if axis is None:
            raise TypeError(
                f"{self}: axis=None is not an input of the Op; call sort/argsort(x, axis=None) "
                "to sort the flattened tensor"
            )
        if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
            axis = np.int64(axis)
        axis = as_tensor_variable(axis)
        if axis.type.ndim != 0 or axis.type.dtype[:3] not in ("int", "uin"):
            raise TypeError(f"{self}: axis must be an integer scalar, got {axis} of Type {axis.type}")
        if isinstance(axis, Constant):
            normalize_axis(int(axis.data), x.type.ndim, f"{self} axis")
        return x, axis

    def _axis(self, x: np.ndarray, axis: Any) -> int:
        a = int(axis)
        if not -x.ndim <= a < x.ndim:
            raise np.exceptions.AxisError(
                f"{self}: axis {a} is out of bounds for a value of {x.ndim} dimension(s)"
            )
        return a

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]  # the axis only chooses, it does not flow into the values

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.kind}}}"


class SortOp(_SortBase):
    """A sorted copy of a tensor along an axis: ``SortOp(kind)(x, axis)``.

    NaNs sort to the end, as in NumPy. The output has the input's Type.
    """

    def make_node(self, input: Any, axis: Any = -1) -> Apply:
        x, axis = self._inputs(input, axis)
        return Apply(self, [x, axis], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, axis = inputs
        output_storage[0][0] = np.sort(x, self._axis(x, axis), self.kind)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The sorted output is ``x`` permuted by ``argsort(x)``: the gradient goes back
        through the inverse permutation (``argsort`` of that permutation). Among equal
        elements, each gets the gradient of the place ``argsort`` gave it. The axis is
        disconnected."""
        x, axis = inputs
        perm = ArgSortOp(self.kind)(x, axis)
        inverse = ArgSortOp("quicksort")(perm, axis)  # distinct values: any kind will do
        g = as_tensor_variable(output_grads[0])
        return [_grad_like(PermuteAlongAxis()(g, inverse, axis), x), disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        x, axis = inputs
        if is_disconnected(eval_points[0]):
            return [disconnected_type()]
        return [PermuteAlongAxis()(eval_points[0], ArgSortOp(self.kind)(x, axis), axis)]


class ArgSortOp(_SortBase):
    """The int64 indices that sort a tensor along an axis: ``ArgSortOp(kind)(x, axis)``."""

    def make_node(self, input: Any, axis: Any = -1) -> Apply:
        x, axis = self._inputs(input, axis)
        return Apply(self, [x, axis], [TensorType("int64", x.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, axis = inputs
        output_storage[0][0] = np.argsort(x, self._axis(x, axis), self.kind).astype("int64", copy=False)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Zero: the indices are a step function of ``x``. The axis is disconnected."""
        return [_zero_grad(inputs[0]), disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]  # integer indices do not move


class PermuteAlongAxis(_SortBase):
    """``numpy.take_along_axis(x, perm, axis)`` for a ``perm`` that holds a permutation of
    ``range(n)`` along ``axis`` (what ``argsort`` gives): ``PermuteAlongAxis()(x, perm, axis)``.

    The permutation makes the pullback another permutation (by the inverse, ``argsort(perm)``),
    which is how :class:`SortOp` is differentiated. ``perm`` is not checked to be one.
    """

    __props__ = ()

    def __init__(self) -> None:  # nothing is sorted here: no kind
        super().__init__()

    def make_node(self, x: Any, perm: Any, axis: Any = -1) -> Apply:
        x, axis = self._inputs(x, axis)
        perm = as_tensor_variable(perm)
        if perm.type.ndim != x.type.ndim or perm.type.dtype[:3] not in ("int", "uin"):
            raise TypeError(
                f"{self}: perm must be an integer tensor of {x.type.ndim} dimensions, got {perm.type}"
            )
        shape = tuple(p if p is not None else s for p, s in zip(perm.type.shape, x.type.shape))
        return Apply(self, [x, perm, axis], [TensorType(x.type.dtype, shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, perm, axis = inputs
        if perm.shape != x.shape:
            raise ValueError(f"{self}: perm has shape {perm.shape}, the value {x.shape}")
        output_storage[0][0] = np.take_along_axis(x, perm, axis=self._axis(x, axis))

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[1]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        x, perm, axis = inputs
        g = as_tensor_variable(output_grads[0])
        inverse = ArgSortOp("quicksort")(perm, axis)
        return [_grad_like(self(g, inverse, axis), x), disconnected_type(), disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        if is_disconnected(eval_points[0]):
            return [disconnected_type()]
        return [self(eval_points[0], *inputs[1:])]

    def __str__(self) -> str:
        return "PermuteAlongAxis"


def sort(
    a: Any, axis: Any = -1, kind: str | None = None, order: Any = None, *, stable: bool | None = None
) -> Variable:
    """A sorted copy of ``a`` along ``axis`` (None: of the flattened tensor).

    ``kind`` is one of ``quicksort`` (default), ``mergesort``, ``heapsort``, ``stable``;
    ``stable=True`` is the same as ``kind="stable"``. ``order`` exists for NumPy's
    signature and must be None.
    """
    kind = _parse_sort_args(kind, order, stable)
    a = as_tensor_variable(a)
    if axis is None:
        a, axis = flatten(a), 0
    return SortOp(kind)(a, axis)


def argsort(
    a: Any, axis: Any = -1, kind: str | None = None, order: Any = None, stable: bool | None = None
) -> Variable:
    """The int64 indices that would sort ``a`` along ``axis`` (None: the flattened tensor);
    ``kind``, ``order`` and ``stable`` as for :func:`sort`. A 0-d ``a`` gives ``[0]``, as
    in NumPy."""
    kind = _parse_sort_args(kind, order, stable)
    a = as_tensor_variable(a)
    if axis is None or (a.type.ndim == 0 and not isinstance(axis, Variable) and axis in (0, -1)):
        a, axis = flatten(a), 0
    return ArgSortOp(kind)(a, axis)


def permute_row_elements(x: Any, y: Any, inverse: bool = False) -> Variable:
    """``x`` with the elements of its last axis reordered by the permutation(s) ``y``:
    ``out[..., i] = x[..., y[..., i]]``; with ``inverse=True``, ``out[..., y[..., i]] =
    x[..., i]``. The leading axes of ``x`` and ``y`` broadcast together, so one permutation
    can reorder every row, or each row its own. ``y`` is assumed to be a permutation (not
    checked; an index out of range is an error)."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    y = _check_int(y, "permute_row_elements: y")
    for what, v in (("x", x), ("y", y)):
        if v.type.ndim == 0:
            raise TypeError(f"permute_row_elements: {what} must have at least one dimension, got {v.type}")
    x, y = _broadcast_together([x, y], "permute_row_elements")
    if inverse:
        y = argsort(y, axis=-1)
    return take_along_axis(x, y, axis=-1)


def inverse_permutation(perm: Any) -> Variable:
    """The inverse of the permutation(s) of ``range(n)`` along the last axis of ``perm``:
    ``out[..., perm[..., i]] = i``, in ``perm``'s dtype. ``perm`` is not checked to be a
    permutation."""
    perm = as_tensor_variable(perm)
    _check_int(perm, "inverse_permutation: perm")
    if perm.type.ndim == 0:
        raise TypeError(f"inverse_permutation: perm must have at least one dimension, got {perm.type}")
    return cast(argsort(perm, axis=-1), perm.type.dtype)
