"""TensorVariable and TensorConstant: tensor graph values with NumPy-like operators.

``x + y``, ``x @ y``, ``x.sum(axis=0)``, ``x.T``, ``x.reshape(...)`` build graph nodes.
``==`` is *not* overloaded (Variables compare by identity; use ``eq``), and using a
symbolic value as a Python bool (``if x:``) is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arignote.graph.basic import Constant, Variable
from arignote.scalar.type import ScalarVariable, constant
from arignote.tensor import ufuncs
from arignote.tensor.alloc import ones_like, zeros_like
from arignote.tensor.alloc import repeat as _repeat
from arignote.tensor.axes import matrix_transpose
from arignote.tensor.axes import squeeze as _squeeze
from arignote.tensor.axes import swapaxes as _swapaxes
from arignote.tensor.axes import transpose as _transpose
from arignote.tensor.conversion import get_underlying_scalar_constant_value, scalar_from_tensor
from arignote.tensor.cumulative import cumprod as _cumprod
from arignote.tensor.cumulative import cumsum as _cumsum
from arignote.tensor.diag import diagonal as _diagonal
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.indexing.advanced import choose as _choose
from arignote.tensor.indexing.advanced import take as _take
from arignote.tensor.indexing.basic import getitem, inc_subtensor, set_subtensor
from arignote.tensor.linalg.matrix_functions import trace as _trace
from arignote.tensor.products import dot as _dot
from arignote.tensor.products import matmul as _matmul
from arignote.tensor.reductions import all as _all
from arignote.tensor.reductions import any as _any
from arignote.tensor.reductions import argmax as _argmax
from arignote.tensor.reductions import argmin as _argmin
from arignote.tensor.reductions import max as _max
from arignote.tensor.reductions import mean as _mean
from arignote.tensor.reductions import min as _min
from arignote.tensor.reductions import prod as _prod
from arignote.tensor.reductions import std as _std
from arignote.tensor.reductions import sum as _sum
from arignote.tensor.reductions import var as _var
from arignote.tensor.searching import compress as _compress
from arignote.tensor.searching import nonzero as _nonzero
from arignote.tensor.searching import nonzero_values as _nonzero_values
from arignote.tensor.searching import searchsorted as _searchsorted
from arignote.tensor.shape import flatten as _flatten
from arignote.tensor.shape import get_vector_length as _get_vector_length
from arignote.tensor.shape import reshape as _reshape
from arignote.tensor.shape import shape as _shape
from arignote.tensor.sort import argsort as _argsort
from arignote.tensor.sort import sort as _sort
from arignote.tensor.statistics import ptp as _ptp
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import abs as _abs
from arignote.tensor.ufuncs import (
    add,
    and_,
    ge,
    gt,
    int_div,
    invert,
    le,
    lt,
    mod,
    mul,
    neg,
    or_,
    sub,
    tensor_copy,
    true_div,
    xor,
)
from arignote.tensor.ufuncs import cast as _cast
from arignote.tensor.ufuncs import clip as _clip
from arignote.tensor.ufuncs import conj as _conj
from arignote.tensor.ufuncs import fill as _fill
from arignote.tensor.ufuncs import imag as _imag
from arignote.tensor.ufuncs import pow as _pow
from arignote.tensor.ufuncs import real as _real
from arignote.tensor.ufuncs import round as _round

__all__ = ["TensorVariable", "TensorConstant", "TensorConstantSignature"]


class _tensor_py_operators:
    """The NumPy-style methods and operators of tensor Variables."""

    type: TensorType

    #: NumPy defers to our reflected operators (``ndarray + x`` is ``x.__radd__``) instead of
    #: looping over the array and building an object array of graph nodes.
    __array_priority__ = 1000

    # -- metadata -------------------------------------------------------------------------

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return self.type.broadcastable

    @property
    def shape(self) -> Any:
        """The symbolic shape (an int64 vector)."""
        return _shape(self)

    @property
    def size(self) -> Any:
        return _prod(self.shape)

    # -- arithmetic -----------------------------------------------------------------------

    def __add__(self, other: Any) -> Any:
        return add(self, other)

    def __radd__(self, other: Any) -> Any:
        return add(other, self)

    def __sub__(self, other: Any) -> Any:
        return sub(self, other)

    def __rsub__(self, other: Any) -> Any:
        return sub(other, self)

    def __mul__(self, other: Any) -> Any:
        return mul(self, other)

    def __rmul__(self, other: Any) -> Any:
        return mul(other, self)

    def __truediv__(self, other: Any) -> Any:
        return true_div(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return true_div(other, self)

    def __floordiv__(self, other: Any) -> Any:
        return int_div(self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return int_div(other, self)

    def __mod__(self, other: Any) -> Any:
        return mod(self, other)

    def __rmod__(self, other: Any) -> Any:
        return mod(other, self)

    def __pow__(self, other: Any) -> Any:
        return _pow(self, other)

    def __rpow__(self, other: Any) -> Any:
        return _pow(other, self)

    def __neg__(self) -> Any:
        return neg(self)

    def __abs__(self) -> Any:
        return _abs(self)

    def __invert__(self) -> Any:
        return invert(self)

    def __lt__(self, other: Any) -> Any:
        return lt(self, other)

    def __le__(self, other: Any) -> Any:
        return le(self, other)

    def __gt__(self, other: Any) -> Any:
        return gt(self, other)

    def __ge__(self, other: Any) -> Any:
        return ge(self, other)

    def __and__(self, other: Any) -> Any:
        return and_(self, other)

    def __rand__(self, other: Any) -> Any:
        return and_(other, self)

    def __or__(self, other: Any) -> Any:
        return or_(self, other)

    def __ror__(self, other: Any) -> Any:
        return or_(other, self)

    def __xor__(self, other: Any) -> Any:
        return xor(self, other)

    def __rxor__(self, other: Any) -> Any:
        return xor(other, self)

    def __matmul__(self, other: Any) -> Any:
        return _matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _matmul(other, self)

    # == and hash stay identity-based: Variables are graph nodes (use eq()/neq()).

    def __bool__(self) -> bool:
        raise TypeError(
            f"The truth value of the symbolic {self} is unknown until it is computed. "
            "Use arignote.tensor.switch/where for a symbolic condition, or eval() for a value."
        )

    def __iter__(self) -> Any:
        """Iterate over the first axis when its length is known before running:
        ``a, b = pt.tensor("v", shape=(2,))``, ``rows, cols = x.shape``. An unknown length
        (or a 0-d tensor) is an error."""
        if self.type.ndim == 0:
            raise TypeError(f"Cannot iterate over the 0-d symbolic {self} (Type {self.type})")
        length = self.type.shape[0]
        if length is None and self.type.ndim == 1:
            try:
                length = _get_vector_length(self)
            except ValueError:
                length = None
        if length is None:
            raise TypeError(
                f"Cannot iterate over the symbolic {self} (Type {self.type}): the length of its "
                "first axis is only known when it is computed. Give it a static shape "
                "(pt.tensor(shape=(2,)), pt.specify_shape), index it (x[i]) or use arignote.scan."
            )
        return (self[i] for i in range(length))

    def __len__(self) -> int:
        raise TypeError(f"len() of the symbolic {self} is unknown; use x.shape[0]")

    # -- shape and layout -----------------------------------------------------------------

    @property
    def T(self) -> Any:
        return _transpose(self)

    @property
    def mT(self) -> Any:
        """Transpose of the last two dimensions."""
        return matrix_transpose(self)

    def transpose(self, *axes: Any) -> Any:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _transpose(self, axes or None)

    def dimshuffle(self, *pattern: Any) -> Any:
        """Reorder/add/drop dimensions: ``x.dimshuffle(1, 0, "x")``."""
        if len(pattern) == 1 and isinstance(pattern[0], (tuple, list)):
            pattern = tuple(pattern[0])
        return DimShuffle(input_ndim=self.ndim, new_order=pattern)(self)

    def reshape(self, *shape: Any, ndim: int | None = None) -> Any:
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return _reshape(self, shape, ndim=ndim)

    def flatten(self, ndim: int = 1) -> Any:
        return _flatten(self, ndim)

    ravel = flatten

    def squeeze(self, axis: Any = None) -> Any:
        return _squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return _swapaxes(self, axis1, axis2)

    def astype(self, dtype: Any) -> Any:
        return _cast(self, dtype)

    def copy(self, name: str | None = None) -> Any:
        out = tensor_copy(self)
        out.name = name
        return out

    # -- indexing -------------------------------------------------------------------------

    def __getitem__(self, index: Any) -> Any:
        """``x[index]`` with NumPy's semantics (see :mod:`arignote.tensor.subtensor`)."""
        return getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError(
            f"The symbolic {self} does not support item assignment: graph values are immutable. "
            "Build the updated tensor instead: pt.set_subtensor(x[idx], y) or x[idx].set(y) to "
            "write y, pt.inc_subtensor(x[idx], y) or x[idx].inc(y) to add it"
        )

    def set(self, y: Any, **kwargs: Any) -> Any:
        """``set_subtensor(self, y)``: the indexed tensor with ``y`` written into this part."""
        return set_subtensor(self, y, **kwargs)

    def inc(self, y: Any, **kwargs: Any) -> Any:
        """``inc_subtensor(self, y)``: the indexed tensor with ``y`` added to this part."""
        return inc_subtensor(self, y, **kwargs)

    def take(self, indices: Any, axis: int | None = None, mode: str = "raise") -> Any:
        return _take(self, indices, axis, mode)

    # -- reductions -----------------------------------------------------------------------

    def sum(self, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None) -> Any:
        return _sum(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(self, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None) -> Any:
        return _prod(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(self, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None) -> Any:
        return _mean(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def var(self, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False) -> Any:
        return _var(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def std(self, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False) -> Any:
        return _std(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def min(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _min(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _max(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _argmin(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _argmax(self, axis=axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _any(self, axis=axis, keepdims=keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _all(self, axis=axis, keepdims=keepdims)

    # -- elementwise helpers --------------------------------------------------------------

    def clip(self, a_min: Any, a_max: Any) -> Any:
        return _clip(self, a_min, a_max)

    def round(self, mode: str | None = None) -> Any:
        return _round(self, mode)

    def dot(self, other: Any) -> Any:
        return _dot(self, other)

    def conj(self) -> Any:
        return _conj(self)

    conjugate = conj

    def fill(self, value: Any) -> Any:
        """A tensor shaped like this one, filled with ``value``."""
        return _fill(self, value)

    # -- sorting, cumulative ops, indices -------------------------------------------------

    def sort(self, axis: Any = -1, kind: str | None = None, order: Any = None) -> Any:
        return _sort(self, axis, kind, order)

    def argsort(self, axis: Any = -1, kind: str | None = None, order: Any = None) -> Any:
        return _argsort(self, axis, kind, order)

    def cumsum(self, axis: int | None = None) -> Any:
        return _cumsum(self, axis)

    def cumprod(self, axis: int | None = None) -> Any:
        return _cumprod(self, axis)

    def nonzero(self, return_matrix: bool = False) -> Any:
        return _nonzero(self, return_matrix)

    def nonzero_values(self) -> Any:
        return _nonzero_values(self)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        """Where the values ``v`` go in this sorted vector (``numpy.searchsorted``)."""
        return _searchsorted(self, v, side, sorter)

    def compress(self, condition: Any, axis: int | None = None) -> Any:
        """The slices of this tensor along ``axis`` where ``condition`` is true, as NumPy's
        ``a.compress(condition, axis)``. (PyTensor 3's method swaps the two: it takes
        ``self`` as the condition.)"""
        return _compress(condition, self, axis)

    def choose(self, choices: Any, mode: str = "raise") -> Any:
        """``numpy.choose`` with this integer tensor as the index (see
        :func:`arignote.tensor.choose`)."""
        return _choose(self, choices, mode)

    def ptp(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Maximum minus minimum over ``axis`` (see :func:`arignote.tensor.ptp`)."""
        return _ptp(self, axis, keepdims=keepdims)

    def norm(self, L: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """The ``L``-norm over ``axis`` (None: all elements), ``sum(abs(x) ** L) ** (1 / L)``;
        ``L=inf`` is the largest absolute value, ``-inf`` the smallest, ``0`` the count of
        nonzero elements (as ``numpy.linalg.norm``'s vector norms)."""
        if isinstance(L, (bool, np.bool_)) or not isinstance(L, (int, float, np.integer, np.floating)):
            raise TypeError(f"norm: L must be a Python or NumPy number, got {L!r}")
        a = _abs(self)
        if np.isposinf(L):
            return _max(a, axis, keepdims=keepdims)
        if np.isneginf(L):
            return _min(a, axis, keepdims=keepdims)
        if np.isnan(L):
            raise ValueError("norm: L must not be NaN")
        if L == 0:
            return _sum(_cast(gt(a, 0), "floatX"), axis, keepdims=keepdims)
        return _pow(_sum(_pow(a, L), axis, keepdims=keepdims), 1.0 / L)

    def repeat(self, repeats: Any, axis: int | None = None) -> Any:
        return _repeat(self, repeats, axis)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        """Diagonal ``offset`` of axes ``axis1`` and ``axis2`` (see :func:`arignote.tensor.diagonal`)."""
        return _diagonal(self, offset, axis1, axis2)

    def trace(self) -> Any:
        """The trace of the last two axes, as PyTensor's method (:func:`arignote.tensor.linalg.trace`)."""
        return _trace(self)

    def zeros_like(self, dtype: Any = None) -> Any:
        return zeros_like(self, dtype)

    def ones_like(self, dtype: Any = None) -> Any:
        return ones_like(self, dtype)

    def get_underlying_scalar_constant(self) -> Any:
        """The value of this Variable if it is statically a known scalar (see
        :func:`~arignote.tensor.basic.get_underlying_scalar_constant_value`)."""
        return get_underlying_scalar_constant_value(self)

    @property
    def real(self) -> Any:
        return _real(self)

    @property
    def imag(self) -> Any:
        return _imag(self)


_UNARY_METHODS = frozenset(
    [
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "sqrt",
        "sqr",
        "sin",
        "cos",
        "tan",
        "arcsin",
        "arccos",
        "arctan",
        "sinh",
        "cosh",
        "tanh",
        "arcsinh",
        "arccosh",
        "arctanh",
        "floor",
        "ceil",
        "trunc",
        "sign",
        "erf",
        "erfc",
        "erfinv",
        "sigmoid",
        "softplus",
        "isnan",
        "isinf",
        "neg",
        "reciprocal",
        "deg2rad",
        "rad2deg",
        "angle",
        "gammaln",
        "psi",
    ]
)


def _unary_method(name: str) -> Callable[[Any], Any]:
    """The method ``x.<name>()``: ``arignote.tensor.<name>(x)``."""
    fn = getattr(ufuncs, name)

    def method(self: Any) -> Any:
        return fn(self)

    method.__name__ = name
    method.__qualname__ = f"_tensor_py_operators.{name}"
    method.__doc__ = f"``arignote.tensor.{name}`` of this tensor, element by element."
    return method


# Real methods made from the list (rather than a __getattr__ hook) so that dir(), help() and
# tab completion show them, as they show PyTensor's; the list cannot drift from the functions.
for _name in sorted(_UNARY_METHODS):
    if _name not in vars(_tensor_py_operators):
        setattr(_tensor_py_operators, _name, _unary_method(_name))
del _name


class TensorVariable(_tensor_py_operators, Variable):
    """A tensor value in a graph (an input, or the output of an Apply)."""

    def _as_scalar(self) -> Variable:
        return scalar_from_tensor(self)


class TensorConstantSignature(tuple):
    """``(type, data)`` compared by exact contents (shape, dtype, bytes): NaN equals NaN,
    ``0.0`` and ``-0.0`` differ. Used to merge equal constants."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TensorConstantSignature) or len(other) != 2:
            return False
        (t0, d0), (t1, d1) = self, other
        return t0 == t1 and d0.shape == d1.shape and d0.dtype == d1.dtype and d0.tobytes() == d1.tobytes()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        t, d = self
        flat = d.reshape(-1)
        sample = flat[:: max(1, flat.size // 16)].tobytes()  # cheap, stable for big constants
        return hash((t, d.shape, d.dtype.str, sample))


class TensorConstant(_tensor_py_operators, Constant):
    """A constant array (read-only: its data is never modified by any Op)."""

    def __init__(self, type: TensorType, data: Any, name: str | None = None):
        filtered = type.filter(data)
        if filtered is data or filtered.base is not None:
            filtered = filtered.copy()  # never alias the caller's array: constants are immutable
        filtered.flags.writeable = False
        if filtered.shape != type.shape:
            type = type.clone(shape=filtered.shape)  # a constant's shape is fully known
        Constant.__init__(self, type, filtered, name=name)

    def signature(self) -> TensorConstantSignature:
        return TensorConstantSignature((self.type, self.data))

    @property
    def unique_value(self) -> Any:
        """The one value every element of this constant holds (a read-only NumPy value), or
        None when it is empty or holds more than one value (NaN equals nothing, so an array
        of several NaNs has none)."""
        d = self.__dict__
        if "_unique_value" not in d:
            data, value = self.data, None
            if data.size == 1:
                value = data.reshape(())
            elif data.size > 1:
                flat = data.reshape(-1)
                if (flat == flat[0]).all():
                    value = flat[0]
            d["_unique_value"] = value
        return d["_unique_value"]

    def __str__(self) -> str:
        # PyTensor 3's format: the data on one line, long ones elided in the middle;
        # a named constant prints as name{data}.
        text = _elide(str(self.data).replace("\n", ""))
        return text if self.name is None else f"{self.name}{{{text}}}"

    def __repr__(self) -> str:
        return f"TensorConstant({self.type!r}, data={_elide(repr(self.data))})"

    def _as_scalar(self) -> Variable:
        return constant(self.data[()], dtype=self.dtype)


def _elide(text: str) -> str:
    return text if len(text) <= 20 else f"{text[:10].strip()} ... {text[-10:].strip()}"


TensorType.variable_type = TensorVariable
TensorType.constant_type = TensorConstant


def _empty_shape() -> TensorConstant:
    """The shape of a scalar Variable: an empty int64 vector (a fresh constant, as any)."""
    return TensorConstant(TensorType("int64", shape=(0,)), np.empty(0, dtype=np.int64))


# (the scalar layer, below this one, cannot build a tensor itself)
ScalarVariable._empty_shape = staticmethod(_empty_shape)
