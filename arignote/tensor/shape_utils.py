"""Shape utilities: adding dimensions (``atleast_Nd``, ``shape_padleft``/``right``/``axis``,
``specify_broadcastable``), broadcasting (``broadcast_shape``, ``broadcast_to``,
``broadcast_arrays``, ``concat_with_broadcast``), merging and splitting dimensions
(``join_dims``, ``split_dims``), ``roll``, ``empty``/``empty_like``, and static facts about
a Variable (``get_vector_length``, ``get_scalar_constant_value``).

Everything here is built from existing Ops (DimShuffle, SpecifyShape, Alloc, Reshape,
Join, Subtensor), so gradients, shape inference and batching come from them.

Broadcasting follows the Type rule of :class:`~arignote.tensor.elemwise.Elemwise`: a
length broadcasts only where it is statically 1; lengths not known statically must be
equal, which the Ops using them (Alloc, Elemwise) check at run time.

>>> import arignote.tensor as pt
>>> x = pt.tensor("x", dtype="float64", shape=(3, 1))
>>> y = pt.tensor("y", dtype="float64", shape=(4,))
>>> [b.type.shape for b in pt.broadcast_arrays(x, y)]
[(3, 4), (3, 4)]
>>> pt.atleast_3d(y).type.shape
(1, 1, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.tensor.alloc import alloc, zeros
from arignote.tensor.conversion import (
    NotScalarConstantError,
    as_tensor_variable,
    get_underlying_scalar_constant_value,
)
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.join import join
from arignote.tensor.shape import (
    Shape_i,
    _int_arg,
    dim_length,
    get_vector_length,
    reshape,
    shape_padleft,
    shape_padright,
    shape_tuple,
    specify_shape,
)
from arignote.tensor.ufuncs import cast, maximum, mul

__all__ = [
    "newaxis",
    "atleast_Nd",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "shape_padleft",
    "shape_padright",
    "broadcast_shape",
    "broadcast_to",
    "broadcast_arrays",
    "concat_with_broadcast",
    "join_dims",
    "split_dims",
    "roll",
    "empty",
    "empty_like",
    "get_vector_length",
]

#: ``x[pt.newaxis]`` inserts a length-1 dimension, as ``numpy.newaxis`` (which is None)
newaxis = None


def _static(v: Any) -> int | None:
    """The value of a length (an int or a 0-d Variable) when known statically."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    try:
        return int(get_underlying_scalar_constant_value(v))
    except (NotScalarConstantError, TypeError, ValueError):
        return None


# --- adding dimensions -----------------------------------------------------------------------


def atleast_Nd(arry: Any, *, n: int = 1, left: bool = True) -> Variable:
    """``arry`` with length-1 dimensions added (on the left, or with ``left=False`` on the
    right) until it has at least ``n``; a tensor with ``n`` or more is returned as it is.

    >>> import arignote.tensor as pt
    >>> pt.atleast_Nd(pt.dvector("v"), n=3, left=False).type.shape
    (None, 1, 1)
    """
    x = as_tensor_variable(arry)
    n = _int_arg(n, "atleast_Nd: n")
    missing = n - x.type.ndim
    if missing <= 0:
        return x
    return shape_padleft(x, missing) if left else shape_padright(x, missing)


def atleast_1d(arry: Any, *, n: int = 1, left: bool = True) -> Variable:
    """``arry`` with at least one dimension (a 0-d value becomes a length-1 vector)."""
    return atleast_Nd(arry, n=n, left=left)


def atleast_2d(arry: Any, *, n: int = 2, left: bool = True) -> Variable:
    """``arry`` with at least two dimensions (new ones on the left by default)."""
    return atleast_Nd(arry, n=n, left=left)


def atleast_3d(arry: Any, *, n: int = 3, left: bool = True) -> Variable:
    """``arry`` with at least three dimensions, the new ones on the left by default.

    As in PyTensor (and unlike ``numpy.atleast_3d``, which puts a vector's length in
    the middle), a vector of length ``k`` becomes ``(1, 1, k)``; pass ``left=False``
    for ``(k, 1, 1)``.
    """
    return atleast_Nd(arry, n=n, left=left)


# --- broadcasting ----------------------------------------------------------------------------


def _broadcast_dim(lengths: Sequence[Any]) -> Any:
    """The broadcast of the lengths of one dimension: a static non-1 length wins; if
    there is none, any symbolic one; only 1s give 1. None: two different static non-1
    lengths (they do not broadcast)."""
    static = {s for s in (_static(n) for n in lengths) if s is not None and s != 1}
    if len(static) > 1:
        return None
    if static:
        return static.pop()
    symbolic = [n for n in lengths if _static(n) is None]
    return symbolic[0] if symbolic else 1


def _broadcast_lengths(shapes: Sequence[Sequence[Any]], what: str) -> list[Any]:
    """The broadcast of ``shapes`` (right-aligned), or a ValueError naming them."""
    ndim = max((len(s) for s in shapes), default=0)
    # the longest shapes first: a symbolic length is taken from the tensor most likely to
    # have the whole broadcast shape already (it then needs no copy)
    ordered = sorted(shapes, key=len, reverse=True)
    out = []
    for d in range(ndim, 0, -1):
        n = _broadcast_dim([s[len(s) - d] for s in ordered if len(s) >= d])
        if n is None:
            shown = ", ".join(str(tuple(_static(n) for n in s)) for s in shapes)
            raise ValueError(
                f"{what}: the shapes {shown} do not broadcast: they differ on their dimension "
                f"{ndim - d} (None: a length not known statically)"
            )
        out.append(n)
    return out


def broadcast_shape(*arrays: Any, arrays_are_shapes: bool = False) -> tuple[Variable, ...]:
    """The shape the ``arrays`` broadcast to (``numpy.broadcast_shapes`` of their shapes),
    as a tuple of 0-d int64 tensors (constants where the length is static).

    With ``arrays_are_shapes=True`` the arguments are shapes (sequences of ints or 0-d
    integer tensors). A length broadcasts only where it is statically 1; lengths not
    known statically are taken to be equal (Alloc and Elemwise check them when run).

    >>> import arignote.tensor as pt
    >>> [int(s.eval()) for s in pt.broadcast_shape((2, 1), (1, 3), arrays_are_shapes=True)]
    [2, 3]
    """
    if arrays_are_shapes:
        shapes = []
        for i, shp in enumerate(arrays):
            if isinstance(shp, Variable):
                raise TypeError(
                    f"broadcast_shape: with arrays_are_shapes=True, shape {i} must be a tuple of lengths, "
                    f"got the Variable {shp}"
                )
            shapes.append([_as_length(n, f"broadcast_shape: shape {i}") for n in shp])
    else:
        shapes = [shape_tuple(as_tensor_variable(a)) for a in arrays]
    return tuple(_as_length(n, "broadcast_shape") for n in _broadcast_lengths(shapes, "broadcast_shape"))


def _as_length(n: Any, what: str) -> Variable:
    if isinstance(n, (bool, np.bool_)):
        raise TypeError(f"{what}: a length must be an integer, got the bool {n!r}")
    v = as_tensor_variable(np.int64(n) if isinstance(n, (int, np.integer)) else n)
    if v.type.ndim != 0 or np.dtype(v.type.dtype).kind not in "iu":
        raise TypeError(f"{what}: a length must be a 0-d integer, got {v} of Type {v.type}")
    return v if v.type.dtype == "int64" else cast(v, "int64")


def _target_entries(shape: Any, what: str) -> list[Any]:
    """A target shape (an int, a sequence of lengths, or an integer vector of static
    length) as a list of ints and 0-d Variables."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return [int(shape)]
    if isinstance(shape, (Variable, np.ndarray)):
        v = as_tensor_variable(shape)
        if v.type.ndim == 0:
            return [v]
        n = get_vector_length(v)
        if isinstance(v, Variable) and hasattr(v, "data"):
            return [int(s) for s in np.asarray(v.data).reshape(-1)]
        return [v[i] for i in range(n)]
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{what}: the shape must be an int, a sequence or an integer vector, got {shape!r}")
    return [int(s) if isinstance(s, (int, np.integer)) and not isinstance(s, bool) else s for s in shape]


def broadcast_to(x: Any, shape: Any) -> Variable:
    """``x`` broadcast to ``shape`` (``numpy.broadcast_to``, as a new array): ``x``'s
    dimensions are right-aligned with ``shape``; a dimension of ``x`` broadcasts where
    it is statically 1, and must otherwise equal the target length.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> v = pt.dvector("v")
    >>> pt.broadcast_to(v, (2, 3)).eval({v: np.arange(3.0)})
    array([[0., 1., 2.],
           [0., 1., 2.]])
    """
    x = as_tensor_variable(x)
    entries = _target_entries(shape, "broadcast_to")
    if x.type.ndim > len(entries):
        raise ValueError(
            f"broadcast_to: cannot broadcast {x} of Type {x.type} ({x.type.ndim}-d) to the "
            f"{len(entries)}-d shape {tuple(entries)}"
        )
    lengths = [_as_length(n, "broadcast_to") for n in entries]
    offset = len(lengths) - x.type.ndim
    for d, s in enumerate(x.type.shape):
        target = _static(lengths[offset + d])
        if s is not None and target is not None and s != 1 and s != target:
            raise ValueError(
                f"broadcast_to: {x} of Type {x.type} has length {s} on its dimension {d}, which does "
                f"not broadcast to length {target} (shape {tuple(entries)})"
            )
    return alloc(x, *lengths)


def _needs_alloc(x: Variable, target: Sequence[Any]) -> bool:
    """Whether ``x`` must go through Alloc to have the shape ``target``: not when each
    target length is ``x``'s own (statically, or as ``x``'s ``Shape_i``). The other
    tensors, which do go through Alloc, are checked against those lengths at run time."""
    if len(target) != x.type.ndim:
        return True
    for d, n in enumerate(target):
        static = _static(n)
        if static is not None and static == x.type.shape[d]:
            continue
        owner = getattr(n, "owner", None)
        if owner is not None and isinstance(owner.op, Shape_i) and owner.op.i == d and owner.inputs[0] is x:
            continue
        return True
    return False


def broadcast_arrays(*args: Any) -> tuple[Variable, ...]:
    """The arguments broadcast against each other (``numpy.broadcast_arrays``, as new
    arrays; one that has the broadcast shape already is returned as it is)."""
    tensors = [as_tensor_variable(a) for a in args]
    if len(tensors) <= 1:
        return tuple(tensors)
    target = _broadcast_lengths([shape_tuple(t) for t in tensors], "broadcast_arrays")
    return tuple(alloc(t, *target) if _needs_alloc(t, target) else t for t in tensors)


def concat_with_broadcast(tensor_list: Sequence[Any], axis: int = 0) -> Variable:
    """Join tensors of the same number of dimensions along ``axis``, broadcasting them
    against each other on the other dimensions first.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a = pt.tensor("a", dtype="float64", shape=(1, 1))
    >>> b = pt.tensor("b", dtype="float64", shape=(2, 3))
    >>> pt.concat_with_broadcast([a, b]).type.shape
    (3, 3)
    """
    if not isinstance(tensor_list, (list, tuple)):
        raise TypeError(
            f"concat_with_broadcast: the tensors must be given as a list or tuple, got {type(tensor_list).__name__}"
        )
    if not tensor_list:
        raise ValueError("concat_with_broadcast: no tensors to concatenate")
    tensors = [as_tensor_variable(t) for t in tensor_list]
    ndims = [t.type.ndim for t in tensors]
    if len(set(ndims)) > 1 or ndims[0] == 0:
        raise TypeError(
            "concat_with_broadcast: the tensors must all have the same number of dimensions (at least 1); "
            f"they have {ndims}"
        )
    ndim = ndims[0]
    (ax,) = normalize_axis(_int_arg(axis, "concat_with_broadcast: axis"), ndim, "concat_with_broadcast: axis")
    others = [d for d in range(ndim) if d != ax]
    try:
        common = _broadcast_lengths([[dim_length(t, d) for d in others] for t in tensors], "")
    except ValueError:
        shown = ", ".join(str(t.type.shape) for t in tensors)
        raise ValueError(
            f"concat_with_broadcast: the tensors of shapes {shown} do not broadcast against each other "
            f"on the dimensions other than the concatenation axis {ax} (None: not known statically)"
        ) from None
    parts = []
    for t in tensors:
        target = list(common)
        target.insert(ax, dim_length(t, ax))
        parts.append(alloc(t, *target) if _needs_alloc(t, target) else t)
    return join(ax, *parts)


# --- merging and splitting dimensions --------------------------------------------------------


def _product(lengths: Sequence[Any]) -> Any:
    """The product of lengths: an int when all are static, else a 0-d int64 Variable."""
    static = [_static(n) for n in lengths]
    if None not in static:
        return math.prod(static)  # type: ignore[arg-type]
    known = math.prod(s for s in static if s is not None)
    result: Any = None
    for n, s in zip(lengths, static):
        if s is None:
            n = cast(as_tensor_variable(n), "int64")
            result = n if result is None else mul(result, n)
    return result if known == 1 else mul(result, np.int64(known))


def join_dims(x: Any, start_axis: int = 0, n_axes: int | None = None) -> Variable:
    """``x`` with the ``n_axes`` dimensions from ``start_axis`` merged into one (all the
    remaining ones when ``n_axes`` is None; ``n_axes=0`` inserts a length-1 dimension).

    >>> import arignote.tensor as pt
    >>> x = pt.tensor("x", dtype="float64", shape=(2, 3, 4, 5))
    >>> pt.join_dims(x, start_axis=1, n_axes=2).type.shape
    (2, 12, 5)
    """
    x = as_tensor_variable(x)
    ndim = x.type.ndim
    start = _int_arg(start_axis, "join_dims: start_axis")
    if not -ndim <= start <= ndim:
        raise np.exceptions.AxisError(
            f"join_dims: start_axis {start} is out of range for {x} of Type {x.type}"
        )
    if start < 0:
        start += ndim
    n = ndim - start if n_axes is None else _int_arg(n_axes, "join_dims: n_axes")
    if n < 0 or start + n > ndim:
        raise ValueError(
            f"join_dims: cannot join dimensions {start} to {start + n - 1} of {x}, which has {ndim} dimension(s)"
        )
    if n == 1:
        return x
    shape = shape_tuple(x)
    new_shape = [*shape[:start], _product(shape[start : start + n]), *shape[start + n :]]
    return reshape(x, new_shape)


def split_dims(x: Any, shape: Any, axis: int = 0) -> Variable:
    """``x`` with dimension ``axis`` split into dimensions of lengths ``shape`` (whose
    product must be its length; one entry may be -1, computed from the others; an empty
    ``shape`` drops a dimension of length 1).

    >>> import arignote.tensor as pt
    >>> x = pt.tensor("x", dtype="float64", shape=(6, 4))
    >>> pt.split_dims(x, (2, -1)).type.shape
    (2, 3, 4)
    """
    x = as_tensor_variable(x)
    ndim = x.type.ndim
    if ndim == 0:
        raise ValueError(f"split_dims: {x} is 0-d; there is no dimension to split")
    (ax,) = normalize_axis(_int_arg(axis, "split_dims: axis"), ndim, "split_dims: axis")
    entries = _target_entries(shape, "split_dims")
    static = [_static(n) for n in entries]
    if sum(s == -1 for s in static) > 1 or any(s is not None and s < -1 for s in static):
        raise ValueError(f"split_dims: invalid shape {tuple(entries)} (at most one -1, no other negatives)")
    length = x.type.shape[ax]
    if -1 in static and length is not None and None not in static:
        known = math.prod(s for s in static if s != -1)  # type: ignore[misc]
        if known == 0 or length % known:
            raise ValueError(
                f"split_dims: length {length} of dimension {ax} of {x} cannot be split into {tuple(entries)}"
            )
        entries[static.index(-1)] = static[static.index(-1)] = length // known
    if length is not None and None not in static and -1 not in static and math.prod(static) != length:  # type: ignore[arg-type]
        raise ValueError(
            f"split_dims: dimension {ax} of {x} (Type {x.type}) has length {length}, which cannot be split "
            f"into {tuple(entries)}"
        )
    full = shape_tuple(x)
    return reshape(x, [*full[:ax], *entries, *full[ax + 1 :]])


# --- roll ------------------------------------------------------------------------------------


def _as_shift(shift: Any, what: str) -> Any:
    if isinstance(shift, (bool, np.bool_)):
        raise TypeError(f"{what}: shift must be an integer, got the bool {shift!r}")
    if isinstance(shift, (int, np.integer)):
        return int(shift)
    v = as_tensor_variable(shift)
    if v.type.ndim != 0 or np.dtype(v.type.dtype).kind not in "iu":
        raise TypeError(f"{what}: shift must be a 0-d integer, got {v} of Type {v.type}")
    value = _static(v)
    return value if value is not None else cast(v, "int64")


def _roll_axis(x: Variable, shift: Any, axis: int) -> Variable:
    n = dim_length(x, axis)
    if isinstance(n, int) and isinstance(shift, int):
        if n == 0 or shift % n == 0:
            return x
        cut = n - shift % n
    else:
        # the length may be 0 at run time: shift modulo max(n, 1) is then 0 (nothing moves)
        cut = n - shift % (max(n, 1) if isinstance(n, int) else maximum(n, 1))
    head = [slice(None)] * axis
    out = join(axis, x[(*head, slice(cut, None))], x[(*head, slice(None, cut))])
    if out.type.shape != x.type.shape:  # a symbolic cut hides a static length: restate it
        out = specify_shape(out, x.type.shape)
    return out


def roll(x: Any, shift: Any, axis: Any = None) -> Variable:
    """``numpy.roll``: the elements of ``x`` moved ``shift`` places along ``axis`` (of the
    flattened tensor when ``axis`` is None), those leaving one end coming in at the other.
    ``shift`` and ``axis`` may be tuples (a shift per axis; repeated axes add up).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> pt.roll(x, 1, axis=1).eval({x: np.arange(6.0).reshape(2, 3)})
    array([[2., 0., 1.],
           [5., 3., 4.]])
    """
    x = as_tensor_variable(x)
    if axis is None:
        flat = reshape(x, (-1,))
        return reshape(roll(flat, shift, 0), shape_tuple(x)) if x.type.ndim != 1 else roll(flat, shift, 0)
    shifts = list(shift) if isinstance(shift, (list, tuple)) else None
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    if shifts is None:
        shifts = [shift] * len(axes)
    elif len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes; give one shift per axis")
    total: dict[int, Any] = {}
    for s, a in zip(shifts, axes):
        (a,) = normalize_axis(_int_arg(a, "roll: axis"), max(x.type.ndim, 1), "roll: axis")
        if x.type.ndim == 0:
            raise ValueError(f"roll: {x} is 0-d; use axis=None to roll a 0-d tensor")
        s = _as_shift(s, "roll")
        total[a] = s if a not in total else total[a] + s
    out = x
    for a, s in total.items():
        out = _roll_axis(out, s, a)
    return out


# --- new arrays ------------------------------------------------------------------------------


def empty(shape: Any, dtype: Any = None) -> Variable:
    """A new array of ``shape`` (``floatX`` unless ``dtype``) whose values are not to be
    relied on (``numpy.empty``); here they are zeros, allocated lazily by NumPy.
    """
    return zeros(shape, config.floatX if dtype is None else dtype)


def empty_like(prototype: Any, dtype: Any = None) -> Variable:
    """A new array of ``prototype``'s shape (and dtype, unless ``dtype``) whose values are
    not to be relied on (see :func:`empty`)."""
    p = as_tensor_variable(prototype)
    return zeros(shape_tuple(p), p.type.dtype if dtype is None else dtype)


# --- static facts ----------------------------------------------------------------------------
