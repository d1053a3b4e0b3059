"""More of ``pytensor.tensor.math``: NumPy-named comparisons, finiteness tests, stable
``logaddexp``, integer division helpers, ``nan_to_num``, and the statistics ``ptp``,
``median``, ``cov``; also ``max_and_argmax``, ``largest``/``smallest``, the deprecated
``batched_dot``/``batched_tensordot`` and NumPy's constants (``pi``, ``e``, ...).

Everything here is composed of existing Ops, so gradients come from theirs.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> float(pt.logaddexp(x, 0.0).eval({x: np.array([1000.0])})[0])
1000.0
>>> pt.median(x).eval({x: np.array([3.0, 1.0, 2.0, 10.0])})
array(2.5)
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy import e, euler_gamma, inf, nan, pi

import arignote.tensor as pt
from arignote.graph.basic import Variable
from arignote.scalar.type import complex_types, discrete_types, upcast
from arignote.tensor.basic import as_tensor_variable
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.math import (
    argmax,
    cast,
    conj,
    eq,
    exp,
    ge,
    gt,
    int_div,
    isinf,
    isnan,
    le,
    log,
    lt,
    max,
    maximum,
    min,
    mod,
    neq,
    sign,
    sum,
    switch,
)

__all__ = [
    "isfinite",
    "isposinf",
    "isneginf",
    "equal",
    "not_equal",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "logaddexp",
    "divmod",
    "floor_div",
    "ceil_intdiv",
    "iround",
    "sgn",
    "conjugate",
    "nan_to_num",
    "ptp",
    "median",
    "cov",
    "max_and_argmax",
    "largest",
    "smallest",
    "batched_dot",
    "batched_tensordot",
    "e",
    "pi",
    "inf",
    "nan",
    "euler_gamma",
]

# NumPy's names for the comparisons (the same Elemwise Ops)
equal = eq
not_equal = neq
greater = gt
greater_equal = ge
less = lt
less_equal = le
floor_div = int_div


def _is_discrete(x: Variable) -> bool:
    return x.type.dtype in discrete_types


# --- finiteness ----------------------------------------------------------------------------


def isfinite(a: Any) -> Variable:
    """Whether each element is neither NaN nor infinite (``numpy.isfinite``); integers and
    bools are always finite. A complex number is finite when both its parts are."""
    a = as_tensor_variable(a)
    if _is_discrete(a):
        return pt.ones_like(a, dtype="bool")
    return pt.and_(pt.invert(isnan(a)), pt.invert(isinf(a)))


def _check_real(x: Variable, what: str) -> None:
    if x.type.dtype in complex_types:
        raise TypeError(f"{what} is not defined for complex input; got {x} of Type {x.type}")


def isposinf(x: Any) -> Variable:
    """Whether each element is ``+inf`` (``numpy.isposinf``; real input only)."""
    x = as_tensor_variable(x)
    _check_real(x, "isposinf")
    return eq(x, np.inf)


def isneginf(x: Any) -> Variable:
    """Whether each element is ``-inf`` (``numpy.isneginf``; real input only)."""
    x = as_tensor_variable(x)
    _check_real(x, "isneginf")
    return eq(x, -np.inf)


# --- elementwise helpers ---------------------------------------------------------------------


def logaddexp(*xs: Any) -> Variable:
    """``log(exp(x1) + exp(x2) + ...)`` elementwise (with broadcasting), computed without
    overflow or underflow: the largest term is factored out first.

    Infinities behave as in ``numpy.logaddexp`` (``logaddexp(-inf, -inf) = -inf``,
    ``logaddexp(inf, x) = inf``). The dtype is that of ``log(exp(x))``: float, integers
    widened to a float.
    """
    if not xs:
        raise TypeError("logaddexp needs at least one input")
    xs_t = [as_tensor_variable(x) for x in xs]
    for x in xs_t:
        _check_real(x, "logaddexp")
    out_dtype = upcast(*(exp(x).type.dtype for x in xs_t))
    xs_t = [cast(x, out_dtype) for x in xs_t]
    m = xs_t[0]
    for x in xs_t[1:]:
        m = maximum(m, x)
    # an infinite maximum cannot be factored out (inf - inf is NaN): factor out 0 instead,
    # which gives inf (some term is +inf) or -inf (all terms are -inf) exactly
    m_safe = switch(isinf(m), 0, m)
    total = exp(xs_t[0] - m_safe)
    for x in xs_t[1:]:
        total = total + exp(x - m_safe)
    return cast(m_safe + log(total), out_dtype)


def divmod(x: Any, y: Any) -> tuple[Variable, Variable]:
    """``(floor_div(x, y), mod(x, y))``, as Python's and NumPy's ``divmod``."""
    return int_div(x, y), mod(x, y)


def ceil_intdiv(a: Any, b: Any) -> Variable:
    """``ceil(a / b)`` for integers, without going through floats (exact for int64):
    the floor division, plus one where the division leaves a remainder."""
    div = int_div(a, b)
    return div + cast(neq(mod(a, b), 0), div.type.dtype)


def iround(a: Any, mode: str | None = None) -> Variable:
    """``a`` rounded (see :func:`arignote.tensor.math.round` for ``mode``) and cast to
    int64."""
    return cast(pt.round(a, mode), "int64")


def sgn(a: Any) -> Variable:
    """Deprecated name of :func:`arignote.tensor.math.sign`."""
    warnings.warn("sgn is deprecated; use sign instead", FutureWarning, stacklevel=2)
    return sign(a)


def conjugate(x: Any) -> Variable:
    """The complex conjugate (``numpy.conjugate``); real input is returned unchanged in
    value and dtype."""
    return conj(x)


def nan_to_num(x: Any, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Variable:
    """``x`` with NaN replaced by ``nan``, ``+inf`` by ``posinf`` and ``-inf`` by ``neginf``
    (by default the largest and the most negative finite value of ``x``'s dtype).

    As ``numpy.nan_to_num``: the dtype of ``x`` is kept (the replacements are cast to it),
    integers and bools come back unchanged, and complex input is treated part by part.
    The replacements may be symbolic scalars.
    """
    x = as_tensor_variable(x)
    if _is_discrete(x):
        return x
    if x.type.dtype in complex_types:
        re, im = (nan_to_num(part, nan, posinf, neginf) for part in (pt.real(x), pt.imag(x)))
        return pt.complex(re, im)
    info = np.finfo(x.type.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    values = [cast(as_tensor_variable(v), x.type.dtype) for v in (nan, big, small)]
    for what, v in zip(("nan", "posinf", "neginf"), values):
        if v.type.ndim:
            raise TypeError(f"nan_to_num: {what} must be a scalar, got {v} of Type {v.type}")
    out = switch(isnan(x), values[0], x)
    out = switch(eq(x, np.inf), values[1], out)
    return switch(eq(x, -np.inf), values[2], out)


# --- statistics ----------------------------------------------------------------------------


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Range of values (maximum minus minimum) over ``axis`` (``numpy.ptp``); the dtype of
    ``a`` is kept (integers wrap around as in NumPy)."""
    a = as_tensor_variable(a)
    return max(a, axis, keepdims=keepdims) - min(a, axis, keepdims=keepdims)


def median(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """The median over ``axis`` (None: all axes; an int or a tuple of ints).

    The middle value of the sorted elements, or the mean of the two middle ones for an
    even count. A slice holding NaN has a NaN median (as ``numpy.median``). The dtype is
    that of ``x / 2.0`` (float32 for small integers, as PyTensor's). An empty axis is an
    error at run time.
    """
    x = as_tensor_variable(x)
    if x.type.dtype in complex_types:
        raise TypeError(f"median: complex input has no order; got {x} of Type {x.type}")
    axes = normalize_axis(axis, x.type.ndim)
    axes = tuple(range(x.type.ndim)) if axes is None else tuple(axes)
    kept = [d for d in range(x.type.ndim) if d not in axes]
    flat = pt.transpose(x, kept + list(axes)) if x.type.ndim else x
    if len(axes) != 1:  # several (or no) reduced axes: one axis of all their elements
        kept_shape = [pt.shape_i(x, d) if x.type.shape[d] is None else x.type.shape[d] for d in kept]
        flat = pt.reshape(flat, [*kept_shape, -1])
    out_dtype = upcast(x.type.dtype, "float32")
    ordered = pt.sort(flat, axis=-1)
    n = pt.shape_i(ordered, ordered.type.ndim - 1)
    hi = cast(ordered[..., n // 2], out_dtype)
    lo = cast(ordered[..., (n - 1) // 2], out_dtype)
    out = switch(eq(mod(n, 2), 1), hi, (lo + hi) / np.asarray(2, dtype=out_dtype))
    if not _is_discrete(x):  # NaN sorts last: the slice's last element says whether it has one
        out = switch(isnan(ordered[..., -1]), np.asarray(np.nan, dtype=out_dtype), out)
    if keepdims and axes:
        out = pt.expand_dims(out, axes)
    return out


def _as_observations(v: Any, rowvar: bool, what: str) -> Variable:
    """``v`` as a matrix with one variable per row (``numpy.cov``'s layout)."""
    v = as_tensor_variable(v)
    if v.type.ndim > 2:
        raise ValueError(f"cov: {what} must have 1 or 2 dimensions, got {v} of Type {v.type}")
    if v.type.ndim < 2:
        return pt.reshape(v, (1, -1))
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
    from arignote.tensor.extra_ops_more import check_values

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
        x = pt.concatenate([x, _as_observations(y, rowvar, "y")], axis=0)
    dtype = "complex128" if x.type.dtype in complex_types else "float64"
    x = cast(x, dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    n = cast(pt.shape_i(x, 1), "float64")
    w = None
    if fweights is not None:
        w = cast(_check_weights(fweights, "fweights", integer=True), "float64")
    if aweights is not None:
        aw = cast(_check_weights(aweights, "aweights", integer=False), "float64")
        w = aw if w is None else w * aw
    if w is None:
        centered = x - pt.mean(x, axis=1, keepdims=True)
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
    c = pt.dot(weighted, conj(centered).T) / cast(fact, dtype)
    return pt.squeeze(c)


# --- extrema -------------------------------------------------------------------------------


def max_and_argmax(a: Any, axis: Any = None, keepdims: bool = False) -> list[Variable]:
    """``[max(a, axis), argmax(a, axis)]``."""
    return [max(a, axis=axis, keepdims=keepdims), argmax(a, axis=axis, keepdims=keepdims)]


def _extreme(args: tuple, larger: bool, what: str) -> Variable:
    if not args:
        raise TypeError(f"{what} needs at least one input")
    if len(args) == 2:  # elementwise with broadcasting; a NaN in the first is not chosen
        a, b = (as_tensor_variable(v) for v in args)
        return switch(gt(a, b) if larger else lt(a, b), a, b)
    stacked = pt.stack([as_tensor_variable(v) for v in args])
    return max(stacked, axis=0) if larger else min(stacked, axis=0)


def largest(*args: Any) -> Variable:
    """The elementwise largest of the inputs: ``switch(a > b, a, b)`` for two (which
    broadcast), the maximum over a stack of them (same shapes) otherwise."""
    return _extreme(args, True, "largest")


def smallest(*args: Any) -> Variable:
    """The elementwise smallest of the inputs (see :func:`largest`)."""
    return _extreme(args, False, "smallest")


# --- batched products (deprecated in PyTensor in favour of matmul / vectorize) ------------


def _batched(core: Any, x: Variable, y: Variable) -> Variable:
    from arignote.tensor.batching import vectorize_graph

    cx, cy = x[0].type(), y[0].type()
    (out,) = vectorize_graph([core(cx, cy)], {cx: x, cy: y})
    return out


def batched_dot(a: Any, b: Any) -> Variable:
    """``dot(a[i], b[i])`` for every ``i`` of the leading (batch) dimension, stacked.

    >>> import arignote.tensor as pt
    >>> pt.batched_dot(pt.dtensor3(), pt.dmatrix()).type
    TensorType(float64, shape=(None, None))
    """
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    for what, v in (("a", a), ("b", b)):
        if v.type.ndim == 0:
            raise TypeError(f"batched_dot: {what} must have a leading batch dimension, got {v.type}")
    return _batched(pt.dot, a, b)


def batched_tensordot(x: Any, y: Any, axes: Any = 2) -> Variable:
    """``tensordot(x[i], y[i], axes)`` for every ``i`` of the leading (batch) dimension.

    ``axes`` is an int (the last ``axes`` of ``x[i]`` with the first of ``y[i]``) or a
    pair of axis lists given in the batched tensors' numbering (they cannot include the
    batch axis 0).
    """
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    for what, v in (("x", x), ("y", y)):
        if v.type.ndim == 0:
            raise TypeError(f"batched_tensordot: {what} must have a leading batch dimension, got {v.type}")
    if isinstance(axes, (int, np.integer)):
        core_axes: Any = int(axes)
    else:
        if len(axes) != 2:
            raise ValueError(f"batched_tensordot: axes must be an int or two lists of axes, got {axes!r}")
        core_axes = []
        for what, v, ax in (("x", x, axes[0]), ("y", y, axes[1])):
            norm = normalize_axis(ax, v.type.ndim)
            if 0 in norm:
                raise ValueError(f"batched_tensordot: the batch axis 0 of {what} cannot be contracted")
            core_axes.append([d - 1 for d in norm])
    return _batched(lambda cx, cy: pt.tensordot(cx, cy, axes=core_axes), x, y)
