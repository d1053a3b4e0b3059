"""``pad``: NumPy's ``numpy.pad`` for tensors, as ``pytensor.tensor.pad``.

The axes are padded one after the other (as NumPy does, so corners come from the later
axes). Each pad is a block joined to the tensor: a constant, a broadcast edge or
statistic, a linear ramp, or a gather of the tensor's own elements at folded indices
(``wrap``, ``reflect``, ``symmetric``, any width). Everything is composed of existing
Ops, so the result is differentiable in ``x`` and in the pad values.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> pt.pad(x, (2, 1), mode="reflect").eval({x: np.array([1.0, 2.0, 3.0])})
array([3., 2., 1., 2., 3., 2.])
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from arignote.graph.basic import Constant, Variable
from arignote.tensor.alloc import alloc
from arignote.tensor.axes import expand_dims
from arignote.tensor.checks import check_values
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.indexing.advanced import take
from arignote.tensor.indexing.basic import flip
from arignote.tensor.indexing.index import slice_at_axis
from arignote.tensor.join import concatenate
from arignote.tensor.ranges import arange, linspace
from arignote.tensor.reductions import max as tensor_max
from arignote.tensor.reductions import mean
from arignote.tensor.reductions import min as tensor_min
from arignote.tensor.shape import dim_length
from arignote.tensor.statistics import median
from arignote.tensor.ufuncs import cast, ge, int_div, maximum, mod, round, switch

__all__ = ["pad"]

PadMode = Literal[
    "constant", "edge", "linear_ramp", "maximum", "minimum", "mean", "median", "wrap", "symmetric", "reflect"
]

#: the keyword arguments each mode takes
allowed_kwargs: dict[str, tuple[str, ...]] = {
    "constant": ("constant_values",),
    "edge": (),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "minimum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
    "wrap": (),
    "symmetric": ("reflect_type",),
    "reflect": ("reflect_type",),
}

#: the statistic modes and the functions (of ``arignote.tensor``) computing them
_STATS = {"maximum": tensor_max, "minimum": tensor_min, "mean": mean, "median": median}

Length = Any  # a Python int or a 0-d int64 Variable


def _static(v: Length) -> int | None:
    return v if isinstance(v, int) else None


def _pairs(value: Any, ndim: int, what: str, integer: bool) -> list[tuple[Any, Any]]:
    """``value`` broadcast to ``ndim`` (before, after) pairs, as ``numpy.pad`` reads its
    arguments: one number, one pair, or one pair per axis. Constant values stay Python
    numbers, so the lengths they give stay static; a symbolic ``value`` gives 0-d Variables."""
    if isinstance(value, Variable) and not isinstance(value, Constant):
        v = _checked(value, what, integer)
        if v.type.ndim > 2:
            raise ValueError(f"pad: {what} must have at most 2 dimensions, got {value} of Type {value.type}")
        full = alloc(v, ndim, 2)
        return [(full[d, 0], full[d, 1]) for d in range(ndim)]
    data = np.asarray(value.data if isinstance(value, Constant) else value)
    if data.dtype == object:  # numbers mixed with symbolic scalars: each entry stays what it is
        return [(_entry(b, what, integer), _entry(a, what, integer)) for b, a in _broadcast(data, ndim, what)]
    if integer and data.dtype.kind not in "iu":
        raise TypeError(f"pad: {what} must be integers, got {value!r}")
    data = _broadcast(data, ndim, what)
    if integer:
        if np.any(data < 0):
            raise ValueError(f"pad: {what} must be non-negative, got {data.tolist()}")
        return [(int(b), int(a)) for b, a in data]
    return [(b, a) for b, a in data]


def _broadcast(data: np.ndarray, ndim: int, what: str) -> np.ndarray:
    try:
        return np.broadcast_to(data, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"pad: {what} of shape {data.shape} does not give a (before, after) pair for each of {ndim} axes"
        ) from None


def _checked(v: Variable, what: str, integer: bool) -> Variable:
    """The symbolic ``v``; as int64 and checked non-negative (at run time) for widths."""
    if not integer:
        return v
    if np.dtype(v.type.dtype).kind not in "iu":
        raise TypeError(f"pad: {what} must be integers, got {v} of Type {v.type}")
    v = cast(v, "int64")
    return check_values(v, ge(v, 0), f"pad: {what} must be non-negative")


def _entry(e: Any, what: str, integer: bool) -> Any:
    """One entry of a pair given as a sequence mixing numbers and symbolic scalars."""
    if isinstance(e, Variable) and not isinstance(e, Constant):
        if e.type.ndim != 0:
            raise ValueError(f"pad: each entry of {what} must be a scalar, got {e} of Type {e.type}")
        return _checked(e, what, integer)
    number = np.asarray(e.data if isinstance(e, Constant) else e)
    if number.ndim != 0 or number.dtype == object:
        raise ValueError(f"pad: each entry of {what} must be a scalar, got {e!r}")
    if not integer:
        return number[()]
    if number.dtype.kind not in "iu":
        raise TypeError(f"pad: {what} must be integers, got {e!r}")
    if number < 0:
        raise ValueError(f"pad: {what} must be non-negative, got {e!r}")
    return int(number)


def _block(value: Any, x: Variable, axis: int, width: Length) -> Variable:
    """``value`` (a scalar or a slice of ``x`` of length 1 along ``axis``) broadcast to
    ``x``'s shape with ``width`` along ``axis``, in ``x``'s dtype."""
    shape = [width if d == axis else dim_length(x, d) for d in range(x.type.ndim)]
    return alloc(cast(value, x.type.dtype), *shape)


def _along(v: Variable, axis: int, ndim: int) -> Variable:
    """The vector ``v`` shaped to broadcast along ``axis`` of an ``ndim``-d tensor."""
    return expand_dims(v, tuple(d for d in range(ndim) if d != axis))


def _edge(x: Variable, axis: int, k: int) -> Variable:
    """The slice ``k`` of ``x`` along ``axis``, kept as a (statically) length-1 axis so
    that it broadcasts."""
    return expand_dims(x[slice_at_axis(k, axis)], axis)


def _folded(x: Variable, axis: int, positions: Variable, mode: str, odd: bool) -> Variable:
    """The elements of ``x`` at ``positions`` (integers, possibly outside ``[0, n)``) along
    ``axis``, the positions folded back by periodic (``wrap``) or mirrored extension.

    The mirrored extensions repeat with period ``P`` (``2n`` for ``symmetric``, ``2n - 2``
    for ``reflect``). Odd reflection mirrors values about the edge too: a mirrored element
    becomes ``2 * x[-1] - x[k]`` and each period adds ``2 * (x[-1] - x[0])``.
    """
    n = dim_length(x, axis)  # a Python int where static, so the result's length stays static
    if mode == "wrap":
        return take(x, mod(positions, n), axis=axis)
    if mode == "symmetric":
        period = 2 * n
    else:  # a single element reflects onto itself: period 1
        period = max(2 * n - 2, 1) if isinstance(n, int) else maximum(2 * n - 2, 1)
    j = mod(positions, period)
    mirrored = ge(j, n)
    index = switch(mirrored, period - j - (1 if mode == "symmetric" else 0), j)
    values = take(x, index, axis=axis)
    if not odd:
        return values
    ndim, dtype = x.type.ndim, x.type.dtype
    first, last = _edge(x, axis, 0), _edge(x, axis, -1)
    values = switch(_along(mirrored, axis, ndim), 2 * last - values, values)
    turns = cast(_along(int_div(positions, period), axis, ndim), dtype)
    return cast(values + turns * (2 * (last - first)), dtype)


def _stat_block(x: Variable, axis: int, width: Length, mode: str, length: Any, at_start: bool) -> Variable:
    """The statistic of the first (or last) ``length`` elements along ``axis`` (all of
    them for None), broadcast to ``width``. Integer tensors get it rounded, as NumPy."""
    if length is None:
        region = x
    elif at_start:
        region = x[slice_at_axis(slice(0, length), axis)]
    else:
        n = dim_length(x, axis)
        static = isinstance(n, int) and isinstance(length, int)
        start = max(n - length, 0) if static else maximum(n - length, 0)
        region = x[slice_at_axis(slice(start, None), axis)]
    stat = _STATS[mode](region, axis=axis, keepdims=True)
    if np.dtype(x.type.dtype).kind in "iu" and np.dtype(stat.type.dtype).kind == "f":
        stat = round(stat)
    return _block(stat, x, axis, width)


def _ramp(x: Variable, axis: int, width: Length, end: Any, at_start: bool) -> Variable:
    """A linear ramp from ``end`` towards the edge of ``x`` along ``axis``, ``width`` long
    (the edge itself excluded), in ``x``'s dtype (NumPy's ``linspace`` rule for integers)."""
    edge = x[slice_at_axis(0 if at_start else -1, axis)]
    end = cast(as_tensor_variable(end), "float64")
    ramp = linspace(end, edge, width, endpoint=False, dtype=x.type.dtype, axis=axis)
    return ramp if at_start else flip(ramp, axis=axis)


def _check_not_empty(x: Variable, axis: int, widths: tuple[Length, Length], mode: str) -> None:
    if x.type.shape[axis] == 0 and any(_static(w) != 0 for w in widths):
        raise ValueError(f"pad: cannot extend the empty axis {axis} of {x.type} with mode {mode!r}")


def _pad_axis(x: Variable, axis: int, widths: tuple[Length, Length], mode: str, options: dict) -> Variable:
    before, after = widths
    if mode == "constant":
        lo, hi = options["constant_values"][axis]
        blocks = [_block(lo, x, axis, before), x, _block(hi, x, axis, after)]
    else:
        _check_not_empty(x, axis, widths, mode)
        if mode == "edge":
            blocks = [
                _block(_edge(x, axis, 0), x, axis, before),
                x,
                _block(_edge(x, axis, -1), x, axis, after),
            ]
        elif mode in _STATS:
            lo_len, hi_len = options["stat_length"][axis]
            blocks = [
                _stat_block(x, axis, before, mode, lo_len, True),
                x,
                _stat_block(x, axis, after, mode, hi_len, False),
            ]
        elif mode == "linear_ramp":
            lo, hi = options["end_values"][axis]
            blocks = [_ramp(x, axis, before, lo, True), x, _ramp(x, axis, after, hi, False)]
        else:
            n = dim_length(x, axis)
            odd = options.get("reflect_type") == "odd"
            left = _folded(x, axis, arange(-before, 0, dtype="int64"), mode, odd)
            right = _folded(x, axis, arange(n, n + after, dtype="int64"), mode, odd)
            blocks = [left, x, right]
    kept = [b for b, w in zip(blocks, (before, None, after)) if w is None or _static(w) != 0]
    return kept[0] if len(kept) == 1 else concatenate(kept, axis=axis)


def _stat_lengths(value: Any, ndim: int) -> list[tuple[Any, Any]]:
    if value is None:
        return [(None, None)] * ndim
    pairs = _pairs(value, ndim, "stat_length", integer=True)
    if any(_static(v) == 0 for pair in pairs for v in pair):
        raise ValueError("pad: a stat_length of 0 gives no value to pad with")
    return pairs


def pad(x: Any, pad_width: Any, mode: PadMode = "constant", **kwargs: Any) -> Variable:
    """``x`` padded along each axis, as ``numpy.pad``.

    ``pad_width``: the numbers of values added before and after each axis, as one int,
    one ``(before, after)`` pair for all axes, or one pair per axis (constants or a
    symbolic integer tensor). ``mode`` and its keyword arguments:

    - ``"constant"`` (``constant_values``, default 0, per axis like ``pad_width``);
    - ``"edge"``: the edge values repeated;
    - ``"linear_ramp"`` (``end_values``, default 0): a ramp from the end value to the edge;
    - ``"maximum"``, ``"minimum"``, ``"mean"``, ``"median"`` (``stat_length``: how many
      values at each end the statistic covers, default all);
    - ``"wrap"``: the tensor repeated periodically;
    - ``"reflect"`` (mirror about the edge, not repeating it) and ``"symmetric"`` (mirror
      including the edge), with ``reflect_type`` ``"even"`` (default) or ``"odd"``.

    The result has ``x``'s dtype; integer tensors get ramps and statistics rounded.
    """
    if mode not in allowed_kwargs:
        raise ValueError(f"pad: unknown mode {mode!r}; the modes are {sorted(allowed_kwargs)}")
    unknown = sorted(set(kwargs) - set(allowed_kwargs[mode]))
    if unknown:
        raise ValueError(f"pad: mode {mode!r} takes {list(allowed_kwargs[mode])} as keywords, got {unknown}")
    x = as_tensor_variable(x)
    ndim = x.type.ndim
    widths = _pairs(pad_width, ndim, "pad_width", integer=True)
    options: dict[str, Any] = {}
    if mode == "constant":
        options["constant_values"] = _pairs(kwargs.get("constant_values", 0), ndim, "constant_values", False)
    elif mode == "linear_ramp":
        options["end_values"] = _pairs(kwargs.get("end_values", 0), ndim, "end_values", False)
    elif mode in _STATS:
        options["stat_length"] = _stat_lengths(kwargs.get("stat_length"), ndim)
    elif mode in ("reflect", "symmetric"):
        options["reflect_type"] = kwargs.get("reflect_type", "even")
        if options["reflect_type"] not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {options['reflect_type']!r}")
    for axis in range(ndim):
        if _static(widths[axis][0]) == 0 and _static(widths[axis][1]) == 0:
            continue
        x = _pad_axis(x, axis, widths[axis], mode, options)
    return x
