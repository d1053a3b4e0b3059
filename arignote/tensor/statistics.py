"""Statistics built from other Ops (so their gradients come from theirs): ``ptp``,
``median``, ``cov``, ``max_and_argmax``, ``largest``/``smallest``. PyTensor's path for them is :mod:`arignote.tensor.math`.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> pt.median(x).eval({x: np.array([3.0, 1.0, 2.0, 10.0])})
array(2.5)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.scalar.type import complex_types, discrete_types, upcast
from arignote.tensor.axes import expand_dims, squeeze, transpose
from arignote.tensor.checks import check_values
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.join import concatenate, stack
from arignote.tensor.products import dot
from arignote.tensor.reductions import argmax, max, mean, min, sum
from arignote.tensor.shape import reshape, shape_i
from arignote.tensor.sort import sort
from arignote.tensor.ufuncs import cast, conj, eq, ge, gt, isnan, lt, maximum, mod, switch

__all__ = ["cov", "largest", "max_and_argmax", "median", "ptp", "smallest"]


def _is_discrete(x: Variable) -> bool:
    return x.type.dtype in discrete_types


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Range of values (maximum minus minimum) over ``axis`` (``numpy.ptp``); the dtype of
    ``a`` is kept (integers wrap around as in NumPy)."""
    a = as_tensor_variable(a)
    return max(a, axis, keepdims=keepdims) - min(a, axis, keepdims=keepdims)


def median(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """The median over ``axis`` (None: all axes; an int or a tuple of ints).

    The middle value of the sorted elements, or the mean of the two middle ones for an
    even count. A slice holding NaN has a NaN median (as ``numpy.median``). The dtype is
    that of ``x / 2.0`` (float32 for small integers, as PyTensor's). Complex values are
    ordered as NumPy sorts them (by real part, then imaginary part). An empty axis is an
    error at run time.
    """
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.type.ndim)
    axes = tuple(range(x.type.ndim)) if axes is None else tuple(axes)
    kept = [d for d in range(x.type.ndim) if d not in axes]
    flat = transpose(x, kept + list(axes)) if x.type.ndim else x
    if len(axes) != 1:  # several (or no) reduced axes: one axis of all their elements
        kept_shape = [shape_i(x, d) if x.type.shape[d] is None else x.type.shape[d] for d in kept]
        flat = reshape(flat, [*kept_shape, -1])
    out_dtype = upcast(x.type.dtype, "float32")
    ordered = sort(flat, axis=-1)
    n = shape_i(ordered, ordered.type.ndim - 1)
    hi = cast(ordered[..., n // 2], out_dtype)
    lo = cast(ordered[..., (n - 1) // 2], out_dtype)
    out = switch(eq(mod(n, 2), 1), hi, (lo + hi) / np.asarray(2, dtype=out_dtype))
    if not _is_discrete(x):  # NaN sorts last: the slice's last element says whether it has one
        out = switch(isnan(ordered[..., -1]), np.asarray(np.nan, dtype=out_dtype), out)
    if keepdims and axes:
        out = expand_dims(out, axes)
    return out


def _as_observations(v: Any, rowvar: bool, what: str) -> Variable:
    """``v`` as a matrix with one variable per row (``numpy.cov``'s layout)."""
    v = as_tensor_variable(v)
    if v.type.ndim > 2:
        raise ValueError(f"cov: {what} must have 1 or 2 dimensions, got {v} of Type {v.type}")
    if v.type.ndim < 2:
        return reshape(v, (1, -1))
    # NumPy keeps a single row as one variable even with rowvar=False; here that is
    # decided on the static shape (a matrix of unknown rows is transposed)
    if not rowvar and v.type.shape[0] != 1:
        return v.T
    return v


def _check_weights(w: Any, what: str, integer: bool) -> Variable:
    w = as_tensor_variable(w)
    if w.type.ndim != 1:
        raise ValueError(f"cov: {what} must be a vector, got {w} of Type {w.type}")
    if integer and w.type.dtype not in discrete_types:
        raise TypeError(f"cov: {what} must be integers, got {w} of Type {w.type}")
    return check_values(w, ge(w, 0), f"cov: {what} must be non-negative")


def cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: Any = None,
    aweights: Any = None,
) -> Variable:
    """Covariance matrix of the variables in ``m`` (and ``y``), as ``numpy.cov``.

    Each row of ``m`` is a variable and each column an observation (``rowvar=False``: the
    other way round); a vector is one variable. ``ddof`` defaults to 1 (0 with
    ``bias=True``). ``fweights`` (integer repeat counts) and ``aweights`` (observation
    weights) weight the observations. The result is float64 (complex128 for complex
    input) with length-1 dimensions squeezed: a 0-d tensor for a single variable.
    """
    x = _as_observations(m, rowvar, "m")
    if y is not None:
        x = concatenate([x, _as_observations(y, rowvar, "y")], axis=0)
    dtype = "complex128" if x.type.dtype in complex_types else "float64"
    x = cast(x, dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    n = cast(shape_i(x, 1), "float64")
    w = None
    if fweights is not None:
        w = cast(_check_weights(fweights, "fweights", integer=True), "float64")
    if aweights is not None:
        aw = cast(_check_weights(aweights, "aweights", integer=False), "float64")
        w = aw if w is None else w * aw
    if w is None:
        centered = x - mean(x, axis=1, keepdims=True)
        fact = n - ddof
        weighted = centered
    else:
        w_sum = sum(w)
        centered = x - sum(x * w, axis=1, keepdims=True) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * sum(w * aw) / w_sum
        weighted = centered * w
    fact = maximum(fact, 0.0)  # as NumPy: too few observations give inf/NaN, not a sign flip
    c = dot(weighted, conj(centered).T) / cast(fact, dtype)
    return squeeze(c)


def max_and_argmax(a: Any, axis: Any = None, keepdims: bool = False) -> list[Variable]:
    """``[max(a, axis), argmax(a, axis)]``."""
    return [max(a, axis=axis, keepdims=keepdims), argmax(a, axis=axis, keepdims=keepdims)]


def _extreme(args: tuple, larger: bool, what: str) -> Variable:
    if not args:
        raise TypeError(f"{what} needs at least one input")
    if len(args) == 2:  # elementwise with broadcasting; a NaN in the first is not chosen
        a, b = (as_tensor_variable(v) for v in args)
        return switch(gt(a, b) if larger else lt(a, b), a, b)
    stacked = stack([as_tensor_variable(v) for v in args])
    return max(stacked, axis=0) if larger else min(stacked, axis=0)


def largest(*args: Any) -> Variable:
    """The elementwise largest of the inputs: ``switch(a > b, a, b)`` for two (which
    broadcast), the maximum over a stack of them (same shapes) otherwise."""
    return _extreme(args, True, "largest")


def smallest(*args: Any) -> Variable:
    """The elementwise smallest of the inputs (see :func:`largest`)."""
    return _extreme(args, False, "smallest")
