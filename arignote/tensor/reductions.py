"""Reductions: ``Sum``, ``Prod``, ``Max``, ``Min``, ``All``, ``Any`` (``CAReduce``
subclasses with NumPy's accumulation dtypes), ``Argmax``/``Argmin``, and what is built from
them: ``mean``, ``var``, ``std``, ``logsumexp``, ``allclose``.
PyTensor's path for them is :mod:`arignote.tensor.math`.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> float(pt.logsumexp(x).eval({x: np.array([1000.0, 1000.0])}))
1000.6931471805599
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

import arignote.scalar as ps
from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type
from arignote.graph.op import Op
from arignote.scalar.type import complex_types, discrete_types
from arignote.tensor.axes import expand_dims, squeeze
from arignote.tensor.conversion import as_tensor_variable, constant
from arignote.tensor.elemwise import CAReduce, normalize_axis
from arignote.tensor.shape import _zero_grad, shape_i
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast, exp, isclose, isinf, log, mul, sqr, sqrt, switch, true_div

__all__ = [
    "All",
    "Any_",
    "Argmax",
    "Argmin",
    "Max",
    "Min",
    "Prod",
    "Sum",
    "all",
    "allclose",
    "any",
    "argmax",
    "argmin",
    "disconnected_type",
    "logsumexp",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
]

# --- reductions ----------------------------------------------------------------------------


def _sum_dtypes(idtype: str) -> tuple[str, str]:
    """(output dtype, accumulation dtype) of sum/prod, as NumPy and PyTensor choose them."""
    if idtype == "bool" or idtype in ("int8", "int16", "int32", "int64"):
        return "int64", "int64"
    if idtype in ("uint8", "uint16", "uint32", "uint64"):
        return "uint64", "uint64"
    acc = {"float16": "float32", "float32": "float64", "complex64": "complex128"}.get(idtype, idtype)
    return idtype, acc


class Sum(CAReduce):
    """Sum over ``axis`` (None: all); ints accumulate in int64, float32 in float64."""

    def __init__(self, axis: Any = None, dtype: Any = None, acc_dtype: Any = None):
        super().__init__(ps.add, axis=axis, dtype=dtype, acc_dtype=acc_dtype)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.dtype is None or self.acc_dtype is None:
            out, acc = _sum_dtypes(x.type.dtype)
            op = type(self)(self.axis, dtype=self.dtype or out, acc_dtype=self.acc_dtype or acc)
            return op.make_node(x)
        return super().make_node(x)


class Prod(Sum):
    """Product over ``axis``; dtypes as for :class:`Sum`."""

    def __init__(self, axis: Any = None, dtype: Any = None, acc_dtype: Any = None):
        CAReduce.__init__(self, ps.mul, axis=axis, dtype=dtype, acc_dtype=acc_dtype)


class Max(CAReduce):
    """Maximum over ``axis`` (NaN if any element is NaN); empty axes are an error."""

    def __init__(self, axis: Any = None):
        super().__init__(ps.maximum, axis=axis)


class Min(CAReduce):
    """Minimum over ``axis`` (NaN if any element is NaN); empty axes are an error."""

    def __init__(self, axis: Any = None):
        super().__init__(ps.minimum, axis=axis)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.type.dtype in complex_types:
            raise TypeError(f"min is not defined for complex {x.type}")
        return super().make_node(x)


class _BoolReduce(CAReduce):
    """A logical reduction (``all``/``any``): NumPy's function, and zero gradients (a
    boolean result is a step function of its input)."""

    _np_fn: Any = None

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = np.asarray(self._np_fn(inputs[0], axis=self.axis))

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [_zero_grad(inputs[0])]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]


class All(_BoolReduce):
    """Whether every element over ``axis`` is true (nonzero)."""

    _np_fn = staticmethod(np.all)

    def __init__(self, axis: Any = None):
        CAReduce.__init__(self, ps.and_, axis=axis, dtype="bool")


class Any_(_BoolReduce):
    """Whether any element over ``axis`` is true (nonzero)."""

    _np_fn = staticmethod(np.any)

    def __init__(self, axis: Any = None):
        CAReduce.__init__(self, ps.or_, axis=axis, dtype="bool")

    def __str__(self) -> str:
        return f"Any{{{self._axis_str()}}}"


def _reduce(op: CAReduce, x: Variable, axis: Any, keepdims: bool) -> Variable:
    out = op(x)
    if keepdims:
        axes = normalize_axis(axis, x.type.ndim)
        axes = axes if axes is not None else tuple(range(x.type.ndim))
        if axes:
            out = expand_dims(out, axes)
    return out


def sum(
    x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
) -> Variable:
    """Sum over ``axis`` (None: all axes)."""
    x = as_tensor_variable(x)
    return _reduce(
        Sum(normalize_axis(axis, x.type.ndim), dtype=dtype, acc_dtype=acc_dtype), x, axis, keepdims
    )


def prod(
    x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
) -> Variable:
    """Product over ``axis`` (None: all axes)."""
    x = as_tensor_variable(x)
    return _reduce(
        Prod(normalize_axis(axis, x.type.ndim), dtype=dtype, acc_dtype=acc_dtype), x, axis, keepdims
    )


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Maximum over ``axis``."""
    x = as_tensor_variable(x)
    return _reduce(Max(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Minimum over ``axis``."""
    x = as_tensor_variable(x)
    return _reduce(Min(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Whether all elements (over ``axis``) are true."""
    x = as_tensor_variable(x)
    return _reduce(All(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Whether any element (over ``axis``) is true."""
    x = as_tensor_variable(x)
    return _reduce(Any_(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def _count(x: Variable, axis: tuple | None) -> Variable:
    axes = range(x.type.ndim) if axis is None else axis
    n: Any = constant(np.int64(1))
    for a in axes:
        n = mul(n, shape_i(x, a))
    return n


def mean(
    x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
) -> Variable:
    """Arithmetic mean over ``axis``; integer inputs give ``floatX``."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.type.ndim)
    # a float16 sum would overflow long before the mean does: sum in float32 (as PyTensor)
    sum_dtype = "float32" if dtype is None and x.type.dtype == "float16" else dtype
    s = sum(x, axis=axes, dtype=sum_dtype, acc_dtype=acc_dtype)
    n = _count(x, axes)
    if s.type.dtype not in discrete_types:
        n = cast(
            n,
            s.type.dtype
            if s.type.dtype not in complex_types
            else {"complex64": "float32"}.get(s.type.dtype, "float64"),
        )
    out = true_div(s, n)
    if dtype is None and x.type.dtype == "float16":
        out = cast(out, "float16")
    if keepdims:
        out = expand_dims(out, axes if axes is not None else tuple(range(x.type.ndim)))
    return out


def var(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False) -> Variable:
    """Variance over ``axis``, dividing by ``n - ddof`` (``corrected=True`` means ddof=1)."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.type.ndim)
    if corrected:
        ddof = 1
    centered = x - mean(x, axis=axes, keepdims=True)
    sq = sqr(abs(centered) if x.type.dtype in complex_types else centered)
    if ddof == 0:
        out = mean(sq, axis=axes)
    else:
        n = _count(x, axes)
        s = sum(sq, axis=axes)
        out = true_div(s, cast(n - ddof, s.type.dtype if s.type.dtype not in discrete_types else "float64"))
    if keepdims:
        out = expand_dims(out, axes if axes is not None else tuple(range(x.type.ndim)))
    return out


def std(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False) -> Variable:
    """Standard deviation over ``axis`` (square root of :func:`var`)."""
    return sqrt(var(x, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected))


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """``log(sum(exp(x)))`` over ``axis``, computed without overflow: the maximum is taken
    out first (and infinite maxima are handled so that ``-inf`` rows give ``-inf``)."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.type.ndim)
    m = max(x, axis=axes, keepdims=True)
    m_safe = switch(isinf(m), 0, m)
    s = sum(exp(x - m_safe), axis=axes, keepdims=True)
    out = log(s) + m_safe
    if not keepdims:
        out = squeeze(out, axes if axes is not None else tuple(range(x.type.ndim)))
    return out


# --- argmax / argmin -----------------------------------------------------------------------


class Argmax(Op):
    """Index of the maximum over ``axis`` (None: of the flattened array), as int64."""

    __props__ = ("axis",)

    def __init__(self, axis: int | Sequence[int] | None):
        if axis is not None:
            axis = tuple(sorted(int(a) for a in ([axis] if isinstance(axis, (int, np.integer)) else axis)))
        self.axis = axis

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.axis is not None:
            axis = normalize_axis(self.axis, x.type.ndim)
            if axis != self.axis:  # negative axes: the node gets the op with them resolved
                return type(self)(axis).make_node(x)
        axes = range(x.type.ndim) if self.axis is None else self.axis
        shape = tuple(s for d, s in enumerate(x.type.shape) if d not in axes)
        return Apply(self, [x], [TensorType("int64", shape)()])

    def _arg(self, x: np.ndarray) -> np.ndarray:
        if x.size == 0 and (self.axis is None or builtins.any(x.shape[a] == 0 for a in self.axis)):
            raise ValueError(f"{self}: attempt to take the arg-extremum of an empty axis")
        if self.axis is None:
            return np.asarray(self._np(x.reshape(-1)), dtype="int64")
        keep = [d for d in range(x.ndim) if d not in self.axis]
        moved = np.transpose(x, keep + list(self.axis))
        # the reduced length is spelt out: -1 cannot be resolved when a kept axis is empty
        n = int(np.prod([x.shape[a] for a in self.axis], dtype=np.int64))
        flat = moved.reshape([x.shape[d] for d in keep] + [n])
        return np.asarray(self._np(flat, axis=-1), dtype="int64")

    _np = staticmethod(np.argmax)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = self._arg(inputs[0])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        axes = range(node.inputs[0].type.ndim) if self.axis is None else self.axis
        return [tuple(s for d, s in enumerate(shapes[0]) if d not in axes)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Zero: the index is a step function of ``x`` (the seeds' argmax example; the
        elements of ``x`` do decide the output, so the input stays connected)."""
        return [_zero_grad(inputs[0])]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]  # an index does not move

    def __str__(self) -> str:
        return f"{type(self).__name__}{{axis={self.axis}}}"


class Argmin(Argmax):
    """Index of the minimum over ``axis``."""

    _np = staticmethod(np.argmin)


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Index of the largest element over ``axis`` (of the flattened array if None)."""
    x = as_tensor_variable(x)
    return _reduce(Argmax(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Index of the smallest element over ``axis`` (of the flattened array if None)."""
    x = as_tensor_variable(x)
    return _reduce(Argmin(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def allclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Variable:
    """Symbolic ``numpy.allclose`` (a 0-d bool)."""
    return all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


# --- extrema -------------------------------------------------------------------------------
