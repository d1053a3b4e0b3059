"""One-dimensional interpolation, as ``pytensor.tensor.interpolate``: ``interp`` (NumPy's
``interp``) and ``interpolate1d`` (a function of the query points, with several methods).

Both locate each query point among the data points with ``searchsorted`` and gather the
neighbours, so they are differentiable in the query points and in the data.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> pt.interp(x, [0.0, 1.0, 2.0], [0.0, 10.0, 0.0]).eval({x: np.array([0.5, 1.5, 3.0])})
array([5., 5., 0.])
"""

from __future__ import annotations

from collections.abc import Callable
from difflib import get_close_matches
from typing import Any, Literal, get_args

from arignote.graph.basic import Variable
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.join import concatenate
from arignote.tensor.searching import searchsorted
from arignote.tensor.shape import shape_i
from arignote.tensor.sort import argsort
from arignote.tensor.ufuncs import clip, eq, gt, le, lt, mod, switch

__all__ = ["interp", "interpolate1d"]

InterpolationMethod = Literal["linear", "nearest", "first", "last", "mean"]
valid_methods = get_args(InterpolationMethod)


def _vector(v: Any, what: str) -> Variable:
    v = as_tensor_variable(v)
    if v.type.ndim != 1:
        raise ValueError(f"{what} must be a vector (1-d), got {v} of Type {v.type}")
    return v


def _check_lengths(xp: Variable, fp: Variable, what: str) -> None:
    a, b = xp.type.shape[0], fp.type.shape[0]
    if a is not None and b is not None and a != b:
        raise ValueError(f"{what}: the data points have {a} x-coordinates and {b} values")


def _neighbours(xp: Variable, j: Variable) -> tuple[Variable, Variable]:
    """The indices ``j - 1`` and ``j`` kept inside ``xp`` (also for a single point)."""
    last = shape_i(xp, 0) - 1
    return clip(j - 1, 0, last), clip(j, 0, last)


def _line(x: Variable, x0: Variable, x1: Variable, y0: Variable, y1: Variable) -> Variable:
    """The line through ``(x0, y0)`` and ``(x1, y1)`` at ``x``. A zero-width interval is
    given width 1 (its result is never selected), so no 0/0 reaches the gradient."""
    width = x1 - x0
    width = switch(eq(width, 0), 1, width)
    return y0 + (x - x0) * ((y1 - y0) / width)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Variable:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x`` (any shape), as
    ``numpy.interp``.

    ``xp`` must increase (unless ``period`` is given); ``x`` below ``xp[0]`` gives ``left``
    (default ``fp[0]``), above ``xp[-1]`` gives ``right`` (default ``fp[-1]``); the data
    points themselves give their ``fp`` exactly. With ``period``, the coordinates are
    taken modulo it (``xp`` need not be sorted, ``left``/``right`` are ignored).
    """
    x = as_tensor_variable(x)
    xp, fp = _vector(xp, "interp: xp"), _vector(fp, "interp: fp")
    _check_lengths(xp, fp, "interp")
    if period is not None:
        return _periodic_interp(x, xp, fp, as_tensor_variable(period))
    j = searchsorted(xp, x, side="right")
    i0, i1 = _neighbours(xp, j)
    inside = _line(x, xp[i0], xp[i1], fp[i0], fp[i1])
    first, last = xp[0], xp[-1]
    left = fp[0] if left is None else as_tensor_variable(left)
    right = fp[-1] if right is None else as_tensor_variable(right)
    out = switch(eq(x, last), fp[-1], inside)  # exact at the last point, no round-off
    out = switch(gt(x, last), right, out)
    return switch(lt(x, first), left, out)


def _periodic_interp(x: Variable, xp: Variable, fp: Variable, period: Variable) -> Variable:
    if period.type.ndim != 0:
        raise ValueError(f"interp: period must be a scalar, got {period} of Type {period.type}")
    x, xp = mod(x, period), mod(xp, period)
    order = argsort(xp)
    xp, fp = xp[order], fp[order]
    # one more point on each side, the neighbours across the period's boundary
    xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
    fp = concatenate([fp[-1:], fp, fp[:1]])
    return interp(x, xp, fp)


def _pad(idx: Variable, n: Any, y_hat: Variable, left_pad: Variable, right_pad: Variable) -> Variable:
    return switch(eq(idx, 0), left_pad, switch(eq(idx, n), right_pad, y_hat))


def interpolate1d(
    x: Any,
    y: Any,
    method: InterpolationMethod = "linear",
    left_pad: Any = None,
    right_pad: Any = None,
    extrapolate: bool = True,
) -> Callable[[Any], Variable]:
    """A function that interpolates the data points ``(x, y)`` at query points of any
    shape. The points are sorted by ``x`` first.

    ``method``: ``"linear"``; ``"nearest"`` (the closer neighbour, the left one on a tie);
    ``"first"`` (the data point left of the query); ``"last"`` (the data point at or right
    of the query); ``"mean"`` (the mean of the two neighbours). With
    ``extrapolate=True`` the end intervals extend beyond the data; otherwise a query at
    or below ``x[0]`` gives ``left_pad`` (default ``y[0]``) and one above ``x[-1]`` gives
    ``right_pad`` (default ``y[-1]``), as PyTensor's.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> f = pt.interpolate1d([0.0, 1.0, 2.0], [0.0, 1.0, 4.0], method="linear")
    >>> f(np.array([0.5, 3.0])).eval()
    array([0.5, 7. ])
    """
    if method not in valid_methods:
        hint = get_close_matches(str(method), valid_methods)
        raise ValueError(
            f"interpolate1d: unknown method {method!r}; choose one of {valid_methods}"
            + (f" (did you mean {hint[0]!r}?)" if hint else "")
        )
    x, y = _vector(x, "interpolate1d: x"), _vector(y, "interpolate1d: y")
    _check_lengths(x, y, "interpolate1d")
    order = argsort(x)
    x, y = x[order], y[order]
    left = y[0] if left_pad is None else as_tensor_variable(left_pad)
    right = y[-1] if right_pad is None else as_tensor_variable(right_pad)
    n = shape_i(x, 0)

    def interpolate(x_hat: Any) -> Variable:
        x_hat = as_tensor_variable(x_hat)
        idx = searchsorted(x, x_hat)  # first data point at or above the query
        inner = clip(idx, 1, n - 1)  # the interval used at and beyond the ends
        if method == "linear":
            y_hat = _line(x_hat, x[inner - 1], x[inner], y[inner - 1], y[inner])
        elif method == "nearest":
            closer_left = le(x_hat - x[inner - 1], x[inner] - x_hat)
            y_hat = switch(closer_left, y[inner - 1], y[inner])
        elif method == "first":
            y_hat = y[clip(idx - 1, 0, n - 1)]
        elif method == "last":
            y_hat = y[clip(idx, 0, n - 1)]
        else:
            y_hat = (y[inner - 1] + y[inner]) / 2
        return y_hat if extrapolate else _pad(idx, n, y_hat, left, right)

    return interpolate
