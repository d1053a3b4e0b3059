"""Searching and counting: ``nonzero``/``flatnonzero``/``nonzero_values``,
``searchsorted``, ``compress``, ``bincount`` and ``unique``. PyTensor's path for them is
:mod:`arignote.tensor.extra_ops` (``nonzero`` also :mod:`arignote.tensor.basic`).

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> pt.searchsorted(x, [0.5, 2.5]).eval({x: np.array([0.0, 1.0, 2.0, 3.0])})
array([1, 3])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.tensor.alloc import zeros_like
from arignote.tensor.axes import expand_dims, moveaxis
from arignote.tensor.checks import _is_int
from arignote.tensor.conversion import as_tensor_variable, constant
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.indexing.advanced import take
from arignote.tensor.indexing.basic import inc_subtensor
from arignote.tensor.join import concatenate, stack
from arignote.tensor.ranges import arange
from arignote.tensor.reductions import max as tensor_max
from arignote.tensor.reductions import sum as tensor_sum
from arignote.tensor.shape import _grad_like, _zero_grad, flatten, reshape, shape, shape_i
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast, maximum, neq

__all__ = [
    "Bincount",
    "Nonzero",
    "SearchsortedOp",
    "Unique",
    "bincount",
    "compress",
    "flatnonzero",
    "nonzero",
    "nonzero_values",
    "searchsorted",
    "unique",
]


class SearchsortedOp(Op):
    """``numpy.searchsorted(x, v, side, sorter)``: where the elements of ``v`` would go in
    the sorted vector ``x`` (int64, shaped like ``v``). ``sorter`` (optional) holds the
    indices that sort ``x``."""

    __props__ = ("side",)

    def __init__(self, side: str = "left"):
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        self.side = side

    def make_node(self, x: Any, v: Any, sorter: Any = None) -> Apply:
        x, v = as_tensor_variable(x), as_tensor_variable(v)
        if x.type.ndim != 1:
            raise TypeError(f"{self}: x must be a vector (1-d), got {x} of Type {x.type}")
        inputs = [x, v]
        if sorter is not None:
            sorter = as_tensor_variable(sorter)
            if sorter.type.ndim != 1 or not _is_int(sorter):
                raise TypeError(
                    f"{self}: sorter must be an integer vector, got {sorter} of Type {sorter.type}"
                )
            inputs.append(sorter)
        return Apply(self, inputs, [TensorType("int64", v.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, v, *rest = inputs
        sorter = rest[0] if rest else None
        if sorter is not None:
            if sorter.shape != x.shape:
                raise ValueError(f"{self}: sorter has length {sorter.shape[0]}, x has length {x.shape[0]}")
            if sorter.size and (sorter.min() < 0 or sorter.max() >= x.shape[0]):
                raise ValueError(f"{self}: sorter holds an index out of range for x of length {x.shape[0]}")
        out = np.searchsorted(x, v, side=self.side, sorter=sorter)
        output_storage[0][0] = np.asarray(out, dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[1]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [True], [False]][: len(node.inputs)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Zero for ``x`` and ``v``: the positions are a step function of them. The sorter
        is disconnected."""
        return [_zero_grad(inputs[0]), _zero_grad(inputs[1])] + [disconnected_type()] * (len(inputs) - 2)

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]  # integer positions do not move

    def __str__(self) -> str:
        return f"SearchsortedOp{{side={self.side}}}"


@register_batch_rule(SearchsortedOp)
def _batch_searchsorted(op: SearchsortedOp, node: Apply, args: list, flags: list) -> list | None:
    if flags[0] or (len(flags) > 2 and flags[2]):
        return None  # a batch of sorted vectors: looped over (Batched)
    return [(op(*args), True)]  # a batch of queries is just more queries


def searchsorted(x: Any, v: Any, side: str = "left", sorter: Any = None) -> Variable:
    """Indices where the elements of ``v`` would be inserted into the sorted vector ``x``
    to keep it sorted (``numpy.searchsorted``).

    ``side="left"`` gives the first suitable index, ``"right"`` the last; ``sorter`` is an
    optional integer vector of indices that sort ``x`` (``argsort(x)``). The result is
    int64 with ``v``'s shape.
    """
    return SearchsortedOp(side)(x, v, sorter)


class Unique(Op):
    """``numpy.unique``: the sorted distinct values of ``x`` (distinct slices along ``axis``
    when it is given), and optionally the index of each one's first occurrence, the
    inverse (for every element, or slice, the position of its value in the result) and
    the counts. The integer outputs are int64; with ``axis=None`` the inverse is a vector
    over the flattened ``x`` (as PyTensor's). NaNs count as one value.

    The distinct values are differentiable: each takes the gradient of its first
    occurrence in ``x``.
    """

    __props__ = ("return_index", "return_inverse", "return_counts", "axis")

    def __init__(
        self,
        return_index: bool = False,
        return_inverse: bool = False,
        return_counts: bool = False,
        axis: int | None = None,
    ):
        self.return_index = bool(return_index)
        self.return_inverse = bool(return_inverse)
        self.return_counts = bool(return_counts)
        if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
            raise TypeError(f"Unique: axis must be None or an int, got {axis!r}")
        self.axis = None if axis is None else int(axis)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.axis is not None:
            (axis,) = normalize_axis(self.axis, x.type.ndim, f"{self}: axis")  # type: ignore[misc]
            if axis != self.axis:  # the node's Op has the axis resolved
                return type(self)(self.return_index, self.return_inverse, self.return_counts, axis).make_node(
                    x
                )
        int_vec = TensorType("int64", (None,))
        if self.axis is None:
            values = TensorType(x.type.dtype, (None,))()
            size = None if None in x.type.shape else int(np.prod(x.type.shape, dtype=np.int64))
            inverse = TensorType("int64", (size,))()
        else:
            shape = tuple(None if d == self.axis else s for d, s in enumerate(x.type.shape))
            values = TensorType(x.type.dtype, shape)()
            inverse = TensorType("int64", (x.type.shape[self.axis],))()
        outputs = [values]
        outputs += [int_vec()] if self.return_index else []
        outputs += [inverse] if self.return_inverse else []
        outputs += [int_vec()] if self.return_counts else []
        return Apply(self, [x], outputs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        res = np.unique(
            x,
            return_index=self.return_index,
            return_inverse=self.return_inverse,
            return_counts=self.return_counts,
            axis=self.axis,
        )
        res = res if isinstance(res, tuple) else (res,)
        for k, (cell, value, out) in enumerate(zip(output_storage, res, node.outputs)):
            value = np.asarray(value, dtype=out.type.dtype)
            if k > 0:
                value = value.reshape(-1)  # NumPy 2 shapes the inverse like x when axis is None
            cell[0] = value

    def _count(self, node: Apply) -> Any:
        """The number of distinct values: only known once the node has run."""
        return shape_i(node.outputs[0], 0 if self.axis is None else self.axis)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        (xshape,) = shapes
        count = self._count(node)
        if self.axis is None:
            size: Any = 1
            for s in xshape:
                size = size * s
            out = [(count,)]
            inverse = (size,)
        else:
            out = [tuple(count if d == self.axis else s for d, s in enumerate(xshape))]
            inverse = (xshape[self.axis],)
        out += [(count,)] if self.return_index else []
        out += [inverse] if self.return_inverse else []
        out += [(count,)] if self.return_counts else []
        return out

    def _first_index(self, x: Variable) -> Variable:
        return Unique(True, False, False, self.axis)(x)[1]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Each distinct value's cotangent goes to its first occurrence in ``x`` (a
        subgradient where values tie); the integer outputs carry none."""
        (x,) = inputs
        g = output_grads[0]
        if _is_int(x, bool_ok=True) or is_disconnected(g):
            return [_zero_grad(x)]
        index = self._first_index(x)
        if self.axis is None:
            gx = inc_subtensor(zeros_like(flatten(x))[index], g)
            return [_grad_like(reshape(gx, shape(x)), x)]
        moved = moveaxis(zeros_like(x), self.axis, 0)
        gx = inc_subtensor(moved[index], moveaxis(g, self.axis, 0))
        return [_grad_like(moveaxis(gx, 0, self.axis), x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """The values move with the first occurrences: ``v`` gathered at their indices."""
        (x,) = inputs
        (v,) = eval_points
        rest = [disconnected_type()] * (len(outputs) - 1)
        if is_disconnected(v) or _is_int(x, bool_ok=True):
            return [disconnected_type(), *rest]
        index = self._first_index(x)
        if self.axis is None:
            return [flatten(v)[index], *rest]
        return [take(v, index, axis=self.axis), *rest]

    def __str__(self) -> str:
        flags = [n for n in ("return_index", "return_inverse", "return_counts") if getattr(self, n)]
        return f"Unique{{{', '.join([*flags, f'axis={self.axis}'])}}}"


def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
) -> Any:
    """The sorted distinct elements of ``ar`` (``numpy.unique``), of the flattened tensor
    or, with ``axis``, the distinct slices along it.

    With any of ``return_index`` (first occurrences), ``return_inverse`` (how to rebuild
    ``ar`` from the result; a vector over the flattened ``ar`` when ``axis`` is None) and
    ``return_counts``, a list ``[values, *requested]`` in that order.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.lvector("x")
    >>> u, counts = pt.unique(x, return_counts=True)
    >>> u.eval({x: np.array([3, 1, 3])}), counts.eval({x: np.array([3, 1, 3])})
    (array([1, 3]), array([1, 2]))
    """
    ar = as_tensor_variable(ar)
    if axis is not None:
        (axis,) = normalize_axis(axis, ar.type.ndim, "unique: axis")  # type: ignore[misc]
    outs = Unique(return_index, return_inverse, return_counts, axis)(ar, return_list=True)
    return outs[0] if len(outs) == 1 else outs


class Bincount(Op):
    """``numpy.bincount(x, weights, minlength)``: how often each value ``0..max(x)`` occurs
    in the non-negative integer vector ``x`` (int64), or the sum of the ``weights`` at its
    occurrences (in the weights' dtype). The inputs are ``x``, ``minlength`` (an integer
    scalar, the least output length) and optionally ``weights``."""

    __props__ = ()

    def make_node(self, x: Any, minlength: Any = 0, weights: Any = None) -> Apply:
        x, minlength = as_tensor_variable(x), as_tensor_variable(minlength)
        if x.type.ndim != 1 or not _is_int(x, bool_ok=True):
            raise TypeError(f"bincount: x must be a vector of integers, got {x} of Type {x.type}")
        if minlength.type.ndim != 0 or not _is_int(minlength):
            raise TypeError(
                f"bincount: minlength must be an integer scalar, got {minlength} of Type {minlength.type}"
            )
        if isinstance(minlength, Constant) and minlength.data < 0:
            raise ValueError(f"bincount: minlength must not be negative, got {minlength.data}")
        inputs, dtype = [x, minlength], "int64"
        if weights is not None:
            weights = as_tensor_variable(weights)
            if weights.type.ndim != 1 or np.dtype(weights.type.dtype).kind not in "biuf":
                raise TypeError(
                    f"bincount: weights must be a vector of real numbers, got {weights} of Type {weights.type}"
                )
            dtype = "int64" if weights.type.dtype == "bool" else weights.type.dtype
            inputs.append(weights)
        return Apply(self, inputs, [TensorType(dtype, (None,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, minlength, *rest = inputs
        weights = rest[0] if rest else None
        if minlength < 0:
            raise ValueError(f"bincount: minlength must not be negative, got {int(minlength)}")
        if x.size and x.min() < 0:
            i = int(np.argmin(x))
            raise ValueError(f"bincount: x must be non-negative; got {x[i]} at index {i}")
        if weights is not None and weights.shape != x.shape:
            raise ValueError(f"bincount: weights have length {weights.shape[0]}, x has length {x.shape[0]}")
        out = np.bincount(x.astype("int64", copy=False), weights, minlength=int(minlength))
        output_storage[0][0] = out.astype(node.outputs[0].type.dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [(_bincount_length(*node.inputs[:2]),)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], [False], [True]][: len(node.inputs)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``weights[i]`` lands in bin ``x[i]``: its gradient is ``g[x[i]]``. ``x`` and
        ``minlength`` only place the values (disconnected)."""
        grads = [disconnected_type(), disconnected_type()]
        if len(inputs) == 3:
            x, _, w = inputs
            g = output_grads[0]
            if _is_int(w, bool_ok=True) or is_disconnected(g):
                grads.append(_zero_grad(w))
            else:
                grads.append(_grad_like(take(g, x), w))
        return grads

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """Linear in the weights: the bincount of their tangent."""
        if len(inputs) < 3 or is_disconnected(eval_points[2]) or _is_int(inputs[2], bool_ok=True):
            return [disconnected_type()]
        return [self(inputs[0], inputs[1], eval_points[2])]


def _bincount_length(x: Variable, minlength: Variable) -> Variable:
    """``max(max(x) + 1, minlength)``, also for an empty ``x``."""
    top = tensor_max(concatenate([cast(x, "int64"), constant(np.array([-1], dtype="int64"))]))
    return maximum(top + 1, cast(minlength, "int64"))


@register_batch_rule(Bincount)
def _batch_bincount(op: Bincount, node: Apply, args: list, flags: list) -> list | None:
    """A batch of weights for the same ``x``: one bincount with row ``b``'s values shifted
    to the bins ``b * L ...`` (``L`` the output length), cut back into rows."""
    if flags[0] or flags[1] or len(args) < 3:
        return None  # the lengths could differ from row to row: looped over (Batched)
    x, minlength, w = args
    length = _bincount_length(x, minlength)
    rows = shape_i(w, 0)
    shifted = expand_dims(cast(x, "int64"), 0) + expand_dims(arange(rows) * length, 1)
    flat = op(flatten(shifted), rows * length, flatten(w))
    return [(reshape(flat, (rows, length)), True)]


def bincount(x: Any, weights: Any = None, minlength: Any = None, assert_nonneg: bool = False) -> Variable:
    """Occurrences of each value ``0..max(x)`` in the non-negative integer vector ``x``
    (``numpy.bincount``), or with ``weights`` (a vector like ``x``) the sum of the weights
    at each value's occurrences. The result has length ``max(max(x) + 1, minlength)``.

    Counts are int64 (as NumPy's); weighted sums keep the weights' dtype (as PyTensor's).
    Negative values are always an error at run time, as in NumPy; ``assert_nonneg`` is
    accepted for PyTensor's signature and changes nothing.
    """
    return Bincount()(x, 0 if minlength is None else minlength, weights)


def compress(condition: Any, x: Any, axis: int | None = None) -> Variable:
    """The slices of ``x`` along ``axis`` (elements of the flattened ``x`` if None) where
    the vector ``condition`` is true (``numpy.compress``). A ``condition`` shorter than
    the axis leaves out the slices past its end."""
    condition = as_tensor_variable(condition)
    if condition.type.ndim != 1:
        raise ValueError(f"compress: condition must be a vector, got {condition} of Type {condition.type}")
    return take(x, flatnonzero(condition), axis=axis)


def nonzero_values(a: Any) -> Variable:
    """The nonzero elements of ``a``, in the order of the flattened ``a``
    (``a.flatten()[flatnonzero(a)]``)."""
    a = as_tensor_variable(a)
    return flatten(a)[flatnonzero(a)]


class Nonzero(Op):
    """The indices of the nonzero elements: one int64 vector per input dimension, as
    ``numpy.nonzero`` returns them (NaN counts as nonzero). 0-d inputs are an error."""

    __props__ = ()

    def make_node(self, a: Any) -> Apply:
        a = as_tensor_variable(a)
        if a.type.ndim == 0:
            raise ValueError(f"Nonzero: input {a} is 0-d ({a.type}); only tensors of 1 or more dimensions")
        return Apply(self, [a], [TensorType("int64", (None,))() for _ in range(a.type.ndim)])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        for cell, idx in zip(output_storage, np.nonzero(inputs[0])):
            cell[0] = idx.astype("int64", copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        count = tensor_sum(neq(node.inputs[0], 0), dtype="int64")
        return [(count,)] * len(node.outputs)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False] * len(node.outputs)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """No gradient: the outputs are positions, not values of the input."""
        return [disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type() for _ in outputs]


_nonzero = Nonzero()


def nonzero(a: Any, return_matrix: bool = False) -> tuple[Variable, ...] | Variable:
    """The indices of the nonzero elements of ``a``.

    By default a tuple of int64 vectors, one per dimension (``numpy.nonzero``); with
    ``return_matrix=True`` a ``(ndim, count)`` matrix of them.
    """
    res = _nonzero(a, return_list=True)
    if not return_matrix:
        return tuple(res)
    if len(res) == 1:
        return expand_dims(res[0], 0)
    return stack(res)


def flatnonzero(a: Any) -> Variable:
    """The indices of the nonzero elements of ``a`` flattened (``numpy.flatnonzero``)."""
    a = as_tensor_variable(a)
    if a.type.ndim == 0:
        raise ValueError(f"flatnonzero: input {a} is 0-d ({a.type}); only tensors of 1 or more dimensions")
    return _nonzero(flatten(a), return_list=True)[0]
