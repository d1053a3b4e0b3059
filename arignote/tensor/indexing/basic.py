"""Indexing tensors: ``x[idx]`` with NumPy's semantics, ``inc_subtensor`` and ``set_subtensor``.

Basic indices (integers, slices, ``None``, ``...``) build a :class:`Subtensor` (a view;
the new axes are a ``DimShuffle`` after it); a single integer vector on the first axis
builds an :class:`AdvancedSubtensor1`; any other integer-array or boolean-mask index an
:class:`AdvancedSubtensor` (see :mod:`arignote.tensor.indexing.advanced`). Constant index
entries are kept in the Op's props (so equal indexings merge), symbolic ones are inputs.
Writing into a part of a tensor gives a new tensor: ``set_subtensor(x[idx], y)`` or
``x[idx].set(y)``, and ``inc_subtensor``/``.inc()`` to add.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dmatrix("x")
>>> i = pt.lscalar("i")
>>> y = x[i, 1:]
>>> y.owner.op, y.type
(Subtensor{i, 1:}, TensorType(float64, shape=(None,)))
>>> z = pt.set_subtensor(x[:, 0], 5.0)
>>> z.eval({x: np.zeros((2, 2))})
array([[5., 0.],
       [5., 0.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.tensor.alloc import broadcast_batch
from arignote.tensor.axes import squeeze
from arignote.tensor.conversion import (
    as_tensor_variable,
    register_constant_rule,
)
from arignote.tensor.elemwise import DimShuffle, normalize_axis
from arignote.tensor.indexing.advanced import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    advanced_getitem,
    take,
)
from arignote.tensor.indexing.index import (
    PicklableIndex,
    ReadsPart,
    WritesPart,
    batched_value,
    check_runtime_value,
    check_slice_entry,
    expand_ellipsis,
    idx_op_hash,
    idx_str,
    index_builder,
    index_error,
    is_advanced_entry,
    is_index_scalar,
    parse_index,
    placeholder_of,
    slice_at_axis,
    to_idx_list,
    value_like,
)
from arignote.tensor.shape import Shape, batch_length
from arignote.tensor.ufuncs import cast

__all__ = ["inc_subtensor", "set_subtensor", "take", "slice_at_axis", "flip"]


def _check_basic_idx_list(idx_list: Sequence[Any], what: str) -> tuple:
    """``idx_list`` of a basic-indexing Op: ints, 0-d integer placeholders, slices of those."""
    out = []
    for e in idx_list:
        if isinstance(e, slice):
            out.append(check_slice_entry(e, what))
        elif is_index_scalar(e):
            out.append(int(e) if isinstance(e, (int, np.integer)) else e)
        else:
            raise TypeError(
                f"{what}: basic index entries are ints, slices and 0-d integer TensorTypes, got {e!r} "
                "(arrays and masks need AdvancedSubtensor, new axes a DimShuffle)"
            )
    return tuple(out)


# --- Subtensor ----------------------------------------------------------------------------


class Subtensor(ReadsPart, PicklableIndex, Op):
    """Basic indexing ``x[i, a:b:c, ...]`` (a view of ``x``).

    ``idx_list`` holds one entry per indexed dimension: an int, a slice, or a 0-d integer
    TensorType standing for the next symbolic input. Dimensions beyond it are kept whole.

    >>> import arignote.tensor as pt
    >>> x = pt.tensor("x", dtype="float32", shape=(5, None))
    >>> x[::-2, 0].type
    TensorType(float32, shape=(3,))
    """

    __props__ = ("idx_list",)
    view_map = {0: [0]}

    def __init__(self, idx_list: Sequence[Any]):
        self.idx_list = _check_basic_idx_list(idx_list, "Subtensor")
        self._index = index_builder(self.idx_list)

    __hash__ = idx_op_hash

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, *vals = inputs
        try:
            out = x[self._index(vals)]
        except (IndexError, ValueError) as err:
            raise index_error(self, err, x) from None
        output_storage[0][0] = out if isinstance(out, np.ndarray) else np.asarray(out)

    def _inc_op(self) -> Op:
        return IncSubtensor(self.idx_list)

    def __str__(self) -> str:
        return f"Subtensor{{{idx_str(self.idx_list)}}}"


# --- IncSubtensor -------------------------------------------------------------------------


class IncSubtensor(WritesPart, PicklableIndex, Op):
    """``x`` with ``y`` added to (or, with ``set_instead_of_inc``, written into) the part
    ``x[idx]`` selected by a basic index; ``y`` broadcasts to that part's shape.

    The result is a new array unless ``inplace`` (then ``x``'s buffer is overwritten: see
    ``destroy_map``; no rewrite sets it on its own yet). ``destroyhandler_tolerate_aliased``
    is accepted for PyTensor compatibility and not used.
    """

    __props__ = ("idx_list", "inplace", "set_instead_of_inc")

    def __init__(
        self,
        idx_list: Sequence[Any],
        inplace: bool = False,
        set_instead_of_inc: bool = False,
        destroyhandler_tolerate_aliased: Any = None,
    ):
        self.idx_list = _check_basic_idx_list(idx_list, "IncSubtensor")
        self._index = index_builder(self.idx_list)
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    __hash__ = idx_op_hash

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y, *vals = inputs
        index = self._index(vals)
        try:
            target_shape = np.shape(x[index])
        except (IndexError, ValueError) as err:
            raise index_error(self, err, x) from None
        check_runtime_value(self, y, target_shape, node.inputs[1].type)
        out = x if self.inplace else x.copy()
        if self.set_instead_of_inc:
            out[index] = y
        else:
            out[index] += y
        output_storage[0][0] = out

    def _read_op(self) -> Op:
        return Subtensor(self.idx_list)

    def _keeps_last_write(self) -> bool:
        return False  # a basic index names each place at most once

    def __str__(self) -> str:
        name = "SetSubtensor" if self.set_instead_of_inc else "IncSubtensor"
        return f"{name}{{{idx_str(self.idx_list)}}}"


# --- building ------------------------------------------------------------------------------


def getitem(x: Any, index: Any) -> Variable:
    """``x[index]`` (what ``TensorVariable.__getitem__`` calls)."""
    x = as_tensor_variable(x)
    entries = parse_index(x, index)
    if any(map(is_advanced_entry, entries)):
        return advanced_getitem(x, entries)
    return _basic_getitem(x, entries)


def _basic_getitem(x: Variable, entries: list) -> Variable:
    written_slice = any(isinstance(e, slice) for e in entries)
    entries = expand_ellipsis(entries, x.type.ndim)
    core = [e for e in entries if e is not None]
    while core and isinstance(core[-1], slice) and core[-1] == slice(None):
        core.pop()  # trailing ``:`` change nothing; dropping them lets x[0] and x[0, :] merge
    if core:
        idx_list, inputs = to_idx_list(core)
        out = Subtensor(idx_list)(x, *inputs)
    elif written_slice and None not in entries:
        out = Subtensor((slice(None),))(x)  # x[:] is a node, as in PyTensor (a rewrite drops it)
    else:
        out = x  # x[()], x[...], or only new axes
    if None not in entries:
        return out
    order: list = []
    k = 0
    for e in entries:
        if e is None:
            order.append("x")
        elif isinstance(e, slice):
            order.append(k)
            k += 1
    order.extend(range(k, out.type.ndim))
    return DimShuffle(input_ndim=out.type.ndim, new_order=order)(out)


def basic_subtensor(x: Any, *index: Any) -> Variable:
    """``x[index]`` for a basic index (ints, slices, None, Ellipsis) only."""
    x = as_tensor_variable(x)
    entries = parse_index(x, tuple(index))
    if any(map(is_advanced_entry, entries)):
        raise TypeError(f"basic_subtensor: {index!r} holds an integer array or a boolean mask")
    return _basic_getitem(x, entries)


def _inc_name(set_instead_of_inc: bool) -> str:
    return "set_subtensor" if set_instead_of_inc else "inc_subtensor"


def _fit_value_dtype(x: Variable, y: Variable, set_instead_of_inc: bool) -> Variable:
    """``y`` cast to ``x``'s dtype where PyTensor's write converts it: a set writes any real
    value as NumPy's assignment does (0.7 into int8 is 0), an increment of integers by integers
    wraps around in ``x``'s dtype. Other kind changes are left to the Op, which refuses them
    (an int tensor plus a float one fails when PyTensor runs it)."""
    xd, yd = np.dtype(x.type.dtype), np.dtype(y.type.dtype)
    if xd == yd or np.can_cast(yd, xd, "same_kind"):
        return y
    if set_instead_of_inc:
        fits = not (yd.kind == "c" and xd.kind != "c")  # dropping an imaginary part loses data
    else:
        fits = yd.kind in "iu" and xd.kind in "iu"
    return cast(y, xd.name) if fits else y


def _undo_new_axes(x: Variable, y: Variable, what: str) -> tuple[Variable, Variable]:
    """For ``x`` = new axes added to an indexed tensor: that tensor, and ``y`` without the
    new axes (their length is 1, so ``y`` must have length 1 there too)."""
    op = x.owner.op
    if y.type.ndim < x.type.ndim:
        pad = x.type.ndim - y.type.ndim
        y = y.dimshuffle(["x"] * pad + list(range(y.type.ndim)))
    try:
        y = squeeze(y, op.augment)
    except ValueError as err:
        raise ValueError(f"{what}: the value does not fit the new axes of {x}: {err}") from None
    return x.owner.inputs[0], y


def inc_subtensor(
    x: Any,
    y: Any,
    inplace: bool = False,
    set_instead_of_inc: bool = False,
    tolerate_inplace_aliasing: bool = False,
    ignore_duplicates: bool = False,
) -> Variable:
    """The tensor indexed by ``x`` (which must be ``t[idx]``), with ``y`` added to that part.

    ``y`` broadcasts to the shape of ``x``; its dtype must fit ``t``'s without an upcast,
    except that an integer ``y`` is cast to an integer ``t``'s dtype (the sum wraps around, as
    PyTensor's). With ``set_instead_of_inc`` any real ``y`` is cast to ``t``'s dtype.
    Repeated integer indices accumulate (like ``numpy.add.at``) unless
    ``ignore_duplicates``, where the last write wins (faster). ``set_instead_of_inc``
    writes ``y`` instead (see :func:`set_subtensor`). The input is never modified: the
    result is a new array, unless ``inplace`` (an expert option: the Op then overwrites
    ``t``'s buffer). ``tolerate_inplace_aliasing`` is accepted for PyTensor compatibility
    and has no effect.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> v = pt.dvector("v")
    >>> pt.inc_subtensor(v[[0, 0, 2]], 1.0).eval({v: np.zeros(4)})
    array([2., 0., 1., 0.])
    """
    what = _inc_name(set_instead_of_inc)
    x = as_tensor_variable(x)
    y = _fit_value_dtype(x, value_like(x, y), set_instead_of_inc)
    node = x.owner
    if node is not None and isinstance(node.op, DimShuffle) and node.op.is_expand_dims:
        inner = node.inputs[0].owner
        if inner is not None and isinstance(inner.op, ReadsPart):
            x, y = _undo_new_axes(x, y, what)
            node = x.owner
    if node is None or not isinstance(node.op, ReadsPart):
        made_by = "an input of the graph" if node is None else f"computed by {node.op}"
        raise TypeError(
            f"{what}: x must be the result of indexing a tensor (t[idx]); got {x}, {made_by}. "
            f"Write {what}(t[idx], y)"
        )
    base = node.inputs[0]
    op = node.op
    if isinstance(op, Subtensor):
        return IncSubtensor(op.idx_list, inplace, set_instead_of_inc)(base, y, *node.inputs[1:])
    if isinstance(op, AdvancedSubtensor1) and (set_instead_of_inc or not ignore_duplicates):
        return AdvancedIncSubtensor1(inplace, set_instead_of_inc)(base, y, *node.inputs[1:])
    idx_list = op.idx_list if isinstance(op, AdvancedSubtensor) else (placeholder_of(node.inputs[1]),)
    return AdvancedIncSubtensor(idx_list, inplace, set_instead_of_inc, ignore_duplicates)(
        base, y, *node.inputs[1:]
    )


def set_subtensor(x: Any, y: Any, inplace: bool = False, tolerate_inplace_aliasing: bool = False) -> Variable:
    """The tensor indexed by ``x`` (which must be ``t[idx]``), with ``y`` written into that
    part (``y`` broadcasts to its shape). With repeated indices the last write wins.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> m = pt.dmatrix("m")
    >>> pt.set_subtensor(m[1, ::2], [7.0, 8.0]).eval({m: np.zeros((2, 3))})
    array([[0., 0., 0.],
           [7., 0., 8.]])
    """
    return inc_subtensor(
        x, y, inplace, set_instead_of_inc=True, tolerate_inplace_aliasing=tolerate_inplace_aliasing
    )


def flip(arr: Any, axis: int | Sequence[int] | None = None) -> Variable:
    """``numpy.flip``: ``arr`` reversed along ``axis`` (all axes when None), as a slicing.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> m = pt.dmatrix("m")
    >>> pt.flip(m, axis=1).eval({m: np.array([[1.0, 2.0, 3.0]])})
    array([[3., 2., 1.]])
    """
    arr = as_tensor_variable(arr)
    axes = range(arr.type.ndim) if axis is None else normalize_axis(axis, arr.type.ndim) or ()
    return arr[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(arr.type.ndim))]


# --- batching (the vectorised jacobian) ------------------------------------------------------


@register_batch_rule(Subtensor)
def _batch_subtensor(op: Subtensor, node: Apply, args: list, flags: list) -> list | None:
    if any(flags[1:]):
        return None  # a batched index: the Batched fallback
    return [(Subtensor((slice(None), *op.idx_list))(*args), True)]


@register_batch_rule(IncSubtensor)
def _batch_inc_subtensor(op: IncSubtensor, node: Apply, args: list, flags: list) -> list | None:
    x, y, *idx = args
    if any(flags[2:]):
        return None
    if not flags[0]:
        x = broadcast_batch(x, batch_length(y))
    core_ndim = node.outputs[0].type.ndim - sum(not isinstance(e, slice) for e in op.idx_list)
    y = batched_value(y, flags[1], core_ndim, 0)
    new = IncSubtensor((slice(None), *op.idx_list), set_instead_of_inc=op.set_instead_of_inc)
    return [(new(x, y, *idx), True)]


# --- what get_underlying_scalar_constant_value sees through ---------------------------------


@register_constant_rule(Subtensor)
def _constant_of_subtensor(op: Subtensor, node: Apply, look: Any) -> Any:
    """``x.shape[k]`` (a constant int index into a Shape) where ``x``'s length ``k`` is static."""
    if len(op.idx_list) != 1:
        return None
    (k,) = op.idx_list
    src = node.inputs[0].owner
    if not isinstance(k, (int, np.integer)) or src is None or not isinstance(src.op, Shape):
        return None
    shape = src.inputs[0].type.shape
    length = shape[k] if -len(shape) <= k < len(shape) else None
    return None if length is None else np.int64(length)
