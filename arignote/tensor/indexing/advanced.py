"""Integer-array and boolean-mask indexing: ``AdvancedSubtensor1`` (one integer vector on
the first axis), ``AdvancedSubtensor`` (any mixture, NumPy's rules), their increment/set
counterparts, and ``take``.

Repeated indices accumulate when incrementing (like ``numpy.add.at``), which is what the
gradient of an indexing needs: ``grad(x[[0, 0]].sum(), x)`` is 2 at position 0.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dmatrix("x")
>>> y = x[[0, 2]]
>>> y.owner.op, y.type
(AdvancedSubtensor1, TensorType(float64, shape=(2, None)))
>>> x[x > 1].eval({x: np.array([[1.0, 2.0], [3.0, 0.0]])})
array([2., 3.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.scalar.type import upcast
from arignote.tensor.alloc import alloc, broadcast_batch
from arignote.tensor.axes import expand_dims, moveaxis
from arignote.tensor.checks import check_values
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.indexing.index import (
    LazyText,
    PicklableIndex,
    ReadsPart,
    StaticLengths,
    WritesPart,
    advanced_dims_first,
    batched_value,
    check_inc_value,
    check_runtime_value,
    check_slice_entry,
    check_static_index,
    checked_part,
    idx_op_hash,
    idx_str,
    index_builder,
    index_error,
    indexed_shape,
    is_advanced_entry,
    is_index_scalar,
    is_mask,
    is_placeholder,
    parse_index,
    placeholder_of,
    to_idx_list,
    value_like,
)
from arignote.tensor.join import stack
from arignote.tensor.ranges import arange
from arignote.tensor.shape import batch_length, dim_length, flatten, shape_i
from arignote.tensor.shape_utils import broadcast_arrays
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import and_, cast, clip, ge, lt, mod

__all__ = [
    "AdvancedSubtensor1",
    "AdvancedIncSubtensor1",
    "AdvancedSubtensor",
    "AdvancedIncSubtensor",
    "advanced_subtensor1",
    "advanced_inc_subtensor1",
    "advanced_set_subtensor1",
    "advanced_subtensor",
    "advanced_inc_subtensor",
    "advanced_set_subtensor",
    "take",
    "take_along_axis",
    "choose",
]


def _row_index(op: Op, x: Variable, i: Any) -> Variable:
    """``i`` as the integer vector indexing the rows of ``x`` for ``op``, checked."""
    if x.type.ndim == 0:
        raise IndexError(f"{op}: cannot index the 0-d {x} with an integer vector")
    i = as_tensor_variable(i)
    if i.type.ndim != 1 or np.dtype(i.type.dtype).kind not in "iu":
        raise TypeError(f"{op}: the index must be an integer vector, got {i} of Type {i.type}")
    check_static_index(x.type.shape, [i], f"{op} of {x}")
    return i


# --- AdvancedSubtensor1 ----------------------------------------------------------------------


class AdvancedSubtensor1(ReadsPart, Op):
    """``x[i]`` for an integer vector ``i`` (the rows of ``x`` it names, repeats allowed)."""

    __props__ = ()

    def make_node(self, x: Any, ilist: Any) -> Apply:
        x = as_tensor_variable(x)
        ilist = _row_index(self, x, ilist)
        shape = (ilist.type.shape[0], *x.type.shape[1:])
        return Apply(self, [x, ilist], [TensorType(x.type.dtype, shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, i = inputs
        try:
            output_storage[0][0] = np.take(x, i, axis=0)  # NumPy names the bad index and the length
        except IndexError as err:
            raise index_error(self, err, x) from None

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [(shapes[1][0], *shapes[0][1:])]

    def _inc_op(self) -> Op:
        return AdvancedIncSubtensor1()


advanced_subtensor1 = AdvancedSubtensor1()


class AdvancedIncSubtensor1(WritesPart, Op):
    """``x`` with ``y`` added to (or written into) the rows ``x[i]`` for an integer vector
    ``i``; repeated rows accumulate every increment (``numpy.add.at``)."""

    __props__ = ("inplace", "set_instead_of_inc")

    def __init__(self, inplace: bool = False, set_instead_of_inc: bool = False):
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def make_node(self, x: Any, y: Any, ilist: Any) -> Apply:
        x = as_tensor_variable(x)
        y = as_tensor_variable(y)
        ilist = _row_index(self, x, ilist)
        check_inc_value(x, y, (ilist.type.shape[0], *x.type.shape[1:]), LazyText(lambda: str(self)))
        return Apply(self, [x, y, ilist], [TensorType(x.type.dtype, x.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y, i = inputs
        check_runtime_value(self, y, (len(i), *x.shape[1:]), node.inputs[1].type)
        out = x if self.inplace else x.copy()
        try:
            if self.set_instead_of_inc:
                out[i] = y
            else:
                np.add.at(out, i, np.asarray(y, dtype=out.dtype))
        except IndexError as err:
            raise index_error(self, err, x) from None
        output_storage[0][0] = out

    def _read_op(self) -> Op:
        return advanced_subtensor1

    def __str__(self) -> str:
        return "AdvancedSetSubtensor1" if self.set_instead_of_inc else "AdvancedIncSubtensor1"


advanced_inc_subtensor1 = AdvancedIncSubtensor1()
advanced_set_subtensor1 = AdvancedIncSubtensor1(set_instead_of_inc=True)


# --- AdvancedSubtensor -----------------------------------------------------------------------


def _check_advanced_idx_list(idx_list: Sequence[Any], what: str) -> tuple:
    """Entries of an advanced index: ints, slices (int/placeholder/None parts), None,
    Ellipsis and placeholders (0-d integers, integer arrays, boolean masks)."""
    out = []
    for e in idx_list:
        if isinstance(e, slice):
            out.append(check_slice_entry(e, what))
        elif e is None or e is Ellipsis or is_placeholder(e):
            if is_placeholder(e) and np.dtype(e.dtype).kind not in "biu":
                raise TypeError(f"{what}: index entries must be integer or boolean, got {e}")
            out.append(e)
        elif is_index_scalar(e):
            out.append(int(e))
        else:
            raise TypeError(
                f"{what}: invalid index entry {e!r}: expected an int, a slice, None, Ellipsis or an "
                "integer or boolean TensorType"
            )
    if sum(e is Ellipsis for e in out) > 1:
        raise IndexError(f"{what}: an index can only have a single ellipsis ('...')")
    return tuple(out)


class AdvancedSubtensor(ReadsPart, PicklableIndex, Op):
    """``x[idx]`` for an index holding integer arrays or boolean masks (mixed with ints,
    slices, new axes and an Ellipsis), with NumPy's rules for where the dimensions of
    the advanced indices go. The index arrays are inputs; ints and slices with constant
    parts stay in ``idx_list``."""

    __props__ = ("idx_list",)

    def __init__(self, idx_list: Sequence[Any]):
        self.idx_list = _check_advanced_idx_list(idx_list, "AdvancedSubtensor")
        self._index = index_builder(self.idx_list)
        # NumPy returns a view for an index without arrays or masks: copy it then (no view_map)
        self._gives_view = not any(map(is_advanced_entry, self.idx_list))

    __hash__ = idx_op_hash

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, *vals = inputs
        try:
            out = x[self._index(vals)]
        except (IndexError, ValueError) as err:
            raise index_error(self, err, x) from None
        output_storage[0][0] = np.array(out) if self._gives_view else np.asarray(out)

    def _inc_op(self) -> Op:
        return AdvancedIncSubtensor(self.idx_list)

    def __str__(self) -> str:
        return f"AdvancedSubtensor{{{idx_str(self.idx_list)}}}"


class AdvancedIncSubtensor(WritesPart, PicklableIndex, Op):
    """``x`` with ``y`` added to (or written into) ``x[idx]`` for an advanced index.

    Repeated positions accumulate every increment (``numpy.add.at``) unless
    ``ignore_duplicates`` (then ``x[idx] += y``: the last write wins, faster).
    """

    __props__ = ("idx_list", "inplace", "set_instead_of_inc", "ignore_duplicates")

    def __init__(
        self,
        idx_list: Sequence[Any],
        inplace: bool = False,
        set_instead_of_inc: bool = False,
        ignore_duplicates: bool = False,
    ):
        self.idx_list = _check_advanced_idx_list(idx_list, "AdvancedIncSubtensor")
        self._index = index_builder(self.idx_list)
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.ignore_duplicates = bool(ignore_duplicates)
        self.destroy_map = {0: [0]} if self.inplace else {}

    __hash__ = idx_op_hash

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y, *vals = inputs
        index = self._index(vals)
        try:
            target = indexed_shape(
                x.shape, self.idx_list, vals, [np.shape(v) for v in vals], StaticLengths(), str(self)
            )
        except IndexError as err:
            raise index_error(self, err, x) from None
        check_runtime_value(self, y, target, node.inputs[1].type)
        out = x if self.inplace else x.copy()
        try:
            if self.set_instead_of_inc:
                out[index] = y
            elif self.ignore_duplicates:
                out[index] += y
            else:
                np.add.at(out, index, np.asarray(y, dtype=out.dtype))
        except (IndexError, ValueError) as err:
            raise index_error(self, err, x) from None
        output_storage[0][0] = out

    def _read_op(self) -> Op:
        return AdvancedSubtensor(self.idx_list)

    def _keeps_last_write(self) -> bool:
        return self.set_instead_of_inc or self.ignore_duplicates  # both: the last write to a place wins

    def __str__(self) -> str:
        name = "AdvancedSetSubtensor" if self.set_instead_of_inc else "AdvancedIncSubtensor"
        return f"{name}{{{idx_str(self.idx_list)}}}"


# --- building ------------------------------------------------------------------------------


def _is_colon(e: Any) -> bool:
    return isinstance(e, slice) and e == slice(None)


def advanced_getitem(x: Variable, entries: list) -> Variable:
    """``x[index]`` for parsed entries holding an integer array or a boolean mask."""
    while len(entries) > 1 and (entries[-1] is Ellipsis or _is_colon(entries[-1])):
        entries = entries[:-1]  # trailing ``:`` and ``...`` keep the dimensions as they are
    first = entries[0]
    if len(entries) == 1 and isinstance(first, Variable) and not is_mask(first) and first.type.ndim == 1:
        return advanced_subtensor1(x, first)
    idx_list, inputs = to_idx_list(entries)
    return AdvancedSubtensor(idx_list)(x, *inputs)


def advanced_subtensor(x: Any, *index_variables: Any) -> Variable:
    """``x[index_variables]`` as one :class:`AdvancedSubtensor` node (whatever the index)."""
    x = as_tensor_variable(x)
    idx_list, inputs = to_idx_list(parse_index(x, tuple(index_variables)))
    return AdvancedSubtensor(idx_list)(x, *inputs)


def _advanced_inc(x: Any, y: Any, index: Sequence[Any], set_instead_of_inc: bool, **kwargs: Any) -> Variable:
    x = as_tensor_variable(x)
    idx_list, inputs = to_idx_list(parse_index(x, tuple(index)))
    op = AdvancedIncSubtensor(idx_list, set_instead_of_inc=set_instead_of_inc, **kwargs)
    return op(x, value_like(x, y), *inputs)


def advanced_inc_subtensor(x: Any, y: Any, *args: Any, **kwargs: Any) -> Variable:
    """``x`` with ``y`` added at ``x[args]`` (an :class:`AdvancedIncSubtensor`)."""
    return _advanced_inc(x, y, args, False, **kwargs)


def advanced_set_subtensor(x: Any, y: Any, *args: Any, **kwargs: Any) -> Variable:
    """``x`` with ``y`` written at ``x[args]`` (an :class:`AdvancedIncSubtensor`)."""
    return _advanced_inc(x, y, args, True, **kwargs)


def take(a: Any, indices: Any, axis: int | None = None, mode: str = "raise") -> Variable:
    """``numpy.take``: the elements of ``a`` at ``indices`` along ``axis`` (of the
    flattened ``a`` when ``axis`` is None); the result has ``indices``' shape in place of
    that axis. ``mode``: ``"raise"`` (an out-of-bounds index is an error), ``"wrap"``
    (indices taken modulo the length) or ``"clip"`` (clipped to the valid range).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a = pt.dmatrix("a")
    >>> pt.take(a, [[0, 2]], axis=1).eval({a: np.arange(6.0).reshape(2, 3)}).shape
    (2, 1, 2)
    """
    from arignote.tensor.indexing.basic import getitem
    from arignote.tensor.ufuncs import clip, mod

    a = as_tensor_variable(a)
    indices = as_tensor_variable(indices)
    if np.dtype(indices.type.dtype).kind not in "biu":
        raise TypeError(f"take: indices must be integers, got {indices} of Type {indices.type}")
    if indices.type.dtype == "bool":
        indices = indices.astype("int64")  # as numpy.take does: True/False are 1/0
    if axis is None:
        a, axis = a.flatten(), 0
    elif a.type.ndim == 0:
        raise np.exceptions.AxisError(f"take: axis {axis} is out of bounds for the 0-d {a}")
    else:
        axis = normalize_axis(axis, a.type.ndim)[0]  # type: ignore[index]
    if mode in ("wrap", "clip"):
        indices = indices.astype("int64")  # uint64 mixed with int64 lengths would give floats
    if mode == "wrap":
        indices = mod(indices, shape_i(a, axis))
    elif mode == "clip":
        indices = clip(indices, 0, shape_i(a, axis) - 1)
    elif mode != "raise":
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if axis == 0 and indices.type.ndim == 1:
        return advanced_subtensor1(a, indices)
    return getitem(a, (*([slice(None)] * axis), indices))


# --- batching (the vectorised jacobian) ------------------------------------------------------


def _adv_ndim(idx_list: Sequence[Any]) -> int:
    """The number of dimensions of the broadcast advanced indices."""
    nds = [1 if is_mask(e) else e.ndim for e in idx_list if is_placeholder(e)]
    return max(nds, default=0)


def _batch_position(idx_list: Sequence[Any]) -> int:
    """Where the batch dimension lands in ``x[(:, *idx_list)]``."""
    return _adv_ndim(idx_list) if advanced_dims_first(idx_list) else 0


@register_batch_rule(AdvancedSubtensor1)
def _batch_advanced_subtensor1(op: Op, node: Apply, args: list, flags: list) -> list:
    from arignote.tensor.ranges import arange

    x, i = args
    if flags[0] and not flags[1]:
        return [(AdvancedSubtensor((slice(None), placeholder_of(i)))(x, i), True)]
    if not flags[0]:  # rows of indices into one x
        return [(AdvancedSubtensor((placeholder_of(i),))(x, i), True)]
    rows = arange(batch_length(x)).dimshuffle(0, "x")
    return [(AdvancedSubtensor((placeholder_of(rows), placeholder_of(i)))(x, rows, i), True)]


@register_batch_rule(AdvancedIncSubtensor1)
def _batch_advanced_inc_subtensor1(op: Op, node: Apply, args: list, flags: list) -> list | None:
    x, y, i = args
    if flags[2]:
        return None
    if not flags[0]:
        x = broadcast_batch(x, batch_length(y))
    y = batched_value(y, flags[1], node.inputs[0].type.ndim, 0)
    new = AdvancedIncSubtensor((slice(None), placeholder_of(i)), set_instead_of_inc=op.set_instead_of_inc)
    return [(new(x, y, i), True)]


@register_batch_rule(AdvancedSubtensor)
def _batch_advanced_subtensor(op: Op, node: Apply, args: list, flags: list) -> list | None:
    if any(flags[1:]):
        return None
    idx_list = (slice(None), *op.idx_list)
    out = AdvancedSubtensor(idx_list)(*args)
    return [(moveaxis(out, _batch_position(idx_list), 0), True)]


@register_batch_rule(AdvancedIncSubtensor)
def _batch_advanced_inc_subtensor(op: Op, node: Apply, args: list, flags: list) -> list | None:
    x, y, *idx = args
    if any(flags[2:]):
        return None
    if not flags[0]:
        x = broadcast_batch(x, batch_length(y))
    idx_list = (slice(None), *op.idx_list)
    core_ndim = len(checked_part(op, node.inputs[0], node.inputs[2:])[1])
    y = batched_value(y, flags[1], core_ndim, _batch_position(idx_list))
    new = AdvancedIncSubtensor(
        idx_list, set_instead_of_inc=op.set_instead_of_inc, ignore_duplicates=op.ignore_duplicates
    )
    return [(new(x, y, *idx), True)]


def _check_int(v: Variable, what: str) -> Variable:
    if np.dtype(v.type.dtype).kind not in "biu":
        raise TypeError(f"{what} must be integers, got {v} of Type {v.type}")
    return cast(v, "int64") if v.type.dtype == "bool" else v


def _broadcast_together(tensors: Sequence[Variable], what: str) -> list[Variable]:
    """The tensors broadcast to their common shape (:func:`broadcast_arrays`), or a
    ValueError naming ``what`` and the shapes."""
    try:
        return list(broadcast_arrays(*tensors))
    except ValueError:
        shapes = ", ".join(str(t.type.shape) for t in tensors)
        raise ValueError(f"{what}: shapes {shapes} cannot be broadcast together") from None


def take_along_axis(arr: Any, indices: Any, axis: int | None = 0) -> Variable:
    """``numpy.take_along_axis``: ``out[..., j, ...] = arr[..., indices[..., j, ...], ...]``
    along ``axis``; ``indices`` has ``arr``'s number of dimensions and the other axes
    broadcast. ``axis=None`` works on the flattened ``arr`` (``indices`` a vector).
    Negative indices count from the end.
    """
    arr, indices = as_tensor_variable(arr), as_tensor_variable(indices)
    indices = _check_int(indices, "take_along_axis: indices")
    if axis is None:
        arr, axis = flatten(arr), 0
    if arr.type.ndim != indices.type.ndim:
        raise ValueError(
            f"take_along_axis: indices ({indices.type}) must have as many dimensions as arr ({arr.type})"
        )
    (axis,) = normalize_axis(axis, arr.type.ndim, "take_along_axis: axis")  # type: ignore[misc]
    ndim = arr.type.ndim
    index: list[Any] = []
    for d in range(ndim):
        if d == axis:
            index.append(indices)
        else:  # the position along d itself, shaped to broadcast along d only
            others = tuple(k for k in range(ndim) if k != d)
            index.append(expand_dims(arange(dim_length(arr, d)), others))
    return arr[tuple(index)]


def choose(a: Any, choices: Any, mode: str = "raise") -> Variable:
    """``numpy.choose``: for every element of the integer tensor ``a``, the element at the
    same place of ``choices[a]``. ``choices`` is a sequence of tensors or one tensor whose
    first axis lists them; ``a`` and the choices broadcast together.

    ``mode``: ``"raise"`` (an index outside ``[0, n)`` is an error at run time), ``"wrap"``
    (taken modulo ``n``) or ``"clip"`` (clipped to ``[0, n - 1]``).
    """
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    a = _check_int(as_tensor_variable(a), "choose: a")
    if isinstance(choices, (list, tuple)):
        if not choices:
            raise ValueError("choose: choices is empty")
        items = [as_tensor_variable(c) for c in choices]
        dtype = upcast(*(c.type.dtype for c in items))
        a, *items = _broadcast_together([a, *(cast(c, dtype) for c in items)], "choose")
        stacked = stack(items)
        n: Any = len(items)
    else:
        stacked = as_tensor_variable(choices)
        if stacked.type.ndim == 0:
            raise ValueError(
                f"choose: choices must list the choices along its first axis, got the 0-d {stacked}"
            )
        n = dim_length(stacked, 0)
        probe = stacked[0]  # the shape of one choice, broadcast with a's
        a, _ = _broadcast_together([a, probe], "choose")
        stacked = alloc(stacked, n, *(dim_length(a, d) for d in range(a.type.ndim)))
    a = cast(a, "int64")
    if mode == "wrap":
        a = mod(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        a = check_values(a, and_(ge(a, 0), lt(a, n)), "choose: an index is outside [0, len(choices))")
    return take_along_axis(stacked, expand_dims(a, 0), axis=0)[0]
